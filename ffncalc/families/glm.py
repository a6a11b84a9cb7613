"""GLM (Zhipu AI / Z.ai): GLM and GLM-4 (Llama's layers with q/k/v biases and a fused gate_up_proj; GLM-4
adds a norm after attention and after the MLP), GLM-4.5 (GQA beside DeepSeek-V3's MoE), GLM-4.7-Flash
(DeepSeek-V3's MLA and MoE) and GLM-5 (DeepSeek-V3.2's sparse attention, layers sharing their indexer's picks);
Sarvam-MoE (sarvam_moe), which transformers builds as GLM-4.5, and Solar Open (GLM-4.5's experts in every layer)."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import Field, model_validator

from ..schema import (
    ExpertCount,
    ExpertCountOrZero,
    Flag,
    HeadCount,
    LayerCount,
    LayerIndex,
    Name,
    PositionCount,
    Width,
    derives,
)
from ..spec import CheckpointExtra, Layer, ModelNames, MoeFfn, Norm, names
from .base import DecoderConfig
from .blocks import MlpLayerTypes, SharedIndexerPattern, entries_check
from .deepseek import (
    DEEPSEEK_MOE,
    DeepseekLayers,
    DeepseekV3Config,
    DeepseekV32Config,
    correction_bias_extra,
    even_rope_check,
    nextn_extra,
)
from .registry import family

GLM_MLP = names(gate="mlp.gate_up_proj", up="mlp.gate_up_proj", down="mlp.down_proj")
SARVAM_ATTENTION = names(
    q="attention.query_key_value",
    k="attention.query_key_value",
    v="attention.query_key_value",
    o="attention.dense",
    q_norm="attention.query_layernorm",
    k_norm="attention.key_layernorm",
)


class GlmLayers(DecoderConfig):
    """configuration_glm.py / modeling_glm.py: Llama's layers with biases on q, k and v (attention_bias, default
    true; o has none), gate and up fused in mlp.gate_up_proj. The layers alone: GLM and GLM-4 add the
    attention_bias switch, head_dim (128) and tie_word_embeddings; GLM-4V's language model has biases always, heads
    hidden_size // num_attention_heads wide, and leaves tying to its wrapper."""

    architecture = "GLM"
    config_class = "GlmConfig"
    default_model_class = "GlmForCausalLM"
    heads_divide_hidden = False  # GlmConfig has no validate_architecture; head_dim is its own field
    mlp_names = GLM_MLP

    num_hidden_layers: LayerCount
    intermediate_size: Width
    hidden_act: Name
    num_key_value_heads: HeadCount | None
    max_position_embeddings: PositionCount

    def build_layer(self, index: int, window: int | None) -> Layer:
        return self.layer(self.attention(window, o_bias=False), self.gated_ffn())


@family("glm", transformers="GlmConfig")
class GlmConfig(GlmLayers):
    """configuration_glm.py: GLM's layers, their attention_bias switch (default true) and head_dim (128)."""

    tie_word_embeddings: Flag
    head_dim: Width | None
    attention_bias: Flag


class Glm4Layers(GlmLayers):
    """configuration_glm4.py / modeling_glm4.py: GLM's layers with two more RMSNorms, on the attention's
    output (post_self_attn_layernorm) and on the MLP's (post_mlp_layernorm)."""

    architecture = "GLM-4"
    config_class = "Glm4Config"
    default_model_class = "Glm4ForCausalLM"

    def pre_norms(self) -> tuple[tuple[str, Norm], ...]:
        norm = self.rms_norm()
        return super().pre_norms() + (("post_self_attn_layernorm", norm), ("post_mlp_layernorm", norm))


@family("glm4", transformers="Glm4Config")
class Glm4Config(Glm4Layers):
    """configuration_glm4.py: GLM-4's layers, their attention_bias switch (default true) and head_dim (128)."""

    tie_word_embeddings: Flag
    num_key_value_heads: HeadCount
    head_dim: Width
    attention_bias: Flag


class Glm4MoeLayers(DecoderConfig):
    """configuration_glm4_moe.py / modeling_glm4_moe.py (GLM-4.5, GLM-4.6): grouped-query attention with
    q/k/v biases (attention_bias) and optional per-head q/k RMSNorms (use_qk_norm); DeepSeek-V3's FFNs:
    dense below first_k_dense_replace, above it routed experts, the shared experts as one MLP of
    n_shared_experts × moe_intermediate_size, and the router's correction bias (a saved buffer).

    Checkpoints store num_nextn_predict_layers multi-token-prediction layers after the last (transformers
    skips them), as DeepSeek-V3's.
    """

    architecture = "GLM-4.5"
    config_class = "Glm4MoeConfig"
    default_model_class = "Glm4MoeForCausalLM"
    heads_divide_hidden = False
    read_beyond = {"head_dim": "read by the modeling code with getattr"}
    informational_fields = DecoderConfig.informational_fields | {"num_mtp_layers"}
    moe_names = DEEPSEEK_MOE
    correction_bias_name: ClassVar[str] = "e_score_correction_bias"  # the router's buffer, under mlp.gate

    num_hidden_layers: LayerCount
    intermediate_size: Width
    attention_bias: Flag
    hidden_act: Name
    head_dim: Width | None = None
    num_key_value_heads: HeadCount
    max_position_embeddings: PositionCount
    moe_intermediate_size: Width
    num_experts_per_tok: ExpertCount
    n_shared_experts: ExpertCountOrZero
    n_routed_experts: ExpertCountOrZero
    first_k_dense_replace: LayerIndex
    routing_fields = ("num_experts_per_tok", "n_routed_experts")

    @property
    def qk_normed(self) -> bool:
        """use_qk_norm where the configuration class has it (GLM-4.5's; GLM-4.5V's language model has none)."""
        return bool(getattr(self, "use_qk_norm", False))

    @property
    def mtp_layers(self) -> int:
        """num_mtp_layers where the configuration class has it: the checkpoint's multi-token-prediction layers."""
        return int(getattr(self, "num_mtp_layers", 0))

    def sparse(self, index: int) -> bool:
        return index >= self.first_k_dense_replace

    def gqa_layer(self, ffn) -> Layer:
        norms = self.per_head_norms() if self.qk_normed else {}
        return self.layer(self.attention(None, o_bias=False, **norms), ffn)

    def moe(self) -> MoeFfn:
        return self.shared_experts_moe(
            self.n_routed_experts, self.num_experts_per_tok, self.moe_intermediate_size, self.n_shared_experts
        )

    def build_layers(self) -> tuple[Layer, ...]:
        dense, sparse = self.gqa_layer(self.gated_ffn()), self.gqa_layer(self.moe())
        return tuple(sparse if self.sparse(i) else dense for i in range(self.num_hidden_layers))

    def checkpoint_extras(self) -> tuple[CheckpointExtra, ...]:
        extras = list(super().checkpoint_extras())
        sparse = tuple(i for i in range(self.num_hidden_layers) if self.sparse(i))
        if sparse:
            extras.append(
                correction_bias_extra(
                    self.layer_name, sparse, self.n_routed_experts, stored_as=self.correction_bias_name
                )
            )
        if self.mtp_layers:
            extras.append(nextn_extra(self, self.mtp_layers, self.gqa_layer(self.moe()), self.n_routed_experts))
        return tuple(extras)


@family("glm4_moe", transformers="Glm4MoeConfig")
class Glm4MoeConfig(Glm4MoeLayers):
    """configuration_glm4_moe.py: GLM-4.5's layers, with the use_qk_norm switch and num_mtp_layers."""

    tie_word_embeddings: Flag
    use_qk_norm: Flag
    num_mtp_layers: LayerIndex


@family("sarvam_moe", transformers="SarvamMoEConfig", architecture="Sarvam-MoE", model_class="Glm4MoeForCausalLM")
class SarvamMoEConfig(Glm4MoeConfig):
    """configuration_sarvam_moe.py / modular_sarvam_moe.py (Sarvam-30B): GLM-4.5's model (transformers builds
    Glm4MoeForCausalLM) with Sarvam's defaults: per-head q/k norms on, head_dim 64, one dense layer then 128
    experts, no multi-token-prediction layers. Its configs may use the remote code's names (num_experts,
    num_shared_experts, use_qkv_bias, num_mtp_layers), and its checkpoints keep the remote code's modules:
    model.word_embeddings, attention.query_key_value (q, k and v fused), attention.dense,
    attention.query_layernorm and key_layernorm, the router's mlp.gate.expert_bias (transformers renames them on
    load: conversion_mapping.py, "sarvam_moe")."""

    attention_names = SARVAM_ATTENTION
    model_names = ModelNames(embed_tokens="model.word_embeddings", final_norm="model.norm")
    correction_bias_name = "expert_bias"

    head_dim: Width


@family(
    "solar_open",
    transformers="SolarOpenConfig",
    architecture="Solar Open",
    model_class="SolarOpenForCausalLM",
    heads_divide_hidden=False,
    routing=("num_experts_per_tok", "n_routed_experts"),
)
class SolarOpenConfig(DecoderConfig):
    """configuration_solar_open.py / modular_solar_open.py (Solar-Open-100B): Llama's attention (attention_bias on q,
    k and v; o without a bias; head_dim 128) and GLM-4.5's MoE in every layer: routed experts and one shared MLP of
    n_shared_experts × moe_intermediate_size, the router's correction bias a saved buffer. It has no dense layer,
    no q/k norms and no multi-token-prediction layers (SolarOpenConfig drops GLM-4.5's fields for them)."""

    moe_names = DEEPSEEK_MOE

    num_hidden_layers: LayerCount
    tie_word_embeddings: Flag
    attention_bias: Flag
    hidden_act: Name
    num_key_value_heads: HeadCount
    head_dim: Width
    max_position_embeddings: PositionCount
    moe_intermediate_size: Width
    num_experts_per_tok: ExpertCount
    n_shared_experts: ExpertCountOrZero
    n_routed_experts: ExpertCount

    def build_layer(self, index: int, window: int | None) -> Layer:
        moe = self.shared_experts_moe(
            self.n_routed_experts, self.num_experts_per_tok, self.moe_intermediate_size, self.n_shared_experts
        )
        return self.layer(self.attention(window, o_bias=False), moe)

    def checkpoint_extras(self) -> tuple[CheckpointExtra, ...]:
        every = tuple(range(self.num_hidden_layers))
        return (*super().checkpoint_extras(), correction_bias_extra(self.layer_name, every, self.n_routed_experts))


@family(
    "glm4_moe_lite",
    transformers="Glm4MoeLiteConfig",
    architecture="GLM-4.7-Flash",
    model_class="Glm4MoeLiteForCausalLM",
    read_beyond={
        "num_nextn_predict_layers": "the checkpoints' multi-token-prediction layers (a key transformers does not read)"
    },
)
class Glm4MoeLiteConfig(MlpLayerTypes, DeepseekLayers):
    """configuration_glm4_moe_lite.py (GLM-4.7-Flash): DeepSeek-V3's MLA and MoE, each layer's FFN as
    mlp_layer_types says (default: the first dense, the rest MoE). A config's head_dim is its
    qk_rope_head_dim (attribute_map). Checkpoints store num_nextn_predict_layers multi-token-prediction
    layers after the last (a key transformers does not read), as DeepSeek-V3's."""

    informational_fields = DeepseekV3Config.informational_fields | {"num_nextn_predict_layers"}

    tie_word_embeddings: Flag
    num_key_value_heads: HeadCount
    n_routed_experts: ExpertCountOrZero
    num_experts_per_tok: ExpertCount
    mlp_layer_types: list[Literal["dense", "sparse"]] | None
    num_nextn_predict_layers: LayerIndex = 0
    _check_mlp_layer_types = entries_check("mlp_layer_types", exact=False)  # indexed per layer, never checked
    _check_rope = even_rope_check()

    @derives("mlp_layer_types", "the first layer dense, the others sparse")
    def default_mlp_kinds(self) -> list[str]:
        return ["dense"] + ["sparse"] * (self.num_hidden_layers - 1)

    @property
    def dense_prefix(self) -> int:
        """One dense layer first, as the default mlp_layer_types (Glm4MoeLiteConfig has no first_k_dense_replace)."""
        return 1

    def build_layers(self) -> tuple[Layer, ...]:
        dense = self.layer(self.mla_attention(None), self.gated_ffn())
        sparse = self.layer(self.mla_attention(None), self.moe())
        return tuple(sparse if self.sparse(i) else dense for i in range(self.num_hidden_layers))


@family(
    "glm_moe_dsa",
    transformers="GlmMoeDsaConfig",
    architecture="GLM-5",
    model_class="GlmMoeDsaForCausalLM",
    read_beyond={
        "index_topk_pattern": "no field: GlmMoeDsaConfig.__post_init__ reads it to build indexer_types",
        "index_topk_freq": "no field: GlmMoeDsaConfig.__post_init__ reads it to build indexer_types",
        "index_skip_topk_offset": "no field: GlmMoeDsaConfig.__post_init__ reads it to build indexer_types",
    },
)
class GlmMoeDsaConfig(SharedIndexerPattern, DeepseekV32Config):
    """configuration_glm_moe_dsa.py / modeling_glm_moe_dsa.py (GLM-5): DeepSeek-V3.2's sparse attention and
    MoE with GLM-5's widths; a layer whose indexer_types entry is "shared" has no indexer and attends to
    the keys the previous layer's indexer picked. indexer_types, when absent, follows index_topk_pattern
    ("F"/"S" per layer) or else index_topk_freq and index_skip_topk_offset (keys transformers reads
    from the config, not fields)."""

    num_key_value_heads: HeadCount
    indexer_types: list[Literal["full", "shared"]] | None
    index_topk_pattern: Annotated[str, Field(pattern="^[FS]*$")] | list[Literal["full", "shared"]] | None = None
    index_topk_freq: int = Field(1, strict=True)
    index_skip_topk_offset: int = Field(2, strict=True)

    @model_validator(mode="after")
    def _check_indexer_kinds(self):
        """transformers indexes indexer_types by layer without checking its length: too few entries fail."""
        kinds = self.indexer_kinds()
        if len(kinds) < self.num_hidden_layers:
            field = "indexer_types" if self.indexer_types is not None else "index_topk_pattern"
            raise ValueError(f"{field} has {len(kinds)} entries for {self.num_hidden_layers} layers")
        return self

    def unused_fields(self) -> set[str]:
        unused = super().unused_fields()
        if self.indexer_types is not None or self.index_topk_pattern is not None:
            unused |= {"index_topk_freq", "index_skip_topk_offset"}
        if self.indexer_types is not None:
            unused.add("index_topk_pattern")
        return unused
