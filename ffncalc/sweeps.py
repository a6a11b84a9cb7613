"""Sweeps: one command's headline figures for each value of one or two swept config fields.

Each point is the config as read with the sweep's values written in (``overrides``), counted by the same
function the command uses; the headline figures of each command are declared once here (``HEADLINES``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .headlines import Figure, Headline
from .results import ModelInfo, Result
from .values import field_values

if TYPE_CHECKING:
    from .loading import LoadedModel
    from .overrides import Override, Sweep


class SweepColumn(Result):
    name: str
    heading: str
    unit: str


class SweepRow(Result):
    """One point: the swept fields' values and the command's headline figures there."""

    values: dict[str, Any]
    figures: dict[str, Figure]


class SweepReport(ModelInfo):
    """A sweep of COMMAND: the headline figures of COMMAND at each point of the sweep."""

    command: str
    swept: list[str]
    columns: list[SweepColumn]
    rows: list[SweepRow]
    chart: str | None  # the figure charted against the (first) swept field


def run_sweep(
    loaded: LoadedModel,
    sweeps: tuple[Sweep, ...],
    command: str,
    measure: Callable[[LoadedModel], dict[str, Figure]],
    headlines: tuple[Headline, ...],
    chart: str | None = None,
) -> SweepReport:
    """COMMAND's headline figures at every point of SWEEPS (a grid for two), each point counted from the config
    as read with LOADED's own overrides and the point's values written in."""
    from .errors import FfncalcError
    from .loading import loaded_from
    from .overrides import parse_override, sweep_points

    base = tuple(parse_override(text) for text in loaded.info.overrides)
    as_type = loaded.info.counted_as
    rows = []
    for point in sweep_points(sweeps):
        try:
            at_point = loaded_from(loaded.raw, as_type, _merged(base, point))
        except FfncalcError as error:
            shown = ", ".join(str(override) for override in point)
            raise type(error)(f"`sweeps` at {shown}: {error}") from None
        rows.append(SweepRow(values={override.key: override.value for override in point}, figures=measure(at_point)))
    names = [headline.name for headline in headlines]
    if chart is not None and chart not in names:
        from .errors import UsageError

        raise UsageError(f"`chart` {chart!r}: chart one of {', '.join(names)}")
    return SweepReport(
        **field_values(loaded.info),
        command=command,
        swept=[sweep.key for sweep in sweeps],
        columns=[SweepColumn(name=h.name, heading=h.heading, unit=h.unit) for h in headlines],
        rows=rows,
        chart=chart or names[0],
    )


def _merged(base: tuple[Override, ...], point: tuple[Override, ...]) -> tuple[Override, ...]:
    """The `sets` overrides, then the point's values (a swept key replaces a `sets` of the same key)."""
    swept = {override.key for override in point}
    return tuple(override for override in base if override.key not in swept) + point
