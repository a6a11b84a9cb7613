"""Fuyu (Adept): no vision tower; each patch of pixels is projected into the language model's width by one linear
(vision_embed_tokens) and read by a Persimmon decoder as a token."""

from __future__ import annotations

from typing import Any

from pydantic import model_validator

from ..schema import Flag, Width
from ..spec import Linear, ModelSpec
from ..values import replace
from .multimodal import MultimodalLayers, relocate
from .registry import family
from .towers import tower_module

# FuyuConfig.sub_configs_defaults' text init_kwargs: the keys a flat config's top level gives the text model.
FUYU_TEXT = {
    "model_type": "persimmon",
    "vocab_size": 262144,
    "max_position_embeddings": 16384,
    "hidden_size": 4096,
    "intermediate_size": 16384,
    "num_hidden_layers": 36,
    "num_attention_heads": 64,
    "hidden_act": "relu2",
    "qk_layernorm": True,
}
# FuyuConfig.__post_init__ moves these keys of a flat config into text_config (init_kwargs' keys, rope_scaling and
# rope_theta); the ones that shape nothing are left out here.
FUYU_FLAT_KEYS = frozenset(FUYU_TEXT) - {"model_type"} | {
    "rope_scaling",
    "rope_theta",
    "layer_norm_eps",
    "eos_token_id",
}


@family("fuyu", transformers="FuyuConfig", architecture="Fuyu", model_class="FuyuForCausalLM")
class FuyuConfig(MultimodalLayers):
    """configuration_fuyu.py / modeling_fuyu.py (FuyuForCausalLM): a Persimmon language model (AutoModel; a flat config
    keeps its keys at the top level, which __post_init__ moves into text_config) and vision_embed_tokens, a linear
    with a bias from a patch's patch_size² · num_channels pixels to the text width; saved as transformers 4 saved it
    (conversion_mapping.py's "fuyu": language_model.model., language_model.lm_head, vision_embed_tokens). Only the
    wrapper's tie_word_embeddings (default false) decides tying. The image processor pads every image to its target
    size (preprocessor_config.json, not config.json): ffncalc counts the patch projection by parameter, with no image
    rule."""

    text_model_type = "persimmon"
    text_defaults = FUYU_TEXT
    informational_fields = frozenset({"image_size"})

    tie_word_embeddings: Flag  # no vision_config: it has no tower
    image_size: Width
    patch_size: Width
    num_channels: Width

    @model_validator(mode="before")
    @classmethod
    def _flat_text_config(cls, raw: Any) -> Any:
        """Without text_config, the text model's keys are the config's own (FuyuConfig.__post_init__), with
        partial_rotary_factor 0.5 unless given."""
        if isinstance(raw, dict) and raw.get("text_config") is None:
            text = {key: value for key, value in raw.items() if key in FUYU_FLAT_KEYS}
            if text:
                return {**raw, "text_config": {"partial_rotary_factor": 0.5, **text}}
        return raw

    def tied(self) -> bool:
        return self.tie_word_embeddings

    def wrapped_spec(self) -> ModelSpec:
        spec = replace(self.text.to_spec(), model_type=self.model_type, tie_word_embeddings=self.tie_word_embeddings)
        spec = relocate(spec, self.language_model_prefix, self.lm_head_name)
        pixels = self.patch_size**2 * self.num_channels
        projection = tower_module("vision_embed_tokens", Linear(pixels, spec.hidden_size, True))
        return replace(spec, extras=spec.extras + (projection,))

    def notes(self) -> list[str]:
        return [
            "fuyu is multimodal without a vision tower: each image patch is projected into the language model by "
            "vision_embed_tokens (counted as vision) and read as a token; no image rule (`image`), the processor's "
            "target size is not in config.json"
        ] + self.text.notes()
