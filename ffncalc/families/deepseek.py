"""DeepSeek-V2 and V3 (and R1, Kimi-K2, which declare V3's architecture): MLA attention, a dense-then-MoE stack."""

from __future__ import annotations

from typing import ClassVar

from pydantic import AliasChoices, Field

from ..schema import ExpertCount, ExpertCountOrZero, HeadCount, LayerCount, LayerIndex, PositionCount, Width
from ..spec import Attention, CheckpointExtra, Layer, Mla, StoredTensor, names
from .base import DecoderConfig, experts_check
from .blocks import MLA_ATTENTION, is_sparse, mtp_extra

DEEPSEEK_MOE = names(router="mlp.gate", experts="mlp.experts.{e}")
SHARED_EXPERTS = names(gate="mlp.shared_experts.gate_proj", up="mlp.shared_experts.up_proj", down="mlp.shared_experts.down_proj")


class DeepseekV3Config(DecoderConfig):
    """configuration_deepseek_v3.py / modeling_deepseek_v3.py.

    Layer i has an MoE FFN when i ≥ ``first_k_dense_replace`` (transformers' rule; DeepSeek's own
    code also asks i % moe_layer_freq == 0, the same for its published freq of 1). The shared
    experts are one MLP of width n_shared_experts × moe_intermediate_size. The router's
    e_score_correction_bias is a persistent buffer, saved with the weights.
    """

    architecture = "DeepSeek-V3"
    config_class = "DeepseekV3Config"
    default_model_class = "DeepseekV3ForCausalLM"
    heads_divide_hidden = False  # configuration_*.py floors hidden_size // num_attention_heads
    derived_defaults = {"num_key_value_heads": "num_attention_heads"}
    attention_names = MLA_ATTENTION
    moe_names = DEEPSEEK_MOE

    vocab_size: Width = 129280
    hidden_size: Width = 7168
    intermediate_size: Width = 18432
    moe_intermediate_size: Width = 2048
    num_hidden_layers: LayerCount = 61
    num_attention_heads: HeadCount = 128
    num_key_value_heads: HeadCount | None = 128
    n_shared_experts: ExpertCountOrZero = 1
    n_routed_experts: ExpertCountOrZero = Field(256, validation_alias=AliasChoices("n_routed_experts", "num_local_experts"))
    kv_lora_rank: Width = 512
    q_lora_rank: Width | None = 1536
    qk_rope_head_dim: Width = 64
    v_head_dim: Width = 128
    qk_nope_head_dim: Width = 128
    num_experts_per_tok: ExpertCount = 8
    first_k_dense_replace: LayerIndex = 3
    max_position_embeddings: PositionCount = 4096
    num_nextn_predict_layers: LayerIndex = Field(1, validation_alias=AliasChoices("num_nextn_predict_layers", "num_mtp_layers"))
    head_dim: ClassVar[None] = None  # MLA's widths come from the fields above
    mlp_bias: ClassVar[bool] = False
    _check_experts = experts_check("num_experts_per_tok", "n_routed_experts")

    def sparse(self, index: int) -> bool:
        return self.n_routed_experts > 0 and is_sparse(index, first=self.first_k_dense_replace)

    def mla_attention(self, window: int | None) -> Attention:
        mla = Mla(
            q_lora_rank=self.q_lora_rank,
            kv_lora_rank=self.kv_lora_rank,
            qk_nope_head_dim=self.qk_nope_head_dim,
            qk_rope_head_dim=self.qk_rope_head_dim,
            v_head_dim=self.v_head_dim,
        )
        # attention_bias reaches q_a, kv_a and o_proj only.
        return self.attention(
            window,
            num_kv_heads=self.num_attention_heads,
            qk_head_dim=self.qk_nope_head_dim + self.qk_rope_head_dim,
            v_head_dim=self.v_head_dim,
            v_bias=False,
            mla=mla,
        )

    def moe(self):
        width = self.moe_intermediate_size
        return self.moe_ffn(
            self.n_routed_experts,
            self.num_experts_per_tok or 0,
            width,
            shared_width=width * self.n_shared_experts,
            num_shared_experts=self.n_shared_experts,
            shared_names=SHARED_EXPERTS,
        )

    def build_layers(self) -> tuple[Layer, ...]:
        dense = self.layer(self.mla_attention(None), self.gated_ffn())
        sparse = self.layer(self.mla_attention(None), self.moe()) if self.n_routed_experts else dense
        return tuple(sparse if self.sparse(i) else dense for i in range(self.num_hidden_layers))

    def checkpoint_extras(self) -> tuple[CheckpointExtra, ...]:
        extras = list(super().checkpoint_extras())
        sparse = tuple(i for i in range(self.num_hidden_layers) if self.sparse(i))
        if sparse:
            extras.append(self.correction_bias(sparse))
        if self.num_nextn_predict_layers:
            extras.append(self.mtp())
        return tuple(extras)

    def correction_bias(self, sparse: tuple[int, ...]) -> CheckpointExtra:
        return CheckpointExtra(
            name="router e_score_correction_bias",
            reason=f"{len(sparse)} MoE layers × {self.n_routed_experts} experts; a buffer set by load balancing, not trained",
            tensors=(StoredTensor(self.layer_name + ".mlp.gate.e_score_correction_bias", (self.n_routed_experts,)),),
            per_layer=sparse,
            buffer=True,
        )

    def mtp(self) -> CheckpointExtra:
        """Multi-token-prediction modules, stored as layers after the last: each a full MoE decoder layer,
        two RMSNorms (enorm, hnorm), eh_proj (2H → H), a final RMSNorm and copies of embed_tokens and the head."""
        hidden, vocab = self.hidden_size, self.vocab_size
        layer = self.layer(self.mla_attention(None), self.moe())
        tensors = (
            StoredTensor(self.layer_name + ".enorm.weight", (hidden,)),
            StoredTensor(self.layer_name + ".hnorm.weight", (hidden,)),
            StoredTensor(self.layer_name + ".eh_proj.weight", (hidden, 2 * hidden)),
            StoredTensor(self.layer_name + ".shared_head.norm.weight", (hidden,)),
            StoredTensor(self.layer_name + ".shared_head.head.weight", (vocab, hidden)),
            StoredTensor(self.layer_name + ".embed_tokens.weight", (vocab, hidden)),
            StoredTensor(self.layer_name + ".mlp.gate.e_score_correction_bias", (self.n_routed_experts,)),
        )
        count = self.num_nextn_predict_layers
        return mtp_extra(
            count,
            self.num_hidden_layers,
            layer,
            tensors,
            f"num_nextn_predict_layers = {count}: each a full MoE layer plus enorm, hnorm, eh_proj, a norm and "
            "copies of embed_tokens and the head; used for speculative decoding, not by the causal LM",
        )

    def notes(self) -> list[str]:
        notes = []
        if self.num_experts_per_tok is None:
            notes.append(
                "num_experts_per_tok is unset (transformers' default is None): the model is built but cannot "
                "route a token, so active parameters and FLOPs count no routed expert."
            )
        if (self.quantization_config or {}).get("quant_method") == "fp8":
            notes.append(
                "The published checkpoint stores linear weights in FP8 (e4m3) with a float32 scale per "
                "128×128 block (weight_scale_inv); the scales are not parameters and are not counted."
            )
        return notes


class DeepseekV2Config(DeepseekV3Config):
    """configuration_deepseek_v2.py: V3's MLA and dense-then-MoE stack with V2's defaults; queries may
    skip the low-rank latent (q_lora_rank null: q_proj); the router has no correction bias, and there
    are no multi-token-prediction layers."""

    architecture = "DeepSeek-V2"
    config_class = "DeepseekV2Config"
    default_model_class = "DeepseekV2ForCausalLM"
    heads_divide_hidden = True  # DeepseekV2Config.validate_architecture
    derived_defaults = {"num_key_value_heads": "num_attention_heads"}

    vocab_size: Width = 102400
    hidden_size: Width = 4096
    intermediate_size: Width = 11008
    moe_intermediate_size: Width = 1407
    num_hidden_layers: LayerCount = 32
    num_attention_heads: HeadCount = 32
    num_key_value_heads: HeadCount | None = None
    n_routed_experts: ExpertCountOrZero = Field(64, validation_alias=AliasChoices("n_routed_experts", "num_experts"))
    n_shared_experts: ExpertCountOrZero = 2
    num_experts_per_tok: ExpertCount | None = None  # type: ignore[assignment]
    first_k_dense_replace: LayerIndex = 0
    max_position_embeddings: PositionCount = 2048
    num_nextn_predict_layers: ClassVar[int] = 0  # type: ignore[assignment]
    mlp_bias: ClassVar[bool] = False

    def checkpoint_extras(self) -> tuple[CheckpointExtra, ...]:
        return self.rotary_extras()
