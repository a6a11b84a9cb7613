"""One adapter per model_type: the only place where families differ.

``parse_config`` picks the adapter for a raw config.json dict, validates it with pydantic
and returns it; ``adapter.to_spec()`` gives the architecture-neutral ``ModelSpec``. A new
family is a new adapter class, named in ``ADAPTERS``.
"""

from __future__ import annotations

import importlib
from dataclasses import replace
from typing import Any

from pydantic import ValidationError

from ..errors import InvalidConfigError, UnsupportedModelError
from ..schema import HFConfig, describe_validation_error
from ..spec import ModelSpec

# model_type → "module:Adapter". An adapter's module is imported only when a config needs it:
# pydantic classes are costly to create, and a command reads one config.
ADAPTERS: dict[str, str] = {
    "llama": "llama:LlamaConfig",
    "mistral": "llama:MistralConfig",
    "mixtral": "llama:MixtralConfig",
    "qwen2": "qwen:Qwen2Config",
    "qwen3": "qwen:Qwen3Config",
    "qwen3_moe": "qwen:Qwen3MoeConfig",
    "gemma": "gemma:GemmaConfig",
    "gemma2": "gemma:Gemma2Config",
    "gemma3_text": "gemma:Gemma3TextConfig",
    "deepseek_v3": "deepseek:DeepseekV3Config",
    "kimi_k2": "deepseek:DeepseekV3Config",
    "phi3": "phi3:Phi3Config",
    "gpt2": "gpt2:Gpt2Config",
    "gpt_oss": "gpt_oss:GptOssConfig",
    "gptj": "classic:GptjConfig",
    "gpt_neox": "classic:GptNeoxConfig",
    "bloom": "classic:BloomConfig",
    "falcon": "classic:FalconConfig",
    "opt": "classic:OptConfig",
    "granite": "variants:GraniteConfig",
    "granitemoe": "variants:GraniteMoeConfig",
    "phimoe": "variants:PhimoeConfig",
    "olmo2": "variants:Olmo2Config",
    "qwen2_moe": "qwen:Qwen2MoeConfig",
    "ernie4_5_moe": "variants:Ernie45MoeConfig",
    "mimo": "variants:MimoConfig",
    "dbrx": "moe_more:DbrxConfig",
    "llama4_text": "moe_more:Llama4TextConfig",
    "deepseek_v2": "moe_more:DeepseekV2Config",
    "bailing_moe": "moe_more:BailingMoeConfig",
    "qwen3_next": "hybrids:Qwen3NextConfig",
    "nemotron_h": "hybrids:NemotronHConfig",
    "bert": "encoders:BertConfig",
    "t5": "encoders:T5Config",
    "mt5": "encoders:T5Config",
    "ffncalc": "preset:PresetConfig",
}


def adapter_for(model_type: str) -> type[HFConfig] | None:
    """The adapter class that reads MODEL_TYPE, imported on first use; None if unsupported."""
    target = ADAPTERS.get(model_type)
    if target is None:
        return None
    module, name = target.split(":")
    return getattr(importlib.import_module(f".{module}", __name__), name)


# Multimodal wrappers whose nested config may omit its own model_type.
TEXT_MODEL_TYPE_OF_WRAPPER = {"gemma3": "gemma3_text", "mistral3": "mistral", "llama4": "llama4_text"}
NESTED_TEXT_KEYS = ("text_config", "language_config")


def supported_model_types() -> list[str]:
    return sorted(ADAPTERS)


def parse_config(raw: dict[str, Any], source: str) -> tuple[HFConfig, tuple[str, ...]]:
    """Validate a config.json dict with its family's adapter; also return notes on what was unwrapped."""
    notes: list[str] = []
    model_type = raw.get("model_type")
    if not isinstance(model_type, str):
        raise InvalidConfigError(f"{source}: model_type: required field is missing or not a string")
    if model_type not in ADAPTERS:
        nested = next((raw[key] for key in NESTED_TEXT_KEYS if isinstance(raw.get(key), dict)), None)
        if nested is not None:
            text_type = nested.get("model_type") or TEXT_MODEL_TYPE_OF_WRAPPER.get(model_type)
            notes.append(
                f"{model_type} is multimodal: only its language model ({text_type}) is counted; "
                "the vision tower and projector are not."
            )
            raw = {**nested, "model_type": text_type}
            model_type = text_type
    adapter = adapter_for(model_type)
    if adapter is None:
        custom = " (a custom-code architecture; its code was not run)" if "auto_map" in raw else ""
        raise UnsupportedModelError(
            f"{source}: model_type {model_type!r}{custom} is not supported; supported: {', '.join(supported_model_types())}"
        )
    if "auto_map" in raw:
        notes.append(
            "The repo declares custom code (auto_map); ffncalc read the config as data and ran none of it."
        )
    try:
        return adapter.model_validate(raw), tuple(notes)
    except ValidationError as error:
        raise describe_validation_error(error, source) from None


def load_spec(raw: dict[str, Any], source: str) -> ModelSpec:
    """Parse a config.json dict into the architecture-neutral spec."""
    config, notes = parse_config(raw, source)
    spec = config.to_spec()
    if notes:
        spec = replace(spec, notes=notes + spec.notes)
    return spec
