"""`ffncalc compare` as a table, CSV or Markdown."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, TextIO

from rich import box
from rich.markup import escape
from rich.table import Table

from . import approx_params, count

if TYPE_CHECKING:
    from ..comparison import CompareRow

COMPARE_HEADINGS = {
    "model": "Model",
    "family": "Family",
    "layers": "Layers",
    "hidden_size": "Hidden",
    "ffn_width": "FFN width",
    "width_ratio": "Width / hidden",
    "num_experts": "Experts",
    "experts_per_token": "Per token",
    "shared_experts": "Shared",
    "activation": "hidden_act",
    "ffn_kind": "FFN",
    "gated": "Gated",
    "ffn_params_per_layer": "FFN params / layer",
    "ffn_share": "FFN share",
    "attention_share": "Attention share",
    "total_params": "Total",
    "active_params": "Active / token",
}


def compare_cells(row: CompareRow) -> dict[str, str]:
    """Each column formatted for people: separators, ratios to two decimals, shares in percent."""
    cells = {}
    for name, value in row.model_dump().items():
        if value is None:
            cells[name] = ""
        elif name in ("ffn_share", "attention_share"):
            cells[name] = f"{100 * value:.1f}%"
        elif name == "width_ratio":
            cells[name] = f"{value:.2f}"
        elif isinstance(value, bool):
            cells[name] = "yes" if value else "no"
        elif isinstance(value, int):
            cells[name] = count(value)
        else:
            cells[name] = str(value)
    return cells


COMPARE_TABLE_COLUMNS = (  # heading, right-aligned, shown below 100 columns
    ("Model", False, True),
    ("Hidden", True, False),
    ("Width", True, True),
    ("×H", True, True),
    ("FFN", False, True),
    ("Experts", True, True),
    ("FFN/layer", True, True),
    ("FFN%", True, True),
    ("Attn%", True, False),
    ("Total", True, True),
    ("Active", True, False),
)


def compare_table(rows: list[CompareRow], width: int = 120) -> Table:
    """The comparison for a terminal: short model names, totals rounded (exact ones in --format csv/json).

    Below 100 columns, hidden size, attention share and active parameters are left out.
    """
    wide = width >= 100
    table = Table(
        title="FFN design, side by side (totals rounded; --format csv or --json for exact values)",
        box=box.SIMPLE_HEAD,
        title_justify="left",
        padding=(0, 1),
        pad_edge=False,
        collapse_padding=True,
        caption="Width: FFN width (one expert's for MoE); ×H: width / hidden; Experts: routed/per token+shared.",
        caption_justify="left",
    )
    shown = [(heading, right) for heading, right, narrow in COMPARE_TABLE_COLUMNS if wide or narrow]
    for heading, right in shown:
        if heading == "Model":
            table.add_column(heading, overflow="fold", min_width=12)
        else:
            table.add_column(heading, justify="right" if right else "left", no_wrap=True)
    for row in rows:
        cells = compare_cells(row)
        experts = ""
        if row.num_experts is not None:
            experts = f"{row.num_experts}/{row.experts_per_token}" + (f"+{row.shared_experts}" if row.shared_experts else "")
        values = {
            "Model": escape(row.model.split("/")[-1] + ("" if row.layers == "all" else f" ({row.layers})")),
            "Hidden": cells["hidden_size"],
            "Width": cells["ffn_width"],
            "×H": cells["width_ratio"],
            "FFN": escape(cells["ffn_kind"]),
            "Experts": experts,
            "FFN/layer": cells["ffn_params_per_layer"],
            "FFN%": cells["ffn_share"],
            "Attn%": cells["attention_share"],
            "Total": approx_params(row.total_params),
            "Active": approx_params(row.active_params),
        }
        table.add_row(*[values[heading] for heading, _ in shown])
    return table


def compare_csv(rows: list[CompareRow], file: TextIO | None = None) -> None:
    """CSV with raw values (exact integers, ratios as decimals), one header line of field names."""
    import csv

    writer = csv.writer(file or sys.stdout, lineterminator="\n")
    for number, row in enumerate(rows):
        values = row.model_dump()
        if number == 0:
            writer.writerow(list(values))
        writer.writerow(["" if value is None else value for value in values.values()])


def compare_markdown(rows: list[CompareRow], file: TextIO | None = None) -> None:
    """A GitHub-flavoured Markdown table with the same formatting as the terminal table."""
    out = file or sys.stdout
    names = list(COMPARE_HEADINGS)
    out.write("| " + " | ".join(COMPARE_HEADINGS[name] for name in names) + " |\n")
    out.write("|" + "|".join("---" if name in ("model", "family", "layers", "activation", "ffn_kind") else "---:" for name in names) + "|\n")
    for row in rows:
        cells = compare_cells(row)
        out.write("| " + " | ".join(cells[name].replace("|", "\\|") for name in names) + " |\n")
