"""--brief: each command's headline figures in one short block (and with --json, just those figures).

Llama-3.1-8B's figures are worked by hand in ../shared/reference/README.md, copied here with their derivation."""

from __future__ import annotations

import pytest

from .conftest import run_main

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
