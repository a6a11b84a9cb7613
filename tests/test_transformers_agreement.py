"""ffncalc equals transformers building the same config, for every config transformers built.

The expected figures are transformers 5.24 building each config on torch's meta device
(tools/meta_count.py → tests/expected/transformers/<config>.json): every bundled config, every
synthetic config in tests/configs, and for each supported family the config that holds only its
model_type (transformers' default model of that family). None of them comes from ffncalc.
"""

import re

import pytest

from ffncalc import account
from ffncalc.loading import loaded_from
from ffncalc.source import RawConfig
from ffncalc.values import field_values

from .agreement import built, config_of, digest, loaded, stored_tensors

BUILT = built()
COUNTED = sorted(stem for stem, record in BUILT.items() if "total_params" in record)


TOWERS = ("vision", "audio", "projector")


@pytest.mark.parametrize("stem", COUNTED)
def test_total_equals_transformers(stem):
    record = BUILT[stem]
    report = account(loaded(stem))
    towers = sum(record["components"].get(name, 0) for name in TOWERS)
    assert report.language_model_params == record["total_params"] - towers
    assert report.total_params == record["total_params"]


@pytest.mark.parametrize("stem", COUNTED)
def test_components_equal_transformers(stem):
    record = BUILT[stem]
    report = account(loaded(stem))
    ours = {name: value for name, value in field_values(report.components).items() if value}
    assert ours == record["components"]


@pytest.mark.parametrize("stem", [s for s in COUNTED if BUILT[s]["routed_expert_params"]])
def test_routed_experts_equal_transformers(stem):
    report = account(loaded(stem))
    assert report.moe.routed_expert_params == BUILT[stem]["routed_expert_params"]


@pytest.mark.parametrize("stem", [s for s in COUNTED if "sha256" in BUILT[s].get("checkpoint", {})])
def test_checkpoint_tensors_are_the_ones_transformers_saves(stem):
    """Names and shapes of every tensor transformers would save: its parameters and persistent buffers."""
    record = BUILT[stem]["checkpoint"]
    model = loaded(stem)
    tensors = stored_tensors(model.spec)
    assert (len(tensors), sum(_numel(s) for s in tensors.values())) == (record["tensors"], record["elements"])
    if model.config.model_type in SAVED_IN_EQUAL_CHUNKS:
        tensors = as_saved_in_equal_chunks(tensors, SAVED_IN_EQUAL_CHUNKS[model.config.model_type])
    if model.config.model_type in SAVED_RENAMED:
        tensors = as_saved_renamed(tensors, SAVED_RENAMED[model.config.model_type])
    assert digest(tensors) == record["sha256"]


# transformers 5.24 saves a tensor it concatenated on load (conversion_mapping.py's Concatenate) as equal chunks
# (core_model_loading.Chunk), whatever the sizes it was made of: OLMo Hybrid's q, k and v convolutions (key, key and
# value channels, value twice key by default) come back as three thirds of the fused conv1d. ffncalc keeps the
# checkpoint's own shapes; the record is compared after cutting them as transformers does, so every name and every
# other shape is still held to it.
# Molmo2's token table (vocab_size + additional_vocab_size rows, concatenated from wte.embedding and
# wte.new_embedding) comes back as two halves the same way.
SAVED_IN_EQUAL_CHUNKS = {
    "olmo_hybrid": ("q_conv1d.weight", "k_conv1d.weight", "v_conv1d.weight"),
    "molmo2": ("wte.embedding", "wte.new_embedding"),
}


def as_saved_in_equal_chunks(tensors, suffixes):
    cut = dict(tensors)
    modules = {name.removesuffix(suffix) for name in tensors for suffix in suffixes if name.endswith(suffix)}
    for module in modules:
        parts = [module + suffix for suffix in suffixes]
        rows = sum(tensors[part][0] for part in parts)
        for part in parts:
            cut[part] = (rows // len(parts), *tensors[part][1:])
    return cut


# transformers 5.24 saves a model it built (not loaded) with its load-time renamings reverted: ESM's mapping
# (conversion_mapping.py, "esm") carries the legacy LayerNorm.gamma/beta renaming, so every module named LayerNorm is
# saved with gamma and beta, and the model's one rotary inv_freq under the per-layer pattern it was renamed from, "*"
# and all. ffncalc keeps the names the model's modules have; the record is compared after renaming them as
# transformers does.
SAVED_RENAMED = {
    "esm": (
        (r"(^|\.)LayerNorm\.weight$", r"\1LayerNorm.gamma"),
        (r"(^|\.)LayerNorm\.bias$", r"\1LayerNorm.beta"),
        (r"(^|\.)rotary_embeddings\.inv_freq$", r"\1encoder.layer.*.attention.self.rotary_embeddings.inv_freq"),
    ),
    # Hy4's mapping ("hy_v4") renames the checkpoint's attention gate linear_gate to gate_proj; reverted, it writes
    # every gate_proj as linear_gate, the MLPs' too, which ffncalc names as the model does (gate_proj).
    "hy_v4": ((r"\.gate_proj\.weight$", ".linear_gate.weight"),),
    # Hy4-VL's text mapping is Hy4's (hy_v4_vl_text → hy_v4), with the same gate renaming; in the wrapper and in the
    # text model alone its reversal also writes Hy4's hc_pre.hc_head. (as ffncalc names it, with Hy4) as
    # hc_head.hc_pre.: the reversals of one mapping disagree, and ffncalc keeps Hy4's.
    "hy_v4_vl": (
        (r"\.gate_proj\.weight$", ".linear_gate.weight"),
        (r"(^|\.)hc_pre\.hc_head\.", r"\1hc_head.hc_pre."),
    ),
    "hy_v4_vl_text": (
        (r"\.gate_proj\.weight$", ".linear_gate.weight"),
        (r"(^|\.)hc_pre\.hc_head\.", r"\1hc_head.hc_pre."),
    ),
    # Qianfan-OCR's mapping ("qianfan_ocr") renames the original tower's encoder.layers. to layers. wherever it
    # occurs; reverted, it writes the language model's layers as language_model.model.encoder.layers. too, which the
    # original checkpoints (and ffncalc) name language_model.model.layers.
    "qianfan_ocr": ((r"^language_model\.model\.layers\.", "language_model.model.encoder.layers."),),
}


def as_saved_renamed(tensors, renamings):
    renamed = {}
    for name, shape in tensors.items():
        for pattern, replacement in renamings:
            name = re.sub(pattern, replacement, name)
        renamed[name] = shape
    return renamed


def _numel(shape):
    n = 1
    for size in shape:
        n *= size
    return n


# --- configs with one key left out: transformers' default takes its place ------------------------

# Where transformers fails to build a config for a reason of its own, not the config's (a bug in the
# version the expected figures come from): ffncalc counts these, and they are not compared.
TRANSFORMERS_BUGS = {
    ("databricks__dbrx", "attn_config"): "DbrxAttentionConfig() has no rope_theta, which DbrxAttention reads",
    # ZambaModel ties every hybrid layer's shared_transf to the first one's by a pattern that must match another
    # layer: with tie_word_embeddings and a single hybrid layer, PreTrainedModel refuses the empty tie
    ("synthetic__zamba", "attn_layer_offset"): "a single hybrid layer: ZambaModel's tie of shared_transf matches none",
    ("synthetic__zamba_layer_types", "layers_block_type"): "a single hybrid layer (the default's first 4 layers)",
}
DROPPED = {
    stem: sorted(
        key
        for key in record["dropped"]
        if (stem, key) not in TRANSFORMERS_BUGS
        and "Unrecognized model identifier" not in record["dropped"][key].get("error", "")
    )
    for stem, record in BUILT.items()
    if record.get("dropped")
}


@pytest.mark.parametrize("stem", sorted(stem for stem, keys in DROPPED.items() if keys))
def test_a_config_without_one_key_equals_transformers_or_is_refused_as_transformers_refuses(stem):
    """Each key of the config left out in turn (one test a config: the keys are many and each check is cheap)."""
    disagreements = [
        f"without {key!r}: {problem}" for key in DROPPED[stem] if (problem := _without_key_disagreement(stem, key))
    ]
    assert not disagreements, "\n".join(disagreements)


def _without_key_disagreement(stem: str, key: str) -> str | None:
    """How ffncalc's count of the config without KEY differs from transformers' (None when it does not)."""
    from ffncalc.errors import InvalidConfigError

    expected = BUILT[stem]["dropped"][key]
    config = {k: v for k, v in config_of(stem).items() if k != key}
    raw = RawConfig(data=config, name=stem, source="file", location="config.json")
    try:
        model = loaded_from(raw)
        report = account(model)
    except InvalidConfigError as error:
        return None if "error" in expected else f"refused ({error}), transformers built it"
    if "error" in expected:
        return f"counted {report.total_params}, transformers refused it ({expected['error']})"
    towers = sum(expected["components"].get(name, 0) for name in TOWERS)
    routed = report.moe.routed_expert_params if report.moe else 0
    ours = (report.total_params, report.language_model_params, routed)
    theirs = (expected["total_params"], expected["total_params"] - towers, expected["routed_expert_params"] or 0)
    if ours != theirs:
        return f"(total, language model, routed experts) {ours} != transformers' {theirs}"
    if expected["total_params"] != BUILT[stem]["total_params"]:
        # a key that changes the count, once left out, is among the defaults used: itself, a field it is another
        # name for, the fields nested under it, or a field derived from it
        adapter = type(model.config)
        names = {key} | {
            f for f, info in adapter.model_fields.items() if key in getattr(info.validation_alias, "choices", ())
        }
        listed = report.defaults_used
        if not any(
            d.field.split(".")[-1] in names or d.field.startswith(key + ".") or key in (d.rule or "") for d in listed
        ):
            return f"changes the count but is not among the defaults used {[d.field for d in listed]}"
    return None
