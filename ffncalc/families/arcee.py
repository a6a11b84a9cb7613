"""Arcee's AFM (Llama's attention and norms around a plain up/down MLP, ReLU² by default) and AFMoE (Trinity:
gated attention with q/k norms, sliding and full layers, dense then MoE layers with shared experts)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from ..schema import (
    MAX_LAYERS,
    ExpertCount,
    ExpertCountOrZero,
    HeadCount,
    LayerCount,
    LayerIndex,
    Name,
    PositionCount,
    Width,
    derives,
)
from ..spec import DenseFfn, Layer, MoeFfn, Parameter, Projection, names
from .base import (
    AttentionBias,
    DecoderConfig,
    FfnWidth,
    HeadDim,
    HiddenAct,
    HiddenLayers,
    KvHeads,
    MlpBias,
    TiedEmbeddings,
)
from .blocks import windows_of_layer_types
from .registry import family


@family("arcee")
class ArceeConfig(HeadDim, KvHeads, AttentionBias, MlpBias, TiedEmbeddings, FfnWidth, HiddenLayers, DecoderConfig):
    """configuration_arcee.py / modular_arcee.py: LlamaConfig's fields and checks (hidden_size a multiple of
    the heads) with AFM's defaults; the MLP is plain, up and down with mlp_bias (NemotronMLP's layout)."""

    architecture = "Arcee"
    config_class = "ArceeConfig"
    default_model_class = "ArceeForCausalLM"

    hidden_size: Width = 2560
    intermediate_size: Width = 18432
    hidden_act: Name = "relu2"
    max_position_embeddings: PositionCount = 4096

    def build_layer(self, index: int, window: int | None) -> Layer:
        mlp = DenseFfn(self.hidden_size, self.intermediate_size, False, self.hidden_act, self.mlp_names, self.mlp_bias)
        return self.layer(self.attention(window), mlp)


AFMOE_MOE = names(router="mlp.router.gate", experts="mlp.experts.{e}")
AFMOE_SHARED = names(
    gate="mlp.shared_experts.gate_proj", up="mlp.shared_experts.up_proj", down="mlp.shared_experts.down_proj"
)
AFMOE_NORMS = ("input_layernorm", "post_attention_layernorm", "pre_mlp_layernorm", "post_mlp_layernorm")


@family("afmoe")
class AfmoeConfig(HiddenAct, KvHeads, AttentionBias, TiedEmbeddings, FfnWidth, HiddenLayers, DecoderConfig):
    """configuration_afmoe.py / modular_afmoe.py (Arcee's Trinity): Llama's attention (attention_bias on q, k, v, o)
    with an RMSNorm on each query and key head and an output gate, gate_proj (hidden → heads · head_dim, no bias),
    whose sigmoid scales the heads' output before o_proj; four RMSNorms a layer (before and after attention and the
    MLP). Layers in layer_types' sliding_attention (default: all but every global_attn_every_n_layers-th) attend
    within sliding_window. The first num_dense_layers have a gated MLP of intermediate_size; the others route
    num_experts experts of moe_intermediate_size (router.gate, no bias) beside a shared MLP of num_shared_experts ×
    moe_intermediate_size, and hold expert_bias [num_experts], a parameter that is not trained.

    transformers keeps the experts stacked and saves them one module per expert (conversion_mapping.py: afmoe is
    qwen2_moe's)."""

    architecture = "AFMoE"
    config_class = "AfmoeConfig"
    default_model_class = "AfmoeForCausalLM"
    heads_divide_hidden = False  # AfmoeConfig does not check hidden_size; the attention reads head_dim
    moe_names = AFMOE_MOE

    vocab_size: Width = 200192
    hidden_size: Width = 2048
    intermediate_size: Width = 6144
    moe_intermediate_size: Width = 1408
    num_hidden_layers: LayerCount = 32
    num_dense_layers: LayerIndex = 1
    num_attention_heads: HeadCount = 16
    head_dim: Width = 128
    max_position_embeddings: PositionCount = 16384
    num_experts: ExpertCount = 64
    num_experts_per_tok: ExpertCount = 6
    num_shared_experts: ExpertCountOrZero = 2
    global_attn_every_n_layers: LayerCount = 4
    sliding_window: Width = 1024
    layer_types: (
        Annotated[list[Literal["full_attention", "sliding_attention"]], Field(max_length=MAX_LAYERS)] | None
    ) = None
    routing_fields = ("num_experts_per_tok", "num_experts")

    @derives(
        "layer_types", "full_attention on every global_attn_every_n_layers-th layer, sliding_attention on the others"
    )
    def kinds(self) -> list[str]:
        if self.layer_types is not None:
            return list(self.layer_types)
        every = self.global_attn_every_n_layers
        return [
            "full_attention" if (i + 1) % every == 0 else "sliding_attention" for i in range(self.num_hidden_layers)
        ]

    def unused_fields(self) -> set[str]:
        unused = {"global_attn_every_n_layers"} if self.layer_types is not None else set()
        if self.num_dense_layers >= self.num_hidden_layers:
            unused |= {"num_experts", "num_experts_per_tok", "num_shared_experts", "moe_intermediate_size"}
        return unused if self.num_dense_layers else unused | {"intermediate_size"}

    def layer_windows(self) -> list[int | None]:
        return windows_of_layer_types(self.kinds(), self.sliding_window)

    def build_layer(self, index: int, window: int | None) -> Layer:
        heads_width = self.num_attention_heads * self.resolved_head_dim
        gate = Projection("gate_proj", "self_attn.gate_proj", self.hidden_size, heads_width, component="attention")
        norm = self.rms_norm()
        norms = tuple((name, norm) for name in AFMOE_NORMS)
        attention = self.attention(window, **self.per_head_norms())
        if index < self.num_dense_layers:
            return self.layer(attention, self.gated_ffn(), norms, projections=(gate,))
        return self.layer(attention, self.moe(), norms, projections=(gate,), parameters=(self.expert_bias(),))

    def moe(self) -> MoeFfn:
        shared = self.num_shared_experts * self.moe_intermediate_size
        return self.moe_ffn(
            self.num_experts,
            self.num_experts_per_tok,
            self.moe_intermediate_size,
            shared_width=shared,
            num_shared_experts=self.num_shared_experts,
            shared_names=AFMOE_SHARED,
        )

    def expert_bias(self) -> Parameter:
        return Parameter("ffn", "expert_bias", "mlp.expert_bias", (self.num_experts,))
