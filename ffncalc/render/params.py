"""Tables of `ffncalc params` and `ffncalc models`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich import box
from rich.console import Group
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from . import count, info_lines, layer_ranges, share

if TYPE_CHECKING:
    from ..accounting import ParamsReport
    from ..api import BundledModel

COMPONENT_HEADINGS = {
    "attention": "Attention",
    "cross_attention": "Cross-attention",
    "mixer": "Mixers",
    "ffn": "FFN",
    "norm": "Norms",
}
MIXER_NAMES = {"mamba2": "Mamba-2", "gated_deltanet": "Gated DeltaNet", "none": "—"}


def params_tables(report: ParamsReport) -> Group:
    """Summary by component, the per-layer structures, MoE totals, checkpoint extras and notes."""
    return Group(*_params_renderables(report))


def _params_renderables(report: ParamsReport) -> list:
    total = report.total_params
    components = report.components
    counted = f", as {escape(report.model_class)}" if report.model_class else ""
    title = f"{escape(report.model)} — {escape(report.architecture)} ({escape(report.model_type)}{counted}), {report.num_layers} layers"
    summary = Table(title=title, box=box.SIMPLE_HEAD, show_footer=True, title_justify="left")
    summary.add_column("Component", footer="Total")
    summary.add_column("Parameters", justify="right", footer=count(total), no_wrap=True)
    summary.add_column("Share", justify="right", footer="100.0%", no_wrap=True)

    summary.add_row("FFN", count(components.ffn), share(components.ffn, total))
    summary.add_row("Attention", count(components.attention), share(components.attention, total))
    if components.cross_attention:
        summary.add_row("Cross-attention", count(components.cross_attention), share(components.cross_attention, total))
    if components.mixer:
        summary.add_row("Mixers (Mamba-2, DeltaNet)", count(components.mixer), share(components.mixer, total))
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
    if report.published_params:
        difference = total - report.published_params
        renderables.append(
            Text(
                f"Published: {count(report.published_params)} ({escape(report.published_source or 'the paper')}); "
                f"ffncalc counts {count(abs(difference))} {'more' if difference > 0 else 'fewer'} "
                f"({100 * difference / report.published_params:+.2f}%)."
            )
        )

    layers = Table(title="Layers", box=box.SIMPLE_HEAD, title_justify="left")
    layers.add_column("Layers", overflow="fold")
    layers.add_column("Count", justify="right", no_wrap=True)
    layers.add_column("Attention", no_wrap=True)
    layers.add_column("FFN", no_wrap=True)
    layers.add_column("Per layer", justify="right", no_wrap=True)
    layers.add_column("All of them", justify="right", no_wrap=True)
    stacks = len({group.stack for group in report.layers}) > 1
    for group in report.layers:
        window = f", window {count(group.window)}" if group.window else ""
        ffn = {"moe": f"MoE {group.activation}", "none": "—"}.get(group.ffn_kind, group.activation)
        mixer = MIXER_NAMES.get(group.attention_kind, group.attention_kind.upper())
        layers.add_row(
            (f"{group.stack} " if stacks else "") + layer_ranges(group.indices),
            str(len(group.indices)),
            f"{mixer}{window}",
            escape(ffn),
            count(group.params),
            count(group.params * len(group.indices)),
        )
    renderables.append(layers)

    # Layers that differ only in their window hold the same parts: one column for them.
    structures: dict[tuple, tuple[str, list[int]]] = {}
    for group in report.layers:
        structures.setdefault((group.stack, tuple(group.parts.items())), (group.stack, []))[1].extend(group.indices)
    columns = [(dict(items), stack, sorted(indices)) for (stack, items), (_, indices) in structures.items()]
    parts = Table(title="Parts of one layer", box=box.SIMPLE_HEAD, title_justify="left")
    parts.add_column("Part", no_wrap=True)
    for _, stack, indices in columns:
        ranges = layer_ranges(indices)
        where = f"{stack} " if stacks else ""
        heading = (
            "each layer" if len(columns) == 1
            else f"{where}{'layers ' if not stacks else ''}{ranges}" if len(ranges) <= 20
            else f"{len(indices)} {where}layers"
        )
        parts.add_column(heading, justify="right", no_wrap=True)
    columns = [(named, indices) for named, _, indices in columns]
    for component in ("attention", "cross_attention", "mixer", "ffn", "norm"):
        if not any(name.startswith(component + ".") for named, _ in columns for name in named):
            continue
        names: list[str] = []
        for named, _ in columns:
            names += [name for name in named if name.startswith(component + ".") and name not in names]
        subtotals = [sum(value for name, value in named.items() if name.startswith(component + ".")) for named, _ in columns]
        parts.add_row(Text(COMPONENT_HEADINGS[component], style="bold"), *[count(value) for value in subtotals])
        for name in names:
            parts.add_row("  " + name.split(".", 1)[1], *[count(named[name]) if name in named else "" for named, _ in columns])
    renderables.append(parts)

    outside = Table(title="Outside the layers", box=box.SIMPLE_HEAD, title_justify="left")
    outside.add_column("Part")
    outside.add_column("Component")
    outside.add_column("Parameters", justify="right", no_wrap=True)
    for name, params in report.outside_layers.items():
        component, part = name.split(".", 1)
        outside.add_row(escape(part), COMPONENT_HEADINGS.get(component, component.replace("_", " ")), count(params))
    renderables.append(outside)

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

    return renderables + info_lines(report)


def models_table(models: Sequence[BundledModel]) -> Table:
    """Bundled models: Hub id, family, total and active parameters (model_type is in --json)."""
    table = Table(
        title="Bundled configs (by Hub id, offline) and presets (from papers)", box=box.SIMPLE_HEAD, title_justify="left"
    )
    # Ids are what users copy: folded onto a second line when long, never cut short.
    table.add_column("Model", overflow="fold", min_width=30)
    table.add_column("Family", overflow="fold")
    table.add_column("Parameters", justify="right", no_wrap=True)
    table.add_column("Active / token", justify="right", no_wrap=True)
    for model in models:
        active = count(model.active_params) if model.active_params is not None else ""
        table.add_row(escape(model.model), escape(model.architecture), count(model.total_params), active)
    return table
