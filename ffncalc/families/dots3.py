"""rednote's dots3 Note text model (dots3_note_text): DeepSeek-V3.2's layers with a per-head output gate and a norm
on the shared rotary key, full layers with a lightning indexer and sliding layers whose MLA has widths of its own."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AliasChoices, Field, model_validator

from ..schema import (
    MAX_LAYERS,
    METADATA_FIELDS,
    ExpertCount,
    ExpertCountOrZero,
    Flag,
    HeadCount,
    LayerCount,
    Name,
    PositionCount,
    Width,
    WidthOrZero,
    derives,
)
from ..spec import (
    Attention,
    CheckpointExtra,
    DenseFfn,
    Layer,
    Linear,
    Mla,
    MoeFfn,
    Norm,
    PatchEmbedding,
    Projection,
    StoredTensor,
    names,
)
from .blocks import SHARED_EXPERTS, entries_check
from .deepseek import DeepseekV32Config
from .multimodal import MultimodalConfig
from .registry import family, tower
from .towers import Tower, TowerConfig, audio_module, tower_module

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


@family(
    "dots3_note_text",
    transformers="Dots3NoteTextConfig",
    architecture="dots3 Note (text)",
    model_class="Dots3NoteForCausalLM",
    # The keys __post_init__ takes from the config, no fields of Dots3NoteTextConfig.
    read_beyond={
        **dict.fromkeys(
            (
                "first_k_dense_replace",
                "moe_layer_freq",
                "use_dsa",
                "use_sliding_window",
                "sliding_window_size",
                "per_layer_config",
                *(f"swa_{name}" for name in (*SLIDING_DEFAULTS, "qk_rope_head_dim")),
            ),
            "no field of Dots3NoteTextConfig: __post_init__ takes it from the config's keys",
        ),
        "num_nextn_predict_layers": "the checkpoints' multi-token-prediction layers (a key transformers does not read)",
    },
    other_names={
        "shared_experts_intermediate_size": "__post_init__ also takes it from a moe_shared_expert_intermediate_size key"
    },
)
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

    sliding_window: Width | None
    n_routed_experts: ExpertCountOrZero  # under Dots3NoteTextConfig's names, not DeepSeek-V3.2's num_experts
    shared_experts_intermediate_size: Width = Field(
        validation_alias=AliasChoices("shared_experts_intermediate_size", "moe_shared_expert_intermediate_size")
    )
    layer_types: Annotated[list[LayerKind], Field(max_length=MAX_LAYERS)] | None
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
        # head_dim is no field of the global layers (MLA's widths are the others): None unless a layer sets it
        widths: dict[str, Any] = {name: getattr(self, name, None) for name in MLA_FIELDS}
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


# --- dots3 Note (dots3_note): the language model above with a MoE vision encoder and an audio encoder ------------

# The names the checkpoints keep (conversion_mapping.py's "dots3_note_vision_encoder" and "dots3_note_audio_encoder",
# transformers 5.24, reverted): norm_1/norm_2, the SwiGLU as fc1 (gate), fc3 (up), fc2 (down), the router as a raw
# tensor gate_weight beside its router_bias buffer, one module per expert.
DOTS3_VISION_ATTENTION = names(
    q="attn.qkv", k="attn.qkv", v="attn.qkv", o="attn.proj", q_norm="attn.q_norm", k_norm="attn.k_norm"
)
DOTS3_VISION_MLP = names(gate="mlp.fc1", up="mlp.fc3", down="mlp.fc2")
DOTS3_VISION_MOE = names(router="mlp.gate_weight", experts="mlp.experts.{e}", parameters=True)
DOTS3_VISION_EXPERT = names(gate="fc1", up="fc3", down="fc2")
DOTS3_AUDIO_ATTENTION = names(q="self_attn.q_proj", k="self_attn.k_proj", v="self_attn.v_proj", o="self_attn.out_proj")
DOTS3_AUDIO_MLP = names(gate="fc1", up="fc1", down="fc2")  # gate_up_proj, saved fused as fc1
# Dots3NoteVisionConfig.__post_init__'s pyramid_num_routed when neither it nor mlp_layer_types is given: 25 dense
# layers, then 4, 8, …, 64 and 64 experts (42 layers).
DEFAULT_PYRAMID = [-1] * 25 + list(range(4, 65, 4)) + [64]
EXPERT_FIELDS = ("num_local_experts", "num_experts_per_tok")


@tower(
    "dots3_note_vision_encoder",
    transformers="Dots3NoteVisionConfig",
    read_beyond=dict.fromkeys(
        ("pyramid_num_routed", "capacity_factor", "per_layer_config"),
        "no field of Dots3NoteVisionConfig: __post_init__ takes it from the config's keys",
    ),
    other_names=dict.fromkeys(
        ("hidden_size", "num_attention_heads", "attention_bias"),
        "the checkpoints' own name (embed_dim, num_heads, use_bias) read first; no attribute_map entry",
    ),
)
class Dots3NoteVisionConfig(TowerConfig):
    """configuration_dots3_note.py (Dots3NoteVisionConfig) / Dots3NoteVisionModel: a biased patch convolution and an
    RMSNorm; blocks of two RMSNorms, attention (qkv fused and proj, biased where attention_bias; an RMSNorm over each
    query and key head) and either a SwiGLU of intermediate_size (mlp_bias) or an MoE (no shared expert) of
    num_local_experts experts of moe_intermediate_size (one module each), a router saved as gate_weight and its
    router_bias buffer; post_trunk_norm; the merger (adapter: a LayerNorm over adapter_in_dim, then
    adapter_merge_size² patches side by side through mlp.0, square, and mlp.2 → adapter_out_dim, biased), which
    transformers keeps inside the tower and counts with it. Which layers are MoE, and their experts: the
    pyramid_num_routed key (a count per layer, ≤ 0 dense; by default 25 dense layers, then 4, 8, …, 64, 64 experts),
    each layer drawing min(num_experts_per_tok, its experts); else mlp_layer_types with num_local_experts (a
    per_layer_config may give a layer its own). num_experts_per_tok defaults to the capacity_factor key (2). Its
    image processor's limits are not in config.json: no image rule."""

    hidden_size: Width = Field(validation_alias=AliasChoices("embed_dim", "hidden_size"))
    intermediate_size: Width
    num_hidden_layers: LayerCount
    num_attention_heads: HeadCount = Field(validation_alias=AliasChoices("num_heads", "num_attention_heads"))
    num_channels: Width
    patch_size: Width
    hidden_act: Name
    moe_intermediate_size: Width
    spatial_merge_size: Width
    attention_bias: Flag = Field(validation_alias=AliasChoices("use_bias", "attention_bias"))
    mlp_bias: Flag
    mlp_layer_types: Annotated[list[Literal["dense", "sparse"]], Field(max_length=MAX_LAYERS)] | None
    num_local_experts: ExpertCount
    num_experts_per_tok: ExpertCount | None
    adapter_in_dim: Width
    adapter_out_dim: Width
    adapter_merge_size: Width
    # Keys __post_init__ reads (not fields of Dots3NoteVisionConfig).
    pyramid_num_routed: Annotated[list[int], Field(max_length=MAX_LAYERS)] | None = None
    capacity_factor: ExpertCount = 2
    per_layer_config: dict[str, dict[str, Any]] | None = Field(None, max_length=MAX_LAYERS)

    @model_validator(mode="after")
    def _check_tower(self) -> Dots3NoteVisionConfig:
        # Dots3NoteVisionConfig.validate_architecture, and what the blocks read by layer index
        if self.hidden_size % self.num_attention_heads:
            raise ValueError("hidden_size must be divisible by num_attention_heads (Dots3NoteVisionConfig requires it)")
        if self.adapter_in_dim != self.hidden_size:
            raise ValueError("adapter_in_dim must match hidden_size (Dots3NoteVisionConfig requires it)")
        if self.adapter_merge_size != self.spatial_merge_size:
            raise ValueError("adapter_merge_size must match spatial_merge_size (Dots3NoteVisionConfig requires it)")
        kinds = self.kinds()
        if len(kinds) < self.num_hidden_layers:
            raise ValueError(
                f"the vision encoder has {self.num_hidden_layers} layers but its mlp_layer_types (or pyramid_num_routed"
                f", 42 entries by default) has {len(kinds)}"
            )
        if self.mlp_bias and "sparse" in kinds[: self.num_hidden_layers]:
            raise ValueError("mlp_bias: the stacked experts require mlp_bias false (Dots3NoteVisionConfig requires it)")
        for key, values in self.overrides().items():
            if not (key.isdigit() and int(key) < self.num_hidden_layers):
                raise ValueError(f"per_layer_config: {key!r} is not a layer index below {self.num_hidden_layers}")
            if unknown := sorted(set(values) - set(EXPERT_FIELDS)):
                raise ValueError(f"per_layer_config[{key}]: ffncalc reads only {list(EXPERT_FIELDS)}, not {unknown}")
        return self

    def pyramid(self) -> list[int] | None:
        """The experts of each layer __post_init__ lays out, or None where mlp_layer_types decides."""
        if self.pyramid_num_routed is not None:
            return self.pyramid_num_routed
        return DEFAULT_PYRAMID if self.mlp_layer_types is None else None

    @property
    def top_k(self) -> int:
        return self.num_experts_per_tok if self.num_experts_per_tok is not None else self.capacity_factor

    @derives("mlp_layer_types", "sparse where pyramid_num_routed has experts (25 dense, then 17 MoE layers)")
    def kinds(self) -> list[str]:
        pyramid = self.pyramid()
        if pyramid is None:
            return list(self.mlp_layer_types or [])
        return ["sparse" if count > 0 else "dense" for count in pyramid]

    def overrides(self) -> dict[str, dict[str, Any]]:
        """Each layer's expert overrides: a given per_layer_config, else the pyramid's."""
        if self.per_layer_config is not None:
            return self.per_layer_config
        pyramid = self.pyramid() or []
        return {
            str(i): {"num_local_experts": count, "num_experts_per_tok": min(self.top_k, count)}
            for i, count in enumerate(pyramid)
            if count > 0
        }

    def experts(self, index: int) -> tuple[int, int]:
        """Layer INDEX's experts and the experts a patch draws."""
        fields = {"num_local_experts": self.num_local_experts, "num_experts_per_tok": self.top_k}
        fields.update(self.overrides().get(str(index), {}))
        return fields["num_local_experts"], fields["num_experts_per_tok"]

    def tower(self, prefix: str) -> Tower:
        hidden, heads = self.hidden_size, self.num_attention_heads
        head_dim, bias = hidden // heads, self.attention_bias
        head_norm = Norm("rmsnorm", head_dim)
        attention = Attention(
            hidden, heads, heads, head_dim, head_dim, DOTS3_VISION_ATTENTION, bias, bias, bias, bias, head_norm, head_norm
        )  # fmt: skip
        norm = Norm("rmsnorm", hidden)
        norms = (("norm_1", norm), ("norm_2", norm))
        name = prefix + "blocks.{i}"
        dense = Layer(
            name, attention,
            DenseFfn(hidden, self.intermediate_size, True, self.hidden_act, DOTS3_VISION_MLP, self.mlp_bias),
            norms, stack="vision",
        )  # fmt: skip
        expert = DenseFfn(hidden, self.moe_intermediate_size, True, self.hidden_act, DOTS3_VISION_EXPERT)
        layers: list[Layer] = []
        sparse_by_experts: dict[int, list[int]] = {}  # the MoE layers by their experts
        for index, kind in enumerate(self.kinds()[: self.num_hidden_layers]):
            if kind == "dense":
                layers.append(dense)
                continue
            count, drawn = self.experts(index)
            moe = MoeFfn(hidden_size=hidden, num_experts=count, experts_per_token=min(drawn, count), expert=expert, names=DOTS3_VISION_MOE)  # fmt: skip
            layers.append(Layer(name, attention, moe, norms, stack="vision"))
            sparse_by_experts.setdefault(count, []).append(index)
        merged = self.adapter_in_dim * self.adapter_merge_size**2
        extras = (
            tower_module(prefix + "patch_embed.proj", PatchEmbedding(self.num_channels, (self.patch_size,) * 2, hidden, True)),
            tower_module(prefix + "patch_embed.norm", norm),
            tower_module(prefix + "post_trunk_norm", norm),
            tower_module(prefix + "adapter.ln_q", Norm("layernorm", self.adapter_in_dim, bias=True)),
            tower_module(prefix + "adapter.mlp.0", Linear(merged, merged, True)),
            tower_module(prefix + "adapter.mlp.2", Linear(merged, self.adapter_out_dim, True)),
        )  # fmt: skip
        buffers = tuple(
            CheckpointExtra(
                "vision router_bias",
                f"{len(indices)} MoE layers × {count} experts; a buffer set by load balancing, not trained",
                (StoredTensor(name + ".mlp.router_bias", (count,)),),
                per_layer=tuple(indices),
                buffer=True,
            )
            for count, indices in sparse_by_experts.items()
        )
        return Tower(tuple(layers), extras, self.adapter_out_dim, None, checkpoint_extras=buffers)


# Dots3NoteAudioConfig.__post_init__ reads the released checkpoints' Whisper-style keys over its own.
WHISPER_KEYS = {
    "d_model": "hidden_size",
    "encoder_attention_heads": "num_attention_heads",
    "encoder_layers": "num_hidden_layers",
    "encoder_ffn_dim": "intermediate_size",
    "num_mel_bins": "feature_size",
    "max_source_positions": "max_position_embeddings",
}


@tower("dots3_note_audio_encoder", transformers="Dots3NoteAudioConfig")
class Dots3NoteAudioConfig(TowerConfig):
    """configuration_dots3_note.py (Dots3NoteAudioConfig) / Dots3NoteAudioModel: a convolutional stem (three biased
    3 × 3 convolutions of stride 2, 1 → downsample_hidden_size channels and on, then conv_out without bias from the
    downsample_hidden_size · ⌈feature_size / 8⌉ values left of each frame into hidden_size), bidirectional layers of two
    RMSNorms, attention (q, v and out_proj biased where attention_bias, k_proj hidden → hidden without bias; as many
    key-value heads as heads) and a biased SwiGLU (gate_up_proj fused, saved as fc1); a final RMSNorm and the adapter
    (a LayerNorm over adapter_input_size, then fc1 → adapter_out_dim and fc2, square, biased; saved as
    audio_adapter.proj.0/1/3), which transformers keeps inside the tower and counts with it. The released configs'
    whisper_config block (d_model, encoder_layers …) and whisper_adapter_in_dim / whisper_adapter_out_dim are read
    over the fields, as __post_init__ reads them. An audio clip's FLOPs are not counted."""

    informational_fields = frozenset({"max_position_embeddings", "hop_length", "sampling_rate"})

    hidden_size: Width
    intermediate_size: Width
    num_hidden_layers: LayerCount
    num_attention_heads: HeadCount
    hidden_act: Name
    max_position_embeddings: PositionCount
    sampling_rate: Width
    feature_size: Width
    hop_length: Width
    downsample_hidden_size: Width
    attention_bias: Flag
    adapter_input_size: Width
    adapter_out_dim: Width

    @model_validator(mode="before")
    @classmethod
    def _read_whisper_keys(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        if "whisper_adapter_in_dim" in data:
            data["adapter_input_size"] = data.pop("whisper_adapter_in_dim")
        for legacy in (
            "adapter_output_size",
            "whisper_adapter_out_dim",
        ):  # the second wins, as __post_init__ pops it first
            if legacy in data:
                data["adapter_out_dim"] = data.pop(legacy)
        whisper = data.pop("whisper_config", None) or {}
        if not isinstance(whisper, dict):
            raise ValueError("whisper_config: must be an object")
        data.update({name: whisper[legacy] for legacy, name in WHISPER_KEYS.items() if legacy in whisper})
        return data

    @model_validator(mode="after")
    def _check_widths(self) -> Dots3NoteAudioConfig:
        if self.hidden_size % self.num_attention_heads:
            raise ValueError("audio hidden_size must be divisible by num_attention_heads (Dots3NoteAudioConfig)")
        if self.adapter_input_size != self.hidden_size:
            raise ValueError("adapter_input_size must match hidden_size (Dots3NoteAudioConfig requires it)")
        return self

    def tower(self, prefix: str) -> Tower:
        hidden, heads, bias = self.hidden_size, self.num_attention_heads, self.attention_bias
        head_dim = hidden // heads
        attention = Attention(hidden, heads, heads, head_dim, head_dim, DOTS3_AUDIO_ATTENTION, bias, False, bias, bias)
        ffn = DenseFfn(hidden, self.intermediate_size, True, self.hidden_act, DOTS3_AUDIO_MLP, True)
        norm = Norm("rmsnorm", hidden)
        encoder = prefix + "dots_encoder.speech_encoder."
        layer = Layer(
            encoder + "layers.{i}", attention, ffn, (("self_attn_layer_norm", norm), ("final_layer_norm", norm)),
            stack="audio",
        )  # fmt: skip
        channels = self.downsample_hidden_size
        stem = [(f"conv2d{n + 1}", PatchEmbedding(1 if n == 0 else channels, (3, 3), channels, True)) for n in range(3)]
        adapter = prefix + "audio_adapter.proj."
        extras = (
            *(audio_module(encoder + name, conv) for name, conv in stem),
            audio_module(encoder + "conv_out", Linear(channels * ((self.feature_size + 7) // 8), hidden)),
            audio_module(encoder + "layer_norm", norm),
            audio_module(adapter + "0", Norm("layernorm", self.adapter_input_size, bias=True)),
            audio_module(adapter + "1", Linear(self.adapter_input_size, self.adapter_out_dim, True)),
            audio_module(adapter + "3", Linear(self.adapter_out_dim, self.adapter_out_dim, True)),
        )
        return Tower((layer,) * self.num_hidden_layers, extras, self.adapter_out_dim, None)


# Dots3NoteConfig's own fields: a flat config's other keys are its language model's.
WRAPPER_FIELDS = frozenset(
    {"text_config", "vision_config", "audio_config", "image_token_id", "video_token_id", "audio_token_id"}
)


@family(
    "dots3_note",
    transformers="Dots3NoteConfig",
    architecture="dots3 Note",
    model_class="Dots3NoteForConditionalGeneration",
)
class Dots3NoteConfig(MultimodalConfig):
    """configuration_dots3_note.py / modeling_dots3_note.py (Dots3NoteForConditionalGeneration): the language model
    (dots3_note_text; without text_config, from the config's own keys, as the published checkpoints are written, with
    the wrapper's tie_word_embeddings), the vision encoder and the audio encoder (each with its merger or adapter into
    the text width), saved as the checkpoints name them: the language model at model. and lm_head, the towers at
    vision_encoder. and audio_encoder.; lm_head tied where tie_word_embeddings (default false) says."""

    # AutoModelForCausalLM (the text-generation mapping) builds Dots3NoteForCausalLM: the language model alone.
    text_only_classes = frozenset({"Dots3NoteForCausalLM"})
    text_model_type = "dots3_note_text"
    vision_model_type = "dots3_note_vision_encoder"
    audio_model_type = "dots3_note_audio_encoder"
    language_model_prefix = "model."
    lm_head_name = "lm_head"
    vision_prefix = "vision_encoder."
    audio_prefix = "audio_encoder."

    audio_config: dict[str, Any] | None

    @model_validator(mode="before")
    @classmethod
    def _flat_text_config(cls, raw: Any) -> Any:
        """Without text_config, Dots3NoteConfig.__post_init__ builds the language model from the config's own keys."""
        if isinstance(raw, dict) and raw.get("text_config") is None:
            # each field under its name and its other names (moe_shared_expert_intermediate_size), and the keys
            # the language model reads beyond its class
            names = {
                str(name)
                for field, info in Dots3NoteTextConfig.model_fields.items()
                for name in (field, *getattr(info.validation_alias, "choices", ()))
            }
            keys = (names | Dots3NoteTextConfig.undeclared_keys) - METADATA_FIELDS
            text = {key: value for key, value in raw.items() if key in keys - WRAPPER_FIELDS - {"model_type"}}
            return {**raw, "text_config": {**text, "tie_word_embeddings": raw.get("tie_word_embeddings", False)}}
        return raw

    @model_validator(mode="after")
    def _check_adapters(self) -> Dots3NoteConfig:
        hidden = getattr(self.text, "hidden_size", None)
        for field, block in self.towers.items():
            out = getattr(block, "adapter_out_dim", hidden)
            if out != hidden:
                raise ValueError(
                    f"{field}.adapter_out_dim ({out}) must match the text hidden_size ({hidden}), as transformers requires"
                )
        return self
