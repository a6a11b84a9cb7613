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
    from ffncalc.api import _load, stored_as
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
    from ffncalc.api import _load
    from ffncalc.serving_layout import ServingLayout, check_layout

    # 256 = 2^8: an EP of 6 leaves experts over (the library's check; DeepSeek-V3's 128 heads refuse --tp 6 first)
    with pytest.raises(UsageError, match="expert_parallel 6 does not divide the 256 routed experts"):
        check_layout(_load(V3).spec, ServingLayout(tensor_parallel=6, expert_parallel=6))
    with pytest.raises(UsageError, match="expert_parallel 16 does not divide tensor_parallel 8"):
        report(expert_parallel=16)
    with pytest.raises(UsageError, match="no routed experts"):
        speed("meta-llama/Llama-3.1-8B", "h100", tensor_parallel=8, expert_parallel=8)
