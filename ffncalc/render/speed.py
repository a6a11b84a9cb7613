"""The tables and the batch chart of `ffncalc speed`. Every time shown is a roofline ceiling, and says so."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Group, RenderableType
from rich.text import Text

from . import approx, count, heading, info_lines
from .layout import Column, Grid, fit

if TYPE_CHECKING:
    from ..roofline import Phase, SpeedReport, SpeedRun

GIB = 1 << 30
CHART_WIDTH = 40
CEILING_WORDS = "Every time below is a roofline ceiling (the least the chip allows), not a measurement."


def ms(seconds: float) -> str:
    """A time with three significant figures in s, ms, µs or ns."""
    for unit, scale in (("s", 1), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:#.3g} {unit}".replace(". ", " ")
    return f"{seconds / 1e-9:#.3g} ns".replace(". ", " ") if seconds else "0"


def rate(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 else f"{value:,.3g}"


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
        parts.append(Text(CEILING_WORDS))
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
    return Group(*parts, *info_lines(first))


def _title(report: SpeedReport, names: list[str]) -> str:
    tp = f", tensor parallel {report.tensor_parallel}" if report.tensor_parallel > 1 else ""
    weights = f"{report.quantization} weights" if report.quantization else f"{report.weight_dtype} weights"
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
            Column("Time", footer=ms(phase.seconds)),
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
    return grid


def _components(report: SpeedReport, width: int) -> list[RenderableType]:
    decode, prefill, gpu = report.decode, report.prefill, report.gpu
    lines: list[RenderableType] = [
        Text(
            f"Decode, batch {count(report.batch)}: {ms(decode.seconds_per_step)} per token (TPOT), "
            f"{rate(decode.tokens_per_second)} tokens/s for the batch, {rate(decode.tokens_per_second_per_sequence)} per "
            f"sequence; {bound_words(decode)}. Prefill of {count(report.prompt)} tokens: {ms(prefill.seconds)} to "
            f"first token (TTFT); {bound_words(prefill)}. All roofline ceilings."
        ),
        Text(
            f"{gpu.name}: {approx(gpu.peak_flops, 'FLOP/s')} dense {gpu.compute_dtype}, {approx(gpu.bandwidth, 'B/s')}; "
            f"ridge point {gpu.ridge_point:,.0f} FLOPs per byte. Weights + KV + activations: "
            f"{report.memory_needed / GIB:,.2f} GiB of {(gpu.memory - report.runtime_reserve) / GIB:,.2f} GiB after "
            "the runtime reserve" + ("." if report.fits else " — does not fit.")
        ),
    ]
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
            Column("Tokens/s"),
            Column("Per seq", "Seq/s"),
            Column("KV GiB", "KV"),
            Column("Decode", justify="left"),
        ]
    )
    for report in reports:
        decode = report.decode
        if not report.fits:
            grid.add(count(report.batch), "–", "–", "–", f"{report.kv_bytes / GIB:,.2f}", "does not fit")
            continue
        grid.add(
            count(report.batch),
            ms(decode.seconds_per_step),
            rate(decode.tokens_per_second),
            rate(decode.tokens_per_second_per_sequence),
            f"{report.kv_bytes / GIB:,.2f}",
            f"{decode.bound}-bound",
        )
    parts: list[RenderableType] = [
        Text(f"Prefill of {count(reports[0].prompt)} tokens: {ms(reports[0].prefill.seconds)} to first token (TTFT).")
    ]
    parts += fit(grid, width)
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
    first = [by[(name, batches[0])] for name in names]
    grid.add(f"Prefill TTFT (batch {count(batches[0])})", *[ms(c.prefill.seconds) if c.fits else "–" for c in first])
    for batch in batches:
        cells = [by[(name, batch)] for name in names]
        grid.add(f"Batch {count(batch)}: fits", *["yes" if c.fits else "no" for c in cells])
        if not any(c.fits for c in cells):
            continue
        grid.add(f"Batch {count(batch)}: TPOT", *[ms(c.decode.seconds_per_step) if c.fits else "–" for c in cells])
        grid.add(
            f"Batch {count(batch)}: tokens/s", *[rate(c.decode.tokens_per_second) if c.fits else "–" for c in cells]
        )
        grid.add(f"Batch {count(batch)}: bound", *[c.decode.bound if c.fits else "–" for c in cells])
    return fit(grid, width)
