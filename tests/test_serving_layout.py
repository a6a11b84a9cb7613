"""Serving layouts beyond tensor parallelism (issue 38, serving half): expert parallelism and attention data-parallel.

Every number is derived here from DeepSeek-V3's config.json (hidden_size 7,168; 61 layers, first_k_dense_replace 3,
so 58 MoE layers; n_routed_experts 256, num_experts_per_tok 8, moe_intermediate_size 2,048; MLA kv_lora_rank 512 +
qk_rope_head_dim 64) and its FP8 checkpoint's layout (E4M3 weights, one F32 scale per 128 × 128 block).
"""

import pytest

from ffncalc.api import speed
from ffncalc.errors import UsageError

V3 = "deepseek-ai/DeepSeek-V3"
HIDDEN, MOE_LAYERS, DENSE_LAYERS, LAYERS, EXPERTS, K = 7168, 58, 3, 61, 256, 8

# One routed expert: gate and up 2,048 × 7,168, down 7,168 × 2,048, one byte each (E4M3), plus a F32 scale per
# 128 × 128 block: (2,048 / 128) × (7,168 / 128) = 16 × 56 = 896 scales × 4 bytes = 3,584 bytes per matrix.
EXPERT_BYTES = 3 * (2048 * 7168 + 896 * 4)
assert EXPERT_BYTES == 44_050_944
# MLA caches the latent and the rope key: 512 + 64 = 576 elements per token per layer, 16-bit.
KV_PER_TOKEN = (512 + 64) * LAYERS * 2
assert KV_PER_TOKEN == 70_272


def report(**changes):
    (found,) = speed(V3, "h200", context="4k", prompt="4k", batches="64", tensor_parallel=8, **changes).reports
    return found


def routed_bytes(found):
    return sum(c.bytes for c in found.decode.components if c.name == "ffn")


def test_expert_parallel_8_holds_32_whole_experts_per_gpu():
    # 256 experts ÷ 8 ranks = 32 experts whole per GPU, in each of the 58 MoE layers.
    from ffncalc.api import loaded_model as _load
    from ffncalc.api import stored_as
    from ffncalc.footprint import weight_layout
    from ffncalc.roofline import _weights_by_operator
    from ffncalc.serving_layout import ServingLayout

    loaded = _load(V3)
    weights = stored_as(loaded, None, None)
    stored = weight_layout(loaded.spec, weights.dtype, weights.scheme)
    by_ep = _weights_by_operator(stored, 8, ServingLayout(tensor_parallel=8, expert_parallel=8))
    assert by_ep["routed_experts"] == 32 * MOE_LAYERS * EXPERT_BYTES == 81_758_552_064
    # TP 8 splits every expert matrix in eight instead: 2,048·7,168 / 8 bytes and 896·4 / 8 scale bytes each
    by_tp = _weights_by_operator(stored, 8, ServingLayout(tensor_parallel=8))
    assert by_tp["routed_experts"] == EXPERTS * MOE_LAYERS * EXPERT_BYTES // 8


def test_a_gpu_runs_its_own_experts_the_batch_touches():
    # 64 tokens touch 1 − (248/256)^64 of the experts; a GPU runs its share of them in each of the 58 MoE layers:
    # every expert's slice under TP 8, 32 whole experts under EP 8, so 8 × fewer.
    touched = 1 - (1 - K / EXPERTS) ** 64
    assert report().decode.expert_runs == pytest.approx(MOE_LAYERS * EXPERTS * touched, rel=1e-12)
    assert report(expert_parallel=8).decode.expert_runs == pytest.approx(MOE_LAYERS * 32 * touched, rel=1e-12)


def test_all_to_all_at_batch_64_over_ep_8():
    # Decode at batch 64 over 8 GPUs: each owns 8 tokens; each sends each token's 7,168 × 2 bytes to its 8 experts,
    # 7/8 of them on another rank: 8 × 7,168 × 2 × 8 × 7/8 = 802,816 bytes per MoE layer each way, × 58 layers,
    # dispatch and combine.
    per_layer = 8 * HIDDEN * 2 * K * 7 // 8
    assert per_layer == 802_816
    found = report(expert_parallel=8)
    assert found.decode.all_to_all_bytes == 2 * MOE_LAYERS * per_layer == 93_126_656
    # The all-reduces left: after each of the 61 attentions and the 3 dense FFNs, 2 · 7/8 · 64 · 7,168 · 2 bytes each.
    each = 2 * 7 * 64 * HIDDEN * 2 // 8
    assert found.decode.allreduce_bytes == (LAYERS + DENSE_LAYERS) * each
    # H200 NVLink 4: 450 GB/s per direction.
    assert found.decode.all_to_all_seconds == pytest.approx(93_126_656 / 450e9)
    assert found.layout.expert_parallel == 8


def test_dp_attention_8_holds_the_latent_of_its_own_requests_once():
    # Without DP attention, MLA's latent is copied on every TP rank: the whole batch's 64 × 4,096 × 70,272 bytes.
    assert report().kv_bytes == 64 * 4096 * KV_PER_TOKEN == 18_421_383_168
    # With DP attention over 8, each GPU holds its own 8 sequences' latent once: an eighth.
    found = report(expert_parallel=8, dp_attention=True)
    assert found.kv_bytes == 8 * 4096 * KV_PER_TOKEN == 2_302_672_896
    # Attention is not split: only the 3 dense FFN layers gather and scatter the whole batch (an all-reduce's bytes).
    assert found.decode.allreduce_bytes == DENSE_LAYERS * 2 * 7 * 64 * HIDDEN * 2 // 8
    assert found.decode.all_to_all_bytes == 93_126_656  # the same tokens per GPU as above
    # The decode step reads 8 sequences' cache, and writes their new tokens' latent.
    scores = next(c for c in found.decode.components if c.name == "attention_scores")
    assert scores.bytes == 8 * 4096 * KV_PER_TOKEN + 8 * KV_PER_TOKEN


def test_dp_attention_keeps_attention_weights_whole_on_every_gpu():
    tp, dp = report(expert_parallel=8), report(expert_parallel=8, dp_attention=True)
    projections = [next(c for c in r.decode.components if c.name == "attention_projections") for r in (tp, dp)]
    # MLA's projections per layer: q_a 7,168 × 1,536, q_b 1,536 × 128·192, kv_a 7,168 × 576, kv_b 512 × 128·256,
    # o 128·128 × 7,168, FP8 with F32 block scales; all 61 layers whole under DP attention, an eighth under TP.
    matrices = 7168 * 1536 + 1536 * 128 * 192 + 7168 * 576 + 512 * 128 * 256 + 128 * 128 * 7168
    assert projections[1].bytes - projections[0].bytes > LAYERS * matrices * 7 // 8 * 0.99


def test_refusals_name_the_rule():
    from ffncalc.api import loaded_model as _load
    from ffncalc.serving_layout import ServingLayout, check_layout

    # 256 = 2^8: an EP of 6 leaves experts over (the library's check; DeepSeek-V3's 128 heads refuse --tp 6 first)
    with pytest.raises(UsageError, match="`expert_parallel` 6 does not divide the 256 routed experts"):
        check_layout(_load(V3).spec, ServingLayout(tensor_parallel=6, expert_parallel=6))
    with pytest.raises(UsageError, match="`expert_parallel` 16 does not divide `tensor_parallel` 8"):
        report(expert_parallel=16)
    with pytest.raises(UsageError, match="no routed experts"):
        speed("meta-llama/Llama-3.1-8B", "h100", tensor_parallel=8, expert_parallel=8)


# --- pipeline parallelism --------------------------------------------------------------------------------------

LLAMA = "meta-llama/Llama-3.1-8B"
# Llama-3.1-8B, BF16: one layer stores attention 4,096 × (4,096 + 1,024 + 1,024 + 4,096) × 2 = 83,886,080 bytes, the
# FFN 3 × 4,096 × 14,336 × 2 = 352,321,536 and two norms 2 × 4,096 × 2 = 16,384: 436,224,000; the input table and
# the head 128,256 × 4,096 × 2 = 1,050,673,152 each; the final norm 4,096 × 2 = 8,192.
LAYER, TABLE, FINAL_NORM = 83_886_080 + 352_321_536 + 16_384, 128_256 * 4096 * 2, 8192


def test_vllm_splits_layers_into_stages_with_the_remainder_before_the_last():
    from ffncalc.serving_layout import pipeline_partitions

    # vLLM's get_pp_indices: 61 // 4 = 15 each, the one left over to the second-to-last stage.
    assert pipeline_partitions(61, 4) == [15, 15, 16, 15]
    # 32 // 5 = 6, two left over: the fourth and the third stages.
    assert pipeline_partitions(32, 5) == [6, 6, 7, 7, 6]
    with pytest.raises(UsageError, match="`pipeline_parallel` 33: the 32 layers"):
        pipeline_partitions(32, 33)


def test_llama_over_4_stages_holds_8_layers_per_gpu_the_table_first_and_the_head_last():
    (found,) = speed(LLAMA, "h100", context="8k", prompt="8k", batches="1", pipeline_parallel=4).reports
    stages = found.pipeline.stages
    assert [s.layers for s in stages] == [8, 8, 8, 8]
    # The final norm with the head on the last stage (vLLM's LlamaModel makes norm on the last rank only, a
    # PPMissingLayer elsewhere: vllm/model_executor/models/llama.py).
    assert [s.weight_bytes for s in stages] == [
        8 * LAYER + TABLE,
        8 * LAYER,
        8 * LAYER,
        8 * LAYER + TABLE + FINAL_NORM,
    ]
    # KV per GPU: 8 of the 32 layers, 8,192 tokens × 2 × 8 KV heads × 128 × 2 bytes each.
    assert found.kv_bytes == 8 * 8192 * 2 * 8 * 128 * 2
    # Batch 1 is one micro-batch: its token passes through every stage in turn, each handing 4,096 × 2 bytes on.
    assert found.pipeline.micro_batches == 1
    assert found.pipeline.decode_send_bytes == 4096 * 2
    assert found.decode.seconds_per_step == pytest.approx(sum(s.decode_seconds for s in stages))


def test_with_as_many_micro_batches_as_stages_the_slowest_stage_sets_the_pace():
    (found,) = speed(LLAMA, "h100", context="8k", prompt="8k", batches="8", pipeline_parallel=2).reports
    # 8 sequences as 2 micro-batches of 4; each stage's time at 4 sequences: TPOT = max(Σ, 2 × slowest).
    assert (found.pipeline.micro_batches, found.pipeline.micro_batch) == (2, 4)
    times = [s.decode_seconds for s in found.pipeline.stages]
    assert found.decode.seconds_per_step == pytest.approx(max(sum(times), 2 * max(times)))
    assert found.decode.tokens_per_second == pytest.approx(8 / found.decode.seconds_per_step)


# --- memory --engine with the layout ----------------------------------------------------------------------------


def test_sglang_dp_attention_pool_holds_the_latent_per_rank_and_the_replica_8_times_it():
    from ffncalc.api import memory

    engine = memory(V3, "8k", engine="sglang", gpu="h200", tensor_parallel=8, expert_parallel=8, dp_attention=True)
    # SGLang's cell for MLA: (kv_lora_rank + qk_rope_head_dim) × layers × bytes = 576 × 61 × 2, per rank, unsplit.
    assert engine.engine.kv_capacity_tokens == engine.engine.budget_bytes // KV_PER_TOKEN
    assert "8 × max_concurrency" in engine.engine.notes[-2] + engine.engine.notes[-1]
    # vLLM's DP ranks keep every non-expert weight whole (tensor parallel 1 within a rank); SGLang splits the dense
    # FFN layers, shared experts and head over the 8: vLLM's ranks hold more.
    vllm = memory(V3, "8k", engine="vllm", gpu="h200", tensor_parallel=8, expert_parallel=8, dp_attention=True)
    assert vllm.engine.weights_bytes > engine.engine.weights_bytes


def test_memory_ep_needs_an_engine():
    from ffncalc.api import memory

    with pytest.raises(UsageError, match="follow an engine's layout"):
        memory(V3, "8k", tensor_parallel=8, expert_parallel=8)


# --- disaggregated prefill and decode ---------------------------------------------------------------------------


def test_disaggregated_llama_moves_its_prompts_cache_over_the_h100s_400_gbps_link():
    (found,) = speed(LLAMA, "h100", context="8k", prompt="8k", batches="16", output=256, disaggregate="2:6").reports
    split = found.disaggregation
    # Llama-3.1-8B's cache: 2 × 8 KV heads × 128 × 32 layers × 2 bytes = 131,072 bytes a token; 8,192 prompt tokens.
    assert split.kv_bytes_per_request == 8192 * 131_072 == 1_073_741_824
    # DGX H100: one 400 Gb/s ConnectX-7 port per GPU: 50 GB/s; one GPU per copy of the model.
    assert split.scale_out == 50 * 10**9
    assert split.transfer_seconds == pytest.approx(1_073_741_824 / 50e9)  # 21.5 ms
    assert split.link_requests_per_second == pytest.approx(2 * 50e9 / 1_073_741_824)
    # The pools: 2 copies each taking one prompt per TTFT; 6 copies each finishing 16 requests per decode span.
    ttft = found.prefill.seconds
    decode = found.request.seconds - ttft
    assert split.prefill_requests_per_second == pytest.approx(2 / ttft)
    assert split.decode_requests_per_second == pytest.approx(6 * 16 / decode)
    # Balanced when prefill GPUs ÷ all = TTFT ÷ (TTFT + decode ÷ 16): each pool's GPU-seconds per request.
    assert split.balanced_prefill_share == pytest.approx(ttft / (ttft + decode / 16))


def test_disaggregate_refusals():
    with pytest.raises(UsageError, match="add `output`"):
        speed(LLAMA, "h100", disaggregate="1:3")
    with pytest.raises(UsageError, match="a multiple of the 2 GPUs"):
        speed(LLAMA, "h100", tensor_parallel=2, output=16, disaggregate="3:4")


def test_expected_time_includes_the_all_to_all():
    """The fit saw no expert-parallel rows; the all-to-all is added to the expected time at the ceiling's link time,
    so no expected time is below the ceiling (a lone 4k prompt over EP 8 with attention data-parallel: its rank
    dispatches all 4,096 tokens, the ceiling's largest term)."""
    found = report(expert_parallel=8, dp_attention=True)
    assert found.prefill.all_to_all_seconds > 0
    assert found.prefill.expected_seconds >= found.prefill.seconds
    assert found.decode.expected_seconds_per_step >= found.decode.seconds_per_step
