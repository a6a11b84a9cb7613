"""The steps and settings of `ffncalc derive-dim`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich import box
from rich.console import Group
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from . import count

if TYPE_CHECKING:
    from ..dims import DeriveDimReport

def derive_dim_renderables(report: DeriveDimReport) -> Group:
    """The forward steps as a table, the backward solve as multiplier → multiple_of values, and notes."""
    parts: list = []
    derivation = report.derivation
    if derivation is not None:
        multiplier = "no multiplier" if derivation.multiplier is None else f"multiplier {derivation.multiplier:g}"
        table = Table(
            title=f"intermediate_size for dim {count(derivation.dim)}, {multiplier}, multiple_of {derivation.multiple_of:,}",
            box=box.SIMPLE_HEAD,
            title_justify="left",
        )
        table.add_column("Step")
        table.add_column("Formula", no_wrap=True)
        table.add_column("Value", justify="right", no_wrap=True)
        for step in derivation.steps:
            table.add_row(step.name, step.formula, count(step.value))
        parts.append(table)
        above = derivation.above_parameter_matched
        relation = f"{100 * abs(above):.1f}% {'above' if above >= 0 else 'below'} it"
        parts.append(
            Text(
                f"intermediate_size = {count(derivation.intermediate_size)} = {derivation.ratio_to_dim:.3g} × dim; "
                f"the parameter-matched width of a gated FFN (3·d·x = 8·d², x = 8d/3) is "
                f"{derivation.parameter_matched_width:,.1f}, so this width is {relation}."
            )
        )
    solve = report.solve
    if solve is not None:
        source = f"{escape(report.model)}: " if report.model else ""
        table = Table(
            title=f"{source}settings that give {count(solve.target)} from dim {count(solve.dim)} ({solve.ratio_to_dim:.3g} × dim)",
            box=box.SIMPLE_HEAD,
            title_justify="left",
        )
        table.add_column("ffn_dim_multiplier", justify="right")
        table.add_column("multiple_of")
        by_multiplier: dict[float | None, list[int]] = {}
        for setting in solve.settings:
            by_multiplier.setdefault(setting.multiplier, []).append(setting.multiple_of)
        for multiplier, multiples in by_multiplier.items():
            table.add_row("none" if multiplier is None else f"{multiplier:g}", ", ".join(f"{m:,}" for m in multiples))
        if solve.settings:
            parts.append(table)
        searched = "none, " + ", ".join(f"{m:g}" for m in solve.searched_multipliers if m is not None)
        parts.append(
            Text(
                f"Searched multipliers {searched}; multiple_of "
                + ", ".join(f"{m:,}" for m in solve.searched_multiples_of)
                + ".",
                style="dim",
            )
        )
    parts += [Text(f"Note: {note}") for note in report.notes]
    return Group(*parts)
