"""--brief: each command's headline figures in one short block (and with --json, just those figures).

Llama-3.1-8B's figures are worked by hand in tests/reference/README.md, copied here with their derivation."""

from __future__ import annotations

import pytest

from .conftest import BUNDLED, run_main

LLAMA = "meta-llama/Llama-3.1-8B"


def test_params_brief_is_the_totals_and_the_ffn_share():
    # 8,030,261,248 in all; the FFN 32 × 3 × 4,096 × 14,336 = 5,637,144,576, 70.2%.
    assert run_main("params", LLAMA, "--brief").stdout == (
        f"{LLAMA} — params\n"
        "Total:     8,030,261,248\n"
        "Active:    8,030,261,248\n"
        "FFN:       5,637,144,576\n"
        "FFN share: 70.2%\n"
    )


def test_flops_brief_at_the_default_context():
    # Per token at 8,192: matmuls 2 × (5,637,144,576 + 1,342,177,280 + 525,336,576) = 15,009,316,864, plus attention
    # scores 524,288 × 8,192 = 4,294,967,296: 19,304,284,160; the FFN's 11,274,289,152 of it is 58.4%.
    figures = run_main("flops", LLAMA, "--brief", "--json").json()
    assert figures["flops_per_token"] == 15_009_316_864 + 524_288 * 8192 == 19_304_284_160
    assert figures["ffn_share"] == 11_274_289_152 / 19_304_284_160


def test_crossover_brief_is_n_star_and_the_kv_bytes_per_token():
    # n* = 11,274,289,152 / 524,288 = 21,504; KV per token: 32 layers × 2 × 8 heads × 128 × 2 bytes = 131,072.
    assert run_main("crossover", LLAMA, "--brief").stdout == (
        f"{LLAMA} — crossover\nn*:       21,504 tokens\nKV/token: 131,072 bytes\n"
    )


def test_memory_brief_is_weights_cache_and_totals():
    # BF16 weights 2 × 8,030,261,248 = 16,060,522,496 bytes; KV at 8,192: 8,192 × 131,072 = 1,073,741,824.
    figures = run_main("memory", LLAMA, "--brief", "--json").json()
    assert figures["weights_bytes"] == 2 * 8_030_261_248
    assert figures["kv_cache_bytes"] == 8192 * 131_072


@pytest.mark.parametrize("command", ["params", "flops", "crossover", "memory", "speed", "train"])
def test_every_model_command_has_a_brief_of_a_few_lines(command):
    run = run_main(command, LLAMA, "--brief")
    assert run.exit_code == 0
    assert 2 < len(run.stdout.splitlines()) <= 8


def test_brief_with_a_sweep_is_refused():
    run = run_main("params", LLAMA, "--brief", "--sweep", "num_hidden_layers=1,2")
    assert run.exit_code == 2
    assert run.stderr == "Error: --brief and --sweep: a sweep already shows the headline figures\n"


def test_derive_dim_brief_is_the_width():
    # Llama 3 8B: 4 · 4096 = 16,384 → int(2 · 16,384 / 3) = 10,922 → int(1.3 · 10,922) = 14,198 → 1,024 · 14 = 14,336
    assert run_main("derive-dim", "--dim", "4096", "--mult", "1.3", "--multiple-of", "1024", "--brief").stdout == (
        "derive-dim\nintermediate_size: 14,336\n"
    )


def test_compare_brief_is_one_line_a_row():
    # Llama-3.1-8B: FFN 14,336 = 3.50 × 4,096; 5,637,144,576 of 8,030,261,248 parameters = 70.2%
    lines = run_main("compare", LLAMA, "--brief").stdout.splitlines()
    assert lines == ["FFN design, side by side", "Llama-3.1-8B: FFN 14,336 (3.50 × 4,096), 70.2% of 8.03 B parameters"]


def test_models_brief_is_the_names_whole():
    names = run_main("models", "mixtral", "--brief").stdout.splitlines()
    assert names == ["mistralai/Mixtral-8x22B-v0.1", "mistralai/Mixtral-8x7B-v0.1"]


def test_verify_brief_of_an_index_without_its_shards_is_not_ok(tmp_path):
    import json

    config = (BUNDLED / "meta-llama__Llama-3.1-8B.json").read_text()
    (tmp_path / "config.json").write_text(config)
    index = {
        "metadata": {"total_size": 2},
        "weight_map": {"model.embed_tokens.weight": "model-00001-of-00001.safetensors"},
    }
    (tmp_path / "model.safetensors.index.json").write_text(json.dumps(index))
    run = run_main("verify", str(tmp_path), "--brief", "--json")
    assert run.exit_code == 1
    assert run.json()["verdict"] == "NOT OK"
