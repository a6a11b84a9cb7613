"""--brief: a command's headline figures in one short block, the same figures a sweep row shows."""

from __future__ import annotations

from rich.console import Group
from rich.text import Text

from ..headlines import Figure, Headline
from ..results import ModelInfo, Result
from ..units import GIB
from . import heading, named, share


def word(value: Figure, name: str) -> str | None:
    """A figure that reads as a word whatever its unit: none (–), yes/no, a text, a share in percent; None for a
    number, which each table writes in its own unit."""
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, str):
        return value
    if name.endswith("share"):
        return share(round(float(value) * 1_000_000), 1_000_000)
    return None


def figure_text(value: Figure, headline: Headline) -> str:
    """A headline figure for reading: exact integers with separators, GiB beside bytes, shares in percent."""
    as_word = word(value, headline.name)
    if as_word is not None:
        return as_word
    assert isinstance(value, (int, float))
    if headline.unit == "bytes" and isinstance(value, int):
        return f"{value:,} bytes" + (f" ({value / GIB:,.2f} GiB)" if value >= GIB else "")
    # One number style: whole numbers with separators; a float at or above 1,000 to the unit with separators (never
    # 1.355e+06), a smaller one to four significant figures.
    if isinstance(value, int):
        text = f"{value:,}"
    elif abs(value) >= 1000:
        text = f"{value:,.0f}"
    else:
        text = f"{value:.4g}"
    return f"{text} {headline.unit}" if headline.unit and headline.unit != "bytes" else text


def brief_renderables(
    info: ModelInfo | Result, command: str, figures: dict[str, Figure], headlines: tuple[Headline, ...]
) -> Group:
    """A title (the model, where the report names one) and one "heading: figure" line per headline figure."""
    title = named(info) if isinstance(info, ModelInfo) else getattr(info, "model", None)
    shown = [h for h in headlines if figures.get(h.name) is not None]  # an engine's figures only with --engine
    width = max(len(h.heading) for h in shown)
    lines = [Text(f"{h.heading + ':':<{width + 1}} {figure_text(figures.get(h.name), h)}") for h in shown]
    return Group(heading(f"{title} — {command}" if title else command), *lines)
