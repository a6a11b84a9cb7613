"""MiniMax: MiniMax-01 (lightning attention, a linear attention, interleaved with softmax attention; every
FFN a Mixtral-style MoE) and MiniMax-M2 (softmax attention with q/k RMSNorms across heads, a sigmoid router
with a correction bias)."""

from __future__ import annotations

from typing import Literal

from ..schema import ExpertCount, Flag, HeadCount, LayerCount, Name, PositionCount, Width, derives
from ..spec import CheckpointExtra, Layer, Mixer, Norm, StoredTensor, names
from .base import DecoderConfig
from .mixers import lightning_attention
from .registry import family

MINIMAX_MOE = names(router="block_sparse_moe.gate", experts="block_sparse_moe.experts.{e}")
MINIMAX_EXPERT = names(gate="w1", up="w3", down="w2")
LIGHTNING_ATTENTION = names(
    qkv_proj="self_attn.qkv_proj",
    output_gate="self_attn.output_gate",
    out_proj="self_attn.out_proj",
    norm="self_attn.norm",
)


class _MiniMaxMoe:
    """Every layer's FFN: num_local_experts gated experts (w1 gate, w3 up, w2 down), num_experts_per_tok per token."""

    num_local_experts: int
    num_experts_per_tok: int
    intermediate_size: int

    def moe(self):
        return self.moe_ffn(self.num_local_experts, self.num_experts_per_tok, self.intermediate_size)  # type: ignore[attr-defined]


@family(
    "minimax",
    transformers="MiniMaxConfig",
    architecture="MiniMax-01",
    model_class="MiniMaxForCausalLM",
    heads_divide_hidden=False,  # MiniMaxConfig has no validate_architecture
    routing=("num_experts_per_tok", "num_local_experts"),
)
class MiniMaxConfig(_MiniMaxMoe, DecoderConfig):
    """configuration_minimax.py / modeling_minimax.py (MiniMax-Text-01): layer_types (default: even layers full
    attention, odd layers linear) picks softmax attention (windowed by sliding_window when set) or lightning
    attention; every FFN a block-sparse MoE as Mixtral's.

    A lightning layer holds four persistent buffers of its fixed decay (slope_rate, and query_decay,
    key_decay, diagonal_decay over block_size positions) that transformers saves with the weights.
    """

    moe_names = MINIMAX_MOE
    expert_names = MINIMAX_EXPERT

    num_hidden_layers: LayerCount
    intermediate_size: Width
    tie_word_embeddings: Flag
    hidden_act: Name
    head_dim: Width | None
    num_key_value_heads: HeadCount | None
    max_position_embeddings: PositionCount
    sliding_window: Width | None
    num_experts_per_tok: ExpertCount
    num_local_experts: ExpertCount
    layer_types: list[Literal["full_attention", "linear_attention"]] | None
    block_size: Width

    @derives("layer_types", "even layers full_attention, odd layers linear_attention")
    def kinds(self) -> list[str]:
        if self.layer_types is not None:
            return list(self.layer_types)
        return ["full_attention" if (i + 1) % 2 else "linear_attention" for i in range(self.num_hidden_layers)]

    def linear_layers(self) -> tuple[int, ...]:
        return tuple(i for i, kind in enumerate(self.kinds()) if kind == "linear_attention")

    def lightning(self) -> Mixer:
        # Its weights are stored in self_attn, where transformers' module tree puts them: they count as attention.
        heads, head_dim = self.num_attention_heads, self.resolved_head_dim
        return lightning_attention(self.hidden_size, heads, head_dim, LIGHTNING_ATTENTION, "attention")

    def build_layers(self) -> tuple[Layer, ...]:
        full = self.layer(self.attention(self.sliding_window), self.moe())
        linear = self.layer(None, self.moe(), mixer=self.lightning())
        return tuple(linear if kind == "linear_attention" else full for kind in self.kinds())

    def checkpoint_extras(self) -> tuple[CheckpointExtra, ...]:
        extras = list(super().checkpoint_extras())
        linear = self.linear_layers()
        if linear:
            heads, block = self.num_attention_heads, self.block_size
            name = self.layer_name + ".self_attn."
            extras.append(
                CheckpointExtra(
                    name="lightning attention decay buffers",
                    reason=(
                        f"{len(linear)} linear-attention layers × (slope_rate per head, query and key decay over "
                        f"{block} positions, the diagonal decay over {block}²); fixed by the head index, not trained"
                    ),
                    tensors=(
                        StoredTensor(name + "slope_rate", (heads, 1, 1)),
                        StoredTensor(name + "query_decay", (heads, block, 1)),
                        StoredTensor(name + "key_decay", (heads, block, 1)),
                        StoredTensor(name + "diagonal_decay", (1, heads, block, block)),
                    ),
                    per_layer=linear,
                    buffer=True,
                )
            )
        return tuple(extras)


@family(
    "minimax_m2",
    transformers="MiniMaxM2Config",
    architecture="MiniMax-M2",
    model_class="MiniMaxM2ForCausalLM",
    heads_divide_hidden=False,
    routing=("num_experts_per_tok", "num_local_experts"),
)
class MiniMaxM2Config(_MiniMaxMoe, DecoderConfig):
    """configuration_minimax_m2.py / modeling_minimax_m2.py (MiniMax-M2, M2.5, M2.7): softmax attention in
    every layer, its q and k RMSNorms across all heads (widths heads · head_dim and kv_heads · head_dim);
    every FFN an MoE of intermediate_size-wide experts with a sigmoid router whose correction bias
    (e_score_correction_bias) is a persistent buffer, saved with the weights.

    The published configs also name multi-token-prediction modules (use_mtp, num_mtp_modules,
    mtp_transformer_layers), keys transformers does not read and whose checkpoint layout it does not give.
    """

    moe_names = MINIMAX_MOE
    expert_names = MINIMAX_EXPERT

    num_hidden_layers: LayerCount
    intermediate_size: Width
    tie_word_embeddings: Flag
    hidden_act: Name
    num_key_value_heads: HeadCount
    head_dim: Width
    max_position_embeddings: PositionCount
    num_experts_per_tok: ExpertCount
    num_local_experts: ExpertCount

    def build_layer(self, index: int, window: int | None) -> Layer:
        heads, kv_heads, head_dim = self.num_attention_heads, self.kv_heads, self.resolved_head_dim
        norms = {"q_norm": Norm("rmsnorm", heads * head_dim), "k_norm": Norm("rmsnorm", kv_heads * head_dim)}
        return self.layer(self.attention(window, **norms), self.moe())

    def checkpoint_extras(self) -> tuple[CheckpointExtra, ...]:
        experts = self.num_local_experts
        bias = CheckpointExtra(
            name="router e_score_correction_bias",
            reason=f"{self.num_hidden_layers} MoE layers × {experts} experts; a buffer set by load balancing, not trained",
            tensors=(StoredTensor(self.layer_name + ".block_sparse_moe.e_score_correction_bias", (experts,)),),
            per_layer=tuple(range(self.num_hidden_layers)),
            buffer=True,
        )
        return super().checkpoint_extras() + (bias,)

    def notes(self) -> list[str]:
        if (self.quantization_config or {}).get("quant_method") == "fp8":
            return [
                "The published checkpoint stores linear weights in FP8 (e4m3) with a float32 scale per 128×128 "
                "block (weight_scale_inv); the scales are not parameters and are not counted."
            ]
        return []
