"""A sweep's table, its terminal chart, and its CSV and Markdown forms."""

from __future__ import annotations

import csv
import json
import sys
from typing import Any

from rich.console import Group, RenderableType
from rich.text import Text

from ..headlines import Figure
from ..sweeps import SweepColumn, SweepReport
from ..units import GIB
from . import heading, info_lines
from .brief import word
from .layout import Column, Grid, fit

BAR = "█"


def _value(value: Any) -> str:
    """A swept value as config.json spells it (16384, null, "silu"); a bare word without quotes."""
    return value if isinstance(value, str) else json.dumps(value)


def _in_gib(report: SweepReport, column: SweepColumn) -> bool:
    """A bytes column is shown in GiB when every value is at least one GiB (exact bytes in --json and csv)."""
    values = [row.figures.get(column.name) for row in report.rows]
    return column.unit == "bytes" and all(isinstance(v, int) and v >= GIB for v in values)


def _unit(report: SweepReport, column: SweepColumn) -> str:
    if _in_gib(report, column):
        return " (GiB)"
    return f" ({column.unit})" if column.unit else ""


def _figure(value: Figure, column: SweepColumn, gib: bool = False) -> str:
    as_word = word(value, column.name)
    if as_word is not None:
        return as_word
    assert isinstance(value, (int, float))
    if gib:
        return f"{value / GIB:,.2f}"
    return f"{value:,}" if isinstance(value, int) else f"{value:.4g}"


def title(report: SweepReport) -> str:
    swept = " × ".join(report.swept)
    changed = f" [with {', '.join(report.overrides)}]" if report.overrides else ""
    return f"{report.model}{changed} — {report.command} by {swept} ({len(report.rows)} points)"


def _shown(report: SweepReport) -> list[SweepColumn]:
    """The columns with a value at some point (an engine's figures only where --engine was asked)."""
    return [c for c in report.columns if any(row.figures.get(c.name) is not None for row in report.rows)]


def sweep_renderables(report: SweepReport, width: int) -> RenderableType:
    columns = _shown(report)
    grid = Grid(
        [Column(key, justify="right", key=True) for key in report.swept]
        + [Column(c.heading + _unit(report, c)) for c in columns]
    )
    gib = {c.name: _in_gib(report, c) for c in columns}
    for row in report.rows:
        grid.add(
            *(_value(row.values[key]) for key in report.swept),
            *(_figure(row.figures.get(c.name), c, gib[c.name]) for c in columns),
        )
    parts: list[RenderableType] = [heading(title(report)), *fit(grid, width)]
    chart = chart_lines(report, width)
    if chart:
        parts += [Text(""), *chart]
    lines = info_lines(report)
    if lines:
        parts += [Text(""), *lines]
    return Group(*parts)


def chart_lines(report: SweepReport, width: int) -> list[Text]:
    """The charted figure against the swept value: one bar a point, longest for the largest value."""
    column = next((c for c in report.columns if c.name == report.chart), None)
    if column is None:
        return []
    points = [
        (" ".join(_value(row.values[key]) for key in report.swept), row.figures.get(column.name)) for row in report.rows
    ]
    numbers = [value for _, value in points if isinstance(value, (int, float)) and not isinstance(value, bool)]
    if not numbers or len(points) > 200:  # a bar per point stops being a picture past a screenful or two
        return []
    top = max(abs(value) for value in numbers) or 1
    label_width = max(len(label) for label, _ in points)
    gib = _in_gib(report, column)
    shown = {label: _figure(value, column, gib) for label, value in points}
    value_width = max(len(text) for text in shown.values())
    room = max(10, width - label_width - value_width - 4)
    lines = [Text(f"{column.heading}{_unit(report, column)} by {' × '.join(report.swept)}", style="bold")]
    for label, value in points:
        length = (
            round(room * abs(value) / top) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0
        )
        lines.append(
            Text(f"{label:>{label_width}} │{BAR * length}{' ' * (room - length)} {shown[label]:>{value_width}}")
        )
    return lines


def _header(report: SweepReport) -> list[str]:
    return [*report.swept, *(c.name for c in report.columns)]


def _cells(report: SweepReport) -> list[list[str]]:
    """Raw values: JSON spelling for swept values, exact integers and full-precision floats for figures."""
    return [
        [_value(row.values[key]) for key in report.swept]
        + ["" if row.figures.get(c.name) is None else str(row.figures[c.name]) for c in report.columns]
        for row in report.rows
    ]


def sweep_csv(report: SweepReport) -> None:
    writer = csv.writer(sys.stdout, lineterminator="\n")
    writer.writerow(_header(report))
    writer.writerows(_cells(report))


def sweep_markdown(report: SweepReport) -> None:
    header = _header(report)
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---:" for _ in header) + "|"]
    lines += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in _cells(report)]
    sys.stdout.write("\n".join(lines) + "\n")
