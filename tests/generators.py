"""Random valid configs of every supported family, driven by what transformers records of each family.

A family's config is drawn field by field from one table of rules keyed by field name (``RULES``, ``PLAIN``); no
rule names a model_type. A rule draws a field only for the families that have it, which the records say:
- its fields: the fields of its transformers configuration class (tests/expected/transformers_defaults.json), the
  fields ffncalc's adapter reads (test_defaults.declared_fields, the lists test_defaults.py holds to transformers')
  and the keys its modeling code reads past the class (the adapter's undeclared_keys); each written under its own
  name or any the class's attribute_map gives it;
- whether it may be left out or null: transformers' default (None or not), and whether transformers built the
  family's default config (tests/expected/transformers/defaults__*.json);
- the values a field takes where it names a choice (layer kinds, activations, classes): transformers' default and
  every value in the configs transformers built (tests/expected/transformers/, tools/meta_count.py), else the kinds
  the adapter declares.
Sizes are small, so that the engine's invariants are checked on many shapes quickly. A field a family has and no
rule draws is left out: the family's default applies, as it does for a config.json without it. Where transformers
refuses a value a field takes in other families, ``REFUSED`` and ``FIXED_LABELS`` say so, with transformers' source.
"""

from __future__ import annotations

import json
import typing
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from hypothesis import strategies as st

from ffncalc import supported_model_types
from ffncalc.families import adapter_for
from ffncalc.families.registry import index

from .agreement import built, config_of
from .conftest import EXPECTED
from .test_defaults import declared_fields

TRANSFORMERS = json.loads((EXPECTED / "transformers_defaults.json").read_text())["classes"]
SKIP = object()  # a rule's answer when the family is better left with its default


@cache
def recorded_values() -> dict[str, dict[str, list[Any]]]:
    """model_type → field → the distinct values of that field in every config (or nested config naming that
    model_type) that transformers built."""
    values: dict[str, dict[str, dict[str, Any]]] = defaultdict(lambda: defaultdict(dict))

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            model_type = node.get("model_type")
            if isinstance(model_type, str):
                for key, value in node.items():
                    values[model_type][key][json.dumps(value, sort_keys=True)] = value
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    for config in built_configs():
        walk(config)
    return {mt: {key: list(found.values()) for key, found in fields.items()} for mt, fields in values.items()}


@cache
def family_fields(model_type: str) -> frozenset[str]:
    """The names a family's config holds its fields under: its transformers class's fields, and the fields ffncalc's
    adapter reads by a name of their own (older keys transformers folds in); not the attribute_map's other names for
    them, so that no field is drawn twice."""
    known = TRANSFORMERS.get(model_type, {"fields": {}, "attribute_map": {}})
    names = set(known["fields"]) | {"tie_word_embeddings"}  # every configuration class takes it
    names |= {name for name, _, _ in declared_fields(model_type)} - set(known["attribute_map"])
    return frozenset(names | adapter(model_type).undeclared_keys)  # keys the modeling code reads past the class


def adapter(model_type: str) -> Any:
    return adapter_for(model_type, "towers" if model_type in index("towers") else "families")


@cache
def recorded_classes() -> dict[str, list[str]]:
    """model_type → the classes transformers built from configs of that type (a class decides the heads)."""
    classes: dict[str, list[str]] = defaultdict(list)
    for stem, record in built().items():
        model_type = config_of(stem).get("model_type")
        if "model_class" in record and record["model_class"] not in classes[model_type]:
            classes[model_type].append(record["model_class"])
    return classes


@cache
def built_configs() -> tuple[dict[str, Any], ...]:
    """Every config transformers built a model from."""
    return tuple(config_of(stem) for stem, record in built().items() if "total_params" in record)


@cache
def default_builds(model_type: str) -> bool:
    """Whether transformers built the family's default config, {"model_type": …} alone."""
    return "error" not in built().get(f"defaults__{model_type}", {})


@cache
def required(model_type: str, name: str) -> bool:
    """A field without which transformers cannot build the family: its class leaves it None, the default config
    failed to build, and every config transformers built gives it."""
    known = TRANSFORMERS.get(model_type, {"fields": {}})["fields"]
    if default_builds(model_type) or known.get(name, 0) is not None:
        return False
    of_type = [config for config in built_configs() if config.get("model_type") == model_type]
    return bool(of_type) and all(name in config for config in of_type)


def nullable(model_type: str, name: str) -> bool:
    """Whether the family's class defaults the field to None (so a config may say null)."""
    return TRANSFORMERS.get(model_type, {"fields": {}})["fields"].get(name) is None


def nested_type(model_type: str, name: str) -> str | None:
    """The model_type of a wrapper's nested config (text_config …): as its recorded configs name it, else as its
    adapter does."""
    for value in choices(model_type, name):
        if isinstance(value, dict) and isinstance(value.get("model_type"), str):
            return value["model_type"]
    attribute = {"text_config": "text_model_type", "vision_config": "vision_model_type"}.get(name, "audio_model_type")
    return getattr(adapter(model_type), attribute, "") or None


@cache
def choices(model_type: str, name: str) -> list[Any]:
    """transformers' default of a field, then every value of it in the configs transformers built of the family."""
    known = TRANSFORMERS.get(model_type, {"fields": {}})["fields"]
    found = [known[name]] if known.get(name) is not None else []
    for value in recorded_values().get(model_type, {}).get(name, []):
        if value is not None and value not in found:
            found.append(value)
    return found


def kinds(model_type: str, name: str) -> list[str]:
    """The kinds a per-layer list (layer_types, mlp_layer_types …) holds in the family's recorded configs, else the
    kinds the family's adapter declares for it (list[Literal[…]])."""
    declared = adapter(model_type).model_fields.get(name)
    valid = literals(declared.annotation) if declared is not None else set()
    found = sorted({kind for value in choices(model_type, name) if isinstance(value, list) for kind in value})
    if valid:  # a recorded config's own spelling the adapter normalises away (Dory's saved "mlp" entries) is no kind
        found = [kind for kind in found if kind in valid]
    return found or sorted(valid)


def literals(annotation: Any) -> set[str]:
    """The strings of every Literal inside ANNOTATION (list[Literal["a", "b"]] | None → {"a", "b"})."""
    if typing.get_origin(annotation) is typing.Literal:
        return {arg for arg in typing.get_args(annotation) if isinstance(arg, str)}
    return {value for arg in typing.get_args(annotation) for value in literals(arg)}


# Families whose transformers class refuses a stack of one layer kind, with where it says so: their layer_types are
# drawn to hold both kinds (and at least two layers).
MIXED_KINDS = {
    "olmo_hybrid": "transformers 5.24 configuration_olmo_hybrid.py: layer_types must hold linear and full attention",
}
# Families whose layer_types must hold a full-attention layer, with where transformers says so.
NEEDS_FULL = {
    "neomme": "transformers 5.24 configuration_neomme.py validate_layer_type: at least one full_attention layer",
}

# Fields a family's transformers class requires to be equal, with where it says so: the second takes the first's value.
EQUAL_FIELDS = {
    "dots3_note_text": (
        ("num_attention_heads", "num_key_value_heads"),
        "transformers 5.24 configuration_dots3_note.py validate_architecture: every head has its keys and values",
    ),
    "internlm3": (
        ("attention_bias", "mlp_bias"),  # config.json's qkv_bias and bias
        "transformers 5.24 builds InternLM3 with Llama's layer: one switch (tests/test_family_internlm3.py)",
    ),
    "squeezebert": (
        ("hidden_size", "embedding_size"),
        "transformers 5.24 modeling_squeezebert.py: SqueezeBertEncoder asserts embedding_size == hidden_size",
    ),
}
# Greatest values a family allows a field, another field's value, with why.
AT_MOST_FIELD = {
    ("mobilebert", "embedding_size"): (
        "hidden_size",
        "transformers 5.24 MobileBertLMPredictionHead builds Linear(vocab_size, hidden_size - embedding_size)",
    ),
}

# Least values a family needs of a field, with why: MPNet's padding row is 1 (its tables need two rows).
AT_LEAST = {
    ("mpnet", "vocab_size"): (2, "MPNetConfig's pad_token_id 1 is a row of the token table"),
    ("mpnet", "max_position_embeddings"): (2, "MPNet's position ids start after its padding row 1"),
    ("granite_speech", "window_size"): (1, "GraniteSpeechEncoderProjector cuts the encoder's frames into windows"),
    ("granite_speech_plus", "window_size"): (1, "GraniteSpeechEncoderProjector cuts the encoder's frames into windows"),
    ("cosmos3_edge_text", "head_dim"): (
        128,
        "transformers 5.24 Cosmos3EdgeTextConfig.validate_architecture: the default mrope_section [24, 20, 20] must "
        "sum to head_dim / 2",
    ),
}

# Most values a family takes of a field, with where transformers says so.
AT_MOST = {
    ("zaya", "num_experts_per_tok"): (1, "transformers 5.24 configuration_zaya.py validate_architecture: only 1"),
    ("cosmos3_edge_text", "head_dim"): (
        128,
        "transformers 5.24 Cosmos3EdgeTextConfig.validate_architecture: the default mrope_section [24, 20, 20] must "
        "sum to head_dim / 2",
    ),
}

# Values a family's transformers class refuses though its field takes them elsewhere, with where it says so.
REFUSED = {
    ("dbrx", "tie_word_embeddings"): (True, "transformers 5.24 configuration_dbrx.py __post_init__ raises ValueError"),
}
# Families whose key-value heads must be even, with where transformers says so: both head counts drawn doubled.
EVEN_KV_HEADS = {
    "diffllama": "transformers 5.24 modeling_diffllama.py: DiffLlamaAttention splits the value heads in two halves",
}
# Key-value heads a family's transformers class requires to be its query heads, with where it says so.
NO_GROUPED_QUERIES = {
    "esmc": "transformers 5.24 configuration_esmc.py __post_init__ raises unless num_key_value_heads is the heads",
}


@dataclass
class Draft:
    """A config being drawn: the family, the sizes shared by its fields, and the fields drawn so far."""

    draw: Callable[[st.SearchStrategy[Any]], Any]
    model_type: str
    fields: frozenset[str]
    config: dict[str, Any] = field(default_factory=dict)
    # heads, kv_heads, head_dim, layers, vocab, width, experts, per_token: drawn once, read by many fields
    size: dict[str, int] = field(default_factory=dict)

    def has(self, name: str) -> bool:
        return name in self.fields

    def value(self, name: str) -> Any:
        """A field as drawn, else the family's transformers default."""
        return self.config.get(name, TRANSFORMERS.get(self.model_type, {"fields": {}})["fields"].get(name))

    def maybe(self, strategy: st.SearchStrategy[Any]) -> Any:
        """A value from STRATEGY, or the field left out (the family's default)."""
        return self.draw(st.one_of(st.just(SKIP), strategy))

    def layers(self) -> int:
        return self.size["layers"]

    def per_layer(self, values: list[Any], min_extra: int = 0, max_extra: int = 0) -> list[Any]:
        return self.draw(
            st.lists(st.sampled_from(values), min_size=self.layers() + min_extra, max_size=self.layers() + max_extra)
        )


Rule = Callable[[Draft, str], Any]
RULES: list[tuple[tuple[str, ...], bool, Rule]] = []


def rule(*names: str, first: bool = False) -> Callable[[Rule], Rule]:
    """Register a rule for fields NAMES, applied in the order rules are written: to each of the names the family has,
    or with FIRST only to the first of them it has (one field, several names across families)."""

    def register(function: Rule) -> Rule:
        RULES.append((names, first, function))
        return function

    return register


def divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


# --- sizes every family shares, under the names its class gives them ---------------------------------------------


# FSMT's source and target tables: one size, so tying holds; RoCBert's pronunciation and shape tables: the vocabulary's
# size, so the padding row (drawn within the vocabulary) is a row of each, as torch's padding_idx requires.
@rule("vocab_size", "src_vocab_size", "tgt_vocab_size", "pronunciation_vocab_size", "shape_vocab_size")
def _vocab(d: Draft, name: str) -> Any:
    return d.size["vocab"]


# Families whose padding row is a size, not only a row: never None, with where transformers says so.
PAD_REQUIRED = {"fsmt": "transformers 5.24 modeling_fsmt.py: position tables of max_position_embeddings + pad + 1 rows"}


@rule("pad_token_id")
def _pad(
    d: Draft, name: str
) -> Any:  # inside the vocabulary, or none (some defaults, GLM's 151329, are past a small one)
    rows = st.integers(0, d.size["vocab"] - 1)
    return d.draw(rows if d.model_type in PAD_REQUIRED else st.none() | rows)


# A Gated DeltaNet's key heads and value heads: the value heads a multiple of the key heads, as Lara-mini's
# layers share each key head among linear_num_value_heads // linear_num_key_heads value heads (configuration_lara_mini.py).
@rule("linear_num_key_heads")
def _linear_key_heads(d: Draft, name: str) -> Any:
    return d.size["kv_heads"]


@rule("linear_num_value_heads")
def _linear_value_heads(d: Draft, name: str) -> Any:
    return d.size["heads"]  # a multiple of kv_heads by construction


# Fields drawn from a fixed range, whatever else the config holds.
# Fields drawn from a fixed range whatever else the config holds.
PLAIN: dict[str, st.SearchStrategy[Any]] = {
    "decoder_ffn_dim": st.integers(1, 256),
    "decoder_layers": st.integers(1, 4),
    "num_decoder_layers": st.integers(1, 4),
    "sliding_window_pattern": st.integers(1, 4),
    "global_attn_every_n_layers": st.integers(1, 4),
    "no_rope_layer_interval": st.integers(1, 4),
    "decoder_sparse_step": st.integers(1, 3),
    "interleave_moe_layer_step": st.integers(1, 3),
    "moe_layer_freq": st.integers(1, 3),
    "full_attention_interval": st.integers(1, 3),
    "moe_layer_interval": st.integers(1, 2),
    "zero_expert_num": st.integers(0, 4),
    "shared_intermediate_size": st.integers(0, 64),  # Granite: 0 is no shared MLP
    "prefix_dense_sliding_window_pattern": st.integers(1, 3),
    "kv_lora_rank": st.integers(1, 64),
    "o_lora_rank": st.integers(1, 64),
    "index_n_heads": st.integers(1, 4),
    "linear_num_heads": st.integers(1, 4),
    "hc_mult": st.integers(1, 4),
    "o_groups": st.integers(1, 4),
    "index_topk": st.integers(1, 4096),
    "index_topk_freq": st.integers(1, 3),
    "index_skip_topk_offset": st.integers(0, 3),
    "num_nextn_predict_layers": st.integers(0, 1),
    "mtp_num_hidden_layers": st.integers(0, 1),
    "block_size": st.integers(1, 64),  # MiniMax's lightning attention
    "hidden_size_per_layer_input": st.integers(0, 16),
    "laurel_rank": st.integers(0, 16),
    "global_head_dim": st.sampled_from([4, 8, 16, 32]),
    "altup_num_inputs": st.integers(1, 4),
    "position_buckets": st.integers(-1, 64),
    "max_relative_positions": st.integers(-1, 64),
    "pos_att_type": st.sampled_from([None, "p2c|c2p", "c2p", "p2c", ["c2p", "p2c"]]),
    "window_size": st.integers(0, 512),
    "expansion_ratio": st.integers(1, 8),
    "word_embed_proj_dim": st.integers(1, 128),
    "mamba_head_dim": st.integers(1, 16),
    "mamba_d_state": st.integers(1, 16),
    "state_size": st.integers(1, 16),
    "ssm_state_size": st.integers(1, 16),
    "mamba_d_conv": st.integers(1, 5),
    "conv_kernel": st.integers(1, 5),
    "conv_L_cache": st.integers(1, 5),
    "conv1d_width": st.integers(1, 5),
    "mamba_expand": st.integers(1, 2),
    "time_step_rank": st.sampled_from(["auto", 1, 7]),
    "mamba_dt_rank": st.sampled_from(["auto", 1, 7]),
    "attn_layer_period": st.integers(1, 4),
    "expert_layer_period": st.integers(1, 4),
    "num_mem_blocks": st.integers(1, 3),
    "adapter_rank": st.integers(1, 8),
    "block_multiple_of": st.integers(1, 64),
    "block_ffn_dim_multiplier": st.sampled_from([1.0, 1.5, 0.75]),
    "attention_head_dim": st.integers(1, 32),
    "patch_size": st.integers(1, 16),
    "pos_emb_height": st.integers(1, 8),
    "pos_emb_width": st.integers(1, 8),
    "merge_kernel_size": st.lists(st.integers(1, 3), min_size=2, max_size=2),
    "conf_num_hidden_layers": st.integers(1, 2),
    "inner_group_num": st.integers(1, 3),
    "input_feat_size": st.integers(4, 64),
}


@rule("conv_dim", "conv_stride", "conv_kernel")
def _feature_encoder(d: Draft, name: str) -> Any:
    """A Wav2Vec2-style feature encoder's convolutions (SpeechT5's), one entry each, as many in all three lists
    (transformers 5.24 SpeechT5Config.validate_architecture refuses lists of different lengths); a family whose field
    is one number (a Mamba's conv_kernel) is drawn as PLAIN says."""
    if not isinstance(choices(d.model_type, name)[:1] and choices(d.model_type, name)[0], list):
        return SKIP
    if "conv_layers" not in d.size:
        d.size["conv_layers"] = d.draw(st.integers(1, 3))
    count, most = d.size["conv_layers"], 32 if name == "conv_dim" else 6
    return d.draw(st.lists(st.integers(1, most), min_size=count, max_size=count))


@rule("block_size")
def _block_size(d: Draft, name: str) -> Any:
    """Blocks of tokens (MiniMax's lightning attention, BigBird's, Pegasus-X's local attention): even where a layer
    staggers its blocks by half of one (Pegasus-X's stagger_local_blocks, True unless drawn otherwise; ffncalc refuses an
    odd block there, as transformers cannot split the padded input into blocks)."""
    if d.has("stagger_local_blocks"):
        return 2 * d.draw(st.integers(1, 32))
    return d.draw(PLAIN[name])


@rule(*PLAIN)
def _plain(d: Draft, name: str) -> Any:
    return d.draw(PLAIN[name])


@rule("sliding_window_size")
def _window_size(d: Draft, name: str) -> Any:
    """A key __post_init__ reads (MiMo, dots3: null or 0 allowed), or a field with a default (Inkling): a window."""
    return d.draw(st.none() | st.integers(0, 4096) if nullable(d.model_type, name) else st.integers(1, 4096))


@rule("n_input_layers", "n_output_layers")
def _stage_layers(d: Draft, name: str) -> Any:  # Dory: the input and output stages leave layers to recur
    return d.draw(st.integers(0, d.layers() // 2))


@rule("expand")
def _expand(d: Draft, name: str) -> Any:
    return d.draw(st.integers(1, 2 if d.has("num_heads") and d.has("head_dim") else 3))


@rule("hidden_size", "n_embd", "n_embed", "d_model", "dim", "emb_dim", "embed_dim")  # XLM: emb_dim; Kosmos-2: embed_dim
def _hidden(d: Draft, name: str) -> Any:
    # Mamba-2 splits expand · hidden into its heads: hidden = heads · head_dim / expand
    return d.size["heads"] * d.size["head_dim"] // d.config.get("expand", 1)


@rule("num_layers", "encoder_layers", "num_hidden_layers", "n_layer", "n_layers", first=True)
def _layers(d: Draft, name: str) -> Any:
    if d.model_type in MIXED_KINDS:
        d.size["layers"] = max(d.size["layers"], 2)
    return d.layers()


@rule("num_hidden_groups")
def _layer_groups(d: Draft, name: str) -> Any:  # ALBERT: groups of shared layers, at most one a layer
    return d.draw(st.integers(1, d.layers()))


@rule(
    "num_attention_heads",
    "n_head",
    "num_heads",
    "n_heads",
    "encoder_attention_heads",
    "encoder_num_attention_heads",
    "decoder_num_attention_heads",
    "attention_heads",
)
def _heads(d: Draft, name: str) -> Any:
    return d.size["heads"]


@rule("decoder_attention_heads")
def _decoder_heads(d: Draft, name: str) -> Any:
    return d.draw(st.sampled_from(divisors(d.size["heads"])))


@rule("num_key_value_heads", "num_kv_heads", "encoder_num_key_value_heads", "decoder_num_key_value_heads")
def _kv_heads(d: Draft, name: str) -> Any:
    if d.model_type in NO_GROUPED_QUERIES:
        return d.maybe(st.just(d.size["heads"]))
    if required(d.model_type, name) or not nullable(
        d.model_type, name
    ):  # a default of its own may not divide the heads
        return d.size["kv_heads"]
    return d.maybe(st.just(d.size["kv_heads"]))


@rule("head_dim", "d_kv")
def _head_dim(d: Draft, name: str) -> Any:
    if (d.has("num_heads") and d.has("expand")) or required(d.model_type, name):  # Mamba-2's heads make its width
        return d.size["head_dim"]
    return d.maybe(st.just(d.size["head_dim"]))


# MLP widths a family's class requires even, with where it says so.
EVEN_WIDTHS = {
    "moshi": "transformers 5.24 MoshiGatingMLP: fc1's output is split into two halves of ffn_dim // 2",
    "kyutai_speech_to_text": "transformers 5.24 KyutaiSpeechToTextConfig.validate_architecture: ffn_dim must be even",
}


@rule("intermediate_size", "ffn_dim", "d_ff", "hidden_dim", "encoder_ffn_dim", "ffn_hidden_size")
def _width(d: Draft, name: str) -> Any:
    if any(isinstance(value, list) for value in choices(d.model_type, "intermediate_size")):  # Gemma 3n: per layer
        return d.draw(
            st.just(d.size["width"]) | st.lists(st.integers(1, 512), min_size=d.layers(), max_size=d.layers())
        )
    return 2 * -(-d.size["width"] // 2) if d.model_type in EVEN_WIDTHS else d.size["width"]


@rule("n_inner")
def _n_inner(d: Draft, name: str) -> Any:
    return d.draw(st.none() | st.just(d.size["width"]))


@rule("tie_word_embeddings")
def _tied(d: Draft, name: str) -> Any:
    if d.has("num_mem_blocks"):  # Zamba2: transformers 5.24 shares its blocks only with tied embeddings
        return True
    refused, _ = REFUSED.get((d.model_type, name), (None, ""))
    return d.maybe(st.sampled_from([value for value in (False, True) if value is not refused]))


@rule("max_position_embeddings", "n_positions")
def _positions(d: Draft, name: str) -> Any:
    pad = d.config.get("pad_token_id") or 0  # RoBERTa's positions start past the padding index
    return d.draw(st.integers(pad + 1, pad + 1024))


# --- switches: a bias, a norm, a residual layout --------------------------------------------------------------------

SWITCHES = (
    "attention_bias", "mlp_bias", "attention_out_bias", "use_bias", "use_conv_bias", "use_qkv_bias", "qkv_bias",
    "qk_layernorm", "use_qk_norm", "use_parallel_residual", "use_sliding_window", "parallel_attn", "bias",
    "new_decoder_architecture", "multi_query", "do_layer_norm_before", "no_bias", "router_bias",
    "moe_router_enable_expert_bias", "use_expert_bias", "attention_k_eq_v", "use_double_wide_mlp",
    "enable_moe_block", "norm_bias", "decoder_bias", "classifier_bias", "sinusoidal_pos_embds", "relative_attention",
    "share_att_key", "position_biased_input", "legacy", "summary_use_proj", "summary_proj_to_labels",
    "is_decoder", "share_encoder_decoder_embeddings", "mamba_conv_bias", "mamba_proj_bias", "mamba_rms_norm",
    "projectors_bias", "conv_bias", "block_auto_adjust_ff_dim", "use_shared_attention_adapter", "add_bias_linear",
    "use_clipped_linears",
)  # fmt: skip


@rule(*SWITCHES)
def _switch(d: Draft, name: str) -> Any:
    return d.draw(st.booleans())


@rule("add_cross_attention")
def _cross_attention(d: Draft, name: str) -> Any:
    # BERT's decoders (is_decoder) and StarCoder's multi-head layout (not multi_query) may attend to an encoder
    allowed = d.value("is_decoder") if d.has("is_decoder") else not d.value("multi_query")
    return allowed and d.draw(st.booleans())


# --- choices named by value: layer kinds, activations, window layouts -------------------------------------------------


@rule("hidden_act", "feed_forward_proj", "norm_rel_ebd", "rms_norm_eps")
def _choice(d: Draft, name: str) -> Any:
    found = choices(d.model_type, name)  # or left out: Cohere2-MoE without rms_norm_eps has LayerNorms
    return d.maybe(st.sampled_from(found)) if found else SKIP


# Families whose transformers class refuses a null window once a layer slides, which the layer kinds (drawn after the
# window) may make it: their window is always drawn, with where transformers says so.
WINDOW_NEEDED = {"zaya": "transformers 5.24 configuration_zaya.py: hybrid_sliding layers need sliding_window"}


@rule("sliding_window", "attention_window_size", "local_attention")
def _window(d: Draft, name: str) -> Any:
    if d.model_type in WINDOW_NEEDED:
        return d.draw(st.integers(1, 4096))
    if d.has("sliding_window_pattern") or d.has("num_kv_shared_layers") or d.has("sliding_window_size"):
        return d.draw(st.integers(1, 4096))  # the default layer kinds need a window (EXAONE 4, Gemma 3n/4, MiMo)
    if nullable(d.model_type, name):
        return d.maybe(st.none() | st.integers(1, 4096))
    return d.maybe(st.integers(1, 4096))


@rule("layer_types")
def _layer_types(d: Draft, name: str) -> Any:
    found = kinds(d.model_type, "layer_types")
    if not found:
        return SKIP
    if d.model_type in MIXED_KINDS and len(found) >= 2:
        drawn = d.per_layer(found)
        drawn[0], drawn[-1] = found[0], found[1]  # both kinds, wherever else they fall
        return drawn
    if d.has("num_kv_shared_layers") or required(d.model_type, name):  # Gemma 3n and 4 decide sharing by the kinds
        return d.per_layer(found)
    if d.draw(st.booleans()):
        return d.maybe(st.none())  # the family's own pattern
    drawn = d.per_layer(found, 0, 1 if d.has("compress_rates") else 0)  # DeepSeek-V4 takes one kind past the last
    if d.model_type in NEEDS_FULL and "full_attention" not in drawn:
        drawn[-1] = "full_attention"
    return drawn


@rule("rope_parameters")
def _rope_per_kind(d: Draft, name: str) -> Any:
    """Where transformers builds no config without rope_parameters (Cohere Compass's text model reads one entry per
    kind of layer_types): an entry for each kind drawn, or for each kind the family has; null is no rotary positions."""
    if not required(d.model_type, name):
        return SKIP
    drawn = d.config.get("layer_types") or kinds(d.model_type, "layer_types")
    entry = st.none() | st.just({"rope_type": "default", "rope_theta": 10000.0})
    return {kind: d.draw(entry) for kind in sorted(set(drawn))}


@rule("mlp_layer_types")
def _mlp_layer_types(d: Draft, name: str) -> Any:
    found = kinds(d.model_type, "mlp_layer_types") or ["dense", "sparse"]
    return d.per_layer(found) if d.draw(st.booleans()) else None


@rule("layers_block_type")
def _block_kinds(d: Draft, name: str) -> Any:  # Zamba2
    return d.per_layer(kinds(d.model_type, "layers_block_type"))


@rule("block_types")
def _block_types(d: Draft, name: str) -> Any:  # RecurrentGemma: a pattern repeated over the layers
    return d.draw(st.lists(st.sampled_from(kinds(d.model_type, "block_types")), min_size=1, max_size=3))


@rule("max_window_layers", "first_k_dense_replace", "moe_layer_start_index", "num_dense_layers")
def _first_layers(d: Draft, name: str) -> Any:
    return d.draw(st.integers(0, d.layers()))


@rule("mlp_only_layers")
def _mlp_only(d: Draft, name: str) -> Any:
    return d.draw(st.lists(st.integers(0, d.layers() - 1), unique=True, max_size=d.layers()))


# --- experts --------------------------------------------------------------------------------------------------------


@rule("num_local_experts", "n_routed_experts", "num_experts", "moe_num_experts", first=True)
def _experts(d: Draft, name: str) -> Any:
    return d.size["experts"]


@rule("num_experts_per_tok", "moe_k", "moe_topk", "top_k_experts", first=True)
def _per_token(d: Draft, name: str) -> Any:
    most = d.size["experts"] + d.config.get("zero_expert_num", 0)  # LongCat-Flash may pick identity experts
    if any(isinstance(value, list) for value in choices(d.model_type, name)):  # Hunyuan: one k per layer
        return d.draw(
            st.just(min(d.size["per_token"], most))
            | st.lists(st.integers(1, most), min_size=d.layers(), max_size=d.layers())
        )
    return d.draw(st.integers(1, most))


@rule(
    "moe_intermediate_size", "shared_expert_intermediate_size", "intermediate_size_mlp", "expert_ffn_hidden_size",
    "prefix_dense_intermediate_size", "moe_shared_expert_intermediate_size",
)  # fmt: skip
def _expert_width(d: Draft, name: str) -> Any:
    return d.draw(st.integers(1, 64))


@rule("n_shared_experts", "num_shared_experts", "moe_num_shared_experts")
def _shared_experts(d: Draft, name: str) -> Any:
    return d.draw(st.integers(1 if required(d.model_type, name) else 0, 2))  # dots1: at least one


# --- multi-head latent attention and sparse attention's indexer ----------------------------------------------------


# Families that always build the query latent: A.X K1 (modeling_axk1.py: "No branching on q_lora_rank being None").
ALWAYS_QUERY_LATENT = {"axk1"}


@rule("q_lora_rank")
def _q_lora(d: Draft, name: str) -> Any:
    # the indexer reads the query latent (DeepSeek-V3.2, GLM-5)
    if d.has("index_topk") or d.has("zero_expert_num") or d.model_type in ALWAYS_QUERY_LATENT:
        return d.draw(st.integers(1, 64))
    if not nullable(d.model_type, name):  # a class that always builds the latent (A.X K1) declares no null
        return d.draw(st.integers(1, 64))
    return d.draw(st.none() | st.integers(1, 64))


@rule(
    "qk_nope_head_dim",
    "v_head_dim",
    "index_head_dim",
    "linear_key_head_dim",
    "linear_value_head_dim",
    "linear_head_dim",
)
def _small_width(d: Draft, name: str) -> Any:  # an indexer's heads hold an even rotary part: 2 at least
    return d.draw(st.integers(2 if name == "index_head_dim" else 1, 16))


@rule("qk_rope_head_dim")
def _rope_width(d: Draft, name: str) -> Any:  # rotary halves: even; within an indexer's heads, which rotate it too
    return 2 * d.draw(st.integers(1, min(8, d.config.get("index_head_dim", 16) // 2)))


@rule("compress_rates")
def _compress_rates(d: Draft, name: str) -> Any:  # one rate per compressed kind transformers names
    (default,) = choices(d.model_type, "compress_rates")[:1]
    return {kind: d.draw(st.integers(1, 256)) for kind in default}


# --- Gemma 3n and 4: per-layer inputs, shared keys and values, AltUp -----------------------------------------------


@rule("num_kv_shared_layers")
def _kv_shared(d: Draft, name: str) -> Any:
    """A count transformers accepts for the layer kinds drawn: the layers before the shared ones hold every kind
    (Gemma 4 makes its last layer global: the rule holds with that layer made so too)."""
    drawn = d.config.get("layer_types") or []
    count = len(drawn)
    last_global = drawn[:-1] + ["full_attention"]
    valid = [
        n
        for n in range(count + 1)
        if n == 0 or (set(drawn[: count - n]) == set(drawn) and set(last_global[: count - n]) == set(last_global))
    ]
    return d.draw(st.sampled_from(valid))


@rule("vocab_size_per_layer_input")
def _per_layer_vocab(d: Draft, name: str) -> Any:
    return d.draw(st.integers((d.config.get("pad_token_id") or 0) + 1, 5000))


@rule("num_global_key_value_heads")
def _global_kv_heads(d: Draft, name: str) -> Any:
    return d.maybe(st.integers(1, 4))


@rule("use_bidirectional_attention")
def _bidirectional(d: Draft, name: str) -> Any:
    found = choices(d.model_type, name)
    if all(isinstance(value, bool) for value in found):  # Gemma 3: a switch; Gemma 4: None, "all" or "vision"
        return d.draw(st.booleans())
    return d.draw(st.sampled_from([None, *found]))


@rule("activation_sparsity_pattern")
def _sparsity(d: Draft, name: str) -> Any:
    return d.maybe(st.just(d.per_layer([0.0, 0.95])))


# --- encoders: the class (its heads), labels, token types, DeBERTa's relative positions ---------------------------


@rule("architectures")
def _class(d: Draft, name: str) -> Any:
    classes = recorded_classes().get(d.model_type, [])
    return [d.draw(st.sampled_from(classes))] if len(classes) > 1 else SKIP


# Classes whose heads take a fixed number of labels, with where transformers says so.
FIXED_LABELS = {"DistilBertForQuestionAnswering": (2, "transformers 5.24 modeling_distilbert.py raises unless 2")}


@rule("num_labels")
def _labels(d: Draft, name: str) -> Any:
    (cls,) = d.config.get("architectures") or [None]
    if cls in FIXED_LABELS:
        return d.maybe(st.just(FIXED_LABELS[cls][0]))
    return d.maybe(st.integers(1, 5))


@rule("type_vocab_size")
def _token_types(d: Draft, name: str) -> Any:
    return d.draw(st.integers(0 if choices(d.model_type, name) == [0] or nullable(d.model_type, name) else 1, 4))


@rule("embedding_size", "attention_head_size")
def _narrower(d: Draft, name: str) -> Any:
    sizes = st.integers(1, 64 if name == "embedding_size" else 16)
    return d.draw(st.none() | sizes) if nullable(d.model_type, name) else d.draw(sizes)


@rule("conv_kernel_size")
def _conv_kernel(d: Draft, name: str) -> Any:  # DeBERTa-v2: 0 is no convolution; a Conformer's kernel is ≥ 1
    return d.draw(st.integers(0 if nullable(d.model_type, name) else 1, 3))


@rule("q_groups", "k_groups", "v_groups", "post_attention_groups")
def _hidden_groups(d: Draft, name: str) -> Any:  # SqueezeBERT: grouped convolutions hidden → hidden
    return d.draw(st.sampled_from(divisors(d.size["heads"] * d.size["head_dim"])))


@rule("intermediate_groups", "output_groups", "num_groups")
def _mlp_groups(d: Draft, name: str) -> Any:  # SqueezeBERT's and ConvBERT's grouped MLPs: both widths split
    hidden, width = d.size["heads"] * d.size["head_dim"], d.size["width"]
    return d.draw(st.sampled_from([g for g in divisors(hidden) if width % g == 0]))


@rule("head_ratio")
def _head_ratio(d: Draft, name: str) -> Any:  # ConvBERT: heads // head_ratio heads, which must divide hidden_size
    return d.draw(st.sampled_from(divisors(d.size["heads"])))


@rule("intra_bottleneck_size")
def _bottleneck(d: Draft, name: str) -> Any:  # MobileBERT: the layers' width, split among the heads
    return d.size["heads"] * d.draw(st.integers(1, 16))


@rule("conv_groups")
def _conv_groups(d: Draft, name: str) -> Any:
    hidden = d.size["heads"] * d.size["head_dim"]
    return d.draw(st.sampled_from([g for g in range(1, d.size["heads"] + 1) if hidden % g == 0]))


@rule("decoder_vocab_size")
def _decoder_vocab(d: Draft, name: str) -> Any:  # Marian: a target vocabulary of its own, past the padding index
    return d.draw(st.integers((d.config.get("pad_token_id") or 0) + 1, 5000))


# --- older decoders' own layouts -------------------------------------------------------------------------------------


@rule("attention_types")
def _attention_types(d: Draft, name: str) -> Any:  # GPT-Neo: [[kinds], repeats] groups, one layer each here
    found = sorted({kind for value in choices(d.model_type, name) for group in value for kind in group[0]})
    return [[[kind], 1] for kind in d.per_layer(found or ["global", "local"])]


@rule("attn_config")
def _dbrx_attention(d: Draft, name: str) -> Any:
    return {"kv_n_heads": d.draw(st.sampled_from(divisors(d.size["heads"])))}


@rule("ffn_config")
def _dbrx_ffn(d: Draft, name: str) -> Any:
    experts = d.size["experts"]
    return {
        "ffn_hidden_size": d.size["width"],
        "moe_num_experts": experts,
        "moe_top_k": d.draw(st.integers(1, experts)),
    }


# --- state-space mixers and hybrids ------------------------------------------------------------------------------------


@rule("mamba_n_heads", "n_mamba_heads", "mamba_num_heads")
def _mamba_heads(d: Draft, name: str) -> Any:
    if name == "mamba_n_heads":  # Bamba, Falcon-H1, Granite: heads that divide the mixer's width
        return d.draw(st.sampled_from([1, 2, 4]))
    if d.model_type == "zamba":  # Zamba (v1): heads that divide mamba_expand · hidden_size (validate_architecture)
        width = d.config.get("mamba_expand", 2) * d.config.get("hidden_size", 3712)
        return d.draw(st.sampled_from(divisors(width)[:8]))
    return d.draw(st.integers(1, 8))


@rule("mamba_d_ssm")
def _mamba_d_ssm(d: Draft, name: str) -> Any:
    return d.draw(st.none() | st.builds(lambda n: d.config.get("mamba_n_heads", 1) * n, st.integers(1, 16)))


@rule("mamba_n_groups", "mamba_ngroups", "n_groups")
def _mamba_groups(d: Draft, name: str) -> Any:
    if name == "n_groups" and d.has("mamba_num_heads"):  # Nemotron-H: one group
        return 1
    return d.draw(st.integers(1, 3))


@rule("attn_layer_indices", "full_attn_idxs")
def _attention_indices(d: Draft, name: str) -> Any:
    if name == "full_attn_idxs" and "layer_types" in d.config:  # LFM2: one or the other
        return SKIP
    return [i for i, attends in enumerate(d.per_layer([True, False])) if attends]


@rule("attn_layer_offset", "expert_layer_offset")
def _offset(d: Draft, name: str) -> Any:
    return d.draw(st.integers(0, d.config[name.replace("offset", "period")] - 1))


@rule("lru_width")
def _lru_width(d: Draft, name: str) -> Any:
    return d.draw(st.none() | st.builds(lambda n: d.size["heads"] * n, st.integers(1, 16)))


@rule("hybrid_override_pattern")
def _hybrid_pattern(d: Draft, name: str) -> Any:  # Nemotron-H: one character a layer
    found = sorted({char for value in choices(d.model_type, name) for char in value})
    return "".join(d.per_layer(found))


# --- wrappers and their towers ---------------------------------------------------------------------------------------


@rule("text_config")
def _text(d: Draft, name: str) -> Any:
    text_type = nested_type(d.model_type, name)
    if text_type is None or text_type not in index():  # a block the wrapper reads as its own fields (Pix2Struct's)
        return SKIP
    text = dict(d.draw(family_config(text_type)))
    text.update(TEXT_REQUIRED.get(d.model_type, ({}, ""))[0])
    if d.draw(st.booleans()):
        del text["model_type"]  # the wrapper names its text model
    return text


@rule("encoder", "decoder")
def _stack_block(d: Draft, name: str) -> Any:
    """An encoder-decoder's block: a config of a family its recorded configs name there (the decoder's a decoder that
    may cross-attend, as EncoderDecoderModel's blocks are saved); SKIP for blocks that name none (T5Gemma's)."""
    found = sorted({v["model_type"] for v in choices(d.model_type, name) if isinstance(v, dict) and "model_type" in v})
    if not found:
        return SKIP
    block = dict(d.draw(family_config(d.draw(st.sampled_from(found)))))
    if name == "decoder":
        block.update(is_decoder=True, add_cross_attention=d.draw(st.booleans()))
    return block


@rule("vision_config", "audio_config")
def _tower(d: Draft, name: str) -> Any:
    tower_type = nested_type(d.model_type, name)
    required_tower = (d.model_type, name) in TOWER_REQUIRED
    if tower_type is None or (tower_type not in TOWER_GENERATED and not required_tower):
        return SKIP
    tower = dict(d.draw(family_config(tower_type)))
    del tower["model_type"]
    return tower if required_tower else d.maybe(st.just(tower))


@rule("adaptor_config")
def _adaptor(d: Draft, name: str) -> Any:
    """Fun-ASR-Nano's adaptor: as wide as its language model, its MLP a quarter of that (transformers 5.24
    FunAsrNanoConfig.validate_architecture refuses anything else)."""
    text = d.config.get("text_config")
    hidden = text.get("hidden_size") if isinstance(text, dict) else None
    if not isinstance(hidden, int):
        return SKIP
    return {"hidden_size": hidden, "intermediate_size": hidden // 4, "num_hidden_layers": d.draw(st.integers(1, 2))}


@rule("decoder_config")
def _decoder_block(d: Draft, name: str) -> Any:
    """A decoder block (Canary's, Dia's), heads as drawn. Where the config keeps its vocabulary at the top, the block
    repeats it (transformers 5.24 CanaryConfig.validate_architecture refuses another) and takes attention_bias
    (CanaryDecoderConfig's); a block that holds the only vocabulary draws its own and no attention_bias
    (DiaDecoderConfig has no such field and refuses unknown keys)."""
    heads, head_dim = d.size["heads"], d.size["head_dim"]
    block = {
        "vocab_size": d.config.get("vocab_size", d.size["vocab"]),
        "hidden_size": heads * head_dim,
        "intermediate_size": d.size["width"],
        "num_hidden_layers": d.draw(st.integers(1, 3)),
        "num_attention_heads": heads,
        "num_key_value_heads": d.size["kv_heads"],
        "head_dim": head_dim,
    }
    if d.has("vocab_size"):
        block["attention_bias"] = d.draw(st.booleans())
    return block


@rule("projection_hidden_size")
def _projection(d: Draft, name: str) -> Any:  # Kimi-K2.5: as wide as its tower
    tower = d.config.get("vision_config")
    return tower["hidden_size"] if tower else SKIP


@rule("vocabulary_map")
def _vocabulary_map(d: Draft, name: str) -> Any:  # Chameleon: transformers cannot build the model without it
    found = choices(d.model_type, name)
    return d.draw(st.sampled_from(found)) if found else SKIP


@rule("conf_num_attention_heads")
def _conformer_heads(d: Draft, name: str) -> Any:
    return d.size["heads"]


@rule("num_conv_pos_embedding_groups")
def _position_conv_groups(d: Draft, name: str) -> Any:
    """Groups of a convolutional position embedding over hidden_size channels: a divisor of it (torch's Conv1d refuses
    any other)."""
    hidden = d.config.get("hidden_size")
    return d.draw(st.sampled_from(divisors(hidden))) if isinstance(hidden, int) else SKIP


@rule("audio_pad_token_id")
def _audio_padding_row(d: Draft, name: str) -> Any:
    """Kyutai's speech-to-text: the padding row of its table of vocab_size + num_codebooks · codebook_vocab_size + 1
    rows (its default, 69,569, is that table's last row), or none; torch refuses a padding_idx past the table."""
    rows = d.value("vocab_size") + d.value("num_codebooks") * d.value("codebook_vocab_size") + 1
    return d.draw(st.none() | st.integers(0, rows - 1))


# Wrappers that hold their language model to fixed values of some of its fields, with where transformers says so.
TEXT_REQUIRED = {
    "apertus1p5": (
        {"vocab_size": 266752},
        "transformers 5.24 Apertus1p5Config.validate_architecture: the default audio codes (4,096 from "
        "audio_token_offset 262,344) must lie inside text_config's vocabulary",
    ),
    "hunyuan_vl": (
        {"head_dim": 8},
        "transformers 5.24 cannot build HunYuanVLTextConfig's attention without head_dim (defaults__hunyuan_vl.json)",
    ),
    "granite_docling": (
        {"hidden_size": 1024},
        "transformers 5.24 GraniteDoclingConfig.validate_architecture: text_config.hidden_size must equal the default "
        "tower's out_hidden_size (1024)",
    ),
    "dots3_note": (
        {"hidden_size": 5120},
        "transformers 5.24 Dots3NoteConfig.validate_architecture: the default towers' adapter_out_dim (5120) must "
        "equal text_config.hidden_size",
    ),
    "inkling2": (
        {"hidden_size": 4608},
        "transformers 5.24 Inkling2Config.validate_architecture: the default tower's text_hidden_size (4608) must "
        "equal text_config.hidden_size",
    ),
    "inkling2_loop": (
        {"hidden_size": 2304},
        "transformers 5.24 Inkling2Config.validate_architecture: Inkling2LoopConfig's default tower's "
        "text_hidden_size (2304) must equal text_config.hidden_size",
    ),
    "gemma4_assistant": (
        {
            "hidden_size_per_layer_input": 0,
            "vocab_size_per_layer_input": 0,
            "enable_moe_block": False,
            "use_double_wide_mlp": False,
            "num_kv_shared_layers": 0,  # __post_init__ makes it every layer
        },
        "transformers 5.24 configuration_gemma4_assistant.py validate_architecture raises ValueError otherwise",
    ),
}
# The towers drawn small (others keep the wrapper's default tower): MoonViT and the audio Conformers.
TOWER_GENERATED = {"kimi_k25_vision", "gemma4_audio", "gemma3n_audio"}
# Wrappers whose default tower transformers refuses, so that a config must give one, with where it says so.
TOWER_REQUIRED = {
    ("aya_vision", "vision_config"): "transformers 5.24 SiglipAttention refuses AyaVisionConfig's default tower "
    "(hidden 1152 over 14 heads)",
}


def draft_sizes(draw: Callable[[st.SearchStrategy[Any]], Any]) -> dict[str, int]:
    kv_heads = draw(st.integers(1, 4))
    experts = draw(st.integers(1, 8))
    return {
        "kv_heads": kv_heads,
        "heads": kv_heads * draw(st.integers(1, 4)),
        "head_dim": draw(st.sampled_from([4, 8, 16])),
        "layers": draw(st.integers(1, 6)),
        "vocab": draw(st.integers(1, 5000)),
        "width": draw(st.integers(1, 512)),
        "experts": experts,
        "per_token": draw(st.integers(1, experts)),
    }


@st.composite
def family_config(draw, model_type: str) -> dict[str, Any]:
    """A small valid config of MODEL_TYPE: each rule applied to the fields the family has."""
    sizes = draft_sizes(draw)
    if model_type in EVEN_KV_HEADS:
        sizes.update(kv_heads=2 * sizes["kv_heads"], heads=2 * sizes["heads"])
    d = Draft(draw, model_type, family_fields(model_type), {"model_type": model_type}, sizes)
    for names, first, function in RULES:
        present = [name for name in names if d.has(name)]
        for name in present[:1] if first else present:
            if name in d.config:
                continue
            value = function(d, name)
            if value is not SKIP:
                d.config[name] = value
    for (family, name), (least, _) in AT_LEAST.items():
        if family == model_type and isinstance(d.config.get(name), int):
            d.config[name] = max(d.config[name], least)
    for (family, name), (bound, _) in AT_MOST_FIELD.items():
        if family == model_type and isinstance(d.config.get(name), int) and isinstance(d.config.get(bound), int):
            d.config[name] = min(d.config[name], d.config[bound])
    for (family, name), (most, _) in AT_MOST.items():
        if family == model_type and isinstance(d.config.get(name), int):
            d.config[name] = min(d.config[name], most)
    if model_type in EQUAL_FIELDS:
        fields, _ = EQUAL_FIELDS[model_type]
        drawn = [d.config[field] for field in fields if field in d.config]
        if drawn:  # one drawn value for all, written out so that no default differs
            d.config.update(dict.fromkeys(fields, drawn[0]))
    return {d.draw(st.sampled_from(other_names(model_type, name))): value for name, value in d.config.items()}


@cache
def other_names(model_type: str, name: str) -> list[str]:
    """NAME, then the names its transformers class's attribute_map gives it (BLOOM's n_embed for hidden_size): a
    config may use any of them."""
    attribute_map = TRANSFORMERS.get(model_type, {"attribute_map": {}})["attribute_map"]
    return [name, *sorted(alias for alias, target in attribute_map.items() if target == name)]


@st.composite
def preset_config(draw) -> dict[str, Any]:
    """ffncalc's own format (fixtures/presets): any layout, norm and bias choice."""
    heads = draw(st.integers(1, 8))
    return {
        "model_type": "ffncalc",
        "title": "generated",
        "layout": draw(st.sampled_from(["decoder", "encoder-decoder"])),
        "vocab_size": draw(st.integers(1, 5000)),
        "hidden_size": heads * draw(st.integers(1, 16)),
        "num_layers": draw(st.integers(1, 4)),
        "num_decoder_layers": draw(st.integers(1, 4)),
        "num_heads": heads,
        "ffn_size": draw(st.integers(1, 256)),
        "gated": draw(st.booleans()),
        "attention_bias": draw(st.booleans()),
        "ffn_bias": draw(st.booleans()),
        "norm": draw(st.sampled_from(["layernorm", "rmsnorm"])),
        "final_norm": draw(st.booleans()),
        "learned_positions": draw(st.integers(0, 2048)),
        "tie_word_embeddings": draw(st.booleans()),
    }


GENERATORS = {model_type: family_config(model_type) for model_type in supported_model_types()}
GENERATORS["ffncalc"] = preset_config()
