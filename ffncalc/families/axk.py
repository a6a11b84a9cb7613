"""SK Telecom's A.X-K1: DeepSeek-V3's latent attention and grouped MoE, each layer's FFN as mlp_layer_types says, and
an RMSNorm after each MoE block. A.X-K2: DeepSeek-V3.2's indexed attention whose query projection reads the latent
before and after its norm and also gates the output, and RMSNorms with a small gating MLP."""

from __future__ import annotations

from typing import Literal

from ..schema import ExpertCount, ExpertCountOrZero, HeadCount, LayerCount, LayerIndex, PositionCount, Width, derives
from ..spec import Attention, Indexer, Layer, Mla, Names, Norms, Projection
from ..values import replace
from .blocks import MLA_ATTENTION, MlpLayerTypes, entries_check, is_sparse
from .deepseek import DeepseekV3Config, DeepseekV32Config, even_rope_check
from .registry import family

# Keys A.X-K1 and A.X-K2 read that are no fields of their configuration classes.
LEGACY_KEYS = {
    "first_k_dense_replace": "__post_init__ pops it (with moe_layer_freq) to build mlp_layer_types",
    "moe_layer_freq": "__post_init__ pops it (with first_k_dense_replace) to build mlp_layer_types",
    "num_nextn_predict_layers": "the checkpoints' multi-token-prediction layers, which transformers does not build",
}


@family(
    "axk1",
    transformers="AXK1Config",
    architecture="A.X-K1",
    model_class="AXK1ForCausalLM",
    read_beyond=LEGACY_KEYS,
)
class AXK1Config(MlpLayerTypes, DeepseekV3Config):
    """configuration_axk1.py / modular_axk1.py (A.X-K1): DeepseekV3Attention with queries always through the
    q_lora_rank latent, DeepSeek-V3's MoE (a shared MLP of n_shared_experts · moe_intermediate_size, a router with
    its e_score_correction_bias buffer) in the layers mlp_layer_types marks sparse, Glm4MoeLite's decoder layer.
    The MoE block ends in post_mlp_layernorm, which the released checkpoints keep beside the layer's other norms
    (conversion_mapping.py's axk1 renames post_mlp_layernorm to mlp.post_mlp_layernorm on load; saving reverts it).
    mlp_layer_types, when absent, comes from the legacy keys first_k_dense_replace (1) and moe_layer_freq (1): layer
    i is sparse when i ≥ first_k_dense_replace and i % moe_layer_freq == 0. AXK1Config has no multi-token-prediction
    field (num_mtp_layers is removed)."""

    informational_fields = DeepseekV3Config.informational_fields | {"num_nextn_predict_layers"}

    vocab_size: Width
    hidden_size: Width
    intermediate_size: Width
    moe_intermediate_size: Width
    num_hidden_layers: LayerCount
    num_attention_heads: HeadCount
    num_key_value_heads: HeadCount | None
    n_shared_experts: ExpertCountOrZero
    n_routed_experts: ExpertCountOrZero
    kv_lora_rank: Width
    q_lora_rank: Width  # AXK1Attention always builds q_a_proj, q_a_layernorm and q_b_proj
    qk_rope_head_dim: Width
    v_head_dim: Width
    qk_nope_head_dim: Width
    num_experts_per_tok: ExpertCount
    max_position_embeddings: PositionCount
    mlp_layer_types: list[Literal["dense", "sparse"]] | None
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


# A.X-K2's checkpoints keep the fused query and output-gate projection as q_b_proj (transformers renames it
# q_gate_proj on load, conversion_mapping.py's axk2) and each gated norm's MLP as W_down and W_up (mlp.fc1, mlp.fc2).
AXK2_ATTENTION = Names(MLA_ATTENTION.modules + (("output_gate", "self_attn.q_b_proj"),))


@family(
    "axk2", transformers="AXK2Config", architecture="A.X-K2", model_class="AXK2ForCausalLM", read_beyond=LEGACY_KEYS
)
class AXK2Config(DeepseekV32Config):
    """configuration_axk2.py / modular_axk2.py (A.X-K2): DeepSeek-V3.2's layer (MLA, a lightning indexer in every
    layer reading the query latent, DeepSeek's MoE) with two changes. AXK2Attention has no q_b_proj: q_gate_proj reads
    the query latent before and after q_a_layernorm, concatenated (2 · q_lora_rank), and emits per head the query
    (qk_nope + qk_rope) and a sigmoid gate of v_head_dim on the attention's output. AXK2GatedRMSNorm is an RMSNorm
    whose output is scaled by sigmoid(fc2(silu(fc1(y)))), fc1 hidden → gated_norm_rank and fc2 back, both without
    bias: input_layernorm in every layer, post_attention_layernorm in the sparse ones (a plain RMSNorm in the dense).
    mlp_layer_types, when absent, comes from the legacy keys first_k_dense_replace (1) and moe_layer_freq (1), as
    A.X-K1's. head_dim is overwritten with qk_rope_head_dim by __post_init__ and layer_types is every layer
    'indexed_attention': neither changes the layout."""

    attention_names = AXK2_ATTENTION

    vocab_size: Width
    hidden_size: Width
    intermediate_size: Width
    moe_intermediate_size: Width
    num_hidden_layers: LayerCount
    num_attention_heads: HeadCount
    num_key_value_heads: HeadCount | None
    n_routed_experts: ExpertCountOrZero
    kv_lora_rank: Width
    q_lora_rank: Width  # validate_architecture requires one: the indexer and the output gate read it
    qk_rope_head_dim: Width
    v_head_dim: Width
    qk_nope_head_dim: Width
    max_position_embeddings: PositionCount
    index_n_heads: HeadCount
    gated_norm_rank: Width
    mlp_layer_types: list[Literal["dense", "sparse"]] | None
    first_k_dense_replace: LayerIndex = 1
    moe_layer_freq: LayerCount = 1

    _check_mlp_layer_types = entries_check("mlp_layer_types", exact=True)

    @derives(
        "mlp_layer_types", "sparse where i ≥ first_k_dense_replace (1) and i % moe_layer_freq (1) == 0, else dense"
    )
    def default_mlp_kinds(self) -> list[str]:
        first, every = self.first_k_dense_replace, self.moe_layer_freq
        return ["sparse" if is_sparse(i, first=first, every=every) else "dense" for i in range(self.num_hidden_layers)]

    def unused_fields(self) -> set[str]:
        return {"first_k_dense_replace", "moe_layer_freq"} if self.mlp_layer_types is not None else set()

    def mla_attention(self, window: int | None, indexer: Indexer | None = None) -> Attention:
        """V3.2's attention with q_gate_proj: 2 · q_lora_rank in, heads · (qk_nope + qk_rope + v_head_dim) out."""
        mla = Mla(
            q_lora_rank=self.q_lora_rank,
            kv_lora_rank=self.kv_lora_rank,
            qk_nope_head_dim=self.qk_nope_head_dim,
            qk_rope_head_dim=self.qk_rope_head_dim,
            v_head_dim=self.v_head_dim,
            q_b_input=2 * self.q_lora_rank,
            output_gate=self.num_attention_heads * self.v_head_dim,
        )
        return replace(super().mla_attention(window, indexer), mla=mla)

    def gated_norm(self, module: str) -> tuple[Norms, tuple[Projection, ...]]:
        """An RMSNorm (module.norm) and its gate MLP: W_down hidden → gated_norm_rank, W_up back, no biases."""
        hidden, rank = self.hidden_size, self.gated_norm_rank
        gate = (
            Projection("norm_gate", f"{module}.W_down", hidden, rank, component="other"),
            Projection("norm_gate", f"{module}.W_up", rank, hidden, component="other"),
        )
        return ((f"{module}.norm", self.rms_norm()),), gate

    def axk2_layer(self, sparse: bool) -> Layer:
        """A gated input_layernorm always; post_attention_layernorm gated before the MoE, plain before a dense MLP."""
        first_norm, first_gate = self.gated_norm("input_layernorm")
        if sparse:
            second_norm, second_gate = self.gated_norm("post_attention_layernorm")
        else:
            second_norm, second_gate = (("post_attention_layernorm", self.rms_norm()),), ()
        ffn = self.moe() if sparse else self.gated_ffn()
        attention = self.mla_attention(None, self.indexer())
        return self.layer(attention, ffn, first_norm + second_norm, projections=first_gate + second_gate)

    def build_layers(self) -> tuple[Layer, ...]:
        dense, sparse = self.axk2_layer(False), self.axk2_layer(True)
        return tuple(sparse if self.sparse(i) else dense for i in range(self.num_hidden_layers))

    def mtp_layer(self) -> Layer:
        return self.axk2_layer(True)
