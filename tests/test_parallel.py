"""Tensor-parallel sizes: one rule in every command — vLLM's for serving, Megatron-LM's for training (parallel.py)."""

from __future__ import annotations

import pytest

LLAMA_8B = "meta-llama/Llama-3.1-8B"  # 32 attention heads, 8 KV heads (its config.json)


@pytest.mark.parametrize(
    "command",
    [
        ("speed", LLAMA_8B, "--tp", "3"),
        ("memory", LLAMA_8B, "--tp", "3"),
        ("memory", LLAMA_8B, "--gpus", "3"),
        ("memory", LLAMA_8B, "--tp", "3", "--engine", "vllm"),
        ("memory", LLAMA_8B, "--tp", "3", "--engine", "sglang"),
        ("memory", LLAMA_8B, "--train", "--tp", "3", "--gpus", "3"),
        ("train", LLAMA_8B, "--tp", "3", "--gpus", "3"),
    ],
)
def test_a_size_that_does_not_divide_the_heads_is_refused_by_every_command(ffncalc, command):
    """32 heads do not divide by 3: vLLM refuses it (verify_with_parallel_config), and so does Megatron-LM."""
    result = ffncalc(*command)
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1
    assert "tensor-parallel size of 3 does not split 32 attention heads and 8 KV heads" in result.stderr


def test_serving_names_the_sizes_vllm_takes(ffncalc):
    """Sizes d with 32 % d == 0 and (d % 8 == 0 if d ≥ 8 else 8 % d == 0): 1, 2, 4, 8, 16, 32 (KV heads
    replicated past 8)."""
    result = ffncalc("speed", LLAMA_8B, "--tp", "3")
    assert result.stderr.rstrip().endswith("use one of 1, 2, 4, 8, 16, 32")


def test_serving_replicates_kv_heads_past_their_number(ffncalc):
    """TP 16 over 8 KV heads: 16 % 8 == 0, each KV head on two ranks (vLLM's QKVParallelLinear)."""
    assert ffncalc("speed", LLAMA_8B, "--tp", "16", "--json").exit_code == 0


def test_training_needs_the_kv_heads_to_divide(ffncalc):
    """Megatron-LM: num_query_groups (8) % 16 != 0, so training refuses what serving takes; sizes 1, 2, 4, 8."""
    result = ffncalc("train", LLAMA_8B, "--tp", "16", "--gpus", "16")
    assert result.exit_code == 2
    assert "Megatron-LM" in result.stderr and result.stderr.rstrip().endswith("use one of 1, 2, 4, 8")


@pytest.mark.parametrize(
    ("model", "tp", "heads"),
    [
        ("Qwen/Qwen2.5-7B", "64", "28 attention heads and 4 KV heads"),  # 28 heads: 64 > 28
        ("Qwen/Qwen2.5-7B", "7", "28 attention heads and 4 KV heads"),  # 28 % 7 == 0, but 7 and 4 divide neither way
        ("google/gemma-2-9b", "1024", "16 attention heads and 8 KV heads"),
    ],
)
def test_sizes_past_or_across_the_heads_are_refused(ffncalc, model, tp, heads):
    result = ffncalc("memory", model, "--tp", tp, "--engine", "vllm")
    assert result.exit_code == 2
    assert heads in result.stderr
