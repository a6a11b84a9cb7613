"""DeepSeek-V2 and V3 (and R1, Kimi-K2, which declare V3's architecture; Sarvam's sarvam_mla, which transformers builds
as V3): MLA attention, a dense-then-MoE stack;
DeepSeek-V3.2: V3 with a lightning indexer choosing the keys each layer attends to (DeepSeek Sparse Attention);
DeepSeek-V4: shared-key-value attention over a window and compressed keys, hyper-connections, hash-routed MoE."""

from __future__ import annotations

from typing import Annotated, Any, Literal, Protocol

from pydantic import AliasChoices, Field, model_validator

from ..schema import (
    MAX_WIDTH,
    ExpertCount,
    ExpertCountOrZero,
    Flag,
    HeadCount,
    LayerCount,
    LayerIndex,
    Name,
    PositionCount,
    Width,
    derives,
    per_config,
)
from ..spec import (
    Attention,
    CheckpointExtra,
    Compressor,
    Extra,
    Indexer,
    Layer,
    LearnedTensor,
    Mla,
    ModelNames,
    ModelSpec,
    MoeFfn,
    Names,
    Norm,
    Parameter,
    StoredTensor,
    names,
)
from ..values import replace
from .base import DecoderConfig
from .blocks import MLA_ATTENTION, MlpLayerTypes, entries_check, is_sparse, mtp_extra
from .registry import family

DEEPSEEK_MOE = names(router="mlp.gate", experts="mlp.experts.{e}")


INDEXER = names(
    wq_b="self_attn.indexer.wq_b",
    wk="self_attn.indexer.wk",
    k_norm="self_attn.indexer.k_norm",
    weights_proj="self_attn.indexer.weights_proj",
)


def correction_bias_extra(
    layer_name: str,
    sparse: tuple[int, ...],
    experts: int,
    router: str = "mlp.gate",
    stored_as: str = "e_score_correction_bias",
) -> CheckpointExtra:
    """The router's e_score_correction_bias (one per expert) in each MoE layer: a persistent buffer, saved with the weights."""
    return CheckpointExtra(
        name="router e_score_correction_bias",
        reason=f"{len(sparse)} MoE layers × {experts} experts; a buffer set by load balancing, not trained",
        tensors=(StoredTensor(f"{layer_name}.{router}.{stored_as}", (experts,)),),
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
        config.layer_count,
        layer,
        tensors,
        f"num_nextn_predict_layers = {count}: each a full MoE layer plus enorm, hnorm, eh_proj, a norm and "
        "copies of embed_tokens and the head; used for speculative decoding, not by the causal LM",
    )


def even_rope_check():
    """A model validator: transformers' validate_rope refuses an odd rotary width (head_dim is qk_rope_head_dim here)."""

    def check(self):
        if self.qk_rope_head_dim % 2:
            raise ValueError(f"qk_rope_head_dim ({self.qk_rope_head_dim}) is odd: RoPE needs an even rotary width")
        return self

    return model_validator(mode="after")(check)


class MlaWidths(Protocol):
    """The fields multi-head latent attention reads (DeepSeek's lineage, Hy4)."""

    @property
    def num_attention_heads(self) -> int: ...

    @property
    def q_lora_rank(self) -> int | None: ...

    @property
    def kv_lora_rank(self) -> int: ...

    @property
    def qk_nope_head_dim(self) -> int: ...

    @property
    def qk_rope_head_dim(self) -> int: ...

    @property
    def v_head_dim(self) -> int: ...

    def attention(self, window: int | None, **overrides: Any) -> Attention: ...


def mla_attention(config: MlaWidths, window: int | None, **overrides: Any) -> Attention:
    """DeepSeek's multi-head latent attention from CONFIG's widths: a query latent of q_lora_rank (none: q_proj), a
    key-value latent of kv_lora_rank, heads of qk_nope + qk_rope for q and k and v_head_dim for v, every head its own
    keys; attention_bias reaches q_a, kv_a and o_proj only. OVERRIDES add to it (an indexer, sinks)."""
    mla = Mla(
        q_lora_rank=config.q_lora_rank,
        kv_lora_rank=config.kv_lora_rank,
        qk_nope_head_dim=config.qk_nope_head_dim,
        qk_rope_head_dim=config.qk_rope_head_dim,
        v_head_dim=config.v_head_dim,
    )
    return config.attention(
        window,
        num_kv_heads=config.num_attention_heads,
        qk_head_dim=config.qk_nope_head_dim + config.qk_rope_head_dim,
        v_head_dim=config.v_head_dim,
        v_bias=False,
        mla=mla,
        **overrides,
    )


class DeepseekLayers(DecoderConfig):
    """DeepSeek-V3's layers: multi-head latent attention, dense layers then an MoE of routed experts beside shared
    ones (one MLP of n_shared_experts × moe_intermediate_size), the router's e_score_correction_bias a persistent
    buffer saved with the weights. The fields every descendant's configuration class shares, with DeepSeek-V3's
    defaults; the routing fields, which some descendants lack (Kimi Linear, GLM-4.7-Flash) or leave unset, are each
    config's own, read through ``routed_experts``, ``experts_per_token``, ``dense_prefix`` and ``mtp_layers``."""

    heads_divide_hidden = False  # configuration_*.py floors hidden_size // num_attention_heads
    attention_names = MLA_ATTENTION
    moe_names = DEEPSEEK_MOE

    num_hidden_layers: LayerCount
    intermediate_size: Width
    attention_bias: Flag
    hidden_act: Name
    moe_intermediate_size: Width
    num_key_value_heads: HeadCount | None
    n_shared_experts: ExpertCountOrZero
    kv_lora_rank: Width
    q_lora_rank: Width | None
    qk_rope_head_dim: Width
    v_head_dim: Width
    qk_nope_head_dim: Width
    max_position_embeddings: PositionCount
    # No head_dim: MLA's widths come from the fields above (resolved_head_dim, unused, would be hidden // heads).

    @property
    def routed_experts(self) -> int:
        """n_routed_experts where the config class has it; else none."""
        return int(getattr(self, "n_routed_experts", 0))

    @property
    def experts_per_token(self) -> int:
        """num_experts_per_tok (None, transformers' default in some classes, routes no token)."""
        return int(getattr(self, "num_experts_per_tok", None) or 0)

    @property
    def dense_prefix(self) -> int:
        """first_k_dense_replace: how many dense layers come before the MoE ones."""
        return int(getattr(self, "first_k_dense_replace", 0))

    @property
    def mtp_layers(self) -> int:
        """num_nextn_predict_layers: the checkpoint's multi-token-prediction layers after the last; else none."""
        return int(getattr(self, "num_nextn_predict_layers", 0))

    def sparse(self, index: int) -> bool:
        return self.routed_experts > 0 and is_sparse(index, first=self.dense_prefix)

    def mla_attention(self, window: int | None, indexer: Indexer | None = None) -> Attention:
        return mla_attention(self, window, indexer=indexer)

    def moe(self) -> MoeFfn:
        return self.shared_experts_moe(
            self.routed_experts, self.experts_per_token, self.moe_intermediate_size, self.n_shared_experts
        )

    def build_layers(self) -> tuple[Layer, ...]:
        dense = self.layer(self.mla_attention(None), self.gated_ffn())
        sparse = self.layer(self.mla_attention(None), self.moe()) if self.routed_experts else dense
        return tuple(sparse if self.sparse(i) else dense for i in range(self.num_hidden_layers))

    def checkpoint_extras(self) -> tuple[CheckpointExtra, ...]:
        extras = list(super().checkpoint_extras())
        sparse = tuple(i for i in range(self.num_hidden_layers) if self.sparse(i))
        if sparse:
            extras.append(self.correction_bias(sparse))
        if self.mtp_layers:
            extras.append(self.mtp())
        return tuple(extras)

    def correction_bias(self, sparse: tuple[int, ...]) -> CheckpointExtra:
        return correction_bias_extra(self.layer_name, sparse, self.routed_experts)

    def mtp_layer(self) -> Layer:
        """The decoder layer of a multi-token-prediction module: a full MoE layer."""
        return self.layer(self.mla_attention(None), self.moe())

    def mtp(self) -> CheckpointExtra:
        return nextn_extra(self, self.mtp_layers, self.mtp_layer(), self.routed_experts)

    def notes(self) -> list[str]:
        notes = []
        if getattr(self, "num_experts_per_tok", 0) is None:
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


@family(
    "deepseek_v3",
    "kimi_k2",
    transformers="DeepseekV3Config",
    architecture="DeepSeek-V3",
    model_class="DeepseekV3ForCausalLM",
    routing=("num_experts_per_tok", "n_routed_experts"),
)
class DeepseekV3Config(DeepseekLayers):
    """configuration_deepseek_v3.py / modeling_deepseek_v3.py.

    Layer i has an MoE FFN when i ≥ ``first_k_dense_replace`` (transformers' rule; DeepSeek's own
    code also asks i % moe_layer_freq == 0, the same for its published freq of 1).
    """

    tie_word_embeddings: Flag
    n_routed_experts: ExpertCountOrZero
    num_experts_per_tok: ExpertCount
    first_k_dense_replace: LayerIndex
    num_nextn_predict_layers: LayerIndex


@family(
    "deepseek_v2",
    transformers="DeepseekV2Config",
    architecture="DeepSeek-V2",
    model_class="DeepseekV2ForCausalLM",
    heads_divide_hidden=True,  # DeepseekV2Config.validate_architecture
    routing=("num_experts_per_tok", "n_routed_experts"),
)
class DeepseekV2Config(DeepseekLayers):
    """configuration_deepseek_v2.py: V3's MLA and dense-then-MoE stack with V2's defaults; queries may
    skip the low-rank latent (q_lora_rank null: q_proj); the router has no correction bias, and there
    are no multi-token-prediction layers."""

    tie_word_embeddings: Flag
    n_routed_experts: ExpertCountOrZero
    num_experts_per_tok: ExpertCount | None
    first_k_dense_replace: LayerIndex

    def checkpoint_extras(self) -> tuple[CheckpointExtra, ...]:
        return self.rotary_extras()


@family("sarvam_mla", transformers="SarvamMLAConfig", architecture="Sarvam-MLA", model_class="DeepseekV3ForCausalLM")
class SarvamMLAConfig(DeepseekV3Config):
    """configuration_sarvam_mla.py / modular_sarvam_mla.py (Sarvam-105B): DeepSeek-V3's model (transformers builds
    DeepseekV3ForCausalLM) with Sarvam's defaults: queries without a latent (q_lora_rank null), 128 experts after one
    dense layer, no multi-token-prediction layers. Its configs may use the remote code's names (num_experts,
    num_shared_experts, num_mtp_layers); a head_dim or q_head_dim key is ignored, as transformers ignores it."""


@family(
    "deepseek_v32",
    transformers="DeepseekV32Config",
    architecture="DeepSeek-V3.2",
    model_class="DeepseekV32ForCausalLM",
    read_beyond={
        "num_nextn_predict_layers": "the checkpoints' multi-token-prediction layers (a key transformers does not read)"
    },
    other_names={
        "n_routed_experts": "num_experts read first, as ffncalc read it before the record: no name of DeepseekV32Config"
    },
)
class DeepseekV32Config(MlpLayerTypes, DeepseekV3Config):
    """configuration_deepseek_v32.py / modeling_deepseek_v32.py: V3's MLA (queries always through the latent)
    with a lightning indexer in every layer, which picks the index_topk keys the attention reads; each
    layer's FFN as mlp_layer_types says (default: dense below first_k_dense_replace, MoE above).

    The indexer: wq_b (q_lora_rank → index_n_heads · index_head_dim), wk (hidden → index_head_dim) and its
    LayerNorm, weights_proj (hidden → index_n_heads). Checkpoints store num_nextn_predict_layers
    multi-token-prediction layers after the last, as V3's (a key transformers does not read).
    """

    informational_fields = DeepseekV3Config.informational_fields | {"num_nextn_predict_layers"}

    n_routed_experts: ExpertCountOrZero = Field(
        validation_alias=AliasChoices("num_experts", "n_routed_experts", "num_local_experts")
    )
    q_lora_rank: Width
    mlp_layer_types: list[Literal["dense", "sparse"]] | None
    index_topk: Width
    index_head_dim: Width
    index_n_heads: HeadCount
    # Not a field of DeepseekV32Config: the checkpoint's multi-token-prediction layers.
    num_nextn_predict_layers: LayerIndex = 0

    _check_mlp_layer_types = entries_check("mlp_layer_types", exact=True)  # validate_layer_type: one per layer
    _check_rope = even_rope_check()

    @derives("mlp_layer_types", "first_k_dense_replace dense layers, then sparse")
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


# DeepSeek-V4's names as its checkpoints store them (transformers' conversion, reverted), relative to model.layers.{i}.
V4_ATTENTION = names(
    q_a="attn.wq_a",
    q_a_layernorm="attn.q_norm",
    q_b="attn.wq_b",
    k="attn.wkv",
    k_norm="attn.norm",
    o_a="attn.wo_a",
    o_b="attn.wo_b",
    sinks="attn.attn_sink",
)
V4_MOE = names(router="ffn.gate", experts="ffn.experts.{e}")
V4_EXPERT = names(gate="w1", up="w3", down="w2")
V4_SHARED = names(gate="ffn.shared_experts.w1", up="ffn.shared_experts.w3", down="ffn.shared_experts.w2")
V4_INDEXER = names(wq_b="attn.indexer.wq_b", weights_proj="attn.indexer.weights_proj")
CSA, HCA, SLIDING = "compressed_sparse_attention", "heavily_compressed_attention", "sliding_attention"
V4_LAYER_TYPES = {0: SLIDING, 4: CSA, 128: HCA}  # the legacy compress_ratios, per layer


def compressor_names(module: str) -> Names:
    """A V4 compressor's kv and gate projections, position bias (ape) and RMSNorm under MODULE."""
    return names(kv=f"{module}.wkv", gate=f"{module}.wgate", position_bias=f"{module}.ape", norm=f"{module}.norm")


@family(
    "deepseek_v4",
    transformers="DeepseekV4Config",
    architecture="DeepSeek-V4",
    model_class="DeepseekV4ForCausalLM",
    heads_divide_hidden=False,  # head_dim is a field; nothing checks hidden_size against the heads
    routing=("num_experts_per_tok", "n_routed_experts"),
    read_beyond={
        "compress_ratios": "Not fields of DeepseekV4Config: legacy keys its __post_init__ folds into layer_types, mlp_layer_types and compress_rates.",
        "compress_rate_csa": "Not fields of DeepseekV4Config: legacy keys its __post_init__ folds into layer_types, mlp_layer_types and compress_rates.",
        "compress_rate_hca": "Not fields of DeepseekV4Config: legacy keys its __post_init__ folds into layer_types, mlp_layer_types and compress_rates.",
        "num_hash_layers": "Not fields of DeepseekV4Config: legacy keys its __post_init__ folds into layer_types, mlp_layer_types and compress_rates.",
    },
)
class DeepseekV4Config(DecoderConfig):
    """configuration_deepseek_v4.py / modeling_deepseek_v4.py: every layer attends within a sliding window through one
    key-value head whose keys are also its values (kv_proj → head_dim, an RMSNorm), queries through a latent (q_a,
    q_a_norm, q_b), a sink per head, and a grouped low-rank output (o_a block-diagonal over o_groups, then o_b).
    layer_types add compressed keys: CSA pools every compress rate (4) tokens into an entry of two overlapping
    series and an indexer of its own compressed keys picks index_topk of them; HCA pools every 128 tokens and reads
    all its entries. Every FFN is an MoE (a shared MLP of moe_intermediate_size whatever n_shared_experts says); the
    first num_hash_layers route by a tid2eid table (hash_moe), a buffer, as the others' e_score_correction_bias is.

    The hidden state travels as hc_mult streams: before attention and before the FFN a hyper-connection projects
    them (fn: hc_mult · hidden → (2 + hc_mult) · hc_mult, with base and scale) into the weights that collapse,
    expand and mix them; the model's hc_head collapses them before the final norm.
    """

    informational_fields = DecoderConfig.informational_fields | {"num_nextn_predict_layers"}
    attention_names = V4_ATTENTION
    moe_names = V4_MOE
    expert_names = V4_EXPERT
    model_names = ModelNames(embed_tokens="model.embed_tokens", final_norm="model.norm", lm_head="head")

    num_hidden_layers: LayerCount
    tie_word_embeddings: Flag
    mlp_bias: Flag
    hidden_act: Name
    moe_intermediate_size: Width
    head_dim: Width
    q_lora_rank: Width
    num_experts_per_tok: ExpertCount
    # transformers builds 0 routed experts (which no token can be routed to); ffncalc refuses it.
    n_routed_experts: ExpertCount
    max_position_embeddings: PositionCount
    layer_types: (
        list[Literal["sliding_attention", "compressed_sparse_attention", "heavily_compressed_attention"]] | None
    )
    compress_rates: dict[str, Annotated[int, Field(strict=True)]] | None
    hc_mult: HeadCount
    mlp_layer_types: list[Literal["hash_moe", "moe"]] | None
    sliding_window: Width
    o_groups: HeadCount
    o_lora_rank: Width
    index_n_heads: HeadCount
    index_head_dim: Width
    index_topk: Width
    num_nextn_predict_layers: LayerIndex
    compress_ratios: list[Literal[0, 4, 128]] | None = None
    compress_rate_csa: Width | None = None
    compress_rate_hca: Width | None = None
    num_hash_layers: LayerIndex | None = None
    # Not read: intermediate_size is moe_intermediate_size (attribute_map); the modeling code uses one key-value head
    # whatever num_key_value_heads says, and no attention bias.

    @model_validator(mode="before")
    @classmethod
    def _keep_the_first_layers(cls, raw: Any) -> Any:
        """__post_init__ keeps the first num_hidden_layers entries of layer_types and mlp_layer_types (more are fine)."""
        count = (
            raw.get("num_hidden_layers", cls.model_fields["num_hidden_layers"].default)
            if isinstance(raw, dict)
            else None
        )
        if not isinstance(count, int) or isinstance(count, bool):
            return raw
        lists = {key: raw[key][:count] for key in ("layer_types", "mlp_layer_types") if isinstance(raw.get(key), list)}
        return {**raw, **lists}

    @model_validator(mode="after")
    def _check_v4(self) -> DeepseekV4Config:
        for field, kinds in (("layer_types", self.attention_kinds()), ("mlp_layer_types", self.mlp_kinds())):
            if len(kinds) != self.num_hidden_layers:  # too few: validate_layer_type refuses them
                raise ValueError(f"{field} has {len(kinds)} entries for {self.num_hidden_layers} layers")
        rates = self.rates()
        for kind in sorted(set(self.attention_kinds()) - {SLIDING}):
            if kind not in rates:
                raise ValueError(f"compress_rates has no rate for {kind}, which a layer is")
            if not 1 <= rates[kind] <= MAX_WIDTH:  # transformers builds a rate of 0, whose compressor cannot run
                raise ValueError(
                    f"compress_rates: the rate of {kind} ({rates[kind]}) must be a whole number of tokens, 1 or more"
                )
        return self

    def warnings(self) -> list[str]:
        found = super().warnings()
        width = self.num_attention_heads * self.head_dim
        if width % self.o_groups:
            found.append(
                f"num_attention_heads · head_dim ({width}) is not a multiple of o_groups ({self.o_groups}): transformers "
                f"builds o_a with {width // self.o_groups} inputs per group, but the attention cannot run"
            )
        return found

    @derives("layer_types", "compress_ratios (0, 4, 128 per layer), else 2 HCA layers then CSA and HCA alternating")
    def attention_kinds(self) -> list[str]:
        """layer_types, or the legacy compress_ratios, or transformers' default: 2 HCA layers, then CSA and HCA in turn."""
        count = self.num_hidden_layers
        if self.layer_types is not None:
            return list(self.layer_types[:count])
        if self.compress_ratios is not None:
            return [V4_LAYER_TYPES[ratio] for ratio in self.compress_ratios[:count]]
        return [HCA] * min(count, 2) + [CSA if i % 2 else HCA for i in range(max(count - 2, 0))]

    @derives("mlp_layer_types", "num_hash_layers (3) hash_moe layers, then moe")
    @per_config
    def mlp_kinds(self) -> list[str]:
        """mlp_layer_types, or num_hash_layers (3) hash-routed layers, then top-k routed ones."""
        count = self.num_hidden_layers
        if self.mlp_layer_types is not None:
            return list(self.mlp_layer_types[:count])
        hashed = 3 if self.num_hash_layers is None else self.num_hash_layers
        return ["hash_moe"] * min(count, hashed) + ["moe"] * max(0, count - hashed)

    @derives("compress_rates", "CSA 4 and HCA 128, or compress_rate_csa / compress_rate_hca")
    def rates(self) -> dict[str, int]:
        """compress_rates (default CSA 4, HCA 128), with the legacy compress_rate_csa / compress_rate_hca folded in."""
        rates = dict(self.compress_rates) if self.compress_rates is not None else {CSA: 4, HCA: 128}
        if self.compress_rate_csa is not None:
            rates[CSA] = self.compress_rate_csa
        if self.compress_rate_hca is not None:
            rates[HCA] = self.compress_rate_hca
        return rates

    def unused_fields(self) -> set[str]:
        kinds = set(self.attention_kinds())
        unused = set() if CSA in kinds else {"index_n_heads", "index_head_dim", "index_topk"}
        unused |= {"compress_rates"} if kinds == {SLIDING} else set()
        return unused | self.undeclared_keys  # legacy keys: a config without them uses the fields' own defaults

    def compressor(self, kind: str, module: str, head_dim: int) -> Compressor:
        """CSA's entries pool two overlapping series (2 · head_dim per token); HCA's one."""
        return Compressor(self.rates()[kind], head_dim, compressor_names(module), series=2 if kind == CSA else 1)

    def v4_attention(self, kind: str) -> Attention:
        indexer = None
        if kind == CSA:
            indexer = Indexer(
                heads=self.index_n_heads,
                head_dim=self.index_head_dim,
                q_input=self.q_lora_rank,
                top_k=self.index_topk,
                names=V4_INDEXER,
                compressor=self.compressor(CSA, "attn.indexer.compressor", self.index_head_dim),
            )
        return self.attention(
            self.sliding_window,
            num_kv_heads=1,
            q_bias=False,
            k_bias=False,
            v_bias=False,
            o_bias=False,
            k_norm=self.rms_norm(self.head_dim),
            sinks=True,
            values_are_keys=True,
            q_latent=self.q_lora_rank,
            o_latent=self.o_groups * self.o_lora_rank,
            o_groups=self.o_groups,
            compressor=None if kind == SLIDING else self.compressor(kind, "attn.compressor", self.head_dim),
            indexer=indexer,
        )

    def moe(self):
        width = self.moe_intermediate_size
        return self.moe_ffn(
            self.n_routed_experts,
            self.num_experts_per_tok,
            width,
            shared_width=width,
            shared_names=V4_SHARED,
            shared_bias=self.mlp_bias,
        )

    def hyper_connections(self) -> tuple[Parameter, ...]:
        """Before attention and before the FFN: fn [(2 + hc) · hc, hc · hidden], base [(2 + hc) · hc], scale [3]."""
        hc = self.hc_mult
        mixes = (2 + hc) * hc
        return tuple(
            parameter
            for block in ("attn", "ffn")
            for parameter in (
                Parameter("other", "hyper_connections", f"hc_{block}_fn", (mixes, hc * self.hidden_size), matmul=True),
                Parameter("other", "hyper_connections", f"hc_{block}_base", (mixes,)),
                Parameter("other", "hyper_connections", f"hc_{block}_scale", (3,)),
            )
        )

    def build_layers(self) -> tuple[Layer, ...]:
        norm = self.rms_norm()
        # Each hyper-connection also mixes the hc streams by its hc × hc weights (a matmul of [hc, hc] by
        # [hc, hidden] per token: 2 · hc² · hidden); collapsing and expanding them are elementwise.
        mixing = 2 * (2 * self.hc_mult**2 * self.hidden_size)
        built: dict[str, Layer] = {}
        layers = []
        for kind in self.attention_kinds():  # a hash-routed layer holds what a top-k routed one does (its buffer aside)
            if kind not in built:
                built[kind] = self.layer(
                    self.v4_attention(kind),
                    self.moe(),
                    (("attn_norm", norm), ("ffn_norm", norm)),
                    parameters=self.hyper_connections(),
                    other_flops=mixing,
                )
            layers.append(built[kind])
        return tuple(layers)

    def checkpoint_extras(self) -> tuple[CheckpointExtra, ...]:
        """Each router's buffer: tid2eid [vocab, experts per token] in hash_moe layers, the correction bias in the others."""
        kinds = self.mlp_kinds()
        hashed = tuple(i for i, kind in enumerate(kinds) if kind == "hash_moe")
        routed = tuple(i for i, kind in enumerate(kinds) if kind == "moe")
        extras = []
        if hashed:
            extras.append(
                CheckpointExtra(
                    name="hash router tid2eid",
                    reason=f"{len(hashed)} hash_moe layers × {self.vocab_size} tokens × {self.num_experts_per_tok} "
                    "experts: the fixed token → experts table, a buffer",
                    tensors=(
                        StoredTensor(
                            f"{self.layer_name}.ffn.gate.tid2eid", (self.vocab_size, self.num_experts_per_tok)
                        ),
                    ),
                    per_layer=hashed,
                    buffer=True,
                )
            )
        if routed:
            extras.append(
                CheckpointExtra(
                    name="router e_score_correction_bias",
                    reason=f"{len(routed)} MoE layers × {self.n_routed_experts} experts; a buffer set by load balancing, "
                    "not trained (stored as ffn.gate.bias)",
                    tensors=(StoredTensor(f"{self.layer_name}.ffn.gate.bias", (self.n_routed_experts,)),),
                    per_layer=routed,
                    buffer=True,
                )
            )
        return tuple(extras)

    def to_spec(self) -> ModelSpec:
        hc, hidden = self.hc_mult, self.hidden_size
        head = (  # collapses the hc streams before the final norm: hc_fn [hc, hc · hidden], hc_base [hc], hc_scale [1]
            Extra("other", "model.hc_head.hc_fn", LearnedTensor((hc, hc * hidden), matmul=True)),
            Extra("other", "model.hc_head.hc_base", LearnedTensor((hc,))),
            Extra("other", "model.hc_head.hc_scale", LearnedTensor((1,))),
        )
        return replace(super().to_spec(), extras=head)

    def notes(self) -> list[str]:
        notes = []
        if self.num_nextn_predict_layers:
            notes.append(
                f"num_nextn_predict_layers = {self.num_nextn_predict_layers}: the published checkpoint also stores "
                "multi-token-prediction modules (mtp.*), which transformers does not build; not counted or listed."
            )
        if (self.quantization_config or {}).get("quant_method") == "fp8":
            notes.append(
                "The published checkpoint stores linear weights in FP8 with a scale per 128×128 block, its routed "
                "experts in FP4 (expert_dtype), and keeps the compressors' and indexers' projections in BF16 and "
                "the hyper-connections, sinks and position biases in float32: the stored bytes here take FP8 for "
                "every weight a token multiplies by, BF16 for the rest."
            )
        return notes
