"""Idefics2, Idefics3 and SmolVLM: a SigLIP-shaped tower over tiles of an image, a connector (Idefics2: a gated MLP
and a perceiver resampler into a fixed number of latents; Idefics3: a pixel shuffle of scale_factor² patches into one
token and a projection) and any language model transformers' AutoModel builds, all under ``model.``
(``model.vision_model.``, ``model.connector.``, ``model.text_model.``)."""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from ..errors import InvalidConfigError
from ..schema import Flag, HeadCount, LayerCount, Name, Nested, Width
from ..spec import Extra, ImageInput, LearnedTensor, Linear, Norm
from ..values import replace
from .multimodal import MultimodalConfig
from .registry import family
from .towers import Tower, projector_module


@family("idefics3")
class Idefics3Config(MultimodalConfig):
    """configuration_idefics3.py / modeling_idefics3.py: Idefics3VisionTransformer, Idefics3Connector (pixel
    shuffle by scale_factor, then modality_projection.proj: vision hidden · scale_factor² → text hidden, no bias)
    and a Llama (by default) language model; the top-level tie_word_embeddings (default false) decides tying."""

    architecture = "Idefics3"
    config_class = "Idefics3Config"
    default_model_class = "Idefics3ForConditionalGeneration"
    text_model_type = "llama"
    text_defaults = {"model_type": "llama"}
    vision_model_type = "idefics3_vision"
    language_model_prefix = "model.text_model."
    lm_head_name = "lm_head"
    vision_prefix = "model.vision_model."

    tie_word_embeddings: Flag = False
    scale_factor: Width = 2

    def image_input(self, tower: Tower) -> ImageInput | None:
        """The processor's tiles of image_size square (ffncalc counts one), each tile's patches merged scale_factor ×
        scale_factor into one token by the pixel shuffle."""
        return None if tower.image is None else replace(tower.image, merge=self.scale_factor)

    def projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        merged = tower.hidden_size * self.scale_factor**2
        return (projector_module("model.connector.modality_projection.proj", Linear(merged, text_hidden)),)


@family("smolvlm")
class SmolVLMConfig(Idefics3Config):
    """configuration_smolvlm.py / modeling_smolvlm.py: Idefics3's layout and defaults under SmolVLM's names."""

    architecture = "SmolVLM"
    config_class = "SmolVLMConfig"
    default_model_class = "SmolVLMForConditionalGeneration"
    vision_model_type = "smolvlm_vision"


class Idefics2PerceiverConfig(Nested):
    """configuration_idefics2.py (Idefics2PerceiverConfig): the resampler's sizes. Its hidden_size is always the
    language model's (Idefics2Config.__post_init__ overwrites one that differs)."""

    hidden_act: Name = "silu"
    resampler_n_latents: Width = 64
    resampler_depth: LayerCount = 3
    resampler_n_heads: HeadCount = 16
    resampler_head_dim: Width = 96
    num_key_value_heads: HeadCount = 4

    @model_validator(mode="after")
    def _check_heads(self) -> Idefics2PerceiverConfig:
        if self.num_key_value_heads > self.resampler_n_heads:  # Idefics2PerceiverConfig.validate_architecture
            raise ValueError(
                f"num_key_value_heads ({self.num_key_value_heads}) exceeds resampler_n_heads "
                f"({self.resampler_n_heads}); transformers refuses it"
            )
        return self


@family("idefics2")
class Idefics2Config(MultimodalConfig):
    """configuration_idefics2.py / modeling_idefics2.py: Idefics2VisionTransformer (whatever model_type vision_config
    names: __post_init__ drops it), Idefics2Connector (modality_projection: a gated MLP without biases, vision hidden →
    text intermediate_size → text hidden, with the text model's activation; perceiver_resampler: resampler_n_latents
    learned latents, resampler_depth layers whose attention reads the latents and the image's features side by side
    (RMSNorms input_latents_norm, input_context_norm, post_attention_layernorm; q, k, v, o without biases; a gated MLP
    four times the text width), a final RMSNorm) and a Mistral language model (by default); the top-level
    tie_word_embeddings (default false) decides tying. The perceiver's FLOPs (latents attending to an image's
    patches) have no rule in ffncalc's image arithmetic: the model is counted by parameter."""

    architecture = "Idefics2"
    config_class = "Idefics2Config"
    default_model_class = "Idefics2ForConditionalGeneration"
    text_model_type = "mistral"
    # Idefics2Config.sub_configs_defaults' text init_kwargs (the keys Mistral reads)
    text_defaults = {"model_type": "mistral", "max_position_embeddings": 32768, "pad_token_id": 0}
    vision_model_type = "idefics2_vision"
    language_model_prefix = "model.text_model."
    lm_head_name = "lm_head"
    vision_prefix = "model.vision_model."

    tie_word_embeddings: Flag = False
    perceiver_config: Idefics2PerceiverConfig = Field(default_factory=Idefics2PerceiverConfig)

    @model_validator(mode="before")
    @classmethod
    def _drop_nested_model_types(cls, raw: Any) -> Any:
        """Idefics2Config.__post_init__: the hub's remote-code configs name other model_types in vision_config and
        perceiver_config; transformers drops them and reads its own (a null perceiver_config: the defaults)."""
        if not isinstance(raw, dict):
            return raw
        raw = dict(raw)
        for key in ("vision_config", "perceiver_config"):
            if isinstance(raw.get(key), dict):
                raw[key] = {k: v for k, v in raw[key].items() if k != "model_type"}
        if raw.get("perceiver_config", {}) is None:
            del raw["perceiver_config"]
        return raw

    def image_input(self, tower: Tower) -> ImageInput | None:
        return None  # the perceiver resampler: no image rule (see the class)

    def projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        perceiver = self.perceiver_config
        inner = getattr(self.text, "intermediate_size", None)  # modality_projection reads text_config's
        if not isinstance(inner, int):
            raise InvalidConfigError(
                f"text_config: Idefics2's connector reads its intermediate_size, which {self.text.model_type} lacks"
            )
        connector = "model.connector."
        modules: list[tuple[str, Linear | Norm | LearnedTensor]] = [
            ("modality_projection.gate_proj", Linear(tower.hidden_size, inner)),
            ("modality_projection.up_proj", Linear(tower.hidden_size, inner)),
            ("modality_projection.down_proj", Linear(inner, text_hidden)),
            ("perceiver_resampler.latents", LearnedTensor((perceiver.resampler_n_latents, text_hidden))),
            ("perceiver_resampler.norm", Norm("rmsnorm", text_hidden)),
        ]
        heads, kv_heads, head_dim = (
            perceiver.resampler_n_heads,
            perceiver.num_key_value_heads,
            perceiver.resampler_head_dim,
        )
        for i in range(perceiver.resampler_depth):
            layer = f"perceiver_resampler.layers.{i}."
            modules += [
                (layer + "input_latents_norm", Norm("rmsnorm", text_hidden)),
                (layer + "input_context_norm", Norm("rmsnorm", text_hidden)),
                (layer + "self_attn.q_proj", Linear(text_hidden, heads * head_dim)),
                (layer + "self_attn.k_proj", Linear(text_hidden, kv_heads * head_dim)),
                (layer + "self_attn.v_proj", Linear(text_hidden, kv_heads * head_dim)),
                (layer + "self_attn.o_proj", Linear(heads * head_dim, text_hidden)),
                (layer + "post_attention_layernorm", Norm("rmsnorm", text_hidden)),
                (layer + "mlp.gate_proj", Linear(text_hidden, 4 * text_hidden)),
                (layer + "mlp.up_proj", Linear(text_hidden, 4 * text_hidden)),
                (layer + "mlp.down_proj", Linear(4 * text_hidden, text_hidden)),
            ]
        return tuple(projector_module(connector + name, module) for name, module in modules)
