"""Tables of `ffncalc params` and `ffncalc models`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from rich.console import Group, RenderableType
from rich.text import Text

from . import approx_params, count, heading, info_lines, layer_ranges, named, share
from .layout import Column, Grid, fit

if TYPE_CHECKING:
    from ..accounting import ParamsReport
    from ..api import BundledModel
    from ..coverage import FamilyCoverage

COMPONENT_HEADINGS = {
    "attention": "Attention",
    "cross_attention": "Cross-attention",
    "mixer": "Mixers",
    "ffn": "FFN",
    "norm": "Norms",
    "vision": "Vision tower",
    "audio": "Audio tower",
    "projector": "Projector",
    "other": "Other",
}
MIXER_NAMES = {
    "mamba2": "Mamba-2",
    "gated_deltanet": "Gated DeltaNet",
    "lightning_attention": "Lightning attention",
    "kimi_delta_attention": "Kimi Delta Attention",
    "mamba": "Mamba",
    "short_conv": "Short conv",
    "rg_lru": "RG-LRU",
    "light_conv": "Light conv",
    "bailing_delta_attention": "Delta attention",
    "cca": "CCA convolutions",
    "mlstm": "mLSTM",
    "rwkv": "RWKV time mix",
    "fourier": "Fourier transform",
    "none": "—",
}


def params_tables(report: ParamsReport, width: int = 80) -> Group:
    """Summary by component, the per-layer structures, MoE totals, checkpoint extras and notes."""
    return Group(*_params_renderables(report, width))


def _params_renderables(report: ParamsReport, width: int) -> list[RenderableType]:
    total = report.total_params
    counted = f", as {report.model_class}" if report.model_class else ""
    towers = {
        stack: sum(len(group.indices) for group in report.layers if group.stack == stack)
        for stack in ("vision", "video", "audio")
    }
    tower_layers = "".join(f", a {n}-layer {stack} tower" for stack, n in towers.items() if n)
    title = f"{named(report)} — {report.architecture} ({report.model_type}{counted}), {report.num_layers} layers{tower_layers}"
    renderables: list[RenderableType] = [heading(title)]
    renderables += fit(_summary(report), width)
    if report.published_params:
        difference = total - report.published_params
        renderables.append(
            Text(
                f"Published: {count(report.published_params)} ({report.published_source or 'the paper'}); "
                f"ffncalc counts {count(abs(difference))} {'more' if difference > 0 else 'fewer'} "
                f"({100 * difference / report.published_params:+.2f}%)."
            )
        )
    renderables += [heading("Layers"), *fit(_layers(report), width)]
    stacks = list(dict.fromkeys(group.stack for group in report.layers))
    for stack in stacks:  # a tower's parts in a table of their own
        title = "Parts of one layer" if len(stacks) == 1 else f"Parts of one {stack} layer"
        renderables += [heading(title), *fit(_parts(report, stack), width)]
    renderables += [heading("Outside the layers"), *fit(_outside(report), width)]
    if report.moe is not None and report.active_params is not None:
        moe = report.moe
        shared = f" + {moe.num_shared_experts} shared" if moe.num_shared_experts else ""
        renderables.append(
            heading(
                f"Mixture of experts: {moe.moe_layers} MoE layers, {moe.num_experts} routed experts, "
                f"{moe.experts_per_token} per token{shared}"
            )
        )
        renderables += fit(_experts(report), width)
        published = published_active_line(report)
        if published is not None:
            renderables.append(published)
    extras = report.checkpoint_extras
    if extras:
        renderables.append(heading("Stored by some checkpoints, not counted as parameters"))
        grid = Grid([Column("What", justify="left", key=True), Column("Elements")])
        for extra in extras:
            grid.add(extra.name, count(extra.elements))
        renderables += fit(grid, width)
        renderables += [Text(f"· {extra.name}: {extra.reason}", style="dim") for extra in extras]
    return renderables + info_lines(report)


def _summary(report: ParamsReport) -> Grid:
    total, components = report.total_params, report.components
    grid = Grid(
        [
            Column("Component", justify="left", key=True, footer="Total"),
            Column("Parameters", "Params", footer=count(total)),
            Column("Share", footer="100.0%"),
        ]
    )

    def row(label: str, value: int) -> None:
        grid.add(label, count(value), share(value, total))

    row("FFN", components.ffn)
    row("Attention", components.attention)
    if components.cross_attention:
        row("Cross-attention", components.cross_attention)
    if components.mixer:
        row("Mixers (state-space, linear attention)", components.mixer)
    embeddings = components.embedding + components.lm_head
    if report.tie_word_embeddings:
        row("Embeddings (tied with output head)", embeddings)
    else:
        row("Embeddings + output head", embeddings)
        row("  input embeddings", components.embedding)
        row("  output head", components.lm_head)
    row("Norms", components.norm)
    if components.other:
        row(COMPONENT_HEADINGS["other"], components.other)
    if components.language_model != total:  # a multimodal model: the rows above, then its towers
        grid.add(
            "Language model (the rows above)",
            count(components.language_model),
            share(components.language_model, total),
            style="bold",
        )
        for name in ("vision", "audio", "projector"):
            if getattr(components, name):
                row(COMPONENT_HEADINGS[name], getattr(components, name))
    return grid


def _layers(report: ParamsReport) -> Grid:
    stacks = len({group.stack for group in report.layers}) > 1
    grid = Grid(
        [
            Column("Layers", justify="left", key=True),
            Column("Count", "N"),
            Column("Attention", "Attn", justify="left"),
            Column("FFN", justify="left"),
            Column("Per layer", "Each"),
            Column("All of them", "All"),
        ]
    )
    for group in report.layers:
        window = f", window {count(group.window)}" if group.window else ""
        ffn = {"moe": f"MoE {group.activation}", "none": "—"}.get(group.ffn_kind, group.activation)
        mixer = " + ".join(MIXER_NAMES.get(kind, kind.upper()) for kind in group.attention_kind.split("+"))
        grid.add(
            (f"{group.stack} " if stacks else "") + layer_ranges(group.indices),
            str(len(group.indices)),
            f"{mixer}{window}",
            ffn,
            count(group.params),
            count(group.params * len(group.indices)),
        )
    return grid


def _parts(report: ParamsReport, stack: str) -> Grid:
    """STACK's layers, one column per distinct set of parts (layers differing only in their window share one); only
    the components its layers hold."""
    structures: dict[tuple, list[int]] = {}
    for group in report.layers:
        if group.stack == stack:
            structures.setdefault(tuple(group.parts.items()), []).extend(group.indices)
    columns = [(dict(items), sorted(indices)) for items, indices in structures.items()]
    headings = [Column("Part", justify="left", key=True)]
    long = [_column_heading(parts, indices) for parts, indices in columns]
    short = [f"{len(indices)} layers" for _, indices in columns]
    if len(set(short)) < len(short):  # two columns of as many layers: say what each holds
        short = [f"{len(indices)} {_held(parts)}" for parts, indices in columns]
    for number, (text, brief) in enumerate(zip(long, short)):
        if len(columns) == 1:
            text = brief = "each layer"
        elif long.count(text) > 1:  # the same layers described alike: number them
            text = f"{text} ({long[: number + 1].count(text)})"
        headings.append(Column(text, brief))
    grid = Grid(headings)
    for component in COMPONENT_HEADINGS:
        names: list[str] = []
        for listed, _ in columns:
            names += [name for name in listed if name.startswith(component + ".") and name not in names]
        subtotals = [sum(v for name, v in named.items() if name.startswith(component + ".")) for named, _ in columns]
        if not names or not any(subtotals):
            continue
        grid.add(COMPONENT_HEADINGS[component], *[count(value) for value in subtotals], style="bold")
        for name in names:
            grid.add(
                "  " + name.split(".", 1)[1], *[count(named[name]) if name in named else "" for named, _ in columns]
            )
    return grid


def _column_heading(parts: dict[str, int], indices: list[int]) -> str:
    """Which layers a column is: their indices where that reads short, else how many and what they hold."""
    ranges = layer_ranges(indices)
    if len(ranges) <= 24:
        return f"layers {ranges}"
    return f"{len(indices)} {_held(parts)} layers"


def _held(parts: dict[str, int]) -> str:
    """What a layer holds of attention, mixers and FFN: "attention+FFN", "mixer", …"""
    held = [
        label
        for component, label in (("attention", "attention"), ("mixer", "mixer"), ("ffn", "FFN"))
        if any(value for name, value in parts.items() if name.startswith(component + "."))
    ]
    return "+".join(held) or "other"


def _outside(report: ParamsReport) -> Grid:
    grid = Grid(
        [Column("Part", justify="left", key=True), Column("Component", justify="left"), Column("Parameters", "Params")]
    )
    for name, params in report.outside_layers.items():
        component, part = name.split(".", 1)
        grid.add(part, COMPONENT_HEADINGS.get(component, component.replace("_", " ")), count(params))
    return grid


def _experts(report: ParamsReport) -> Grid:
    moe, total = report.moe, report.total_params
    assert moe is not None and report.active_params is not None
    grid = Grid([Column("What", justify="left", key=True), Column("Value"), Column("Share")], show_header=False)
    grid.add("One expert", count(moe.expert_params), "")
    grid.add("All routed experts", count(moe.routed_expert_params), share(moe.routed_expert_params, total))
    if moe.shared_expert_params:
        grid.add("Shared experts", count(moe.shared_expert_params), share(moe.shared_expert_params, total))
    grid.add("Routers", count(moe.router_params), share(moe.router_params, total))
    grid.add("Active per token, input table included", count(report.active_params), share(report.active_params, total))
    without = report.active_params_without_embedding or 0
    grid.add("Active per token, input table left out", count(without), share(without, total))
    return grid


def published_active_line(report: ParamsReport) -> Text | None:
    """A published active figure beside the exact ones, and which of them it rounds from."""
    if report.published_active is None:
        return None
    return Text(
        f"Published: {report.published_active} active ({report.published_active_source}); it matches "
        f"{report.published_active_matches}.",
        style="dim",
    )


def models_table(models: Sequence[BundledModel], width: int = 80) -> Group:
    """Bundled models, one line each: Hub id, family, total and active parameters (rounded; exact in --json).

    An id is what the user types next, so it is never cut: where the longest one does not fit beside the family
    column, the family column is left out (--json and `models --family` have it)."""
    family_room = 16  # the longest real family name (ERNIE-4.5-MoE) fits; a preset's long title is cut
    rows = [
        (
            m.model,
            m.architecture if len(m.architecture) <= family_room else m.architecture[: family_room - 1] + "…",
            approx_params(m.total_params),
            approx_params(m.active_params) if m.active_params else "",
        )
        for m in models
    ]
    title = "Bundled configs (by Hub id, offline) and presets (from papers)"
    if not rows:
        return Group(heading(title), Text("No bundled model matches; `ffncalc models` lists them all."))
    columns = [Column("Family", justify="left"), Column("Params"), Column("Active")]
    longest = max(len(row[0]) for row in rows)
    widths = [max([len(c.heading)] + [len(row[i + 1]) for row in rows]) + 3 for i, c in enumerate(columns)]
    with_family = longest <= width - sum(widths) - 2
    if longest > width - sum(widths[1:]) - 2:
        # Too narrow for a whole id beside its figures: each id on a line of its own, its figures under it.
        lines = [
            Text(f"{name}\n    {family}  {total}" + (f"  active {active}" if active else ""))
            for name, family, total, active in rows
        ]
        return Group(heading(f"{title}: {len(rows)}"), *lines)
    kept = [i for i in range(len(columns)) if with_family or i > 0]
    grid = Grid([Column("Model", justify="left", key=True), *[columns[i] for i in kept]])
    for name, *cells in rows:
        grid.add(name, *[cells[i] for i in kept])
    note = Text(
        "Params: the whole model (towers and projectors included). Active: per text token, input embedding "
        "table included. Rounded: --json has exact counts and the active count without the table."
        + ("" if with_family else " The family column is left out so that no id is cut (--json has it)."),
        style="dim",
    )
    return Group(heading(f"{title}: {len(rows)}"), *fit(grid, width), note)


def models_brief(models: Sequence[BundledModel], width: int = 80) -> Group:
    """--brief: the bundled models' names, one a line (whole: a pipe to grep or xargs takes them as they are)."""
    return Group(*(Text(model.model) for model in models))


def families_table(coverage: FamilyCoverage, width: int = 80) -> Group:
    """The supported families by task (transformers' auto mappings), how many of each task's model_types they
    cover, and the model_types known but not counted."""
    by_type = {model_type: family for family, model_types in coverage.families.items() for model_type in model_types}
    total = len(by_type)
    parts: list[RenderableType] = [
        heading(f"Supported families: {total} model_types, by task as {coverage.transformers} lists them"),
    ]
    summary = Grid([Column("Task", justify="left", key=True), Column("Counted"), Column("Of"), Column("Share")])
    for task in coverage.tasks:
        summary.add(task.title, str(len(task.counted)), str(task.transformers_model_types),
                    share(len(task.counted), task.transformers_model_types))  # fmt: skip
    parts += fit(summary, width)
    for task in coverage.tasks:
        grouped: dict[str, list[str]] = {}
        for model_type in task.counted:
            grouped.setdefault(by_type[model_type], []).append(model_type)
        parts += [Text(""), heading(f"{task.title}: {len(task.counted)} of {task.transformers_model_types}")]
        if grouped:
            grid = Grid([Column("Family", justify="left", key=True), Column("model_type", justify="left")])
            for family in sorted(grouped, key=str.lower):
                grid.add(family, ", ".join(grouped[family]))
            parts += fit(grid, width)
        if task.not_counted:
            reasons: dict[str, list[str]] = {}
            for item in task.not_counted:
                reasons.setdefault(item.reason, []).append(item.model_type)
            for reason, model_types in reasons.items():
                parts.append(Text(f"Known, {reason} ({len(model_types)}): {', '.join(model_types)}.", style="dim"))
    if coverage.outside_tasks:
        parts += [Text(""), Text(f"Also counted, in none of these mappings: {', '.join(coverage.outside_tasks)}.")]
    parts.append(Text("Another model_type can be counted with a family's rules: --as MODEL_TYPE.", style="dim"))
    return Group(*parts)
