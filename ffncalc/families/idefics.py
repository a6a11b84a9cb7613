"""Idefics2, Idefics3 and SmolVLM: a SigLIP-shaped tower over tiles of an image, a connector (Idefics2: a gated MLP
and a perceiver resampler into a fixed number of latents; Idefics3: a pixel shuffle of scale_factor² patches into one
token and a projection) and any language model transformers' AutoModel builds, all under ``model.``
(``model.vision_model.``, ``model.connector.``, ``model.text_model.``).

IDEFICS (the first, Flamingo-style): a flat Llama config whose decoder is interleaved with gated cross-attention
layers that read an image's CLIP features (or a perceiver resampler's latents) as keys, not as tokens."""

from __future__ import annotations

from functools import cached_property
from typing import Any, Literal

from pydantic import Field, model_validator

from ..errors import InvalidConfigError
from ..results import DefaultUsed
from ..schema import (
    Flag,
    HeadCount,
    HFConfig,
    LayerCount,
    Name,
    Nested,
    PositionCount,
    Width,
    WidthOrZero,
    read_block,
)
from ..spec import Extra, ImageInput, Layer, LearnedTensor, Linear, ModelSpec, Norm, Parameter, Table, names
from ..values import replace
from .base import DecoderConfig
from .multimodal import MultimodalConfig, replace_default, with_tower
from .registry import family, tower
from .towers import Tower, projector_module
from .vision import ClipVisionConfig


@family(
    "idefics3", transformers="Idefics3Config", architecture="Idefics3", model_class="Idefics3ForConditionalGeneration"
)
class Idefics3Config(MultimodalConfig):
    """configuration_idefics3.py / modeling_idefics3.py: Idefics3VisionTransformer, Idefics3Connector (pixel
    shuffle by scale_factor, then modality_projection.proj: vision hidden · scale_factor² → text hidden, no bias)
    and a Llama (by default) language model; the top-level tie_word_embeddings (default false) decides tying."""

    text_model_type = "llama"
    text_defaults = {"model_type": "llama"}
    vision_model_type = "idefics3_vision"
    language_model_prefix = "model.text_model."
    lm_head_name = "lm_head"
    vision_prefix = "model.vision_model."

    scale_factor: Width

    def image_input(self, tower: Tower) -> ImageInput | None:
        """The processor's tiles of image_size square (ffncalc counts one), each tile's patches merged scale_factor ×
        scale_factor into one token by the pixel shuffle."""
        return None if tower.image is None else replace(tower.image, merge=self.scale_factor)

    def projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        merged = tower.hidden_size * self.scale_factor**2
        return (projector_module("model.connector.modality_projection.proj", Linear(merged, text_hidden)),)


@family("smolvlm", transformers="SmolVLMConfig", architecture="SmolVLM", model_class="SmolVLMForConditionalGeneration")
class SmolVLMConfig(Idefics3Config):
    """configuration_smolvlm.py / modeling_smolvlm.py: Idefics3's layout and defaults under SmolVLM's names."""

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


@family(
    "idefics2",
    transformers="Idefics2Config",
    architecture="Idefics2",
    model_class="Idefics2ForConditionalGeneration",
    own_defaults={
        "perceiver_config": "the record holds None; __post_init__ builds the block from its own class's defaults"
    },
)
class Idefics2Config(MultimodalConfig):
    """configuration_idefics2.py / modeling_idefics2.py: Idefics2VisionTransformer (whatever model_type vision_config
    names: __post_init__ drops it), Idefics2Connector (modality_projection: a gated MLP without biases, vision hidden →
    text intermediate_size → text hidden, with the text model's activation; perceiver_resampler: resampler_n_latents
    learned latents, resampler_depth layers whose attention reads the latents and the image's features side by side
    (RMSNorms input_latents_norm, input_context_norm, post_attention_layernorm; q, k, v, o without biases; a gated MLP
    four times the text width), a final RMSNorm) and a Mistral language model (by default); the top-level
    tie_word_embeddings (default false) decides tying. The perceiver's FLOPs (latents attending to an image's
    patches) have no rule in ffncalc's image arithmetic: the model is counted by parameter."""

    text_model_type = "mistral"
    # Idefics2Config.sub_configs_defaults' text init_kwargs (the keys Mistral reads)
    text_defaults = {"model_type": "mistral", "max_position_embeddings": 32768, "pad_token_id": 0}
    vision_model_type = "idefics2_vision"
    language_model_prefix = "model.text_model."
    lm_head_name = "lm_head"
    vision_prefix = "model.vision_model."

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


# --- IDEFICS ---------------------------------------------------------------------------------------------------------


@tower("idefics_vision", transformers="IdeficsVisionConfig")
class IdeficsVisionConfig(ClipVisionConfig):
    """configuration_idefics.py (IdeficsVisionConfig) / vision.py (IdeficsVisionTransformer): CLIP's tower (class
    token, patch convolution without bias, a position per patch and the class token, pre_layrnorm, biased LayerNorm
    layers, post_layernorm), its width named embed_dim."""


class IdeficsPerceiverConfig(Nested):
    """configuration_idefics.py (IdeficsPerceiverConfig): the resampler's sizes (its own use_resampler is not read:
    IdeficsModel reads the top-level one)."""

    resampler_n_latents: Width = 64
    resampler_depth: LayerCount = 6
    resampler_n_heads: HeadCount = 16
    resampler_head_dim: Width = 96
    qk_layer_norms_perceiver: Flag = False


IDEFICS_CROSS_ATTENTION = names(
    q="cross_attn.q_proj",
    k="cross_attn.k_proj",
    v="cross_attn.v_proj",
    o="cross_attn.o_proj",
    q_norm="cross_attn.q_layer_norm",
    k_norm="cross_attn.k_layer_norm",
)


@family(
    "idefics",
    transformers="IdeficsConfig",
    architecture="IDEFICS",
    model_class="IdeficsForVisionText2Text",
    own_defaults={
        "perceiver_config": "the record holds None; __post_init__ builds the block from its own class's defaults"
    },
)
class IdeficsConfig(DecoderConfig):
    """configuration_idefics.py (IdeficsConfig) / modeling_idefics.py (IdeficsForVisionText2Text): a flat config.
    Llama's layers (q, k, v, o without biases, one key-value head per head) under model.layers., and
    num_hidden_layers // cross_layer_interval gated cross-attention layers under model.gated_cross_attn_layers. (the
    j-th runs before decoder layer j · cross_layer_interval): cross_attn (k and v read the tower's embed_dim; with
    qk_layer_norms, RMSNorms over each query and key head), a SwiGLU MLP, two RMSNorms and two tanh gates
    (alpha_cross_attn, alpha_dense: one value each, or hidden_size with alpha_type "vector"). The token table and the
    head each hold additional_vocab_size rows apart (embed_tokens.additional_embedding, lm_head.additional_fc);
    tie_word_embeddings (default false) ties both pairs. The CLIP tower is model.vision_model.; with use_resampler
    (the top-level flag), model.perceiver_resampler. pools its patches into resampler_n_latents latents: learned
    latents, resampler_depth blocks (LayerNorms over the patches and the latents, q, k, v over both side by side,
    output_proj, no biases; optional LayerNorms over each query and key head; an MLP of four times the tower's width,
    fc and c_proj with a ReLU, after a LayerNorm), a final LayerNorm.

    The image reaches the text as cross-attention keys, not as tokens: one image's patches and class token, or the
    resampler's latents, whatever the context; no image rule (flops with an `image` refuses)."""

    informational_fields = frozenset({"max_position_embeddings", "pad_token_id", "alpha_initializer"})

    max_position_embeddings: PositionCount
    num_hidden_layers: LayerCount
    intermediate_size: Width
    tie_word_embeddings: Flag
    hidden_act: Name
    additional_vocab_size: WidthOrZero
    cross_layer_interval: LayerCount
    qk_layer_norms: Flag
    # IdeficsGatedCrossAttentionLayer refuses any other initializer or type
    alpha_initializer: Literal["zeros", "ones", "normal", "gaussian", "random"]
    alpha_type: Literal["float", "vector"]
    use_resampler: Flag
    vision_config: dict[str, Any] | None
    perceiver_config: IdeficsPerceiverConfig = Field(default_factory=IdeficsPerceiverConfig)

    @model_validator(mode="before")
    @classmethod
    def _default_perceiver(cls, raw: Any) -> Any:
        """A null perceiver_config is the defaults (IdeficsConfig's sub_configs_defaults), as is one naming its type."""
        if not isinstance(raw, dict):
            return raw
        block = raw.get("perceiver_config", {})
        if block is None:
            return {key: value for key, value in raw.items() if key != "perceiver_config"}
        if isinstance(block, dict) and "model_type" in block:
            return {**raw, "perceiver_config": {k: v for k, v in block.items() if k != "model_type"}}
        return raw

    @cached_property
    def vision(self) -> IdeficsVisionConfig:
        """vision_config read as IdeficsVisionConfig, whatever model_type it names (IdeficsConfig builds that class)."""
        raw = {key: value for key, value in (self.vision_config or {}).items() if key != "model_type"}
        return read_block(IdeficsVisionConfig, {**raw, "model_type": "idefics_vision"}, "vision_config")

    def nested_configs(self) -> dict[str, HFConfig]:
        return {"vision_config": self.vision}

    def unused_fields(self) -> set[str]:
        return set() if self.use_resampler else {"perceiver_config"}

    def defaults_used(self) -> list[DefaultUsed]:
        """The config's own defaults, then the tower's, under vision_config."""
        own = [default for default in super().defaults_used() if default.field != "vision_config"]
        return own + [replace_default(d, "vision_config." + d.field) for d in self.vision.defaults_used()]

    @property
    def cross_layers(self) -> int:
        """The gated cross-attention layers: num_hidden_layers // cross_layer_interval."""
        return self.num_hidden_layers // self.cross_layer_interval

    def image_keys(self) -> int:
        """The keys one image gives every cross-attention layer: the resampler's latents, or the tower's positions."""
        if self.use_resampler:
            return self.perceiver_config.resampler_n_latents
        return (self.vision.image_size // self.vision.patch_size) ** 2 + 1

    def cross_attention_layer(self) -> Layer:
        """A gated cross-attention layer, numbered from 0 after the decoder layers of its stack."""
        norms = self.per_head_norms() if self.qk_layer_norms else {}
        cross = self.attention(None, names=IDEFICS_CROSS_ATTENTION, kv_input_size=self.vision.hidden_size, **norms)
        gate_shape = (1, 1, self.hidden_size) if self.alpha_type == "vector" else (1,)
        gates = tuple(Parameter("other", gate, gate, gate_shape) for gate in ("alpha_cross_attn", "alpha_dense"))
        layer = Layer(
            "model.gated_cross_attn_layers.{i}",
            None,
            self.gated_ffn(),
            self.pre_norms(),
            cross_attention=cross,
            parameters=gates,
            index_offset=self.num_hidden_layers,
        )
        return layer

    def build_layers(self) -> tuple[Layer, ...]:
        return super().build_layers() + (self.cross_attention_layer(),) * self.cross_layers

    def perceiver(self) -> tuple[Extra, ...]:
        """model.perceiver_resampler.: latents, resampler_depth attention and MLP blocks, a final LayerNorm."""
        perceiver, width = self.perceiver_config, self.vision.hidden_size
        inner = perceiver.resampler_n_heads * perceiver.resampler_head_dim
        layer_norm, head_norm = (
            Norm("layernorm", width, bias=True),
            Norm("layernorm", perceiver.resampler_head_dim, True),
        )
        modules: list[tuple[str, Linear | Norm | LearnedTensor]] = [
            ("latents", LearnedTensor((perceiver.resampler_n_latents, width))),
            ("layer_norm", layer_norm),
        ]
        for i in range(perceiver.resampler_depth):
            attention, mlp = f"blocks.{i}.0.", f"blocks.{i}.1."
            modules += [
                (attention + "context_layer_norm", layer_norm),
                (attention + "latents_layer_norm", layer_norm),
                *(
                    [(attention + "q_layer_norm", head_norm), (attention + "k_layer_norm", head_norm)]
                    if perceiver.qk_layer_norms_perceiver
                    else []
                ),
                (attention + "q_proj", Linear(width, inner)),
                (attention + "k_proj", Linear(width, inner)),
                (attention + "v_proj", Linear(width, inner)),
                (attention + "output_proj", Linear(inner, width)),
                (mlp + "ln", layer_norm),
                (mlp + "fc", Linear(width, 4 * width)),
                (mlp + "c_proj", Linear(4 * width, width)),
            ]
        return tuple(projector_module("model.perceiver_resampler." + name, module) for name, module in modules)

    def to_spec(self) -> ModelSpec:
        spec = super().to_spec()
        extras: tuple[Extra, ...] = ()
        if self.additional_vocab_size:
            rows, hidden = self.additional_vocab_size, self.hidden_size
            extras = (
                Extra("embedding", "model.embed_tokens.additional_embedding", Table(rows, hidden)),
                # tied: the additional rows' table, multiplied again
                Extra("lm_head", "lm_head.additional_fc", Linear(hidden, rows), borrowed=self.tie_word_embeddings),
            )
        spec = replace(spec, extras=spec.extras + extras, cross_attention_keys=self.image_keys())
        tower = self.vision.tower("model.vision_model.")
        return with_tower(spec, tower, self.perceiver() if self.use_resampler else (), image=None)

    def notes(self) -> list[str]:
        source = "the perceiver resampler's latents" if self.use_resampler else "patches and the class token"
        return [
            f"idefics is multimodal: the language model, its {self.cross_layers} gated cross-attention layers, the "
            f"vision tower (IdeficsVisionConfig){' and the perceiver resampler (the projector)' if self.use_resampler else ''}"
            f" are counted. Every cross-attention layer reads one image's {self.image_keys():,} keys ({source}), "
            "counted per text token; the image reaches the text as those keys, not as tokens, so flops `image` has no "
            "rule for it"
        ]
