"""Presenting results: rich tables for people, JSON for scripts. Nothing here computes a count.

One module per command's output; this one holds what they share: the console, JSON, and
number formatting (thousands separators, shares, rounded magnitudes).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, TextIO

from pydantic import BaseModel
from rich.console import Console, Group
from rich.text import Text

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


def print_json(result: BaseModel | Sequence[BaseModel] | dict, file: TextIO | None = None) -> None:
    """Exactly one JSON document: integers stay integers, no units or rounding."""
    from ..streams import can_encode

    out = file or sys.stdout
    if isinstance(result, BaseModel):
        text = result.model_dump_json(indent=2)
    elif isinstance(result, dict):
        text = json.dumps(result, indent=2, ensure_ascii=False)
    else:
        text = json.dumps([item.model_dump(mode="json") for item in result], indent=2, ensure_ascii=False)
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
    """[0, 1, 2, 5, 7, 8] → '0–2, 5, 7–8'."""
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
