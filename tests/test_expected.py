"""The expected time beside the ceiling (ffncalc/expected.py): its terms derived by hand, its coefficients held to the
data and the fit that produced them, and the ceiling held to every measurement the fit used.

Coefficients are read from the shipped profiles by name (they are data, with their source in the file); every FLOP
and byte the terms multiply is derived here from the model's config, as tests/test_speed.py derives the ceilings.
Hardware: H100 SXM 989 TFLOP/s dense BF16, 3.35 TB/s, NVLink 450 GB/s per direction (ffncalc/accelerators.py's
datasheet figures).
"""

import csv
import hashlib
import json
import sys
from fractions import Fraction
from pathlib import Path

import pytest

from ffncalc.api import speed
from ffncalc.expected import ROOFLINE_FACTORS, choose, profiles

from .conftest import run_main

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data" / "measurements" / "aiconfigurator_silicon_sample.csv"
H100_BF16, H100_BANDWIDTH, H100_LINK = 989e12, 3.35e12, 450e9
LLAMA = "meta-llama/Llama-3.1-8B"


def one(run):
    (report,) = run.reports
    return report


def fit_tool():
    """tools/fit_expected.py as a module: the rows as the fit counts them, and its prediction of a measurement."""
    sys.path.insert(0, str(ROOT / "tools"))
    import fit_expected

    return fit_expected


# --- hand derivations: one dense, one MoE, one TP-8 ----------------------------------------------------------


def test_dense_decode_expected_is_each_memory_term_times_its_coefficient_plus_fixed_costs():
    # Llama-3.1-8B, BF16, batch 1 at context 8,192 on H100 (tests/test_speed.py derives the bytes): 16,085,051,904
    # bytes in all, of which the KV cache 8,192 × 131,072 + the new token's 131,072. Every operator is memory-bound
    # (1 FLOP per weight byte, far under the ridge of 295), so the terms are bytes ÷ bandwidth, the KV read apart.
    kv = 8192 * 131_072 + 131_072
    others = 16_085_051_904 - kv
    sublayers = 32 * 2  # attention and FFN in each of 32 layers
    c = choose(None, "H100 SXM").decode
    expected = (
        c["weights_memory"] * others / H100_BANDWIDTH
        + c["kv_memory"] * kv / H100_BANDWIDTH
        + c["sublayers"] * sublayers
        + c["sequences"] * 1  # one sequence in the batch
        + c["fixed"]
    )
    decode = one(speed(LLAMA, "h100", context="8k", prompt="8k", batches="1")).decode
    assert decode.expected_seconds_per_step == pytest.approx(expected, rel=1e-12)
    assert decode.expected_tokens_per_second == pytest.approx(1 / expected, rel=1e-12)


def test_dense_decode_range_is_the_held_out_percentiles_of_measured_over_expected_above_the_ceiling():
    held_out = profiles()["profiles"]["typical"]["held_out"]
    decode = one(speed(LLAMA, "h100", context="8k", prompt="8k", batches="1")).decode
    step = decode.expected_seconds_per_step
    low = max(decode.seconds_per_step, step * held_out["tpot_ratio_p10"])  # no run beats the ceiling
    assert decode.expected_range == [low, step * held_out["tpot_ratio_p90"]]


def test_moe_prefill_expected_weighs_compute_bound_matmuls_and_all_experts_read():
    # Mixtral-8x7B, BF16, a 1,024-token prompt on H100. hidden 4,096, 32 layers, 32 heads, 8 KV heads of 128,
    # 8 experts of width 14,336, 2 a token, vocab 32,000.
    n = 1024
    projections = 2 * (4096 * 4096 * 2 + 4096 * 1024 * 2) * 32 * n  # q, o; k, v
    scores = 32 * 2 * 32 * 256 * n * (n + 1) // 2  # causal QKᵀ and AV
    # The FFN reads every expert the prompt touches: all 8 but for 1 − (1 − 2/8)^1024 (ffncalc truncates the
    # fraction's bytes), its router, and each layer's input and output; 23.1 TFLOPs against 90.7 GB: memory-bound.
    experts = 8 * 3 * 4096 * 14336 * 2 * 32
    ffn_bytes = int(experts * (1 - Fraction(6, 8) ** n)) + 8 * 4096 * 2 * 32 + 2 * n * 4096 * 2 * 32
    report = one(speed("mistralai/Mixtral-8x7B-v0.1", "h100", context=n, prompt=n, batches="1"))
    by_name = {component.name: component for component in report.prefill.components}
    assert by_name["ffn"].bytes == ffn_bytes and by_name["ffn"].bound == "memory"
    head_and_rest = sum(by_name[name].bytes for name in ("lm_head", "embedding", "other"))  # one position's head
    c = choose(None, "H100 SXM").prefill
    expected = (
        c["matmul_compute"] * (projections + scores) / H100_BF16  # attention bound by compute shares the factor
        + c["weights_memory"] * (ffn_bytes + head_and_rest) / H100_BANDWIDTH
        + c["sublayers"] * 32 * 2
        + c["fixed"]
    )
    assert report.prefill.expected_seconds == pytest.approx(expected, rel=1e-12)


def test_moe_decode_pays_a_fixed_cost_for_each_routed_expert_the_batch_touches():
    # Mixtral-8x7B, BF16, batch 4 at context 1,024 on H100: 32 MoE layers of 8 experts, 2 a token. Four tokens
    # leave an expert untouched with probability (6/8)^4 = 81/256, so a layer runs 8 × 175/256 experts and the
    # step 32 × 8 × 175/256 = 175. The KV cache: 8 KV heads of 128, K and V, 2 bytes, 32 layers = 131,072 bytes a
    # token, for 1,025 tokens of each of 4 sequences; every operator is memory-bound at batch 4.
    kv = 4 * 1025 * 131_072
    report = one(speed("mistralai/Mixtral-8x7B-v0.1", "h100", context=1024, prompt=1024, batches="4"))
    decode = report.decode
    assert decode.expert_runs == 175
    assert {component.bound for component in decode.components} == {"memory"}
    others = decode.bytes - kv
    c = choose(None, "H100 SXM").decode
    assert c["experts"] > 0
    expected = (
        c["weights_memory"] * others / H100_BANDWIDTH
        + c["kv_memory"] * kv / H100_BANDWIDTH
        + c["sublayers"] * 32 * 2
        + c["sequences"] * 4
        + c["experts"] * 175
        + c["fixed"]
    )
    assert decode.expected_seconds_per_step == pytest.approx(expected, rel=1e-12)
    # A prefill's experts each see hundreds of tokens: no fixed cost per expert (ffncalc/expected.py says why).
    assert choose(None, "H100 SXM").prefill["experts"] == 0


def test_tensor_parallel_8_decode_adds_a_latency_and_a_transfer_for_each_all_reduce():
    # Llama-3.1-70B, BF16, batch 1 at context 1,024 over 8 H100s. 80 layers × 2 sublayers = 160 all-reduces, each
    # 2 · 7/8 × 1 token × 8,192 × 2 bytes per GPU: 4,587,520 bytes in all. The KV cache per GPU: 8 KV heads of 128
    # split over 8 GPUs, K and V, 2 bytes, 80 layers = 40,960 bytes a token, for 1,024 tokens and the new one.
    allreduce = 160 * 2 * 7 * 8192 * 2 // 8
    kv = 1025 * 40_960
    report = one(speed("meta-llama/Llama-3.1-70B", "h100", context=1024, prompt=1024, batches="1", tensor_parallel=8))
    decode = report.decode
    assert decode.allreduce_bytes == allreduce
    assert {component.bound for component in decode.components} == {"memory"}
    others = decode.bytes - kv
    c = choose(None, "H100 SXM").decode
    expected = (
        c["weights_memory"] * others / H100_BANDWIDTH
        + c["kv_memory"] * kv / H100_BANDWIDTH
        + (c["sublayers"] + c["allreduces"]) * 160
        + c["allreduce_transfer"] * allreduce / H100_LINK
        + c["sequences"] * 1
        + c["fixed"]
    )
    assert decode.expected_seconds_per_step == pytest.approx(expected, rel=1e-12)


# --- the coefficients ------------------------------------------------------------------------------------


def test_every_roofline_factor_is_at_least_one_and_every_fixed_cost_non_negative_so_expected_never_beats_the_ceiling():
    for name, profile in profiles()["profiles"].items():
        for family, cell in profile["families"].items():
            for phase in ("decode", "prefill"):
                for term, value in cell[phase].items():
                    floor = 1.0 if term in ROOFLINE_FACTORS else 0.0
                    assert value >= floor, (name, family, phase, term)


def test_a_prefill_has_no_fixed_cost_and_each_engine_its_own_load_terms():
    # The constant per request in the loaded TTFTs is the serving stack's, fitted per engine (request_cost), never
    # the lone prompt's: every cell's prefill fixed cost is 0, and the typical profile's cells hold all three engines.
    for name, profile in profiles()["profiles"].items():
        engines = {"vllm", "sglang", "trtllm"} if name == "typical" else {name}
        for family, cell in profile["families"].items():
            assert cell["prefill"]["fixed"] == 0, (name, family)
            assert set(cell["load_by_engine"]) <= engines, (name, family)
            for terms in cell["load_by_engine"].values():
                assert set(terms) == {"shared_steps", "burst", "request_cost"}
                assert all(value >= 0 for value in terms.values())
        assert set(profile["families"]["all"]["load_by_engine"]) == engines


@pytest.mark.parametrize("gpu", ["h100", "b200", "a100", "mi300x"])
def test_expected_is_at_least_the_ceiling_decode_and_prefill(gpu):
    for report in speed("mistralai/Mixtral-8x7B-v0.1", gpu, context="4k", batches="1,64", tensor_parallel=2).reports:
        assert report.decode.expected_seconds_per_step >= report.decode.seconds_per_step
        assert report.prefill.expected_seconds >= report.prefill.seconds


def test_an_engine_without_fit_data_falls_back_to_the_typical_profile_and_says_so():
    profile = choose("llama.cpp", "H100 SXM").profile
    assert profile.name == "typical"
    assert profile.note == "no fit data for llama.cpp: the typical profile"


def test_a_chip_family_without_fit_data_is_answered_by_the_fit_over_every_chip():
    profile = choose("vllm", "A100 80 GiB").profile
    assert (profile.name, profile.chip_family) == ("vllm", "all")
    assert "no fit data for A100 80 GiB" in profile.note


def test_shipped_profiles_were_fitted_on_the_shipped_data():
    data = profiles()["data"]
    with DATA.open(newline="") as handle:
        rows = sum(1 for _ in csv.DictReader(handle))
    assert data["sha256"] == hashlib.sha256(DATA.read_bytes()).hexdigest()
    assert data["rows_in_file"] == rows == 2412


def test_shipped_coefficients_reproduce_the_errors_the_fit_recorded_for_llama_3_1_8b():
    # The fit wrote each model's in-sample median errors; the shipped coefficients, applied to the rows as the fit
    # counts them, must give the same (so the file is the fit's output, unedited).
    fit = fit_tool()
    with DATA.open(newline="") as handle:
        rows = [
            row
            for row in csv.DictReader(handle)
            if row["model_path"].startswith(("meta-llama/Llama-3.1-8B", "nvidia/Llama-3.1-8B"))
        ]
    counted = [r for r in fit.count_rows(rows) if r.reason is None]
    cells = profiles()["profiles"]["typical"]["families"]
    stats = fit.errors([(r, *fit.predict(fit.cell_for(cells, r), r)) for r in counted])
    recorded = profiles()["profiles"]["typical"]["in_sample_by_model"][LLAMA]
    assert (stats["rows"], stats["tpot_median_error"], stats["ttft_median_error"]) == (
        recorded["rows"],
        recorded["tpot_median_error"],
        recorded["ttft_median_error"],
    )


def test_the_fit_counts_each_row_at_the_expert_parallelism_the_engine_ran():
    # aiconfigurator's rows state moe_ep_size: an MoE model's routed experts over EP ranks (E/EP whole experts a GPU,
    # 256/8 = 32 for DeepSeek-R1 at EP 8), the MoE layers' all-to-all in place of their all-reduce; the fit adds that
    # all-to-all to the step as `speed` does. A dense model's EP field changes nothing.
    from ffncalc import load_config
    from ffncalc.serving_layout import ServingLayout

    fit = fit_tool()
    deepseek = load_config("deepseek-ai/DeepSeek-R1").spec
    llama = load_config(LLAMA).spec
    assert fit.serving_layout(deepseek, {"tp_size": "8", "moe_ep_size": "8"}) == ServingLayout(
        tensor_parallel=8, expert_parallel=8
    )
    assert fit.serving_layout(deepseek, {"tp_size": "8", "moe_ep_size": "1"}) == ServingLayout(tensor_parallel=8)
    assert fit.serving_layout(llama, {"tp_size": "2", "moe_ep_size": "2"}) == ServingLayout(tensor_parallel=2)
    with DATA.open(newline="") as handle:
        row = next(
            r
            for r in csv.DictReader(handle)
            if r["model_path"] == "deepseek-ai/DeepSeek-R1" and r["moe_ep_size"] == "8" and r["tp_size"] == "8"
        )
    (counted,) = fit.count_rows([row])
    assert counted.all_to_all[0] > 0 and counted.all_to_all[1] > 0
    assert counted.decode["experts"] <= 58 * 256 / 8  # 58 MoE layers, at most every one of a GPU's 32 experts


def test_held_out_errors_as_stated_in_the_readme():
    # Typical profile, tools/fit_expected.py: leave one model out and leave one accelerator out (TPOT, TTFT); and
    # the out-of-source published set (median error, share within ±35 %). Targets: 15 %, 20 %; 20 %, 80 %.
    typical = profiles()["profiles"]["typical"]
    lomo, loao = typical["held_out"], typical["held_out_by_accelerator"]
    published = profiles()["published"]["all"]
    assert [round(lomo["tpot_median_error"], 3), round(lomo["ttft_median_error"], 3)] == [0.151, 0.350]
    assert [round(loao["tpot_median_error"], 3), round(loao["ttft_median_error"], 3)] == [0.184, 0.370]
    assert [round(published["all_median_error"], 3), round(published["all_within_35"], 3)] == [0.141, 0.764]


def test_a_hybrid_layer_with_a_mixer_and_an_ffn_has_two_sublayers_and_two_all_reduces():
    # Qwen3.5-397B-A17B: 60 layers, every 4th full attention, the other 45 a Gated DeltaNet mixer; each followed by
    # its MoE. Each layer launches a token-mixing sublayer and an FFN one, and under tensor parallelism makes an
    # all-reduce after each (aiconfigurator's qwen35.py: context_gdn_ar after the mixer, then the MoE's): 120, not
    # the 75 counted when a mixer and an FFN shared one. Under EP 8 the MoE layers' all-reduces become all-to-alls:
    # 60 left (15 attention, 45 mixers).
    from ffncalc import load_config
    from ffncalc.roofline import sublayer_count
    from ffncalc.serving_layout import ServingLayout, allreduce_bytes

    spec = load_config("Qwen/Qwen3.5-397B-A17B").spec
    assert sublayer_count(spec) == 120
    one = 2 * 7 * 4 * spec.hidden_size * 2 // 8  # one all-reduce of 4 tokens over 8 GPUs, per GPU per direction
    assert allreduce_bytes(spec, 4, ServingLayout(tensor_parallel=8)) == 120 * one
    assert allreduce_bytes(spec, 4, ServingLayout(tensor_parallel=8, expert_parallel=8)) == 60 * one


# --- the ceiling against the measurements ----------------------------------------------------------------------


def test_no_measurement_beats_the_ceiling_but_vllm_rows_whose_concurrency_exceeded_the_running_batch():
    # For each configuration, the row with the most KV in flight (concurrency × mean context), where a measurement
    # comes closest to the ceiling, of those whose batch fits the GPUs (else the engine ran fewer). The exceptions are gpt-oss-120b on H100 under vLLM at concurrency 512: faster
    # than any step of 512 sequences can be, so vLLM ran fewer at once (the fit leaves them out for that reason).
    with DATA.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    heaviest: dict[tuple, dict] = {}
    for row in rows:
        key = (row["model_path"], row["system"], row["backend"], row["tp_size"], row["gemm_quant_mode"])
        load = int(row["batch_size"]) * (int(row["isl"]) + int(row["osl"]) // 2)
        if key not in heaviest or load > heaviest[key][0]:
            heaviest[key] = (load, row)
    fit = fit_tool()
    counted = [r for r in fit.count_rows([row for _, row in heaviest.values()]) if r.reason != fit.DOES_NOT_FIT]
    faster = {(r.row["model_path"], r.system, r.engine, r.batch) for r in counted if r.tpot < r.tpot_ceiling}
    assert faster <= {("openai/gpt-oss-120b", "h100_sxm", "vllm", 512)}
    assert all(r.ttft >= r.ttft_ceiling for r in counted)


# --- the command ---------------------------------------------------------------------------------------------


def test_json_puts_expected_figures_beside_the_ceilings_and_names_the_profile():
    run = run_main("speed", LLAMA, "--engine", "vllm", "--json")
    assert run.exit_code == 0, run.stderr
    document = run.json()["reports"][0]
    decode, prefill = document["decode"], document["prefill"]
    assert decode["expected_seconds_per_step"] > decode["seconds_per_step"]
    assert decode["expected_tokens_per_second"] == pytest.approx(1 / decode["expected_seconds_per_step"])
    low, high = decode["expected_range"]
    assert low < decode["expected_seconds_per_step"] < high
    assert prefill["expected_seconds"] > prefill["seconds"] and len(prefill["expected_range"]) == 2
    assert document["engine_profile"]["name"] == "vllm" and document["engine_profile"]["chip_family"] == "hopper"
    assert any(line.startswith("expected (≈)") for line in document["conventions"])
    assert json.dumps(document["engine_profile"]["engine_versions"]).count("vllm") >= 1


def test_an_unknown_engine_is_a_one_line_error_naming_the_profiles():
    run = run_main("speed", LLAMA, "--engine", "tgi")
    assert run.exit_code == 2
    assert run.stderr == (
        "Error: --engine 'tgi' has no profile; use one of vllm, sglang, trtllm, llama.cpp "
        "(or none, or leave it out, for the typical profile)\n"
    )


# --- a request end to end (--output) ----------------------------------------------------------------------------


def test_a_request_is_its_prefill_then_output_minus_one_steps_over_the_growing_cache():
    # Llama-3.1-8B, BF16, batch 1, a 1,024-token prompt and 256 tokens out on H100: the prefill gives the first
    # token, then 255 decode steps read caches of 1,024 … 1,278 tokens. A step at cache n moves 16,085,051,904 bytes
    # at n = 8,192 (tests/test_speed.py) less 131,072 bytes for each token fewer, all memory-bound: linear in n, so
    # the 255 steps take 255 × the step at the mean cache, 1,151.
    def step_bytes(n):
        return 16_085_051_904 - (8192 - n) * 131_072

    report = one(speed(LLAMA, "h100", prompt=1024, batches="1", output=256))
    request = report.request
    assert (request.output, request.first_context, request.last_context) == (256, 1024, 1278)
    assert request.seconds == pytest.approx(report.prefill.seconds + 255 * step_bytes(1151) / H100_BANDWIDTH, rel=1e-12)
    assert request.tokens_per_second == pytest.approx(256 / request.seconds, rel=1e-12)


def test_a_requests_expected_time_is_the_expected_prefill_and_expected_steps():
    kv_at = lambda n: n * 131_072 + 131_072  # noqa: E731 — the cache read and the new token's entry
    others = 16_085_051_904 - kv_at(8192)
    c = choose(None, "H100 SXM").decode
    step = c["weights_memory"] * others / H100_BANDWIDTH + c["kv_memory"] * kv_at(1151) / H100_BANDWIDTH
    step += c["sublayers"] * 64 + c["sequences"] * 1 + c["fixed"]
    report = one(speed(LLAMA, "h100", prompt=1024, batches="1", output=256))
    expected = report.prefill.expected_seconds + 255 * step
    assert report.request.expected_seconds == pytest.approx(expected, rel=1e-12)
    assert report.request.expected_tokens_per_second == pytest.approx(256 / expected, rel=1e-12)


def test_without_output_there_is_no_request_and_a_bad_output_is_a_one_line_error():
    assert run_main("speed", LLAMA, "--json").json()["reports"][0]["request"] is None
    run = run_main("speed", LLAMA, "--output", "0")
    assert run.exit_code == 2
    assert run.stderr == "Error: --output must be a whole number of tokens from 1 to 16,777,216, e.g. 1024\n"


# --- a measurement beside them (--measured-tpot, --measured-ttft) -------------------------------------------------


def test_a_measured_tpot_gets_the_share_of_the_ceiling_it_reaches():
    # Llama-3.1-8B, batch 1 at 8,192 on H100: the ceiling moves 16,085,051,904 bytes at 3.35 TB/s (test_speed.py).
    # A measured 6.9 ms reaches 4.80 ms ÷ 6.9 ms of the ceiling's speed: its model bandwidth utilisation.
    ceiling = 16_085_051_904 / H100_BANDWIDTH
    decode = one(speed(LLAMA, "h100", context="8k", batches="1", measured_tpot=0.0069)).decode
    assert decode.measured.measured_seconds == 0.0069
    assert decode.measured.attainment == pytest.approx(ceiling / 0.0069, rel=1e-12)
    assert decode.measured.expected_over_measured == pytest.approx(decode.expected_seconds_per_step / 0.0069)


def test_the_modelled_gap_is_each_terms_excess_over_the_ceiling_and_names_the_largest():
    # What each term adds above the roofline: (factor − 1) × its roofline seconds, or the fixed costs themselves.
    kv = 8192 * 131_072 + 131_072
    others = 16_085_051_904 - kv
    c = choose(None, "H100 SXM").decode
    gaps = {
        "weights_memory": (c["weights_memory"] - 1) * others / H100_BANDWIDTH,
        "kv_memory": (c["kv_memory"] - 1) * kv / H100_BANDWIDTH,
        "sublayers": c["sublayers"] * 64,
        "sequences": c["sequences"] * 1,
        "fixed": c["fixed"],
    }
    measured = one(speed(LLAMA, "h100", context="8k", batches="1", measured_tpot=0.0069)).decode.measured
    positive = {name: value for name, value in gaps.items() if value > 0}
    assert measured.gap_seconds == pytest.approx(positive, rel=1e-12)
    labels = {"weights_memory": "weight reads below peak bandwidth", "kv_memory": "KV-cache reads below peak bandwidth",
              "sublayers": "fixed cost per sublayer (launches, small ops)", "fixed": "fixed cost per step",
              "sequences": "fixed cost per sequence per step"}  # fmt: skip
    assert measured.largest_gap == labels[max(positive, key=positive.get)]


# --- the out-of-source set: published measurements the fit never reads --------------------------------------------


def published_tool():
    sys.path.insert(0, str(ROOT / "tools"))
    import published_errors

    return published_errors


def test_the_fit_reads_only_aiconfigurator_rows_so_the_published_set_is_out_of_source():
    assert fit_tool().DATA.name == "aiconfigurator_silicon_sample.csv"
    assert "published_serving" not in (ROOT / "tools" / "fit_expected.py").read_text().split("def main")[0]


def test_published_errors_stated_in_the_profiles_are_what_the_shipped_coefficients_give():
    # Every row of data/measurements/published_serving.csv predicted as `speed` answers it (typical profile), its
    # error |expected − measured| ÷ measured on times; the stated medians must be recomputed exactly.
    tool = published_tool()
    stated = profiles()["published"]
    assert tool.stated() == stated
    assert stated["rows"] == 72


def test_published_measurements_are_converted_to_times_as_published():
    # gpt-fast's 104.9 tokens/s at batch 1 is a 9.53 ms step; llama.cpp's pp512 of 11,263 tokens/s is a 512-token
    # prompt in 45.5 ms; TensorRT-LLM's 1,486 tokens/s per GPU over TP 4 is 5,944 tokens/s, 168 µs a token.
    tool = published_tool()
    rows = {row["id"]: row for row in tool.rows()}
    assert tool.measured_seconds(rows["p001"]) == pytest.approx(1 / 104.9)
    assert tool.measured_seconds(rows["p048"]) == pytest.approx(512 / 11263)
    assert tool.measured_seconds(rows["p069"]) == pytest.approx(1 / (1486 * 4))


def test_no_published_measurement_beats_its_ceiling():
    # The ceiling is what no run can beat: every row of published_serving.csv, recomputed by the tool, is at or
    # above ffncalc's roofline time (llama.cpp's Q4_0 prefill on GeForce cards included: integer weights take the
    # chip's INT8 peak).
    results = published_tool().evaluate()
    assert [row["id"] for row, measured, ceiling, _ in results if measured < ceiling] == []
