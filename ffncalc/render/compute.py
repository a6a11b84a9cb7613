"""Tables and the chart of `ffncalc flops` and `ffncalc crossover`."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from rich import box
from rich.console import Group
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from . import approx, count, share

if TYPE_CHECKING:
    from ..compute import CrossoverReport, FlopsReport

def flops_table(report: FlopsReport) -> Group:
    """Per-token decode FLOPs at the context, the prefill of that many tokens, and training."""
    title = (
        f"{escape(report.model)} — FLOPs per generated token at context {count(report.context)}, "
        f"and for a prompt of {count(report.context)} tokens"
    )
    table = Table(title=title, box=box.SIMPLE_HEAD, show_footer=True, title_justify="left")
    per_token, prefill = report.per_token, report.prefill
    table.add_column("Component", footer="Total")
    table.add_column("Per token", justify="right", no_wrap=True, footer=count(per_token.total))
    table.add_column("≈", justify="right", no_wrap=True, footer=approx(per_token.total))
    table.add_column("Share", justify="right", no_wrap=True, footer="100.0%")
    prefill_heading = "Prefill" + (" (causal)" if report.causal else " (non-causal)")
    table.add_column(prefill_heading, justify="right", no_wrap=True, footer=count(prefill.total))
    table.add_column("Share", justify="right", no_wrap=True, footer="100.0%")
    rows = [
        ("FFN", "ffn"),
        ("Attention projections", "attention_projections"),
        ("Attention scores", "attention_scores"),
        ("Mixer projections", "mixer"),
        ("Mixer state (conv, recurrence)", "mixer_state"),
        ("Output head", "lm_head"),
        ("Other", "other"),
    ]
    for label, field in rows:
        if field in ("mixer", "mixer_state", "other") and not getattr(per_token, field):
            continue
        decode_value, prefill_value = getattr(per_token, field), getattr(prefill, field)
        table.add_row(
            label,
            count(decode_value),
            approx(decode_value),
            share(decode_value, per_token.total),
            count(prefill_value),
            share(prefill_value, prefill.total),
        )
    lines = [
        Text(f"Training on {count(report.context)} tokens (3 × forward): {count(report.training)} FLOPs ≈ {approx(report.training)}"),
    ]
    if report.mla_form == "absorbed":
        lines.append(Text("MLA in its weight-absorbed form (scores over the latent)."))
    lines += [Text(f"· {convention}", style="dim") for convention in report.conventions]
    return Group(table, *lines)


def crossover_headline(report: CrossoverReport) -> Text:
    what = "Attention-score FLOPs" if report.measure == "flops" else "KV-cache bytes read"
    per = "FLOPs per token" if report.measure == "flops" else "bytes per decode step"
    if report.crossover_context is None:
        return Text(f"{what} never overtake the FFN: {report.never_reason}.")
    exact = report.crossover_context
    at = count(exact) if isinstance(exact, int) else f"{exact:,.2f} (first whole context {count(report.crossover_context_ceil or 0)})"
    return Text(f"{what} overtake the FFN ({count(report.ffn)} {per}) at n* = {at} tokens.")


def crossover_table(report: CrossoverReport) -> Table:
    growing = "Attention scores" if report.measure == "flops" else "KV cache"
    unit = "FLOPs per token" if report.measure == "flops" else f"bytes per decode step ({report.dtype})"
    table = Table(
        title=f"{escape(report.model)} — {unit} by context", box=box.SIMPLE_HEAD, title_justify="left"
    )
    # Mixers and other fixed costs get a column only when the model has them (hybrids, OPT-350m).
    fixed_other = any(row.mixer or row.mixer_state or row.other for row in report.rows)
    table.add_column("Context", justify="right", no_wrap=True)
    headings = ["FFN", "Attn projections", growing] + (["Mixers + other"] if fixed_other else [])
    for heading in headings + ["Output head", "Total", "FFN share"]:
        table.add_column(heading, justify="right", no_wrap=True)
    for row in report.rows:
        label = f"n* {count(row.context)}" if row.is_crossover else count(row.context)
        cells = [approx(row.ffn), approx(row.attention_projections), approx(row.attention_context)]
        if fixed_other:
            cells.append(approx(row.mixer + row.mixer_state + row.other))
        table.add_row(
            label,
            *cells,
            approx(row.lm_head),
            approx(row.total),
            f"{100 * row.ffn_share:.1f}%",
            style="bold" if row.is_crossover else None,
        )
    return table


def crossover_chart(report: CrossoverReport, height: int = 14) -> Text:
    """FFN (flat) and the growing attention cost against context on a log₂ axis, n* marked."""
    points = report.curve
    width = len(points)
    low, high = points[0].context, points[-1].context
    top = max(max(point.attention_context for point in points), report.ffn) * 1.05 or 1

    def to_row(value: float) -> int:
        return min(height - 1, int(value / top * (height - 1) + 0.5))

    grid = [[" "] * width for _ in range(height)]
    ffn_row = to_row(report.ffn)
    for x in range(width):
        grid[ffn_row][x] = "─"
    crossing = report.crossover_context_ceil
    if crossing is not None and low <= crossing <= high and high > low:
        marker = round(math.log(crossing / low) / math.log(high / low) * (width - 1))
        for y in range(height):
            if grid[y][marker] == " ":
                grid[y][marker] = "┊"
    for x, point in enumerate(points):
        grid[to_row(point.attention_context)][x] = "•"
    unit = "FLOPs" if report.measure == "flops" else "B"
    labels = {height - 1: approx(top, unit), ffn_row: approx(report.ffn, unit), 0: "0"}
    text = Text()
    for y in reversed(range(height)):
        text.append(f"{labels.get(y, ''):>11} │" + "".join(grid[y]) + "\n")
    text.append(" " * 12 + "└" + "─" * width + "\n")
    left, right = count(low), f"{count(high)} tokens (log scale)"
    text.append(" " * 13 + left + " " * max(1, width - len(left) - len(right)) + right + "\n")
    growing_name = "attention scores" if report.measure == "flops" else "KV cache"
    legend = f"─ FFN   • {growing_name}"
    if crossing is not None:
        legend += f"   ┊ n* = {count(crossing)}"
    text.append(" " * 13 + legend)
    return text
