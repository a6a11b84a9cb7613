"""ffncalc: where a transformer's parameters and compute go, from its config.json alone.

    import ffncalc
    report = ffncalc.account("meta-llama/Llama-3.1-8B")
    report.total_params  # 8030261248

The names below load their modules on first use, so `import ffncalc` is quick and pulls in
neither typer, rich nor huggingface_hub.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

__version__ = "0.1.0"

_EXPORTS = {
    "account": "api",
    "export_config": "api",
    "list_bundled": "api",
    "list_families": "api",
    "memory": "api",
    "MemoryOptions": "api",
    "speed": "api",
    "SpeedOptions": "api",
    "train": "api",
    "TrainOptions": "api",
    "compare": "api",
    "crossover": "api",
    "derive_dim": "api",
    "flops": "api",
    "load_config": "api",
    "verify": "api",
    "LoadedModel": "api",
    "count_params": "accounting",
    "ParamsReport": "accounting",
    "CrossoverReport": "compute",
    "FlopsReport": "compute",
    "derive_intermediate_size": "ffn_width",
    "FfncalcError": "errors",
    "json_data": "results",
    "json_text": "results",
    "load_spec": "families",
    "supported_model_types": "families",
    "bundled_models": "source",
    "ModelSpec": "spec",
}

__all__ = sorted(_EXPORTS) + ["__version__"]


def __getattr__(name: str):
    if name not in _EXPORTS:
        raise AttributeError(f"module 'ffncalc' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:  # for type checkers and editors: the same names, imported eagerly
    # ruff: noqa: F401
    from .accounting import ParamsReport, count_params
    from .api import (
        LoadedModel,
        MemoryOptions,
        SpeedOptions,
        TrainOptions,
        account,
        compare,
        crossover,
        derive_dim,
        export_config,
        flops,
        list_bundled,
        list_families,
        load_config,
        memory,
        speed,
        train,
        verify,
    )
    from .compute import CrossoverReport, FlopsReport
    from .errors import FfncalcError
    from .families import load_spec, supported_model_types
    from .ffn_width import derive_intermediate_size
    from .source import bundled_models
    from .spec import ModelSpec
