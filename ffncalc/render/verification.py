"""The report of `ffncalc verify`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich import box
from rich.console import Group
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from . import count

if TYPE_CHECKING:
    from ..verification import VerifyReport

def verify_renderables(report: VerifyReport) -> Group:
    """Stored elements by dtype, what is not a parameter and why, then the comparison and its verdict."""
    table = Table(
        title=f"{escape(report.model)}: {escape(report.checkpoint)} ({len(report.files)} file{'s' if len(report.files) != 1 else ''})",
        box=box.SIMPLE_HEAD,
        title_justify="left",
        show_footer=True,
    )
    table.add_column("Stored", footer="Total stored")
    table.add_column("Elements", justify="right", no_wrap=True, footer=count(report.stored_elements))
    for dtype, elements in report.stored_by_dtype.items():
        table.add_row(escape(dtype), count(elements))
    parts: list = [table]
    if report.extras:
        extras = Table(title="Not parameters of the language model", box=box.SIMPLE_HEAD, title_justify="left")
        extras.add_column("What")
        extras.add_column("Tensors", justify="right", no_wrap=True)
        extras.add_column("Elements", justify="right", no_wrap=True)
        extras.add_column("Why", overflow="fold")
        for extra in report.extras:
            extras.add_row(escape(extra.kind), count(extra.tensors), count(extra.elements), escape(extra.reason))
        parts.append(extras)
    comparison = Table(box=box.SIMPLE_HEAD, show_header=False)
    comparison.add_column("What")
    comparison.add_column("Parameters", justify="right", no_wrap=True)
    if report.checkpoint_params is not None:
        comparison.add_row("Parameters in the checkpoint", count(report.checkpoint_params))
    comparison.add_row("ffncalc's count", count(report.ffncalc_params))
    parts.append(comparison)
    if report.mismatches:
        mismatches = Table(title="Differences nothing explains", box=box.SIMPLE_HEAD, title_justify="left")
        mismatches.add_column("Where")
        mismatches.add_column("Stored", justify="right", no_wrap=True)
        mismatches.add_column("ffncalc", justify="right", no_wrap=True)
        mismatches.add_column("Difference", justify="right", no_wrap=True)
        for mismatch in report.mismatches[:20]:
            mismatches.add_row(
                escape(mismatch.where), count(mismatch.stored), count(mismatch.expected), f"{mismatch.stored - mismatch.expected:+,}"
            )
        if len(report.mismatches) > 20:
            mismatches.caption = f"and {len(report.mismatches) - 20} more"
        parts.append(mismatches)
    for name in report.unexplained_tensors[:20]:
        parts.append(Text(f"Unexplained tensor: {name}"))
    parts += [Text(f"Note: {note}") for note in report.notes]
    verdict = (
        "OK: every stored element is a counted parameter or explained above."
        if report.ok
        else "NOT OK: the checkpoint and the count differ in ways listed above."
    )
    parts.append(Text(verdict, style="bold"))
    return Group(*parts)
