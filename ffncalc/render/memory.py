"""The tables of `ffncalc memory`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Group, RenderableType
from rich.text import Text

from . import count, heading, info_lines, named
from .layout import Column, Grid, fit

if TYPE_CHECKING:
    from ..memory import MemoryReport

GIB = 1 << 30


def gib(value: int) -> str:
    """Bytes as GiB with two decimals (the tables' one unit; --json has the bytes)."""
    return f"{value / GIB:,.2f}"


def memory_tables(report: MemoryReport, width: int = 80) -> Group:
    """Weights, KV cache and activations in bytes and GiB, the total, where it fits, and training."""
    cache = report.kv_cache
    weights = report.weights
    stored = f"{weights.quantization}, the rest {weights.dtype}" if weights.quantization else weights.dtype
    parts: list[RenderableType] = [
        heading(f"{named(report)} — memory at context {count(cache.context)}, batch {count(cache.batch)}")
    ]
    summary = Grid(
        [
            Column("What", justify="left", key=True, footer="Total for inference"),
            Column("Bytes", footer=count(report.total_inference)),
            Column("GiB", footer=gib(report.total_inference)),
        ]
    )
    summary.add(f"Weights ({stored})", count(weights.bytes), gib(weights.bytes))
    summary.add(f"KV cache and state ({cache.dtype})", count(cache.bytes), gib(cache.bytes))
    summary.add("Largest activation buffer", count(report.activations.bytes), gib(report.activations.bytes))
    parts += fit(summary, width)
    parts.append(Text(f"Activation buffer: {report.activations.formula}.", style="dim"))
    if report.gpus > 1:
        parts.append(
            Text(
                f"Across {report.gpus} GPUs (tensor parallel): {count(report.per_gpu_inference)} bytes "
                f"({gib(report.per_gpu_inference)} GiB) each"
                + (f"; copied on each: {', '.join(report.replicated)}." if report.replicated else ".")
            )
        )
    parts += [Text(""), heading("Weights")]
    by_dtype = Grid([Column("Stored as", justify="left", key=True), Column("Bytes"), Column("GiB")])
    for dtype, size in weights.by_dtype.items():
        by_dtype.add(dtype, count(size), gib(size))
    by_component = Grid([Column("Component", justify="left", key=True), Column("Bytes"), Column("GiB")])
    for component, size in weights.by_component.items():
        by_component.add(component, count(size), gib(size))
    parts += fit(by_dtype, width) + fit(by_component, width)
    if weights.unquantized_linear_bytes:
        parts.append(
            Text(
                f"Linear weights the scheme leaves unquantized: {count(weights.unquantized_linear_bytes)} bytes.",
                style="dim",
            )
        )
    parts.append(
        heading(f"KV cache and recurrent state: {count(cache.bytes_per_token)} bytes per token beyond the windows")
    )
    kinds = Grid(
        [
            Column("Layers", justify="left", key=True),
            Column("Count", "N"),
            Column("Per token", "Elements"),
            Column("Tokens"),
            Column("Fixed state", "State"),
            Column("Bytes"),
        ]
    )
    for layer in cache.layers:
        kinds.add(
            layer.kind,
            count(layer.layers),
            count(layer.elements_per_token) if layer.elements_per_token else "",
            count(layer.tokens) if layer.elements_per_token else "",
            count(layer.fixed_elements) if layer.fixed_elements else "",
            count(layer.bytes),
        )
    parts += fit(kinds, width)
    parts.append(heading("Where it fits (tensor parallelism across powers of two)"))
    fits = Grid(
        [
            Column("Accelerator", justify="left", key=True),
            Column("GiB"),
            Column("On one", justify="left"),
            Column("GPUs needed", "GPUs"),
        ]
    )
    for row in report.accelerators:
        fits.add(
            row.name, gib(row.memory), "yes" if row.fits_on_one else "no", str(row.tensor_parallel or "more than 64")
        )
    parts += fit(fits, width)
    training = report.training
    if training is not None:
        parts.append(
            heading(
                f"Training: {training.optimizer}, mixed precision, recomputation {training.recompute}, "
                f"ZeRO stage {training.zero_stage} over {training.gpus} GPU{'s' if training.gpus > 1 else ''}"
            )
        )
        grid = Grid(
            [
                Column("What", justify="left", key=True, footer="Per GPU"),
                Column("Bytes", footer=count(training.per_gpu)),
                Column("GiB", footer=gib(training.per_gpu)),
            ]
        )
        for label, value in (
            ("Weights (16-bit)", training.weights),
            ("Gradients (16-bit)", training.gradients),
            ("Optimizer states (fp32 master and moments)", training.optimizer_states),
            ("Activations", training.activations),
        ):
            grid.add(label, count(value), gib(value))
        parts += fit(grid, width)
        parts.append(Text(f"Activations: {training.activations_formula}.", style="dim"))
    parts += [Text(f"· {convention}", style="dim") for convention in report.conventions]
    return Group(*parts, *info_lines(report))
