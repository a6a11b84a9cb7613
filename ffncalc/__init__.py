"""ffncalc: where a transformer's parameters and compute go, from its config.json alone."""

from __future__ import annotations

__version__ = "0.1.0"

from .accounting import ParamsReport, count_params
from .api import LoadedModel, account, load_config
from .errors import FfncalcError
from .families import load_spec, supported_model_types
from .source import bundled_models
from .spec import ModelSpec

__all__ = [
    "FfncalcError",
    "LoadedModel",
    "ModelSpec",
    "ParamsReport",
    "__version__",
    "account",
    "bundled_models",
    "count_params",
    "load_config",
    "load_spec",
    "supported_model_types",
]
