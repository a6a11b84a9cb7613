"""The tables of `ffncalc memory`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Group, RenderableType
from rich.text import Text

from ..units import GIB
from . import count, heading, info_lines, named
from .layout import Column, Grid, fit

if TYPE_CHECKING:
    from ..footprint import MemoryReport, Training


def gib(value: int) -> str:
    """Bytes as GiB with two decimals (the tables' one unit; --json has the bytes)."""
    return f"{value / GIB:,.2f}"


def parallelism(training: Training) -> str:
    """How training is spread: "ZeRO stage 1 over 8 GPUs", or with tensor parallelism "ZeRO stage 1 over 4
    data-parallel ranks × 2 tensor-parallel (sequence parallel)"."""
    zero = f"ZeRO stage {training.zero_stage} over "
    lay = training.layout
    if lay is not None and (lay["pp"] > 1 or lay["cp"] > 1 or lay["ep"] > 1):
        split = " · ".join(f"{name} {lay[name]:,}" for name in ("tp", "pp", "cp", "ep", "dp", "vpp"))
        sequence = " (sequence parallel)" if training.sequence_parallel else ""
        return f"{zero}{lay['dp']:,} data-parallel ranks, {split}{sequence}, the busiest pipeline rank ({training.busiest_rank})"
    if training.tensor_parallel == 1:
        return zero + f"{training.gpus} GPU{'s' if training.gpus > 1 else ''}"
    ranks = f"{training.data_parallel} data-parallel rank{'s' if training.data_parallel > 1 else ''}"
    sequence = " (sequence parallel)" if training.sequence_parallel else ""
    return zero + f"{ranks} × {training.tensor_parallel} tensor-parallel{sequence}"


def _activations_label(training: Training) -> str:
    held = training.micro_batches_in_flight
    if held is None or held == 1:
        return "Activations (one micro-batch)"
    return f"Activations ({held:g} micro-batches in flight)"


def answer(report: MemoryReport) -> Text:
    """The answer in one line: what it needs per GPU, whether the accelerator asked about holds it (after the
    runtime reserve), and the smallest listed one that does."""
    training = report.training
    what = "training" if training is not None else "inference"
    gpus = training.gpus if training is not None else report.gpus
    each = f" per GPU over {gpus}" if gpus > 1 else ""
    reserve = report.runtime_reserve
    fitting = [row for row in report.accelerators if row.fits_on_one]
    asked = next((row for row in report.accelerators if row.name == report.asked), None)
    words = []
    if asked is not None:
        verdict = "fits on" if asked.fits_on_one else "does not fit"
        words.append(f"{verdict} {asked.name} ({gib(asked.memory - reserve)} GiB after the runtime reserve)")
    others = [row for row in fitting if row is not asked]
    if asked is None or not asked.fits_on_one:
        if others:
            smallest = min(others, key=lambda row: row.memory)
            words.append(f"the smallest listed that holds it is {smallest.name} ({gib(smallest.memory)} GiB)")
        else:
            words.append("none of the listed accelerators holds it alone")
    return Text(f"{gib(report.needed_per_gpu)} GiB for {what}{each}: {'; '.join(words)}.", style="bold")


def quant_name(file_type: str | None) -> str:
    """general.file_type as people say it: MOSTLY_Q4_K_M → Q4_K_M."""
    return (file_type or "GGUF").removeprefix("MOSTLY_")


def context_words(tokens: int) -> str:
    """32,768 → 32k (k = 1024, as --ctx reads it); others as a count."""
    return f"{tokens // 1024}k" if tokens % 1024 == 0 else count(tokens)


def llamacpp_answer(report: MemoryReport) -> Text:
    """A GGUF's answer in one line: what llama.cpp puts on the GPU at the context, with every layer or with
    --gpu-layers (VRAM and RAM), or the layers solved for --gpu; whether it fits, and where."""
    cache = report.llamacpp
    assert cache is not None
    gpu, cpu = cache.devices
    head = f"{quant_name(cache.file_type)} at {context_words(cache.context)}"
    layers = cache.layers
    offloaded = max(min(cache.gpu_layers - 1, layers), 0)  # -ngl counts the output layer as one (llamacpp)
    output = " and the output layer" if cache.gpu_layers >= 1 else ""
    if cache.gpu_layers == layers + 1:
        where = f"{gib(gpu.total)} GiB on the GPU with all {layers} layers offloaded ({gib(cpu.total)} GiB in RAM)"
    elif cache.gpu_layers == 0:
        where = f"nothing on the GPU (-ngl 0): {gib(cpu.total)} GiB in RAM"
    else:
        where = (
            f"-ngl {cache.gpu_layers}: {offloaded} of {layers} layers{output} on the GPU, {gib(gpu.total)} GiB in "
            f"VRAM and {gib(cpu.total)} GiB in RAM"
        )
    if cache.gpu is not None and cache.gpu_usable is not None:
        usable = f"{cache.gpu} ({gib(cache.gpu_usable)} GiB usable)"
        if cache.gpu_layers_solved:
            if cache.gpu_layers == layers + 1:
                verdict = f"fits {usable}"
            elif cache.gpu_layers == 0:
                verdict = f"not even the output layer fits {usable}: run it on the CPU"
            else:
                verdict = f"the most that fit {usable}; the rest run from RAM"
        else:
            verdict = ("fits " if cache.fits else "does not fit ") + usable
        return Text(f"{head}: {where}; {verdict}.", style="bold")
    fitting = [row for row in cache.accelerators if row.fits_all]
    if cache.gpu_layers == layers + 1:
        if fitting:
            smallest = min(fitting, key=lambda row: row.usable)
            verdict = f"fits {smallest.name} ({gib(smallest.usable)} GiB usable) and every larger machine listed"
        else:
            verdict = "none of the listed machines holds every layer (--gpu NAME solves --gpu-layers)"
        return Text(f"{head}: {where}; {verdict}.", style="bold")
    return Text(f"{head}: {where}.", style="bold")


def llamacpp_tables(report: MemoryReport, width: int, explain: bool) -> Group:
    """A GGUF under llama.cpp: the answer, GPU and CPU (weights, KV cache, compute buffer), the weights by ggml
    type and component, and each local machine with the layers it holds; the answer again."""
    cache = report.llamacpp
    assert cache is not None
    weights = report.weights
    parts: list[RenderableType] = [
        heading(f"{named(report)} — llama.cpp's memory at context {count(cache.context)}"),
        llamacpp_answer(report),
    ]
    kv_type = cache.cache_type_k.upper() if cache.cache_type_k == cache.cache_type_v else (
        f"K {cache.cache_type_k.upper()}, V {cache.cache_type_v.upper()}"
    )  # fmt: skip
    devices = Grid(
        [
            Column("Where", justify="left", key=True, footer="Total"),
            Column("Weights, GiB", "Weights"),
            Column(f"KV cache ({kv_type}), GiB", "KV"),
            Column("Compute buffer, GiB", "Compute"),
            Column("Total, GiB", "Total", footer=gib(sum(device.total for device in cache.devices))),
        ]
    )
    for device in cache.devices:
        label = "GPU (VRAM)" if device.device == "GPU" else "CPU (RAM)"
        devices.add(label, gib(device.weights), gib(device.kv_cache), gib(device.compute_buffer), gib(device.total))
    parts += fit(devices, width)
    cells = f"{count(cache.kv_cells)} cells" + (f", sliding layers {count(cache.swa_cells)}" if cache.swa_cells else "")
    parts.append(
        Text(
            f"-ngl {cache.gpu_layers} of {cache.layers + 1} ({cache.layers} layers + the output layer"
            f"{', solved for ' + cache.gpu if cache.gpu_layers_solved and cache.gpu else ''}); KV cache {cells}; "
            f"the file's tensors {count(cache.weights_file)} bytes.",
            style="dim",
        )
    )
    parts += [Text(""), heading(f"Weights as stored ({quant_name(cache.file_type)})")]
    by_dtype = Grid([Column("ggml type", justify="left", key=True), Column("Bytes"), Column("GiB")])
    for dtype, size in weights.by_dtype.items():
        by_dtype.add(dtype, count(size), gib(size))
    by_component = Grid([Column("Component", justify="left", key=True), Column("Bytes"), Column("GiB")])
    for component, size in weights.by_component.items():
        by_component.add(component, count(size), gib(size))
    parts += fit(by_dtype, width) + fit(by_component, width)
    parts.append(
        heading(
            f"Where it fits under llama.cpp: weights + KV + compute buffer on the GPU, after a "
            f"{gib(report.runtime_reserve)} GiB runtime reserve (a Mac: of the share macOS wires for the GPU)"
        )
    )
    machines = Grid(
        [
            Column("Machine", justify="left", key=True),
            Column("Usable GiB", "GiB"),
            Column("All layers", "All", justify="left"),
            Column("Layers that fit (-ngl)", "-ngl"),
            Column("On it, GiB", "Used"),
        ]
    )
    for row in cache.accelerators:
        machines.add(
            row.name,
            gib(row.usable),
            "yes" if row.fits_all else "no",
            f"{row.gpu_layers} of {cache.layers + 1}",
            gib(row.gpu_bytes),
        )
    parts += fit(machines, width)
    if explain:
        parts += [Text(f"· {note}", style="dim") for note in cache.notes]
        parts.append(Text(f"· llama.cpp's arithmetic: {cache.source}", style="dim"))
    else:
        shown = ("compute buffer", "without flash attention")
        parts += [Text(f"Note: {note}", style="dim") for note in cache.notes if note.startswith(shown)]
        parts.append(Text("How each figure is counted: --explain (and --json, under llamacpp).", style="dim"))
    return Group(*parts, *info_lines(report), llamacpp_answer(report))


def memory_tables(report: MemoryReport, width: int = 80, explain: bool = False) -> Group:
    """The answer, then weights, KV cache and activations in bytes and GiB, where it fits, training, the answer
    again; the conventions with EXPLAIN (--json always carries them). A GGUF: llama.cpp's memory (llamacpp_tables)."""
    if report.llamacpp is not None and report.training is None:
        return llamacpp_tables(report, width, explain)
    cache = report.kv_cache
    weights = report.weights
    stored = f"{weights.quantization}, the rest {weights.dtype}" if weights.quantization else weights.dtype
    parts: list[RenderableType] = [
        heading(f"{named(report)} — memory at context {count(cache.context)}, batch {count(cache.batch)}")
    ]
    if report.solved is None and report.engine is None:  # else their own answers come first
        parts.append(answer(report))
    if report.solved is not None:
        parts += solved_lines(report)
    if report.engine is not None:
        parts += engine_lines(report, width)
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
    if report.gpus > 1 or report.pipeline_parallel > 1:
        across = f"Across {report.gpus} GPUs (tensor parallel)"
        if report.pipeline_parallel > 1:
            across = (
                f"Across {report.pipeline_parallel} pipeline stages of {report.gpus} GPU(s) each, the busiest stage"
            )
        parts.append(
            Text(
                f"{across}: {count(report.per_gpu_inference)} bytes ({gib(report.per_gpu_inference)} GiB) per GPU"
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
            Column("Elements/token/layer", "El/tok/layer"),
            Column("Tokens"),
            Column("State elements/layer", "State el/layer"),
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
    parts.append(
        heading(
            f"Where training fits: per GPU at {parallelism(report.training)}, after a {gib(report.runtime_reserve)} "
            "GiB runtime reserve"
            if report.training is not None
            else "Where inference fits (tensor parallelism across powers of two"
            + (f", in each of {report.pipeline_parallel} stages" if report.pipeline_parallel > 1 else "")
            + f"), after a {gib(report.runtime_reserve)} GiB runtime reserve"
        )
    )
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
            row.name,
            gib(row.memory),
            "yes" if row.fits_on_one else "no",
            str(row.tensor_parallel or ("no" if report.training is not None else "more than 64")),
        )
    parts += fit(fits, width)
    training = report.training
    if training is not None:
        what = f"LoRA rank {training.lora_rank}" if training.lora_rank is not None else "full fine-tuning"
        parts.append(
            heading(
                f"Training ({what}): {training.optimizer}, mixed precision, {training.attention} attention, "
                f"recomputation {training.recompute}, micro-batch {training.micro_batch}, {parallelism(training)}"
            )
        )
        grid = Grid(
            [
                Column("What", justify="left", key=True, footer="Per GPU"),
                Column("Whole model, bytes", "Model B"),
                Column("Per GPU, bytes", "GPU B", footer=count(training.per_gpu)),
                Column("Per GPU, GiB", "GiB", footer=gib(training.per_gpu)),
            ]
        )
        frozen = "base as stored + 16-bit adapters" if training.lora_rank is not None else "16-bit"
        for label, whole, each in (
            (f"Weights ({frozen})", training.weights, training.weights_per_gpu),
            ("Gradients (16-bit)", training.gradients, training.gradients_per_gpu),
            (
                "Optimizer states (fp32 master and moments)",
                training.optimizer_states,
                training.optimizer_states_per_gpu,
            ),
            (_activations_label(training), None, training.activations),
        ):
            grid.add(label, "" if whole is None else count(whole), count(each), gib(each))
        parts += fit(grid, width)
        parts.append(
            Text(
                f"Trained parameters: {count(training.trainable_parameters)}. Activations: "
                f"{training.activations_formula}.",
                style="dim",
            )
        )
    if explain:
        parts += [Text(f"· {convention}", style="dim") for convention in report.conventions]
    else:
        parts.append(Text("How each figure is counted: --explain (and --json, under conventions).", style="dim"))
    # The last line answers the question asked: the engine's figure with --engine (not the batch-1 fit of a plain
    # count, which would end the screen on another question), --solve's with --solve.
    if report.solved is not None:
        last: list[RenderableType] = solved_lines(report)[:1]
    elif report.engine is not None:
        last = engine_lines(report, width)[:1]
    else:
        last = [answer(report)]
    return Group(*parts, *info_lines(report), *last)


def solved_lines(report: MemoryReport) -> list[RenderableType]:
    """--solve's answer first: the engine's figure (when there is one) and ffncalc's own without an engine."""
    solved = report.solved
    assert solved is not None
    value = f"{solved.value:,.2f}" if isinstance(solved.value, float) else count(solved.value)
    what = {"ctx": "Longest context", "batch": "Largest batch", "concurrency": "Maximum concurrency"}[solved.what]
    if not solved.fits:
        room = f"the {gib(solved.memory)} GiB {solved.gpu} has after the runtime reserve"
        need = f"one sequence needs {gib(report.per_gpu_inference)} GiB per GPU, more than {room}"
        if report.engine is not None and report.per_gpu_inference <= solved.memory:
            need = f"{report.engine.engine}'s KV-cache budget holds no whole request of this context"
        hint = "--tp to split the model" if report.engine is None else "--tp, or a shorter --ctx"
        return [Text(f"Does not fit at all: {need} ({hint}).", style="bold")]
    if solved.limit is not None:
        value += f" (the model's limit: {count(solved.limit)} tokens; more would fit)"
    lines: list[RenderableType] = []
    if report.engine is not None:
        lines.append(Text(f"{what} ({report.engine.engine}'s arithmetic): {value} — {solved.how}.", style="bold"))
        lines.append(
            Text(f"Without an engine's budget (weights + KV cache + activations): {count(solved.without_engine)}.")
        )
    else:
        lines.append(Text(f"{what}: {value} — {solved.how}.", style="bold"))
    return lines


def copies(n: int) -> str:
    return f"{count(n)} {'copy' if n == 1 else 'copies'}"


def engine_lines(report: MemoryReport, width: int) -> list[RenderableType]:
    """The engine's KV cache as it would log it, its budget, and its groups."""
    engine = report.engine
    assert engine is not None
    name = engine.engine + (f"@{engine.version}" if engine.version else "")
    parts: list[RenderableType] = [
        Text(
            f"{name}: KV cache {count(engine.kv_capacity_tokens)} tokens, {count(engine.num_blocks)} blocks of "
            f"{count(engine.block_size)}; maximum concurrency for {count(engine.context)} tokens per request: "
            f"{engine.max_concurrency:,.2f}x",
            style="bold",
        )
    ]
    if engine.budget_given:
        budget = (
            f"KV-cache memory per GPU as given: {count(engine.budget_bytes)} bytes ({gib(engine.budget_bytes)} GiB)"
        )
    else:
        assert engine.total_memory is not None and engine.weights_bytes is not None
        budget = (
            f"KV-cache memory per GPU, estimated: {gib(engine.total_memory)} GiB × {engine.gpu_memory_utilization} − "
            f"weights {gib(engine.weights_bytes)} − activation peak {gib(engine.activation_peak_bytes or 0)} − "
            f"reserve {gib(engine.runtime_reserve_bytes or 0)} = {gib(engine.budget_bytes)} GiB (an estimate: the "
            "engine measures its own; --kv-budget to start from its log)"
        )
    parts.append(Text(budget + "."))
    groups = Grid(
        [
            Column("KV-cache spec", "Spec", justify="left", key=True),
            Column("Layers"),
            Column("Groups"),
            Column("Page, bytes", "Page B"),
            Column("Block, tokens", "Block"),
            Column("Blocks/request", "Blk/req"),
        ]
    )
    for group in engine.groups:
        kind = group.kind + (f" (window {count(group.window)})" if group.window else "")
        groups.add(
            kind,
            count(group.layers),
            count(group.groups),
            count(group.page_bytes),
            count(group.block_size),
            count(group.blocks_per_request),
        )
    parts += fit(groups, width)
    parts.append(
        Text(
            f"{'chunked_prefill_size' if engine.engine == 'sglang' else 'max_num_batched_tokens'} "
            f"{count(engine.max_num_batched_tokens)} ({engine.max_num_batched_tokens_source}); "
            f"tensor parallel {engine.tensor_parallel}; longest single request {count(engine.max_context)} tokens. "
            f"Arithmetic: {engine.source}.",
            style="dim",
        )
    )
    parts += [Text(f"· {note}", style="dim") for note in engine.notes]
    split = engine.disaggregation
    if split is not None:
        parts.append(
            Text(
                f"Disaggregated: prefill on {count(split.prefill_gpus)} GPUs ({copies(split.prefill_replicas)}), "
                f"decode on {count(split.decode_gpus)} ({copies(split.decode_replicas)} of "
                f"{count(split.replica_gpus)} GPUs); the decode pool holds {split.decode_requests:,.2f} requests of "
                f"{count(engine.context)} tokens at once; each request moves its cache, "
                f"{count(split.kv_bytes_per_request)} bytes ({gib(split.kv_bytes_per_request)} GiB), from prefill to "
                "decode."
            )
        )
    return parts
