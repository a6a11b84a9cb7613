"""gpt-oss: biased attention with per-head sinks, alternating 128-token windows, MoE with biased experts."""

from __future__ import annotations

from ..schema import ExpertCount, Flag, Width
from ..spec import CheckpointExtra, DenseFfn, Layer, MoeFfn
from .base import DecoderConfig, experts_check

MXFP4_BLOCK = 32  # values that share one UE8M0 scale


class GptOssConfig(DecoderConfig):
    """configuration_gpt_oss.py / modeling_gpt_oss.py.

    Experts store gate_up_proj (H × 2I) with a bias of 2I and down_proj (I × H) with a bias
    of H; the router is a Linear with bias. Even layers slide unless ``layer_types`` says otherwise.
    """

    architecture = "gpt-oss"
    attention_bias: Flag = True
    head_dim: Width | None = 64
    sliding_window: Width | None = 128
    num_local_experts: ExpertCount = 128
    num_experts_per_tok: ExpertCount = 4

    _check_experts = experts_check("num_experts_per_tok", "num_local_experts")

    def default_window(self, index: int) -> int | None:
        return self.sliding_window if (index + 1) % 2 else None

    def build_layer(self, index: int, window: int | None) -> Layer:
        moe = MoeFfn(
            hidden_size=self.hidden_size,
            num_experts=self.num_local_experts,
            experts_per_token=self.num_experts_per_tok,
            expert=DenseFfn(self.hidden_size, self.intermediate_size, gated=True, activation=self.hidden_act, bias=True),
            router_bias=True,
        )
        return Layer(attention=self.attention(window, sinks=True), ffn=moe, norms=self.pre_norms())

    def expert_weight_elements(self) -> int:
        """All experts' matrix elements (biases excluded): layers × experts × 3·H·I."""
        return self.num_hidden_layers * self.num_local_experts * 3 * self.hidden_size * self.intermediate_size

    def is_mxfp4(self) -> bool:
        return (self.quantization_config or {}).get("quant_method") == "mxfp4"

    def checkpoint_extras(self) -> tuple[CheckpointExtra, ...]:
        extras = list(super().checkpoint_extras())
        if self.is_mxfp4():
            extras.append(
                CheckpointExtra(
                    name="MXFP4 scales",
                    elements=self.expert_weight_elements() // MXFP4_BLOCK,
                    reason=f"one UE8M0 scale per {MXFP4_BLOCK} expert weights (U8 tensors *_scales)",
                )
            )
        return tuple(extras)

    def notes(self) -> tuple[str, ...]:
        if not self.is_mxfp4():
            return ()
        weights = self.expert_weight_elements()
        return (
            f"The checkpoint stores the {weights:,} expert weights in MXFP4: {weights // 2:,} bytes of "
            "4-bit blocks (two values per byte, U8 *_blocks tensors). They are counted here as the "
            "parameters they unpack to; everything else is BF16.",
        )
