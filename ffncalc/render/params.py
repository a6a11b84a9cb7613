"""Tables of `ffncalc params` and `ffncalc models`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich import box
from rich.console import Group
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from . import count, layer_ranges, share

if TYPE_CHECKING:
    from ..accounting import ParamsReport
    from ..api import BundledModel

COMPONENT_HEADINGS = {"attention": "Attention", "ffn": "FFN", "norm": "Norms"}

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
