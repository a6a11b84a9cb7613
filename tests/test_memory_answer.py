"""memory puts its answer first and last, and keeps its conventions behind --explain (always in --json)."""

from __future__ import annotations

import pytest

from .conftest import run_main

LLAMA = "meta-llama/Llama-3.1-8B"


@pytest.mark.parametrize("width", ["80", "120"])
def test_the_answer_is_the_second_and_the_last_line(monkeypatch, width):
    # Llama-3.1-8B at 32k × 8: BF16 weights 16,060,522,496 + KV 32,768 × 8 × 131,072 = 34,359,738,368 + the
    # activation buffer 8 × 2,048 × 28,672 × 2 = 939,524,096: 51,359,784,960 bytes = 47.83 GiB. An L40S holds 44.99
    # GiB usable (46,068 MiB less the 1 GiB runtime reserve): it does not fit; an H100 (81,559 MiB) does.
    monkeypatch.setenv("COLUMNS", width)
    expected_bytes = 16_060_522_496 + 32_768 * 8 * 131_072 + 8 * 2048 * 28_672 * 2
    assert f"{expected_bytes / 2**30:.2f}" == "47.83"
    lines = run_main("memory", LLAMA, "--ctx", "32k", "--batch", "8").stdout.splitlines()
    answer = "47.83 GiB for inference: fits on one H100 SXM (79.65 GiB usable) and the larger ones listed."
    assert " ".join(lines[1:3]).startswith(answer) or lines[1] == answer
    assert " ".join(lines[-2:]).endswith(answer) or lines[-1] == answer


def test_conventions_are_behind_explain_and_in_json():
    plain = run_main("memory", LLAMA).stdout
    explained = run_main("memory", LLAMA, "--explain").stdout
    conventions = run_main("memory", LLAMA, "--json").json()["conventions"]
    assert "How each figure is counted: --explain" in plain
    assert not any(convention[:40] in " ".join(plain.split()) for convention in conventions)
    assert all(" ".join(convention.split())[:40] in " ".join(explained.split()) for convention in conventions)
