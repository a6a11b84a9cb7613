"""The steps and settings of `ffncalc derive-dim`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Group
from rich.text import Text

from . import count, heading
from .layout import Column, Grid, fit

if TYPE_CHECKING:
    from ..ffn_width import DeriveDimReport


def derive_dim_renderables(report: DeriveDimReport, width: int = 80) -> Group:
    """The forward steps as a table, the backward solve as multiplier → multiple_of values, and notes."""
    parts: list = []
    derivation = report.derivation
    if derivation is not None:
        multiplier = "no multiplier" if derivation.multiplier is None else f"multiplier {derivation.multiplier:g}"
        parts.append(
            heading(
                f"intermediate_size for dim {count(derivation.dim)}, {multiplier}, multiple_of {derivation.multiple_of:,}"
            )
        )
        grid = Grid([Column("Step", justify="left", key=True), Column("Formula", justify="left"), Column("Value")])
        for step in derivation.steps:
            grid.add(step.name, step.formula, count(step.value))
        parts += fit(grid, width)
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
        source = f"{report.model}: " if report.model else ""
        title = f"{source}settings that give {count(solve.target)} from dim {count(solve.dim)} ({solve.ratio_to_dim:.3g} × dim)"
        grid = Grid([Column("ffn_dim_multiplier", "multiplier", key=True), Column("multiple_of", justify="left")])
        by_multiplier: dict[float | None, list[int]] = {}
        for setting in solve.settings:
            by_multiplier.setdefault(setting.multiplier, []).append(setting.multiple_of)
        for factor, multiples in by_multiplier.items():
            grid.add("none" if factor is None else f"{factor:g}", ", ".join(f"{m:,}" for m in multiples))
        if solve.settings:
            parts += [heading(title), *fit(grid, width)]
        else:  # the answer first: no setting of the rule gives this width
            parts.append(
                heading(
                    f"{source}{'n' if source else 'N'}o setting of Llama's rule gives {count(solve.target)} from dim {count(solve.dim)} "
                    f"({solve.ratio_to_dim:.3g} × dim)"
                )
            )
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
