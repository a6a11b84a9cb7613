"""DeepSeek-V3 / R1 and Kimi-K2 (which declares the same architecture): MLA attention, dense-then-MoE stack."""

from __future__ import annotations

from ..schema import ExpertCount, ExpertCountOrZero, LayerCount, LayerIndex, Width
from ..spec import CheckpointExtra, Layer, Mla, MoeFfn
from .base import DecoderConfig, experts_check


class DeepseekV3Config(DecoderConfig):
    """configuration_deepseek_v3.py and DeepSeek's own modeling_deepseek.py.

    Layer i has an MoE FFN when i ≥ ``first_k_dense_replace`` and i % ``moe_layer_freq`` == 0
    (DeepSeek's rule; transformers checks only the first condition, the same for freq 1).
    The shared experts are one MLP of width n_shared_experts × moe_intermediate_size.
    """

    architecture = "DeepSeek-V3"
    q_lora_rank: Width | None = 1536
    kv_lora_rank: Width = 512
    qk_nope_head_dim: Width = 128
    qk_rope_head_dim: Width = 64
    v_head_dim: Width = 128
    n_routed_experts: ExpertCountOrZero = 256
    n_shared_experts: ExpertCountOrZero = 1
    num_experts_per_tok: ExpertCount = 8
    moe_intermediate_size: Width = 2048
    first_k_dense_replace: LayerIndex = 3
    moe_layer_freq: LayerCount = 1
    num_nextn_predict_layers: LayerIndex = 1

    _check_experts = experts_check("num_experts_per_tok", "n_routed_experts")

    def is_sparse(self, index: int) -> bool:
        return (
            self.n_routed_experts > 0
            and index >= self.first_k_dense_replace
            and index % self.moe_layer_freq == 0
        )

    def mla_attention(self, window: int | None):
        mla = Mla(
            q_lora_rank=self.q_lora_rank,
            kv_lora_rank=self.kv_lora_rank,
            qk_nope_head_dim=self.qk_nope_head_dim,
            qk_rope_head_dim=self.qk_rope_head_dim,
            v_head_dim=self.v_head_dim,
        )
        # attention_bias reaches only the two down-projections and o_proj in DeepSeek's code.
        return self.attention(
            window,
            num_kv_heads=self.num_attention_heads,
            qk_head_dim=self.qk_nope_head_dim + self.qk_rope_head_dim,
            v_head_dim=self.v_head_dim,
            mla=mla,
        )

    def moe(self) -> MoeFfn:
        width = self.moe_intermediate_size
        return MoeFfn(
            hidden_size=self.hidden_size,
            num_experts=self.n_routed_experts,
            experts_per_token=self.num_experts_per_tok,
            expert=self.gated_ffn(width, bias=False),
            shared=self.gated_ffn(width * self.n_shared_experts, bias=False) if self.n_shared_experts else None,
            num_shared_experts=self.n_shared_experts,
        )

    def build_layer(self, index: int, window: int | None) -> Layer:
        ffn = self.moe() if self.is_sparse(index) else self.gated_ffn(bias=False)
        return Layer(attention=self.mla_attention(window), ffn=ffn, norms=self.pre_norms())

    def checkpoint_extras(self) -> tuple[CheckpointExtra, ...]:
        extras = []
        sparse_layers = sum(self.is_sparse(i) for i in range(self.num_hidden_layers))
        if sparse_layers:
            extras.append(
                CheckpointExtra(
                    name="router e_score_correction_bias",
                    elements=sparse_layers * self.n_routed_experts,
                    reason=f"{sparse_layers} MoE layers × {self.n_routed_experts} experts; a buffer in transformers' model",
                )
            )
        if self.num_nextn_predict_layers:
            extras.append(self.mtp_extra())
        return tuple(extras)

    def mtp_extra(self) -> CheckpointExtra:
        """Multi-token-prediction modules: stored after the last layer, not part of the causal LM.

        Each holds a full MoE decoder layer, two RMSNorms (enorm, hnorm), eh_proj (2H → H),
        a final RMSNorm, and its own copies of embed_tokens and the output head.
        """
        hidden = self.hidden_size
        layer = Layer(attention=self.mla_attention(None), ffn=self.moe(), norms=self.pre_norms())
        per_module_outside_layer = (
            2 * hidden  # enorm, hnorm
            + 2 * hidden * hidden  # eh_proj
            + hidden  # shared_head.norm
            + 2 * self.vocab_size * hidden  # embed_tokens, shared_head.head
        )
        count = self.num_nextn_predict_layers
        return CheckpointExtra(
            name="multi-token-prediction layers",
            elements=count * per_module_outside_layer,
            layers=(layer,) * count,
            reason=(
                f"num_nextn_predict_layers = {count}: each a full MoE layer plus enorm, hnorm, eh_proj, "
                "a norm and copies of embed_tokens and the head; used for speculative decoding, not by the causal LM"
            ),
        )

    def notes(self) -> tuple[str, ...]:
        method = (self.quantization_config or {}).get("quant_method")
        if method == "fp8":
            return (
                "The published checkpoint stores linear weights in FP8 (e4m3) with a float32 scale per "
                "128×128 block (weight_scale_inv); the scales are not parameters and are not counted.",
            )
        return ()

    def rotary_extras(self):
        return ()
