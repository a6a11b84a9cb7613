"""Table layout (ffncalc/render/layout.py): fit() decides without drawing, and GridTable draws what rich's Table
would, character for character and style for style (rich's Table is the oracle here)."""

from hypothesis import assume, given, settings
from hypothesis import strategies as st
from rich import box
from rich.cells import cell_len
from rich.console import Console
from rich.markup import escape
from rich.segment import Segment
from rich.table import Table

from ffncalc.render.layout import Column, Grid, GridTable, _cell_widths

# Cells as ffncalc writes them, and harder ones: wide (CJK) and zero-width characters, markup-like brackets.
text = st.lists(st.sampled_from(["1", ",", "a", " ", "中", "é", "\u200b", "[b]", "—"]), max_size=8).map("".join)
CONSOLE = Console(width=10_000, color_system="truecolor", force_terminal=True)


def rich_table(grid, indices, short):
    """The rich Table ffncalc drew before GridTable."""
    footers = any(column.footer for column in grid.columns)
    table = Table(box=box.SIMPLE_HEAD, show_header=grid.show_header, show_footer=footers, pad_edge=False)
    for column in (grid.columns[i] for i in indices):
        heading = (column.short or column.heading) if short else column.heading
        table.add_column(escape(heading), justify=column.justify, no_wrap=True, footer=escape(column.footer))
    for row, style in zip(grid.rows, grid.styles, strict=True):
        table.add_row(*[escape(row[i]) for i in indices], style=style)
    return table


def styled_characters(renderable):
    """Each line drawn as (character, style) pairs: equal however the segments are split."""
    lines = Segment.split_lines(CONSOLE.render(renderable, CONSOLE.options))
    return [[(char, segment.style or None) for segment in line for char in segment.text] for line in lines]


@st.composite
def grids(draw):
    count = draw(st.integers(1, 6))
    columns = [
        Column(draw(text), short=draw(text), justify=draw(st.sampled_from(["left", "right"])), footer=draw(text))
        for _ in range(count)
    ]
    grid = Grid(columns, show_header=draw(st.booleans()))
    for _ in range(draw(st.integers(0, 5))):
        grid.add(*[draw(text) for _ in range(count)], style=draw(st.sampled_from([None, "dim", "bold", "red"])))
    indices = draw(st.lists(st.integers(0, count - 1), min_size=1, max_size=count, unique=True))
    return grid, indices, draw(st.booleans())


def drawable(grid, indices, short):
    """Every shown column has something to show, as every column ffncalc draws does. (rich draws a column with
    nothing in it, no heading, cell or footer, by rules of its own: one cell wide alone, its padding unstyled.)"""
    footers = any(column.footer for column in grid.columns)
    cells = _cell_widths(grid)
    for index in indices:
        column = grid.columns[index]
        heading = (column.short or column.heading) if short else column.heading
        shown = [cells[index], cell_len(heading) if grid.show_header else 0, cell_len(column.footer) if footers else 0]
        if not any(shown):
            return False
    return True


@settings(max_examples=150, deadline=None)
@given(grids())
def test_a_grid_table_is_as_wide_as_rich_draws_the_same_table(case):
    grid, indices, short = case
    assume(drawable(grid, indices, short))
    drawn = {sum(cell_len(char) for char, _ in line) for line in styled_characters(rich_table(grid, indices, short))}
    assert drawn == {GridTable(grid, indices, short, _cell_widths(grid)).width}


@settings(max_examples=150, deadline=None)
@given(grids())
def test_a_grid_table_draws_every_character_and_style_as_rich_draws_the_same_table(case):
    grid, indices, short = case
    assume(drawable(grid, indices, short))
    drawn = styled_characters(GridTable(grid, indices, short, _cell_widths(grid)))
    assert drawn == styled_characters(rich_table(grid, indices, short))


def test_a_column_is_as_wide_as_its_widest_cell_heading_or_footer():
    grid = Grid([Column("Model", justify="left"), Column("Total", footer="8,030,261,248")])
    grid.add("meta-llama/Llama-3.1-8B", "1")
    # 23 + 1 padding | rule | 1 padding + 13, and the box's two edges: 23 + 1 + 1 + 1 + 13 + 2 = 41.
    assert GridTable(grid, [0, 1], False, _cell_widths(grid)).width == 41


def test_a_line_break_in_a_cell_is_drawn_as_a_space():
    grid = Grid([Column("Model", justify="left")])
    grid.add("evil\nname.json")
    assert grid.rows == [["evil name.json"]]
