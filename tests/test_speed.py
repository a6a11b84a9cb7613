"""`ffncalc speed`: roofline ceilings of decode and prefill, each checked against a hand derivation written here.

Hardware figures come from ffncalc/accelerators.py, whose sources are the vendors' datasheets (H100 SXM: 1,979
TFLOP/s BF16 with sparsity → 989 dense; 3.35 TB/s; nvidia-smi's 81,559 MiB). Byte and FLOP counts are derived from
the configs' numbers in each test.
"""

import json
from fractions import Fraction

import pytest

from ffncalc.accelerators import ACCELERATOR_TABLE, accelerator
from ffncalc.api import speed
from ffncalc.errors import UsageError

from .conftest import BUNDLED, run_main

LLAMA = "meta-llama/Llama-3.1-8B"
H100_BANDWIDTH = 3.35e12
H100_BF16 = 989e12


def one(run):
    (report,) = run.reports
    return report


def component(phase, name):
    (found,) = [c for c in phase.components if c.name == name]
    return found


def test_llama_3_1_8b_decode_at_batch_1_is_memory_bound_and_its_tpot_is_bytes_over_bandwidth():
    # Llama-3.1-8B, BF16, context 8,192, batch 1, H100 SXM. Bytes one step moves:
    # - every stored weight but the input embedding table: 16,060,522,496 − 128,256 × 4,096 × 2 = 15,009,849,344
    #   (the table's one row read: 4,096 × 2 = 8,192)
    # - the KV cache: 8,192 tokens × 131,072 bytes (2 × 8 KV heads × 128 × 32 layers × 2 bytes), + the new token's 131,072
    # - activations, in and out of each operator: attention 32 × 2 × 4,096 × 2, FFN the same, the head
    #   (4,096 + 128,256) × 2, the embedding's output row 4,096 × 2
    weights = 16_060_522_496 - 128_256 * 4096 * 2 + 4096 * 2
    kv = 8192 * 131_072 + 131_072
    activations = 2 * (32 * 2 * 4096 * 2) + (4096 + 128_256) * 2 + 4096 * 2
    report = one(speed(LLAMA, "h100", context="8k", prompt="8k", batches="1"))
    assert report.decode.bytes == weights + kv + activations == 16_085_051_904
    assert {c.bound for c in report.decode.components} == {"memory"}
    assert report.decode.seconds_per_step == pytest.approx((weights + kv + activations) / H100_BANDWIDTH, rel=1e-12)
    assert report.decode.seconds_per_step == pytest.approx(4.8015e-3, rel=1e-4)  # ≈ 208 tokens/s
    # The issue's 5.11 ms also reads the whole 1.05 GB input table; a decode step reads only the batch's rows.


def test_llama_3_1_8b_prefill_of_8192_tokens_is_compute_bound_with_the_head_run_once():
    # Matmul FLOPs per prompt token: attention projections 2 · (4,096·4,096·2 + 4,096·1,024·2) · 32 = 2,684,354,560;
    # FFN 2 · 3 · 4,096 · 14,336 · 32 = 11,274,289,152. Causal scores: 32 layers · 2 · 32 heads · (128 + 128) · Σ_{i≤n} i.
    n = 8192
    projections, ffn = 2_684_354_560 * n, 11_274_289_152 * n
    scores = 32 * 2 * 32 * 256 * n * (n + 1) // 2
    head = 2 * 4096 * 128_256  # the last position only
    report = one(speed(LLAMA, "h100", context="8k", prompt="8k", batches="1"))
    prefill = report.prefill
    assert component(prefill, "attention_projections").flops == projections
    assert component(prefill, "ffn").flops == ffn
    assert component(prefill, "attention_scores").flops == scores
    assert component(prefill, "lm_head").flops == head
    for name in ("attention_projections", "attention_scores", "ffn"):
        assert component(prefill, name).bound == "compute"
    compute = (projections + scores + ffn) / H100_BF16
    memory_bound = sum(c.seconds for c in prefill.components if c.bound == "memory")
    assert prefill.seconds == pytest.approx(compute + memory_bound, rel=1e-12)
    assert prefill.seconds == pytest.approx(0.1338, rel=1e-3)


def test_per_component_times_add_up_and_tokens_per_second_is_batch_over_tpot():
    for report in speed(
        LLAMA, "h100,mi300x", context="32k", prompt="4k", batches="1,16,256", tensor_parallel=2
    ).reports:
        decode = report.decode
        assert decode.seconds == pytest.approx(sum(c.seconds for c in decode.components) + decode.allreduce_seconds)
        assert decode.tokens_per_second == pytest.approx(report.batch / decode.seconds_per_step)
        assert decode.flops == sum(c.flops for c in decode.components)
        assert decode.bytes == sum(c.bytes for c in decode.components)


@pytest.mark.parametrize(("batch", "runs"), [(1, 64), (4, 175)])
def test_mixtral_decode_counts_the_routed_experts_it_runs(batch, runs):
    # 32 MoE layers × 8 experts × the share a batch touches, 1 − (6/8)^B: 2 of 8 at batch 1 (64 a step), 8 × 175/256
    # at batch 4 (175). A prefill of 1,024 tokens touches all 8 but for (6/8)^1024: 256, to within rounding.
    report = speed("mistralai/Mixtral-8x7B-v0.1", "h200", context="8k", prompt="1k", batches=str(batch)).reports[0]
    assert report.decode.expert_runs == runs
    assert report.prefill.expert_runs == pytest.approx(256, rel=1e-12)
    dense = speed("meta-llama/Llama-3.1-8B", "h200", context="8k", prompt="1k", batches=str(batch)).reports[0]
    assert dense.decode.expert_runs == dense.prefill.expert_runs == 0


def expected_routed_bytes(batch):
    # Mixtral-8x7B: 32 layers × 8 experts × (3 × 14,336 × 4,096) weights × 2 bytes = 90,194,313,216 bytes of experts;
    # at batch B each layer reads E · (1 − (1 − k/E)^B) distinct experts on average, E = 8, k = 2.
    routed = 32 * 8 * 3 * 14_336 * 4096 * 2
    return int(routed * (1 - Fraction(6, 8) ** batch))


@pytest.mark.parametrize(("batch", "distinct"), [(1, Fraction(2)), (64, 8 * (1 - Fraction(3, 4) ** 64))])
def test_mixtral_decode_reads_the_expected_distinct_experts(batch, distinct):
    report = speed("mistralai/Mixtral-8x7B-v0.1", "h200", context="8k", prompt="1k", batches=str(batch)).reports[0]
    router = 32 * 8 * 4096 * 2
    activations = 32 * 2 * batch * 4096 * 2
    assert component(report.decode, "ffn").bytes == router + expected_routed_bytes(batch) + activations
    assert expected_routed_bytes(batch) == int(32 * 3 * 14_336 * 4096 * 2 * distinct)
    if batch == 1:
        assert expected_routed_bytes(1) == 22_548_578_304  # exactly 2 of 8 experts


def test_deepseek_v3_runs_its_fp8_matmuls_on_fp8_peaks_and_reads_its_mla_latent():
    # DeepSeek-V3 stores FP8 (quant_method fp8): H100 SXM FP8 dense peak 1,979 TFLOP/s. Decode at 4,096 tokens reads the
    # latent cache, 61 layers × (512 + 64) × 2 bytes = 70,272 bytes per token, and writes the new token's 70,272.
    # Absorbed MLA scores per key: 2 · 128 heads · (512 + 64 + 512) per layer.
    report = speed("deepseek-ai/DeepSeek-V3", "h100", context="4k", prompt="1k", batches="1").reports[0]
    assert report.gpu.compute_dtype == "fp8" and report.gpu.peak_flops == 1979 * 10**12
    scores = component(report.decode, "attention_scores")
    assert scores.bytes == 4096 * 70_272 + 70_272
    assert scores.flops == 61 * 2 * 128 * (512 + 64 + 512) * 4096


def test_gemma_2_sliding_layers_read_at_most_their_window():
    # gemma-2-9b at 32k: 21 sliding layers keep 4,096 tokens, 21 global layers 32,768; each layer 8 KV heads × (256 + 256)
    # elements per token, in the weights' float32 by default: --kv-dtype bf16 makes it 2 bytes.
    report = speed("google/gemma-2-9b", "h100", context="32k", prompt="1k", batches="1", kv_dtype="bf16").reports[0]
    per_layer_token = 8 * 512 * 2
    read = 21 * 4096 * per_layer_token + 21 * 32_768 * per_layer_token
    assert component(report.decode, "attention_scores").bytes == read + 42 * per_layer_token


def test_tensor_parallel_adds_two_allreduces_per_layer_over_the_interconnect():
    # Llama-3.1-8B over 2 H100s at batch 4: 32 layers × 2 all-reduces × 2·(2−1)/2 × 4 tokens × 4,096 × 2 bytes,
    # over NVLink 4's 450 GB/s per direction.
    report = speed(LLAMA, "h100", context="8k", prompt="1k", batches="4", tensor_parallel=2).reports[0]
    expected = 32 * 2 * 2 * 1 * 4 * 4096 * 2 // 2
    assert report.decode.allreduce_bytes == expected == 2_097_152
    assert report.decode.allreduce_seconds == pytest.approx(expected / 450e9)


def test_efficiencies_scale_the_ceiling_and_are_labelled_assumptions():
    ceiling = one(speed(LLAMA, "h100", context="8k", prompt="8k", batches="1"))
    scaled = one(
        speed(LLAMA, "h100", context="8k", prompt="8k", batches="1", compute_efficiency=0.7, bandwidth_efficiency=0.8)
    )
    assert scaled.decode.seconds_per_step == pytest.approx(ceiling.decode.seconds_per_step / 0.8)
    assert ceiling.estimate == "roofline ceiling"
    assert scaled.estimate == "roofline ceiling, at 0.7 of peak FLOP/s and 0.8 of peak bandwidth (assumed)"


def test_the_batch_sweep_stops_where_weights_kv_and_activations_no_longer_fit():
    # Llama-3.1-8B on an L4 (24 GiB, 23 GiB = 24,696,061,952 bytes after the 1 GiB runtime reserve), as `memory`
    # counts what must fit: 16,060,522,496 bytes of weights + 131,072 bytes per token × 32,768 tokens = 4 GiB of KV
    # per sequence + the FFN intermediate of a 2,048-token chunk, batch · 2,048 · 28,672 · 2 bytes. One sequence:
    # 16,060,522,496 + 4,294,967,296 + 117,440,512 = 20,472,930,304 fits; two: 16,060,522,496 + 8,589,934,592
    # + 234,881,024 = 24,885,338,112 does not.
    run = speed(LLAMA, "l4", context="32k", prompt="1k", batches="1,2,4,8")
    assert [(r.batch, r.fits) for r in run.reports] == [(1, True), (2, False), (4, False), (8, False)]
    assert run.reports[0].memory_needed == 20_472_930_304
    assert [(stop.gpu, stop.batch) for stop in run.not_fitting] == [("L4", 2)]


@pytest.mark.parametrize(
    ("name", "entry"), [("h100", "H100 SXM"), ("H100-SXM", "H100 SXM"), ("mi300x", "MI300X"), ("ironwood", "TPU7x")]
)
def test_accelerators_are_found_by_the_names_people_type(name, entry):
    assert accelerator(name).name == entry


def test_an_unknown_accelerator_is_one_line_listing_the_names():
    with pytest.raises(UsageError, match=r"^unknown accelerator 'h900'; use one of: h100, h100-pcie, "):
        accelerator("h900")


def test_h100_sxm_figures_are_its_datasheets_dense_peaks_and_the_memory_its_driver_reports():
    h100 = accelerator("h100")
    # The datasheet prints 1,979 (BF16) and 3,958 (FP8) TFLOP/s with sparsity; dense is half, 989.5 and 1,979,
    # which torchtitan's get_peak_flops and the issue quote as 989 and 1,979.
    assert h100.peak("bf16") == 989 * 10**12 and h100.peak("fp8") == 1979 * 10**12
    assert h100.bandwidth == 3_350_000_000_000 and h100.interconnect == 900 * 10**9 // 2
    assert h100.memory == 81_559 * 2**20  # nvidia-smi: "81559MiB"


def test_every_accelerator_has_a_bf16_peak_a_bandwidth_a_memory_and_a_source():
    for entry in ACCELERATOR_TABLE:
        assert entry.peak("bf16") and entry.bandwidth and entry.memory and entry.sources, entry.name


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--gpu", "h900"], "Error: unknown accelerator 'h900'"),
        (["--batch", "0"], "Error: --batch takes whole numbers from 1"),
        (["--compute-efficiency", "1.5"], "Error: --compute-efficiency must be above 0 and at most 1"),
        (["--attention", "fused"], "Error: --attention must be flash or eager"),
        (["--gpu-flops", "1e15"], "Error: describe another chip with both --gpu-flops and --gpu-bandwidth"),
    ],
)
def test_bad_options_are_one_line_errors(args, message):
    run = run_main("speed", LLAMA, *args)
    assert run.exit_code == 2
    assert run.stderr.startswith(message) and run.stderr.count("\n") == 1
    assert run.stdout == ""


def test_json_has_the_keys_the_issue_names_with_exact_integers():
    run = run_main("speed", LLAMA, "--json")
    assert run.exit_code == 0, run.stderr
    document = run.json()["reports"][0]
    assert document["gpu"]["name"] == "H100 SXM" and document["batch"] == 1
    assert isinstance(document["decode"]["seconds_per_step"], float)
    assert isinstance(document["decode"]["tokens_per_second"], float)
    assert isinstance(document["prefill"]["seconds"], float)
    assert all(c["bound"] in ("compute", "memory") for c in document["decode"]["components"])
    assert document["decode"]["bytes"] == 16_085_051_904
    assert document["estimate"] == "roofline ceiling" and document["conventions"]


def test_several_batches_or_accelerators_list_every_report_in_the_one_document():
    run = run_main("speed", LLAMA, "--gpu", "h100,h200", "--batch", "1,8", "--json")
    assert run.exit_code == 0, run.stderr
    assert [(d["gpu"]["name"], d["batch"]) for d in json.loads(run.stdout)["reports"]] == [
        ("H100 SXM", 1), ("H100 SXM", 8), ("H200 SXM", 1), ("H200 SXM", 8),
    ]  # fmt: skip


@pytest.mark.parametrize(
    "several", [("--gpu", "h100,h200"), ("--batch", "1,8"), ("--gpu", "h100,l4", "--batch", "1,64")]
)
def test_json_has_one_top_level_shape_for_one_and_for_several(several):
    one = run_main("speed", LLAMA, "--json").json()
    many = run_main("speed", LLAMA, *several, "--json").json()
    assert isinstance(one, dict) and sorted(one) == sorted(many) == ["not_fitting", "reports", "warnings"]


def test_every_accelerator_keeps_its_own_warnings_and_its_first_batch_that_does_not_fit():
    # Llama-3.1-70B at 8k: weights 141,107,412,992 bytes; KV 80 layers × 8 heads × 128 × 2 (k, v) × 2 bytes = 327,680
    # bytes a token; the FFN intermediate of a 2,048-token chunk 2,048 × 57,344 × 2 bytes a sequence. Batch 1:
    # 141,107,412,992 + 2,684,354,560 + 234,881,024 = 144,026,648,576 bytes, more than an H100 holds (81,559 MiB
    # less 1 GiB = 84,447,068,160) and less than an H200 (143,771 MiB less 1 GiB = 149,682,198,528); batch 8:
    # 141,107,412,992 + 21,474,836,480 + 1,879,048,192 = 164,461,297,664, more than both.
    assert 141_107_412_992 + 8192 * 327_680 + 2048 * 57_344 * 2 == 144_026_648_576
    run = run_main("speed", "meta-llama/Llama-3.1-70B", "--gpu", "h200,h100", "--batch", "1,8", "--json")
    document = run.json()
    assert [(stop["gpu"], stop["batch"]) for stop in document["not_fitting"]] == [("H200 SXM", 8), ("H100 SXM", 1)]
    assert [report["fits"] for report in document["reports"]] == [True, False, False, False]
    assert document["reports"][0]["memory_needed"] == 144_026_648_576
    assert any(w.startswith("H100 SXM: does not fit at any batch asked") for w in document["warnings"])
    assert "H100 SXM: does not fit at any batch asked" in run.stderr
    assert "H200 SXM: does not fit from batch 8 on" in run.stderr


@pytest.mark.parametrize("value", ["0.4", "1e-300", "inf", "nan"])
def test_a_chip_figure_that_is_no_chip_is_a_one_line_error(value):
    run = run_main("speed", LLAMA, "--gpu-flops", value, "--gpu-bandwidth", "3e12")
    assert run.exit_code == 2 and run.stdout == ""
    assert run.stderr.startswith("Error: --gpu-flops must be from 1e+09 to 1e+18 per second")


def test_a_described_chip_takes_tensor_parallelism_with_its_interconnect_and_its_name():
    # An H20-like chip: 148 TFLOP/s dense BF16, 4.0 TB/s, 96 GB, NVLink 900 GB/s (450 GB/s a direction). TP 2 over
    # Llama-3.1-8B: 32 layers × 2 all-reduces × 2·(2−1)/2 × 1 token × 4,096 × 2 bytes = 524,288 bytes a step.
    run = run_main(
        "speed", LLAMA, "--gpu-flops", "148e12", "--gpu-bandwidth", "4e12", "--gpu-memory", "96GB",
        "--gpu-interconnect", "450e9", "--gpu-name", "H20", "--tp", "2", "--json",
    )  # fmt: skip
    assert run.exit_code == 0, run.stderr
    report = run.json()["reports"][0]
    assert report["gpu"]["name"] == "H20" and report["gpu"]["interconnect"] == 450 * 10**9
    assert report["decode"]["allreduce_bytes"] == 32 * 2 * 4096 * 2
    assert report["decode"]["allreduce_seconds"] == 32 * 2 * 4096 * 2 / 450e9


def test_a_described_chip_without_an_interconnect_names_the_option_for_it():
    run = run_main("speed", LLAMA, "--gpu-flops", "148e12", "--gpu-bandwidth", "4e12", "--tp", "2")
    assert run.exit_code == 2 and "give --gpu-interconnect" in run.stderr


def test_batch_takes_the_sweep_range_syntax():
    run = run_main("speed", LLAMA, "--batch", "1:8:x2", "--json")
    assert [report["batch"] for report in run.json()["reports"]] == [1, 2, 4, 8]


def test_a_batch_sweep_writes_csv_one_row_per_accelerator_and_batch():
    run = run_main("speed", LLAMA, "--gpu", "h100,h200", "--batch", "1,8", "--format", "csv")
    lines = run.stdout.splitlines()
    assert lines[0].startswith("gpu,batch,")
    assert [line.split(",")[:2] for line in lines[1:]] == [
        ["H100 SXM", "1"], ["H100 SXM", "8"], ["H200 SXM", "1"], ["H200 SXM", "8"],
    ]  # fmt: skip


@pytest.mark.parametrize("picture", ["--svg", "--html"])
def test_a_picture_beside_csv_is_refused_not_dropped(picture, tmp_path):
    target = tmp_path / "out"
    run = run_main("speed", LLAMA, "--batch", "1,8", "--format", "csv", picture, str(target))
    assert run.exit_code == 2 and not target.exists()


def _llama_as(quantization: dict, write_config) -> str:
    config = json.loads((BUNDLED / "meta-llama__Llama-3.1-8B.json").read_text())
    return str(write_config(config | {"quantization_config": quantization}))


NVFP4 = {"quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": 16, "ignore": ["lm_head"]}
W4A16_NVFP4 = NVFP4 | {"quant_algo": "W4A16_NVFP4"}


def test_nvfp4_weights_with_4_bit_activations_run_at_the_fp4_peak_where_the_chip_has_one(write_config):
    # ModelOpt's NVFP4 is W4A4: weights and activations in E2M1, GEMMs on Blackwell's FP4 tensor cores (the B200's
    # dense FP4 peak, 9 PFLOP/s in the table); the documented rule is "the peak of the weights' dtype".
    report = speed(_llama_as(NVFP4, write_config), "b200", batches="1").reports[0]
    assert report.gpu.compute_dtype == "fp4" and report.gpu.peak_flops == 9000 * 10**12


def test_on_a_chip_without_fp4_units_nvfp4_says_it_runs_at_the_bf16_peak(write_config):
    report = speed(_llama_as(NVFP4, write_config), "h100", batches="1").reports[0]
    assert report.gpu.compute_dtype == "bf16"
    assert "has no fp4 units: matmuls at its BF16 peak" in report.gpu.notes


def test_4_bit_weights_with_16_bit_activations_run_at_the_bf16_peak(write_config):
    report = speed(_llama_as(W4A16_NVFP4, write_config), "b200", batches="1").reports[0]
    assert report.gpu.compute_dtype == "bf16"


def test_every_accelerator_name_and_alias_names_one_entry():
    # Names are compared as accelerator() compares them: without case, spaces, '-' and '_'.
    def key(name):
        return "".join(character for character in name.lower() if character.isalnum())

    keys = [k for entry in ACCELERATOR_TABLE for k in {key(name) for name in (entry.name, *entry.aliases)}]
    assert len(keys) == len(set(keys))


@pytest.mark.parametrize("command", ["memory", "train"])
def test_an_unknown_accelerator_names_no_option_the_command_lacks(command):
    run = run_main(command, LLAMA, "--gpu", "foo")
    assert run.exit_code == 2 and "unknown accelerator 'foo'" in run.stderr
    assert "--gpu-flops" not in run.stderr


def test_integer_weights_take_the_int8_peak_where_the_chip_has_one():
    # NVIDIA's Ampere whitepaper: the RTX 3090 runs 71 TFLOPS of FP16 with FP32 accumulation and 284 TOPS of dense
    # INT8; llama.cpp's quantized matmuls run on the INT8 units, so a ceiling for int4 weights must allow that rate.
    report = speed("meta-llama/Llama-2-7b-hf", "rtx3090", batches="1", dtype="int4").reports[0]
    assert report.gpu.compute_dtype == "int8" and report.gpu.peak_flops == 284 * 10**12


@pytest.mark.parametrize(("experts", "per_token"), [(8, 2), (64, 6), (256, 8), (128, 1), (16, 16)])
def test_distinct_expert_bytes_equal_the_exact_form_at_every_batch(experts, per_token):
    # ⌊R × (1 − (1 − k/E)^B)⌋ with the exact rational power, against the shortcut that avoids B-digit numbers.
    from ffncalc.roofline import distinct_expert_bytes

    routed = 11_318_329_344  # DeepSeek-V3's experts of one MoE layer: 257 × 3 × 7,168 × 2,048 (the README's figure)
    for tokens in (1, 2, 7, 64, 255, 1024, 4096):
        exact = int(routed * (1 - Fraction(experts - per_token, experts) ** tokens))
        assert distinct_expert_bytes(routed, experts, per_token, tokens) == exact, tokens


def test_an_encoder_only_model_has_no_decode_to_time_and_says_so():
    run = run_main("speed", "google-bert/bert-base-uncased")
    assert run.exit_code == 2 and run.stdout == ""
    assert "is encoder-only (bert)" in run.stderr and "`ffncalc flops`" in run.stderr


def test_speed_and_memory_take_one_runtime_reserve():
    # "fits" is one rule in both commands: the accelerator's memory less the reserve the user gives (here 2 GiB);
    # an H100 SXM's driver reports 81,559 MiB (accelerators.py's nvidia-smi source).
    from ffncalc.api import memory

    (report,) = speed("meta-llama/Llama-3.1-8B", "h100", runtime_reserve="2GiB").reports
    assert report.memory_usable == 81_559 * 2**20 - 2 * 2**30
    fits = memory("meta-llama/Llama-3.1-8B", runtime_reserve="2GiB", gpu="h100")
    assert fits.runtime_reserve == report.runtime_reserve == 2 * 2**30


def test_an_encoder_decoders_first_token_is_the_encoders_pass_and_one_decoder_position():
    """T5-small (d_model 512, 6 + 6 layers, 8 heads of 64, ReLU FFN 2,048, vocab 32,128), a prompt of 512 tokens: the
    encoder reads the prompt and the decoder runs its start token over it, not the prompt through the decoder.
    Encoder, per token and layer: q, k, v, o 4 · 512² · 2 = 2,097,152, FFN 2 · 512 · 2,048 · 2 = 4,194,304; six
    layers 37,748,736; the decoder's cross-attention keys and values of each encoder position, 6 · 2 · 512² · 2 =
    6,291,456; scores, every token against all 512 keys, 2 · 8 · (64 + 64) = 2,048 a key a layer, 12,288 over six.
    Encoder: 512 · (37,748,736 + 6,291,456) + 12,288 · 512² = 25,769,803,776. Decoder, one position: self q, k, v, o
    2,097,152 + cross q, o 1,048,576 + FFN 4,194,304 a layer, 44,040,192 over six; the head 512 · 32,128 · 2 =
    32,899,072; its own one key 12,288; the 512 encoder positions 12,288 · 512 = 6,291,456: 83,243,008."""
    report = speed("google-t5/t5-small", "h100", context=512, prompt=512).reports[0]
    assert report.prefill.flops == 25_769_803_776 + 83_243_008 == 25_853_046_784
    by_name = {component.name: component.flops for component in report.prefill.components}
    assert by_name["lm_head"] == 32_899_072  # the head runs once, for the start token


@pytest.mark.parametrize(("engine", "profile"), [("vllm@0.11", "vllm"), ("none", "typical"), ("SGLang", "sglang")])
def test_speed_takes_the_engine_as_memory_spells_it(engine, profile):
    # memory --engine takes vllm, vllm@VERSION, sglang or none; speed has one profile an engine, and none is typical.
    report = speed("meta-llama/Llama-3.1-8B", "h100", engine=engine).reports[0]
    assert report.engine_profile is not None and report.engine_profile.name == profile
