"""gpt-oss: biased attention with per-head sinks, alternating 128-token windows, MoE with biased experts."""

from __future__ import annotations

from typing import Literal

from ..schema import ExpertCount, Flag, HeadCount, LayerCount, Name, PositionCount, Width, derives
from ..spec import Layer, names
from .base import DecoderConfig
from .blocks import periodic_window, windows_of_layer_types
from .registry import family

MXFP4_BLOCK = 32  # values that share one UE8M0 scale


@family(
    "gpt_oss",
    transformers="GptOssConfig",
    architecture="gpt-oss",
    model_class="GptOssForCausalLM",
    heads_divide_hidden=False,  # configuration_*.py floors hidden_size // num_attention_heads
    routing=("num_experts_per_tok", "num_local_experts"),
)
class GptOssConfig(DecoderConfig):
    """configuration_gpt_oss.py / modeling_gpt_oss.py.

    Experts are stored stacked and transposed: gate_up_proj [E, H, 2I] with a bias of 2I and
    down_proj [E, I, H] with a bias of H; the router is a Linear with bias. Windows from layer_types,
    by default on the even-indexed layers.
    """

    moe_names = names(router="mlp.router", experts="mlp.experts")
    expert_names = names(gate="gate_up_proj", up="gate_up_proj", down="down_proj", transposed=True, parameters=True)

    num_hidden_layers: LayerCount
    intermediate_size: Width
    tie_word_embeddings: Flag
    hidden_act: Name
    num_key_value_heads: HeadCount | None
    head_dim: Width | None
    max_position_embeddings: PositionCount
    sliding_window: Width | None
    layer_types: list[Literal["full_attention", "sliding_attention"]] | None
    num_local_experts: ExpertCount
    num_experts_per_tok: ExpertCount
    attention_bias: Flag

    def layer_windows(self) -> list[int | None]:
        if self.layer_types is not None:
            return windows_of_layer_types(self.layer_types, self.sliding_window)
        return [periodic_window(i, self.sliding_window, 2) for i in range(self.num_hidden_layers)]

    @derives("layer_types", "every second layer full, the others sliding")
    def window_kinds(self) -> list[str]:
        return super().window_kinds()

    def build_layer(self, index: int, window: int | None) -> Layer:
        moe = self.moe_ffn(
            self.num_local_experts,
            self.num_experts_per_tok,
            self.intermediate_size,
            router_bias=True,
            expert_bias=True,
        )
        return self.layer(self.attention(window, sinks=True), moe)

    def expert_weight_elements(self) -> int:
        """All experts' matrix elements (biases excluded): layers × experts × 3·H·I."""
        return self.num_hidden_layers * self.num_local_experts * 3 * self.hidden_size * self.intermediate_size

    def is_mxfp4(self) -> bool:
        return (self.quantization_config or {}).get("quant_method") == "mxfp4"

    def notes(self) -> list[str]:
        if not self.is_mxfp4():
            return []
        weights = self.expert_weight_elements()
        return [
            f"The checkpoint stores the {weights:,} expert weights in MXFP4: {weights // 2:,} bytes of "
            f"4-bit blocks (two values per byte, U8 *_blocks tensors) and {weights // MXFP4_BLOCK:,} UE8M0 "
            f"scales, one per {MXFP4_BLOCK} weights (U8 *_scales). They are counted here as the parameters "
            "they unpack to; everything else is BF16."
        ]
