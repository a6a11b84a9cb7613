"""Tables and the chart of `ffncalc flops` and `ffncalc crossover`."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from rich.console import Group, RenderableType
from rich.text import Text

from ..compute import FLOPS_COMPONENTS
from . import approx, count, heading, info_lines, named, share
from .layout import Column, Grid, fit

if TYPE_CHECKING:
    from ..compute import CrossoverReport, FlopsReport

OPTIONAL_ROWS = ("mixer", "mixer_state", "other")  # shown only for models that have them
CHART_HEIGHT = 14
CHART_MAX_POINTS = 64


def flops_table(report: FlopsReport, width: int = 80) -> Group:
    """Per-token decode FLOPs at the context, the prefill of that many tokens, and training."""
    per_token, prefill = report.per_token, report.prefill
    causal = "causal" if report.causal else "non-causal"
    grid = Grid(
        [
            Column("Component", justify="left", key=True, footer="Total"),
            Column("Per token", "Token", footer=count(per_token.total)),
            Column("≈", footer=approx(per_token.total)),
            Column("Share", "Token %", footer="100.0%"),
            Column(f"Prefill ({causal})", "Prefill", footer=count(prefill.total)),
            Column("Share", "Prefill %", footer="100.0%"),
        ]
    )
    for field, label in FLOPS_COMPONENTS:
        decode_value, prefill_value = getattr(per_token, field), getattr(prefill, field)
        if field in OPTIONAL_ROWS and not (decode_value or prefill_value):
            continue
        grid.add(
            label,
            count(decode_value),
            approx(decode_value),
            share(decode_value, per_token.total),
            count(prefill_value),
            share(prefill_value, prefill.total),
        )
    title = (
        f"{named(report)} — FLOPs per generated token at context {count(report.context)}, "
        f"and for a prompt of {count(report.context)} tokens"
    )
    lines: list[RenderableType] = [
        Text(
            f"Training on {count(report.context)} tokens (3 × forward): {count(report.training)} FLOPs ≈ {approx(report.training)}"
        ),
    ]
    if report.mla_form == "absorbed":
        lines.append(Text("MLA in its weight-absorbed form (scores over the latent)."))
    lines += [Text(f"· {convention}", style="dim") for convention in report.conventions]
    image = _image_renderables(report, width) if report.image is not None else []
    audio = _audio_renderables(report, width) if report.audio is not None else []
    return Group(heading(title), *fit(grid, width), *lines, *image, *audio, *info_lines(report))


def _image_renderables(report: FlopsReport, width: int) -> list[RenderableType]:
    """One image through the vision tower and projector: how the tower reads it, and the FLOPs by part."""
    image = report.image
    assert image is not None
    tile = " (one tile; the processor decides how many)" if image.per_tile else ""
    title = (
        f"One {image.width} × {image.height} image{tile}: read at {image.resized_width} × {image.resized_height}, "
        f"{count(image.patches)} patches, {count(image.image_tokens)} tokens in the language model"
    )
    grid = Grid([Column("Part", justify="left", key=True, footer="Total"), Column("FLOPs", footer=count(image.total)),
                 Column("≈", footer=approx(image.total)), Column("Share", "%", footer="100.0%")])  # fmt: skip
    rows = [
        ("Patch embedding", image.patch_embedding),
        ("Attention projections", image.attention_projections),
        ("Attention scores", image.attention_scores),
        ("FFN", image.ffn),
        ("Projector", image.projector),
    ]
    if image.mixers:  # only towers with convolution layers (LFM3-VL) have the row
        rows.insert(4, ("Convolution layers", image.mixers))
    for label, value in rows:
        grid.add(label, count(value), approx(value), share(value, image.total))
    return [heading(title), *fit(grid, width)]


def _audio_renderables(report: FlopsReport, width: int) -> list[RenderableType]:
    """One audio clip through the speech encoder: the windows it is read as, and the FLOPs by part."""
    audio = report.audio
    assert audio is not None
    windows = f"{count(audio.windows)} window{'s' if audio.windows != 1 else ''} of {audio.window_seconds} s"
    into = (
        "positions for the decoder's cross-attention"
        if audio.audio_tokens is None
        else f"positions, {count(audio.audio_tokens)} tokens in the language model"
    )
    title = (
        f"A {audio.seconds:,} s clip: {windows}, {count(audio.frames)} mel frames, "
        f"{count(audio.encoder_positions)} encoder {into}"
    )
    grid = Grid([Column("Part", justify="left", key=True, footer="Total"), Column("FLOPs", footer=count(audio.total)),
                 Column("≈", footer=approx(audio.total)), Column("Share", "%", footer="100.0%")])  # fmt: skip
    rows = (
        ("Convolutions", audio.front_end),
        ("Attention projections", audio.attention_projections),
        ("Attention scores", audio.attention_scores),
        ("FFN", audio.ffn),
        ("Cross-attention K, V" if audio.audio_tokens is None else "Projector",
         audio.cross_attention_kv if audio.audio_tokens is None else audio.projector),
    )  # fmt: skip
    for label, value in rows:
        grid.add(label, count(value), approx(value), share(value, audio.total))
    return [heading(title), *fit(grid, width)]


CHART_MIN_WIDTH = 80  # narrower terminals get the chart only with --plot


def crossover_renderables(report: CrossoverReport, width: int, plot: bool | None = None) -> Group:
    """The crossover sentence, the table by context, the chart (PLOT None: when the terminal is wide enough), notes."""
    parts: list = [crossover_headline(report), crossover_table(report, width)]
    if plot or (plot is None and width >= CHART_MIN_WIDTH):
        parts.append(crossover_chart(report, width))
    return Group(*parts, *info_lines(report))


def crossover_headline(report: CrossoverReport) -> Text:
    what = "Attention-score FLOPs" if report.measure == "flops" else "KV-cache bytes read"
    per = "FLOPs per token" if report.measure == "flops" else "bytes per decode step"
    if report.crossover_context is None:
        return Text(f"{what} never overtake the FFN: {report.never_reason}.")
    if report.ffn == 0:
        return Text(f"The model has no FFN layer: from the first key, {what[0].lower() + what[1:]} exceed its 0 {per}.")
    exact = report.crossover_context
    at = (
        count(exact)
        if isinstance(exact, int)
        else f"{exact:,.2f} (first whole context {count(report.crossover_context_ceil or 0)})"
    )
    return Text(f"{what} overtake the FFN ({count(report.ffn)} {per}) at n* = {at} tokens.")


def crossover_table(report: CrossoverReport, width: int = 80) -> Group:
    growing = "Attention scores" if report.measure == "flops" else "KV cache"
    unit = "FLOPs per token" if report.measure == "flops" else f"bytes per decode step ({report.dtype})"
    # Mixers and other fixed costs get a column only when the model has them (hybrids, OPT-350m).
    fixed_other = any(row.mixer or row.mixer_state or row.other for row in report.rows)
    columns = [
        Column("Context", "n", key=True),
        Column("FFN"),
        Column("Attn projections", "Attn proj"),
        Column(growing, "Scores" if report.measure == "flops" else "KV"),
    ]
    if fixed_other:
        columns.append(Column("Mixers + other", "Mixers"))
    columns += [Column("Output head", "Head"), Column("Total"), Column("FFN share", "FFN%")]
    grid = Grid(columns)
    for row in report.rows:
        cells = [
            f"n* {count(row.context)}" if row.is_crossover else count(row.context),
            approx(row.ffn),
            approx(row.attention_projections),
            approx(row.attention_context),
        ]
        if fixed_other:
            cells.append(approx(row.mixer + row.mixer_state + row.other))
        cells += [approx(row.lm_head), approx(row.total), f"{100 * row.ffn_share:.1f}%"]
        grid.add(*cells, style="bold" if row.is_crossover else None)
    return Group(heading(f"{named(report)} — {unit} by context"), *fit(grid, width))


def crossover_chart(report: CrossoverReport, width: int = 80) -> RenderableType:
    """The FFN (flat) and the growing attention cost against the context, both axes logarithmic, n* marked.

    Both axes are log scale so that the FFN and the attention cost stay visible however far apart
    they grow (at a 1M context attention is a thousand times the FFN).
    """
    points = [p for p in report.curve if p.attention_context > 0]
    if not points or report.ffn <= 0:
        return Text("(no chart: no layer's attention grows with the context)", style="dim")
    unit = "FLOPs" if report.measure == "flops" else "B"
    values = [p.attention_context for p in points] + [report.ffn]
    low_value, high_value = min(values), max(values)
    labels = {"top": approx(high_value, unit), "ffn": approx(report.ffn, unit), "bottom": approx(low_value, unit)}
    label_width = max(len(text) for text in labels.values())
    columns = max(16, min(CHART_MAX_POINTS, width - label_width - 3))
    low, high = points[0].context, points[-1].context
    span = math.log(high / low) if high > low else 1.0
    value_span = math.log(high_value / low_value) if high_value > low_value else 1.0

    def to_x(context: float) -> int:
        return min(columns - 1, max(0, round(math.log(context / low) / span * (columns - 1))))

    def to_y(value: float) -> int:
        return min(CHART_HEIGHT - 1, max(0, round(math.log(value / low_value) / value_span * (CHART_HEIGHT - 1))))

    grid = [[" "] * columns for _ in range(CHART_HEIGHT)]
    ffn_row = to_y(report.ffn)
    for x in range(columns):
        grid[ffn_row][x] = "─"
    crossing = report.crossover_context_ceil
    marker = to_x(crossing) if crossing is not None and low <= crossing <= high else None
    if marker is not None:
        for y in range(CHART_HEIGHT):
            if grid[y][marker] == " ":
                grid[y][marker] = "┊"
    for point in points:  # the last point drawn in a column wins: the curve reads left to right
        grid[to_y(point.attention_context)][to_x(point.context)] = "•"
    row_labels = {CHART_HEIGHT - 1: labels["top"], ffn_row: labels["ffn"], 0: labels["bottom"]}
    text = Text()
    for y in reversed(range(CHART_HEIGHT)):
        text.append(f"{row_labels.get(y, ''):>{label_width}} │" + "".join(grid[y]) + "\n")
    text.append(" " * label_width + " └" + "─" * columns + "\n")
    left, right = count(low), count(high)
    text.append(" " * (label_width + 2) + left + " " * max(1, columns - len(left) - len(right)) + right + "\n")
    growing = "attention scores" if report.measure == "flops" else "KV cache"
    legend = f"─ FFN   • {growing}" + (f"   ┊ n* = {count(crossing or 0)}" if marker is not None else "")
    text.append(" " * (label_width + 2) + "context in tokens; both axes log scale\n")
    text.append(" " * (label_width + 2) + legend)
    return text
