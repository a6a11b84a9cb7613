"""Fit the expected-time coefficients of ffncalc/expected.py on measured TTFT and TPOT, and say how far off they are.

    python tools/fit_expected.py            # fit, print held-out errors, write ffncalc/expected_profiles.json
    python tools/fit_expected.py --check    # fit and print, write nothing

Data: data/measurements/aiconfigurator_silicon_sample.csv (see its README). For every row ffncalc computes the
exact FLOPs and bytes by operator of the decode step and of the prefill, through the library (roofline.estimate_speed
on the row's model, accelerator, tensor and expert parallelism and weight formats), and expected.phase_features turns them into
the terms the coefficients multiply. Standard library and ffncalc only.

How a row's measurement relates to the terms (aggregated serving at concurrency B, input I, output O tokens), on
aiconfigurator's own account of aggregated ("agg", in-flight batching) serving (ai-dynamo/aiconfigurator @
095f58a51c4c, aic-core/src/aiconfigurator_core/sdk/backends/base_backend.py, BaseBackend.run_agg and its hooks
_ttft_queuing_factor, _tpot_mix_steps, _mix_step_gen_tokens): with a context budget of one prompt a step, B of a
request's O steps are "mix" steps that also carry another request's prefill, and TPOT is the mean over mix and
generation-only steps; TTFT is the prefill times a queueing factor for requests that arrive together, a function of
the concurrency alone. Here:
- TPOT = decode step(B at context I + O/2, the mean over the generation)
         + κ_mix · (B / O) · prefill kernels(I): the engine runs the other requests' prefills inside the decode
           steps (chunked prefill), B/O prompts per step; κ_mix, fitted (≥ 0) as one more column, says what share
           of a lone prefill's kernel time that adds to the measured steps (a mix step reads the weights once for
           both: aiconfigurator's _mix_step_efficiency).
- TTFT = (1 + κ_queue · ρ ÷ (2 (1 − ρ))) · prefill(I) + ν_e · decode step(B)
         + ω_e · (B − 1)/2 · prefill roofline(I) + h_e: the request's prefill stretched by the wait behind the
           other requests' prefills in a steady stream (a single-server queue with prefills of one length, M/D/1,
           Pollaczek–Khinchine; ρ the share of the engine's time the prefills take, B/O prompts starting per decode
           step); the decode steps it waits
           through; the BURST: the benchmark holds B requests in flight (aiperf --concurrency B, fixed lengths,
           ignore_eos), so they start together and, their lengths alike, finish and are replaced together, and a
           prompt waits on average behind half of the other B − 1 prompts' prefills, each at ω × its roofline time.
           This is aiconfigurator's "requests that all arrive simultaneously", and it depends on the concurrency, not
           on O: in the data, TTFT at a fixed concurrency does not change with O (median ratio 0.96–1.01 from
           O = 128 to 8,192 in one configuration), which a steady stream's ρ ∝ B/O cannot give. And h, the serving
           stack's cost per request (HTTP front end, tokenising, streaming, the scheduler's turn).
  ν, ω and h are each ENGINE's (e: a column per engine, zero on the other engines' rows): they describe how an
  engine's scheduler and server turn a lone prompt into a loaded TTFT, and they differ by engine far more than by
  model (at 4 concurrent requests a 1,024-token prompt's first token takes 40–120 ms under vLLM and 150–600 ms under
  SGLang on the same GPUs). Fitted over all three (typical profile, all chips): ω 1.17 for SGLang (a new prefill
  batch runs before any decode, so a burst stays one), 0.36 for TensorRT-LLM and 0.19 for vLLM (prefills share
  steps with the running decodes under a token budget, so arrivals spread); h 216, 37 and 16 ms. The prefill's own
  fixed cost is held at 0 (its column dropped): a constant per request cannot be told from h on these rows, and
  engines' own lone-prompt latencies (TensorRT-LLM's 7 ms for 128 tokens of Llama-2-7B on H100) show no such cost.
  κ_queue is chosen on a grid; every other coefficient is set by weighted non-negative least squares on relative
  error (closed form: Lawson–Hanson on the normal equations). `speed` reports the decode step and a lone prompt's
  prefill (B = 1: no burst, no queue): κ, ν, ω and h map a measurement under load to them and are not part of the
  expected figure.
History, typical profile held out a model at a time (TPOT, TTFT): κ_mix on a grid of 0, ½, 1 and one ν for every
engine, 20.9 % and 47.9 %; with the burst and κ_mix fitted, 22.3 % and 45.7 %; with the decode step's cost per
routed expert (ffncalc/expected.py), 18.5 % and 44.8 %; with ν, ω, h by engine and no prefill fixed cost, 17.5 % and
35.8 %; with each row's expert parallelism counted as the engine ran it (serving_layout: E/EP experts a GPU, the
MoE layers' all-to-all in place of their all-reduce, added to the step as `speed` adds it), 17.2 % and 35.5 %; with a
hybrid layer's mixer and FFN counted as two sublayers and two all-reduces (roofline.sublayer_count), 16.1 % and
35.7 %. aiconfigurator's 1 + log2(B)/8 in place of the queue, tried earlier, held TTFT out at 51.6 %.

Held out: leave one model out (every row of a model predicted by a fit without it) and leave one accelerator out;
the median |predicted − measured| ÷ measured and the share within ±35 %, for TPOT and TTFT; and, as --engine
answers, every row by its own engine's profile fitted without its model ("engines").
"""

from __future__ import annotations

import argparse
import csv
import datetime
import hashlib
import json
import math
import os
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from derive_silicon_sample import ACCELERATOR_OF_SYSTEM, CONFIG_OF_CHECKPOINT

from ffncalc import load_config
from ffncalc.accelerators import accelerator
from ffncalc.api import stored_as
from ffncalc.expected import (
    ALL_CHIPS,
    FEATURES,
    ROOFLINE_FACTORS,
    TYPICAL,
    expected_seconds,
    family_of,
    kernel_seconds,
    phase_features,
)
from ffncalc.footprint import weight_layout
from ffncalc.roofline import estimate_speed, gpu_figures, sublayer_count
from ffncalc.serving_layout import ServingLayout, moe_shape
from ffncalc.spec import ModelSpec

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data" / "measurements" / "aiconfigurator_silicon_sample.csv"
OUTPUT = ROOT / "ffncalc" / "expected_profiles.json"
SOURCE = "aiconfigurator silicon_sample.csv @ 095f58a51c4c (Apache-2.0), aggregated-serving rows"

ENGINE_PROFILES = ("vllm", "sglang", "trtllm")
MIN_ROWS, MIN_MODELS = 40, 2  # a chip family's cell of a profile is fitted only with this much data
QUEUE_GRID = (0.0, 0.5, 1.0, 2.0, 4.0)
WITHIN = 0.35
LOW_CONCURRENCY_WEIGHT = os.environ.get("FIT_WEIGHTED") is not None  # off: see weight()
# A TPOT below the roofline ceiling at the stated concurrency means the engine decoded fewer sequences at once
# than the concurrency (a cap on running sequences, the rest queued): the batch the TPOT belongs to is unknown.
FASTER_THAN_CEILING = "TPOT faster than the ceiling at the concurrency (the engine ran a smaller batch)"
DOES_NOT_FIT = "weights + KV cache at the concurrency do not fit the GPUs (the engine ran a smaller batch)"


# --- the rows, as ffncalc counts them ------------------------------------------------------------------------


def weight_options(row: dict[str, str]) -> tuple[str | None, str | None, str]:
    """(--dtype, --kv-dtype, compute dtype) for the row's weight formats. NVFP4 is read as ffncalc's MXFP4 layout
    (4-bit values, a scale per 32: 4.25 bits a weight; NVFP4's FP8 scale per 16 is 4.5). The KV cache: FP8 where
    TensorRT-LLM runs a quantized checkpoint (its FP8 KV default), else the weights' 16-bit type ("auto" in vLLM
    and SGLang)."""
    gemm = row["gemm_quant_mode"]
    kv = "fp8" if row["backend"] == "trtllm" and gemm else None
    if gemm.startswith("fp8"):
        return "fp8", kv, "fp8"
    if gemm == "nvfp4":
        return "mxfp4", kv, "fp4"
    return None, kv, "bf16"


class Counted:
    """One row: the measurement and ffncalc's terms for it (decode step, prefill), or why it cannot be used."""

    def __init__(self, row: dict[str, str], features: tuple | None, ceilings: tuple[float, float], reason: str | None):
        self.row = row
        self.model = CONFIG_OF_CHECKPOINT[row["model_path"]]
        self.system = row["system"]
        self.engine = row["backend"]
        self.family = family_of(accelerator(ACCELERATOR_OF_SYSTEM[row["system"]]).name) or ALL_CHIPS
        self.batch, self.isl, self.osl = int(row["batch_size"]), int(row["isl"]), int(row["osl"])
        self.tpot = float(row["silicon_tpot_ms"]) / 1000
        self.ttft = float(row["silicon_ttft_ms"]) / 1000
        self.decode, self.prefill = features or ({}, {})
        self.tpot_ceiling, self.ttft_ceiling = ceilings
        self.reason = reason
        self.all_to_all = (0.0, 0.0)  # (decode step, prefill) seconds of the EP all-to-all, added as `speed` adds it


def count_rows(rows: list[dict[str, str]]) -> list[Counted]:
    loaded: dict[str, object] = {}
    stored: dict[tuple, tuple] = {}
    counted = []
    for row in rows:
        model = CONFIG_OF_CHECKPOINT[row["model_path"]]
        if model not in loaded:
            loaded[model] = load_config(model)
        spec = loaded[model]
        dtype, kv_dtype, compute_dtype = weight_options(row)
        key = (model, dtype, kv_dtype)
        if key not in stored:
            weights = stored_as(spec, dtype, kv_dtype)  # type: ignore[arg-type]
            scheme = weights.scheme
            stored[key] = (weights, weight_layout(spec.spec, weights.dtype, scheme))  # type: ignore[attr-defined]
        weights, layout = stored[key]
        gpu = gpu_figures(accelerator(ACCELERATOR_OF_SYSTEM[row["system"]]), compute_dtype, 1.0, 1.0)
        tp, batch, isl, osl = int(row["tp_size"]), int(row["batch_size"]), int(row["isl"]), int(row["osl"])
        report = estimate_speed(
            spec.spec,  # type: ignore[attr-defined]
            spec.info,  # type: ignore[attr-defined]
            stored=layout,
            weight_dtype=weights.dtype,
            quantization=weights.scheme.method if weights.scheme else None,
            gpu=gpu,
            batch=batch,
            context=isl + osl // 2,
            prompt=isl,
            kv_dtype=weights.cache_dtype,
            gpus=tp,
            layout=serving_layout(spec.spec, row),  # type: ignore[attr-defined]
        )
        sublayers = sublayer_count(spec.spec)  # type: ignore[attr-defined]
        features = (
            phase_features(report.decode, gpu, sublayers, tp, batch),
            phase_features(report.prefill, gpu, sublayers, tp),
        )
        reason = None
        if not report.fits:
            reason = DOES_NOT_FIT
        elif float(row["silicon_tpot_ms"]) / 1000 < report.decode.seconds:
            reason = FASTER_THAN_CEILING
        one = Counted(row, features, (report.decode.seconds, report.prefill.seconds), reason)
        one.all_to_all = (report.decode.all_to_all_seconds, report.prefill.all_to_all_seconds)
        counted.append(one)
    return counted


def serving_layout(spec: ModelSpec, row: dict[str, str]) -> ServingLayout:
    """The row's tensor and expert parallelism: an MoE model's routed experts over moe_ep_size ranks (E/EP whole
    experts a GPU, each split over moe_tp_size), as the engine ran them; attention tensor-parallel over tp_size
    (rows with attention data parallelism are not in the file)."""
    tp, ep = int(row["tp_size"]), int(row["moe_ep_size"] or 1)
    if ep > 1 and moe_shape(spec) is not None and tp % ep == 0:
        return ServingLayout(tensor_parallel=tp, expert_parallel=ep)
    return ServingLayout(tensor_parallel=tp)


# --- the fit -----------------------------------------------------------------------------------------------


def solve(matrix: list[list[float]], vector: list[float]) -> list[float]:
    """Gaussian elimination with partial pivoting; a singular system's free unknowns are 0."""
    size = len(vector)
    a = [row[:] + [value] for row, value in zip(matrix, vector)]
    for column in range(size):
        pivot = max(range(column, size), key=lambda r: abs(a[r][column]))
        if abs(a[pivot][column]) < 1e-300:
            continue
        a[column], a[pivot] = a[pivot], a[column]
        for r in range(size):
            if r != column and a[r][column]:
                factor = a[r][column] / a[column][column]
                a[r] = [x - factor * y for x, y in zip(a[r], a[column])]
    return [a[i][size] / a[i][i] if abs(a[i][i]) > 1e-300 else 0.0 for i in range(size)]


def nnls(gram: list[list[float]], moment: list[float]) -> list[float]:
    """min ‖Ax − b‖² over x ≥ 0 from AᵀA and Aᵀb: Lawson and Hanson's active-set method (1974, ch. 23)."""
    size = len(moment)
    x = [0.0] * size
    passive: set[int] = set()
    for _ in range(3 * size):
        gradient = [moment[i] - sum(gram[i][j] * x[j] for j in range(size)) for i in range(size)]
        candidates = [i for i in range(size) if i not in passive and gradient[i] > 1e-12 * (abs(moment[i]) + 1e-30)]
        if not candidates:
            break
        passive.add(max(candidates, key=lambda i: gradient[i]))
        while True:
            order = sorted(passive)
            inner = solve([[gram[i][j] for j in order] for i in order], [moment[i] for i in order])
            trial = [0.0] * size
            for i, value in zip(order, inner):
                trial[i] = value
            if all(trial[i] > 0 for i in order):
                x = trial
                break
            step = min(x[i] / (x[i] - trial[i]) for i in order if trial[i] <= 0 and x[i] - trial[i] > 0)
            x = [x[i] + step * (trial[i] - x[i]) for i in range(size)]
            passive = {i for i in order if x[i] > 1e-15}
    return x


def fit_floored(rows: list[tuple[list[float], float, float]], weights: list[float]) -> list[float]:
    """fit_relative with every roofline factor at least 1 (θ = 1 + φ, φ ≥ 0): a kernel cannot beat its roofline
    term, so the expected time is never below the ceiling (the fixed costs and ν only add)."""
    floor = [1.0 if name in ROOFLINE_FACTORS else 0.0 for name in FEATURES]
    floor += [0.0] * (len(rows[0][0]) - len(floor))
    shifted = [(x, offset + sum(f * v for f, v in zip(floor, x)), y) for x, offset, y in rows]
    return [f + value for f, value in zip(floor, fit_relative(shifted, weights))]


def fit_relative(rows: list[tuple[list[float], float, float]], weights: list[float]) -> list[float]:
    """Coefficients θ ≥ 0 fitting θ·x + offset to y over ROWS of (x, offset, y) on a log scale: least squares on
    (θ·x + offset − y) ÷ y first, then once more with each row divided by √(y · its prediction) instead, which
    weighs an overestimate like an underestimate of the same ratio (the first pass alone favours predicting low).
    Columns are scaled to unit mean before solving (the terms range from 1e-6 s to 100 sublayers)."""
    width = len(rows[0][0])
    scale = [statistics.fmean(abs(x[i] / y) for x, _, y in rows) or 1.0 for i in range(width)]
    roots = [w**0.5 for w in weights]
    divisors = [y / root for (_, _, y), root in zip(rows, roots)]
    theta = [0.0] * width
    for _ in range(2):
        gram = [[0.0] * width for _ in range(width)]
        moment = [0.0] * width
        for (x, offset, y), divisor in zip(rows, divisors):
            scaled = [x[i] / divisor / scale[i] for i in range(width)]
            target = (y - offset) / divisor
            for i, value in enumerate(scaled):
                if value:
                    moment[i] += value * target
                    row = gram[i]
                    for j in range(i, width):
                        row[j] += value * scaled[j]
        for i in range(width):
            for j in range(i):
                gram[i][j] = gram[j][i]
        theta = [value / scale[i] for i, value in enumerate(nnls(gram, moment))]
        predictions = [sum(a * b for a, b in zip(theta, x)) + offset for x, offset, _ in rows]
        divisors = [(y * max(p, y / 10)) ** 0.5 / root for (_, _, y), p, root in zip(rows, predictions, roots)]
    return theta


def log_loss(theta: list[float], rows: list[tuple[list[float], float, float]], weights: list[float]) -> float:
    """Σ weight · log²(prediction ÷ measurement): what the grids choose by."""
    total = 0.0
    for (x, offset, y), weight in zip(rows, weights):
        prediction = sum(a * b for a, b in zip(theta, x)) + offset
        total += weight * math.log(max(prediction, 1e-12) / y) ** 2
    return total


def vector(terms: dict[str, float]) -> list[float]:
    return [terms[name] for name in FEATURES]


def as_coefficients(theta: list[float]) -> dict[str, float]:
    return dict(zip(FEATURES, theta))


def weight(batch: int) -> float:
    """A TPOT row's weight in the decode fit: 1, or 1 ÷ √concurrency with FIT_WEIGHTED set (lightly loaded rows
    measure what `speed --batch B` describes most nearly). Tried and left off, chosen on the published validation
    half (tools/published_errors.py): median error 19.6 % unweighted, 21.2 % with the decode rows weighted, 22.8 %
    with the TTFT rows weighted too (their lone-prompt prefill median went from 24 % to 86 %)."""
    return batch**-0.5 if LOW_CONCURRENCY_WEIGHT else 1.0


def queueing(queue: float, r: Counted, step: float, prefill: float) -> float:
    """How much longer a prompt waits and runs at the row's concurrency than alone: 1 + κ · ρ ÷ (2 (1 − ρ)), the
    mean wait of a queue with one server and prefills of one length (M/D/1: Pollaczek–Khinchine) over the prefill,
    ρ the share of the engine's time the other requests' prefills take: B ÷ O prompts start per decode step, each
    PREFILL long, beside a STEP (see the module docstring). ρ is held under 0.95."""
    arrivals = r.batch / r.osl * prefill
    load = min(arrivals / (step + arrivals), 0.95)
    return 1 + queue * load / (2 * (1 - load))


def burst(r: Counted) -> float:
    """The prefill roofline time of the prompts a request waits behind when the row's B requests start together:
    half of the other B − 1, each at the lone prompt's roofline (its compute- and memory-bound operators at peak;
    ω, fitted, scales it). 0 for a lone request."""
    roofline = r.prefill["matmul_compute"] + r.prefill["weights_memory"] + r.prefill["kv_memory"]
    return (r.batch - 1) / 2 * roofline


LOAD_TERMS = ("shared_steps", "burst", "request_cost")  # ν, ω, h: each engine's own (see the module docstring)


def load_columns(r: Counted, engines: list[str], step: float) -> list[float]:
    """The row's load terms, in a column per engine (zero in the other engines' columns): the decode step it waits
    through (ν), its burst (ω) and 1 (h, the serving stack's cost per request)."""
    out = []
    for engine in engines:
        on = 1.0 if r.engine == engine else 0.0
        out += [on * step, on * burst(r), on]
    return out


def fit_prefill(
    rows: list[Counted], decode: dict[str, float] | None, previous: dict[str, float] | None
) -> tuple[dict[str, float], float, dict[str, dict[str, float]]]:
    """Prefill coefficients, κ_queue, and each engine's load terms (ν: with DECODE, the fitted decode step at the
    row's concurrency is the column; ω; h) on TTFT: the best κ_queue of the grid. The prefill's own fixed cost is
    held at 0: a constant per request cannot be told from the serving stack's h (see the module docstring)."""
    engines = sorted({r.engine for r in rows})
    fixed = FEATURES.index("fixed")
    best = None
    for queue in QUEUE_GRID:
        data = []
        for r in rows:
            step = decode_step(r, decode) if decode else r.tpot_ceiling
            alone = expected_seconds(r.prefill, previous) + r.all_to_all[1] if previous else r.ttft_ceiling
            load = queueing(queue, r, step, alone)
            x = [value * load for value in vector(r.prefill)]
            x[fixed] = 0.0
            x += load_columns(r, engines, decode_step(r, decode) if decode else 0.0)
            data.append((x, load * r.all_to_all[1], r.ttft))
        weights = [1.0] * len(rows)  # prefill: every row alike (weighting it held out worse, see weight)
        theta = fit_floored(data, weights)
        loss = log_loss(theta, data, weights)
        if best is None or loss < best[0]:
            best = (loss, queue, theta)
    assert best is not None
    _, queue, theta = best
    size = len(FEATURES)
    by_engine = {
        engine: dict(zip(LOAD_TERMS, theta[size + 3 * i : size + 3 * i + 3])) for i, engine in enumerate(engines)
    }
    return as_coefficients(theta[:size]), queue, by_engine


def decode_step(r: Counted, decode: dict[str, float]) -> float:
    """The expected decode step of the row, with the expert-parallel all-to-all `speed` adds to it."""
    return expected_seconds(r.decode, decode) + r.all_to_all[0]


def fit_decode(rows: list[Counted], prefill: dict[str, float]) -> tuple[dict[str, float], float]:
    """Decode coefficients and κ_mix on TPOT, the fitted prefill's kernels (B/O prompts a step) a further column.
    The decode step's fixed cost is per sublayer, not per step: its column is dropped (held at 0). Most models here
    have 60 to 94 layers, so a constant per step and a cost per sublayer cannot be told apart on their rows, and the
    fit put the fixed cost in the constant (5.7 ms a step on Blackwell without gpt-oss); held out, the 36-layer
    gpt-oss-120b then came out 2.5 × slower than measured. Launches and small ops scale with the kernels a step
    runs, that is with its sublayers: with the constant dropped, the typical profile's TPOT held out a model at a
    time went from 16.1 % to 15.0 % (within ±35 %: 82 % → 88 %), a chip at a time from 17.9 % to 18.2 % (15.1 % and
    18.4 % once Qwen3.5's recurrent state was counted in the float32 its config names)."""
    fixed = FEATURES.index("fixed")
    data = []
    for r in rows:
        x = vector(r.decode) + [r.batch / r.osl * kernel_seconds(r.prefill, prefill)]
        x[fixed] = 0.0
        data.append((x, r.all_to_all[0], r.tpot))
    theta = fit_floored(data, [weight(r.batch) for r in rows])
    return as_coefficients(theta[:-1]), theta[-1]


def fit_cell(rows: list[Counted]) -> dict:
    """Prefill on TTFT, decode on TPOT (with that prefill's kernels mixed in), prefill again with the decode steps
    a prompt waits through, decode again: two rounds, since each phase's measurement carries some of the other."""
    prefill, queue, load = fit_prefill(rows, None, None)
    decode, mix = fit_decode(rows, prefill)
    prefill, queue, load = fit_prefill(rows, decode, prefill)
    decode, mix = fit_decode(rows, prefill)
    return {
        "decode": decode,
        "prefill": prefill,
        "mix": mix,
        "queue": queue,
        "load_by_engine": load,
        "rows": len(rows),
        "models": sorted({r.model for r in rows}),
    }


def predict(cell: dict, r: Counted) -> tuple[float, float]:
    """(TPOT, TTFT) the cell predicts for the row's measurement conditions (see the module docstring)."""
    decode, prefill = cell["decode"], cell["prefill"]
    kernels = kernel_seconds(r.prefill, prefill)
    step = decode_step(r, decode)
    tpot = step + cell["mix"] * r.batch / r.osl * kernels
    alone = prefill["fixed"] + kernels + r.all_to_all[1]
    load = cell["load_by_engine"][r.engine]
    waits = load["shared_steps"] * step + load["burst"] * burst(r) + load["request_cost"]
    return tpot, queueing(cell["queue"], r, step, alone) * alone + waits


def fit_profile(rows: list[Counted]) -> dict[str, dict]:
    """A profile: one cell per chip family with enough data, and the "all" family over every row."""
    cells = {ALL_CHIPS: fit_cell(rows)}
    by_family = defaultdict(list)
    for r in rows:
        by_family[r.family].append(r)
    for family, members in sorted(by_family.items()):
        if family != ALL_CHIPS and len(members) >= MIN_ROWS and len({r.model for r in members}) >= MIN_MODELS:
            cells[family] = fit_cell(members)
    return cells


def cell_for(cells: dict[str, dict], r: Counted) -> dict:
    """The row's chip family's cell, or the "all" cell when the family has none or its rows had no run of the
    row's engine (whose load terms it then lacks: an accelerator held out can leave a family one engine short)."""
    cell = cells.get(r.family)
    return cell if cell is not None and r.engine in cell["load_by_engine"] else cells[ALL_CHIPS]


def held_out(rows: list[Counted], key: str) -> list[tuple[Counted, float, float]]:
    """Every row predicted by a profile fitted without the rows sharing its KEY (model or system)."""
    out = []
    for value in sorted({getattr(r, key) for r in rows}):
        train = [r for r in rows if getattr(r, key) != value]
        if not train:
            continue
        cells = fit_profile(train)
        for r in rows:
            if getattr(r, key) == value:
                out.append((r, *predict(cell_for(cells, r), r)))
    return out


def errors(predicted: list[tuple[Counted, float, float]]) -> dict[str, float]:
    tpot = [abs(p - r.tpot) / r.tpot for r, p, _ in predicted]
    ttft = [abs(p - r.ttft) / r.ttft for r, _, p in predicted]
    tpot_ratio = sorted(r.tpot / p for r, p, _ in predicted)
    ttft_ratio = sorted(r.ttft / p for r, _, p in predicted)
    return {
        "rows": len(predicted),
        "tpot_median_error": statistics.median(tpot),
        "tpot_within_35": sum(e <= WITHIN for e in tpot) / len(tpot),
        "ttft_median_error": statistics.median(ttft),
        "ttft_within_35": sum(e <= WITHIN for e in ttft) / len(ttft),
        "tpot_ratio_p10": quantile(tpot_ratio, 0.1),
        "tpot_ratio_p90": quantile(tpot_ratio, 0.9),
        "ttft_ratio_p10": quantile(ttft_ratio, 0.1),
        "ttft_ratio_p90": quantile(ttft_ratio, 0.9),
    }


def quantile(ordered: list[float], share: float) -> float:
    """The SHARE quantile of sorted values, linear between neighbours (statistics.quantiles' 'inclusive' method)."""
    position = share * (len(ordered) - 1)
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fit and print; write nothing")
    args = parser.parse_args()
    start = time.perf_counter()
    with DATA.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    counted = count_rows(rows)
    above = [r for r in counted if r.tpot < r.tpot_ceiling or r.ttft < r.ttft_ceiling]
    print(f"{len(counted)} rows counted in {time.perf_counter() - start:.1f} s; faster than the ceiling: {len(above)}")
    usable = [r for r in counted if r.reason is None]
    for reason in sorted({r.reason for r in counted if r.reason}):
        print(f"  left out {sum(r.reason == reason for r in counted)}: {reason}")
    print(f"fitting on {len(usable)} rows")

    profiles = {}
    report_lines = []
    named: list[tuple[Counted, float, float]] = []  # every row predicted by its own engine's profile, held out
    for name in (TYPICAL, *ENGINE_PROFILES):
        members = usable if name == TYPICAL else [r for r in usable if r.engine == name]
        cells = fit_profile(members)
        predicted = held_out(members, "model")
        if name != TYPICAL:
            named.extend(predicted)
        lomo = errors(predicted)
        loao = errors(held_out(members, "system")) if name == TYPICAL else None
        in_sample = errors([(r, *predict(cell_for(cells, r), r)) for r in members])
        by_model = {
            model: errors([(r, *predict(cell_for(cells, r), r)) for r in members if r.model == model])
            for model in sorted({r.model for r in members})
        }
        versions = sorted({f"{r.engine} {r.row['backend_version'] or 'unstated'}" for r in members})
        profiles[name] = {
            "engine_versions": versions,
            "families": cells,
            "held_out": lomo,
            "held_out_by_accelerator": loao,
            "in_sample": in_sample,
            "in_sample_by_model": {
                model: {key: stats[key] for key in ("rows", "tpot_median_error", "ttft_median_error")}
                for model, stats in by_model.items()
            },
        }
        for label, stats in (("leave-one-model-out", lomo), ("leave-one-accelerator-out", loao)):
            if stats is None:
                continue
            report_lines.append(
                f"{name:8} {label:26} TPOT median {stats['tpot_median_error']:6.1%} within ±35 % "
                f"{stats['tpot_within_35']:6.1%} | TTFT median {stats['ttft_median_error']:6.1%} within ±35 % "
                f"{stats['ttft_within_35']:6.1%}  ({stats['rows']} rows)"
            )
    engine_named = errors(named)
    report_lines.append(
        f"{'engines':8} {'leave-one-model-out':26} TPOT median {engine_named['tpot_median_error']:6.1%} within ±35 % "
        f"{engine_named['tpot_within_35']:6.1%} | TTFT median {engine_named['ttft_median_error']:6.1%} within ±35 % "
        f"{engine_named['ttft_within_35']:6.1%}  ({engine_named['rows']} rows, each by its own engine's profile)"
    )
    print("\n".join(report_lines))
    document = {
        "comment": "Written by tools/fit_expected.py: do not edit. Coefficients multiply ffncalc.expected's terms.",
        "data": {
            "file": str(DATA.relative_to(ROOT)),
            "sha256": hashlib.sha256(DATA.read_bytes()).hexdigest(),
            "description": SOURCE,
            "rows_in_file": len(rows),
            "rows_fitted": len(usable),
            "fitted": datetime.date.today().isoformat(),
        },
        "profiles": profiles,
        "held_out_engine_named": engine_named,  # each row by its own engine's profile fitted without its model
    }
    print(f"done in {time.perf_counter() - start:.1f} s")
    if not args.check:
        OUTPUT.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")
        # The out-of-source error, measured after the fit with the coefficients just written (never fitted on).
        import published_errors

        document["published"] = published_errors.stated()
        OUTPUT.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n")
        print(f"published, out of source: {document['published']['all']}")
        print(f"wrote {OUTPUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
