"""The report of `ffncalc verify`."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from rich.console import Group
from rich.text import Text

from . import count, heading
from .layout import Column, Grid, fit

if TYPE_CHECKING:
    from ..verification import VerifyReport

SHOWN = 20  # problem tensors listed in the table; --json lists them all
PROBLEMS = ("missing", "unexpected", "wrong shape")


def verify_renderables(report: VerifyReport, width: int = 80) -> Group:
    """Bytes by dtype, tensors by verdict, what is not a parameter and why, every problem by name, the verdict."""
    files = f"{len(report.files)} file{'s' if len(report.files) != 1 else ''}"
    parts: list = [heading(_title(report, files))]
    if report.index_only:
        parts.append(Text(f"Only {report.files[0]} was found: names are matched, shapes are not known.", style="dim"))
    else:
        stored = Grid(
            [
                Column("Stored", justify="left", key=True, footer="Total"),
                Column("Bytes", footer=count(report.stored_bytes or 0)),
            ]
        )
        for dtype, size in report.stored_bytes_by_dtype.items():
            stored.add(dtype, count(size))
        parts += fit(stored, width)
    verdicts = Grid([Column("Stored tensors", justify="left", key=True), Column("Tensors")])
    for verdict in ("parameter", "quantization", "extra", "not saved", *PROBLEMS):
        if report.counts.get(verdict):
            verdicts.add(_verdict_label(verdict), count(report.counts[verdict]))
    parts += fit(verdicts, width)
    verdicts = Grid([Column("Parameters", justify="left", key=True), Column("Elements")])
    verdicts.add("In the checkpoint", count(report.checkpoint_params))
    verdicts.add("ffncalc's count", count(report.ffncalc_params))
    if report.index_total_size is not None and report.expected_bytes is not None:
        verdicts.add("Index total_size (bytes)", count(report.index_total_size))
        verdicts.add("Bytes the config gives", count(report.expected_bytes))
    parts += fit(verdicts, width)
    if report.extras:
        extras = Grid(
            [
                Column("Not parameters of the model", "Not parameters", justify="left", key=True),
                Column("Tensors"),
                Column("Elements"),
            ]
        )
        for extra in report.extras:
            extras.add(extra.kind, count(extra.tensors), count(extra.elements))
        parts += fit(extras, width)
        parts += [Text(f"· {extra.kind}: {extra.reason}", style="dim") for extra in report.extras]
    explained = Counter(t.reason for t in report.tensors if t.verdict == "parameter" and t.reason)
    parts += [Text(f"· {n:,} {'tensor' if n == 1 else 'tensors'} {why}", style="dim") for why, n in explained.items()]
    unsaved = [t for t in report.tensors if t.verdict == "not saved"]
    if unsaved:
        names = ", ".join(t.name for t in unsaved)
        parts.append(Text(f"· not saved: {names}: {unsaved[0].reason}", style="dim"))
    problems = [t for t in report.tensors if t.verdict in PROBLEMS]
    for tensor in problems[:SHOWN]:
        detail = ""
        if tensor.verdict == "wrong shape":
            detail = f" {tensor.shape}, the model's is {tensor.expected_shape}"
        parts.append(Text(f"{_verdict_label(tensor.verdict)}: {tensor.name}{detail}"))
    if len(problems) > SHOWN:
        parts.append(Text(f"… and {len(problems) - SHOWN:,} more (--json lists every tensor)"))
    parts += [Text(f"Missing file: {name} (the index names it)") for name in report.missing_files]
    parts += [Text(f"Index: {problem}") for problem in report.index_problems]
    if report.ignored:
        parts.append(Text(f"Not read (not the format transformers loads): {', '.join(report.ignored)}", style="dim"))
    parts += [Text(f"Note: {note}") for note in report.notes]
    verdict = (
        "OK: every stored tensor is a parameter of the model or explained above."
        if report.ok
        else "NOT OK: the checkpoint and the model differ in the ways listed above."
    )
    parts.append(Text(verdict, style="bold"))
    return Group(*parts)


def _title(report: VerifyReport, files: str) -> str:
    """What was checked against what: the model, and the checkpoint where it is not the model's own folder."""
    import os

    def shown(name: str) -> str:  # "." and ".." say nothing in a title: the folder's path does
        return os.path.abspath(name) if name in (".", "..") else name

    if report.checkpoint in (report.model, report.model.removesuffix("/config.json")):
        return f"Checkpoint of {shown(report.checkpoint)} ({files})"
    return f"{shown(report.model)}: checkpoint {shown(report.checkpoint)} ({files})"


def _verdict_label(verdict: str) -> str:
    return {
        "parameter": "Parameters",
        "quantization": "Quantization scales, zeros",
        "extra": "Explained extras",
        "not saved": "Not saved, by design",
        "missing": "Missing",
        "unexpected": "Unexpected",
        "wrong shape": "Wrong shape",
    }[verdict]
