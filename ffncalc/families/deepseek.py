"""DeepSeek-V2 and V3 (and R1, Kimi-K2, which declare V3's architecture): MLA attention, a dense-then-MoE stack;
DeepSeek-V3.2: V3 with a lightning indexer choosing the keys each layer attends to (DeepSeek Sparse Attention)."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import AliasChoices, Field, model_validator

from ..schema import ExpertCount, ExpertCountOrZero, HeadCount, LayerCount, LayerIndex, PositionCount, Width
from ..spec import Attention, CheckpointExtra, Indexer, Layer, Mla, Norm, StoredTensor, names
from .base import DecoderConfig
from .blocks import MLA_ATTENTION, is_sparse, mtp_extra

DEEPSEEK_MOE = names(router="mlp.gate", experts="mlp.experts.{e}")
SHARED_EXPERTS = names(gate="mlp.shared_experts.gate_proj", up="mlp.shared_experts.up_proj", down="mlp.shared_experts.down_proj")


INDEXER = names(
    wq_b="self_attn.indexer.wq_b",
    wk="self_attn.indexer.wk",
    k_norm="self_attn.indexer.k_norm",
    weights_proj="self_attn.indexer.weights_proj",
)


def correction_bias_extra(layer_name: str, sparse: tuple[int, ...], experts: int, router: str = "mlp.gate") -> CheckpointExtra:
    """The router's e_score_correction_bias (one per expert) in each MoE layer: a persistent buffer, saved with the weights."""
    return CheckpointExtra(
        name="router e_score_correction_bias",
        reason=f"{len(sparse)} MoE layers × {experts} experts; a buffer set by load balancing, not trained",
        tensors=(StoredTensor(f"{layer_name}.{router}.e_score_correction_bias", (experts,)),),
        per_layer=sparse,
        buffer=True,
    )


def nextn_extra(config: DecoderConfig, count: int, layer: Layer, experts: int) -> CheckpointExtra:
    """DeepSeek-V3's multi-token-prediction modules, stored as layers after the last: each a decoder layer,
    two RMSNorms (enorm, hnorm), eh_proj (2H → H), a final RMSNorm (shared_head.norm), copies of
    embed_tokens and the head (shared_head.head), and its router's correction bias."""
    hidden, vocab, name = config.hidden_size, config.vocab_size, config.layer_name
    tensors = (
        StoredTensor(name + ".enorm.weight", (hidden,)),
        StoredTensor(name + ".hnorm.weight", (hidden,)),
        StoredTensor(name + ".eh_proj.weight", (hidden, 2 * hidden)),
        StoredTensor(name + ".shared_head.norm.weight", (hidden,)),
        StoredTensor(name + ".shared_head.head.weight", (vocab, hidden)),
        StoredTensor(name + ".embed_tokens.weight", (vocab, hidden)),
        StoredTensor(name + ".mlp.gate.e_score_correction_bias", (experts,)),
    )
    return mtp_extra(
        count,
        config.num_hidden_layers,
        layer,
        tensors,
        f"num_nextn_predict_layers = {count}: each a full MoE layer plus enorm, hnorm, eh_proj, a norm and "
        "copies of embed_tokens and the head; used for speculative decoding, not by the causal LM",
    )


class MlpLayerTypes:
    """``mlp_layer_types`` ("dense" or "sparse" per layer), as transformers' newer configs list each layer's FFN;
    ``default_mlp_kinds`` when the config leaves it out."""

    mlp_layer_types: list[str] | None
    num_hidden_layers: int

    def default_mlp_kinds(self) -> list[str]:  # pragma: no cover - each adapter says its default
        raise NotImplementedError

    def mlp_kinds(self) -> list[str]:
        return list(self.mlp_layer_types) if self.mlp_layer_types is not None else self.default_mlp_kinds()

    def sparse(self, index: int) -> bool:
        return self.mlp_kinds()[index] == "sparse"

    def resolved(self, field: str):
        return self.mlp_kinds() if field == "mlp_layer_types" else super().resolved(field)  # type: ignore[misc]


def even_rope_check():
    """A model validator: transformers' validate_rope refuses an odd rotary width (head_dim is qk_rope_head_dim here)."""

    def check(self):
        if self.qk_rope_head_dim % 2:
            raise ValueError(f"qk_rope_head_dim ({self.qk_rope_head_dim}) is odd: RoPE needs an even rotary width")
        return self

    return model_validator(mode="after")(check)


def entries_check(field: str, exact: bool):
    """A model validator: the per-layer list FIELD has num_hidden_layers entries (EXACT), or at least that many
    (transformers indexes it by layer without checking its length)."""

    def check(self):
        entries = getattr(self, field)
        layers = self.num_hidden_layers
        if entries is not None and (len(entries) != layers if exact else len(entries) < layers):
            raise ValueError(f"{field} has {len(entries)} entries for {layers} layers")
        return self

    return model_validator(mode="after")(check)


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
    routing_fields = ("num_experts_per_tok", "n_routed_experts")

    def sparse(self, index: int) -> bool:
        return self.n_routed_experts > 0 and is_sparse(index, first=self.first_k_dense_replace)

    def mla_attention(self, window: int | None, indexer: Indexer | None = None) -> Attention:
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
            indexer=indexer,
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
        return correction_bias_extra(self.layer_name, sparse, self.n_routed_experts)

    def mtp_layer(self) -> Layer:
        """The decoder layer of a multi-token-prediction module: a full MoE layer."""
        return self.layer(self.mla_attention(None), self.moe())

    def mtp(self) -> CheckpointExtra:
        return nextn_extra(self, self.num_nextn_predict_layers, self.mtp_layer(), self.n_routed_experts)

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


class DeepseekV32Config(MlpLayerTypes, DeepseekV3Config):
    """configuration_deepseek_v32.py / modeling_deepseek_v32.py: V3's MLA (queries always through the latent)
    with a lightning indexer in every layer, which picks the index_topk keys the attention reads; each
    layer's FFN as mlp_layer_types says (default: dense below first_k_dense_replace, MoE above).

    The indexer: wq_b (q_lora_rank → index_n_heads · index_head_dim), wk (hidden → index_head_dim) and its
    LayerNorm, weights_proj (hidden → index_n_heads). Checkpoints store num_nextn_predict_layers
    multi-token-prediction layers after the last, as V3's (a key transformers does not read).
    """

    architecture = "DeepSeek-V3.2"
    config_class = "DeepseekV32Config"
    default_model_class = "DeepseekV32ForCausalLM"
    derived_defaults = {"mlp_layer_types": "first_k_dense_replace dense layers, then sparse"}
    undeclared_keys = frozenset({"num_nextn_predict_layers"})
    informational_fields = DeepseekV3Config.informational_fields | {"num_nextn_predict_layers"}

    n_routed_experts: ExpertCountOrZero = Field(
        256, validation_alias=AliasChoices("num_experts", "n_routed_experts", "num_local_experts")
    )
    q_lora_rank: Width = 1536  # type: ignore[assignment]
    max_position_embeddings: PositionCount = 163840
    mlp_layer_types: list[Literal["dense", "sparse"]] | None = None
    index_topk: Width = 2048
    index_head_dim: Width = 128
    index_n_heads: HeadCount = 64
    # Not a field of DeepseekV32Config: the checkpoint's multi-token-prediction layers.
    num_nextn_predict_layers: LayerIndex = 0

    _check_mlp_layer_types = entries_check("mlp_layer_types", exact=True)  # validate_layer_type: one per layer
    _check_rope = even_rope_check()

    def default_mlp_kinds(self) -> list[str]:
        dense = min(self.first_k_dense_replace, self.num_hidden_layers)
        return ["dense"] * dense + ["sparse"] * (self.num_hidden_layers - dense)

    def unused_fields(self) -> set[str]:
        return {"first_k_dense_replace"} if self.mlp_layer_types is not None else set()

    def indexer(self, shared: bool = False) -> Indexer:
        return Indexer(
            heads=self.index_n_heads,
            head_dim=self.index_head_dim,
            q_input=self.q_lora_rank,
            top_k=self.index_topk,
            names=INDEXER,
            k_norm=Norm("layernorm", self.index_head_dim, bias=True),
            shared=shared,
        )

    def indexer_shared(self, index: int) -> bool:
        """Whether layer INDEX reuses the previous layer's picks (never in V3.2: every layer has its indexer)."""
        return False

    def build_layers(self) -> tuple[Layer, ...]:
        built: dict[tuple[bool, bool], Layer] = {}
        layers = []
        for index in range(self.num_hidden_layers):
            key = (self.sparse(index), self.indexer_shared(index))
            if key not in built:
                attention = self.mla_attention(None, self.indexer(shared=key[1]))
                built[key] = self.layer(attention, self.moe() if key[0] else self.gated_ffn())
            layers.append(built[key])
        return tuple(layers)

    def mtp_layer(self) -> Layer:
        return self.layer(self.mla_attention(None, self.indexer()), self.moe())
