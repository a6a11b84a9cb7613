"""What if: --set changes config fields before counting, --sweep counts a field over values, compare puts a variant
beside its original. Every figure is derived by hand in the test from Llama-3.1-8B's config (fixtures/configs)."""

from __future__ import annotations

import json

import pytest

from ffncalc.api import account, load_config
from ffncalc.errors import UsageError
from ffncalc.families import adapter_for
from ffncalc.families.registry import index
from ffncalc.overrides import parse_sweep

from .conftest import run_main

LLAMA = "meta-llama/Llama-3.1-8B"
# Llama-3.1-8B: 8,030,261,248 parameters (Meta's model card; transformers on the meta device).
LLAMA_TOTAL = 8_030_261_248
# One layer: q, o 4096·4096; k, v 4096·1024; gate, up, down 4096·14336; two norms of 4096.
LLAMA_LAYER = 2 * 4096 * 4096 + 2 * 4096 * 1024 + 3 * 4096 * 14336 + 2 * 4096
assert LLAMA_LAYER == 218_112_000


def test_a_wider_ffn_adds_three_matrices_per_layer():
    # 32 layers × 3 matrices × 4,096 × (16,384 − 14,336) = 805,306,368 more parameters.
    run = run_main("params", LLAMA, "--set", "intermediate_size=16384", "--json")
    assert run.exit_code == 0
    assert run.json()["total_params"] == LLAMA_TOTAL + 32 * 3 * 4096 * 2048 == 8_835_567_616
    assert run.json()["overrides"] == ["intermediate_size=16384"]


def test_more_layers_add_whole_layers():
    loaded = load_config(LLAMA, overrides=["num_hidden_layers=40"])
    assert account(loaded).total_params == LLAMA_TOTAL + 8 * LLAMA_LAYER


def test_the_title_says_the_model_was_changed():
    run = run_main("params", LLAMA, "--set", "num_hidden_layers=40")
    assert run.stdout.splitlines()[0].startswith(f"{LLAMA} [changed: num_hidden_layers=40] — Llama")


def test_a_derived_field_follows_what_it_derives_from_when_the_config_leaves_it_out():
    # Llama-3.1-8B's config has no head_dim: transformers takes hidden_size // heads = 5120 // 32 = 160.
    loaded = load_config(LLAMA, overrides=["hidden_size=5120"])
    attention = loaded.spec.layers[0].attention
    assert attention.qk_head_dim == 160
    assert "head_dim follows hidden_size: hidden_size // num_attention_heads = 160 (the config leaves it out)" in (
        loaded.info.notes
    )


def test_a_derived_field_the_config_sets_keeps_its_value(tmp_path):
    config = json.loads(run_main("config", LLAMA).stdout)
    config["head_dim"] = 128
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    loaded = load_config(str(path), overrides=["hidden_size=5120"])
    assert loaded.spec.layers[0].attention.qk_head_dim == 128
    assert any(note.startswith("head_dim keeps the config's 128") for note in loaded.info.notes)


def test_an_unknown_key_is_refused_with_the_nearest_field():
    run = run_main("params", LLAMA, "--set", "intermediat_size=3")
    assert run.exit_code == 2
    assert run.stdout == ""
    assert run.stderr == (
        "Error: --set intermediat_size: intermediat_size is not a field that llama reads; did you mean "
        "intermediate_size?\n"
    )


def test_a_bad_value_gets_the_error_a_file_would_get():
    run = run_main("params", LLAMA, "--set", "num_hidden_layers=0")
    assert run.exit_code != 0
    assert run.stderr == f"Error: {LLAMA}: num_hidden_layers: must be greater than or equal to 1 (got 0)\n"


def test_a_value_is_json_or_a_bare_word():
    loaded = load_config(LLAMA, overrides=["hidden_act=gelu", "head_dim=null", "tie_word_embeddings=true"])
    assert loaded.config.hidden_act == "gelu"
    assert loaded.config.tie_word_embeddings is True
    # tied: the head is the input table, counted once: 128,256 × 4,096 fewer.
    assert account(loaded).total_params == LLAMA_TOTAL - 128_256 * 4096


def test_a_dotted_key_reaches_a_nested_config():
    # Qwen3-VL-4B's language model: 36 layers; four fewer remove four of its layers and nothing else.
    original = account(load_config("Qwen/Qwen3-VL-4B-Thinking"))
    changed = account(load_config("Qwen/Qwen3-VL-4B-Thinking", overrides=["text_config.num_hidden_layers=32"]))
    text = load_config("Qwen/Qwen3-VL-4B-Thinking").config.text_config
    assert text["num_hidden_layers"] == 36
    # Qwen3-VL-4B's text layer (hidden 2560, 32 heads of 128, 8 KV heads, FFN 9728, q/k norms of 128, two norms):
    per_layer = 2560 * 4096 * 2 + 2560 * 1024 * 2 + 3 * 2560 * 9728 + 2 * 128 + 2 * 2560
    assert (text["hidden_size"], text["intermediate_size"], text["num_key_value_heads"]) == (2560, 9728, 8)
    assert original.total_params - changed.total_params == 4 * per_layer


def test_a_key_that_changes_no_count_is_refused_not_ignored():
    run = run_main("params", LLAMA, "--set", "rope_scaling=null")
    assert run.exit_code == 2
    assert run.stderr == (
        "Error: --set rope_scaling: rope_scaling is not a field that llama reads (nothing ffncalc counts depends on it)\n"
    )


def test_a_dotted_key_under_a_plain_field_is_refused():
    run = run_main("params", LLAMA, "--set", "hidden_size.width=3")
    assert run.exit_code == 2
    assert "hidden_size is not a nested config" in run.stderr


@pytest.mark.parametrize("model_type", sorted(t for t in index() if t != "ffncalc"))
def test_every_family_accepts_an_override_of_each_of_its_fields_and_refuses_an_unknown_one(model_type):
    from ffncalc.overrides import Override, check_read

    adapter = adapter_for(model_type)
    config = adapter.model_construct(model_type=model_type)  # unvalidated: some families need fields to build
    superseded = config.superseded_fields()
    for field in type(config).model_fields:
        if field in superseded:  # another field decides it: the override is refused, naming that field
            with pytest.raises(UsageError, match=f"change {superseded[field]} instead"):
                check_read(config, (Override(field, None),))
            continue
        check_read(config, (Override(field, None),))  # no error: a field it declares is a field it reads
    with pytest.raises(UsageError, match="is not a field that"):
        check_read(config, (Override("no_such_field_anywhere", 1),))


def test_config_round_trips_for_every_bundled_model(tmp_path):
    from ffncalc.source import bundled_models

    for name in bundled_models():
        exported = run_main("config", name)
        assert exported.exit_code == 0, (name, exported.stderr)
        path = tmp_path / "config.json"
        path.write_text(exported.stdout)
        assert account(str(path)).total_params == account(name).total_params, name


def test_config_writes_in_every_default_taken_and_the_overrides():
    config = json.loads(run_main("config", LLAMA, "--set", "num_hidden_layers=40").stdout)
    assert config["num_hidden_layers"] == 40
    assert config["head_dim"] == 128  # left out by the file; transformers' hidden_size // heads


def test_a_sweep_has_one_row_per_value_with_the_headline_figures():
    run = run_main("params", LLAMA, "--sweep", "num_hidden_layers=16,32,40", "--json")
    rows = run.json()["rows"]
    assert [row["values"] for row in rows] == [{"num_hidden_layers": n} for n in (16, 32, 40)]
    assert [row["figures"]["total_params"] for row in rows] == [
        LLAMA_TOTAL + (n - 32) * LLAMA_LAYER for n in (16, 32, 40)
    ]


def test_two_sweeps_make_a_grid_in_csv():
    run = run_main(
        "params",
        LLAMA,
        "--sweep",
        "num_hidden_layers=16,32",
        "--sweep",
        "intermediate_size=14336,16384",
        "--format",
        "csv",
    )
    lines = run.stdout.splitlines()
    assert lines[0] == "num_hidden_layers,intermediate_size,total_params,active_params,ffn_params,ffn_share"
    assert lines[4].startswith(f"32,16384,{8_835_567_616},{8_835_567_616},")
    assert len(lines) == 5


def test_gqa_sweep_moves_the_kv_bytes_not_the_flops_crossover():
    # Per token and layer a KV head caches k and v of 128 BF16 elements: 2 × 128 × 2 bytes × 32 layers = 16,384.
    run = run_main("crossover", LLAMA, "--sweep", "num_key_value_heads=1,2,4,8,32", "--json")
    rows = run.json()["rows"]
    assert [row["figures"]["kv_bytes_per_token"] for row in rows] == [16_384 * n for n in (1, 2, 4, 8, 32)]
    # n* = FFN FLOPs / attention-score FLOPs per key: 3·2·4096·14336 / (2·2·32·128) = 21,504 whatever the KV heads.
    assert {row["figures"]["crossover_context"] for row in rows} == {21_504}


@pytest.mark.parametrize("width", [80, 120])
def test_a_sweep_table_and_chart_fit_the_terminal(width, monkeypatch):
    monkeypatch.setenv("COLUMNS", str(width))
    run = run_main("params", LLAMA, "--sweep", "intermediate_size=8192:16384:2048")
    assert run.exit_code == 0
    assert all(len(line) <= width for line in run.stdout.splitlines())
    assert "Total by intermediate_size" in run.stdout
    assert run.stdout.count("│") == 5  # one bar per value: 8192, 10240, 12288, 14336, 16384


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ("num_hidden_layers=1,2,4", (1, 2, 4)),
        ("num_hidden_layers=8:32:8", (8, 16, 24, 32)),
        ("num_hidden_layers=1:64:x2", (1, 2, 4, 8, 16, 32, 64)),
        ("num_hidden_layers=3:40:×2", (3, 6, 12, 24)),
        ('layer_types=["a","b"],["c"]', (["a", "b"], ["c"])),
    ],
)
def test_sweep_values_are_written_as_lists_ranges_or_doublings(text, values):
    assert parse_sweep(text).values == values


@pytest.mark.parametrize("text", ["num_hidden_layers=", "num_hidden_layers=8:4", "num_hidden_layers=1:8:x1", "=3"])
def test_a_sweep_that_names_no_values_is_a_usage_error(text):
    run = run_main("params", LLAMA, "--sweep", text)
    assert run.exit_code == 2
    assert run.stdout == ""
    assert len(run.stderr.splitlines()) == 1


def test_compare_puts_a_variant_beside_its_original():
    rows = run_main("compare", LLAMA, f"{LLAMA}:intermediate_size=16384", "--json").json()
    assert [row["total_params"] for row in rows] == [LLAMA_TOTAL, 8_835_567_616]
    assert rows[1]["model"] == f"{LLAMA} [intermediate_size=16384]"


def test_derive_dim_reads_the_changed_width():
    run = run_main("derive-dim", "--model", LLAMA, "--set", "intermediate_size=16384", "--json")
    assert run.json()["solve"]["target"] == 16384


# --- an override under another name than the config's own key (a field's aliases) ------------------------------


def test_set_num_hidden_layers_on_bloom_changes_what_its_n_layer_would(ffncalc):
    """bloom-560m's config says n_layer = 24; num_hidden_layers is the same field (BloomConfig.attribute_map).

    Hand derivation, h = 1024, vocab 250,880: a BLOOM layer is 2h (input norm) + 3h² + 3h (qkv) + h² + h (dense)
    + 2h (post-attention norm) + 4h² + 4h (h→4h) + 4h² + h (4h→h) = 12h² + 13h = 12,596,224; outside the layers
    the word embeddings 250,880 · 1024 = 256,901,120 and two layer norms 2 · 2h = 4,096. 12 layers:
    256,905,216 + 12 · 12,596,224 = 408,059,904."""
    result = ffncalc("params", "bigscience/bloom-560m", "--set", "num_hidden_layers=12", "--json")
    assert result.exit_code == 0, result.stderr
    assert result.json()["total_params"] == 408_059_904


def test_set_hidden_size_on_distilgpt2_changes_what_its_n_embd_would(ffncalc):
    """distilgpt2: n_embd = 768, 6 layers, vocab 50,257, 1,024 positions. With hidden_size = 12 (GPT-2's alias of
    n_embd): a layer is 12h² + 13h = 1,884; wte 50,257 · 12 = 603,084, wpe 1,024 · 12 = 12,288, ln_f 2 · 12 = 24:
    603,084 + 12,288 + 24 + 6 · 1,884 = 626,700."""
    result = ffncalc("params", "distilbert/distilgpt2", "--set", "hidden_size=12", "--json")
    assert result.exit_code == 0, result.stderr
    assert result.json()["total_params"] == 626_700


@pytest.mark.parametrize("value", ["0", '"abc"', "[1,2]", "null"])
def test_a_bad_value_under_an_alias_is_refused_as_under_the_configs_own_key(ffncalc, value):
    result = ffncalc("params", "bigscience/bloom-560m", "--set", f"num_hidden_layers={value}")
    assert result.exit_code != 0
    assert result.stderr.startswith("Error: ") and "n_layer" in result.stderr
    assert result.stdout == ""


def test_a_sweep_under_an_alias_changes_every_row(ffncalc):
    """DistilBERT's config says n_layers; num_hidden_layers is its alias. A row per value, each different."""
    result = ffncalc("params", "distilbert/distilbert-base-uncased", "--sweep", "num_hidden_layers=1:16:5", "--json")
    assert result.exit_code == 0, result.stderr
    totals = [row["figures"]["total_params"] for row in result.json()["rows"]]
    assert len(totals) == 4 and len(set(totals)) == 4


@pytest.mark.parametrize(
    "command",
    [
        ("params", "meta-llama/Llama-3.1-8B", "--sweep", "num_hidden_layers=1,2", "--format", "csv"),
        ("params", "meta-llama/Llama-3.1-8B", "--sweep", "num_hidden_layers=1,2", "--format", "markdown"),
        ("compare", "--format", "csv"),
        ("compare", "--format", "markdown"),
        ("compare", "--json"),
    ],
)
def test_a_picture_beside_rows_or_json_is_refused_and_nothing_written(ffncalc, command, tmp_path):
    target = tmp_path / "picture.svg"
    result = ffncalc(*command, "--svg", str(target))
    assert result.exit_code == 2 and result.stdout == ""
    assert not target.exists()


@pytest.mark.parametrize(("command", "most"), [("memory", "2,000"), ("train", "2,000"), ("params", "10,000")])
def test_a_sweep_past_what_a_command_counts_in_seconds_is_refused_with_the_limit(ffncalc, command, most):
    result = ffncalc(command, "meta-llama/Llama-3.1-8B", "--sweep", "vocab_size=1:99999:1")
    assert result.exit_code == 2 and result.stdout == ""
    assert f"--sweep: 99,999 points; {command} counts at most {most} in one run" in result.stderr


def test_an_override_of_a_field_another_decides_is_refused_naming_that_field(ffncalc):
    # NemotronHConfig: num_hidden_layers is deprecated; the block pattern (Nemotron-H-56B's 118-letter
    # hybrid_override_pattern) decides the layers, so num_hidden_layers=20 would change nothing.
    result = ffncalc("params", "nvidia/Nemotron-H-56B-Base-8K", "--set", "num_hidden_layers=20")
    assert result.exit_code == 2 and result.stdout == ""
    assert "change hybrid_override_pattern instead" in result.stderr


def test_a_field_of_a_nested_config_set_at_the_top_suggests_its_dotted_name(ffncalc):
    result = ffncalc("params", "Qwen/Qwen2.5-VL-7B-Instruct", "--set", "num_hidden_layers=20")
    assert result.exit_code == 2
    assert "did you mean text_config.num_hidden_layers" in result.stderr
