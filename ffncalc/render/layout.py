"""Tables that fit the terminal without cutting a value.

A table is declared as columns and rows of already-formatted text. ``fit`` lays it out for a width:
whole if it fits; else with shorter headings; else split into parts that repeat the row's key
columns; else, on a very narrow terminal, one "heading: value" line per cell. A number is never
cropped or ellipsised, and a split or stacked table says so.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Literal

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderableType
from rich.measure import Measurement
from rich.segment import Segment
from rich.style import Style
from rich.text import Text

from ..values import Value

Justify = Literal["left", "right"]


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

    def __repr__(self) -> str:
        return f"Grid({self.columns!r}, rows={self.rows!r}, styles={self.styles!r}, show_header={self.show_header})"

    def add(self, *cells: str, style: str | None = None) -> None:
        """A row; a row is one line, so a line break in a cell (a file name can hold one) is drawn as a space."""
        self.rows.append([cell.replace("\r", " ").replace("\n", " ") for cell in cells])
        self.styles.append(style)


def fit(grid: Grid, width: int) -> list[RenderableType]:
    """GRID laid out for WIDTH columns: whole, with short headings, split, or as heading: value lines."""
    cells = _cell_widths(grid)

    def fits(indices: Sequence[int], short: bool) -> bool:
        return GridTable(grid, indices, short, cells).width <= width

    for short in (False, True):
        if fits(range(len(grid.columns)), short):
            return [GridTable(grid, range(len(grid.columns)), short, cells)]
    keys = [i for i, column in enumerate(grid.columns) if column.key]
    others = [i for i in range(len(grid.columns)) if i not in keys]
    parts: list[list[int]] = []
    current: list[int] = []
    for index in others:
        if current and not fits(keys + current + [index], True):
            parts.append(current)
            current = []
        current.append(index)
    if current:
        parts.append(current)
    if all(fits(keys + part, True) for part in parts):
        note = Text(f"(split in {len(parts)} parts to fit {width} columns; every value is shown)", style="dim")
        tables: list[RenderableType] = [GridTable(grid, keys + part, True, cells) for part in parts]
        return [*tables, note]
    return _stacked(grid)


class GridTable:
    """COLUMNS of a grid drawn as rich draws a Table(box=SIMPLE_HEAD, pad_edge=False) of no-wrap columns: a blank
    top edge, the bold headings, a rule, the rows in their styles, a blank line and the bold footers, a blank bottom
    edge. Drawn here, line by line, because rich lays out each of a table's cells on its own: 50 ms for the 131
    rows of `ffncalc models`. tests/test_layout.py holds every character and its style to rich's Table."""

    def __init__(self, grid: Grid, indices: Sequence[int], short: bool, cells: list[int]) -> None:
        self.grid, self.indices, self.short = grid, list(indices), short
        self.footers = any(column.footer for column in grid.columns)
        self.widths = [
            _column_width(grid, index, short, cells, self.footers, position, len(self.indices))
            for position, index in enumerate(self.indices)
        ]

    @property
    def width(self) -> int:
        """The columns, the box's two edges and one rule between columns (rich's Table._extra_width)."""
        return sum(self.widths) + 2 + len(self.widths) - 1

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(self.width, self.width)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[Segment]:
        grid, columns = self.grid, [self.grid.columns[i] for i in self.indices]
        blank = Segment(" " * self.width)
        yield from (blank, Segment.line())
        if grid.show_header:
            headings = [(column.short or column.heading) if self.short else column.heading for column in columns]
            yield from self._row(headings, columns, console.get_style("table.header"))
            yield Segment(" " + "─" * (sum(self.widths) + len(self.widths) - 1) + " ")
            yield Segment.line()
        for row, style in zip(grid.rows, grid.styles, strict=True):
            yield from self._row([row[i] for i in self.indices], columns, console.get_style(style or ""))
        if self.footers:
            yield from (blank, Segment.line())
            yield from self._row([column.footer for column in columns], columns, console.get_style("table.footer"))
        yield from (blank, Segment.line())

    def _row(self, texts: list[str], columns: list[Column], style: Style) -> Iterator[Segment]:
        """One line: each cell padded, justified and styled whole, the cells apart by one space."""
        yield Segment(" ")
        for position, (text, column, width) in enumerate(zip(texts, columns, self.widths, strict=True)):
            left = 0 if position == 0 else 1
            right = 0 if position == len(columns) - 1 else 1
            if column.justify == "right":
                text = text.rstrip()  # as rich's Text.justify: trailing spaces would push the value off the edge
            room = width - left - right - cell_len(text)
            text = text + " " * room if column.justify == "left" else " " * room + text
            yield Segment(" " * left + text + " " * right, style)
            if position < len(columns) - 1:
                yield Segment(" ")
        yield Segment(" ")
        yield Segment.line()


def _column_width(
    grid: Grid, index: int, short: bool, cells: list[int], footers: bool, position: int, count: int
) -> int:
    """A column's width as rich gives a no-wrap column: its widest cell, heading or footer, and its padding (one
    cell on each side but the table's outer ones: pad_edge=False)."""
    column = grid.columns[index]
    heading = (column.short or column.heading) if short else column.heading
    widest = max(
        cells[index],
        _text_width(heading) if grid.show_header else 0,
        _text_width(column.footer) if footers else 0,
    )
    return widest + (position > 0) + (position < count - 1)


def _cell_widths(grid: Grid) -> list[int]:
    """The widest cell of each column, in terminal cells (cells are plain text: what is drawn)."""
    widths = [0] * len(grid.columns)
    for row in grid.rows:
        for index, cell in enumerate(row):
            widths[index] = max(widths[index], _text_width(cell))
    return widths


def _text_width(text: str) -> int:
    return cell_len(text)


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
