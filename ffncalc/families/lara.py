"""Translated's Lara Mini: Qwen3.5's hybrid of Gated DeltaNet and attention layers (Qwen3's attention, sliding or full
by layer_types) with an MoE in every layer beside an ungated shared expert."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from ..schema import MAX_LAYERS, ExpertCount, Flag, HeadCount, LayerCount, Name, PositionCount, Width, derives
from ..spec import Layer, MoeFfn, names
from .base import DecoderConfig
from .blocks import entries_check, heads_divide, windows_of_layer_types
from .gemma import STACKED_EXPERTS
from .mixers import gated_deltanet
from .qwen import SHARED_EXPERT
from .registry import family

# The checkpoints fuse the Gated DeltaNet's input projections into in_proj, rows [q | k | v | z | b | a], and name its
# norm out_norm (conversion_mapping.py's lara_mini, reverted on save); the experts stay stacked.
LARA_DELTANET = names(
    in_proj_qkv="linear_attn.in_proj",
    in_proj_z="linear_attn.in_proj",
    in_proj_b="linear_attn.in_proj",
    in_proj_a="linear_attn.in_proj",
    conv1d="linear_attn.conv1d",
    dt_bias="linear_attn.dt_bias",
    A_log="linear_attn.A_log",
    norm="linear_attn.out_norm",
    out_proj="linear_attn.out_proj",
)
LARA_PATTERN = ("linear_attention", "sliding_attention", "linear_attention", "full_attention", "sliding_attention")


@family(
    "lara_mini",
    transformers="LaraMiniConfig",
    architecture="Lara-Mini",
    model_class="LaraMiniForCausalLM",
    heads_divide_hidden=False,  # head_dim is a field; validate_architecture checks only the groupings
    routing=("num_experts_per_tok", "num_experts"),
    read_beyond={
        "intermediate_size": "no field of LaraMiniConfig: a config's intermediate_size is ignored, as transformers ignores it"
    },
)
class LaraMiniConfig(DecoderConfig):
    """configuration_lara_mini.py / modular_lara_mini.py: layer_types (default the released period of five: linear,
    sliding, linear, full, sliding) picks per layer a Gated DeltaNet (Qwen3.5's: linear_num_key_heads query and key
    heads of linear_key_head_dim, linear_num_value_heads value heads of linear_value_head_dim, a depthwise convolution
    of linear_conv_kernel_dim, a gated RMSNorm over each value head) or Qwen3's attention (q, k, v, o with
    attention_bias, an RMSNorm over each query and key head of head_dim; sliding_attention layers within
    sliding_window, full_attention layers without rotary positions). Every layer's FFN is LaraMiniSparseMoeBlock:
    a softmax router (no bias), num_experts stacked experts of moe_intermediate_size, and a shared expert of
    shared_expert_intermediate_size added without a gate. LaraMiniConfig has no intermediate_size (every layer is an
    MoE): a config's intermediate_size is ignored, as transformers ignores it."""

    moe_names = names(router="mlp.gate", experts="mlp.experts")
    expert_names = STACKED_EXPERTS

    attention_bias: Flag
    hidden_act: Name
    num_hidden_layers: LayerCount
    num_key_value_heads: HeadCount
    head_dim: Width
    max_position_embeddings: PositionCount
    tie_word_embeddings: bool
    sliding_window: Width
    linear_conv_kernel_dim: Width
    linear_key_head_dim: Width
    linear_value_head_dim: Width
    linear_num_key_heads: HeadCount
    linear_num_value_heads: HeadCount
    moe_intermediate_size: Width
    shared_expert_intermediate_size: Width
    num_experts_per_tok: ExpertCount
    num_experts: ExpertCount
    layer_types: (
        Annotated[
            list[Literal["linear_attention", "full_attention", "sliding_attention"]], Field(max_length=MAX_LAYERS)
        ]
        | None
    )

    _check_layer_types = entries_check("layer_types", exact=True)  # validate_layer_type: one per layer
    _check_deltanet_heads = heads_divide("linear_num_value_heads", "linear_num_key_heads")

    @derives("layer_types", "linear, sliding, linear, full, sliding, repeated")
    def kinds(self) -> list[str]:
        if self.layer_types is not None:
            return list(self.layer_types)
        return [LARA_PATTERN[i % len(LARA_PATTERN)] for i in range(self.num_hidden_layers)]

    def unused_fields(self) -> set[str]:
        kinds = set(self.kinds())
        unused = {"intermediate_size"}
        if "sliding_attention" not in kinds:
            unused.add("sliding_window")
        if "linear_attention" not in kinds:
            unused |= {name for name in type(self).model_fields if name.startswith("linear_")}
        return unused

    def layer_windows(self) -> list[int | None]:
        return windows_of_layer_types(self.kinds(), self.sliding_window)

    def moe(self) -> MoeFfn:
        return self.moe_ffn(
            self.num_experts,
            self.num_experts_per_tok,
            self.moe_intermediate_size,
            shared_width=self.shared_expert_intermediate_size,
            shared_names=SHARED_EXPERT,
        )

    def build_layer(self, index: int, window: int | None) -> Layer:
        if self.kinds()[index] == "linear_attention":
            mixer = gated_deltanet(
                self.hidden_size,
                self.linear_num_key_heads,
                self.linear_num_value_heads,
                self.linear_key_head_dim,
                self.linear_value_head_dim,
                self.linear_conv_kernel_dim,
                LARA_DELTANET,
            )
            return self.layer(None, self.moe(), mixer=mixer)
        return self.layer(self.attention(window, **self.per_head_norms()), self.moe())
