"""ffncalc: where a transformer's parameters and compute go, from its config.json alone."""

from __future__ import annotations

__version__ = "0.1.0"

from .accounting import ParamsReport, count_params
from .api import LoadedModel, account, crossover, flops, load_config
from .errors import FfncalcError
from .families import load_spec, supported_model_types
from .flops import CrossoverReport, FlopsReport
from .source import bundled_models
from .spec import ModelSpec

__all__ = [
    "CrossoverReport",
    "FfncalcError",
    "FlopsReport",
    "LoadedModel",
    "ModelSpec",
    "ParamsReport",
    "__version__",
    "account",
    "bundled_models",
    "count_params",
    "crossover",
    "flops",
    "load_config",
    "load_spec",
    "supported_model_types",
]
