"""Properties that must hold for every valid config of every family, and errors for every invalid one.

Random configs come from hypothesis. Valid ones must satisfy the accounting invariants; invalid
ones must give one `Error:` line naming the field, a non-zero exit, no traceback and no hang.
"""

import json
import math
import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ffncalc import count_params, load_spec, supported_model_types
from ffncalc.compute import crossover_context, flops_profile, plateau
from ffncalc.tensors import checkpoint_tensors

from .conftest import run_main
from .generators import GENERATORS, RULES, family_fields

# 150 examples a property in CI (seconds); FFNCALC_EXAMPLES=2000 for a longer hunt.
SETTINGS = settings(
    max_examples=int(os.environ.get("FFNCALC_EXAMPLES", "150")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


any_valid_config = st.one_of(*GENERATORS.values())


def test_every_family_has_its_layers_and_vocabulary_drawn():
    # A family whose fields no rule knows would be generated as its transformers defaults alone: a single config.
    drawn = {name for names, _, _ in RULES for name in names}
    undrawn = [
        model_type
        for model_type in supported_model_types()
        if not {"vocab_size", "tgt_vocab_size", "num_hidden_layers", "num_layers", "n_layer", "n_layers"}
        & family_fields(model_type)
        and not {"text_config", "decoder", "decoder_config"} & family_fields(model_type)
    ]
    assert undrawn == []
    assert {"vocab_size", "text_config", "num_hidden_layers"} <= drawn


@SETTINGS
@given(any_valid_config)
def test_every_parameter_is_stored_under_a_name_of_its_own(config):
    # The checkpoint's view (tensors.checkpoint_tensors: layers named by their index in their stack, experts listed
    # one by one, fused parts joined) holds exactly the parameters counted: two tensors given one name would lose
    # elements here, a layer stored twice or not at all would change the sum.
    spec = load_spec(config, "generated")
    stored = checkpoint_tensors(spec)
    assert sum(math.prod(shape) for shape in stored.values()) == count_params(spec).total_params


@SETTINGS
@given(any_valid_config)
def test_each_layer_of_a_stack_is_in_one_group_and_each_part_keeps_its_own_name(config):
    spec = load_spec(config, "generated")
    report = count_params(spec)
    for stack in {layer.stack for layer in spec.layers}:
        in_stack = sum(layer.stack == stack for layer in spec.layers)
        indices = sorted(index for group in report.layers if group.stack == stack for index in group.indices)
        assert indices == list(range(in_stack))
    for group in report.layers:  # parts are keyed "component.part": two parts under one key would drop one
        assert group.params == sum(group.parts.values())


@SETTINGS
@given(any_valid_config)
def test_active_never_exceeds_total(config):
    report = count_params(load_spec(config, "generated"))
    if report.active_params is not None:
        assert 0 < report.active_params <= report.total_params
        assert report.active_params_without_embedding <= report.active_params


@SETTINGS
@given(any_valid_config, st.lists(st.integers(1, 1 << 20), min_size=2, max_size=8))
def test_per_token_flops_never_decrease_with_context(config, contexts):
    profile = flops_profile(load_spec(config, "generated"))
    totals = [profile.fixed + profile.growing(n) for n in sorted(contexts)]
    assert totals == sorted(totals)


@SETTINGS
@given(any_valid_config)
def test_the_crossover_is_where_the_curves_meet(config):
    profile = flops_profile(load_spec(config, "generated"))
    n_star = crossover_context(profile)
    if n_star is None:  # windows cap attention below the FFN, or nothing attends at all
        assert plateau(profile) < profile.ffn or not profile.slopes
        return
    ceil = -((-n_star.numerator) // n_star.denominator)
    assert profile.growing(ceil) >= profile.ffn
    if ceil > 1:
        assert profile.growing(ceil - 1) < profile.ffn
    if n_star.denominator == 1:  # the curves meet there, or a compressed term steps past the FFN there
        steps = any(n_star % rate == 0 for (rate, _), _ in profile.compressed)
        assert profile.growing(int(n_star)) == profile.ffn or n_star == 0 or steps


# --- invalid input ---------------------------------------------------------------------------

SIZE_FIELDS = ["vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads"]
BAD_SIZES = st.one_of(
    st.booleans(),
    st.text(max_size=5),
    st.integers(max_value=0),
    st.integers(min_value=1 << 40),
    st.floats(allow_nan=False, allow_infinity=False),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=2), st.integers(), max_size=2),
    st.none(),
)


def run_on_text(text: str | bytes):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "config.json"
        path.write_bytes(text if isinstance(text, bytes) else text.encode())
        return run_main("params", str(path), "--json")


def assert_one_line_error(run):
    assert run.exit_code != 0
    assert run.stdout == ""
    assert run.stderr.startswith("Error: ")
    assert run.stderr.count("\n") == 1
    assert "Traceback" not in run.stderr


@SETTINGS
@given(st.sampled_from(SIZE_FIELDS), BAD_SIZES, st.sampled_from(["llama", "qwen3", "gemma2", "deepseek_v3", "gpt_oss"]))
def test_a_bad_size_is_an_error_naming_the_field(field, value, model_type):
    config = {
        "model_type": model_type,
        "vocab_size": 100,
        "hidden_size": 64,
        "intermediate_size": 64,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
    }
    config[field] = value
    run = run_on_text(json.dumps(config))
    assert_one_line_error(run)
    assert field in run.stderr


@SETTINGS
@given(st.sampled_from(SIZE_FIELDS))
def test_a_missing_size_takes_transformers_default_and_is_listed(field):
    config = {
        "model_type": "llama",
        "vocab_size": 100,
        "hidden_size": 64,
        "intermediate_size": 64,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
    }
    del config[field]
    run = run_on_text(json.dumps(config))
    assert run.exit_code == 0
    assert field in [default["field"] for default in run.json()["defaults_used"]]


@SETTINGS
@given(st.binary(max_size=200))
def test_arbitrary_bytes_never_crash(blob):
    run = run_on_text(blob)
    if run.exit_code == 0:  # bytes that happen to be a valid config are fine
        json.loads(run.stdout)
    else:
        assert_one_line_error(run)


@SETTINGS
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=4),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    )
)
def test_arbitrary_json_never_crashes(value):
    run = run_on_text(json.dumps(value))
    assert_one_line_error(run)


def test_nan_and_infinity_are_refused_where_a_size_belongs():
    for constant in ("NaN", "Infinity", "-Infinity"):
        config = (
            f'{{"model_type": "llama", "vocab_size": 100, "hidden_size": {constant}, "intermediate_size": 64, '
            '"num_hidden_layers": 2, "num_attention_heads": 4}'
        )
        run = run_on_text(config)
        assert_one_line_error(run)
        assert f"hidden_size: must be a valid integer (got {constant})" in run.stderr


def test_deep_nesting_is_refused_before_parsing():
    run = run_on_text("[" * 100_000 + "]" * 100_000)
    assert_one_line_error(run)
    assert "nested deeper than 64 levels" in run.stderr


def test_a_50_mb_file_is_refused_before_parsing():
    run = run_on_text(b'{"model_type": "' + b"x" * (50 * 1024 * 1024) + b'"}')
    assert_one_line_error(run)
    assert "is too large for a config.json (limit 4,194,304)" in run.stderr


def test_a_list_at_the_top_level_is_refused():
    run = run_on_text("[]")
    assert_one_line_error(run)
    assert "the JSON is a list, not an object" in run.stderr


def test_non_utf8_bytes_are_refused():
    run = run_on_text(b'{"model_type": "\xff"}')
    assert_one_line_error(run)
    assert "not UTF-8 text" in run.stderr
