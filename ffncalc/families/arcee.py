"""Arcee's AFM (Llama's attention and norms around a plain up/down MLP, ReLU² by default) and AFMoE (Trinity:
gated attention with q/k norms, sliding and full layers, dense then MoE layers with shared experts)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from ..schema import (
    MAX_LAYERS,
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
from ..spec import DenseFfn, Layer, MoeFfn, Parameter, Projection, names
from .base import (
    DecoderConfig,
)
from .blocks import windows_of_layer_types
from .registry import family


@family("arcee", transformers="ArceeConfig", architecture="Arcee", model_class="ArceeForCausalLM")
class ArceeConfig(DecoderConfig):
    """configuration_arcee.py / modular_arcee.py: LlamaConfig's fields and checks (hidden_size a multiple of
    the heads) with AFM's defaults; the MLP is plain, up and down with mlp_bias (NemotronMLP's layout)."""

    num_hidden_layers: LayerCount
    intermediate_size: Width
    tie_word_embeddings: Flag
    mlp_bias: Flag
    attention_bias: Flag
    num_key_value_heads: HeadCount | None
    head_dim: Width | None
    hidden_act: Name
    max_position_embeddings: PositionCount

    def build_layer(self, index: int, window: int | None) -> Layer:
        mlp = DenseFfn(self.hidden_size, self.intermediate_size, False, self.hidden_act, self.mlp_names, self.mlp_bias)
        return self.layer(self.attention(window), mlp)


AFMOE_MOE = names(router="mlp.router.gate", experts="mlp.experts.{e}")
AFMOE_SHARED = names(
    gate="mlp.shared_experts.gate_proj", up="mlp.shared_experts.up_proj", down="mlp.shared_experts.down_proj"
)
AFMOE_NORMS = ("input_layernorm", "post_attention_layernorm", "pre_mlp_layernorm", "post_mlp_layernorm")


@family(
    "afmoe",
    transformers="AfmoeConfig",
    architecture="AFMoE",
    model_class="AfmoeForCausalLM",
    heads_divide_hidden=False,  # AfmoeConfig does not check hidden_size; the attention reads head_dim
    routing=("num_experts_per_tok", "num_experts"),
)
class AfmoeConfig(DecoderConfig):
    """configuration_afmoe.py / modular_afmoe.py (Arcee's Trinity): Llama's attention (attention_bias on q, k, v, o)
    with an RMSNorm on each query and key head and an output gate, gate_proj (hidden → heads · head_dim, no bias),
    whose sigmoid scales the heads' output before o_proj; four RMSNorms a layer (before and after attention and the
    MLP). Layers in layer_types' sliding_attention (default: all but every global_attn_every_n_layers-th) attend
    within sliding_window. The first num_dense_layers have a gated MLP of intermediate_size; the others route
    num_experts experts of moe_intermediate_size (router.gate, no bias) beside a shared MLP of num_shared_experts ×
    moe_intermediate_size, and hold expert_bias [num_experts], a parameter that is not trained.

    transformers keeps the experts stacked and saves them one module per expert (conversion_mapping.py: afmoe is
    qwen2_moe's)."""

    moe_names = AFMOE_MOE

    num_hidden_layers: LayerCount
    intermediate_size: Width
    tie_word_embeddings: Flag
    attention_bias: Flag
    num_key_value_heads: HeadCount | None
    hidden_act: Name
    moe_intermediate_size: Width
    num_dense_layers: LayerIndex
    head_dim: Width
    max_position_embeddings: PositionCount
    num_experts: ExpertCount
    num_experts_per_tok: ExpertCount
    num_shared_experts: ExpertCountOrZero
    global_attn_every_n_layers: LayerCount
    sliding_window: Width
    layer_types: Annotated[list[Literal["full_attention", "sliding_attention"]], Field(max_length=MAX_LAYERS)] | None

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
