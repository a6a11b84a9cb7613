"""DeepSeek's own serving figures for V3/R1 on H800s (open-infra-index, "Day 6: DeepSeek-V3/R1 Inference System
Overview", data/measurements/deepseek_serving.csv) as an order-of-magnitude check of `speed`'s expected figure for
the layouts it states: the measurement within a factor of 10 of the expected figure, and the ratio the README states.

Three kinds of figure, never mixed: the MEASUREMENT (DeepSeek's average over a day of production load), ffncalc's
EXPECTED figure (fitted coefficients on the exact FLOPs and bytes) and its CEILING (the roofline no run can beat).
Every input below is DeepSeek's published number or derived from them here; none is ffncalc's output.
"""

import csv
from pathlib import Path

import pytest

from ffncalc.api import speed

ROOT = Path(__file__).resolve().parent.parent
MEASURED = {row["figure"]: row for row in csv.DictReader((ROOT / "data/measurements/deepseek_serving.csv").open())}
V3 = "deepseek-ai/DeepSeek-V3"
NODE = 8  # H800s per node (the source: "each node contains 8 H800 GPUs")


def value(figure):
    return float(MEASURED[figure]["value"])


def mean_prompt():
    """The mean prompt P and output D of a request: P + D/2 is the mean KV length per output token (4,989) and
    P / D the ratio of input to output tokens (608B / 168B): P = 4,989 ÷ (1 + 168 / (2 · 608)) = 4,383."""
    ratio = value("total_output_tokens") / value("total_input_tokens")
    return round(value("kv_cache_length_per_output_token") / (1 + ratio / 2))


def decode_check():
    """Decode: EP144 / DP144, 2 routed experts a GPU (288 = 256 + 32 redundant over 144). ffncalc's expert
    parallelism must divide the 256 experts: EP 128 over 128 GPUs with attention data-parallel keeps the 2 routed
    experts a GPU. Each GPU's sequences: 14.8k tokens/s a node ÷ 8 GPUs ÷ 21 tokens/s a request (the middle of the
    published 20–22) = 88; the cache: the published mean KV length per output token."""
    per_request = (
        value("output_tokens_per_second_per_request_low") + value("output_tokens_per_second_per_request_high")
    ) / 2
    per_gpu = round(value("output_tokens_per_second") / NODE / per_request)
    assert per_gpu == 88
    context = int(value("kv_cache_length_per_output_token"))
    (found,) = speed(
        V3, "h800", context=context, prompt=context, batches=str(per_gpu * 128), tensor_parallel=128,
        expert_parallel=128, dp_attention=True,
    ).reports  # fmt: skip
    expected = found.decode.expected_tokens_per_second / 128 * NODE
    ceiling = found.decode.tokens_per_second / 128 * NODE
    return value("output_tokens_per_second"), expected, ceiling


def prefill_check():
    """Prefill: EP32 / DP32 over 4 nodes; ffncalc: EP 32 with attention data-parallel over 32 GPUs (8 routed experts
    a GPU; DeepSeek's 9 count the redundant ones). Expected tokens/s a GPU: each data-parallel rank prefills its own
    prompt of the mean length in the lone prompt's expected time (optimistic: a lone prompt's routed experts are
    spread over all 32 GPUs). The measurement counts cached input tokens, which are not computed: 56.3 % of them."""
    prompt = mean_prompt()
    (found,) = speed(
        V3, "h800", context=prompt, prompt=prompt, tensor_parallel=32, expert_parallel=32, dp_attention=True
    ).reports
    expected = prompt / found.prefill.expected_seconds * NODE
    ceiling = prompt / found.prefill.seconds * NODE
    computed = value("input_tokens_per_second") * (1 - value("cached_input_tokens") / value("total_input_tokens"))
    return value("input_tokens_per_second"), computed, expected, ceiling


def test_mean_prompt_from_deepseeks_figures():
    assert mean_prompt() == 4383


def test_decode_measurement_within_an_order_of_magnitude_of_the_expected():
    measured, expected, ceiling = decode_check()
    assert 0.1 <= measured / expected <= 10
    assert expected < measured <= ceiling  # the measurement beats the expected figure, never the ceiling


def test_prefill_measurement_within_an_order_of_magnitude_of_the_expected():
    measured, computed, expected, ceiling = prefill_check()
    assert 0.1 <= measured / expected <= 10 and 0.1 <= computed / expected <= 10
    assert computed <= ceiling  # the tokens actually computed: under the ceiling


@pytest.mark.parametrize("check", ["decode", "prefill"])
def test_readme_states_the_ratios(check):
    readme = " ".join((ROOT / "README.md").read_text().split())
    if check == "decode":
        measured, expected, ceiling = decode_check()
        words = [f"{expected:,.0f}", f"{ceiling:,.0f}", f"{measured / expected:.2g}×"]
    else:
        measured, computed, expected, ceiling = prefill_check()
        words = [f"{expected:,.0f}", f"{ceiling:,.0f}", f"{measured / expected:.2g}×", f"{computed / expected:.2g}×"]
    for word in words:
        assert word in readme, word
