"""AllenAI's OLMo family: the first OLMo (LayerNorms without parameters), OLMo-2 (norms after the sublayers,
q/k norms across heads), OLMo-3 (OLMo-2 with three sliding-window layers in four), OLMoE (a MoE with OLMo's
q/k norms), FlexOlmo (OLMo-2's layer around OLMoE's experts) and OLMo Hybrid (Gated DeltaNet layers among
OLMo-3's attention layers)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Literal

from pydantic import Field, model_validator

from ..schema import ExpertCount, Flag, HeadCount, LayerCount, Name, PositionCount, Width, derives, per_config
from ..spec import Attention, Layer, Mixer, ModelSpec, MoeFfn, Norm, names
from ..values import replace
from .base import (
    DecoderConfig,
)
from .blocks import periodic_window, windows_of_layer_types
from .mixers import gated_deltanet
from .registry import family


@family(
    "olmo",
    transformers="OlmoConfig",
    architecture="OLMo",
    model_class="OlmoForCausalLM",
    heads_divide_hidden=False,  # configuration_*.py floors hidden_size // num_attention_heads
    read_beyond={"head_dim": "read by the modeling code with getattr"},
)
class OlmoConfig(DecoderConfig):
    """configuration_olmo.py / modeling_olmo.py (OLMo-1B/7B, OLMo-1.7): Llama's attention (biased by
    attention_bias) and SwiGLU; its LayerNorms, before each sublayer and at the end, have neither weight nor
    bias, so a layer holds only projections. clip_qkv clamps activations: no parameters."""

    num_hidden_layers: LayerCount
    intermediate_size: Width
    tie_word_embeddings: Flag
    attention_bias: Flag
    max_position_embeddings: PositionCount
    num_key_value_heads: HeadCount | None
    hidden_act: Name
    head_dim: Width | None = None

    def build_layer(self, index: int, window: int | None) -> Layer:
        return self.layer(self.attention(window), self.gated_ffn(), norms=())

    def to_spec(self) -> ModelSpec:
        return replace(super().to_spec(), final_norm=None)


if TYPE_CHECKING:  # a mixin: it relies on what its model class has
    _Olmo2LayerBase = DecoderConfig
else:
    _Olmo2LayerBase = object


class _Olmo2Layer(_Olmo2LayerBase):
    """OLMo-2's layer around any FFN: an RMSNorm across all query heads (heads · head_dim) and one across
    all key heads; norms after attention and after the FFN instead of before."""

    def olmo2_attention(self, window: int | None) -> Attention:
        head_dim = self.resolved_head_dim
        return self.attention(
            window,
            q_norm=self.rms_norm(self.num_attention_heads * head_dim),
            k_norm=self.rms_norm(self.kv_heads * head_dim),
        )

    def post_norms(self) -> tuple[tuple[str, Norm], ...]:
        norm = self.rms_norm()
        return (("post_attention_layernorm", norm), ("post_feedforward_layernorm", norm))


@family(
    "olmo2",
    transformers="Olmo2Config",
    architecture="OLMo-2",
    model_class="Olmo2ForCausalLM",
    heads_divide_hidden=False,  # configuration_*.py floors hidden_size // num_attention_heads
    read_beyond={"head_dim": "read by the modeling code with getattr"},
)
class Olmo2Config(
    _Olmo2Layer,
    DecoderConfig,
):
    """configuration_olmo2.py / modeling_olmo2.py: OLMo-2's layer (q/k norms across heads, norms after the
    sublayers) around Llama's MLP."""

    num_hidden_layers: LayerCount
    intermediate_size: Width
    tie_word_embeddings: Flag
    attention_bias: Flag
    max_position_embeddings: PositionCount
    num_key_value_heads: HeadCount | None
    hidden_act: Name
    head_dim: Width | None = None

    def build_layer(self, index: int, window: int | None) -> Layer:
        return self.layer(self.olmo2_attention(window), self.gated_ffn(), self.post_norms())


@family("olmo3", transformers="Olmo3Config", architecture="OLMo-3", model_class="Olmo3ForCausalLM")
class Olmo3Config(Olmo2Config):
    """configuration_olmo3.py / modular_olmo3.py: OLMo-2's layer; ``layer_types`` (default: every fourth
    layer full, the others sliding) gives the sliding layers a window of ``sliding_window``."""

    sliding_window: Width | None
    layer_types: list[Literal["full_attention", "sliding_attention"]] | None

    def layer_windows(self) -> list[int | None]:
        if self.layer_types is not None:
            return windows_of_layer_types(self.layer_types, self.sliding_window)
        return [periodic_window(i, self.sliding_window, 4) for i in range(self.num_hidden_layers)]

    @derives("layer_types", "every fourth layer full, the others sliding")
    def window_kinds(self) -> list[str]:
        return super().window_kinds()


@family(
    "olmoe",
    transformers="OlmoeConfig",
    architecture="OLMoE",
    routing=("num_experts_per_tok", "num_experts"),
    model_class="OlmoeForCausalLM",
    heads_divide_hidden=False,  # configuration_*.py floors hidden_size // num_attention_heads
    read_beyond={"head_dim": "read by the modeling code with getattr"},
)
class OlmoeConfig(DecoderConfig):
    """configuration_olmoe.py / modeling_olmoe.py: Llama's layer with a MoE FFN in every layer (Llama's
    expert names); RMSNorm across the queries of width hidden_size and across the keys of width
    (hidden_size // heads) · kv_heads, whatever head_dim says."""

    num_hidden_layers: LayerCount
    intermediate_size: Width
    tie_word_embeddings: Flag
    attention_bias: Flag
    num_key_value_heads: HeadCount | None
    hidden_act: Name
    head_dim: Width | None = None
    max_position_embeddings: PositionCount
    num_experts: ExpertCount
    num_experts_per_tok: ExpertCount

    def experts(self) -> MoeFfn:
        return self.moe_ffn(self.num_experts, self.num_experts_per_tok, self.intermediate_size)

    def build_layer(self, index: int, window: int | None) -> Layer:
        attention = self.attention(
            window,
            q_norm=self.rms_norm(self.hidden_size),
            k_norm=self.rms_norm(self.hidden_size // self.num_attention_heads * self.kv_heads),
        )
        return self.layer(attention, self.experts())


@family("flex_olmo", transformers="FlexOlmoConfig", architecture="FlexOlmo", model_class="FlexOlmoForCausalLM")
class FlexOlmoConfig(_Olmo2Layer, OlmoeConfig):
    """configuration_flex_olmo.py / modular_flex_olmo.py: OLMo-2's attention (q/k norms of heads · head_dim)
    and post-sublayer norms around OLMoE's experts in every layer."""

    def build_layer(self, index: int, window: int | None) -> Layer:
        return self.layer(self.olmo2_attention(window), self.experts(), self.post_norms())


# Where OLMo Hybrid's checkpoints keep the Gated DeltaNet: q, k, v apart, each with its own convolution (transformers
# 5.24 concatenates the three convolutions into linear_attn.conv1d on load: conversion_mapping.py, "olmo_hybrid").
OLMO_HYBRID_DELTANET = names(
    q_proj="linear_attn.q_proj",
    k_proj="linear_attn.k_proj",
    v_proj="linear_attn.v_proj",
    q_conv1d="linear_attn.q_conv1d",
    k_conv1d="linear_attn.k_conv1d",
    v_conv1d="linear_attn.v_conv1d",
    in_proj_z="linear_attn.g_proj",
    in_proj_b="linear_attn.b_proj",
    in_proj_a="linear_attn.a_proj",
    dt_bias="linear_attn.dt_bias",
    A_log="linear_attn.A_log",
    norm="linear_attn.o_norm",
    out_proj="linear_attn.o_proj",
)


@family(
    "olmo_hybrid",
    transformers="OlmoHybridConfig",
    architecture="OLMo-Hybrid",
    model_class="OlmoHybridForCausalLM",
    heads_divide_hidden=False,  # configuration_*.py floors hidden_size // num_attention_heads
    read_beyond={"head_dim": "read by the modeling code with getattr"},
)
class OlmoHybridConfig(_Olmo2Layer, DecoderConfig):
    """configuration_olmo_hybrid.py / modeling_olmo_hybrid.py: ``layer_types`` (default: every fourth layer full
    attention, the others linear; the last full if none is) picks OLMo-3's attention layer (q/k norms across heads,
    norms after the sublayers, no window) or a Gated DeltaNet layer with Llama's norms before the sublayers. The
    DeltaNet's key heads are linear_key_head_dim = int(0.75 · hidden / key heads) wide by default, its value heads
    twice that; a gate projection g_proj (the z of Qwen3-Next) and a gated RMSNorm over each value head.

    Checkpoints name the linear layers' norms attention_layer_norm and feedforward_layer_norm, and the attention
    layers' norm after attention feedforward_layer_norm too (transformers renames both on load).
    """

    num_hidden_layers: LayerCount
    intermediate_size: Width
    tie_word_embeddings: Flag
    attention_bias: Flag
    num_key_value_heads: HeadCount | None
    hidden_act: Name
    head_dim: Width | None = None
    max_position_embeddings: PositionCount
    layer_types: Annotated[list[Literal["linear_attention", "full_attention"]] | None, Field(max_length=1 << 14)]
    linear_num_key_heads: HeadCount | None
    linear_num_value_heads: HeadCount | None
    linear_key_head_dim: Width | None
    linear_value_head_dim: Width | None
    linear_conv_kernel_dim: Width

    @model_validator(mode="after")
    def _check_layer_kinds(self) -> OlmoHybridConfig:
        kinds = self.kinds()
        if "linear_attention" not in kinds:
            raise ValueError(
                "layer_types: OLMo Hybrid needs at least one linear_attention layer, as transformers requires"
            )
        if "full_attention" not in kinds:
            raise ValueError(
                "layer_types: OLMo Hybrid needs at least one full_attention layer, as transformers requires"
            )
        if self.key_head_dim() == 0:
            raise ValueError(
                f"linear_key_head_dim: 0.75 · hidden_size over {self.key_heads()} key heads leaves heads of width 0"
            )
        return self

    @derives("layer_types", "every fourth layer full_attention, the others linear_attention (the last full if none is)")
    @per_config
    def kinds(self) -> list[str]:
        if self.layer_types is not None:
            return list(self.layer_types)
        kinds = ["full_attention" if i % 4 == 3 else "linear_attention" for i in range(self.num_hidden_layers)]
        if "full_attention" not in kinds:
            kinds[-1] = "full_attention"
        return kinds

    @derives("linear_num_key_heads", "num_attention_heads")
    def key_heads(self) -> int:
        return self.linear_num_key_heads or self.num_attention_heads

    @derives("linear_num_value_heads", "num_attention_heads")
    def value_heads(self) -> int:
        return self.linear_num_value_heads or self.num_attention_heads

    @derives("linear_value_head_dim", "2 * linear_key_head_dim")
    def value_head_dim(self) -> int:
        return self.linear_value_head_dim or 2 * self.key_head_dim()

    @derives("linear_key_head_dim", "int(0.75 * hidden_size / linear_num_key_heads)")
    def key_head_dim(self) -> int:
        # int(0.75 * hidden / heads) in transformers: exact in integers as 3 · hidden // (4 · heads)
        return self.linear_key_head_dim or 3 * self.hidden_size // (4 * self.key_heads())

    def deltanet(self) -> Mixer:
        return gated_deltanet(
            self.hidden_size,
            self.key_heads(),
            self.value_heads(),
            self.key_head_dim(),
            self.value_head_dim(),
            self.linear_conv_kernel_dim,
            OLMO_HYBRID_DELTANET,
            separate_qkv=True,
        )

    def build_layer(self, index: int, window: int | None) -> Layer:
        norm = self.rms_norm()
        if self.kinds()[index] == "full_attention":
            norms = (("feedforward_layer_norm", norm), ("post_feedforward_layernorm", norm))
            return self.layer(self.olmo2_attention(None), self.gated_ffn(), norms)
        norms = (("attention_layer_norm", norm), ("feedforward_layer_norm", norm))
        return self.layer(None, self.gated_ffn(), norms, mixer=self.deltanet())
