"""Databricks' DBRX: a fine-grained MoE with nested attention and FFN configs."""

from __future__ import annotations

from pydantic import Field, model_validator

from ..schema import ExpertCount, Flag, HeadCount, HFConfig, LayerCount, Nested, PositionCount, Width, ungroupable
from ..spec import Attention, DenseFfn, Layer, ModelNames, ModelSpec, MoeFfn, Norm, names
from .registry import family

DBRX_ATTENTION = names(
    q="norm_attn_norm.attn.Wqkv",
    k="norm_attn_norm.attn.Wqkv",
    v="norm_attn_norm.attn.Wqkv",
    o="norm_attn_norm.attn.out_proj",
)
DBRX_MOE = names(router="ffn.router.layer", experts="ffn.experts.mlp")
# w1 (gate) and v1 (up) are [E · I, H]; w2 (down) is stored the same way, i.e. transposed.
DBRX_EXPERT = names(gate="w1", up="v1", down="w2", transposed=("down",), parameters=True)


class DbrxAttentionConfig(Nested):
    kv_n_heads: HeadCount = 1


class DbrxFfnConfig(Nested):
    ffn_hidden_size: Width = 3584
    moe_num_experts: ExpertCount = 4
    moe_top_k: ExpertCount = 1

    @model_validator(mode="after")
    def _check_experts(self) -> DbrxFfnConfig:
        if self.moe_top_k > self.moe_num_experts:
            raise ValueError(f"moe_top_k ({self.moe_top_k}) exceeds moe_num_experts ({self.moe_num_experts})")
        return self


@family(
    "dbrx",
    transformers="DbrxConfig",
    architecture="DBRX",
    model_class="DbrxForCausalLM",
    own_defaults={
        "attn_config": "DbrxConfig records None; its __post_init__ builds the block from DbrxAttentionConfig's defaults",
        "ffn_config": "DbrxConfig records None; its __post_init__ builds the block from DbrxFFNConfig's defaults",
    },
)
class DbrxConfig(HFConfig):
    """configuration_dbrx.py / modeling_dbrx.py: d_model, n_heads, n_layers; attn_config and ffn_config
    nested. Fused Wqkv (d_model + 2 · kv heads · head_dim wide) and out_proj (d_model), without biases;
    experts w1, v1, w2 (gated) stored concatenated; LayerNorms without bias; an untied head
    (transformers refuses tie_word_embeddings)."""

    informational_fields = frozenset({"max_seq_len"})
    context_field = "max_seq_len"

    d_model: Width
    n_heads: HeadCount
    n_layers: LayerCount
    max_seq_len: PositionCount
    vocab_size: Width
    attn_config: DbrxAttentionConfig = Field(default_factory=DbrxAttentionConfig)
    ffn_config: DbrxFfnConfig = Field(default_factory=DbrxFfnConfig)
    tie_word_embeddings: Flag

    @model_validator(mode="after")
    def _check(self) -> DbrxConfig:
        if self.tie_word_embeddings:
            raise ValueError("tie_word_embeddings: DBRX does not support tied embeddings (transformers refuses it)")
        if self.d_model < self.n_heads:
            raise ValueError(f"d_model ({self.d_model}) is smaller than n_heads ({self.n_heads})")
        return self

    def warnings(self) -> list[str]:
        # modeling_dbrx.py: num_key_value_groups = n_heads // kv_n_heads (0 when there are more KV heads)
        found = super().warnings()
        return found + ungroupable(self.n_heads, self.attn_config.kv_n_heads, "n_heads", "attn_config.kv_n_heads")

    def to_spec(self) -> ModelSpec:
        hidden, heads = self.d_model, self.n_heads
        head_dim = hidden // heads
        attention = Attention(
            hidden, heads, self.attn_config.kv_n_heads, head_dim, head_dim, DBRX_ATTENTION, q_width=hidden
        )
        ffn = self.ffn_config
        expert = DenseFfn(hidden, ffn.ffn_hidden_size, gated=True, activation="silu", names=DBRX_EXPERT)
        moe = MoeFfn(hidden, ffn.moe_num_experts, ffn.moe_top_k, expert, DBRX_MOE, stacking="concatenated")
        norm = Norm("layernorm", hidden, bias=False)
        layer = Layer(
            "transformer.blocks.{i}", attention, moe, (("norm_attn_norm.norm_1", norm), ("norm_attn_norm.norm_2", norm))
        )
        return ModelSpec(
            model_type=self.model_type,
            hidden_size=hidden,
            vocab_size=self.vocab_size,
            layers=(layer,) * self.n_layers,
            final_norm=norm,
            tie_word_embeddings=False,
            names=ModelNames("transformer.wte", "transformer.norm_f", base_model_prefix="transformer"),
        )
