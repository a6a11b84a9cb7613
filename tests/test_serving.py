"""`ffncalc memory --engine`: the KV capacity, blocks and maximum concurrency a serving engine computes.

Every expected figure is derived by hand below from the bundled config and vLLM's formulas as its source states
them (vllm/v1/kv_cache_interface.py page sizes and max_memory_usage_bytes; vllm/v1/core/kv_cache_utils.py
get_num_blocks, _report_kv_cache_config, get_max_concurrency_for_kv_cache_config; the hybrid block size of
vllm/model_executor/models/config.py), never from ffncalc's output.
"""

import json

import pytest

from ffncalc.api import memory
from ffncalc.serving import EngineVersion, group_size

GIB = 1 << 30
BUDGET = 40 * GIB  # "--kv-budget 40GiB": the available KV-cache memory an engine logged


def cdiv(a: int, b: int) -> int:
    return -(-a // b)


def engine(model: str, **options):
    report = memory(
        model, options.pop("ctx", "32k"), engine=options.pop("engine", "vllm"), kv_budget="40GiB", **options
    )
    assert report.engine is not None
    return report.engine


def test_a_dense_gqa_model_on_two_gpus_with_an_fp8_cache():
    # Llama-3.1-8B: 32 full-attention layers, 8 KV heads of 128; TP 2 → 4 heads a GPU; fp8 → 1 byte.
    # page = block 16 · 4 heads · (128 + 128) · 1 = 16,384; num_blocks = 40 GiB // 16,384 // 32 layers = 81,920;
    # tokens = 81,920 // 1 group · 16 = 1,310,720; concurrency for 32,768 = 81,920 / cdiv(32,768, 16) = 40.0
    figures = engine("meta-llama/Llama-3.1-8B", gpus=2, kv_dtype="fp8", max_num_batched_tokens=2048)
    assert figures.groups[0].page_bytes == 16 * 4 * 256 * 1 == 16_384
    assert figures.num_blocks == BUDGET // 16_384 // 32 == 81_920
    assert figures.kv_capacity_tokens == 81_920 * 16 == 1_310_720
    assert figures.max_concurrency == 81_920 / 2048 == 40.0


def test_deepseek_v3_caches_one_mla_latent_in_blocks_of_64_whatever_the_tensor_parallelism():
    # 61 layers of (kv_lora_rank 512 + qk_rope_head_dim 64) · 2 bytes; FlashMLA's block of 64 tokens:
    # page = 64 · 576 · 2 = 73,728; num_blocks = 40 GiB // 73,728 // 61 = 9,549; tokens = 9,549 · 64 = 611,136;
    # concurrency for 32,768 = 9,549 / (32,768 / 64 = 512) = 18.650390625. TP 8 changes nothing: the latent is copied.
    for gpus in (1, 8):
        figures = engine("deepseek-ai/DeepSeek-V3", gpus=gpus)
        assert figures.block_size == 64
        assert figures.num_blocks == BUDGET // (64 * 576 * 2) // 61 == 9_549
        assert figures.kv_capacity_tokens == 9_549 * 64 == 611_136
        assert figures.max_concurrency == 9_549 / 512


def test_gpt_oss_20b_sliding_layers_hold_their_window_plus_a_batch_of_tokens():
    # 24 layers alternate 12 sliding (window 128) and 12 full; 8 KV heads of 64; BF16: page = 16 · 8 · 128 · 2 = 32,768.
    # Two kinds of 12 layers → 2 groups of 12: num_blocks = 40 GiB // 32,768 // 12 = 109,226;
    # tokens = 109,226 // 2 · 16 = 873,808. A request of 32,768 tokens holds cdiv(32,768, 16) = 2,048 full blocks and
    # cdiv(min(128 − 1 + 2,048, 32,768), 16) + 1 = 137 sliding blocks.
    figures = engine("openai/gpt-oss-20b", max_num_batched_tokens=2048)
    assert figures.layers_per_group == 12
    assert figures.num_blocks == BUDGET // 32_768 // 12 == 109_226
    assert figures.kv_capacity_tokens == 109_226 // 2 * 16 == 873_808
    assert sorted(group.blocks_per_request for group in figures.groups) == [cdiv(2175, 16) + 1, 2048] == [137, 2048]
    assert figures.max_concurrency == 109_226 / (2048 + 137)


def test_qwen3_next_groups_its_deltanet_states_with_attention_pages_raised_to_hold_them():
    # 48 layers: 12 full attention (2 KV heads of 256), 36 Gated DeltaNet. A state, in BF16:
    # 32 value heads · 128 · 128 + conv (16·128·2 + 32·128) · (4 − 1) = 524,288 + 24,576 = 548,864 elements = 1,097,728 B.
    # Attention per token: 2 · (256 + 256) · 2 = 2,048 B; block = 16 · cdiv(1,097,728, 16 · 2,048) = 16 · 34 = 544.
    # page = 544 · 2,048 = 1,114,112 (states padded to it). 12 and 36 layers → groups of 12: 1 + 3 = 4 groups.
    # num_blocks = 40 GiB // 1,114,112 // 12 = 3,212; tokens = 3,212 // 4 · 544 = 436,832;
    # per request of 32,768: cdiv(32,768, 544) = 61 attention blocks + 3 state blocks.
    figures = engine("Qwen/Qwen3-Next-80B-A3B-Instruct")
    page = 544 * 2048
    assert figures.block_size == 16 * cdiv(548_864 * 2, 16 * 2048) == 544
    assert [group.page_bytes for group in figures.groups] == [page, page]
    assert figures.num_blocks == BUDGET // page // 12 == 3_212
    assert figures.kv_capacity_tokens == 3_212 // 4 * 544 == 436_832
    assert figures.max_concurrency == 3_212 / (61 + 3)


def test_qwen3_5_keeps_its_deltanet_state_in_the_float32_its_config_names():
    # vLLM's Qwen3_5ForConditionalGenerationConfig: mamba_ssm_cache_dtype "auto" takes text_config.mamba_ssm_dtype
    # ("float32" in Qwen3.5-9B's config.json); gated_delta_net_state_dtype keeps the convolution's window in the
    # model's BF16. 32 layers: 8 full attention (4 KV heads of 256), 24 Gated DeltaNet. A state:
    # 32 value heads · 128 · 128 = 524,288 elements · 4 B = 2,097,152 B, conv (2·16·128 + 32·128) · (4 − 1) = 24,576
    # elements · 2 B = 49,152 B: 2,146,304 B. Attention per token: 2 · 4 · 256 · 2 = 4,096 B; block =
    # 16 · cdiv(2,146,304, 16 · 4,096) = 16 · 33 = 528 (in BF16 the state would be 1,097,728 B and the block 272).
    # page = 528 · 4,096 = 2,162,688. 8 and 24 layers → groups of 8: 1 + 3 = 4 groups;
    # num_blocks = 40 GiB // 2,162,688 // 8 = 2,482; tokens = 2,482 // 4 · 528 = 327,360;
    # per request of 32,768: cdiv(32,768, 528) = 63 attention blocks + 3 state blocks.
    figures = engine("Qwen/Qwen3.5-9B")
    page = 528 * 4096
    assert figures.block_size == 16 * cdiv(524_288 * 4 + 24_576 * 2, 16 * 4096) == 528
    assert [group.page_bytes for group in figures.groups] == [page, page]
    assert figures.num_blocks == BUDGET // page // 8 == 2_482
    assert figures.kv_capacity_tokens == 2_482 // 4 * 528 == 327_360
    assert figures.max_concurrency == 2_482 / (63 + 3)


def test_jamba_groups_four_attention_layers_with_seven_groups_of_mamba_states():
    # 32 layers: attention at 4, 12, 20, 28 (offset 4, period 8); 28 Mamba layers of d_inner = 2 · 4,096 = 8,192:
    # state 8,192 · 16 (d_state) + conv 8,192 · (4 − 1) = 155,648 elements = 311,296 B. Attention per token:
    # 8 heads · (128 + 128) · 2 = 4,096 B; block = 16 · cdiv(311,296, 65,536) = 80; page = 80 · 4,096 = 327,680.
    # Groups of 4: 1 attention + 7 Mamba; num_blocks = 40 GiB // 327,680 // 4 = 32,768; tokens = 32,768 // 8 · 80.
    figures = engine("ai21labs/Jamba-v0.1")
    assert figures.block_size == 80
    assert figures.num_blocks == BUDGET // 327_680 // 4 == 32_768
    assert figures.kv_capacity_tokens == 32_768 // 8 * 80 == 327_680
    assert figures.max_concurrency == 32_768 / (cdiv(32_768, 80) + 7)


def test_vllm_before_0_12_groups_by_the_smallest_layer_count():
    # PR #29303: 12 sliding + 13 full → groups of 13 since; groups of 12 (and a padded group of 1 + 11) before.
    assert group_size([12, 13], EngineVersion("vllm")) == 13
    assert group_size([12, 13], EngineVersion("vllm", "0.11")) == 12
    assert group_size([12, 36], EngineVersion("vllm")) == 12


def test_sglang_sizes_a_token_pool_by_its_cell_size():
    # profile_max_num_token: cell = 8 heads · 128 · 32 layers · 2 · 2 bytes = 131,072; tokens = 40 GiB // cell.
    figures = engine("meta-llama/Llama-3.1-8B", engine="sglang")
    assert figures.kv_capacity_tokens == BUDGET // 131_072 == 327_680
    assert figures.max_concurrency == 327_680 / 32_768


def test_the_estimated_budget_is_utilization_of_the_gpu_less_weights_activations_and_the_reserve():
    # H100: 81,559 MiB · 0.9, floored; weights 8,030,261,248 · 2 bytes; the profile's activation peak at 8,192 batched
    # tokens: 8,192 · 2 · 14,336 · 2 bytes (gate and up); the 1 GiB reserve.
    report = memory("meta-llama/Llama-3.1-8B", "32k", engine="vllm")
    figures = report.engine
    expected = 81_559 * (1 << 20) * 9 // 10 - 8_030_261_248 * 2 - 8192 * 2 * 14_336 * 2 - GIB
    assert figures.budget_bytes == expected
    assert not figures.budget_given


def test_solve_ctx_gives_the_engines_longest_request_and_the_largest_context_that_fits_without_one():
    # vLLM at 40 GiB: 20,480 blocks of 16 → a single request of 20,480 · 16 = 327,680 tokens.
    # Without an engine, on an H100 less 1 GiB: (81,559 MiB − 1 GiB − 16,060,522,496 weights − 117,440,512 activations
    # (2,048 · 28,672 · 2)) // 131,072 bytes a token = 520,851. Both pass the model's own limit (131,072), so the
    # model here is told it has a longer one (the answer stops at a model's limit: the next test).
    from ffncalc.loading import load_config

    longer = load_config("meta-llama/Llama-3.1-8B", overrides=["max_position_embeddings=1048576"])
    report = memory(longer, "32k", engine="vllm", kv_budget="40GiB", solve="ctx")
    assert report.solved.value == 327_680
    limit = 81_559 * (1 << 20) - GIB
    assert report.solved.without_engine == (limit - 16_060_522_496 - 117_440_512) // 131_072 == 520_851


def test_solve_batch_is_the_whole_requests_the_engine_admits():
    report = memory("meta-llama/Llama-3.1-8B", "32k", engine="vllm", kv_budget="40GiB", solve="batch")
    assert report.solved.value == 10  # 20,480 blocks / 2,048 a request


def test_the_json_reports_the_engine_figures_as_the_issue_names_them(ffncalc):
    run = ffncalc(
        "memory", "meta-llama/Llama-3.1-8B", "--engine", "vllm", "--kv-budget", "40GiB", "--ctx", "32768",
        "--tp", "2", "--kv-dtype", "fp8", "--max-num-batched-tokens", "2048", "--json",
    )  # fmt: skip
    assert run.exit_code == 0, run.stderr
    figures = json.loads(run.stdout)["engine"]
    assert (figures["kv_capacity_tokens"], figures["num_blocks"], figures["max_concurrency"]) == (
        1_310_720,
        81_920,
        40.0,
    )


@pytest.mark.parametrize("columns", [80, 120])
def test_the_engine_answer_comes_first_and_reads_whole(ffncalc, monkeypatch, columns):
    monkeypatch.setenv("COLUMNS", str(columns))
    run = ffncalc("memory", "meta-llama/Llama-3.1-8B", "--engine", "vllm", "--kv-budget", "40GiB", "--ctx", "32768")
    assert run.exit_code == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[1].startswith("vllm: KV cache 327,680 tokens, 20,480 blocks of 16;")
    assert all(len(line) <= columns for line in lines)


def test_engine_options_without_an_engine_are_refused(ffncalc):
    run = ffncalc("memory", "meta-llama/Llama-3.1-8B", "--kv-budget", "40GiB")
    assert run.exit_code != 0
    assert "add --engine vllm" in run.stderr


def test_an_unknown_engine_is_refused_naming_the_choices(ffncalc):
    run = ffncalc("memory", "meta-llama/Llama-3.1-8B", "--engine", "tgi")
    assert run.exit_code != 0
    assert "use vllm, vllm@VERSION" in run.stderr


def test_vllm_serves_a_float32_checkpoint_in_bfloat16():
    # gemma-2-9b's config says torch_dtype float32; vLLM's dtype="auto" downcasts float32 models to the platform's
    # preferred 16-bit type, bfloat16 on an H100 (vllm/config/model.py _resolve_auto_dtype, v0.10.1+). Its
    # 9,241,705,984 parameters (transformers 5.24 on the meta device, tests/expected/transformers/) are then
    # 18,483,411,968 bytes, and the KV cache is 16-bit too: the same capacity as asking for bf16 outright.
    auto = memory("google/gemma-2-9b", "8k", engine="vllm", gpu="h100")
    asked = memory("google/gemma-2-9b", "8k", engine="vllm", gpu="h100", dtype="bf16")
    assert auto.weights.dtype == "BF16" and auto.weights.bytes == 2 * 9_241_705_984
    assert auto.engine is not None and asked.engine is not None
    assert auto.engine.kv_capacity_tokens == asked.engine.kv_capacity_tokens
    assert any("serves this F32 checkpoint in BF16" in note for note in auto.notes)


def test_without_an_engine_a_float32_checkpoint_counts_as_stored():
    report = memory("google/gemma-2-9b", "8k")
    assert report.weights.dtype == "F32" and report.weights.bytes == 4 * 9_241_705_984


def test_an_engine_version_needs_a_version_after_the_at_sign(ffncalc):
    result = ffncalc("memory", "google/gemma-2-9b", "--engine", "vllm@")
    assert result.exit_code == 2 and result.stdout == ""
    assert "name a version after '@'" in result.stderr


def test_solve_ctx_stops_at_the_models_limit_and_says_so(ffncalc):
    # Llama-3.1-8B on an H100: 16,060,522,496 bytes of weights leave room for over 500,000 tokens of KV at 131,072
    # bytes each, but its config's max_position_embeddings is 131,072: the answer is that limit, said as such.
    result = ffncalc("memory", "meta-llama/Llama-3.1-8B", "--solve", "ctx", "--gpu", "h100", "--json")
    assert result.exit_code == 0
    solved = result.json()["solved"]
    assert solved["value"] == solved["without_engine"] == 131_072
    assert solved["limit"] == 131_072 and solved["fits"] is True


def test_solve_when_the_weights_alone_do_not_fit_is_a_clear_answer_and_exit_1(ffncalc):
    # Llama-3.1-70B in BF16: 70,553,706,496 parameters × 2 = 141,107,412,992 bytes (131.4 GiB), more than an H100's
    # 81,559 MiB: no context fits at all.
    result = ffncalc("memory", "meta-llama/Llama-3.1-70B", "--solve", "ctx", "--gpu", "h100")
    assert result.exit_code == 1
    assert "Does not fit at all: one sequence needs" in " ".join(result.stdout.split())
    assert "Longest context: 0" not in result.stdout


def test_vllms_longest_single_request_stops_at_the_models_limit():
    # DeepSeek-V3 in FP8 over 8 H200s holds far more than one request of its max_position_embeddings (163,840).
    report = memory("deepseek-ai/DeepSeek-V3", "8k", engine="vllm", gpu="h200", tensor_parallel=8)
    assert report.engine is not None and report.engine.max_context == 163_840


def test_vllm_refusing_to_start_is_said_and_exits_1(ffncalc):
    # Llama-3.1-70B at 128k over 2 H100s: 65.7 GiB of weights per GPU leave about 4 GiB of KV cache, 26,848 tokens;
    # one request of 131,072 tokens does not fit, and vLLM refuses to start ("larger than the available KV cache").
    result = ffncalc(
        "memory", "meta-llama/Llama-3.1-70B", "--engine", "vllm", "--gpu", "h100", "--tp", "2", "--ctx", "128k"
    )
    assert result.exit_code == 1
    assert "vllm would refuse to start" in result.stderr


@pytest.mark.parametrize(("gpu", "chunk"), [("l4", 2048), ("h100", 8192), ("b200", 16384)])
def test_sglang_quotes_its_own_chunked_prefill_size_not_vllms_batched_tokens(gpu, chunk):
    # SGLang's server_args.py: under 35 GiB (an L4, 24 GiB) 2,048; under 160 GiB (an H100, 81,559 MiB) 8,192; else
    # (a B200, 183,359 MiB) 16,384.
    report = memory("meta-llama/Llama-3.1-8B", "8k", engine="sglang", gpu=gpu)
    assert report.engine is not None and report.engine.max_num_batched_tokens == chunk
    assert report.engine.max_num_batched_tokens_source.startswith("SGLang's default chunked_prefill_size")


def test_a_kv_budget_of_one_pib_is_a_size_as_the_limit_message_says(ffncalc):
    # 1 PiB = 2^50 bytes, the largest size ffncalc takes; 2 PiB is past it, and the message says so.
    assert ffncalc("memory", "meta-llama/Llama-3.1-8B", "--engine", "vllm", "--kv-budget", "1PiB").exit_code == 0
    result = ffncalc("memory", "meta-llama/Llama-3.1-8B", "--engine", "vllm", "--kv-budget", "2PiB")
    assert result.exit_code == 2 and "at most 1 PiB" in result.stderr


def test_with_an_engine_the_last_line_is_the_engines_answer(monkeypatch):
    from .conftest import run_main

    monkeypatch.setenv("COLUMNS", "80")
    lines = run_main("memory", "meta-llama/Llama-3.1-8B", "--engine", "vllm").stdout.splitlines()
    assert " ".join(lines[-2:]).startswith("vllm: KV cache ")
