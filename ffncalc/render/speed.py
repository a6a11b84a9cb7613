"""The tables and the batch chart of `ffncalc speed`. Every time shown says what it is: a roofline ceiling, or
(marked ≈) the expected figure of a fitted engine profile, with its held-out range."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Group, RenderableType
from rich.text import Text

from ..units import GIB
from ..values import replace
from . import approx, count, heading, info_lines
from .layout import Column, Grid, fit

if TYPE_CHECKING:
    from ..roofline import Attainment, Phase, SpeedReport, SpeedRun

CHART_WIDTH = 40
CEILING_WORDS = (
    "A ceiling is the roofline's time, the least the chip allows; ≈ marks the expected time, fitted on measured "
    "runs. Neither is a measurement."
)


def needed_words(report: SpeedReport) -> str:
    """What the fit compares: a config's weights + KV + activations, or what llama.cpp puts on the GPU."""
    usable = report.memory_usable or 0
    if report.weight_dtype == "GGUF":
        return (
            f"On the GPU under llama.cpp, every layer offloaded: weights + KV cache ({report.kv_dtype}) + compute "
            f"buffer (assumed), {report.memory_needed / GIB:,.2f} GiB of {usable / GIB:,.2f} GiB usable"
        )
    return (
        f"Weights + KV + activations: {report.memory_needed / GIB:,.2f} GiB of {usable / GIB:,.2f} GiB after the "
        "runtime reserve"
    )


def ms(seconds: float) -> str:
    """A time with three significant figures in s, ms, µs or ns."""
    for unit, scale in (("s", 1), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:#.3g} {unit}".replace(". ", " ")
    return f"{seconds / 1e-9:#.3g} ns".replace(". ", " ") if seconds else "0"


def rate(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:,.3g}"


def _figure(value: float, digits: int = 2) -> str:
    """DIGITS significant figures without a trailing point or an exponent: 5.4, 54, 540 (a range's ends); three
    for an expected figure itself, so that one just above its ceiling never reads as below it (1.23 s, not 1.2 s,
    beside a 1.22 s ceiling)."""
    return f"{value:.0f}" if value >= 10 ** (digits - 1) * 10 else f"{value:#.{digits}g}".rstrip(".")


def _unit(seconds: float) -> tuple[str, float]:
    for unit, scale in (("s", 1), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return unit, scale
    return "ns", 1e-9


def _short(seconds: float) -> str:
    """A time with two significant figures: 5.4 ms (an expected figure is not known to three)."""
    unit, scale = _unit(seconds)
    return f"{_figure(seconds / scale, 3)} {unit}"


def beside(ceiling: float, expected: float | None, band: list[float] | None) -> str:
    """'4.80 ms ceiling · ≈ 6.3 ms expected (5.4–7.4)': the range in the expected figure's unit."""
    if expected is None:
        return f"{ms(ceiling)} ceiling"
    unit, scale = _unit(expected)
    low, high = band or (expected, expected)
    return (
        f"{ms(ceiling)} ceiling · ≈ {_figure(expected / scale, 3)} {unit} expected "
        f"({_figure(low / scale)}–{_figure(high / scale)})"
    )


def measured_line(label: str, measured: Attainment, bound: str) -> Text:
    """A measured time: the share of the ceiling it reaches, against the expected figure, and the largest gap."""
    share = "model bandwidth utilisation" if bound == "memory" else "model FLOPs utilisation"
    return Text(
        f"Measured {label} {ms(measured.measured_seconds)}: {measured.attainment:.0%} of the ceiling's speed ({share}); "
        f"expected ÷ measured {measured.expected_over_measured:.2f}; the largest modelled gap: {measured.largest_gap}"
        f" ({ms(measured.gap_seconds.get(_largest(measured), 0.0))})."
    )


def _largest(measured: Attainment) -> str:
    return max(measured.gap_seconds, key=lambda name: measured.gap_seconds[name]) if measured.gap_seconds else ""


def request_line(report: SpeedReport) -> Text:
    """--output: one request end to end, and the batch's tokens/s over it."""
    request = report.request
    assert request is not None
    expected_rate = (
        f" · ≈ {rate(request.expected_tokens_per_second)} expected" if request.expected_tokens_per_second else ""
    )
    line = (
        f"Request of {count(request.output)} output tokens (batch {count(report.batch)}): "
        f"{beside(request.seconds, request.expected_seconds, request.expected_range)}; "
        f"{rate(request.tokens_per_second)} tokens/s ceiling{expected_rate} for the batch (decode over caches of "
        f"{count(request.first_context)} to {count(request.last_context)} tokens)."
    )
    split = report.disaggregation
    if split is not None:
        line += (
            f" Disaggregated {split.prefill_gpus}:{split.decode_gpus}: prefill {split.prefill_requests_per_second:,.2f}"
            f" requests/s, decode {split.decode_requests_per_second:,.2f}, the KV link "
            f"{split.link_requests_per_second:,.2f} ({split.kv_bytes_per_request / 1e9:,.2f} GB a request, "
            f"{split.transfer_seconds * 1000:,.1f} ms over the scale-out links); balanced at "
            f"{split.balanced_prefill_share:.0%} of the GPUs on prefill (ceilings)."
        )
    return Text(line)


def amount(value: float | None) -> str:
    """Three significant figures, as an expected figure is known: 0.0256, 6.26, 1,234; "–" for none."""
    if value is None:
        return "–"
    return f"{value:,.0f}" if value >= 1000 else f"{value:#.3g}".rstrip(".")


def cost_lines(report: SpeedReport) -> list[Text]:
    """With --price: what a million input and output tokens cost and the energy a token takes at most, at the
    expected throughput (the JSON carries the energy whatever is asked)."""
    found = report.cost_and_energy
    if found is None or found.price_per_gpu_hour is None or not report.fits:
        return []
    gpus = f"{found.gpus:,} GPU{'s' if found.gpus > 1 else ''}"
    if found.board_power_watts is None:
        energy = f"Energy per token: none ({found.board_power_source})."
    else:
        energy = (
            f"Energy, expected-based, at most ({found.board_power_watts:,} W board power × {gpus}): "
            f"{amount(found.input_joules_per_token_at_most)} J per input token, "
            f"{amount(found.output_joules_per_token_at_most)} J per output token."
        )
    return [
        Text(
            f"Cost at {found.price_per_gpu_hour:g} per GPU-hour × {gpus}, expected-based: "
            f"{amount(found.input_cost_per_million_tokens)} per million input tokens (prefill), "
            f"{amount(found.output_cost_per_million_tokens)} per million output tokens (decode, batch "
            f"{count(report.batch)})."
        ),
        Text(energy),
    ]


def _cost_grid(reports: list[SpeedReport], width: int) -> list[RenderableType]:
    """A batch sweep with --price: each batch's cost per million output tokens and energy per output token."""
    first = reports[0].cost_and_energy
    if first is None or first.price_per_gpu_hour is None:
        return []
    grid = Grid(
        [
            Column("Batch", key=True),
            Column("≈ Cost per M output", "≈ Cost/M"),
            Column("≈ J per output token (at most)", "≈ J/token"),
        ]
    )
    for report in reports:
        found = report.cost_and_energy
        fits = report.fits and found is not None
        grid.add(
            count(report.batch),
            amount(found.output_cost_per_million_tokens) if fits and found else "–",
            amount(found.output_joules_per_token_at_most) if fits and found else "–",
        )
    watts = f"{first.board_power_watts:,} W board power" if first.board_power_watts else first.board_power_source
    lines: list[RenderableType] = [
        Text(
            f"Cost at {first.price_per_gpu_hour:g} per GPU-hour × {first.gpus:,} GPU"
            f"{'s' if first.gpus > 1 else ''}, expected-based; energy at most ({watts}). Prefill: "
            f"{amount(first.input_cost_per_million_tokens)} per million input tokens, "
            f"{amount(first.input_joules_per_token_at_most)} J per input token."
        )
    ]
    return lines + fit(grid, width)


def profile_line(report: SpeedReport) -> Text | None:
    """Which fitted profile the ≈ figures come from and how far off it was on models it had not seen."""
    profile = report.engine_profile
    if profile is None:
        return None
    note = f" ({profile.note})" if profile.note else ""
    return Text(
        f"≈ expected: profile {profile.name}, {profile.chip_family} chips{note}; fitted on {profile.rows:,} measured "
        f"rows; on models left out, median error {profile.held_out_tpot_median_error:.0%} (TPOT), "
        f"{profile.held_out_ttft_median_error:.0%} (TTFT under load). The ceiling is what no run can beat."
    )


def speed_renderables(run: SpeedRun, width: int = 80, explain: bool = False) -> Group:
    """One report: its components; several batches: the sweep and its chart; several accelerators: side by side.
    A report that does not fit shows no times (a ceiling for what cannot run is no answer); the conventions with
    EXPLAIN (--json always carries them)."""
    reports = run.reports
    first = reports[0]
    names = list(dict.fromkeys(report.gpu.name for report in reports))
    parts: list[RenderableType] = [heading(_title(first, names))]
    if len(names) > 1:
        parts.append(Text(CEILING_WORDS))
        parts += _side_by_side(reports, names, width)
    elif len(reports) > 1:
        parts += _sweep(reports, width)
    else:
        parts += _components(first, width)
    for stop in run.not_fitting:
        parts.append(
            Text(
                f"{stop.gpu}: does not fit from batch {count(stop.batch)} ({stop.memory_needed / GIB:,.2f} GiB per "
                f"GPU needed, {stop.memory_usable / GIB:,.2f} GiB after the runtime reserve).",
                style="bold",
            )
        )
    if explain:
        parts += [Text(f"· {convention}", style="dim") for convention in first.conventions]
    else:
        parts.append(Text("How each figure is counted: --explain (and --json, under conventions).", style="dim"))
    notes = {report.gpu.name: report.gpu.notes for report in reports if report.gpu.notes}
    parts += [Text(f"{name}: {note}", style="dim") for name, note in notes.items()]
    # every accelerator's own notes, each once, beside the model's
    every_note = list(dict.fromkeys(note for report in reports for note in report.notes))
    return Group(*parts, *info_lines(replace(first, notes=every_note)))


def _title(report: SpeedReport, names: list[str]) -> str:
    tp = f", tensor parallel {report.tensor_parallel}" if report.tensor_parallel > 1 else ""
    layout = report.layout
    if layout is not None and layout.expert_parallel > 1:
        tp += f", expert parallel {layout.expert_parallel}"
    if layout is not None and layout.pipeline_parallel > 1:
        tp += f", pipeline parallel {layout.pipeline_parallel}"
    if layout is not None and layout.dp_attention:
        tp += f", attention data-parallel {layout.tensor_parallel}"
    weights = f"{report.quantization} weights" if report.quantization else f"{report.weight_dtype} weights"
    if report.weight_dtype == "GGUF":  # llama.cpp's file type as people say it: Q4_K_M, not MOSTLY_Q4_K_M
        quant = (report.quantization or "").removeprefix("MOSTLY_")
        weights = f"{quant + ' ' if quant else ''}GGUF weights under llama.cpp"
    return (
        f"{report.model} on {', '.join(names)} — {report.estimate} ({weights}, {report.gpu.compute_dtype} matmuls, "
        f"KV {report.kv_dtype}, context {count(report.context)}, prompt {count(report.prompt)}{tp})"
    )


def _phase_grid(phase: Phase, title: str) -> Grid:
    grid = Grid(
        [
            Column(title, justify="left", key=True, footer="Total"),
            Column("FLOPs", footer=approx(phase.flops)),
            Column("Bytes", footer=approx(phase.bytes, "B")),
            Column("FLOP/B", "I"),
            Column("Ceiling", footer=ms(phase.seconds)),
            Column("Bound", justify="left"),
        ]
    )
    from ..roofline import LABELS  # the labels live with the operators they name

    for component in phase.components:
        grid.add(
            LABELS[component.name],
            approx(component.flops),
            approx(component.bytes, "B"),
            f"{component.intensity:,.0f}" if component.intensity is not None else "–",
            ms(component.seconds),
            component.bound,
        )
    if phase.allreduce_bytes:
        grid.add(
            "All-reduce (interconnect)", "", approx(phase.allreduce_bytes, "B"), "", ms(phase.allreduce_seconds), "link"
        )
    if phase.all_to_all_bytes:
        grid.add(
            "MoE all-to-all (interconnect)",
            "",
            approx(phase.all_to_all_bytes, "B"),
            "",
            ms(phase.all_to_all_seconds),
            "link",
        )
    return grid


def _components(report: SpeedReport, width: int) -> list[RenderableType]:
    decode, prefill, gpu = report.decode, report.prefill, report.gpu
    expected_rate = (
        f" · ≈ {rate(decode.expected_tokens_per_second)} expected" if decode.expected_tokens_per_second else ""
    )
    lines: list[RenderableType] = [
        Text(
            f"Decode, batch {count(report.batch)}: TPOT {beside(decode.seconds_per_step, decode.expected_seconds_per_step, decode.expected_range)}; "
            f"{rate(decode.tokens_per_second)} tokens/s ceiling{expected_rate} for the batch, "
            f"{rate(decode.tokens_per_second_per_sequence)} per sequence (ceiling); {bound_words(decode)}."
        ),
        Text(
            f"Prefill of {count(report.prompt)} tokens: TTFT "
            f"{beside(prefill.seconds, prefill.expected_seconds, prefill.expected_range)}; {bound_words(prefill)}."
        ),
        Text(
            f"{gpu.name}: {approx(gpu.peak_flops, 'FLOP/s')} dense {gpu.compute_dtype}, {approx(gpu.bandwidth, 'B/s')}; "
            f"ridge point {gpu.ridge_point:,.0f} FLOPs per byte. {needed_words(report)}"
            + ("." if report.fits else " — does not fit.")
        ),
    ]
    if report.request is not None:
        lines.append(request_line(report))
    lines += cost_lines(report)
    lines += [
        measured_line(label, phase.measured, bound)
        for label, phase, bound in (("TPOT", decode, decode.bound), ("TTFT", prefill, prefill.bound))
        if phase.measured is not None
    ]
    expected = profile_line(report)
    if expected is not None:
        lines.append(expected)
    lines += fit(_phase_grid(decode, f"Decode step (batch {count(report.batch)})"), width)
    lines += fit(_phase_grid(prefill, f"Prefill ({count(report.prompt)} tokens)"), width)
    return lines


def bound_words(phase: Phase) -> str:
    """What bounds a phase, and which of its operators the other thing bounds: "memory-bound (compute-bound: FFN)"."""
    from ..roofline import LABELS

    # Operators under a twentieth of the step are left out: a norm is always memory-bound and never the story.
    other = [LABELS[c.name] for c in phase.components if c.bound != phase.bound and c.seconds >= phase.seconds / 20]
    return f"{phase.bound}-bound" + (
        f" ({'memory' if phase.bound == 'compute' else 'compute'}-bound: {', '.join(other)})" if other else ""
    )


def speed_csv(run: SpeedRun) -> None:
    """One row per accelerator and batch: the headline figures as raw values (a batch sweep as CSV)."""
    import csv
    import sys

    from ..headlines import SPEED_HEADLINES, speed_headline

    writer = csv.writer(sys.stdout, lineterminator="\n")
    writer.writerow(["gpu", "batch", *[headline.name for headline in SPEED_HEADLINES]])
    for report in run.reports:
        figures = speed_headline(report)
        writer.writerow([report.gpu.name, report.batch, *[figures[headline.name] for headline in SPEED_HEADLINES]])


def _sweep(reports: list[SpeedReport], width: int) -> list[RenderableType]:
    grid = Grid(
        [
            Column("Batch", key=True),
            Column("TPOT"),
            Column("≈ TPOT"),
            Column("Tokens/s"),
            Column("≈ Tokens/s", "≈ Tok/s"),
            Column("Per seq", "Seq/s"),
            Column("KV GiB", "KV"),
            Column("Decode", justify="left"),
        ]
    )
    for report in reports:
        decode = report.decode
        if not report.fits:
            grid.add(count(report.batch), "–", "–", "–", "–", "–", f"{report.kv_bytes / GIB:,.2f}", "does not fit")
            continue
        grid.add(
            count(report.batch),
            ms(decode.seconds_per_step),
            _short(decode.expected_seconds_per_step) if decode.expected_seconds_per_step else "–",
            rate(decode.tokens_per_second),
            rate(decode.expected_tokens_per_second) if decode.expected_tokens_per_second else "–",
            rate(decode.tokens_per_second_per_sequence),
            f"{report.kv_bytes / GIB:,.2f}",
            f"{decode.bound}-bound",
        )
    prefill = reports[0].prefill
    parts: list[RenderableType] = [
        Text(
            f"Prefill of {count(reports[0].prompt)} tokens: TTFT "
            f"{beside(prefill.seconds, prefill.expected_seconds, prefill.expected_range)}."
        ),
        Text("Decode: TPOT and Tokens/s are roofline ceilings; ≈ marks the expected figures."),
    ]
    parts += fit(grid, width)
    parts += [request_line(report) for report in reports if report.request is not None and report.fits]
    parts += _cost_grid(reports, width)
    band = reports[0].decode.expected_range
    expected_step = reports[0].decode.expected_seconds_per_step
    if band and expected_step:
        parts.append(
            Text(f"≈ TPOT range held out: {band[0] / expected_step:.2f}× to {band[1] / expected_step:.2f}× the figure.")
        )
    expected = profile_line(reports[0])
    if expected is not None:
        parts.append(expected)
    fitting = [report for report in reports if report.fits]
    if fitting:
        parts.append(_chart(fitting, width))
    return parts


def _chart(reports: list[SpeedReport], width: int) -> Text:
    """Decode tokens/s against the batch, one bar a batch; where decode turns compute-bound is marked."""
    label_width = max(len(count(report.batch)) for report in reports)
    value_width = max(len(rate(report.decode.tokens_per_second)) for report in reports)
    room = max(10, min(CHART_WIDTH, width - label_width - value_width - 6))
    peak = max(report.decode.tokens_per_second for report in reports)
    text = Text("Decode tokens/s by batch (roofline ceiling; ▓ compute-bound, █ memory-bound)\n")
    for report in reports:
        cells = max(1, round(report.decode.tokens_per_second / peak * room))
        mark = "▓" if report.decode.bound == "compute" else "█"
        text.append(f"{count(report.batch):>{label_width}} │{mark * cells} {rate(report.decode.tokens_per_second)}\n")
    turn = next((report.batch for report in reports if report.decode.bound == "compute"), None)
    text.append(
        f"decode turns compute-bound at batch {count(turn)}"
        if turn
        else "decode stays memory-bound at every batch shown"
    )
    return text


def _side_by_side(reports: list[SpeedReport], names: list[str], width: int) -> list[RenderableType]:
    """One column per accelerator; a block of rows per batch, its first row saying whether it fits ("–": it does
    not, so no time is shown)."""
    grid = Grid([Column("", justify="left", key=True), *[Column(name) for name in names]])
    batches = list(dict.fromkeys(report.batch for report in reports))
    by = {(report.gpu.name, report.batch): report for report in reports}
    price = reports[0].cost_and_energy.price_per_gpu_hour if reports[0].cost_and_energy else None
    first = [by[(name, batches[0])] for name in names]
    grid.add(
        f"Prefill TTFT (batch {count(batches[0])}, ceiling)", *[ms(c.prefill.seconds) if c.fits else "–" for c in first]
    )
    grid.add(
        "Prefill TTFT ≈ expected",
        *[_short(c.prefill.expected_seconds) if c.fits and c.prefill.expected_seconds else "–" for c in first],
    )
    for batch in batches:
        cells = [by[(name, batch)] for name in names]
        grid.add(f"Batch {count(batch)}: fits", *["yes" if c.fits else "no" for c in cells])
        if not any(c.fits for c in cells):
            continue
        grid.add(
            f"Batch {count(batch)}: TPOT (ceiling)", *[ms(c.decode.seconds_per_step) if c.fits else "–" for c in cells]
        )
        grid.add(
            f"Batch {count(batch)}: TPOT ≈ expected",
            *[
                _short(c.decode.expected_seconds_per_step) if c.fits and c.decode.expected_seconds_per_step else "–"
                for c in cells
            ],
        )
        grid.add(
            f"Batch {count(batch)}: tokens/s", *[rate(c.decode.tokens_per_second) if c.fits else "–" for c in cells]
        )
        grid.add(f"Batch {count(batch)}: bound", *[c.decode.bound if c.fits else "–" for c in cells])
    if price is not None:
        _cost_rows(grid, names, batches, by, price)
    profiles = list(
        dict.fromkeys(f"{r.engine_profile.name}/{r.engine_profile.chip_family}" for r in reports if r.engine_profile)
    )
    parts = fit(grid, width)
    expected = profile_line(reports[0])
    if expected is not None:
        parts.append(expected)
        parts.append(Text(f"≈ profiles by accelerator: {', '.join(profiles)}.", style="dim"))
    if price is not None:
        parts.append(
            Text("≈ cost and energy: expected-based; energy at most, at each chip's board power.", style="dim")
        )
        parts += [
            Text(f"{c.gpu.name}: no energy per token ({c.cost_and_energy.board_power_source}).", style="dim")
            for c in first
            if c.cost_and_energy is not None and c.cost_and_energy.board_power_watts is None
        ]
    return parts


def _cost_rows(grid: Grid, names: list[str], batches: list[int], by: dict, price: float) -> None:
    """Side by side with --price: each chip's cost and energy per token, expected-based ("–": not computable)."""

    def cell(report: SpeedReport, name: str) -> str:
        found = report.cost_and_energy
        return amount(getattr(found, name)) if report.fits and found is not None else "–"

    first = [by[(name, batches[0])] for name in names]
    grid.add(f"≈ Cost per M input at {price:g}/GPU-h", *[cell(c, "input_cost_per_million_tokens") for c in first])
    grid.add("≈ J per input token (at most)", *[cell(c, "input_joules_per_token_at_most") for c in first])
    for batch in batches:
        cells = [by[(name, batch)] for name in names]
        if any(c.fits for c in cells):
            grid.add(
                f"Batch {count(batch)}: ≈ cost per M output",
                *[cell(c, "output_cost_per_million_tokens") for c in cells],
            )
            grid.add(
                f"Batch {count(batch)}: ≈ J per output token",
                *[cell(c, "output_joules_per_token_at_most") for c in cells],
            )
