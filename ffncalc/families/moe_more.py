"""More mixture-of-experts families: DBRX, Llama-4 (text), DeepSeek-V2 and Ling (BailingMoeV2)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from ..schema import ExpertCount, ExpertCountOrZero, Flag, HFConfig, HeadCount, LayerCount, LayerIndex, Width
from ..spec import Attention, CheckpointExtra, DenseFfn, Layer, ModelSpec, MoeFfn, Norm
from .base import DecoderConfig, experts_check
from .deepseek import DeepseekV3Config


class _Nested(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class DbrxAttentionConfig(_Nested):
    kv_n_heads: HeadCount = 1


class DbrxFfnConfig(_Nested):
    ffn_hidden_size: Width = 3584
    moe_num_experts: ExpertCount = 4
    moe_top_k: ExpertCount = 1


class DbrxConfig(HFConfig):
    """configuration_dbrx.py / modeling_dbrx.py: d_model, n_heads, n_layers; attn_config and
    ffn_config nested. Fused Wqkv and out_proj without biases; experts w1, v1, w2 (gated);
    LayerNorms without bias; an untied head."""

    architecture = "DBRX"
    vocab_size: Width
    d_model: Width
    n_heads: HeadCount
    n_layers: LayerCount
    attn_config: DbrxAttentionConfig = Field(default_factory=DbrxAttentionConfig)
    ffn_config: DbrxFfnConfig = Field(default_factory=DbrxFfnConfig)
    tie_word_embeddings: Flag = False

    def to_spec(self) -> ModelSpec:
        hidden = self.d_model
        attention = Attention.uniform(hidden, self.n_heads, bias=False, num_kv_heads=self.attn_config.kv_n_heads)
        expert = DenseFfn(hidden, self.ffn_config.ffn_hidden_size, gated=True, activation="silu")
        moe = MoeFfn(hidden, self.ffn_config.moe_num_experts, self.ffn_config.moe_top_k, expert)
        norm = Norm("layernorm", hidden, bias=False)
        layer = Layer(attention, moe, (("norm_1", norm), ("norm_2", norm)))
        return self.make_spec(
            hidden_size=hidden,
            vocab_size=self.vocab_size,
            layers=(layer,) * self.n_layers,
            final_norm=norm,
            tie_word_embeddings=self.tie_word_embeddings,
        )


class Llama4TextConfig(DecoderConfig):
    """configuration_llama4.py (text model): MoE on the layers in moe_layers (default every
    interleave_moe_layer_step-th), each with a shared expert of width intermediate_size; dense
    layers use intermediate_size_mlp. q/k are L2-normalised (no parameters). Every
    no_rope_layer_interval-th layer attends globally; the others in chunks of attention_chunk_size,
    counted for FLOPs as a window of that size (an upper bound: a token sees its own chunk)."""

    architecture = "Llama-4"
    intermediate_size_mlp: Width = 16384
    num_local_experts: ExpertCount = 16
    num_experts_per_tok: ExpertCount = 1
    interleave_moe_layer_step: LayerCount = 1
    moe_layers: list[LayerIndex] | None = None
    no_rope_layers: list[int] | None = None
    no_rope_layer_interval: LayerCount = 4
    attention_chunk_size: Width | None = 8192
    _check_experts = experts_check("num_experts_per_tok", "num_local_experts")

    def sparse_layers(self) -> set[int]:
        if self.moe_layers is not None:
            return set(self.moe_layers)
        step = self.interleave_moe_layer_step
        return set(range(step - 1, self.num_hidden_layers, step))

    def default_window(self, index: int) -> int | None:
        if self.no_rope_layers:
            chunked = bool(self.no_rope_layers[index]) if index < len(self.no_rope_layers) else True
        else:
            chunked = (index + 1) % self.no_rope_layer_interval != 0
        return self.attention_chunk_size if chunked else None

    def build_layer(self, index: int, window: int | None) -> Layer:
        if index not in self.sparse_layers():
            return Layer(self.attention(window), self.gated_ffn(self.intermediate_size_mlp), self.pre_norms())
        moe = MoeFfn(
            self.hidden_size,
            self.num_local_experts,
            self.num_experts_per_tok,
            self.gated_ffn(bias=False),
            shared=self.gated_ffn(bias=False),
            num_shared_experts=1,
        )
        return Layer(self.attention(window), moe, self.pre_norms())


class DeepseekV2Config(DeepseekV3Config):
    """configuration_deepseek_v2.py: V3's MLA and dense-then-MoE stack with V2's defaults; the
    router has no correction bias, and there are no multi-token-prediction layers."""

    architecture = "DeepSeek-V2"
    n_routed_experts: ExpertCountOrZero = 64
    n_shared_experts: ExpertCountOrZero = 2
    num_experts_per_tok: ExpertCount = 6
    moe_intermediate_size: Width = 1407
    first_k_dense_replace: LayerIndex = 0
    num_nextn_predict_layers: LayerIndex = 0

    def checkpoint_extras(self):
        return ()


class BailingMoeConfig(DecoderConfig):
    """inclusionAI's BailingMoeV2 (Ling-flash-2.0; custom code, read as data, never run).

    Fused query_key_value and dense (biases from use_qkv_bias / use_bias), per-head RMSNorm on
    q and k (use_qk_norm); the first first_k_dense_replace layers dense, the rest MoE with
    num_shared_experts shared experts of moe_shared_expert_intermediate_size; a router without
    bias, plus an expert bias (moe_router_enable_expert_bias) adjusted for load balance rather
    than trained: stored, like DeepSeek's e_score_correction_bias, and listed beside the count.
    """

    architecture = "Ling (BailingMoeV2)"
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
    _check_experts = experts_check("num_experts_per_tok", "num_experts")

    def build_layer(self, index: int, window: int | None) -> Layer:
        norms = self.per_head_norms() if self.use_qk_norm else {}
        bias = self.use_qkv_bias
        attention = self.attention(window, q_bias=bias, k_bias=bias, v_bias=bias, o_bias=self.use_bias, **norms)
        if index < self.first_k_dense_replace:
            return Layer(attention, self.gated_ffn(bias=False), self.pre_norms())
        shared_width = (self.moe_shared_expert_intermediate_size or self.moe_intermediate_size) * self.num_shared_experts
        moe = MoeFfn(
            self.hidden_size,
            self.num_experts,
            self.num_experts_per_tok,
            self.gated_ffn(self.moe_intermediate_size, bias=False),
            shared=self.gated_ffn(shared_width, bias=False) if self.num_shared_experts else None,
            num_shared_experts=self.num_shared_experts,
        )
        return Layer(attention, moe, self.pre_norms())

    def checkpoint_extras(self):
        sparse = self.num_hidden_layers - min(self.first_k_dense_replace, self.num_hidden_layers)
        if not (self.moe_router_enable_expert_bias and sparse):
            return ()
        return (
            CheckpointExtra(
                name="router expert bias",
                elements=sparse * self.num_experts,
                reason=f"{sparse} MoE layers × {self.num_experts} experts; set by load balancing, not by gradient",
            ),
        )
