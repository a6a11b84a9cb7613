"""Expected time beside the roofline ceiling: ffncalc's exact per-operator FLOPs and bytes × fitted coefficients.

The roofline (ffncalc.roofline) is a CEILING: each operator at max(FLOPs ÷ peak, bytes ÷ bandwidth), nothing else.
Real serving engines reach a third to a half of it, and the distance is in what a roofline leaves out, not in the
counts. The EXPECTED time puts those terms back, each with one fitted coefficient:

    step = a · Σ FLOPs/peak             (operators bound by compute at the peak roofline: matmuls, and attention
                                         scores in a prefill)
         + b_w · Σ bytes/bandwidth      (operators bound by memory other than decode attention: weights,
                                         activations, state; in a prefill also attention bound by memory)
         + b_kv · bytes/bandwidth       (decode only: attention scores bound by memory, reading the KV cache)
         + c_sub · sublayers            (fixed cost per attention or FFN/mixer sublayer: kernel launches, small ops)
         + c_ar · all-reduces           (latency of each tensor-parallel all-reduce, one per sublayer)
         + b_link · all-reduce bytes/interconnect   (the bus bandwidth an all-reduce really reaches)
         + c_seq · sequences            (decode only: per sequence in the batch each step: sampling, bookkeeping)
         + c_exp · expert runs          (decode only: per routed expert a step runs on a GPU, over the MoE layers:
                                         roofline.expert_runs, E/EP × 1 − (1 − k/E)^B a layer)
         + c_fixed                      (per decode step and per prefill: both fitted at 0 by construction, below)

Why this form. Each term is one of the gaps issue 37 names, so each coefficient reads as a physical figure (a = 2
means 50 % of peak FLOP/s; c_sub = 20e-6 means 20 µs per sublayer). A term that is nearly always zero in the data
gets no coefficient of its own: compute-bound attention shares the matmuls' (it is rare in decode), memory-bound
attention in a prefill shares the weights' (it is a sliver of a short prompt's time), else a fit makes such a
column absorb whatever the others leave (an earlier form fitted 4,388 × the KV reads of a prefill). The per-sequence
cost separates what grows with the batch from the per-step cost, so a lone stream does not pay a loaded server's.
The per-expert cost is the grouped GEMM's: each routed expert a step touches is its own slice of work (tiles,
scales, a pass over its weights for a few tokens), so many small experts cost more than their bytes say (Qwen3.5's
512, DeepSeek's 256 against gpt-oss's 128). Fitted on each engine's rows alone it comes out alike, 0.25–0.36 µs an
expert (0.5–0.7 on Hopper, 0.07–0.15 on Blackwell), which is why it is a term and not a model's quirk; held out a
model at a time, adding it took the typical profile's TPOT error from 22 % to 18 %. In a prefill every expert sees many
tokens and the cost vanishes beside its GEMM: fitted on TTFT it came out 7.5 µs, 19 × the decode figure, the
serving stack's per-request cost that the MoE-heavy rows carry, so the prefill has no such term. Which side bounds
an operator is decided at the peak roofline, as the ceiling reports it; that makes the time linear in the
coefficients, so the fit is a closed-form non-negative least squares on relative error (tools/fit_expected.py),
not an optimiser's search; every roofline factor is held at 1 or more and every fixed cost at 0 or more, so the
expected figure is never below the ceiling. Decode and prefill have their own coefficients: a GEMV reading weights
and a GEMM of a long prompt are different kernels.

A decode step's fixed cost is per sublayer only: its per-step constant is held at 0 (tools/fit_expected.py,
fit_decode). The fitted models have 60 to 94 layers, so a constant per step and a cost per sublayer could not be
told apart, and the fit put it in the constant; held out, the 36-layer gpt-oss-120b then came out 2.5 × slower than
measured. Dropped, the typical profile's TPOT held out a model at a time went from 16.1 % to 15.0 %.

A prefill's fixed cost per request is fitted at 0, by construction: the measurements (aiperf through an engine's
HTTP server) carry a constant per request that no term of a prompt can tell from the serving stack's own (front
end, tokenising, streaming, the scheduler's turn), and it differs by stack, not by model: the fit gives each engine
its own (tools/fit_expected.py, request_cost in expected_profiles.json) and the expected prefill is the engine's
kernels and launches alone, as engines' own lone-prompt latencies measure it.

Expert parallelism. The fit counts each measurement at the parallelism the engine ran (aiconfigurator's rows state
moe_ep_size: 274 of them split the routed experts over 2 to 8 GPUs of one node): E/EP experts a GPU (so E/EP expert
runs, not E slices), the MoE layers' all-to-all in place of their all-reduce, added to the step unscaled as this
module adds it. Counted as tensor-parallel before, those rows carried EP × the expert runs they ran; held out a model
at a time the typical profile's TPOT went from 17.5 % to 17.2 % and its TTFT from 35.8 % to 35.5 % (a chip at a time:
22.3 → 21.7 %, 39.2 → 36.9 %).

Sublayers. A hybrid layer with a mixer in attention's place and an FFN after it (Qwen3.5's 45 Gated DeltaNet layers)
launches both and, under tensor parallelism, all-reduces after both (aiconfigurator @ 095f58a51, aic-core/src/
aiconfigurator_core/sdk/models/qwen35.py: generation_gdn_ar, then the FFN's ffn_ar); roofline.sublayer_count and
serving_layout.allreduce_bytes had counted them one. Counted two, Qwen3.5's TPOT held out went from 1.3 × slower
than expected to 1.1–1.2 × on Blackwell (its 30 Hopper rows stay 1.6 ×), and the typical profile's TPOT from 17.2 % to 16.1 % (a chip at a time
21.7 → 17.9 %); TTFT 35.5 → 35.7 %.

Profiles. One set of coefficients per engine profile (vllm, sglang, trtllm, and "typical", fitted over all three)
and per chip family (hopper, blackwell), with an "all" family fitted over every chip for chips without data of
their own; CHOICE says which cell answered and why. The range is the 10th–90th percentile of measured ÷ predicted
on held-out rows (leave one model out) of that profile. The coefficients, their data and their held-out errors
are in expected_profiles.json, written by tools/fit_expected.py from data/measurements/; nothing here is fitted.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from pathlib import Path

from .results import Result
from .roofline import Attainment, ExpectedProfile, GpuFigures, Phase, Request, SpeedReport

PROFILES_FILE = Path(__file__).with_name("expected_profiles.json")

ENGINES = ("vllm", "sglang", "trtllm", "llama.cpp")  # what --engine names on `speed`
TYPICAL = "typical"  # the profile fitted over every engine's rows
ALL_CHIPS = "all"  # the chip family fitted over every chip's rows

# Chip families by the accelerator's table name: kernels, launch costs and NVLink generation are shared within one.
FAMILY_OF_ACCELERATOR = {
    "H100 SXM": "hopper",
    "H100 PCIe": "hopper",
    "H800 SXM": "hopper",
    "H200 SXM": "hopper",
    "B200 HGX": "blackwell",
    "GB200": "blackwell",
    "B300 HGX": "blackwell",
}

FEATURES = (
    "matmul_compute",
    "weights_memory",
    "kv_memory",
    "sublayers",
    "allreduces",
    "allreduce_transfer",
    "sequences",
    "experts",
    "fixed",
)
TERM_LABELS = {
    "matmul_compute": "matmuls and attention below peak FLOP/s",
    "weights_memory": "weight reads below peak bandwidth",
    "kv_memory": "KV-cache reads below peak bandwidth",
    "sublayers": "fixed cost per sublayer (launches, small ops)",
    "allreduces": "all-reduce latency",
    "allreduce_transfer": "all-reduce bus bandwidth below the link's",
    "sequences": "fixed cost per sequence per step",
    "experts": "fixed cost per routed expert run (grouped GEMM)",
    "fixed": "fixed cost per step",
}
# The terms that are roofline seconds: each coefficient is 1 ÷ the share of peak reached, fitted at least 1.
ROOFLINE_FACTORS = ("matmul_compute", "weights_memory", "kv_memory", "allreduce_transfer")


class Choice(Result):
    """The coefficients chosen for one engine on one accelerator, and the profile that states them."""

    decode: dict[str, float]
    prefill: dict[str, float]
    decode_range: tuple[float, float]  # measured ÷ predicted, 10th and 90th percentile held out
    prefill_range: tuple[float, float]
    profile: ExpectedProfile


@functools.cache
def profiles() -> dict:
    """The fitted profiles as tools/fit_expected.py wrote them (read once, when an expected figure is first asked)."""
    return json.loads(PROFILES_FILE.read_text())


def phase_features(
    phase: Phase, gpu: GpuFigures, sublayers: int, tensor_parallel: int, sequences: int = 0
) -> dict[str, float]:
    """The phase's terms before any coefficient: roofline seconds by kind at the chip's PEAK (not `compute_efficiency`
    or `bandwidth_efficiency`, which only scale the ceiling), and the counts the fixed costs multiply. SEQUENCES: the
    batch of a decode step (0 for a prefill: one prompt, its cost per request is the fixed term); a decode step's
    routed experts run (the phase's expert_runs) are a count too, a prefill's are not (see the module docstring)."""
    peak, bandwidth = gpu.peak_flops, gpu.bandwidth
    terms = dict.fromkeys(FEATURES, 0.0)
    for operator in phase.components:
        compute, memory = operator.flops / peak, operator.bytes / bandwidth
        if compute > memory:
            terms["matmul_compute"] += compute
        elif operator.name == "attention_scores" and sequences:
            terms["kv_memory"] += memory
        else:
            terms["weights_memory"] += memory
    terms["sublayers"] = float(sublayers)
    terms["sequences"] = float(sequences)
    terms["experts"] = phase.expert_runs if sequences else 0.0
    if tensor_parallel > 1 and phase.allreduce_bytes:
        terms["allreduces"] = float(sublayers)  # one all-reduce after each sublayer (ffncalc.roofline)
        terms["allreduce_transfer"] = phase.allreduce_seconds  # bytes over the link the ceiling times it on
    terms["fixed"] = 1.0
    return terms


def expected_seconds(terms: dict[str, float], coefficients: dict[str, float]) -> float:
    """Σ coefficient × term: the expected time of one decode step or one prefill."""
    return sum(coefficients[name] * terms[name] for name in FEATURES)


def kernel_seconds(terms: dict[str, float], coefficients: dict[str, float]) -> float:
    """The expected time without the per-step (or per-request) fixed cost."""
    return expected_seconds(terms, coefficients) - coefficients["fixed"] * terms["fixed"]


def family_of(gpu_name: str) -> str | None:
    """The chip family of an accelerator in ffncalc's table, or None (another chip: the "all" family answers)."""
    return FAMILY_OF_ACCELERATOR.get(gpu_name)


def choose(engine: str | None, gpu_name: str) -> Choice:
    """The coefficients for ENGINE (None: the typical profile) on GPU_NAME, falling back, and saying so, to the
    typical profile when the engine has no fit data and to the "all" family when the chip's family has none."""
    data = profiles()
    notes = []
    name = engine or TYPICAL
    if name not in data["profiles"]:
        notes.append(f"no fit data for {name}: the typical profile")
        name = TYPICAL
    profile = data["profiles"][name]
    family = family_of(gpu_name)
    if family is None or family not in profile["families"]:
        notes.append(f"no fit data for {gpu_name}'s chip family: coefficients fitted over every chip")
        family = ALL_CHIPS
    cell = profile["families"][family]
    return Choice(
        decode=cell["decode"],
        prefill=cell["prefill"],
        decode_range=(profile["held_out"]["tpot_ratio_p10"], profile["held_out"]["tpot_ratio_p90"]),
        prefill_range=(profile["held_out"]["ttft_ratio_p10"], profile["held_out"]["ttft_ratio_p90"]),
        profile=ExpectedProfile(
            name=name,
            engine_versions=profile["engine_versions"],
            chip_family=family,
            fitted_on=data["data"]["description"],
            rows=cell["rows"],
            held_out_tpot_median_error=profile["held_out"]["tpot_median_error"],
            held_out_ttft_median_error=profile["held_out"]["ttft_median_error"],
            note="; ".join(notes),
        ),
    )


def conventions(choice: Choice) -> list[str]:
    """What the expected figures are, for the JSON `conventions` and the tables' notes."""
    profile = choice.profile
    data = profiles()["data"]
    fallback = f" ({profile.note})" if profile.note else ""
    return [
        f"expected (≈): the ceiling's exact FLOPs and bytes by operator × coefficients fitted on measurements, plus "
        f"fixed costs per sublayer, per step and per routed expert (decode) and the all-reduces' latency: profile "
        f"{profile.name}, {profile.chip_family} chips{fallback}; fitted on {data['rows_fitted']:,} rows of "
        f"{profile.fitted_on} "
        f"({data['fitted']}, tools/fit_expected.py); range: 10th–90th percentile of measured ÷ expected held out",
        f"expected error on models left out of the fit: median {profile.held_out_tpot_median_error:.0%} for TPOT, "
        f"{profile.held_out_ttft_median_error:.0%} for TTFT (measured under load); a measurement is neither: cite it",
        "expected prefill: one prompt alone (no queue, no serving stack's cost per request: front end, tokenising, "
        "streaming); expected decode: the step alone (no prefill chunks mixed in)",
        "expert parallelism's all-to-all: added to the expected time at the ceiling's link time (no fitted term: the "
        "fit adds it the same way to its single-node expert-parallel rows)",
    ]


def with_expected(report: SpeedReport, engine: str | None, sublayers: int) -> SpeedReport:
    """REPORT with the expected decode step and prefill beside its ceilings, and the profile that gave them. The
    range is the expected figure × the held-out percentiles, never below the ceiling (no run beats it)."""
    from .values import replace

    choice = choose(engine, report.gpu.name)
    gpus = report.tensor_parallel
    step = expected_seconds(phase_features(report.decode, report.gpu, sublayers, gpus, report.batch), choice.decode)
    first = expected_seconds(phase_features(report.prefill, report.gpu, sublayers, gpus), choice.prefill)
    # Expert parallelism's all-to-all (serving_layout) is no term of the fit: it is added at the ceiling's own link
    # time, as the fit adds it to its expert-parallel rows, so the expected figure never leaves it out.
    step += report.decode.all_to_all_seconds
    first += report.prefill.all_to_all_seconds
    decode = replace(
        report.decode,
        expected_seconds_per_step=step,
        expected_tokens_per_second=report.batch / step,
        expected_range=[max(report.decode.seconds, step * choice.decode_range[0]), step * choice.decode_range[1]],
    )
    prefill = replace(
        report.prefill,
        expected_seconds=first,
        expected_range=[max(report.prefill.seconds, first * choice.prefill_range[0]), first * choice.prefill_range[1]],
    )
    return replace(
        report,
        decode=decode,
        prefill=prefill,
        engine_profile=choice.profile,
        conventions=[*report.conventions, *conventions(choice)],
    )


def with_request(report: SpeedReport, output: int, at_context: Callable[[int], SpeedReport]) -> SpeedReport:
    """REPORT with one request of OUTPUT tokens end to end: its prefill (the first token), then OUTPUT − 1 decode
    steps reading caches of prompt … prompt + OUTPUT − 2 tokens. Every operator's bytes and FLOPs grow linearly with
    the cache (until a sliding window fills), so the steps' sum is their count × the step at the mean cache: the mean
    of the two steps AT_CONTEXT gives at the integers either side of it (exact while no operator changes bound)."""
    from .values import replace

    steps = output - 1
    first, last = report.prompt, report.prompt + max(steps - 1, 0)
    below, above = (at_context(context) for context in ((first + last) // 2, (first + last + 1) // 2))
    ceiling, expected, low, high = ((one + other) / 2 for one, other in zip(_step_figures(below), _step_figures(above)))
    prefill = _prefill_figures(report)
    seconds = prefill[0] + steps * ceiling
    expected, low, high = (first_token + steps * step for first_token, step in zip(prefill[1:], (expected, low, high)))
    generated = report.batch * output
    request = Request(
        output=output,
        first_context=first,
        last_context=last,
        seconds=seconds,
        tokens_per_second=generated / seconds,
        expected_seconds=expected,
        expected_tokens_per_second=generated / expected,
        expected_range=[low, high],
    )
    return replace(report, request=request, conventions=[*report.conventions, REQUEST_CONVENTION])


def _step_figures(report: SpeedReport) -> tuple[float, float, float, float]:
    """A decode step's ceiling, expected, low and high seconds (with_expected has run)."""
    decode = report.decode
    assert decode.expected_seconds_per_step is not None and decode.expected_range is not None
    return decode.seconds_per_step, decode.expected_seconds_per_step, *decode.expected_range  # type: ignore[return-value]


def _prefill_figures(report: SpeedReport) -> tuple[float, float, float, float]:
    """The prefill's ceiling, expected, low and high seconds (with_expected has run)."""
    prefill = report.prefill
    assert prefill.expected_seconds is not None and prefill.expected_range is not None
    return prefill.seconds, prefill.expected_seconds, *prefill.expected_range  # type: ignore[return-value]


REQUEST_CONVENTION = (
    "request (`output` N): the prompt's prefill (the first token), then N − 1 decode steps at `batch` over caches of "
    "`prompt` to `prompt` + N − 2 tokens; tokens/s = batch × N ÷ that time; the batch's other prompts' prefills "
    "are not counted (requests arriving apart, as in continuous batching)"
)


def gap_terms(terms: dict[str, float], coefficients: dict[str, float]) -> dict[str, float]:
    """What each term adds above the ceiling, in seconds: (coefficient − 1) × a roofline term, coefficient × a
    count; they sum to the expected time less the roofline at peak."""
    return {name: (coefficients[name] - (1.0 if name in ROOFLINE_FACTORS else 0.0)) * terms[name] for name in FEATURES}


def attainment(measured: float, ceiling: float, expected: float, gaps: dict[str, float], prefill: bool) -> Attainment:
    """A measured time beside the ceiling and the expected figure, and the modelled term that explains most of
    the distance (a prefill's fixed cost is the request's)."""
    largest = max(gaps, key=lambda name: gaps[name])
    label = "fixed cost per request" if prefill and largest == "fixed" else TERM_LABELS[largest]
    return Attainment(
        measured_seconds=measured,
        attainment=ceiling / measured,
        expected_over_measured=expected / measured,
        largest_gap=label,
        gap_seconds={name: value for name, value in gaps.items() if value > 0},
    )


def with_measured(
    report: SpeedReport, sublayers: int, engine: str | None, tpot: float | None, ttft: float | None
) -> SpeedReport:
    """REPORT with a measured TPOT and/or TTFT set beside its ceilings and expected figures."""
    from .values import replace

    choice = choose(engine, report.gpu.name)
    gpus = report.tensor_parallel
    decode, prefill = report.decode, report.prefill
    if tpot is not None:
        gaps = gap_terms(phase_features(decode, report.gpu, sublayers, gpus, report.batch), choice.decode)
        assert decode.expected_seconds_per_step is not None
        decode = replace(
            decode, measured=attainment(tpot, decode.seconds_per_step, decode.expected_seconds_per_step, gaps, False)
        )
    if ttft is not None:
        gaps = gap_terms(phase_features(prefill, report.gpu, sublayers, gpus), choice.prefill)
        assert prefill.expected_seconds is not None
        prefill = replace(prefill, measured=attainment(ttft, prefill.seconds, prefill.expected_seconds, gaps, True))
    return replace(report, decode=decode, prefill=prefill)


COST_CONVENTION = (
    "cost and energy (expected-based): at the EXPECTED throughput, never the ceiling's; the GPUs one replica of the "
    "layout holds (tensor × pipeline parallel) are charged for the whole time; per million input tokens = `price` × "
    "GPUs × expected TTFT ÷ prompt × 10⁶ ÷ 3,600 (one prompt alone: an engine batching prompts does better), per "
    "million output tokens = `price` × GPUs ÷ expected decode tokens/s × 10⁶ ÷ 3,600; energy per token an upper "
    "bound: board power (TDP) × GPUs × the same time per token, as if every GPU drew its full power throughout; "
    "null without `price`, without a board power in the accelerator table, or where it does not fit"
)


def with_cost_and_energy(report: SpeedReport, watts: int | None, source: str, price: float | None) -> SpeedReport:
    """REPORT with what its tokens cost at PRICE per GPU-hour and the energy they take at WATTS a GPU (the board's
    full power: an upper bound), both at the expected throughput; None where that cannot be computed."""
    from .roofline import CostAndEnergy
    from .values import replace

    layout = report.layout
    gpus = report.tensor_parallel * (layout.pipeline_parallel if layout is not None else 1)
    decode_rate, prefill_seconds = report.decode.expected_tokens_per_second, report.prefill.expected_seconds
    # Seconds of the replica's GPUs per token: decode's at its expected tokens/s, prefill's over the prompt.
    per_output = gpus / decode_rate if report.fits and decode_rate else None
    per_input = gpus * prefill_seconds / report.prompt if report.fits and prefill_seconds else None

    def times(scale: float | None, seconds: float | None) -> float | None:
        return None if scale is None or seconds is None else scale * seconds

    per_gpu_second = None if price is None else price * 1_000_000 / 3600  # a million tokens' cost per GPU-second each
    found = CostAndEnergy(
        gpus=gpus,
        price_per_gpu_hour=price,
        board_power_watts=watts,
        board_power_source=source,
        input_cost_per_million_tokens=times(per_gpu_second, per_input),
        output_cost_per_million_tokens=times(per_gpu_second, per_output),
        input_joules_per_token_at_most=times(watts, per_input),
        output_joules_per_token_at_most=times(watts, per_output),
    )
    return replace(report, cost_and_energy=found, conventions=[*report.conventions, COST_CONVENTION])
