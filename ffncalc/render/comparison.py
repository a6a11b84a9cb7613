"""`ffncalc compare` as a table, CSV or Markdown."""

from __future__ import annotations

import sys
from pathlib import PurePath
from typing import TYPE_CHECKING, TextIO

from rich.console import Group
from rich.text import Text

from ..values import field_values
from . import approx_params, count, heading
from .layout import Column, Grid, fit

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
    "active_params_without_embedding": "Active without input table",
}


def compare_cells(row: CompareRow) -> dict[str, str]:
    """Each column formatted for people: separators, ratios to two decimals, shares in percent."""
    cells = {}
    for name, value in field_values(row).items():
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


def short_labels(models: list[str]) -> dict[str, str]:
    """A short label per model: a Hub id's name, a config file's folder; the whole name where two would clash."""

    def short(model: str) -> str:
        path = PurePath(model)
        if path.name == "config.json" and path.parent.name:
            return path.parent.name
        return path.name.removesuffix(".json") or model

    labels = {model: short(model) for model in models}
    counts: dict[str, int] = {}
    for label in labels.values():
        counts[label] = counts.get(label, 0) + 1
    return {model: label if counts[label] == 1 else model for model, label in labels.items()}


def compare_table(rows: list[CompareRow], width: int = 80) -> Group:
    """The comparison for a terminal: short model names, totals rounded (exact ones in --format csv/json)."""
    labels = short_labels([row.model for row in rows])
    grid = Grid(
        [
            Column("Model", justify="left", key=True),
            Column("Hidden"),
            Column("FFN width", "Width"),
            Column("× hidden", "×H"),
            Column("FFN", justify="left"),
            Column("Experts"),
            Column("FFN / layer", "FFN/layer"),
            Column("FFN share", "FFN%"),
            Column("Attention share", "Attn%"),
            Column("Total"),
            Column("Active"),
        ]
    )
    for row in rows:
        cells = compare_cells(row)
        experts = ""
        if row.num_experts is not None:
            experts = f"{row.num_experts}/{row.experts_per_token}" + (
                f"+{row.shared_experts}" if row.shared_experts else ""
            )
        label = labels[row.model] + ("" if row.layers == "all" else f" ({row.layers})")
        grid.add(
            label,
            cells["hidden_size"],
            cells["ffn_width"],
            cells["width_ratio"],
            cells["ffn_kind"],
            experts,
            cells["ffn_params_per_layer"],
            cells["ffn_share"],
            cells["attention_share"],
            approx_params(row.total_params),
            approx_params(row.active_params)
            + (f" ({approx_params(row.active_params_without_embedding)})" if row.num_experts is not None else ""),
        )
    caption = Text(
        "Width: FFN width (one expert's for MoE); × hidden: width / hidden; Experts: routed/per token+shared. "
        "Total: the whole model, a multimodal model's towers included. Active: per text token, with (and in "
        "brackets without) the input embedding table; model cards quote either. Rounded: --format csv or --json for exact values.",
        style="dim",
    )
    return Group(heading("FFN design, side by side"), *fit(grid, width), caption)


def compare_csv(rows: list[CompareRow], file: TextIO | None = None) -> None:
    """CSV with raw values (exact integers, ratios as decimals), one header line of field names."""
    import csv

    writer = csv.writer(file or sys.stdout, lineterminator="\n")
    for number, row in enumerate(rows):
        values = field_values(row)
        if number == 0:
            writer.writerow(list(values))
        writer.writerow(["" if value is None else value for value in values.values()])


def compare_markdown(rows: list[CompareRow], file: TextIO | None = None) -> None:
    """A GitHub-flavoured Markdown table with the same formatting as the terminal table."""
    out = file or sys.stdout
    names = list(COMPARE_HEADINGS)
    out.write("| " + " | ".join(COMPARE_HEADINGS[name] for name in names) + " |\n")
    out.write(
        "|"
        + "|".join(
            "---" if name in ("model", "family", "layers", "activation", "ffn_kind") else "---:" for name in names
        )
        + "|\n"
    )
    for row in rows:
        cells = compare_cells(row)
        out.write("| " + " | ".join(cells[name].replace("|", "\\|") for name in names) + " |\n")


def compare_brief(rows: list[CompareRow], width: int = 80) -> Group:
    """--brief: one line per row, its FFN width against hidden and its share of the parameters."""
    labels = short_labels([row.model for row in rows])
    lines = [
        Text(
            f"{labels[row.model]}{'' if row.layers == 'all' else f' ({row.layers})'}: FFN {row.ffn_width:,} "
            f"({row.width_ratio:.2f} × {row.hidden_size:,}), {100 * row.ffn_share:.1f}% of "
            f"{approx_params(row.total_params)} parameters"
        )
        for row in rows
    ]
    return Group(heading("FFN design, side by side"), *lines)
