"""`ffncalc train`: training FLOPs, time and cost, MFU by convention, compute-optimal size.

Every figure is derived in the test from the config's numbers, a published figure (with its source) or a peer's
published code re-written here; none is pasted from ffncalc's output.
"""

import math
from fractions import Fraction

import pytest

from ffncalc.api import train
from ffncalc.training import chinchilla_20, chinchilla_approach_3

from .conftest import run_main
from .test_output_width import assert_fits

LLAMA_8B = "meta-llama/Llama-3.1-8B"
H100_BF16 = 989 * 10**12  # NVIDIA H100 SXM datasheet, 1,979 TFLOP/s BF16 with sparsity, halved
H800_BF16 = 989 * 10**12  # the H800 SXM has the H100 SXM's compute (ffncalc/accelerators.py, unverified there)

# Llama-3.1-8B config.json: hidden 4,096, 32 layers, 32 heads of 128, 8 KV heads, FFN 14,336, vocab 128,256, untied.
H, LAYERS, HEADS, HEAD_DIM, KV_HEADS, FFN, VOCAB = 4096, 32, 32, 128, 8, 14336, 128_256
LLAMA_8B_PARAMS = 8_030_261_248  # transformers on the meta device (tests/expected, Meta's model card: 8.03B)


def llama_8b_forward_matmul_weights():
    """Weights one token multiplies: q, k, v, o and gate, up, down per layer, and the head."""
    attention = H * HEADS * HEAD_DIM * 2 + H * KV_HEADS * HEAD_DIM * 2
    return LAYERS * (attention + 3 * H * FFN) + H * VOCAB


def test_llama_3_1_8b_training_flops_per_sequence_are_3_times_the_causal_forward():
    # Forward of one sequence of s tokens: 2 · weights · s + causal scores 32 · 2 · 32 · (128 + 128) · s(s+1)/2.
    s = 8192
    forward = 2 * llama_8b_forward_matmul_weights() * s + LAYERS * 2 * HEADS * 256 * s * (s + 1) // 2
    report = train(LLAMA_8B, tokens="15T", seq="8k")
    assert report.flops_per_sequence == 3 * forward
    assert report.total_flops == round(Fraction(3 * forward * 15 * 10**12, s))
    assert report.components.total == report.total_flops


def test_llama_3_1_405b_on_15_6t_tokens_is_within_4_percent_of_the_llama_3_papers_3_8e25():
    # Llama 3 paper (Llama Team, "The Llama 3 Herd of Models", 2024, §3.1): 405B parameters trained on 15.6T tokens
    # with 3.8 × 10^25 FLOPs, sequences of 8,192 tokens. Config: hidden 16,384, 126 layers, 128 heads of 128,
    # 8 KV heads, FFN 53,248, vocab 128,256.
    h, layers, heads, kv, ffn, vocab, s, tokens = 16384, 126, 128, 8, 53248, 128_256, 8192, 15_600 * 10**9
    weights = layers * (2 * h * heads * 128 + 2 * h * kv * 128 + 3 * h * ffn) + h * vocab
    per_sequence = 3 * (2 * weights * s + layers * 2 * heads * 256 * s * (s + 1) // 2)
    report = train("meta-llama/Llama-3.1-405B", tokens="15.6T", seq="8k")
    assert report.total_flops == round(Fraction(per_sequence * tokens, s)) == 39_373_906_614_681_600_000_000_000
    # The paper's figure is 6·N·D rounded to two digits: 6 · 405.85e9 · 15.6e12 = 3.799e25. ffncalc adds what 6ND
    # leaves out, the attention scores (3 · 126 · 2 · 128 · 256 · 8,193 / 2 = 1.015e11 per token, 4.0% of the total),
    # and charges the head but not the input table (6 · 2.10e9 cancels): +3.6% in all.
    assert report.total_flops / 3.8e25 - 1 == pytest.approx(0.0362, abs=5e-5)
    scores = report.components.attention_scores
    assert scores / report.total_flops == pytest.approx(0.0402, abs=5e-5)


def test_gpu_hours_days_and_cost_are_flops_over_mfu_times_peak_by_hand():
    report = train(LLAMA_8B, tokens="15T", seq="8k", gpu="h100", gpus=1024, mfu=0.4, price=2.5)
    hours = report.total_flops / (0.4 * H100_BF16 * 3600)
    assert report.gpu_hours == pytest.approx(hours, rel=1e-12)
    assert report.days == pytest.approx(hours / 1024 / 24, rel=1e-12)
    assert report.cost == pytest.approx(hours * 2.5, rel=1e-12)
    assert report.mfu_assumed


def test_days_gives_the_gpus_needed():
    report = train(LLAMA_8B, tokens="15T", seq="8k", days=30.0)
    hours = report.total_flops / (0.4 * H100_BF16 * 3600)
    assert report.gpus == math.ceil(hours / (30 * 24))
    assert report.days <= 30


def test_chinchilla_5_76e23_flops_is_about_70b_params_and_1_4t_tokens():
    # Hoffmann et al. 2022: Chinchilla, 70B parameters on 1.4T tokens, 5.76 × 10^23 FLOPs. With C = 6·N·D and
    # D = 20·N: N = √(C / 120) = √(4.8 × 10^21) = 69,282,032,302.755… → 69,282,032,303; D = 20 · N.
    assert math.isqrt(4_800_000_000_000_000_000_000) == 69_282_032_302
    optimal = chinchilla_20(576 * 10**21)
    assert optimal.params == 69_282_032_303
    assert optimal.tokens == 1_385_640_646_060


def test_approach_3_is_the_minimum_of_the_fitted_loss_on_the_compute_budget():
    # L(N, D) = 1.69 + 406.4 / N^0.34 + 410.7 / D^0.28 (Hoffmann et al. 2022, Approach 3, as quoted; the paper's own
    # text was not read). On C = 6·N·D the loss is smallest at the returned N: 1% either way is worse.
    c = 5.76e23

    def loss(n):
        return 1.69 + 406.4 / n**0.34 + 410.7 / (c / (6 * n)) ** 0.28

    optimal = chinchilla_approach_3(576 * 10**21)
    assert optimal.loss == pytest.approx(loss(optimal.params), rel=1e-12)
    assert loss(optimal.params) < loss(optimal.params * 1.01) and loss(optimal.params) < loss(optimal.params * 0.99)
    assert 6 * optimal.params * optimal.tokens == pytest.approx(c, rel=1e-9)


def test_llama_3_1_8b_on_15t_tokens_is_93_times_past_20_tokens_per_parameter():
    # 15 × 10^12 / 8,030,261,248 = 1,867.93 tokens per parameter, ÷ 20 = 93.4 (the issue: "~93×").
    optimal = train(LLAMA_8B, tokens="15T").compute_optimal
    assert optimal.tokens_per_param == pytest.approx(15e12 / LLAMA_8B_PARAMS, rel=1e-12)
    assert optimal.times_past_20 == pytest.approx(93.397, abs=1e-3)


# --- peers' formulas, re-written here from their published code, on Llama-3.1-8B at s = 8,192 --------------


def nanogpt_estimate_mfu_flops_per_token(n_params_non_embedding, n_layer, n_head, n_embd, block_size):
    # karpathy/nanoGPT model.py estimate_mfu (commit 04a1d697): N = get_num_params() (wpe subtracted; Llama has none)
    L, H, Q, T = n_layer, n_head, n_embd // n_head, block_size
    return 6 * n_params_non_embedding + 12 * L * H * Q * T


def torchtitan_dense_flops_per_token(nparams, nparams_embedding, n_layers, n_heads, head_dims, seq_len, tying):
    # pytorch/torchtitan torchtitan/models/utils.py get_dense_model_nparams_and_flops (commit b5bcd76c);
    # head_dims = "the sum of qk and v head dimensions".
    nparams_for_matmul = nparams if tying else nparams - nparams_embedding
    return 6 * nparams_for_matmul + 6 * n_layers * n_heads * head_dims * seq_len


def megatron_transformer_flops(batch_size, seq_length, hidden, num_layers, heads, groups, kv_channels, ffn, vocab):
    # NVIDIA/Megatron-LM megatron/training/training.py num_floating_point_operations, transformer_flops (d98e8a64),
    # GQA, SwiGLU, no MoE, no MTP, BSHD: total_real_tokens = b·s, seqlen_squared_sum = b·s².
    expansion, fma, ffn_factor = 3, 2, 3
    q, k, v = kv_channels * heads, kv_channels * groups, kv_channels * groups
    self_attn_term = expansion * fma * (hidden * (q + k + v) + q * hidden)
    self_attn_core_term = Fraction(expansion * fma * q, 2) * 2
    tokens, squares = batch_size * seq_length, batch_size * seq_length**2
    return (
        tokens
        * (
            expansion * fma * hidden * (ffn * ffn_factor) * num_layers
            + self_attn_term * num_layers
            + expansion * fma * hidden * vocab
        )
        + squares * self_attn_core_term * num_layers
    )


def convention(report, name):
    (found,) = [c for c in report.flops_per_token_by_convention if c.name == name]
    return found


def test_nanogpt_and_palm_conventions_match_estimate_mfu():
    report = train(LLAMA_8B, tokens="1T", seq="8k")
    expected = nanogpt_estimate_mfu_flops_per_token(LLAMA_8B_PARAMS, LAYERS, HEADS, H, 8192)
    assert expected == 61_066_469_376
    assert convention(report, "nanogpt").flops_per_token == expected
    assert convention(report, "palm").flops_per_token == expected  # nanoGPT transcribes PaLM's appendix B


def test_torchtitan_convention_matches_get_dense_model_nparams_and_flops():
    report = train(LLAMA_8B, tokens="1T", seq="8k")
    expected = torchtitan_dense_flops_per_token(LLAMA_8B_PARAMS, VOCAB * H, LAYERS, HEADS, 256, 8192, tying=False)
    assert expected == 57_914_449_920
    assert convention(report, "torchtitan").flops_per_token == expected


def test_megatron_convention_matches_num_floating_point_operations():
    report = train(LLAMA_8B, tokens="1T", seq="8k")
    per_sequence = megatron_transformer_flops(1, 8192, H, LAYERS, HEADS, KV_HEADS, HEAD_DIM, FFN, VOCAB)
    assert convention(report, "megatron").flops_per_token == round(per_sequence / 8192)
    # Megatron charges s² / 2 keys per sequence where causal attention reads s(s+1)/2: it is short of ffncalc's
    # exact count by 3 · 32 · 2 · 32 · 256 / 2 per token.
    assert report.flops_per_token - round(per_sequence / 8192) == 3 * LAYERS * 2 * HEADS * 256 // 2


def test_deepseek_v3_reported_gpu_hours_imply_its_mfu_by_each_convention():
    # DeepSeek-V3 technical report (2024), table 1 and §3: pre-training took 2,664K H800 GPU-hours on 14.8T tokens
    # (sequences of 4K). Tokens per GPU-second = 14.8e12 / (2.664e6 · 3,600) = 1,543.2; MFU = FLOPs per token ·
    # that rate ÷ the H800's dense BF16 peak (989 TFLOP/s). DeepSeek trained in FP8: against the FP8 peak (1,979),
    # the MFU halves.
    rate = 14.8e12 / (2.664e6 * 3600)
    report = train(
        "deepseek-ai/DeepSeek-V3", tokens="14.8T", seq="4k", gpu="h800", gpus=2048,
        measured_tokens_per_second=rate, per_gpu=True,
    )  # fmt: skip
    for name, mfu in report.mfu_by_convention.items():
        assert mfu == pytest.approx(convention(report, name).flops_per_token * rate / H800_BF16, rel=1e-9), name
    # ffncalc's own: the whole run's FLOPs over the whole run's GPU-seconds at peak.
    assert report.mfu_by_convention["ffncalc"] == pytest.approx(
        report.total_flops / (2.664e6 * 3600 * H800_BF16), rel=1e-9
    )
    assert report.mfu_by_convention["ffncalc"] == pytest.approx(0.3908, abs=5e-4)
    assert not report.mfu_assumed  # the measured run sets the time: its GPU-hours come back
    assert report.gpu_hours == pytest.approx(2.664e6, rel=1e-9)


def test_recompute_full_adds_one_forward_pass_as_hardware_flops():
    plain = train(LLAMA_8B, tokens="1T", seq="8k")
    full = train(LLAMA_8B, tokens="1T", seq="8k", recompute="full")
    assert full.total_flops == plain.total_flops
    assert full.hardware_flops == plain.total_flops + round(Fraction(plain.flops_per_sequence, 3) * 10**12 / 8192)


# --- the command --------------------------------------------------------------------------------------------


def test_json_has_the_keys_the_issue_names_with_exact_integers():
    run = run_main("train", LLAMA_8B, "--tokens", "15T", "--gpus", "1024", "--price", "2.5", "--json")
    assert run.exit_code == 0, run.stderr
    document = run.json()
    for key in ("total_flops", "flops_per_token", "gpu_hours", "days", "cost", "mfu_by_convention", "compute_optimal"):
        assert key in document
    assert isinstance(document["total_flops"], int) and isinstance(document["flops_per_token"], int)
    assert set(document["mfu_by_convention"]) == {"ffncalc", "megatron", "torchtitan", "palm", "nanogpt"}
    assert [rule["rule"] for rule in document["compute_optimal"]["rules"]] == [
        "20 tokens/param",
        "Approach 3 (fitted loss)",
    ]
    assert any("GPU-hours = total FLOPs ÷ (MFU × dense peak × 3,600)" in c for c in document["conventions"])


@pytest.mark.parametrize("width", [80, 120])
@pytest.mark.parametrize(
    "args",
    [
        [LLAMA_8B, "--tokens", "15T", "--gpus", "1024", "--price", "2.5"],
        [LLAMA_8B, "--tokens", "15T", "--gpus", "1024", "--measured-tokens-per-second", "4000", "--per-gpu"],
        ["deepseek-ai/DeepSeek-V3", "--tokens", "14.8T", "--seq", "4k", "--gpu", "h800", "--gpus", "2048"],
        ["google/gemma-2-9b", "--tokens", "8T", "--recompute", "selective", "--days", "30"],
    ],
)
def test_train_tables_fit_and_label_the_mfu_assumption(monkeypatch, width, args):
    monkeypatch.setenv("COLUMNS", str(width))
    monkeypatch.setenv("NO_COLOR", "1")
    run = run_main("train", *args)
    assert run.exit_code == 0, run.stderr
    assert_fits(run.stdout, width)
    assert ("At MFU 0.4, assumed:" in run.stdout) != ("--measured-tokens-per-second" in args)


def test_a_run_that_does_not_fit_says_so():
    run = run_main("train", LLAMA_8B, "--tokens", "1T", "--json")
    assert run.exit_code == 0
    assert run.json()["memory"]["fits"] is False
    assert "it does not fit" in run.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--tokens", "lots"], "Error: --tokens 'lots' is not a number of tokens"),
        (["--mfu", "1.5"], "Error: --mfu must be above 0 and at most 1"),
        (["--gpu", "h900"], "Error: unknown accelerator 'h900'"),
        (["--gpu", "a100", "--compute-dtype", "fp8"], "Error: A100 80 GiB has no fp8 units"),
        (["--per-gpu"], "Error: --per-gpu says how --measured-tokens-per-second was counted"),
        (["--days", "30", "--gpus", "8"], "Error: --days finds the number of GPUs"),
        (["--recompute", "some"], "Error: --recompute must be none, selective or full"),
    ],
)
def test_bad_options_are_one_line_errors(args, message):
    run = run_main("train", LLAMA_8B, *args)
    assert run.exit_code == 2
    assert run.stderr.startswith(message) and run.stderr.count("\n") == 1
    assert run.stdout == ""


def test_sweep_reports_the_train_headlines():
    run = run_main("train", LLAMA_8B, "--tokens", "1T", "--sweep", "num_hidden_layers=16,32", "--json")
    assert run.exit_code == 0, run.stderr
    rows = run.json()["rows"]
    assert [row["values"]["num_hidden_layers"] for row in rows] == [16, 32]
    assert rows[1]["figures"]["total_flops"] == train(LLAMA_8B, tokens="1T").total_flops


def test_the_global_batch_is_micro_batch_times_data_parallel_ranks_times_accumulation_steps():
    # 64 GPUs at --tp 4: 16 data-parallel ranks; 512 sequences a step at micro-batch 2: 512 / (2 · 16) = 16
    # accumulation steps; 15T tokens ÷ (512 · 8,192) tokens a step = 3,576,278.6…, so 3,576,279 steps.
    report = train(LLAMA_8B, tokens="15T", gpus=64, tensor_parallel=4, micro_batch=2, global_batch=512)
    batch = report.batch
    assert (batch.data_parallel, batch.accumulation_steps, batch.tokens_per_step) == (16, 16, 4_194_304)
    assert batch.steps == -(-15 * 10**12 // 4_194_304) == 3_576_279


def test_training_memory_stores_activations_for_the_micro_batch_not_the_global_batch():
    one = train(LLAMA_8B, gpus=8, global_batch=8).memory.per_gpu
    assert train(LLAMA_8B, gpus=8, global_batch=1024).memory.per_gpu == one
    assert train(LLAMA_8B, gpus=8, micro_batch=2, global_batch=16).memory.per_gpu > one


def test_a_global_batch_the_ranks_cannot_share_is_refused():
    run = run_main("train", LLAMA_8B, "--gpus", "64", "--tp", "4", "--micro-batch", "2", "--global-batch", "500")
    assert run.exit_code != 0
    assert "--global-batch 500 is not a multiple of --micro-batch × data-parallel ranks (2 × 16 = 32)" in run.stderr


def test_days_buys_whole_tensor_parallel_groups():
    report = train(LLAMA_8B, tokens="15T", days=30, tensor_parallel=8)
    assert report.gpus % 8 == 0 and report.batch.data_parallel == report.gpus // 8


def test_a_compute_budget_without_tokens_is_the_run_that_budget_buys():
    # Llama-3.1-8B at 8,192 tokens a sequence, per token: matmuls 2 × (5,637,144,576 FFN + 1,342,177,280 attention
    # + 525,336,576 head) = 15,009,316,864, causal scores 4 × 4,096 × 32 layers × the mean key count (8,192 + 1) / 2
    # = 2,147,745,792; training 3 × 17,157,062,656 = 51,471,187,968. 5.76e23 FLOPs buy ⌊5.76e23 ÷ that⌋ tokens.
    from fractions import Fraction

    per_token = 3 * (2 * (5_637_144_576 + 1_342_177_280 + 525_336_576) + 4 * 4096 * 32 * Fraction(8193, 2))
    assert per_token == 51_471_187_968
    report = train("meta-llama/Llama-3.1-8B", compute=5.76e23)
    assert report.tokens == int(Fraction(576 * 10**21) / per_token)
    assert any("the run is the 5.76e+23-FLOP budget" in note for note in report.notes)
