"""Presenting results: rich tables for people, JSON for scripts. Nothing here computes a count."""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, TextIO

from pydantic import BaseModel
from rich import box
from rich.console import Console, Group
from rich.markup import escape
from rich.table import Table
from rich.text import Text

if TYPE_CHECKING:  # only for annotations: a command imports the result classes it needs
    from .accounting import ParamsReport
    from .api import BundledModel
    from .comparison import CompareRow
    from .dims import DeriveDimReport
    from .compute import CrossoverReport, FlopsReport
    from .verification import VerifyReport

COMPONENT_HEADINGS = {"attention": "Attention", "ffn": "FFN", "norm": "Norms"}


def make_console(file: TextIO | None = None) -> Console:
    """A console on stdout that never wraps numbers and leaves colour to the terminal."""
    return Console(file=file or sys.stdout, highlight=False, soft_wrap=False)


def print_json(result: BaseModel | Sequence[BaseModel] | dict, file: TextIO | None = None) -> None:
    """Exactly one JSON document: integers stay integers, no units or rounding."""
    out = file or sys.stdout
    if isinstance(result, BaseModel):
        out.write(result.model_dump_json(indent=2))
    elif isinstance(result, dict):
        out.write(json.dumps(result, indent=2))
    else:
        out.write(json.dumps([item.model_dump(mode="json") for item in result], indent=2))
    out.write("\n")


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


def params_tables(report: ParamsReport) -> Group:
    """Summary by component, the per-layer structures, MoE totals, checkpoint extras and notes."""
    return Group(*_params_renderables(report))


def _params_renderables(report: ParamsReport) -> list:
    total = report.total_params
    components = report.components
    title = f"{escape(report.model)} — {escape(report.architecture)} ({escape(report.model_type)}), {report.num_layers} layers"
    summary = Table(title=title, box=box.SIMPLE_HEAD, show_footer=True, title_justify="left")
    summary.add_column("Component", footer="Total")
    summary.add_column("Parameters", justify="right", footer=count(total), no_wrap=True)
    summary.add_column("Share", justify="right", footer="100.0%", no_wrap=True)

    summary.add_row("FFN", count(components.ffn), share(components.ffn, total))
    summary.add_row("Attention", count(components.attention), share(components.attention, total))
    embeddings = components.embedding + components.lm_head
    if report.tie_word_embeddings:
        summary.add_row("Embeddings (tied with output head)", count(embeddings), share(embeddings, total))
    else:
        summary.add_row("Embeddings + output head", count(embeddings), share(embeddings, total))
        summary.add_row("  input embeddings", count(components.embedding), share(components.embedding, total))
        summary.add_row("  output head", count(components.lm_head), share(components.lm_head, total))
    summary.add_row("Norms", count(components.norm), share(components.norm, total))
    if components.other:
        summary.add_row("Other", count(components.other), share(components.other, total))
    renderables: list = [summary]

    layers = Table(title="Layers", box=box.SIMPLE_HEAD, title_justify="left")
    layers.add_column("Layers", overflow="fold")
    layers.add_column("Count", justify="right", no_wrap=True)
    layers.add_column("Attention", no_wrap=True)
    layers.add_column("FFN", no_wrap=True)
    layers.add_column("Per layer", justify="right", no_wrap=True)
    layers.add_column("All of them", justify="right", no_wrap=True)
    for group in report.layers:
        window = f", window {count(group.window)}" if group.window else ""
        ffn = f"MoE {group.activation}" if group.ffn_kind == "moe" else group.activation
        layers.add_row(
            layer_ranges(group.indices),
            str(len(group.indices)),
            f"{group.attention_kind.upper()}{window}",
            escape(ffn),
            count(group.params),
            count(group.params * len(group.indices)),
        )
    renderables.append(layers)

    # Layers that differ only in their window hold the same parts: one column for them.
    structures: dict[tuple, list[int]] = {}
    for group in report.layers:
        structures.setdefault(tuple(group.parts.items()), []).extend(group.indices)
    columns = [(dict(items), sorted(indices)) for items, indices in structures.items()]
    parts = Table(title="Parts of one layer", box=box.SIMPLE_HEAD, title_justify="left")
    parts.add_column("Part", no_wrap=True)
    for _, indices in columns:
        ranges = layer_ranges(indices)
        heading = "each layer" if len(columns) == 1 else (f"layers {ranges}" if len(ranges) <= 20 else f"{len(indices)} layers")
        parts.add_column(heading, justify="right", no_wrap=True)
    for component in ("attention", "ffn", "norm"):
        names: list[str] = []
        for named, _ in columns:
            names += [name for name in named if name.startswith(component + ".") and name not in names]
        subtotals = [sum(value for name, value in named.items() if name.startswith(component + ".")) for named, _ in columns]
        parts.add_row(Text(COMPONENT_HEADINGS[component], style="bold"), *[count(value) for value in subtotals])
        for name in names:
            parts.add_row("  " + name.split(".", 1)[1], *[count(named[name]) if name in named else "" for named, _ in columns])
    renderables.append(parts)

    if report.moe is not None and report.active_params is not None:
        moe = report.moe
        shared = f" + {moe.num_shared_experts} shared" if moe.num_shared_experts else ""
        experts = Table(
            title=f"Mixture of experts: {moe.moe_layers} MoE layers, {moe.num_experts} routed experts, "
            f"{moe.experts_per_token} per token{shared}",
            box=box.SIMPLE_HEAD,
            title_justify="left",
            show_header=False,
        )
        experts.add_column("What")
        experts.add_column("Value", justify="right", no_wrap=True)
        experts.add_column("Share", justify="right", no_wrap=True)
        experts.add_row("One expert", count(moe.expert_params), "")
        experts.add_row("All routed experts", count(moe.routed_expert_params), share(moe.routed_expert_params, total))
        if moe.shared_expert_params:
            experts.add_row("Shared experts", count(moe.shared_expert_params), share(moe.shared_expert_params, total))
        experts.add_row("Routers", count(moe.router_params), share(moe.router_params, total))
        experts.add_row("Active per token", count(report.active_params), share(report.active_params, total))
        experts.add_row(
            "  without the input embedding table",
            count(report.active_params_without_embedding or 0),
            share(report.active_params_without_embedding or 0, total),
        )
        renderables.append(experts)

    if report.checkpoint_extras:
        extras = Table(
            title="Stored by some checkpoints, not counted as parameters",
            box=box.SIMPLE_HEAD,
            title_justify="left",
        )
        extras.add_column("What")
        extras.add_column("Elements", justify="right", no_wrap=True)
        extras.add_column("Why", overflow="fold")
        for extra in report.checkpoint_extras:
            extras.add_row(escape(extra.name), count(extra.elements), escape(extra.reason))
        renderables.append(extras)

    for note in report.notes:
        renderables.append(Text(f"Note: {note}"))
    return renderables


def models_table(models: Sequence[BundledModel]) -> Table:
    """Bundled models: Hub id, family, model_type, total and active parameters."""
    table = Table(title="Bundled configs", box=box.SIMPLE_HEAD, title_justify="left")
    table.add_column("Model")
    table.add_column("Family")
    table.add_column("model_type")
    table.add_column("Parameters", justify="right")
    table.add_column("Active per token", justify="right")
    for model in models:
        active = count(model.active_params) if model.active_params is not None else ""
        table.add_row(
            escape(model.model), escape(model.architecture), escape(model.model_type), count(model.total_params), active
        )
    return table


# --- FLOPs and crossover ---------------------------------------------------------------------

SI_PREFIXES = ["", "k", "M", "G", "T", "P", "E", "Z"]


def approx(value: float, unit: str = "") -> str:
    """15,009,316,864 → '15.0 G' (decimal prefixes, three significant figures)."""
    magnitude = 0
    while abs(value) >= 1000 and magnitude < len(SI_PREFIXES) - 1:
        value /= 1000
        magnitude += 1
    text = f"{value:.3g}" if magnitude == 0 else f"{value:.1f}" if value >= 100 else f"{value:.3g}"
    return f"{text} {SI_PREFIXES[magnitude]}{unit}".rstrip()


def flops_table(report: FlopsReport) -> Group:
    """Per-token decode FLOPs at the context, the prefill of that many tokens, and training."""
    title = (
        f"{escape(report.model)} — FLOPs per generated token at context {count(report.context)}, "
        f"and for a prompt of {count(report.context)} tokens"
    )
    table = Table(title=title, box=box.SIMPLE_HEAD, show_footer=True, title_justify="left")
    per_token, prefill = report.per_token, report.prefill
    table.add_column("Component", footer="Total")
    table.add_column("Per token", justify="right", no_wrap=True, footer=count(per_token.total))
    table.add_column("≈", justify="right", no_wrap=True, footer=approx(per_token.total))
    table.add_column("Share", justify="right", no_wrap=True, footer="100.0%")
    prefill_heading = "Prefill" + (" (causal)" if report.causal else " (non-causal)")
    table.add_column(prefill_heading, justify="right", no_wrap=True, footer=count(prefill.total))
    table.add_column("Share", justify="right", no_wrap=True, footer="100.0%")
    rows = [
        ("FFN", "ffn"),
        ("Attention projections", "attention_projections"),
        ("Attention scores", "attention_scores"),
        ("Output head", "lm_head"),
    ]
    for label, field in rows:
        decode_value, prefill_value = getattr(per_token, field), getattr(prefill, field)
        table.add_row(
            label,
            count(decode_value),
            approx(decode_value),
            share(decode_value, per_token.total),
            count(prefill_value),
            share(prefill_value, prefill.total),
        )
    lines = [
        Text(f"Training on {count(report.context)} tokens (3 × forward): {count(report.training)} FLOPs ≈ {approx(report.training)}"),
    ]
    if report.mla_form == "absorbed":
        lines.append(Text("MLA in its weight-absorbed form (scores over the latent)."))
    lines += [Text(f"· {convention}", style="dim") for convention in report.conventions]
    return Group(table, *lines)


def crossover_headline(report: CrossoverReport) -> Text:
    what = "Attention-score FLOPs" if report.measure == "flops" else "KV-cache bytes read"
    per = "FLOPs per token" if report.measure == "flops" else "bytes per decode step"
    if report.crossover_context is None:
        return Text(f"{what} never overtake the FFN: {report.never_reason}.")
    exact = report.crossover_context
    at = count(exact) if isinstance(exact, int) else f"{exact:,.2f} (first whole context {count(report.crossover_context_ceil or 0)})"
    return Text(f"{what} overtake the FFN ({count(report.ffn)} {per}) at n* = {at} tokens.")


def crossover_table(report: CrossoverReport) -> Table:
    growing = "Attention scores" if report.measure == "flops" else "KV cache"
    unit = "FLOPs per token" if report.measure == "flops" else f"bytes per decode step ({report.dtype})"
    table = Table(
        title=f"{escape(report.model)} — {unit} by context", box=box.SIMPLE_HEAD, title_justify="left"
    )
    table.add_column("Context", justify="right", no_wrap=True)
    for heading in ("FFN", "Attn projections", growing, "Output head", "Total", "FFN share"):
        table.add_column(heading, justify="right", no_wrap=True)
    for row in report.rows:
        label = f"n* {count(row.context)}" if row.is_crossover else count(row.context)
        table.add_row(
            label,
            approx(row.ffn),
            approx(row.attention_projections),
            approx(row.attention_context),
            approx(row.lm_head),
            approx(row.total),
            f"{100 * row.ffn_share:.1f}%",
            style="bold" if row.is_crossover else None,
        )
    return table


def crossover_chart(report: CrossoverReport, height: int = 14) -> Text:
    """FFN (flat) and the growing attention cost against context on a log₂ axis, n* marked."""
    points = report.curve
    width = len(points)
    low, high = points[0].context, points[-1].context
    top = max(max(point.attention_context for point in points), report.ffn) * 1.05 or 1

    def to_row(value: float) -> int:
        return min(height - 1, int(value / top * (height - 1) + 0.5))

    grid = [[" "] * width for _ in range(height)]
    ffn_row = to_row(report.ffn)
    for x in range(width):
        grid[ffn_row][x] = "─"
    crossing = report.crossover_context_ceil
    if crossing is not None and low <= crossing <= high and high > low:
        marker = round(math.log(crossing / low) / math.log(high / low) * (width - 1))
        for y in range(height):
            if grid[y][marker] == " ":
                grid[y][marker] = "┊"
    for x, point in enumerate(points):
        grid[to_row(point.attention_context)][x] = "•"
    unit = "FLOPs" if report.measure == "flops" else "B"
    labels = {height - 1: approx(top, unit), ffn_row: approx(report.ffn, unit), 0: "0"}
    text = Text()
    for y in reversed(range(height)):
        text.append(f"{labels.get(y, ''):>11} │" + "".join(grid[y]) + "\n")
    text.append(" " * 12 + "└" + "─" * width + "\n")
    left, right = count(low), f"{count(high)} tokens (log scale)"
    text.append(" " * 13 + left + " " * max(1, width - len(left) - len(right)) + right + "\n")
    growing_name = "attention scores" if report.measure == "flops" else "KV cache"
    legend = f"─ FFN   • {growing_name}"
    if crossing is not None:
        legend += f"   ┊ n* = {count(crossing)}"
    text.append(" " * 13 + legend)
    return text


# --- derive-dim and compare ------------------------------------------------------------------


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
        parts.append(
            Text(
                f"intermediate_size = {count(derivation.intermediate_size)} = {derivation.ratio_to_dim:.3g} × dim; "
                f"the parameter-matched width of a gated FFN (3·d·x = 8·d², x = 8d/3) is "
                f"{derivation.parameter_matched_width:,.1f}, so this is {100 * derivation.above_parameter_matched:+.1f}% of it."
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
}


def compare_cells(row: CompareRow) -> dict[str, str]:
    """Each column formatted for people: separators, ratios to two decimals, shares in percent."""
    cells = {}
    for name, value in row.model_dump().items():
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


COMPARE_TABLE_COLUMNS = (  # heading, right-aligned, shown below 100 columns
    ("Model", False, True),
    ("Hidden", True, False),
    ("Width", True, True),
    ("×H", True, True),
    ("FFN", False, True),
    ("Experts", True, True),
    ("FFN/layer", True, True),
    ("FFN%", True, True),
    ("Attn%", True, False),
    ("Total", True, True),
    ("Active", True, False),
)


def compare_table(rows: list[CompareRow], width: int = 120) -> Table:
    """The comparison for a terminal: short model names, totals rounded (exact ones in --format csv/json).

    Below 100 columns, hidden size, attention share and active parameters are left out.
    """
    wide = width >= 100
    table = Table(
        title="FFN design, side by side (totals rounded; --format csv or --json for exact values)",
        box=box.SIMPLE_HEAD,
        title_justify="left",
        padding=(0, 1),
        pad_edge=False,
        collapse_padding=True,
        caption="Width: FFN width (one expert's for MoE); ×H: width / hidden; Experts: routed/per token+shared.",
        caption_justify="left",
    )
    shown = [(heading, right) for heading, right, narrow in COMPARE_TABLE_COLUMNS if wide or narrow]
    for heading, right in shown:
        if heading == "Model":
            table.add_column(heading, overflow="fold", min_width=12)
        else:
            table.add_column(heading, justify="right" if right else "left", no_wrap=True)
    for row in rows:
        cells = compare_cells(row)
        experts = ""
        if row.num_experts is not None:
            experts = f"{row.num_experts}/{row.experts_per_token}" + (f"+{row.shared_experts}" if row.shared_experts else "")
        values = {
            "Model": escape(row.model.split("/")[-1] + ("" if row.layers == "all" else f" ({row.layers})")),
            "Hidden": cells["hidden_size"],
            "Width": cells["ffn_width"],
            "×H": cells["width_ratio"],
            "FFN": escape(cells["ffn_kind"]),
            "Experts": experts,
            "FFN/layer": cells["ffn_params_per_layer"],
            "FFN%": cells["ffn_share"],
            "Attn%": cells["attention_share"],
            "Total": approx_params(row.total_params),
            "Active": approx_params(row.active_params),
        }
        table.add_row(*[values[heading] for heading, _ in shown])
    return table


def approx_params(value: int) -> str:
    """8,030,261,248 → '8.03 B' (K, M, B, T as parameter counts are usually written)."""
    return approx(value).replace(" k", " K").replace(" G", " B")


def compare_csv(rows: list[CompareRow], file: TextIO | None = None) -> None:
    """CSV with raw values (exact integers, ratios as decimals), one header line of field names."""
    import csv

    writer = csv.writer(file or sys.stdout, lineterminator="\n")
    for number, row in enumerate(rows):
        values = row.model_dump()
        if number == 0:
            writer.writerow(list(values))
        writer.writerow(["" if value is None else value for value in values.values()])


def compare_markdown(rows: list[CompareRow], file: TextIO | None = None) -> None:
    """A GitHub-flavoured Markdown table with the same formatting as the terminal table."""
    out = file or sys.stdout
    names = list(COMPARE_HEADINGS)
    out.write("| " + " | ".join(COMPARE_HEADINGS[name] for name in names) + " |\n")
    out.write("|" + "|".join("---" if name in ("model", "family", "layers", "activation", "ffn_kind") else "---:" for name in names) + "|\n")
    for row in rows:
        cells = compare_cells(row)
        out.write("| " + " | ".join(cells[name].replace("|", "\\|") for name in names) + " |\n")


# --- verify ----------------------------------------------------------------------------------


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
