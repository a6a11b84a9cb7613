"""inclusionAI's Ling (BailingMoeV2; custom code, read as data, never run)."""

from __future__ import annotations

from ..schema import ExpertCount, ExpertCountOrZero, Flag, HeadCount, LayerCount, LayerIndex, Name, PositionCount, Width
from ..spec import CheckpointExtra, Layer, ModelNames, StoredTensor, names
from .base import DecoderConfig
from .blocks import is_sparse
from .registry import family

# The names of inclusionAI's modeling_bailing_moe_v2.py (no transformers class to check them against).
BAILING_ATTENTION = names(
    q="attention.query_key_value",
    k="attention.query_key_value",
    v="attention.query_key_value",
    o="attention.dense",
    q_norm="attention.query_layernorm",
    k_norm="attention.key_layernorm",
)
BAILING_SHARED = names(
    gate="mlp.shared_experts.gate_proj", up="mlp.shared_experts.up_proj", down="mlp.shared_experts.down_proj"
)


@family("bailing_moe")
class BailingMoeConfig(DecoderConfig):
    """BailingMoeV2 (Ling-flash-2.0): fused query_key_value and dense (biases from use_qkv_bias /
    use_bias), per-head RMSNorm on q and k (use_qk_norm); the first first_k_dense_replace layers
    dense, the rest MoE with num_shared_experts shared experts of moe_shared_expert_intermediate_size;
    a router without bias, plus an expert bias (moe_router_enable_expert_bias) adjusted for load
    balance rather than trained: stored, like DeepSeek's e_score_correction_bias, and listed beside
    the count. Defaults are those of inclusionAI's configuration file.

    transformers has no BailingMoeV2Config, so its record has none to give: the defaults are written here (the
    ones not written are LlamaConfig's, through DecoderConfig)."""

    architecture = "Ling (BailingMoeV2)"
    config_class = "BailingMoeV2Config"
    default_model_class = "BailingMoeV2ForCausalLM"
    heads_divide_hidden = False  # configuration_*.py floors hidden_size // num_attention_heads
    attention_names = BAILING_ATTENTION
    model_names = ModelNames("model.word_embeddings", "model.norm")

    num_hidden_layers: LayerCount = 32
    intermediate_size: Width = 11008
    tie_word_embeddings: Flag = False
    max_position_embeddings: PositionCount = 2048
    num_key_value_heads: HeadCount | None = None
    hidden_act: Name = "silu"
    head_dim: Width | None = None
    num_experts: ExpertCount = 256
    num_experts_per_tok: ExpertCount = 8
    moe_intermediate_size: Width = 1024
    num_shared_experts: ExpertCountOrZero = 0
    moe_shared_expert_intermediate_size: Width | None = None
    first_k_dense_replace: LayerIndex = 0
    use_qkv_bias: Flag = False
    use_bias: Flag = False
    use_qk_norm: Flag = False
    moe_router_enable_expert_bias: Flag = False
    routing_fields = ("num_experts_per_tok", "num_experts")

    def sparse(self, index: int) -> bool:
        return is_sparse(index, first=self.first_k_dense_replace)

    def build_layer(self, index: int, window: int | None) -> Layer:
        norms = self.per_head_norms() if self.use_qk_norm else {}
        bias = self.use_qkv_bias
        attention = self.attention(window, q_bias=bias, k_bias=bias, v_bias=bias, o_bias=self.use_bias, **norms)
        if not self.sparse(index):
            return self.layer(attention, self.gated_ffn())
        shared_width = (
            self.moe_shared_expert_intermediate_size or self.moe_intermediate_size
        ) * self.num_shared_experts
        moe = self.moe_ffn(
            self.num_experts,
            self.num_experts_per_tok,
            self.moe_intermediate_size,
            shared_width=shared_width,
            num_shared_experts=self.num_shared_experts,
            shared_names=BAILING_SHARED,
        )
        return self.layer(attention, moe)

    def checkpoint_extras(self) -> tuple[CheckpointExtra, ...]:
        sparse = tuple(i for i in range(self.num_hidden_layers) if self.sparse(i))
        if not (self.moe_router_enable_expert_bias and sparse):
            return super().checkpoint_extras()
        bias = CheckpointExtra(
            name="router expert bias",
            reason=f"{len(sparse)} MoE layers × {self.num_experts} experts; set by load balancing, not by gradient",
            tensors=(StoredTensor(self.layer_name + ".mlp.gate.expert_bias", (self.num_experts,)),),
            per_layer=sparse,
        )
        return super().checkpoint_extras() + (bias,)
