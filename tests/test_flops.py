"""`ffncalc flops` and `ffncalc crossover`: FLOPs per token against context, worked by hand.

Conventions (ffncalc/compute.py): 2 FLOPs per multiply-add; a token at context n attends to n keys
(min(n, window) in a sliding layer); each key costs 2 · heads · (qk_head_dim + v_head_dim).
"""

import json

import pytest

from ffncalc import crossover, flops, load_config
from ffncalc.compute import flops_profile, prefill_flops

from .conftest import EXPECTED, ROOT

LLAMA = "meta-llama/Llama-3.1-8B"

# Llama-3.1-8B, from tests/reference/README.md: 2 × (FFN 5,637,144,576 + attention 1,342,177,280
# + head 525,336,576) matmul weights; scores 4 · n · 4096 per layer, 32 layers → 524,288 · n.
LLAMA_FFN = 2 * 5_637_144_576
LLAMA_FIXED = 2 * (5_637_144_576 + 1_342_177_280 + 525_336_576)
LLAMA_SCORES_PER_KEY = 32 * 4 * 4096


def test_llama_hand_figures():
    assert LLAMA_FIXED == 15_009_316_864
    assert LLAMA_FFN == 11_274_289_152
    assert LLAMA_SCORES_PER_KEY == 524_288


def test_llama_per_token_at_zero_context_is_the_matmuls():
    per_token = flops(LLAMA, 1).per_token
    assert per_token.total - per_token.attention_scores == 15_009_316_864
    assert per_token.ffn == 11_274_289_152
    assert round(100 * per_token.ffn / (per_token.total - per_token.attention_scores), 1) == 75.1


def test_llama_per_token_at_8k():
    per_token = flops(LLAMA, "8k").per_token
    assert per_token.attention_scores == 8192 * LLAMA_SCORES_PER_KEY
    assert per_token.total == LLAMA_FIXED + 8192 * LLAMA_SCORES_PER_KEY
    assert round(100 * per_token.ffn / per_token.total, 1) == 58.4


def test_llama_crossover_is_21504_exactly():
    report = crossover(LLAMA, "128k")
    # 524,288 · n = 11,274,289,152 → n = 21,504 (= 1.5 × 14,336, since heads × head_dim = hidden)
    assert report.crossover_context == 21_504
    assert report.crossover_context_ceil == 21_504
    assert report.ffn == LLAMA_FFN


def test_crossover_rows_double_from_1k_with_the_crossover_as_its_own_row():
    report = crossover(LLAMA, "128k")
    assert [row.context for row in report.rows] == [1024, 2048, 4096, 8192, 16384, 21504, 32768, 65536, 131072]
    assert [row.is_crossover for row in report.rows].count(True) == 1
    shares = {row.context: round(100 * row.ffn_share, 1) for row in report.rows}
    assert shares[8192] == 58.4
    assert shares[131072] == 13.5
    crossing = next(row for row in report.rows if row.is_crossover)
    assert crossing.attention_context == crossing.ffn


def test_crossover_default_model_and_its_output(ffncalc):
    run = ffncalc("crossover", "--ctx", "128k", "--plot")
    assert run.exit_code == 0, run.stderr
    lines = [" ".join(line.split()) for line in run.stdout.splitlines()]
    assert lines[0] == "Attention-score FLOPs overtake the FFN (11,274,289,152 FLOPs per token) at n* = 21,504 tokens."
    assert "8,192 11.3 G 2.68 G 4.29 G 1.05 G 19.3 G 58.4%" in lines
    assert "n* 21,504 11.3 G 2.68 G 11.3 G 1.05 G 26.3 G 42.9%" in lines
    assert "131,072 11.3 G 2.68 G 68.7 G 1.05 G 83.7 G 13.5%" in lines
    assert "─ FFN • attention scores ┊ n* = 21,504" in lines  # the chart's legend


def test_no_plot_leaves_the_chart_out(ffncalc):
    run = ffncalc("crossover", "--no-plot")
    assert run.exit_code == 0
    assert "┊" not in run.stdout and "log scale" not in run.stdout


def test_crossover_json_echoes_the_resolved_context(ffncalc):
    document = ffncalc("crossover", "--ctx", "128k", "--json").json()
    assert document["max_context"] == 131_072
    assert document["crossover_context"] == 21_504
    assert document["rows"][-1]["context"] == 131_072
    assert document["rows"][-1]["attention_context"] == 131_072 * LLAMA_SCORES_PER_KEY


def test_flops_command_table_and_json(ffncalc):
    run = ffncalc("flops", LLAMA, "--ctx", "8k")
    assert run.exit_code == 0, run.stderr
    lines = [" ".join(line.split()) for line in run.stdout.splitlines()]
    # causal prefill of 8,192 tokens: scores 524,288 · 8192 · 8193 / 2; matmuls 8,192 × per token
    causal_scores = LLAMA_SCORES_PER_KEY * 8192 * 8193 // 2
    assert causal_scores == 17_594_333_528_064
    assert "FFN 11,274,289,152 11.3 G 58.4% 92,358,976,733,184 65.7%" in lines
    assert "Attention scores 4,294,967,296 4.29 G 22.2% 17,594,333,528,064 12.5%" in lines
    document = ffncalc("flops", LLAMA, "--ctx", "8k", "--json").json()
    assert document["context"] == 8192
    assert document["per_token"]["total"] == 19_304_284_160
    assert document["prefill"]["total"] == 8192 * LLAMA_FIXED + causal_scores
    assert document["training"] == 3 * document["prefill"]["total"]


def test_non_causal_prefill_charges_the_full_square():
    report = flops(LLAMA, 8192, causal=False)
    assert report.prefill.attention_scores == 8192 * 8192 * LLAMA_SCORES_PER_KEY


# --- windows: layers that stop growing at their window --------------------------------------


def test_mistral_7b_v01_never_crosses_because_every_layer_slides():
    report = crossover("mistralai/Mistral-7B-v0.1", "128k")
    # 32 layers × 4,096 keys × 2 · 32 heads · (128 + 128) = 2,147,483,648 < FFN 2 · 32 · 3 · 4096 · 14336
    assert report.crossover_context is None
    assert "level off at 2,147,483,648 per token, below the FFN's 11,274,289,152" in report.never_reason


def test_gemma2_9b_crossover_with_alternating_windows():
    # 42 layers, every other one slides over 4,096 keys; 16 heads of 256: 2 · 16 · 512 = 16,384 per key.
    ffn = 2 * 42 * 3 * 3584 * 14336
    full_slope, window_cap = 21 * 16_384, 21 * 4096 * 16_384
    assert (ffn - window_cap) % full_slope == 0
    assert crossover("google/gemma-2-9b").crossover_context == (ffn - window_cap) // full_slope == 33_536


def test_gemma3_1b_crossover_with_five_local_layers_to_one_global():
    # 26 layers: 22 slide over 512 keys, 4 are global; 4 heads of 256 → 2 · 4 · 512 = 4,096 per key.
    ffn = 2 * 26 * 3 * 1152 * 6912
    n_star = (ffn - 22 * 512 * 4096) / (4 * 4096)
    assert n_star == 73_000
    assert crossover("google/gemma-3-1b-it").crossover_context == 73_000


def test_gemma3_1b_causal_prefill_caps_sliding_layers_at_their_window():
    # 1,024 tokens: a sliding layer sees Σ min(i, 512) = 512·513/2 + 512·512 keys, a global one 1024·1025/2.
    sliding_keys = 512 * 513 // 2 + 512 * 512
    global_keys = 1024 * 1025 // 2
    expected = 22 * 4096 * sliding_keys + 4 * 4096 * global_keys
    assert flops("google/gemma-3-1b-it", 1024).prefill.attention_scores == expected


def test_gpt_oss_20b_crossover_has_a_fractional_solution():
    # 24 layers, 12 slide over 128 keys; 64 heads of 64 → 2 · 64 · 128 = 16,384 per key.
    # FFN per token: 24 × 2 × (router 2880·32 + 4 experts × 3·2880·2880).
    ffn = 24 * 2 * (2880 * 32 + 4 * 3 * 2880 * 2880)
    n_star = (ffn - 12 * 128 * 16_384) / (12 * 16_384)
    report = crossover("openai/gpt-oss-20b")
    assert report.ffn == ffn
    assert n_star == 24_194.5
    assert report.crossover_context == 24_194.5
    assert report.crossover_context_ceil == 24_195


# --- MoE and MLA ------------------------------------------------------------------------------


def test_mixtral_ffn_flops_count_two_of_eight_experts_and_the_router():
    ffn = 32 * 2 * (2 * 3 * 4096 * 14336 + 4096 * 8)
    report = crossover("mistralai/Mixtral-8x7B-v0.1")
    assert report.ffn == ffn == 22_550_675_456
    assert report.crossover_context == ffn // (32 * 2 * 32 * 256) == 43_012


def test_deepseek_v3_plain_mla_scores_use_nope_plus_rope_and_v_dims():
    # 61 layers × 2 · 128 heads · ((128 + 64) + 128) = 4,997,120 per key
    # FFN: 3 dense layers (3 · 7168 · 18432) + 58 MoE layers (8 + 1 experts of 3 · 7168 · 2048, router 7168 · 256)
    ffn = 2 * (3 * 3 * 7168 * 18432 + 58 * (9 * 3 * 7168 * 2048 + 7168 * 256))
    per_key = 61 * 2 * 128 * (128 + 64 + 128)
    report = crossover("deepseek-ai/DeepSeek-V3")
    assert report.ffn == ffn
    assert report.crossover_context == pytest.approx(ffn / per_key, rel=1e-15)
    assert report.crossover_context_ceil == -(-ffn // per_key) == 9_720


def test_deepseek_v3_absorbed_mla_scores_run_over_the_latent():
    # absorbed: per head (kv_lora 512 + rope 64) for scores + kv_lora 512 for values
    per_key = 61 * 2 * 128 * (512 + 64 + 512)
    report = flops("deepseek-ai/DeepSeek-V3", 4096, mla_form="absorbed")
    assert report.per_token.attention_scores == 4096 * per_key
    plain = flops("deepseek-ai/DeepSeek-V3", 4096)
    assert plain.per_token.attention_projections == report.per_token.attention_projections


# --- against torch's FlopCounterMode ----------------------------------------------------------

COUNTER = json.loads((EXPECTED / "flop_counter.json").read_text())["counts"]
# Forward passes whose FlopCounterMode groups are not ffncalc's components, held to it group by group in their family's
# tests: MobileBERT's head multiplies inside cls.predictions, not by calling its decoder, and its layers keep FFNs
# deeper than tools/flop_count.py groups (tests/test_family_mobilebert.py). A vision encoder-decoder's forward keeps its
# decoder's cross-attention in a group of its own, and runs its encoder's pooler once
# (tests/test_family_vision_encoder_decoder.py); a speech encoder-decoder's too, and runs its encoder's convolutions
# over the raw samples (tests/test_family_speech_encoder_decoder.py). LED's seq2seq LM keeps its decoder's
# cross-attention (encoder_attn) apart too (tests/test_family_led.py), UDOP's its cross-attention and its page's
# patch convolution (tests/test_family_udop.py), and LongT5's (EncDecAttention, tests/test_family_longt5.py),
# Pegasus-X's (tests/test_family_pegasus_x.py) and BigBird-Pegasus's (tests/test_family_bigbird_pegasus.py) their
# cross-attention; Perceiver's encoder.cross_attention and decoder.decoding_cross_attention are whole layers, with no
# index (tests/test_family_perceiver.py).
REGROUPED = {
    "synthetic__mobilebert",
    "synthetic__vision_encoder_decoder",
    "synthetic__speech_encoder_decoder",
    "synthetic__led",
    "synthetic__udop",
    "synthetic__longt5",
    "synthetic__longt5_tglobal",
    "synthetic__pegasus_x",
    "synthetic__bigbird_pegasus",
    "synthetic__perceiver",
}
DENSE_COUNTED = sorted(
    name
    for name, value in COUNTER.items()
    if "error" not in value and "Mixtral" not in name and "DeepSeek" not in name and name not in REGROUPED
)


# Forward passes that also run a pooler (dense, hidden → hidden) once, on the sequence's first token: LukeForMaskedLM
# builds LukeModel with its pooler, and FlopCounterMode counts it; ffncalc counts what runs per token, so the pooler's
# 2 · its weights are added to ffncalc's total here (synthetic__luke: H 64). SqueezeBertForMaskedLM builds
# SqueezeBertModel with its pooler too (synthetic__squeezebert: H 64), and FNetForMaskedLM FNetModel's (synthetic__fnet:
# H 64), and BigBirdForMaskedLM BigBirdModel's (synthetic__big_bird: H 64, 40 tokens, block-sparse: see
# tests/test_family_big_bird.py).
POOLER_WEIGHTS = {
    "synthetic__luke": 64 * 64,
    "synthetic__squeezebert": 64 * 64,
    "synthetic__fnet": 64 * 64,
    "synthetic__big_bird": 64 * 64,
}
# Matmuls with no weight that FlopCounterMode finds inside a layer's attention and ffncalc counts under other (a layer's
# other_flops): ConvBERT's dynamic convolution, each of h · d = 32 channels summing 5 rows (synthetic__convbert: 16
# tokens × 2 layers × 2 · 32 · 5), and Nyströmformer's convolution of the values, each of h = 64 channels summing 5
# rows (synthetic__nystromformer: 16 tokens × 2 layers × 2 · 64 · 5).
ATTENTION_COUNTED_AS_OTHER = {
    "synthetic__convbert": 16 * 2 * 2 * 32 * 5,
    "synthetic__nystromformer": 16 * 2 * 2 * 64 * 5,
}


@pytest.mark.parametrize("stem", DENSE_COUNTED)
def test_non_causal_prefill_matches_flop_counter_mode(stem):
    # FlopCounterMode: one eager forward of 512 tokens (16 for the small synthetic configs of tests/configs, recorded
    # with transformers 5.24) on the meta device (tools/flop_count.py); that is within every window, so full
    # non-causal scores and no windowing is what ffncalc computes too.
    counted = COUNTER[stem]
    source = (
        str(ROOT / "tests" / "configs" / f"{stem}.json")
        if stem.startswith("synthetic__")
        else stem.replace("__", "/", 1)
    )
    report = flops(source, counted["tokens"], causal=False).prefill
    assert report.ffn == counted["mlp"]
    assert report.lm_head == counted["lm_head"]
    moved = ATTENTION_COUNTED_AS_OTHER.get(stem, 0)
    assert report.attention_projections + report.attention_scores + moved == counted["attention"]
    assert report.total + 2 * POOLER_WEIGHTS.get(stem, 0) == counted["total"]


@pytest.mark.parametrize(
    "stem, skipped_expert_flops",
    [
        # FlopCounterMode on the meta device runs the routers and shared experts but no routed expert
        # (routing needs real values), so the routed experts are added by hand: 512 tokens × layers ×
        # experts per token × 2 · 3 · hidden · expert width.
        ("mistralai__Mixtral-8x7B-v0.1", 512 * 32 * 2 * 2 * 3 * 4096 * 14336),
        ("deepseek-ai__DeepSeek-V3", 512 * 58 * 8 * 2 * 3 * 7168 * 2048),
    ],
)
def test_moe_prefill_matches_flop_counter_mode_plus_routed_experts(stem, skipped_expert_flops):
    counted = COUNTER[stem]
    report = flops(stem.replace("__", "/", 1), 512, causal=False).prefill
    assert report.attention_projections + report.attention_scores == counted["attention"]
    assert report.ffn == counted["mlp"] + skipped_expert_flops
    assert report.total == counted["total"] + skipped_expert_flops


# --- memory traffic ---------------------------------------------------------------------------


def test_bytes_crossover_compares_kv_cache_with_ffn_weights():
    # BF16: FFN weights 5,637,144,576 × 2 bytes; KV cache per token 32 layers × 2 · 8 heads · 128 × 2 bytes.
    report = crossover(LLAMA, "128k", measure="bytes")
    assert report.ffn == 5_637_144_576 * 2
    assert report.crossover_context == 5_637_144_576 * 2 // (32 * 2 * 8 * 128 * 2) == 86_016
    assert report.dtype == "bfloat16" and report.bytes_per_element == 2


def test_bytes_crossover_reads_only_active_experts_and_the_mla_latent():
    # DeepSeek-V3 in FP8 (1 byte): the MLA cache holds kv_lora_rank + rope = 576 elements per layer per token.
    report = crossover("deepseek-ai/DeepSeek-V3", measure="bytes", dtype="fp8")
    ffn_weights = 3 * 3 * 7168 * 18432 + 58 * (9 * 3 * 7168 * 2048 + 7168 * 256)
    assert report.ffn == ffn_weights
    assert report.rows[0].attention_context == 1024 * 61 * 576


def test_bytes_crossover_caps_sliding_layers_at_their_window():
    report = crossover("mistralai/Mistral-7B-v0.1", measure="bytes")
    assert report.crossover_context is None
    assert report.rows[-1].attention_context == 32 * 4096 * 2 * 8 * 128 * 2


# --- contexts ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, tokens", [("8k", 8192), ("128k", 131_072), ("1M", 1_048_576), ("4096", 4096), ("1.5k", 1536)]
)
def test_context_suffixes_are_binary(ffncalc, text, tokens):
    assert ffncalc("flops", LLAMA, "--ctx", text, "--json").json()["context"] == tokens


@pytest.mark.parametrize(
    "text, message",
    [
        ("0", "context '0' must be at least 1 token"),
        ("-5", "context '-5' must be at least 1 token"),
        ("abc", "context 'abc' is not a number of tokens; use e.g. 8192, 8k or 1M (k = 1024)"),
        ("2G", "context '2G' is not a number of tokens"),
        ("0.3", "context '0.3' is not a whole number of tokens"),
    ],
)
def test_bad_contexts_are_one_line_errors(ffncalc, text, message):
    run = ffncalc("crossover", "--ctx", text)
    assert run.exit_code == 2
    assert run.stdout == ""
    assert run.stderr == f"Error: {message}" + run.stderr[len("Error: ") + len(message) :]
    assert run.stderr.count("\n") == 1


def test_an_unknown_dtype_is_a_one_line_error(ffncalc):
    run = ffncalc("crossover", "--by", "bytes", "--dtype", "int3")
    assert run.exit_code == 2
    assert run.stderr.startswith("Error: dtype 'int3' is not one ffncalc knows; use one of: ")


def test_profile_and_prefill_agree_for_one_token():
    profile = flops_profile(load_config(LLAMA).spec)
    assert prefill_flops(profile, 1).total == profile.fixed + profile.growing(1)


def test_mistral_decode_beyond_its_window_pays_for_4096_keys():
    # fixed: 2 × (FFN 32·3·4096·14336 + attention 32·(2·4096·4096 + 2·4096·1024) + head 32000·4096)
    fixed = 2 * (32 * 3 * 4096 * 14336 + 32 * (2 * 4096 * 4096 + 2 * 4096 * 1024) + 32000 * 4096)
    per_token = flops("mistralai/Mistral-7B-v0.1", "8k").per_token
    assert per_token.attention_scores == 32 * 4096 * 2 * 32 * 256
    assert per_token.total == fixed + 32 * 4096 * 2 * 32 * 256


def test_gpt_oss_decode_mixes_128_token_windows_with_full_layers():
    per_token = flops("openai/gpt-oss-20b", 1000).per_token
    assert per_token.attention_scores == 12 * 128 * 16_384 + 12 * 1000 * 16_384


def test_mixtral_causal_prefill_by_hand():
    prefill = flops("mistralai/Mixtral-8x7B-v0.1", 4096).prefill
    assert prefill.attention_scores == 32 * 2 * 32 * 256 * (4096 * 4097 // 2)
    assert prefill.ffn == 4096 * 22_550_675_456


def test_deepseek_v3_causal_and_non_causal_prefill_by_hand():
    per_key = 61 * 2 * 128 * (128 + 64 + 128)
    assert flops("deepseek-ai/DeepSeek-V3", 4096).prefill.attention_scores == per_key * (4096 * 4097 // 2)
    assert flops("deepseek-ai/DeepSeek-V3", 4096, causal=False).prefill.attention_scores == per_key * 4096 * 4096


@pytest.mark.parametrize(
    ("config", "reads_all"),
    [
        ("google-bert/bert-base-uncased", True),
        ("google-t5/t5-small", True),
        (str(ROOT / "tests/configs/synthetic__longformer.json"), False),
        (str(ROOT / "tests/configs/synthetic__led.json"), False),
        (str(ROOT / "tests/configs/synthetic__pegasus_x.json"), False),
    ],
)
def test_the_encoder_convention_says_all_n_only_where_every_encoder_token_reads_all_n(config, reads_all):
    # Longformer's and LED's windows, Pegasus-X's blocks: their encoders' tokens read a window, which their own
    # notes state; BERT's and T5's read every input token.
    conventions = [c for c in flops(config, 64).conventions if c.startswith("encoder")]
    assert len(conventions) == 1
    assert ("attending to all n" in conventions[0] or "attends to all n" in conventions[0]) == reads_all
