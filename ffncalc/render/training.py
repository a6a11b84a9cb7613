"""The tables of `ffncalc train`. Every time and cost is at an MFU that is assumed (or measured), and says so."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Group, RenderableType
from rich.text import Text

from ..compute import FLOPS_COMPONENTS
from ..units import GIB
from . import approx, approx_params, count, heading, info_lines, named
from .layout import Column, Grid, fit

if TYPE_CHECKING:
    from ..training import TrainReport

CONVENTION_NAMES = {
    "ffncalc": "ffncalc (exact)",
    "megatron": "Megatron-LM",
    "torchtitan": "torchtitan",
    "palm": "PaLM 6N+12LHQT",
    "nanogpt": "nanoGPT",
}


def mfu_label(report: TrainReport) -> str:
    """'at MFU 0.4, assumed' or 'at MFU 0.372, measured': the label every time and cost carries."""
    return f"at MFU {report.mfu:.3g}, " + ("assumed" if report.mfu_assumed else "measured")


def train_renderables(report: TrainReport, width: int = 80) -> Group:
    """The answer first (FLOPs, GPU-hours, days, cost), then components, conventions, compute-optimal, memory."""
    parts: list[RenderableType] = [
        heading(
            f"Training {named(report)} on {count(report.tokens)} tokens, sequences of {count(report.seq)} — "
            f"{report.gpus:,} × {report.gpu} ({report.dtype}, dense peak {approx(report.peak_flops, 'FLOP/s')})"
        ),
    ]
    if report.layouts is not None:
        parts += _plan(report, width)
    else:
        parts += _answer(report)
        parts += _layout(report, width)
    parts += fit(_components(report), width)
    parts += fit(_conventions(report), width)
    parts += [
        Text(f"· {CONVENTION_NAMES[c.name]}: {c.note} ({c.source})", style="dim")
        for c in report.flops_per_token_by_convention
    ]
    parts += fit(_compute_optimal(report), width)
    parts.append(Text(_past_optimal(report)))
    parts.append(Text(_batch(report)))
    if report.layouts is None and not _layout_shown(report):  # else the layout's (or --plan's best) busiest GPU says it
        parts.append(Text(_memory(report)))
    parts += [Text(f"· {convention}", style="dim") for convention in report.conventions[:6]]
    return Group(*parts, *info_lines(report))


def _answer(report: TrainReport) -> list[Text]:
    flops = f"{report.total_flops:.3e} FLOPs ({approx(report.flops_per_token)} per token)"
    if report.hardware_flops != report.total_flops:
        flops += f", {report.hardware_flops:.3e} hardware FLOPs with {report.recompute} recomputation"
    cost = f", cost {report.cost:,.0f} at {report.price:g} per GPU-hour" if report.cost is not None else ""
    label = mfu_label(report)
    return [
        Text(f"{flops}."),
        Text(
            f"{label[0].upper()}{label[1:]}: {report.gpu_hours:,.0f} GPU-hours, {report.days:,.1f} days on "
            f"{report.gpus:,} GPUs{cost}."
        ),
    ]


def _components(report: TrainReport) -> Grid:
    grid = Grid(
        [
            Column("Component", justify="left", key=True, footer="Total"),
            Column("FLOPs/token", "Per token", footer=approx(report.flops_per_token)),
            Column("Run FLOPs", "Run", footer=f"{report.components.total:.3e}"),
            Column("Share", footer="100%"),
        ]
    )
    components = report.components
    for name, label in FLOPS_COMPONENTS:
        value = getattr(components, name)
        if value:
            grid.add(
                label,
                approx(value / report.tokens),
                f"{value:.3e}",
                f"{100 * value / components.total:.1f}%",
            )
    return grid


def _conventions(report: TrainReport) -> Grid:
    measured = report.measured_tokens_per_second is not None
    columns = [
        Column("Convention", justify="left", key=True),
        Column("FLOPs/token", "Per token"),
        Column("vs exact", "Ratio"),
    ]
    if measured:
        columns.append(Column("MFU"))
    grid = Grid(columns)
    for convention in report.flops_per_token_by_convention:
        cells = [
            CONVENTION_NAMES[convention.name],
            approx(convention.flops_per_token),
            f"{convention.ratio_to_exact:.4f}",
        ]
        if measured:
            cells.append(f"{100 * convention.mfu:.1f}%" if convention.mfu is not None else "–")
        grid.add(*cells)
    if measured and report.hfu is not None:
        grid.add("HFU (ffncalc)", approx(report.hardware_flops / report.tokens), "", f"{100 * report.hfu:.1f}%")
    return grid


def _compute_optimal(report: TrainReport) -> Grid:
    optimal = report.compute_optimal
    grid = Grid(
        [
            Column(f"Compute-optimal for {optimal.compute:.3e} FLOPs", "Rule", justify="left", key=True),
            Column("Params"),
            Column("Tokens"),
            Column("Loss"),
        ]
    )
    for rule in optimal.rules:
        grid.add(
            rule.rule, approx_params(rule.params), approx_params(rule.tokens), f"{rule.loss:.3f}" if rule.loss else "–"
        )
    if optimal.tokens_per_param is not None and optimal.times_past_20 is not None:
        grid.add(
            "This run",
            approx_params(report.params),
            approx_params(report.tokens),
            "–",
        )
    return grid


def _past_optimal(report: TrainReport) -> str:
    optimal = report.compute_optimal
    if optimal.tokens_per_param is None or optimal.times_past_20 is None:
        return ""
    return (
        f"This run: {optimal.tokens_per_param:,.0f} tokens per parameter, {optimal.times_past_20:,.1f}× the "
        "compute-optimal 20."
    )


def _memory(report: TrainReport) -> str:
    memory, batch = report.memory, report.batch
    verdict = "fits" if memory.fits else "does not fit"
    micro = f"micro-batch {batch.micro_batch} sequence{'s' if batch.micro_batch > 1 else ''}"
    tensor = ""
    if batch.tensor_parallel > 1:
        tensor = f", {batch.tensor_parallel}-way tensor parallel" + (
            " + sequence parallel" if batch.sequence_parallel else ""
        )
    return (
        f"Training memory per GPU (ZeRO stage {memory.zero_stage}, {micro}{tensor}, "
        f"{'no' if report.recompute == 'none' else report.recompute} recomputation): {memory.per_gpu / GIB:,.1f} GiB of {memory.gpu_memory / GIB:,.1f} GiB — {verdict}."
    )


def _batch(report: TrainReport) -> str:
    batch = report.batch
    return (
        f"Global batch {batch.global_batch:,} sequence{'s' if batch.global_batch > 1 else ''} "
        f"({batch.tokens_per_step:,} tokens) a step = micro-batch "
        f"{batch.micro_batch} × {batch.data_parallel:,} data-parallel rank{'s' if batch.data_parallel > 1 else ''} × "
        f"{batch.accumulation_steps:,} accumulation step{'s' if batch.accumulation_steps > 1 else ''}: "
        f"{batch.steps:,} optimizer steps."
    )


def _short_limit(limiting: str) -> str:
    """'compute', 'bubble', or a collective's group: 'TP comm', 'EP comm' …"""
    return limiting if limiting in ("compute", "bubble") else limiting.split()[0] + " comm"


def _layout_name(layout: dict[str, int]) -> str:
    return " · ".join(f"{name} {layout[name]:,}" for name in ("tp", "pp", "cp", "ep", "dp", "vpp"))


def _layout_shown(report: TrainReport) -> bool:
    return report.layouts is None and report.layout_report is not None and report.gpus >= 2


def _layout(report: TrainReport, width: int) -> list[RenderableType]:
    """The layout's expected step, its busiest GPU's memory and its collectives (train without --plan)."""
    lay = report.layout_report
    if lay is None or not _layout_shown(report):
        return []
    recompute = "no" if report.recompute == "none" else report.recompute
    parts: list[RenderableType] = [
        Text(
            f"Layout {_layout_name(lay.layout)}, micro-batch {lay.layout['micro_batch']}, {lay.micro_batches:,} "
            f"micro-batches a step: expected {lay.expected_step_seconds:,.2f} s a step, "
            f"{lay.expected_tokens_per_second_per_gpu:,.0f} tokens/s per GPU, MFU {100 * lay.expected_mfu:.1f}% "
            f"(fitted expectation, not a ceiling nor a measurement); limited by {lay.limiting}."
        ),
        Text(
            f"Training memory of the busiest GPU (pipeline rank {lay.busiest_rank}; ZeRO stage {lay.zero_stage}, "
            f"{recompute} recomputation): {lay.per_gpu_bytes / GIB:,.1f} GiB of "
            f"{lay.gpu_memory / GIB:,.1f} GiB — {'fits' if lay.fits else 'does not fit'}; bubble "
            f"{100 * lay.bubble_fraction:.1f}% of the compute, exposed communication "
            f"{lay.exposed_communication_seconds:,.2f} s."
        ),
    ]
    if lay.communication:
        grid = Grid(
            [
                Column("Collective per step", "Collective", justify="left", key=True),
                Column("Link"),
                Column("GB sent"),
                Column("Seconds"),
                Column("Exposed"),
            ]
        )
        for c in lay.communication:
            grid.add(c.name, c.link, f"{c.bytes / 1e9:,.2f}", f"{c.seconds:.3f}", f"{c.exposed_seconds:.3f}")
        parts += fit(grid, width)
    return parts


def _plan(report: TrainReport, width: int) -> list[RenderableType]:
    """--plan: the layouts that fit, best first; the best-looking that do not, and why."""
    layouts = report.layouts or []
    parts: list[RenderableType] = []
    if layouts:
        best = layouts[0]
        parts.append(
            Text(
                f"Best layout for {report.gpus:,} GPUs: {_layout_name(best.layout)}, micro-batch "
                f"{best.layout['micro_batch']}: {best.expected_tokens_per_second_per_gpu:,.0f} tokens/s per GPU "
                f"expected, MFU {100 * best.expected_mfu:.1f}%, {best.per_gpu_bytes / GIB:,.1f} GiB on its busiest "
                "GPU (a fitted expectation, not a ceiling nor a measurement)."
            )
        )
    else:
        parts.append(Text(f"No layout searched fits {report.gpus:,} × {report.gpu}."))
    grid = Grid(
        [
            Column("TP", key=True),
            Column("PP"),
            Column("CP"),
            Column("EP"),
            Column("DP"),
            Column("VPP"),
            Column("MB"),
            Column("tok/s/GPU"),
            Column("MFU"),
            Column("GiB"),
            Column("Limit", justify="left"),
        ]
    )
    for lay in layouts[:10]:
        n = lay.layout
        grid.add(
            *(f"{n[k]:,}" for k in ("tp", "pp", "cp", "ep", "dp", "vpp", "micro_batch")),
            f"{lay.expected_tokens_per_second_per_gpu:,.0f}",
            f"{100 * lay.expected_mfu:.1f}%",
            f"{lay.per_gpu_bytes / GIB:,.1f}",
            _short_limit(lay.limiting),
        )
    if layouts:
        parts += fit(grid, width)
    for rejected in report.rejected or []:
        parts.append(
            Text(
                f"Not {_layout_name(rejected.layout)} ({rejected.expected_tokens_per_second_per_gpu:,.0f} tokens/s "
                f"per GPU if it fitted): {rejected.reason}."
            )
        )
    if report.plan_limits:
        parts.append(Text(f"· {report.plan_limits}", style="dim"))
    return parts
