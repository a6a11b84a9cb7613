"""`memory` over pipeline stages (issue 38): per GPU the busiest stage, vLLM's cache per stage, disaggregated pools.

Every figure is derived here from Llama-3.1's config.json files and vLLM's source:
- stages split as vLLM's get_pp_indices (vllm/distributed/utils.py); the input table on the first stage, the final
  norm and the head on the last (vllm/model_executor/models/llama.py: PPMissingLayer elsewhere);
- each stage sizes its own cache for its own layers, then every stage keeps the smallest stage's num_blocks
  (vllm/v1/core/kv_cache_utils.py get_kv_cache_configs, vllm-project/vllm @ 001cabc1).
"""

import pytest

from ffncalc.api import memory, speed
from ffncalc.errors import UsageError
from tests.conftest import run_main

L70, L8 = "meta-llama/Llama-3.1-70B", "meta-llama/Llama-3.1-8B"

# Llama-3.1-70B, BF16, over 4 GPUs a stage. One layer's matrices: q and o 8,192², k and v 1,024 × 8,192, gate, up
# and down 28,672 × 8,192: 855,638,016 parameters, 1,711,276,032 bytes, a quarter on each GPU; its two norms
# (2 × 8,192 × 2 bytes) copied on each.
LAYER_PER_GPU = 1_711_276_032 // 4 + 2 * 8192 * 2
TABLE_PER_GPU = 128_256 * 8192 * 2 // 4  # the input table and the head: 2,101,346,304 bytes each, a quarter
FINAL_NORM = 8192 * 2
# KV per GPU: 40 layers × 8,192 tokens × 2 (K and V) × 2 of the 8 KV heads × 128 × 2 bytes.
KV_PER_GPU = 40 * 8192 * 2 * 2 * 128 * 2
# The largest activation buffer: a 2,048-token chunk × the gated FFN's 2 × 28,672 × 2 bytes, a quarter on each GPU
# (larger than the last stage's logits, 128,256 × 4 bytes).
ACTIVATIONS_PER_GPU = 2048 * 57_344 * 2 // 4


def test_70b_over_2_stages_of_4_gpus_needs_the_last_stages_bytes_per_gpu():
    first = 40 * LAYER_PER_GPU + TABLE_PER_GPU + KV_PER_GPU + ACTIVATIONS_PER_GPU
    last = 40 * LAYER_PER_GPU + FINAL_NORM + TABLE_PER_GPU + KV_PER_GPU + ACTIVATIONS_PER_GPU
    assert last - first == FINAL_NORM
    report = memory(L70, context="8k", tensor_parallel=4, pipeline_parallel=2)
    assert report.pipeline_parallel == 2
    assert report.per_gpu_inference == last == 18_033_688_576


def test_speed_and_memory_give_one_figure_per_gpu_over_stages():
    (found,) = speed(
        L70, "h100", context="8k", prompt="8k", batches="1", tensor_parallel=4, pipeline_parallel=2
    ).reports
    assert found.memory_needed == memory(L70, context="8k", tensor_parallel=4, pipeline_parallel=2).per_gpu_inference


def test_vllm_stage_caches_only_its_own_layers():
    # A given budget of 40 GiB per GPU. A block of 16 tokens on one layer: 16 × 2 KV heads × (128 + 128) × 2 bytes =
    # 16,384 bytes. One stage of 40 layers: 40 GiB // (16,384 × 40) = 65,536 blocks; unsplit, 80 layers: 32,768.
    staged = memory(L70, context="8k", tensor_parallel=4, pipeline_parallel=2, engine="vllm", kv_budget="40GiB")
    whole = memory(L70, context="8k", tensor_parallel=4, engine="vllm", kv_budget="40GiB")
    assert staged.engine.num_blocks == (40 << 30) // (16_384 * 40) == 65_536
    assert whole.engine.num_blocks == (40 << 30) // (16_384 * 80) == 32_768
    assert staged.engine.kv_capacity_tokens == 65_536 * 16


def test_vllm_keeps_the_smallest_stages_blocks():
    # Llama-3.1-8B's 32 layers over 3 stages: 32 // 3 = 10 each, the 2 left over to the second-to-last and the one
    # before: [11, 11, 10]. One layer's block on one GPU: 16 × 8 KV heads × 256 × 2 bytes = 65,536 bytes. With 10 GiB
    # a GPU: stages of 11 layers hold 10 GiB // (65,536 × 11) = 14,894 blocks, the last 16,384; all keep 14,894.
    report = memory(L8, context="8k", pipeline_parallel=3, engine="vllm", kv_budget="10GiB")
    assert report.engine.num_blocks == (10 << 30) // (65_536 * 11) == 14_894
    assert report.engine.limiting_stage == 1
    assert report.engine.kv_capacity_tokens == 14_894 * 16


def test_disaggregated_pools_hold_whole_copies_and_move_each_prompts_cache():
    report = memory(
        L70, context="8k", tensor_parallel=4, pipeline_parallel=2, engine="vllm", kv_budget="40GiB", disaggregate="8:16"
    )
    split = report.engine.disaggregation
    assert (split.replica_gpus, split.prefill_replicas, split.decode_replicas) == (8, 1, 2)
    # One request of 8,192 tokens: 65,536 blocks ÷ 512 blocks a request = 128 requests a copy, 2 copies.
    assert split.decode_requests == 2 * 65_536 / 512 == 256
    # What moves: the whole model's cache of one request, 80 layers × 8,192 × 2 × 8 × 128 × 2 bytes.
    assert split.kv_bytes_per_request == 80 * 8192 * 2 * 8 * 128 * 2 == 2_684_354_560


@pytest.mark.parametrize(
    ("options", "words"),
    [
        (["--pp", "2", "--engine", "sglang"], "--pp with --engine sglang is not modelled"),
        (["--disaggregate", "8:8"], "--disaggregate splits an engine's GPUs into prefill and decode pools"),
        (["--engine", "vllm", "--tp", "4", "--pp", "2", "--disaggregate", "4:8"], "a multiple of the 8 GPUs"),
        (["--pp", "81"], "--pp 81: the 80 layers a token runs split into 1 to 80 stages"),
        (["--engine", "vllm", "--disaggregate", "99999999999999999999:8"], "a pool of at most 1,048,576 GPUs"),
        (["--engine", "vllm", "--pp", "2", "--ep", "2"], "--pp with --ep or --dp-attention is not modelled"),
    ],
)
def test_stage_and_pool_refusals_name_the_options(options, words):
    run = run_main("memory", L70, *options)
    assert run.exit_code != 0 and run.stderr.count("\n") == 1 and words in run.stderr, run.stderr
    assert "`" not in run.stderr


def test_library_refuses_pipeline_with_sglang_naming_the_field():
    with pytest.raises(UsageError, match="`pipeline_parallel` with `engine` sglang"):
        memory(L8, pipeline_parallel=2, engine="sglang")


def test_gpus_are_all_the_gpus_of_a_copy_split_over_the_stages():
    # `gpus` 8 over 2 stages: 4 tensor-parallel GPUs a stage, the same answer as `tensor_parallel` 4
    by_count = memory(L70, context="8k", gpus=8, pipeline_parallel=2)
    by_layout = memory(L70, context="8k", tensor_parallel=4, pipeline_parallel=2)
    assert by_count.gpus == 4 and by_count.per_gpu_inference == by_layout.per_gpu_inference == 18_033_688_576


def test_gpus_that_the_stages_do_not_divide_are_refused():
    with pytest.raises(UsageError, match="`gpus` 8 is not a multiple of `pipeline_parallel` 3"):
        memory(L70, gpus=8, pipeline_parallel=3)
