"""memory puts its answer first and last, and keeps its conventions behind --explain (always in --json)."""

from __future__ import annotations

import pytest

from .conftest import run_main

LLAMA = "meta-llama/Llama-3.1-8B"


@pytest.mark.parametrize("width", ["80", "120"])
def test_the_answer_is_the_second_and_the_last_line(monkeypatch, width):
    # Llama-3.1-8B at 32k × 8: BF16 weights 16,060,522,496 + KV 32,768 × 8 × 131,072 = 34,359,738,368 + the
    # activation buffer 8 × 2,048 × 28,672 × 2 = 939,524,096: 51,359,784,960 bytes = 47.83 GiB. An L40S (46,068 MiB
    # = 44.99 GiB) does not hold it; an H100 (81,559 MiB = 79.65 GiB) does, after the 1 GiB runtime reserve.
    monkeypatch.setenv("COLUMNS", width)
    expected_bytes = 16_060_522_496 + 32_768 * 8 * 131_072 + 8 * 2048 * 28_672 * 2
    assert f"{expected_bytes / 2**30:.2f}" == "47.83"
    lines = run_main("memory", LLAMA, "--ctx", "32k", "--batch", "8").stdout.splitlines()
    answer = "47.83 GiB for inference: the smallest listed that holds it is H100 SXM (79.65 GiB)."
    assert " ".join(lines[1:3]).startswith(answer) or lines[1] == answer
    assert " ".join(lines[-2:]).endswith(answer) or lines[-1] == answer


def test_conventions_are_behind_explain_and_in_json():
    plain = run_main("memory", LLAMA).stdout
    explained = run_main("memory", LLAMA, "--explain").stdout
    conventions = run_main("memory", LLAMA, "--json").json()["conventions"]
    assert "How each figure is counted: --explain" in plain
    assert not any(convention[:40] in " ".join(plain.split()) for convention in conventions)
    assert all(" ".join(convention.split())[:40] in " ".join(explained.split()) for convention in conventions)


def test_the_answer_is_about_the_gpu_asked_and_the_brief_gives_the_same_answer():
    # LoRA rank 16 on Llama-3.1-8B at 2k needs about 25.6 GiB per GPU to train; a "24GB" card holds 24 × 10⁹ bytes
    # = 22.35 GiB, 21.35 GiB after the 1 GiB runtime reserve: it does not fit. The brief must give the same answer
    # (the training figure and the verdict), not the inference total alone.
    options = ("memory", LLAMA, "--train", "--lora-rank", "16", "--ctx", "2k", "--gpu-memory", "24GB")
    full = run_main(*options)
    assert "GiB for training: does not fit your GPU (24GB) (21.35 GiB after the" in " ".join(full.stdout.split())
    report = run_main(*options, "--json").json()
    brief = run_main(*options, "--brief", "--json").json()
    assert brief["training_per_gpu_bytes"] == report["training"]["per_gpu"] == report["needed_per_gpu"]
    assert report["training"]["per_gpu"] > 24 * 10**9 - 2**30
    assert brief["fits"] is False
