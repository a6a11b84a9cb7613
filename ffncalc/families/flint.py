"""Recursive's Flint: Qwen3-MoE's attention with a sink per head, sliding and full layers, and an MoE of sigmoid-routed
experts beside an ungated shared expert."""

from __future__ import annotations

from typing import Literal

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
from ..spec import Layer, names
from .base import DecoderConfig
from .blocks import is_sparse, windows_of_layer_types
from .qwen import QWEN_MOE, SHARED_EXPERT
from .registry import family

# Its checkpoints keep each head's sink as softmax_offset (conversion_mapping.py's flint renames it to sinks).
FLINT_ATTENTION = names(
    q="self_attn.q_proj",
    k="self_attn.k_proj",
    v="self_attn.v_proj",
    o="self_attn.o_proj",
    q_norm="self_attn.q_norm",
    k_norm="self_attn.k_norm",
    sinks="self_attn.softmax_offset",
)


@family(
    "flint",
    transformers="FlintConfig",
    architecture="Flint",
    model_class="FlintForCausalLM",
    heads_divide_hidden=False,  # head_dim is a field; nothing checks hidden_size against the heads
    routing=("num_experts_per_tok", "num_experts"),
)
class FlintConfig(DecoderConfig):
    """configuration_flint.py / modular_flint.py: Qwen3MoeAttention (q, k, v and o biased by attention_bias, an
    RMSNorm over each query and key head) with a learned sink per head; layers attend within sliding_window or to
    the whole context as layer_types says (default: full on the first two layers, every i % 4 == 1 and the last).
    Layer i is an MoE unless it is in mlp_only_layers (default [0, 1]), when there are experts and (i + 1) is a
    multiple of decoder_sparse_step: routed experts of moe_intermediate_size and a shared expert of
    shared_expert_intermediate_size, added without a gate (FlintSparseMoeBlock)."""

    attention_names = FLINT_ATTENTION
    moe_names = QWEN_MOE

    num_hidden_layers: LayerCount
    intermediate_size: Width
    tie_word_embeddings: Flag
    attention_bias: Flag
    hidden_act: Name
    num_key_value_heads: HeadCount
    head_dim: Width
    max_position_embeddings: PositionCount
    sliding_window: Width
    decoder_sparse_step: LayerCount
    moe_intermediate_size: Width
    shared_expert_intermediate_size: Width
    num_experts_per_tok: ExpertCount
    num_experts: ExpertCountOrZero
    mlp_only_layers: list[LayerIndex] | None
    layer_types: list[Literal["full_attention", "sliding_attention"]] | None

    @derives("layer_types", "full_attention where i < 2, i % 4 == 1 or i is the last layer, else sliding_attention")
    def attention_kinds(self) -> list[str]:
        """layer_types, or FlintConfig.__post_init__'s default."""
        if self.layer_types is not None:
            return list(self.layer_types)
        last = self.num_hidden_layers - 1
        return [
            "full_attention" if i < 2 or i % 4 == 1 or i == last else "sliding_attention"
            for i in range(self.num_hidden_layers)
        ]

    @derives("mlp_only_layers", "[0, 1]")
    def dense_layers(self) -> list[int]:
        return [0, 1] if self.mlp_only_layers is None else list(self.mlp_only_layers)

    def layer_windows(self) -> list[int | None]:
        return windows_of_layer_types(self.attention_kinds(), self.sliding_window)

    def sparse(self, index: int) -> bool:
        step = self.decoder_sparse_step
        return self.num_experts > 0 and is_sparse(index, every=step, phase=step - 1, exclude=self.dense_layers())

    def build_layer(self, index: int, window: int | None) -> Layer:
        attention = self.attention(window, sinks=True, **self.per_head_norms())
        if not self.sparse(index):
            return self.layer(attention, self.gated_ffn())
        moe = self.moe_ffn(
            self.num_experts,
            self.num_experts_per_tok,
            self.moe_intermediate_size,
            shared_width=self.shared_expert_intermediate_size,
            shared_names=SHARED_EXPERT,
        )
        return self.layer(attention, moe)
