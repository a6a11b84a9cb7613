"""`speed --price`: cost per million input and output tokens and energy per token at the EXPECTED throughput.

The case derived by hand: Llama-3.1-70B, BF16, batch 1 at context 1,024 over 8 H100 SXM (tensor parallel 8), as
tests/test_expected.py derives its expected decode step term by term; here the step is derived again the same way
and the cost and energy from it. Figures: H100 SXM 3.35 TB/s, NVLink 450 GB/s per direction, board power 700 W
(NVIDIA H100 datasheet: "Max thermal design power (TDP) up to 700W (configurable)").
"""

import pytest

from ffncalc.accelerators import ACCELERATOR_TABLE
from ffncalc.api import speed
from ffncalc.expected import choose

from .conftest import run_main

H100_BANDWIDTH, H100_LINK, H100_WATTS = 3.35e12, 450e9, 700
LLAMA_70B = "meta-llama/Llama-3.1-70B"
LLAMA = "meta-llama/Llama-3.1-8B"
KEYS = {
    "gpus",
    "price_per_gpu_hour",
    "board_power_watts",
    "board_power_source",
    "input_cost_per_million_tokens",
    "output_cost_per_million_tokens",
    "input_joules_per_token_at_most",
    "output_joules_per_token_at_most",
}


def one(run):
    (report,) = run.reports
    return report


def test_tp8_cost_and_energy_per_token_are_the_expected_time_on_eight_gpus():
    # The expected decode step (tests/test_expected.py's TP-8 derivation): 160 sublayers and all-reduces, each
    # all-reduce 2 · 7/8 × 8,192 × 2 bytes per GPU; the KV cache per GPU 1,025 tokens × 40,960 bytes.
    allreduce = 160 * 2 * 7 * 8192 * 2 // 8
    kv = 1025 * 40_960
    report = one(speed(LLAMA_70B, "h100", context=1024, prompt=1024, batches="1", tensor_parallel=8, price=2.5))
    c = choose(None, "H100 SXM").decode
    step = (
        c["weights_memory"] * (report.decode.bytes - kv) / H100_BANDWIDTH
        + c["kv_memory"] * kv / H100_BANDWIDTH
        + (c["sublayers"] + c["allreduces"]) * 160
        + c["allreduce_transfer"] * allreduce / H100_LINK
        + c["sequences"] * 1
        + c["fixed"]
    )
    found = report.cost_and_energy
    assert found.gpus == 8 and found.board_power_watts == H100_WATTS and found.price_per_gpu_hour == 2.5
    # A million output tokens at batch 1 take 10^6 steps of 8 GPUs: 8 × step × 10^6 GPU-seconds, ÷ 3,600 GPU-hours.
    assert found.output_cost_per_million_tokens == pytest.approx(2.5 * 8 * step * 1e6 / 3600, rel=1e-12)
    # Energy per output token at most: 8 boards at 700 W for one step.
    assert found.output_joules_per_token_at_most == pytest.approx(700 * 8 * step, rel=1e-12)
    # A prompt of 1,024 tokens in the expected TTFT on the same 8 GPUs.
    ttft = report.prefill.expected_seconds
    assert found.input_cost_per_million_tokens == pytest.approx(2.5 * 8 * ttft / 1024 * 1e6 / 3600, rel=1e-12)
    assert found.input_joules_per_token_at_most == pytest.approx(700 * 8 * ttft / 1024, rel=1e-12)


def test_a_batch_shares_a_step_and_a_pipeline_counts_its_stages_gpus():
    report = one(speed(LLAMA, "h100", context=1024, prompt=1024, batches="8", price=4.0))
    found = report.cost_and_energy
    # Eight tokens a step on one GPU: 4.0 per GPU-hour × step ÷ 8 × 10^6 ÷ 3,600.
    step = report.decode.expected_seconds_per_step
    assert found.output_cost_per_million_tokens == pytest.approx(4.0 * step / 8 * 1e6 / 3600, rel=1e-12)
    piped = one(
        speed(LLAMA, "h100", context=1024, prompt=1024, batches="4", tensor_parallel=2, pipeline_parallel=2, price=1.0)
    )
    assert piped.cost_and_energy.gpus == 4  # 2 tensor-parallel GPUs in each of 2 stages
    rate = piped.decode.expected_tokens_per_second
    assert piped.cost_and_energy.output_cost_per_million_tokens == pytest.approx(4 / rate * 1e6 / 3600, rel=1e-12)


def test_json_has_one_shape_null_where_not_computable():
    shapes = {}
    for args in ([], ["--price", "2"], ["--gpu", "tpu-v6e", "--price", "2"], ["--batch", "64", "--price", "2"]):
        run = run_main("speed", LLAMA, "--json", *args)
        assert run.exit_code == 0, run.stderr
        found = run.json()["reports"][0]["cost_and_energy"]
        assert set(found) == KEYS
        shapes[" ".join(args)] = found
    assert shapes[""]["output_cost_per_million_tokens"] is None  # no price: no cost …
    assert shapes[""]["output_joules_per_token_at_most"] > 0  # … but the energy all the same
    tpu = shapes["--gpu tpu-v6e --price 2"]
    assert tpu["board_power_watts"] is None and tpu["output_joules_per_token_at_most"] is None
    assert tpu["board_power_source"].startswith("no figure") and tpu["output_cost_per_million_tokens"] > 0
    too_big = shapes["--batch 64 --price 2"]  # 86 GiB on an 80 GB H100: it does not fit, so nothing is costed
    assert too_big["output_cost_per_million_tokens"] is None and too_big["output_joules_per_token_at_most"] is None


def test_tables_label_cost_and_energy_as_expected_based_and_say_when_a_chip_has_no_power():
    run = run_main("speed", LLAMA, "--price", "2.5")
    assert run.exit_code == 0, run.stderr
    assert "expected-based" in run.stdout and "per million output tokens" in run.stdout
    assert "at most (700 W board power" in run.stdout
    side = run_main("speed", LLAMA, "--gpu", "h100,tpu-v6e", "--price", "2.5")
    assert side.exit_code == 0, side.stderr
    assert "TPU v6e: no energy per token" in side.stdout
    assert max(len(line) for line in side.stdout.splitlines()) <= 80
    sweep = run_main("speed", LLAMA, "--batch", "1,8", "--price", "2.5")
    assert "≈ J per output token" in sweep.stdout and max(len(line) for line in sweep.stdout.splitlines()) <= 80


def test_a_bad_price_is_a_one_line_error_naming_the_option():
    run = run_main("speed", LLAMA, "--price", "0")
    assert run.exit_code == 2
    assert (
        run.stderr.startswith("Error: --price must be a positive amount per GPU-hour") and run.stderr.count("\n") == 1
    )


def test_every_board_power_has_a_source_and_a_chip_without_one_says_why():
    for entry in ACCELERATOR_TABLE:
        assert entry.board_power_source, entry.name
        if entry.board_power is None:
            assert entry.board_power_source.startswith("no figure"), entry.name
