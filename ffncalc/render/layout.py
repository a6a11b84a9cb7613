"""Tables that fit the terminal without cutting a value.

A table is declared as columns and rows of already-formatted text. ``fit`` lays it out for a width:
whole if it fits; else with shorter headings; else split into parts that repeat the row's key
columns; else, on a very narrow terminal, one "heading: value" line per cell. A number is never
cropped or ellipsised, and a split or stacked table says so.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from rich import box
from rich.console import Console, RenderableType
from rich.markup import escape
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from ..values import Value

Justify = Literal["left", "right"]
_MEASURE = Console(width=100_000, file=open("/dev/null", "w"), color_system=None)  # noqa: SIM115 - lives with the module


class Column(Value):
    """A column: its heading, a shorter one for narrow terminals, and whether it names the row."""

    heading: str
    short: str = ""
    justify: Justify = "right"
    key: bool = False  # repeated in every part when the table is split
    footer: str = ""


class Grid:
    """Columns and rows of formatted cells (plain text: escaped when drawn), with a style per row."""

    def __init__(self, columns: list[Column], show_header: bool = True) -> None:
        self.columns = columns
        self.rows: list[list[str]] = []
        self.styles: list[str | None] = []
        self.show_header = show_header

    def add(self, *cells: str, style: str | None = None) -> None:
        self.rows.append(list(cells))
        self.styles.append(style)


def fit(grid: Grid, width: int) -> list[RenderableType]:
    """GRID laid out for WIDTH columns: whole, with short headings, split, or as heading: value lines."""
    for short in (False, True):
        table = _table(grid, range(len(grid.columns)), short)
        if _width(table) <= width:
            return [table]
    keys = [i for i, column in enumerate(grid.columns) if column.key]
    others = [i for i in range(len(grid.columns)) if i not in keys]
    parts: list[list[int]] = []
    current: list[int] = []
    for index in others:
        if current and _width(_table(grid, keys + current + [index], True)) > width:
            parts.append(current)
            current = []
        current.append(index)
    if current:
        parts.append(current)
    if all(_width(_table(grid, keys + part, True)) <= width for part in parts):
        note = Text(f"(split in {len(parts)} parts to fit {width} columns; every value is shown)", style="dim")
        tables: list[RenderableType] = [_table(grid, keys + part, True) for part in parts]
        return [*tables, note]
    return _stacked(grid)


def _table(grid: Grid, indices: Sequence[int], short: bool) -> Table:
    columns = [grid.columns[i] for i in indices]
    footers = any(column.footer for column in grid.columns)
    table = Table(box=box.SIMPLE_HEAD, show_header=grid.show_header, show_footer=footers, pad_edge=False)
    for column in columns:
        heading = (column.short or column.heading) if short else column.heading
        table.add_column(escape(heading), justify=column.justify, no_wrap=True, footer=escape(column.footer))
    for row, style in zip(grid.rows, grid.styles, strict=True):
        table.add_row(*[escape(row[i]) for i in indices], style=style)
    return table


def _width(table: Table) -> int:
    return Measurement.get(_MEASURE, _MEASURE.options, table).maximum


def _stacked(grid: Grid) -> list[RenderableType]:
    """One block a row: its key cells, then "heading: value" for each other cell (for very narrow terminals)."""
    keys = [i for i, column in enumerate(grid.columns) if column.key]
    lines = Text()
    for row in grid.rows:
        label = " ".join(row[i] for i in keys if row[i]) or "—"
        lines.append(label + "\n", style="bold")
        for index, column in enumerate(grid.columns):
            if index not in keys and row[index]:
                lines.append(f"  {column.short or column.heading}: {row[index]}\n")
    footers = [(c.short or c.heading, c.footer) for c in grid.columns if c.footer and not c.key]
    if footers:
        lines.append("Total\n", style="bold")
        for heading, value in footers:
            lines.append(f"  {heading}: {value}\n")
    return [lines, Text("(one line a value, to fit this terminal; every value is shown)", style="dim")]
