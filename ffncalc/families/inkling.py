"""Thinking Machines' Inkling text model (inkling_text): attention with short convolutions on its keys and values and
a relative-position bias each token mixes from a learned bank, short convolutions on each sublayer's output, and an
MoE whose router also weighs its shared experts."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AliasChoices, Field

from ..schema import MAX_LAYERS, ExpertCount, ExpertCountOrZero, HeadCount, LayerCount, LayerIndex, Width, derives
from ..spec import (
    CheckpointExtra,
    DenseFfn,
    Extra,
    Layer,
    Mixer,
    ModelSpec,
    MoeFfn,
    Norm,
    Parameter,
    Projection,
    names,
)
from ..values import replace
from .base import DecoderConfig, HiddenAct
from .blocks import MlpLayerTypes, entries_check
from .deepseek import correction_bias_extra
from .gemma import STACKED_EXPERTS
from .registry import family

INKLING_SHARED = names(
    gate="mlp.shared_experts.gate_proj",
    up="mlp.shared_experts.up_proj",
    down="mlp.shared_experts.down_proj",
    parameters=True,
)


@family("inkling_text")
class InklingTextConfig(HiddenAct, MlpLayerTypes, DecoderConfig):
    """configuration_inkling.py / modeling_inkling.py (InklingForCausalLM). layer_types: hybrid (full attention of
    num_attention_heads, num_key_value_heads, head_dim) or hybrid_sliding (swa_num_attention_heads,
    swa_num_key_value_heads, swa_head_dim, within sliding_window_size); default sliding except every sixth layer
    (or the local_layer_ids). InklingAttention: q, k, v, o without biases, an RMSNorm over each query and key head,
    k_sconv and v_sconv (depthwise causal convolutions of sconv_kernel_size = conv_kernel_size taps over k and v,
    no bias), r_proj (hidden → heads · d_rel) whose per-head states mix rel_logits_proj.proj (d_rel × the layer's
    reach: rel_extent, or sliding_window_size in a sliding layer) into a bias per distance: heads · d_rel · reach
    multiply-adds a token, counted under other. Each layer also runs attn_sconv and mlp_sconv (hidden channels) on its
    sublayers' outputs.

    mlp_layer_types (default: dense below dense_mlp_idx (0), sparse after) picks InklingMLP (a SwiGLU of
    intermediate_size and a global_scale) or InklingMoE: a sigmoid router over n_routed_experts + n_shared_experts
    (the shared experts' weights in the mix) with a global_scale and an e_score_correction_bias buffer, stacked
    experts of moe_intermediate_size (num_experts_per_tok a token) and n_shared_experts stacked shared experts of the
    same width, every one run. A checkpoint's dense_intermediate_size is the dense MLP's width, its
    intermediate_size then the experts' (InklingTextConfig.__post_init__). The embeddings are normalised
    (embed_tokens.embed_norm); lm_head is never tied. The sequence keeps each convolution's last
    conv_kernel_size − 1 inputs."""

    architecture = "Inkling"
    config_class = "InklingTextConfig"
    default_model_class = "InklingForCausalLM"
    heads_divide_hidden = False
    moe_names = names(router="mlp.gate", experts="mlp.experts")
    expert_names = STACKED_EXPERTS
    routing_fields = ("num_experts_per_tok", "n_routed_experts")
    # dense_mlp_idx and dense_intermediate_size: __post_init__ takes them from the config's keys. tie_word_embeddings
    # is no field of InklingTextConfig, and InklingForCausalLM ties nothing whatever a config says.
    undeclared_keys = frozenset({"dense_mlp_idx", "dense_intermediate_size", "tie_word_embeddings"})
    informational_fields = DecoderConfig.informational_fields | {"tie_word_embeddings", "num_mtp_layers"}

    vocab_size: Width = 201024
    hidden_size: Width = 6144
    num_hidden_layers: LayerCount = 66
    num_attention_heads: HeadCount = 64
    num_key_value_heads: HeadCount = 8
    head_dim: Width = 128
    swa_num_attention_heads: HeadCount = 64
    swa_num_key_value_heads: HeadCount = 16
    swa_head_dim: Width = 128
    sliding_window_size: Width = Field(512, validation_alias=AliasChoices("sliding_window_size", "sliding_window"))
    d_rel: Width = 16
    rel_extent: Width = 1024
    local_layer_ids: list[LayerIndex] | None = Field(None, max_length=MAX_LAYERS)
    layer_types: Annotated[list[Literal["hybrid", "hybrid_sliding"]], Field(max_length=MAX_LAYERS)] | None = None
    max_position_embeddings: int = Field(
        131072, strict=True, validation_alias=AliasChoices("max_position_embeddings", "model_max_length")
    )
    conv_kernel_size: Width = Field(4, validation_alias=AliasChoices("conv_kernel_size", "sconv_kernel_size"))
    mlp_layer_types: Annotated[list[Literal["dense", "sparse"]], Field(max_length=MAX_LAYERS)] | None = None
    intermediate_size: Width = 24576
    moe_intermediate_size: Width = 3072
    n_routed_experts: ExpertCountOrZero = Field(
        256, validation_alias=AliasChoices("n_routed_experts", "num_local_experts")
    )
    num_experts_per_tok: ExpertCount = 6
    n_shared_experts: ExpertCountOrZero = 2
    num_mtp_layers: LayerIndex | None = None
    dense_mlp_idx: LayerIndex = 0
    dense_intermediate_size: Width | None = None

    _check_layer_types = entries_check("layer_types", exact=True)
    _check_mlp_layer_types = entries_check("mlp_layer_types", exact=True)

    @derives("layer_types", "hybrid_sliding except every sixth layer (or on local_layer_ids)")
    def kinds(self) -> list[str]:
        if self.layer_types is not None:
            return list(self.layer_types)
        count = self.num_hidden_layers
        local = (
            set(self.local_layer_ids) if self.local_layer_ids is not None else {i for i in range(count) if (i + 1) % 6}
        )
        return ["hybrid_sliding" if i in local else "hybrid" for i in range(count)]

    @derives("mlp_layer_types", "dense below dense_mlp_idx (0), sparse after")
    def default_mlp_kinds(self) -> list[str]:
        dense = min(self.dense_mlp_idx, self.num_hidden_layers)
        return ["dense"] * dense + ["sparse"] * (self.num_hidden_layers - dense)

    def widths(self) -> tuple[int, int]:
        """(dense MLP, expert): dense_intermediate_size and intermediate_size where a checkpoint gives the former."""
        if self.dense_intermediate_size is not None:
            return self.dense_intermediate_size, self.intermediate_size
        return self.intermediate_size, self.moe_intermediate_size

    def unused_fields(self) -> set[str]:
        unused = set() if self.layer_types is None else {"local_layer_ids"}
        if self.mlp_layer_types is not None:
            unused.add("dense_mlp_idx")
        if self.dense_intermediate_size is not None:
            unused.add("moe_intermediate_size")
        return unused

    def moe(self) -> MoeFfn:
        expert = self.widths()[1]
        moe = self.moe_ffn(
            self.n_routed_experts,
            self.num_experts_per_tok,
            expert,
            shared_width=expert if self.n_shared_experts else 0,
            num_shared_experts=self.n_shared_experts,
            shared_names=INKLING_SHARED,
        )
        return replace(moe, scored_shared=True, shared_stacked=True)

    def build_layer(self, index: int, window: int | None) -> Layer:
        hidden, kernel = self.hidden_size, self.conv_kernel_size
        sliding = self.kinds()[index] == "hybrid_sliding"
        heads = self.swa_num_attention_heads if sliding else self.num_attention_heads
        kv_heads = self.swa_num_key_value_heads if sliding else self.num_key_value_heads
        head_dim = self.swa_head_dim if sliding else self.head_dim
        reach = self.sliding_window_size if sliding else self.rel_extent
        norm = self.rms_norm(head_dim)
        attention = self.attention(
            self.sliding_window_size if sliding else None,
            num_heads=heads,
            num_kv_heads=kv_heads,
            qk_head_dim=head_dim,
            v_head_dim=head_dim,
            q_norm=norm,
            k_norm=norm,
        )
        kv = kv_heads * head_dim
        convs = (
            Parameter("attention", "sconv", "self_attn.k_sconv.conv1d.weight", (kv, 1, kernel), matmul=True),
            Parameter("attention", "sconv", "self_attn.v_sconv.conv1d.weight", (kv, 1, kernel), matmul=True),
            Parameter("other", "sconv", "attn_sconv.conv1d.weight", (hidden, 1, kernel), matmul=True),
            Parameter("other", "sconv", "mlp_sconv.conv1d.weight", (hidden, 1, kernel), matmul=True),
        )
        # The convolutions' windows: each keeps its last kernel − 1 inputs.
        windows = Mixer(kind="short_conv", projections=(), state_elements=(kernel - 1) * (2 * kv + 2 * hidden))
        relative = Parameter("attention", "relative_bias", "self_attn.rel_logits_proj.proj", (self.d_rel, reach))
        r_proj = Projection("r_proj", "self_attn.r_proj", hidden, heads * self.d_rel, component="attention")
        ffn: DenseFfn | MoeFfn
        if self.sparse(index):
            ffn = self.moe()
            scale = Parameter("ffn", "router", "mlp.gate.global_scale", (1,))
        else:
            ffn = self.gated_ffn(self.widths()[0])
            scale = Parameter("ffn", "global_scale", "mlp.global_scale", (1,))
        return self.layer(
            attention,
            ffn,
            mixer=windows,
            projections=(r_proj,),
            parameters=(*convs, relative, scale),
            other_flops=2 * heads * self.d_rel * reach,
        )

    def layer_windows(self) -> list[int | None]:
        return [self.sliding_window_size if kind == "hybrid_sliding" else None for kind in self.kinds()]

    def checkpoint_extras(self) -> tuple[CheckpointExtra, ...]:
        sparse = tuple(i for i in range(self.num_hidden_layers) if self.sparse(i))
        extras = self.rotary_extras()
        return extras + (correction_bias_extra(self.layer_name, sparse, self.n_routed_experts),) if sparse else extras

    def to_spec(self) -> ModelSpec:
        embed_norm = Extra("norm", "model.embed_tokens.embed_norm", Norm("rmsnorm", self.hidden_size))
        return replace(super().to_spec(), tie_word_embeddings=False, extras=(embed_norm,))
