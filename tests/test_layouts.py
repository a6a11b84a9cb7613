"""Training layouts (`train --tp --pp --cp --ep --dp --vpp`, `train --plan`): per-GPU memory of each pipeline rank,
communication per step, refusals, and the plan for Llama 3.1 405B.

Every expected number is derived here from the configs' numbers, a published layout (with its source) or the rule
the module cites (Megatron-LM's 1F1B schedule, ring collectives); none is pasted from ffncalc's output.
"""

import json

import pytest

from ffncalc.accelerators import accelerator
from ffncalc.api import loaded_model as _load
from ffncalc.api import train
from ffncalc.errors import UsageError
from ffncalc.layouts import ParallelLayout, rank_memory

from .conftest import run_main
from .test_output_width import assert_fits

L405 = "meta-llama/Llama-3.1-405B"
DSV3 = "deepseek-ai/DeepSeek-V3"
QWEN_MOE = "Qwen/Qwen3-30B-A3B"
H100_MEMORY = 81_559 * 2**20  # nvidia-smi's 81,559 MiB for an H100 80GB HBM3 (as ffncalc's table)

# Llama-3.1-405B config.json: hidden 16,384, 126 layers, 128 heads of 128, 8 KV heads, FFN 53,248, vocab 128,256,
# untied head, RMSNorm without bias.
H, LAYERS, HEADS, KV_HEADS, HEAD_DIM, FFN, VOCAB = 16384, 126, 128, 8, 128, 53248, 128_256
TP = 8

# One layer's parameters on one of 8 tensor-parallel ranks: q, k, v, o and gate, up, down split; two norms copied.
MATRICES = H * HEADS * HEAD_DIM * 2 + H * KV_HEADS * HEAD_DIM * 2 + 3 * H * FFN
LAYER_PER_GPU = MATRICES // TP + 2 * H
EMBEDDING_PER_GPU = VOCAB * H // TP


def activations_per_layer(s, b=1):
    """One Llama layer's stored activations per GPU, 16-bit, with TP 8 and sequence parallelism (Korthikanti et al.
    2022 eq. 4 with Llama's widths, FlashAttention: no s×s scores, 4·a·s·b of log-sum-exp): copied parts — the two
    norms' inputs 4sbh, each block's input 2sbh and dropout mask sbh — and split parts — Q, K, V, the output
    projection's input, the log-sum-exp, and the gated FFN's 3 · 2sbf — all divided by TP."""
    copied = 4 * s * b * H + 2 * (2 * s * b * H + s * b * H)
    attention = 2 * s * b * (HEADS * HEAD_DIM * 2 + KV_HEADS * HEAD_DIM * 2) + 4 * HEADS * s * b
    ffn = 3 * 2 * s * b * FFN
    return (copied + attention + ffn) // TP


def layout(spec, seq, **fields):
    return ParallelLayout(**fields).checked(spec, seq)


@pytest.fixture(scope="module")
def llama():
    return _load(L405).spec


# --- memory: Llama 3's published layouts (Grattafiori et al. 2024, Table 4) ---------------------------------


@pytest.mark.parametrize(
    ("gpus", "cp", "dp", "seq", "global_batch"),
    [
        (8192, 1, 64, 8192, 2048),  # 16M tokens a step
        (16384, 1, 128, 8192, 2048),
        (16384, 16, 8, 131072, 128),  # 16M tokens a step at 128k
    ],
)
def test_llama_405b_published_layouts_fit_80gb_h100s(llama, gpus, cp, dp, seq, global_batch):
    lay = layout(
        llama, seq, tp=8, pp=16, cp=cp, dp=dp, micro_batch=1, global_batch=global_batch, sequence_parallel=True
    )
    assert lay.gpus == gpus
    ranks = rank_memory(llama, lay, seq)
    # 126 layers over 16 stages, one fewer on the first and last (Llama 3 §3.3.2): 7, 8 × 14, 7.
    assert [r.layers for r in ranks] == [7] + [8] * 14 + [7]
    # Rank 1, by hand: 8 layers; 2 bytes a weight and a gradient, 12 of Adam states sharded over dp · cp (ZeRO-1).
    params = 8 * LAYER_PER_GPU
    assert ranks[1].dense_params == params == 3_187_933_184
    assert ranks[0].dense_params == 7 * LAYER_PER_GPU + EMBEDDING_PER_GPU
    shards = dp * cp
    assert (ranks[1].weights, ranks[1].gradients) == (2 * params, 2 * params)
    assert ranks[1].optimizer_states == -(-12 * params // shards)
    # 1F1B: rank r holds min(micro-batches, 16 − r) micro-batches; here micro-batches = global ÷ dp ≥ 16.
    assert global_batch // dp >= 16
    per_layer = activations_per_layer(seq // cp)
    assert ranks[0].activations == 7 * 16 * per_layer
    assert ranks[1].activations == 8 * 15 * per_layer
    total = 4 * params + -(-12 * params // shards) + 8 * 15 * per_layer
    assert ranks[1].total == total
    assert max(r.total for r in ranks) == total  # rank 1: 8 layers and 15 micro-batches in flight
    assert total <= H100_MEMORY


def test_deepseek_v3_layout_fits_h800s():
    """DeepSeek-V3 (technical report §3.2): 2,048 H800s, PP 16, EP 64, ZeRO-1 data parallelism, batch 15,360 of 4K.
    With full recomputation the layout fits (and with DeepSeek's own selective recomputation: the test below)."""
    spec = _load(DSV3).spec
    lay = layout(spec, 4096, pp=16, ep=64, dp=128, zero_stage=1, global_batch=15360, recompute="full")
    assert lay.gpus == 2048 and lay.expert_data_parallel == 2  # tp · dp · cp ÷ ep
    ranks = rank_memory(spec, lay, 4096)
    # 61 layers over 16 stages, balanced: 13 stages of 4, 3 of 3 (Megatron-Bridge writes an explicit layout).
    assert sorted(r.layers for r in ranks) == [3] * 3 + [4] * 13
    # 256 routed experts ÷ ep 64 = 4 per GPU in each MoE layer: (gate, up, down) 3 · 7,168 · 2,048 each.
    moe_layers_rank_1 = 4  # layers 4–7, all MoE (the first 3 of 61 are dense)
    assert ranks[1].expert_params == moe_layers_rank_1 * 4 * 3 * 7168 * 2048
    assert max(r.total for r in ranks) <= accelerator("h800").memory


# DeepSeek-V3's config.json: hidden 7,168, 61 layers (the first 3 dense, FFN 18,432), 256 routed experts of 2,048
# (8 a token) and 1 shared, 128 heads, MLA q_lora 1,536, kv_lora 512, qk_nope 128, rope 64, v 128, vocab 129,280.
DS_H, DS_HEADS, DS_QK, DS_V, DS_VOCAB = 7168, 128, 128 + 64, 128, 129_280
DS_ATTENTION = (
    DS_H * 1536 + 1536 + 1536 * DS_HEADS * DS_QK  # q_a, its norm, q_b
    + DS_H * (512 + 64) + 512 + 512 * DS_HEADS * (128 + DS_V)  # kv_a (latent + rope key), its norm, kv_b
    + DS_HEADS * DS_V * DS_H  # o
)  # fmt: skip
DS_DENSE_LAYER = DS_ATTENTION + 2 * DS_H + 3 * DS_H * 18432
DS_MOE_LAYER_SHARED = DS_ATTENTION + 2 * DS_H + 256 * DS_H + 3 * DS_H * 2048  # + router, shared expert
DS_EXPERT = 3 * DS_H * 2048


@pytest.mark.parametrize(
    ("recompute", "modules", "per_token", "fits"),
    [
        # Stored per token of a layer (16-bit, TP 1, FlashAttention): the norms' inputs 4h, each block's normed input
        # 2h and dropout mask h (×2), MLA's Q, K, V 2·128·(192 + 192 + 128), the output projection's input 2·128·128,
        # the latents 2·(512 + 64 + 1,536), the log-sum-exp 4·128; the FFN's 3 · 2 · 18,432 (dense) or (8 + 1) experts
        # · 3 · 2 · 2,048 (MoE): the same 110,592.
        ("selective", (), 4 * DS_H + 2 * 3 * DS_H + 2 * DS_HEADS * (2 * DS_QK + 2 * DS_V) + 2 * 2112 + 4 * 128
         + 110_592, False),
        # DeepSeek's own (§3.2.3: "recompute all RMSNorm operations and MLA up-projections during back-propagation"),
        # as Megatron-LM's recompute_modules layernorm and mla_up_proj discard them: no normed inputs (2 × 2h) and
        # no Q, K, V.
        ("selective", ("layernorm", "mla_up_proj"), 4 * DS_H + 2 * DS_H + 2 * DS_HEADS * DS_V + 2 * 2112 + 4 * 128
         + 110_592, True),
    ],
)  # fmt: skip
def test_deepseek_v3_busiest_rank_by_hand(recompute, modules, per_token, fits):
    """Pipeline rank 0 of DeepSeek-V3's layout (PP 16, EP 64, DP 128, ZeRO-1, 15,360 sequences of 4,096: 120
    micro-batches, 16 in flight): layers 0–3 (3 dense, 1 MoE) and the embedding. Dense parameters whole (TP 1), its
    4 of the MoE layer's 256 experts; 2 + 2 bytes each, Adam's 12 over DP 128 (dense) and 2 · 1 · 128 ÷ 64 = 2
    expert-data-parallel ranks (experts)."""
    spec = _load(DSV3).spec
    lay = layout(spec, 4096, pp=16, ep=64, dp=128, global_batch=15360, recompute=recompute, recompute_modules=modules)
    ranks = rank_memory(spec, lay, 4096)
    dense = 3 * DS_DENSE_LAYER + DS_MOE_LAYER_SHARED + DS_VOCAB * DS_H
    experts = 4 * DS_EXPERT
    assert (ranks[0].dense_params, ranks[0].expert_params) == (dense, experts)
    states = -(-12 * dense // 128) + -(-12 * experts // 2)
    activations = 16 * 4 * per_token * 4096
    assert ranks[0].activations == activations
    total = 4 * (dense + experts) + states + activations
    assert max(r.total for r in ranks) == ranks[0].total == total
    assert (total <= accelerator("h800").memory) is fits


def test_recompute_modules_refusals():
    spec = _load(DSV3).spec
    with pytest.raises(UsageError, match="add `recompute` selective"):
        ParallelLayout(recompute_modules=("layernorm",)).checked(spec, 4096)
    with pytest.raises(UsageError, match="`recompute_modules` attn: ffncalc counts core_attn, layernorm, mla_up_proj"):
        ParallelLayout(recompute="selective", recompute_modules=("attn",)).checked(spec, 4096)
    llama = _load(L405).spec
    with pytest.raises(UsageError, match="mla_up_proj recomputes MLA's up-projections; this model has no MLA"):
        ParallelLayout(recompute="selective", recompute_modules=("mla_up_proj",)).checked(llama, 4096)


def test_mla_up_projection_recompute_flops():
    """What --recompute-modules mla_up_proj runs again: 2 FLOPs a weight of q_b (1,536 × 128 · 192) and kv_b (512 ×
    128 · 256) for each token of each of DeepSeek-V3's 61 layers; layernorm adds no matmul."""
    with_up = train(DSV3, seq=4096, recompute="selective", recompute_modules=("layernorm", "mla_up_proj"))
    up = 2 * 4096 * 61 * (1536 * DS_HEADS * DS_QK + 512 * DS_HEADS * (128 + DS_V))
    assert with_up.hardware_flops - with_up.total_flops == up * with_up.tokens // 4096


# --- communication, by hand ---------------------------------------------------------------------------------


def collectives(model, seq, gpu="h100", **options):
    report = train(model, seq=seq, gpu=gpu, **options)
    return {c.name: c for c in report.communication}


def test_tp_pp_cp_bytes_llama_405b_at_128k():
    comm = collectives(
        L405, 131072, gpus=16384, tensor_parallel=8, pipeline_parallel=16, context_parallel=16,
        sequence_parallel=True, global_batch=128,
    )  # fmt: skip
    s, m, layers = 131072 // 16, 128 // 8, 8  # tokens per CP rank, micro-batches, the busiest rank's layers
    a = s * H * 2  # one micro-batch's hidden states, bf16
    # TP with SP: per layer 2 all-gathers + 2 reduce-scatters forward, as many backward; each sends (t−1)/t of A.
    tp = comm["TP all-gather + reduce-scatter"]
    assert tp.bytes == 8 * 7 * a // 8 * layers * m
    assert tp.link == "NVLink"
    # PP: A ÷ tp (sequence parallel) forward and its gradient backward, per micro-batch.
    assert comm["PP send/recv activations"].bytes == 2 * m * (a // 8)
    # CP ring: K and V of the rank's 8 ÷ 8 = 1 KV head, 128 + 128 wide: passed cp − 1 times forward, twice back.
    kv = s * (KV_HEADS // 8) * (HEAD_DIM + HEAD_DIM) * 2
    assert comm["CP ring K/V exchange"].bytes == 3 * 15 * kv * layers * m


def test_dp_bytes_zero_1_and_zero_3():
    # Llama-3.1-8B on 64 H100s, data parallel only: 8,030,261,248 parameters (Meta's model card: 8.03B) on each GPU.
    params = 8_030_261_248
    grads = 2 * params
    zero1 = collectives("meta-llama/Llama-3.1-8B", 8192, gpus=64, zero_stage=1, global_batch=128)
    share = 63 * grads // 64  # ring reduce-scatter / all-gather: (n − 1)/n of the buffer
    assert zero1["DP gradient reduce-scatter"].bytes == share
    assert zero1["DP weight all-gather"].bytes == share
    zero3 = collectives("meta-llama/Llama-3.1-8B", 8192, gpus=64, zero_stage=3, global_batch=128)
    m = 128 // 64
    assert zero3["DP weight all-gather (ZeRO-3)"].bytes == 2 * m * share  # forward and backward, each micro-batch
    assert zero3["DP gradient reduce-scatter"].bytes == share
    zero0 = collectives("meta-llama/Llama-3.1-8B", 8192, gpus=64, zero_stage=0, global_batch=128)
    assert zero0["DP gradient all-reduce"].bytes == 2 * share


def test_ep_all_to_all_bytes_qwen3_30b():
    # Qwen3-30B-A3B config.json: 48 layers, all MoE, 8 of 128 experts a token, hidden 2,048.
    comm = collectives(QWEN_MOE, 4096, gpus=8, expert_parallel=8, micro_batch=4, global_batch=512, gpu="b200")
    s, b, k, h, ep, m = 4096, 4, 8, 2048, 8, 512 // (4 * 8)
    routed = s * b * k * h * 2  # bytes of the routed copies of one micro-batch's tokens
    ep_a2a = comm["EP all-to-all dispatch + combine"]
    assert ep_a2a.bytes == 48 * (4 * (ep - 1) * routed // ep) * m  # dispatch + combine, forward and backward
    assert ep_a2a.calls == 4 * 48 * m and ep_a2a.link == "NVLink"


# --- refusals --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "seq", "words"),
    [
        (dict(tp=3, dp=1), 8192, "tensor-parallel size of 3"),
        (dict(pp=64, vpp=4), 8192, "pp 64 × vpp 4 = 256 virtual stages"),
        (dict(cp=3), 8192, "2 × cp = 6"),
        (dict(ep=2), 8192, "ep 2 splits experts, and this model has none"),
        (dict(vpp=2), 8192, "it needs pp ≥ 2"),
        (dict(sequence_parallel=True), 8192, "needs tp ≥ 2"),
    ],
)
def test_refusals_name_fields(llama, fields, seq, words):
    with pytest.raises(UsageError, match=None) as error:
        ParallelLayout(**fields).checked(llama, seq)
    assert words in str(error.value) and "--" not in str(error.value)


def test_refusals_for_experts():
    spec = _load(DSV3).spec
    with pytest.raises(UsageError, match="ep 3 does not divide 256 experts"):
        ParallelLayout(ep=3, dp=3).checked(spec, 4096)
    with pytest.raises(UsageError, match="ep 64 does not divide tp 1 × dp 32 × cp 1"):
        ParallelLayout(pp=16, ep=64, dp=32).checked(spec, 4096)


def test_cli_refuses_in_one_line():
    run = run_main("train", L405, "--gpus", "1000", "--tp", "8", "--pp", "16")
    assert run.exit_code != 0 and run.stderr.startswith("Error:") and run.stderr.count("\n") == 1
    run = run_main("train", L405, "--gpus", "16384", "--tp", "8", "--pp", "64", "--vpp", "4")
    assert run.exit_code != 0 and "virtual stages" in run.stderr and "Traceback" not in run.stderr


# --- JSON and the plan ------------------------------------------------------------------------------------------


def test_train_json_keys():
    run = run_main(
        "train", L405, "--gpus", "16384", "--tp", "8", "--pp", "16", "--sequence-parallel", "--global-batch", "2048",
        "--json",
    )  # fmt: skip
    assert run.exit_code == 0, run.stderr
    data = json.loads(run.stdout)
    assert data["layout"] == {
        "tp": 8, "pp": 16, "cp": 1, "ep": 1, "dp": 128, "vpp": 1, "micro_batch": 1, "global_batch": 2048,
    }  # fmt: skip
    for key in ("per_gpu_bytes", "fits", "communication", "bubble_fraction", "expected_step_seconds"):
        assert key in data
    assert isinstance(data["per_gpu_bytes"], int) and data["fits"] is True
    assert data["bubble_fraction"] == 15 / 16  # (pp − 1) ÷ (vpp · micro-batches), 2,048 ÷ 128 = 16
    assert {"name", "bytes", "seconds", "overlapped"} <= set(data["communication"][0])
    assert 0 < data["expected_mfu"] < 1 and data["expected_tokens_per_second_per_gpu"] > 0
    assert "mfu_by_convention" in data and data["mfu_assumed"] is True  # the existing keys stay


def test_plan_finds_metas_layout_or_better():
    meta = train(
        L405, gpus=16384, tensor_parallel=8, pipeline_parallel=16, sequence_parallel=True, global_batch=2048
    )  # Llama 3's 16,384-GPU layout (TP 8, PP 16, DP 128), in ffncalc's own expected figure
    assert meta.fits
    plan = train(L405, gpus=16384, plan=True, global_batch=2048)
    assert plan.layouts and all(lay.fits for lay in plan.layouts)
    best = plan.layouts[0]
    assert best.expected_tokens_per_second_per_gpu >= meta.expected_tokens_per_second_per_gpu
    assert best.per_gpu_bytes <= H100_MEMORY
    # Without pipeline stages a GPU holds an 8th (tp ≤ 8) of all 405 B parameters' weights and gradients, 2 + 2 bytes
    # each, whatever ZeRO-1 does to the optimizer states: 202.5 GB, more than an H100 has. It fails, and says so.
    no_pp = [r for r in plan.rejected or [] if r.layout["pp"] == 1]
    assert no_pp and no_pp[0].over_bytes > 0 and "GiB over" in no_pp[0].reason
    assert no_pp[0].per_gpu_bytes > 4 * 405 * 10**9 // 8 > H100_MEMORY


def test_plan_without_a_batch_takes_deepseek_llms_optimal_batch_rounded_to_a_power_of_two():
    """Bi et al. 2024 ("DeepSeek LLM", §3.1): B_opt = 0.2920 · C^0.3271 tokens. One trillion tokens of Llama-3.1-405B
    at 8,192: C = 1e12 / 8,192 sequences × the exact training FLOPs of one (6 × 2.52 T a token, about 2.52e24):
    0.2920 × (2.52e24)^0.3271 ≈ 2.80e7 tokens, 3,418 sequences, nearest power of two 4,096 (log2 3,418 = 11.74)."""
    from ffncalc.engine.train import optimal_global_batch

    assert optimal_global_batch(2_520_000_000_000_000_000_000_000, 8192) == 4096
    # 1e15 FLOPs: 0.2920 × 10^(15 × 0.3271) = 23,544 tokens, 2.87 sequences of 8,192, log2 1.52 → 4; 1e12 FLOPs:
    # 2,458 tokens, under one sequence → 1.
    assert optimal_global_batch(10**15, 8192) == 4
    assert optimal_global_batch(10**12, 8192) == 1
    report = train(L405, gpus=16384, plan=True)
    assert report.layout_report is not None and report.layout_report.layout["global_batch"] == 4096
    assert any("4,096 sequences" in note and "Bi et al. 2024" in note for note in report.notes)


@pytest.mark.parametrize("width", [80, 60])
def test_plan_and_layout_output_fit_the_terminal(monkeypatch, width):
    monkeypatch.setenv("COLUMNS", str(width))
    monkeypatch.setenv("NO_COLOR", "1")
    run = run_main("train", L405, "--gpus", "16384", "--tp", "8", "--pp", "16", "--sequence-parallel")
    assert run.exit_code == 0, run.stderr
    assert "Collective" in run.stdout and "busiest GPU (pipeline rank" in run.stdout
    assert_fits(run.stdout, width)
    run = run_main("train", L405, "--gpus", "16384", "--plan", "--global-batch", "2048")
    assert run.exit_code == 0, run.stderr
    assert run.stdout.startswith("Training") and "Best layout for 16,384 GPUs" in run.stdout
    assert_fits(run.stdout, width)


def test_fitted_efficiency_and_held_out_error():
    """The constants in ffncalc/layouts.py are what tools/fit_training.py fits on the `fit` rows of
    data/measurements/training_layouts.csv; on the held-out rows the median error is at most 15 %, and the Llama 3
    paper's MFU rows (43 %, 41 %, 38 %) come within 5 points."""
    import importlib.util
    import statistics
    from pathlib import Path

    from ffncalc.layouts import COMPUTE_EFFICIENCY, ROUTED_EXPERT_RATIO

    path = Path(__file__).resolve().parent.parent / "tools" / "fit_training.py"
    spec = importlib.util.spec_from_file_location("fit_training", path)
    assert spec is not None and spec.loader is not None
    fit_training = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fit_training)
    rows = fit_training.rows()
    efficiency, ratio = fit_training.fit(rows)
    assert efficiency == COMPUTE_EFFICIENCY and ratio == ROUTED_EXPERT_RATIO
    held_out = [row for row in rows if row["split"] == "held_out"]
    errors = [abs(fit_training.error(row, None)) for row in held_out]
    assert statistics.median(errors) <= 0.15
    for row in (r for r in rows if r["source"] == "llama3-paper"):
        assert abs(fit_training.predict(row, None) - float(row["measured"])) <= 0.05


# --- the interleaved schedule, as Megatron-LM runs it ---------------------------------------------------------


def test_interleaved_in_flight_follows_megatrons_schedule_table(llama):
    """Megatron-LM @ d98e8a64, megatron/core/pipeline_parallel/schedules.py: get_pp_rank_microbatches gives rank r
    (pp − r − 1)·2 + (vpp − 1)·pp warm-up chunk forwards (microbatch_group_size_per_vp_stage = pp), capped at
    micro-batches × vpp; one more runs before the first backward; get_schedule_table orders them pp micro-batches of
    chunk 0, the same of chunk 1, then the next group. Llama 3's 8,192-GPU layout (DP 64: 2,048 ÷ 64 = 32
    micro-batches) with 2 chunks a rank: (126 + 2) ÷ 32 = 4 layers a virtual stage, the first and last one fewer."""
    lay = layout(llama, 8192, tp=8, pp=16, dp=64, vpp=2, global_batch=2048, sequence_parallel=True)
    ranks = rank_memory(llama, lay, 8192)
    per_layer = activations_per_layer(8192)
    # Rank 0 holds virtual stages 0 (3 layers) and 16 (4). 30 + 16 warm-up forwards + 1 = 47: chunk 0 of
    # micro-batches 0–15, chunk 1 of 0–15, chunk 0 of 16–30: 31 of chunk 0 and 16 of chunk 1.
    assert ranks[0].activations == (31 * 3 + 16 * 4) * per_layer
    # Rank 1: 28 + 16 + 1 = 45 forwards, 29 of chunk 0 and 16 of chunk 1, 4 layers each.
    assert ranks[1].activations == (29 + 16) * 4 * per_layer
    # The last rank: virtual stages 15 (4 layers) and 31 (3): 0 + 16 + 1 = 17 forwards, 16 of chunk 0, 1 of chunk 1.
    assert ranks[15].activations == (16 * 4 + 1 * 3) * per_layer + -(-4 * 8192 * VOCAB // TP)


def test_llama_405b_dp128_interleaved_does_not_fit_an_h100(llama):
    """Llama 3's 16,384-GPU layout (TP 8, PP 16, DP 128, 2,048 sequences: 16 micro-batches) with 2 chunks a rank.
    Rank 1's warm-up, 28 + 16 = 44 chunk forwards, is more than its 16 × 2: every forward runs before the first
    backward (Megatron's are_all_microbatches_in_warmup), so it holds all 16 micro-batches of its 8 layers, 128
    layer-activations against 1F1B's 15 × 8 = 120. With 2 + 2 bytes a weight and gradient and Adam's 12 over 128
    ranks: 85,595,283,456 bytes, 74 MB over the 81,559 MiB an H100 has. Counted as Megatron schedules it, it does
    not fit; at vpp 1 it does."""
    lay = layout(llama, 8192, tp=8, pp=16, dp=128, vpp=2, global_batch=2048, sequence_parallel=True)
    ranks = rank_memory(llama, lay, 8192)
    params = 8 * LAYER_PER_GPU
    busiest = 4 * params + -(-12 * params // 128) + 16 * 8 * activations_per_layer(8192)
    assert busiest == 85_595_283_456
    assert max(r.total for r in ranks) == ranks[1].total == busiest
    assert busiest - H100_MEMORY == 74_473_472
    one_chunk = rank_memory(
        llama, layout(llama, 8192, tp=8, pp=16, dp=128, global_batch=2048, sequence_parallel=True), 8192
    )
    assert max(r.total for r in one_chunk) == busiest - 8 * activations_per_layer(8192) <= H100_MEMORY


def test_tied_embedding_counted_once_on_one_stage():
    """GPT-2 ties its head to the embedding: on a single stage the table is one tensor; HF's num_parameters() for
    gpt2 is 124,439,808."""
    spec = _load("openai-community/gpt2").spec
    (rank,) = rank_memory(spec, layout(spec, 1024), 1024)
    assert rank.dense_params == 124_439_808
