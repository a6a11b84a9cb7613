"""rednote's dots3 Note text model (dots3_note_text): DeepSeek-V3.2's layers with a per-head output gate and a norm
on the shared rotary key, full layers with a lightning indexer and sliding layers whose MLA has widths of its own."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AliasChoices, Field, model_validator

from ..schema import (
    MAX_LAYERS,
    ExpertCount,
    ExpertCountOrZero,
    HeadCount,
    LayerCount,
    PositionCount,
    Width,
    WidthOrZero,
    derives,
)
from ..spec import Attention, CheckpointExtra, Layer, Mla, MoeFfn, Projection
from .blocks import SHARED_EXPERTS, entries_check
from .deepseek import DeepseekV32Config
from .registry import family

MLA_FIELDS = (
    "num_attention_heads",
    "num_key_value_heads",
    "q_lora_rank",
    "kv_lora_rank",
    "head_dim",
    "qk_nope_head_dim",
    "v_head_dim",
    "qk_rope_head_dim",
)
# Dots3NoteTextConfig.__post_init__'s sliding-layer widths, read from the checkpoints' swa_* keys.
SLIDING_DEFAULTS = {
    "num_attention_heads": 64,
    "num_key_value_heads": 64,
    "q_lora_rank": 1024,
    "kv_lora_rank": 1024,
    "head_dim": 256,
    "qk_nope_head_dim": 192,
    "v_head_dim": 128,
}
LayerKind = Literal["full_attention", "indexed_attention", "sliding_attention"]


@family("dots3_note_text")
class Dots3NoteTextConfig(DeepseekV32Config):
    """configuration_dots3_note.py / modular_dots3_note.py: Dots3NoteTextAttention is DeepSeek-V3's MLA (queries
    through q_lora_rank, always) with k_rope_only_layernorm (an RMSNorm over the shared rotary key) and g_proj (one
    sigmoid gate per head, hidden → heads); indexed_attention layers add V3.2's lightning indexer (reading the query
    latent), sliding_attention layers attend within sliding_window with MLA widths of their own: per_layer_config (by
    layer index) overrides the heads and widths, by default the swa_* keys of the checkpoints' configs (64 heads,
    q_lora_rank and kv_lora_rank 1,024, qk 192 + (swa_head_dim 256 − 192), v 128). layer_types by default: indexed on
    layers 0, 1 and every i % 4 == 1 (use_sliding_window false: all; use_dsa false: full_attention instead), sliding
    the others. mlp_layer_types by default: dense below first_k_dense_replace (1), then sparse where moe_layer_freq
    says (a period, or a list of flags). The MoE: V3.2's router (with its correction-bias buffer) and
    n_routed_experts experts of moe_intermediate_size, a shared MLP of n_shared_experts · shared_experts_intermediate_size.
    The checkpoints' multi-token-prediction layers (layers.46., mtp.) are skipped by transformers: not listed."""

    architecture = "dots3 Note (text)"
    config_class = "Dots3NoteTextConfig"
    default_model_class = "Dots3NoteForCausalLM"
    undeclared_keys = frozenset(
        {
            "first_k_dense_replace",
            "moe_layer_freq",
            "use_dsa",
            "use_sliding_window",
            "sliding_window_size",
            "moe_shared_expert_intermediate_size",
            "per_layer_config",
            "num_nextn_predict_layers",
            *(f"swa_{name}" for name in (*SLIDING_DEFAULTS, "qk_rope_head_dim")),
        }
    )

    vocab_size: Width = 152064
    hidden_size: Width = 5120
    intermediate_size: Width = 13824
    moe_intermediate_size: Width = 1536
    num_hidden_layers: LayerCount = 46
    num_attention_heads: HeadCount = 128
    num_key_value_heads: HeadCount | None = 128
    n_routed_experts: ExpertCountOrZero = Field(
        256, validation_alias=AliasChoices("n_routed_experts", "num_local_experts")
    )
    kv_lora_rank: Width = 512
    q_lora_rank: Width = 1024
    qk_rope_head_dim: Width = 64
    v_head_dim: Width = 128
    qk_nope_head_dim: Width = 128
    num_experts_per_tok: ExpertCount = 8
    max_position_embeddings: PositionCount = 524288
    pad_token_id: int | None = Field(151659, strict=True)
    index_n_heads: HeadCount = 64
    sliding_window: Width | None = None
    shared_experts_intermediate_size: Width = Field(
        1536, validation_alias=AliasChoices("shared_experts_intermediate_size", "moe_shared_expert_intermediate_size")
    )
    layer_types: Annotated[list[LayerKind], Field(max_length=MAX_LAYERS)] | None = None
    # The keys __post_init__ takes from the config (not fields of Dots3NoteTextConfig).
    first_k_dense_replace: int = Field(1, strict=True, ge=0, le=MAX_LAYERS)
    moe_layer_freq: LayerCount | list[int | bool] = 1
    use_dsa: bool | None = None
    use_sliding_window: bool = True
    sliding_window_size: WidthOrZero | None = 512  # null: the sliding layers attend to every key, as transformers
    per_layer_config: dict[str, dict[str, Any]] | None = Field(None, max_length=MAX_LAYERS)
    swa_num_attention_heads: HeadCount = 64
    swa_num_key_value_heads: HeadCount = 64
    swa_q_lora_rank: Width = 1024
    swa_kv_lora_rank: Width = 1024
    swa_head_dim: Width = 256
    swa_qk_nope_head_dim: Width = 192
    swa_v_head_dim: Width = 128
    swa_qk_rope_head_dim: Width | None = None

    _check_layer_types = entries_check("layer_types", exact=True)

    @model_validator(mode="after")
    def _check_layers(self) -> Dots3NoteTextConfig:
        for key, values in (self.per_layer_config or {}).items():
            if not key.isdigit() or int(key) >= self.num_hidden_layers:
                raise ValueError(f"per_layer_config: {key!r} is not a layer index")
            unknown = sorted(set(values) - set(MLA_FIELDS))
            if unknown:
                raise ValueError(f"per_layer_config[{key}]: ffncalc reads only the attention's widths, not {unknown}")
        by_kind: dict[str, dict[str, int]] = {}
        for index, kind in enumerate(self.kinds()):
            widths = self.mla_widths(index)
            if widths["num_key_value_heads"] != widths["num_attention_heads"]:
                raise ValueError("num_key_value_heads must match num_attention_heads (Dots3NoteTextConfig requires it)")
            if (
                kind == "sliding_attention"
                and widths["head_dim"] != widths["qk_nope_head_dim"] + widths["qk_rope_head_dim"]
            ):
                raise ValueError("the sliding layers' head_dim must equal qk_nope_head_dim + qk_rope_head_dim")
            if kind == "indexed_attention" and widths["qk_rope_head_dim"] > self.index_head_dim:
                raise ValueError("qk_rope_head_dim must not exceed index_head_dim (Dots3NoteTextConfig requires it)")
            if by_kind.setdefault(kind, widths) != widths:  # validate_architecture reads the widths by layer type
                raise ValueError(
                    f"per_layer_config: the {kind} layers' widths differ (layer {index}), which transformers refuses"
                )
        if isinstance(self.moe_layer_freq, list) and len(self.moe_layer_freq) < self.num_hidden_layers:
            raise ValueError(
                f"moe_layer_freq has {len(self.moe_layer_freq)} entries for {self.num_hidden_layers} layers"
            )
        return self

    @property
    @derives("sliding_window", "sliding_window_size (512)")
    def window(self) -> int | None:
        return self.sliding_window if self.sliding_window is not None else self.sliding_window_size

    @derives("layer_types", "indexed_attention on layers 0, 1 and i % 4 == 1, sliding_attention the others")
    def kinds(self) -> list[str]:
        dsa = self.use_dsa if self.use_dsa is not None else (None if self.per_layer_config is not None else True)
        if self.layer_types is None:
            full = "full_attention" if dsa is False else "indexed_attention"
            slide = self.use_sliding_window
            count = self.num_hidden_layers
            kinds = [full if not slide or i < 2 or i % 4 == 1 else "sliding_attention" for i in range(count)]
        else:
            kinds = list(self.layer_types)
        if dsa is not None:
            old, new = ("indexed_attention", "full_attention") if not dsa else ("full_attention", "indexed_attention")
            kinds = [new if kind == old else kind for kind in kinds]
        return kinds

    @derives("mlp_layer_types", "dense below first_k_dense_replace (1), then sparse where moe_layer_freq says")
    def default_mlp_kinds(self) -> list[str]:
        freq, first = self.moe_layer_freq, self.first_k_dense_replace

        def sparse(i: int) -> bool:
            return i >= first and (bool(freq[i]) if isinstance(freq, list) else i % freq == 0)

        return ["sparse" if sparse(i) else "dense" for i in range(self.num_hidden_layers)]

    def unused_fields(self) -> set[str]:
        unused = {"first_k_dense_replace", "moe_layer_freq"} if self.mlp_layer_types is not None else set()
        if "sliding_attention" not in self.kinds():
            unused |= {"sliding_window", "sliding_window_size"}
        if self.per_layer_config is not None or "sliding_attention" not in self.kinds():
            unused |= {name for name in type(self).model_fields if name.startswith("swa_")}
        return unused

    def sliding_widths(self) -> dict[str, int]:
        """The sliding layers' widths __post_init__ writes into per_layer_config from the swa_* keys."""
        widths = {name: getattr(self, f"swa_{name}") for name in SLIDING_DEFAULTS}
        rope = self.swa_qk_rope_head_dim
        widths["qk_rope_head_dim"] = rope if rope is not None else widths["head_dim"] - widths["qk_nope_head_dim"]
        return widths

    def mla_widths(self, index: int) -> dict[str, int]:
        """Layer INDEX's attention widths: the global fields, overridden by per_layer_config (or, without one, by the
        sliding widths on sliding layers)."""
        widths = {name: getattr(self, name) for name in MLA_FIELDS}
        widths["num_key_value_heads"] = widths["num_key_value_heads"] or widths["num_attention_heads"]
        if self.per_layer_config is not None:
            widths.update(self.per_layer_config.get(str(index), {}))
        elif self.kinds()[index] == "sliding_attention":
            widths.update(self.sliding_widths())
        return widths

    def dots_attention(self, index: int) -> Attention:
        widths, kind = self.mla_widths(index), self.kinds()[index]
        heads = widths["num_attention_heads"]
        mla = Mla(
            q_lora_rank=widths["q_lora_rank"],
            kv_lora_rank=widths["kv_lora_rank"],
            qk_nope_head_dim=widths["qk_nope_head_dim"],
            qk_rope_head_dim=widths["qk_rope_head_dim"],
            v_head_dim=widths["v_head_dim"],
        )
        biased = self.attention_biased
        return Attention(
            self.hidden_size,
            heads,
            heads,
            widths["qk_nope_head_dim"] + widths["qk_rope_head_dim"],
            widths["v_head_dim"],
            self.attention_names,
            q_bias=biased,
            k_bias=biased,
            o_bias=biased,
            window=self.window if kind == "sliding_attention" else None,
            mla=mla,
            indexer=self.indexer() if kind == "indexed_attention" else None,
        )

    def build_layers(self) -> tuple[Layer, ...]:
        built: dict[tuple[Attention, bool], Layer] = {}
        layers = []
        for index in range(self.num_hidden_layers):
            attention, sparse = self.dots_attention(index), self.sparse(index)
            if (attention, sparse) not in built:
                rope = self.mla_widths(index)["qk_rope_head_dim"]
                norms = (*self.pre_norms(), ("self_attn.k_rope_only_layernorm", self.rms_norm(rope)))
                gate = Projection(
                    "g_proj", "self_attn.g_proj", self.hidden_size, attention.num_heads, component="attention"
                )
                ffn = self.moe() if sparse and self.n_routed_experts else self.gated_ffn()
                built[attention, sparse] = self.layer(attention, ffn, norms, projections=(gate,))
            layers.append(built[attention, sparse])
        return tuple(layers)

    def moe(self) -> MoeFfn:
        width = self.moe_intermediate_size
        return self.moe_ffn(
            self.n_routed_experts,
            self.num_experts_per_tok,
            width,
            shared_width=self.shared_experts_intermediate_size * self.n_shared_experts,
            num_shared_experts=self.n_shared_experts,
            shared_names=SHARED_EXPERTS,
        )

    def checkpoint_extras(self) -> tuple[CheckpointExtra, ...]:
        sparse = tuple(i for i in range(self.num_hidden_layers) if self.sparse(i) and self.n_routed_experts)
        extras = self.rotary_extras()
        return extras + (self.correction_bias(sparse),) if sparse else extras
