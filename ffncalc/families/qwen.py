"""Qwen2 (q/k/v biases), Qwen3 (per-head q/k norms) and Qwen3-MoE (sparse layers by step and list)."""

from __future__ import annotations

from pydantic import Field

from ..schema import ExpertCount, ExpertCountOrZero, Flag, LayerCount, LayerIndex, Width, WidthOrZero
from ..spec import Layer, MoeFfn
from .base import DecoderConfig, experts_check


class QwenWindowRule(DecoderConfig):
    """Qwen's sliding window: off unless ``use_sliding_window``, then on for layers ≥ ``max_window_layers``."""

    sliding_window: Width | None = 4096
    use_sliding_window: Flag = False
    max_window_layers: LayerIndex = 28

    def default_window(self, index: int) -> int | None:
        if self.use_sliding_window and index >= self.max_window_layers:
            return self.sliding_window
        return None

    def layer_windows(self) -> list[int | None]:
        # transformers drops sliding_window entirely when use_sliding_window is false,
        # so layer_types cannot switch windows on by themselves.
        if not self.use_sliding_window:
            return [None] * self.num_hidden_layers
        return super().layer_windows()


class Qwen2Config(QwenWindowRule):
    """configuration_qwen2.py / modeling_qwen2.py: q, k and v carry biases, o does not."""

    architecture = "Qwen2"

    def build_layer(self, index: int, window: int | None) -> Layer:
        attention = self.attention(window, q_bias=True, k_bias=True, v_bias=True, o_bias=False)
        return Layer(attention=attention, ffn=self.gated_ffn(bias=False), norms=self.pre_norms())


class Qwen3Config(QwenWindowRule):
    """configuration_qwen3.py: head_dim defaults to 128; RMSNorm on each query and key head."""

    architecture = "Qwen3"
    head_dim: Width | None = 128

    def qwen3_attention(self, window: int | None):
        return self.attention(window, **self.per_head_norms())

    def build_layer(self, index: int, window: int | None) -> Layer:
        return Layer(attention=self.qwen3_attention(window), ffn=self.gated_ffn(bias=False), norms=self.pre_norms())


class QwenSparseLayers(DecoderConfig):
    """The Qwen MoE rule (Qwen2-MoE, Qwen3-MoE, Qwen3-Next): layer i is sparse unless listed in
    ``mlp_only_layers``, when (i + 1) is a multiple of ``decoder_sparse_step``; with a
    ``shared_expert_intermediate_size`` it also has one shared expert behind a sigmoid gate."""

    num_experts: ExpertCountOrZero = 128
    num_experts_per_tok: ExpertCount = 8
    moe_intermediate_size: Width = 768
    shared_expert_intermediate_size: WidthOrZero | None = None  # 0 or None: no shared expert
    decoder_sparse_step: LayerCount = 1
    mlp_only_layers: list[LayerIndex] = Field(default_factory=list)
    _check_experts = experts_check("num_experts_per_tok", "num_experts")

    def is_sparse(self, index: int) -> bool:
        return (
            index not in self.mlp_only_layers
            and self.num_experts > 0
            and (index + 1) % self.decoder_sparse_step == 0
        )

    def shared_width(self) -> int | None:
        return self.shared_expert_intermediate_size

    def qwen_ffn(self, index: int):
        """The layer's FFN: MoE (with the gated shared expert, if any) or the dense intermediate_size MLP."""
        if not self.is_sparse(index):
            return self.gated_ffn(bias=False)
        shared = self.shared_width()
        return MoeFfn(
            self.hidden_size,
            self.num_experts,
            self.num_experts_per_tok,
            self.gated_ffn(self.moe_intermediate_size, bias=False),
            shared=self.gated_ffn(shared, bias=False) if shared else None,
            num_shared_experts=1 if shared else 0,
            shared_expert_gate=bool(shared),
        )


class Qwen3MoeConfig(QwenSparseLayers, Qwen3Config):
    """configuration_qwen3_moe.py: Qwen3 attention; Qwen's sparse-layer rule; no shared expert."""

    architecture = "Qwen3-MoE"
    head_dim: Width | None = None

    def shared_width(self) -> None:
        return None  # modeling_qwen3_moe has no shared expert, whatever the config says (Qwen3-Coder: 0)

    def build_layer(self, index: int, window: int | None) -> Layer:
        return Layer(attention=self.qwen3_attention(window), ffn=self.qwen_ffn(index), norms=self.pre_norms())


class Qwen2MoeConfig(QwenSparseLayers, QwenWindowRule):
    """configuration_qwen2_moe.py: Qwen2 attention (q/k/v biases from qkv_bias); Qwen's sparse-layer
    rule with one gated shared expert."""

    architecture = "Qwen2-MoE"
    qkv_bias: Flag = True
    num_experts: ExpertCountOrZero = 60
    num_experts_per_tok: ExpertCount = 4
    moe_intermediate_size: Width = 1408
    shared_expert_intermediate_size: Width | None = 5632

    def build_layer(self, index: int, window: int | None) -> Layer:
        bias = self.qkv_bias
        attention = self.attention(window, q_bias=bias, k_bias=bias, v_bias=bias, o_bias=False)
        return Layer(attention, self.qwen_ffn(index), self.pre_norms())
