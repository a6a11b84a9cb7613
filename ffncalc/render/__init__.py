"""Presenting results: rich tables for people, JSON for scripts. Nothing here computes a count.

One module per command's output; this one holds what they share: the console, JSON, and
number formatting (thousands separators, shares, rounded magnitudes).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from itertools import pairwise
from typing import TYPE_CHECKING, TextIO

from rich.console import Console, Group
from rich.text import Text

from ..results import Result, json_data, json_text

if TYPE_CHECKING:
    from ..results import ModelInfo

__all__ = [
    "Group",
    "approx",
    "count",
    "export",
    "heading",
    "info_lines",
    "make_console",
    "named",
    "print_json",
    "share",
    "show",
]


MIN_WIDTH, FALLBACK_WIDTH = 40, 80  # below 40 columns the terminal wraps ffncalc's lines, which never break a number


def make_console(file: TextIO | None = None) -> Console:
    """A console on stdout that never wraps numbers and leaves colour to the terminal.

    A COLUMNS of 0 or less reads as unknown (80 columns); a positive one below MIN_WIDTH as MIN_WIDTH.
    """
    console = Console(file=file or sys.stdout, highlight=False, soft_wrap=False)
    if console.width <= 0:
        console.width = FALLBACK_WIDTH
    elif console.width < MIN_WIDTH:
        console.width = MIN_WIDTH
    return console


def show(console: Console, *renderables: object) -> None:
    """Print to a terminal as rich draws it; into a pipe or file, as plain lines without trailing spaces."""
    if console.is_terminal:
        console.print(*renderables)
        return
    with console.capture() as captured:
        console.print(*renderables)
    console.file.write("".join(line.rstrip() + "\n" for line in captured.get().splitlines()))


def print_json(result: Result | Sequence[Result] | dict, file: TextIO | None = None) -> None:
    """Exactly one JSON document: integers stay integers, no units or rounding."""
    from ..streams import can_encode

    out = file or sys.stdout
    if isinstance(result, Result):
        text = json_text(result)
    elif isinstance(result, dict):
        text = json.dumps(result, indent=2, ensure_ascii=False)
    else:
        text = json.dumps([json_data(item) for item in result], indent=2, ensure_ascii=False)
    if not can_encode(out, text):  # an ASCII stream: \uXXXX escapes, the same JSON document
        text = json.dumps(json.loads(text), indent=2)
    out.write(text + "\n")


def count(value: int) -> str:
    """4096 → '4,096'."""
    return f"{value:,}"


def share(part: int, whole: int) -> str:
    """A percentage with one decimal, or two significant digits below 1% (norms are tiny)."""
    if whole == 0:
        return "–"
    percent = 100 * part / whole
    if percent == 0 or percent >= 1:
        return f"{percent:.1f}%"
    return f"{percent:.2g}%"


def layer_ranges(indices: Sequence[int]) -> str:
    """Layer indices as people read them: [0, 1, 2, 5, 7, 8] → '0–2, 5, 7–8'; every other layer as 'even 0–34' or
    'odd 1–35'; any other step as 'every 6th, 5–53'; all but such a pattern as '0–25 but every 6th, 5–23'."""
    if len(indices) >= 3:
        step = _step(indices)
        if step is not None:
            return _every(indices[0], indices[-1], step)
        whole = range(indices[0], indices[-1] + 1)
        present = set(indices)
        missing = [index for index in whole if index not in present]
        if len(missing) >= 2 and _step(missing) is not None:
            return f"{indices[0]}–{indices[-1]} but {_every(missing[0], missing[-1], _step(missing) or 1)}"
    return _runs(indices)


def _step(indices: Sequence[int]) -> int | None:
    """The common difference of INDICES when they step evenly by 2 or more, else None."""
    step = indices[1] - indices[0]
    if step < 2 or any(b - a != step for a, b in pairwise(indices)):
        return None
    return step


def _every(first: int, last: int, step: int) -> str:
    if step == 2:
        return f"{'even' if first % 2 == 0 else 'odd'} {first}–{last}"
    suffix = {1: "st", 2: "nd", 3: "rd"}.get(step % 10 if step % 100 not in (11, 12, 13) else 0, "th")
    return f"every {step}{suffix}, {first}–{last}"


def _runs(indices: Sequence[int]) -> str:
    ranges: list[str] = []
    start = previous = indices[0]
    for index in list(indices[1:]) + [None]:
        if index is not None and index == previous + 1:
            previous = index
            continue
        ranges.append(str(start) if start == previous else f"{start}–{previous}")
        if index is not None:
            start = previous = index
    return ", ".join(ranges)


SI_PREFIXES = ["", "k", "M", "G", "T", "P", "E", "Z"]


def approx(value: float, unit: str = "") -> str:
    """15,009,316,864 → '15.0 G' (decimal prefixes, three significant figures)."""
    magnitude = 0
    while abs(value) >= 1000 and magnitude < len(SI_PREFIXES) - 1:
        value /= 1000
        magnitude += 1
    # three significant figures, trailing zeros kept (7.50 B, not 7.5 B)
    text = f"{value:.3g}" if magnitude == 0 else f"{value:.1f}" if value >= 100 else f"{value:#.3g}"
    return f"{text} {SI_PREFIXES[magnitude]}{unit}".rstrip()


def approx_params(value: int) -> str:
    """8,030,261,248 → '8.03 B' (K, M, B, T as parameter counts are usually written)."""
    return approx(value).replace(" k", " K").replace(" G", " B")


def named(info: ModelInfo) -> str:
    """The model as a title names it: changed fields (--set) said in brackets, so a variant is never mistaken for it."""
    return info.model + (f" [changed: {', '.join(info.overrides)}]" if info.overrides else "")


def heading(text: str) -> Text:
    """A title: its own line, wrapping at the terminal's width (a table's title would wrap at the table's)."""
    return Text(text, style="bold")


def info_lines(info: ModelInfo) -> list[Text]:
    """What the tables rest on, under them: the class counted, every default taken, and the notes."""
    lines = []
    if info.defaults_used:
        taken = "; ".join(
            f"{d.field} = {_short_value(d.value)}" + (f" ({d.rule})" if d.rule else "") for d in info.defaults_used
        )
        lines.append(Text(f"Defaults: the config leaves out {taken}; transformers' values are used.", style="dim"))
    for note in info.notes:
        lines.append(Text(f"Note: {note}"))
    return lines


def _short_value(value: object) -> str:
    """A default as config.json would spell it; a long list by what it holds (the JSON has it whole)."""
    if isinstance(value, list) and len(value) > 6:
        kinds: dict[str, int] = {}
        for item in value:
            kinds[str(item)] = kinds.get(str(item), 0) + 1
        return f"{len(value)} entries: " + ", ".join(f"{n} × {kind}" for kind, n in kinds.items())
    return json.dumps(value)
