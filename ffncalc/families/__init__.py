"""One adapter per model_type: the only place where families differ.

``parse_config`` picks the adapter for a raw config.json dict and validates it with pydantic;
``adapter.to_spec()`` gives the architecture-neutral ``ModelSpec``. A new family is a new
adapter class in the module of its lineage, registered and declared there with
``@family("model_type", transformers="ItsConfig", ...)`` (registry.py, declaration.py).
"""

from __future__ import annotations

import difflib
import importlib
import re
from typing import Any

from pydantic import ValidationError

from ..errors import FfncalcError, InvalidConfigError, UnsupportedModelError
from ..schema import HFConfig, describe_validation_error
from ..spec import ModelSpec
from .registry import Kind, index, lookup


def adapter_for(model_type: str, kind: Kind = "families") -> type[HFConfig] | None:
    """The adapter class registered for MODEL_TYPE (a config's, or with KIND "towers" a wrapper's tower), or None."""
    target = lookup(model_type, kind) if isinstance(model_type, str) else None
    if target is None:
        return None
    return _imported(target)


def _imported(target: str) -> type[HFConfig] | None:
    module, name = target.split(":")
    try:
        found = getattr(importlib.import_module(f".{module}", __name__), name, None)
    except ImportError:  # a module the index names and the source no longer has
        return None
    return found if isinstance(found, type) and issubclass(found, HFConfig) else None


def supported_model_types() -> list[str]:
    return sorted(model_type for model_type in index() if model_type != "ffncalc")


def tower_model_types() -> list[str]:
    """The model_types a multimodal wrapper may name as its vision or audio tower."""
    return sorted(index("towers"))


def families() -> dict[str, list[str]]:
    """Each family (as people name it) with the model_types it reads, for the families listing (`list_families`)."""
    grouped: dict[str, list[str]] = {}
    for model_type in supported_model_types():
        adapter = adapter_for(model_type)
        assert adapter is not None
        grouped.setdefault(adapter.architecture, []).append(model_type)
    return dict(sorted(grouped.items(), key=lambda item: item[0].lower()))


def closest_model_types(model_type: str, architectures: list[str] | None = None) -> list[str]:
    """The supported model_types nearest MODEL_TYPE by spelling, and those whose classes share ARCHITECTURES' stem."""
    known = supported_model_types()
    found = difflib.get_close_matches(model_type.lower(), known, n=3, cutoff=0.6)
    for architecture in architectures or []:
        stem = re.sub(r"(For\w+|Model|LMHeadModel)$", "", str(architecture)).lower()
        for candidate in known:
            if stem and candidate.replace("_", "") == stem.replace("_", "") and candidate not in found:
                found.append(candidate)
    return found[:4]


def parse_config(raw: dict[str, Any], source: str, as_type: str | None = None) -> HFConfig:
    """Validate a config.json dict with its family's adapter (or, with AS_TYPE, another family's)."""
    model_type = raw.get("model_type")
    if not isinstance(model_type, str):
        raise InvalidConfigError(f"{source}: model_type: required field is missing or not a string")
    adapter = adapter_for(as_type or model_type)
    if adapter is None:
        if as_type:
            raise UnsupportedModelError(
                f"`as_type` {as_type!r} is not a model_type ffncalc knows; see the families listing (`list_families`)"
            )
        raise _unsupported(raw, model_type, source)
    if as_type:
        raw = {**raw, "model_type": as_type}
    try:
        config = adapter.model_validate(raw)
        config.validate_nested()
        config.quantization  # noqa: B018 - validates quantization_config (a wrapper's: also text_config's)
    except ValidationError as error:
        raise describe_validation_error(error, source) from None
    except FfncalcError as error:
        raise type(error)(f"{source}: {error}") from None
    return config


def _unsupported(raw: dict[str, Any], model_type: str, source: str) -> UnsupportedModelError:
    architectures = raw.get("architectures") if isinstance(raw.get("architectures"), list) else None
    custom = " (a custom-code architecture; its code was not run)" if "auto_map" in raw else ""
    closest = closest_model_types(model_type, architectures)
    nearest = f"closest known: {', '.join(closest)}; " if closest else ""
    return UnsupportedModelError(
        f"{source}: model_type {model_type!r}{custom} is not supported; {nearest}"
        f"the families listing (`list_families`) lists them, and `as_type` MODEL_TYPE counts it with a known family's rules"
    )


def load_spec(raw: dict[str, Any], source: str) -> ModelSpec:
    """Parse a config.json dict into the architecture-neutral spec."""
    return parse_config(raw, source).to_spec()
