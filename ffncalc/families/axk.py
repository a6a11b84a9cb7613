"""SK Telecom's A.X-K1: DeepSeek-V3's latent attention and grouped MoE, each layer's FFN as mlp_layer_types says, and
an RMSNorm after each MoE block."""

from __future__ import annotations

from typing import Literal

from pydantic import AliasChoices, Field

from ..schema import ExpertCount, ExpertCountOrZero, HeadCount, LayerCount, LayerIndex, PositionCount, Width, derives
from ..spec import Layer
from .blocks import MlpLayerTypes, entries_check, is_sparse
from .deepseek import DeepseekV3Config, even_rope_check
from .registry import family


@family("axk1")
class AXK1Config(MlpLayerTypes, DeepseekV3Config):
    """configuration_axk1.py / modular_axk1.py (A.X-K1): DeepseekV3Attention with queries always through the
    q_lora_rank latent, DeepSeek-V3's MoE (a shared MLP of n_shared_experts · moe_intermediate_size, a router with
    its e_score_correction_bias buffer) in the layers mlp_layer_types marks sparse, Glm4MoeLite's decoder layer.
    The MoE block ends in post_mlp_layernorm, which the released checkpoints keep beside the layer's other norms
    (conversion_mapping.py's axk1 renames post_mlp_layernorm to mlp.post_mlp_layernorm on load; saving reverts it).
    mlp_layer_types, when absent, comes from the legacy keys first_k_dense_replace (1) and moe_layer_freq (1): layer
    i is sparse when i ≥ first_k_dense_replace and i % moe_layer_freq == 0. AXK1Config has no multi-token-prediction
    field (num_mtp_layers is removed)."""

    architecture = "A.X-K1"
    config_class = "AXK1Config"
    default_model_class = "AXK1ForCausalLM"
    # Not fields of AXK1Config: __post_init__ pops the first two to build mlp_layer_types; the third is a key of
    # the checkpoints' multi-token-prediction layers, which transformers does not build.
    undeclared_keys = frozenset({"first_k_dense_replace", "moe_layer_freq", "num_nextn_predict_layers"})
    informational_fields = DeepseekV3Config.informational_fields | {"num_nextn_predict_layers"}

    vocab_size: Width = 163840
    hidden_size: Width = 7168
    intermediate_size: Width = 18432
    moe_intermediate_size: Width = 2048
    num_hidden_layers: LayerCount = 61
    num_attention_heads: HeadCount = 64
    num_key_value_heads: HeadCount | None = 64
    n_shared_experts: ExpertCountOrZero = 1
    n_routed_experts: ExpertCountOrZero = Field(
        192, validation_alias=AliasChoices("n_routed_experts", "num_local_experts")
    )
    kv_lora_rank: Width = 512
    q_lora_rank: Width = 1536  # AXK1Attention always builds q_a_proj, q_a_layernorm and q_b_proj
    qk_rope_head_dim: Width = 64
    v_head_dim: Width = 128
    qk_nope_head_dim: Width = 128
    num_experts_per_tok: ExpertCount = 8
    max_position_embeddings: PositionCount = 32768
    mlp_layer_types: list[Literal["dense", "sparse"]] | None = None
    first_k_dense_replace: LayerIndex = 1
    moe_layer_freq: LayerCount = 1
    num_nextn_predict_layers: LayerIndex = 0

    _check_mlp_layer_types = entries_check("mlp_layer_types", exact=False)  # indexed per layer, never checked
    _check_rope = even_rope_check()

    @derives(
        "mlp_layer_types", "sparse where i ≥ first_k_dense_replace (1) and i % moe_layer_freq (1) == 0, else dense"
    )
    def default_mlp_kinds(self) -> list[str]:
        first, every = self.first_k_dense_replace, self.moe_layer_freq
        return ["sparse" if is_sparse(i, first=first, every=every) else "dense" for i in range(self.num_hidden_layers)]

    def unused_fields(self) -> set[str]:
        return {"first_k_dense_replace", "moe_layer_freq"} if self.mlp_layer_types is not None else set()

    def build_layers(self) -> tuple[Layer, ...]:
        dense = self.layer(self.mla_attention(None), self.gated_ffn())
        norm = self.rms_norm()
        norms = (("input_layernorm", norm), ("post_attention_layernorm", norm), ("post_mlp_layernorm", norm))
        sparse = self.layer(self.mla_attention(None), self.moe(), norms)
        return tuple(sparse if self.sparse(i) else dense for i in range(self.num_hidden_layers))
