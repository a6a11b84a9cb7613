"""`ffncalc memory`: weights as stored, KV cache and recurrent state by context and batch, training.

Every figure is derived by hand in the test from the config's numbers, or is a real index's total_size.
"""

import json
import re
import shutil
from pathlib import Path

import pytest

from ffncalc.api import memory, verify

from .conftest import BUNDLED

INDEXES = Path(__file__).resolve().parent / "indexes"
LLAMA = "meta-llama/Llama-3.1-8B"


def test_llama_3_1_8b_caches_131072_bytes_per_token_in_bf16():
    # 2 (k and v) × 8 KV heads × 128 head_dim × 32 layers × 2 bytes
    report = memory(LLAMA, "8k")
    assert report.kv_cache.bytes_per_token == 2 * 8 * 128 * 32 * 2 == 131_072
    assert report.kv_cache.bytes == 8192 * 131_072


def test_the_kv_cache_grows_with_the_batch():
    assert memory(LLAMA, "8k", batch=8).kv_cache.bytes == 8 * 8192 * 131_072


def test_deepseek_v3_caches_its_mla_latent_whatever_the_heads():
    # 61 layers × (512 kv_lora_rank + 64 rope key) × 2 bytes: 70,272 bytes per token
    report = memory("deepseek-ai/DeepSeek-V3", "32k")
    assert report.kv_cache.bytes_per_token == 61 * 576 * 2 == 70_272
    assert report.kv_cache.bytes == 32_768 * 70_272


@pytest.mark.parametrize(("context", "global_tokens"), [("8k", 8192), ("128k", 131_072)])
def test_gemma_2_9b_sliding_layers_keep_at_most_their_4096_window(context, global_tokens):
    # 42 layers alternate: 21 slide within 4,096 tokens, 21 attend globally; each caches
    # 8 KV heads × (256 + 256) = 4,096 elements per token, 2 bytes in bf16.
    report = memory("google/gemma-2-9b", context, kv_dtype="bf16")
    assert report.kv_cache.bytes == 21 * 4096 * 4096 * 2 + 21 * 4096 * global_tokens * 2
    assert report.kv_cache.bytes_per_token == 21 * 4096 * 2


def test_a_hybrids_mamba_state_does_not_grow_with_the_context():
    # Nemotron-H-56B: each Mamba-2 layer keeps 256 heads × 64 head_dim × 256 state elements, and the conv's
    # last 3 inputs of 16,384 + 2 · 8 · 256 = 20,480 channels; 10 attention layers of 8 KV heads × 256.
    short, long = memory("nvidia/Nemotron-H-56B-Base-8K", "1k"), memory("nvidia/Nemotron-H-56B-Base-8K", "64k")
    (mamba_short,) = [layer for layer in short.kv_cache.layers if layer.kind == "mamba2 state"]
    (mamba_long,) = [layer for layer in long.kv_cache.layers if layer.kind == "mamba2 state"]
    assert mamba_short.fixed_elements == 256 * 64 * 256 + 20_480 * 3
    assert mamba_short.bytes == mamba_long.bytes == 54 * (256 * 64 * 256 + 20_480 * 3) * 2
    assert long.kv_cache.bytes - short.kv_cache.bytes == 10 * 8 * 256 * (65_536 - 1024) * 2


@pytest.mark.parametrize("index", sorted(path.stem for path in INDEXES.glob("*.json")))
def test_weights_as_stored_equal_a_real_indexs_total_size(tmp_path, index):
    # What the config says the checkpoint holds, and a tied head when the index names one (Falcon's .bin files).
    document = json.loads((INDEXES / f"{index}.json").read_text())
    shutil.copy(BUNDLED / f"{index}.json", tmp_path / "config.json")
    shutil.copy(INDEXES / f"{index}.json", tmp_path / "model.safetensors.index.json")
    stored_again = sum(extra.elements for extra in verify(str(tmp_path)).extras) * 2  # BF16
    assert memory(index.replace("__", "/", 1)).weights.bytes + stored_again == document["metadata"]["total_size"]


def test_gpt_oss_20b_stores_its_experts_in_mxfp4():
    # BF16 1,804,459,584 elements; U8 9,555,148,800 bytes of 4-bit blocks and 597,196,800 scales (the Hub's
    # safetensors counts, tests/reference/ground_truth.json); the config names no dtype: bfloat16 assumed.
    report = memory("openai/gpt-oss-20b")
    assert report.weights.by_dtype == {"BF16": 2 * 1_804_459_584, "U8": 9_555_148_800 + 597_196_800}
    assert any("names no dtype" in note for note in report.notes)


def test_int4_what_if_stores_linear_weights_as_gptq_does():
    # Each of a layer's 7 linears [out, in]: qweight out·in/2 bytes, qzeros (in/128)·(out/8)·4, scales
    # (in/128)·out·2 (F16), g_idx in·4; the embeddings, the head and the norms stay BF16.
    def gptq(out_f, in_f):
        return out_f * in_f // 2 + (in_f // 128) * (out_f // 8) * 4 + (in_f // 128) * out_f * 2 + in_f * 4

    linears = [(4096, 4096), (1024, 4096), (1024, 4096), (4096, 4096), (14336, 4096), (14336, 4096), (4096, 14336)]
    layers = 32 * (sum(gptq(o, i) for o, i in linears) + 2 * 4096 * 2)
    bf16 = (2 * 128_256 * 4096 + 4096) * 2
    assert memory(LLAMA, dtype="int4").weights.bytes == layers + bf16


def test_tensor_parallel_splits_matrices_and_kv_heads_and_copies_the_norms():
    # Llama-3.1-8B over 2 GPUs: every matrix halves, the 266,240 norm elements are on both; 4 of the 8 KV heads each;
    # the FFN intermediate of a 2,048-token chunk (2,048 · 28,672 · 2 bytes = 117,440,512) is split column-wise too.
    report = memory(LLAMA, "8k", gpus=2)
    norms = 266_240 * 2
    weights = (16_060_522_496 - norms) // 2 + norms
    assert report.per_gpu_inference == weights + 8192 * 131_072 // 2 + 117_440_512 // 2
    assert "norms and biases (vectors)" in report.replicated


def test_training_with_adamw_keeps_16_bytes_a_parameter():
    # 2 (bf16 weights) + 2 (gradients) + 12 (fp32 master, two moments) bytes per parameter
    training = memory(LLAMA, "2k", train=True).training
    assert training.weights + training.gradients + training.optimizer_states == 16 * 8_030_261_248


def test_eager_attention_on_gpt3_is_korthikantis_equation_1():
    # Korthikanti et al. 2022 eq. 1, per layer: s·b·h·(34 + 5·a·s/h) bytes. Its terms: attention 11sbh (input 2,
    # Q and K 4, V 2, output-projection input 2, dropout mask 1) + 5as²b (softmax 2, mask 1, dropped-out 2);
    # MLP 19sbh (input 2, 4h pre-GeLU 8, post-GeLU 8, mask 1); two LayerNorm inputs 4sbh. GPT-3 Small: 12 layers,
    # h = 768, a = 12, vocab 50,257; plus the fp32 logits 4·s·b·vocab.
    s, b, h, a = 2048, 2, 768, 12
    training = memory("gpt3-small", "2k", batch=b, train=True, attention="eager").training
    assert training.activations == 12 * (34 * s * b * h + 5 * a * s * s * b) + 4 * s * b * 50_257


def test_flash_attention_training_stores_no_score_matrix():
    # Llama-3.1-8B at 8k, b = 1, per layer: norms 4sbh; attention: input h + Q 32·128 + K 8·128 + V 8·128 + output
    # input 32·128 = 14,336 wide at 2 bytes, dropout mask sbh, the log-sum-exp 4·a·s·b; SwiGLU: input 2sbh, mask sbh,
    # gate, up and activation outputs 3 · 2 · s · 14,336. Eager adds 5·a·s²·b − 4·a·s·b per layer.
    s, h, a = 8192, 4096, 32
    per_layer = 4 * s * h + (2 * s * 14_336 + s * h + 4 * a * s) + (3 * s * h + 3 * 2 * s * 14_336)
    flash = memory(LLAMA, "8k", train=True).training
    assert flash.activations == 32 * per_layer + 4 * s * 128_256
    eager = memory(LLAMA, "8k", train=True, attention="eager").training
    assert eager.activations - flash.activations == 32 * (5 * a * s * s - 4 * a * s)
    assert flash.activations < 40 * (1 << 30) < eager.activations  # 358 GiB was the eager figure shown as the default


def test_lora_trains_rank_r_adapters_on_every_attention_and_ffn_projection():
    # Llama-3.1-8B, r = 16, per layer r · (in + out): q 4,096+4,096, k and v 4,096+1,024, o 4,096+4,096, gate, up and
    # down 4,096+14,336: 16 · 81,920 = 1,310,720; 32 layers: 41,943,040 (PEFT prints this for all-linear r = 16).
    training = memory(LLAMA, "2k", train=True, lora_rank=16).training
    adapters = 32 * 16 * (2 * 8192 + 2 * 5120 + 3 * 18_432)
    assert training.trainable_parameters == adapters == 41_943_040
    # the base frozen as stored (16,060,522,496 bytes in BF16), 16-bit adapters; gradients and Adam only for these
    assert training.weights == 16_060_522_496 + 2 * adapters
    assert training.gradients == 2 * adapters
    assert training.optimizer_states == 12 * adapters


def test_qlora_keeps_the_base_in_its_4_bit_layout():
    stored = memory(LLAMA, "2k", dtype="nf4").weights.bytes
    training = memory(LLAMA, "2k", dtype="nf4", train=True, lora_rank=16).training
    assert training.weights == stored + 2 * 41_943_040


def test_zero_3_on_one_gpu_is_refused(ffncalc):
    run = ffncalc("memory", LLAMA, "--train", "--zero", "3")
    assert run.exit_code != 0
    assert "shards nothing" in run.stderr


def test_the_fits_table_answers_for_training_per_gpu_when_training():
    report = memory(LLAMA, "2k", train=True, zero_stage=3, gpus=8)
    h100 = next(row for row in report.accelerators if row.name.startswith("H100"))
    assert h100.per_gpu_bytes == report.training.per_gpu
    assert report.training.per_gpu == (
        report.training.weights_per_gpu
        + report.training.gradients_per_gpu
        + report.training.optimizer_states_per_gpu
        + report.training.activations
    )


def test_llama_8b_at_32k_times_8_does_not_fit_an_l40s_after_the_reserve():
    # 47.83 GiB of weights, KV and activations; the L40S reports 46,068 MiB (44.99 GiB), less 1 GiB
    report = memory(LLAMA, "32k", batch=8)
    l40s = next(row for row in report.accelerators if row.name.startswith("L40S"))
    assert report.total_inference > 46_068 * (1 << 20) - (1 << 30)
    assert not l40s.fits_on_one


def test_zero_stage_3_shards_weights_gradients_and_states_across_the_gpus():
    report = memory(LLAMA, "2k", train=True, zero_stage=3, gpus=8, recompute="full")
    training = report.training
    s, h = 2048, 4096
    assert training.activations == 32 * 2 * s * h + 4 * s * 128_256
    assert training.per_gpu == 16 * 8_030_261_248 // 8 + training.activations


def test_a_model_fits_an_accelerator_or_names_how_many_it_needs():
    report = memory(LLAMA, "8k")
    by_name = {row.name: row for row in report.accelerators}
    assert by_name["H100 SXM"].fits_on_one and by_name["H100 SXM"].tensor_parallel == 1
    assert not by_name["L4"].fits_on_one or report.total_inference <= 24 << 30


def test_a_context_beyond_max_position_embeddings_is_computed_with_a_warning(ffncalc):
    run = ffncalc("memory", LLAMA, "--ctx", "1M", "--json")
    assert run.exit_code == 0
    assert run.json()["kv_cache"]["bytes"] == 1_048_576 * 131_072
    assert run.stderr.startswith("Warning: context 1,048,576 exceeds this config's max_position_embeddings (131,072)")


def test_training_options_without_train_are_refused(ffncalc):
    run = ffncalc("memory", LLAMA, "--zero", "3")
    assert run.exit_code == 2
    assert run.stderr == "Error: --optimizer, --recompute and --zero apply to --train; add --train\n"


def test_an_unknown_what_if_dtype_is_refused_naming_the_choices(ffncalc):
    run = ffncalc("memory", LLAMA, "--dtype", "int3")
    assert run.exit_code == 2
    assert "--dtype 'int3': use one of fp32, bf16, fp16, fp8, int8, int4, nf4, mxfp4" in run.stderr


def test_the_kv_dtype_does_not_change_the_activation_buffer():
    # Llama-3.1-8B: batch 1 × chunk 2,048 × gate and up (2 × 14,336) × 2 bytes (BF16, the compute dtype) =
    # 117,440,512 bytes, whether the cache is BF16 or FP8.
    for kv_dtype in (None, "fp8"):
        report = memory("meta-llama/Llama-3.1-8B", kv_dtype=kv_dtype)
        assert report.activations.bytes == 2_048 * 2 * 14_336 * 2 == 117_440_512
        assert report.activations.formula.endswith("· 2 bytes")


def test_training_a_quantized_what_if_says_what_the_figures_mean():
    report = memory("meta-llama/Llama-3.1-8B", dtype="int4", train=True)
    assert any(note.startswith("`dtype` int4: GPTQ layout") for note in report.notes)
    assert any("QLoRA-style" in note for note in report.notes)


@pytest.mark.parametrize(
    ("width", "heading"),
    [
        (80, " Layers       N   El/tok/layer   Tokens   State el/layer           Bytes"),
        (120, " Layers      Count   Elements/token/layer   Tokens   State elements/layer           Bytes"),
    ],
)
def test_the_kv_table_says_its_per_token_figure_is_elements_per_layer(ffncalc, monkeypatch, width, heading):
    # Llama-3.1-8B caches k and v of 8 KV heads × 128 = 2,048 elements per token in each of 32 layers; in BF16
    # that is 2,048 × 2 bytes × 32 = 131,072 bytes per token, the figure in the table's title.
    monkeypatch.setenv("COLUMNS", str(width))
    lines = ffncalc("memory", "meta-llama/Llama-3.1-8B").stdout.splitlines()
    title = lines.index("KV cache and recurrent state: 131,072 bytes per token beyond the windows")
    assert lines[title + 2] == heading
    assert lines[title + 4].split() == ["attention", "32", "2,048", "8,192", "1,073,741,824"]


@pytest.mark.parametrize("option", ["--gpu-memory", "--runtime-reserve"])
def test_a_size_without_a_unit_is_refused_naming_both_units(ffncalc, option):
    run = ffncalc("memory", "meta-llama/Llama-3.1-8B", option, "96")
    assert run.exit_code == 2
    assert run.stdout == ""
    assert run.stderr == "Error: memory size '96' has no unit; write 96GB (10^9 bytes) or 96GiB (2^30 bytes)\n"


def test_gpu_memory_in_gb_is_decimal_and_shown_in_gib_beside_the_accelerators(ffncalc):
    # 96GB = 96 · 10^9 bytes = 89.406… GiB; the H100 SXM holds 81,559 MiB = 79.647… GiB (nvidia-smi)
    document = ffncalc("memory", "meta-llama/Llama-3.1-8B", "--gpu-memory", "96GB", "--json").json()
    by_name = {row["name"]: row["memory"] for row in document["accelerators"]}
    assert by_name["your GPU (96GB)"] == 96 * 10**9
    assert by_name["H100 SXM"] == 81_559 * 2**20


def test_no_accelerator_label_carries_a_size_that_breaks_the_unit_rule(ffncalc):
    # A label "H100 80GB" would read, by GB = 10^9 bytes, as 74.5 GiB; the card holds 79.65 GiB. A size in a
    # label must be the memory the row counts, in the unit it names.
    document = ffncalc("memory", "meta-llama/Llama-3.1-8B", "--json").json()
    for row in document["accelerators"]:
        for number, unit in re.findall(r"(\d+)\s*(GiB|GB)", row["name"]):
            assert int(number) * {"GiB": 2**30, "GB": 10**9}[unit] == row["memory"], row


def test_tensor_parallelism_splits_gpt3s_activations_as_korthikantis_equation_2():
    # Korthikanti et al. 2022 eq. 2, t-way tensor parallelism: s·b·h·(10 + 24/t + 5·a·s/(h·t)) per layer — the two
    # norms' inputs (4), the attention's and MLP's inputs (2 + 2) and dropout masks (1 + 1) stay whole on every rank;
    # the fp32 logits are split (Megatron's vocabulary-parallel output layer). GPT-3 Small, t = 2.
    s, b, h, a, t = 2048, 2, 768, 12, 2
    training = memory("gpt3-small", "2k", batch=b, train=True, attention="eager", tensor_parallel=t).training
    per_layer = 10 * s * b * h + (24 * s * b * h + 5 * a * s * s * b) // t
    assert training.activations == 12 * per_layer + 4 * s * b * 50_257 // t


def test_sequence_parallelism_splits_the_rest_as_korthikantis_equation_4():
    # eq. 4, tensor and sequence parallelism: s·b·h·(34/t + 5·a·s/(h·t)) per layer.
    s, b, h, a, t = 2048, 2, 768, 12, 2
    training = memory(
        "gpt3-small", "2k", batch=b, train=True, attention="eager", tensor_parallel=t, sequence_parallel=True
    ).training
    assert training.activations == (12 * (34 * s * b * h + 5 * a * s * s * b) + 4 * s * b * 50_257) // t


def test_tensor_parallel_ranks_hold_half_of_each_matrix_and_every_norm():
    # Llama-3.1-8B over 2 tensor-parallel ranks (ZeRO 0): 8,030,261,248 parameters, 266,240 of them norm weights
    # copied on both ranks, the rest halved; 2 bytes a weight, 2 a gradient, 12 of Adam's states.
    training = memory(LLAMA, "2k", train=True, tensor_parallel=2).training
    per_rank = (8_030_261_248 - 266_240) // 2 + 266_240
    assert training.trainable_parameters_per_rank == per_rank
    assert (training.weights_per_gpu, training.gradients_per_gpu) == (2 * per_rank, 2 * per_rank)
    assert training.optimizer_states_per_gpu == 12 * per_rank
    assert training.weights == 2 * 8_030_261_248  # the whole model's row stays whole


def test_zero_shards_over_the_data_parallel_ranks_left_by_tensor_parallelism():
    # 8 GPUs, --tp 2: 4 data-parallel ranks; ZeRO stage 1 shards Adam's states of one rank's share over them.
    training = memory(LLAMA, "2k", train=True, gpus=8, tensor_parallel=2, zero_stage=1).training
    per_rank = (8_030_261_248 - 266_240) // 2 + 266_240
    assert (training.gpus, training.data_parallel, training.tensor_parallel) == (8, 4, 2)
    assert training.optimizer_states_per_gpu == -(-12 * per_rank // 4)


@pytest.mark.parametrize(
    "args, message",
    [
        (["--train", "--sequence-parallel"], "add --tp 2 or more"),
        (["--sequence-parallel", "--tp", "2"], "applies to --train"),
        (["--train", "--gpus", "6", "--tp", "4"], "--gpus 6 is not a multiple of --tp 4"),
        (["--train", "--tp", "2", "--lora-rank", "8"], "--lora-rank with --tp is not modelled"),
        (["--gpus", "4", "--tp", "2"], "give --tp or --gpus, not both"),
    ],
)
def test_parallelism_options_that_cannot_be_counted_are_refused(ffncalc, args, message):
    run = ffncalc("memory", LLAMA, *args)
    assert run.exit_code != 0 and message in run.stderr and "Traceback" not in run.stderr and run.stdout == ""


def test_qlora_says_the_base_is_frozen_as_stored_not_full_16_bit_training():
    report = memory(LLAMA, "8k", train=True, lora_rank=16, dtype="nf4")
    assert any("QLoRA-style, the base frozen as stored" in note for note in report.notes)
    assert not any("full training in 16-bit" in note for note in report.notes)
    # LoRA rank 16 on the 7 projections of 32 layers: 16 × (q 4096+4096, k 4096+1024, v 4096+1024, o 4096+4096,
    # gate 4096+14336, up 4096+14336, down 14336+4096) × 32 = 16 × 81,920 × 32 = 41,943,040 trained parameters.
    assert report.training is not None and report.training.trainable_parameters == 41_943_040


def test_qwen3_5_keeps_its_recurrent_state_in_the_float32_its_config_names():
    """Qwen3.5-9B's text_config says mamba_ssm_dtype "float32" (transformers' torch kernel and vLLM both keep the
    Gated DeltaNet state in float32); its convolutions' windows are in the cache's type. 24 Gated DeltaNet layers, each a
    state of 32 value heads · 128 · 128 = 524,288 elements and a window of (2·16·128 + 32·128) · (4 − 1) = 24,576:
    24 · (524,288 · 4 + 24,576 · 2) = 51,511,296 bytes in BF16; with an FP8 cache the windows take 1 byte,
    24 · (524,288 · 4 + 24,576) = 50,921,472. The 8 attention layers: 2 · 4 · 256 elements a token."""
    for kv_dtype, state_bytes in ((None, 51_511_296), ("fp8", 50_921_472)):
        cache = memory("Qwen/Qwen3.5-9B", "32k", kv_dtype=kv_dtype).kv_cache
        (state,) = [layer for layer in cache.layers if layer.elements_per_token == 0]
        assert state.layers == 24 and state.fixed_elements == 524_288 + 24_576
        assert state.bytes == state_bytes
        size = 1 if kv_dtype else 2
        assert cache.bytes == state_bytes + 8 * 2 * 4 * 256 * 32_768 * size
