"""The serving engine's figures for `memory`: the KV-cache budget an engine leaves per GPU, the blocks, tokens and
requests it holds (serving.py's arithmetic, vLLM's and SGLang's), under a layout (serving_layout.py: expert
parallelism, attention data-parallel, pipeline stages) and disaggregated pools; and `solve`, the largest context,
batch or concurrency that fits. Everything arrives resolved in a ServingQuestion: no option is read here."""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import Any

from ..errors import UsageError
from ..footprint import (
    EngineDisaggregation,
    EngineReport,
    Solved,
    inference_activations,
    kv_cache,
    per_gpu_weights,
    stage_weight_layout,
    weight_layout,
    weight_shares,
)
from ..serving import (
    SGLANG_DEFAULTS_SOURCE,
    VLLM_DEFAULTS_SOURCE,
    VLLM_GPU_MEMORY_UTILIZATION,
    Budget,
    EngineVersion,
    engine_report,
    estimated_budget,
    sglang_default_chunked_prefill_size,
    vllm_default_max_num_batched_tokens,
)
from ..serving_layout import ServingLayout, layout_note, parse_disaggregate, stage_specs
from ..spec import ModelSpec
from ..units import DTYPE_BYTES
from ..values import Value, replace


class ServingQuestion(Value):
    """What `memory` asks of an engine, resolved from MemoryOptions: the engine, the accelerator, the weights and
    cache as counted, the layout, and the engine's own settings where given."""

    version: EngineVersion
    gpu_name: str
    gpu_memory: int  # bytes
    reserve: int  # bytes the runtime keeps on each GPU
    context: int
    weight_dtype: str
    scheme: Any  # storage.Scheme or None
    cache_dtype: str
    tensor_parallel: int
    pipeline_parallel: int = 1
    expert_parallel: int = 1
    dp_attention: bool = False
    disaggregate: str | None = None  # "P:D"
    kv_budget: int | None = None  # bytes per GPU as the engine printed them
    gpu_memory_utilization: Fraction | None = None
    max_num_batched_tokens: int | None = None
    block_size: int | None = None
    model_limit: int | None = None  # the model's own context limit (max_model_len's default)
    served_as: str | None = None  # the `dtype` the engine loads a float32 checkpoint as; None: as stored or asked

    @property
    def layout(self) -> ServingLayout | None:
        """The layout beyond tensor parallelism, or None."""
        if self.expert_parallel == 1 and not self.dp_attention:
            return None
        return ServingLayout(
            tensor_parallel=self.tensor_parallel, expert_parallel=self.expert_parallel, dp_attention=self.dp_attention
        )

    @property
    def state_size(self) -> int:
        """Bytes of one element of the states and activations: the weights' float type, BF16 for quantized ones."""
        return DTYPE_BYTES[self.weight_dtype if self.weight_dtype in ("F32", "F16", "BF16") else "BF16"]

    def batched(self) -> tuple[int, str]:
        """The tokens one forward takes (vLLM's max_num_batched_tokens, SGLang's chunked_prefill_size), and why."""
        if self.max_num_batched_tokens is not None:
            return self.max_num_batched_tokens, "`max_num_batched_tokens`"
        if self.version.engine == "sglang":
            size = sglang_default_chunked_prefill_size(self.gpu_memory)
            return size, f"SGLang's default chunked_prefill_size on {self.gpu_name} ({SGLANG_DEFAULTS_SOURCE})"
        size = vllm_default_max_num_batched_tokens(self.gpu_memory, self.gpu_name)
        return size, f"vLLM's default for `vllm serve` on {self.gpu_name} ({VLLM_DEFAULTS_SOURCE})"


def serve(spec: ModelSpec, question: ServingQuestion) -> EngineReport:
    """The engine's KV-cache figures: per stage (one without pipeline parallelism) its budget — the accelerator's
    memory × utilization less its weights per GPU, its activation peak and the reserve, or the budget given — and
    what that holds; under pipeline parallelism the stage every stage follows (pipelined); then the layout's note,
    the model's limit and the disaggregated pools."""
    stages = [spec] if question.pipeline_parallel == 1 else stage_specs(spec, question.pipeline_parallel)
    weights = [
        stage_weights(stage, question, index == 0, index == len(stages) - 1) for index, stage in enumerate(stages)
    ]
    batched, batched_source = question.batched()
    peaks = [
        inference_activations(stage, 1, batched, question.state_size, logits=index == len(stages) - 1).bytes
        for index, stage in enumerate(stages)
    ]
    utilization = question.gpu_memory_utilization or VLLM_GPU_MEMORY_UTILIZATION
    layout = question.layout
    reports = []
    for stage, held, peak in zip(stages, weights, peaks, strict=True):
        budget = (
            Budget(question.kv_budget, True)
            if question.kv_budget is not None
            else estimated_budget(
                question.version.engine, question.gpu_memory, utilization, held, peak, question.reserve
            )
        )
        report = engine_report(
            stage, question.version, budget, context=question.context, kv_size=DTYPE_BYTES[question.cache_dtype],
            state_size=question.state_size, tp=question.tensor_parallel if layout is None else layout.attention_split,
            batched=batched, batched_source=batched_source, block_size=question.block_size,
        )  # fmt: skip
        reports.append(report)
    engine = reports[0] if len(reports) == 1 else pipelined(reports, question.tensor_parallel)
    if layout is not None:
        note = layout_note(layout, question.version.engine)
        engine = replace(engine, tensor_parallel=question.tensor_parallel, notes=[*engine.notes, note])
    limit = question.model_limit
    if limit is not None and engine.max_context > limit:
        # vLLM's max_model_len defaults to the model's own limit and refuses a longer request.
        note = f"the longest single request stops at the model's limit, {limit:,} tokens (the cache would hold more)"
        engine = replace(engine, max_context=limit, notes=[*engine.notes, note])
    if question.disaggregate is not None:
        engine = replace(engine, disaggregation=disaggregation(spec, question, engine))
    return engine


def stage_weights(stage: ModelSpec, question: ServingQuestion, first: bool, last: bool) -> int:
    """A stage's weights per GPU as the engine lays them out (the whole model's without pipeline parallelism)."""
    layout = question.layout
    if layout is None:
        stored = stage_weight_layout(stage, question.weight_dtype, question.scheme, first, last)
        return per_gpu_weights(weight_shares(stored), question.tensor_parallel)[0]
    from ..roofline import engine_weights

    return engine_weights(weight_layout(stage, question.weight_dtype, question.scheme), layout, question.version.engine)


def pipelined(reports: list[EngineReport], tensor_parallel: int) -> EngineReport:
    """vLLM over pipeline stages: each stage (vLLM's get_pp_indices split) sized its own blocks for its own layers
    from its own budget; every stage keeps the smallest stage's num_blocks (vllm/v1/core/kv_cache_utils.py
    get_kv_cache_configs: "Change the num_blocks of each rank to the smallest among all ranks", vllm-project/vllm
    @ 001cabc1). The report is that stage's."""
    if any(len({(group.kind, group.window) for group in report.groups}) > 1 for report in reports):
        raise UsageError(
            "`pipeline_parallel` with layers of several cache kinds (sliding, hybrid): vLLM groups them over the "
            "whole model before it splits the stages, which is not modelled; drop `pipeline_parallel`"
        )
    limiting = min(range(len(reports)), key=lambda i: reports[i].num_blocks)
    layers = [group.layers for report in reports for group in report.groups]
    return replace(
        reports[limiting],
        pipeline_parallel=len(reports),
        limiting_stage=limiting + 1,
        notes=[
            *reports[limiting].notes,
            f"pipeline parallel over {len(reports)} stages of {', '.join(map(str, layers))} cached layers (vLLM's "
            f"get_pp_indices): each stage sizes its own cache from its own budget, and every stage keeps the "
            f"smallest one's blocks; stage {limiting + 1}'s figures, per GPU of {tensor_parallel} in each stage",
        ],
    )


def disaggregation(spec: ModelSpec, question: ServingQuestion, engine: EngineReport) -> EngineDisaggregation:
    """`disaggregate` P:D: the pools' whole copies, the requests the decode pool holds, the cache a request moves."""
    replica = question.tensor_parallel * question.pipeline_parallel
    prefill, decode = parse_disaggregate(question.disaggregate or "", replica)
    copies = decode // replica
    return EngineDisaggregation(
        prefill_gpus=prefill,
        decode_gpus=decode,
        replica_gpus=replica,
        prefill_replicas=prefill // replica,
        decode_replicas=copies,
        decode_requests=copies * engine.max_concurrency,
        kv_bytes_per_request=kv_cache(spec, question.context, 1, question.cache_dtype).bytes,
    )


def solve(
    what: str,
    per_gpu: Callable[[int, int], int],
    *,
    engine: EngineReport | None,
    context: int,
    batch: int,
    model_limit: int | None,
    limit: int,
    where: str,
    gpu_name: str,
) -> Solved:
    """`solve` WHAT: the engine's answer (its longest context, whole requests, concurrency) beside the largest whole
    context or batch for which PER_GPU(context, batch) — weights + KV cache + activations per GPU — fits LIMIT
    bytes (by bisection). WHERE: the GPUs, as the answer says them."""
    reached_limit = None
    if what == "ctx":
        # A context past the model's own limit is no answer (vLLM refuses a max_model_len past it): the search
        # stops there, and the answer says so when it reaches it.
        without = largest(lambda n: per_gpu(n, batch) <= limit, model_limit or 1 << 24)
        value: int | float = engine.max_context if engine is not None else without
        how = f"the longest context of {batch:,} sequence(s)"
        reached_limit = model_limit
    else:
        without = largest(lambda n: per_gpu(context, n) <= limit, 1 << 20)
        if engine is None:
            value = without
        else:
            value = engine.max_concurrency if what == "concurrency" else int(engine.max_concurrency)
        how = f"sequences of {context:,} tokens at once"
    return Solved(
        what=what,
        value=value,
        without_engine=without,
        memory=limit,
        how=f"{how} on {where}, after the runtime reserve",
        gpu=gpu_name,
        fits=value > 0,
        limit=reached_limit if reached_limit is not None and value >= reached_limit else None,
    )


def largest(fits: Callable[[int], bool], limit: int) -> int:
    """The largest n in [1, LIMIT] with FITS(n) (FITS growing false past one point), or 0 when FITS(1) is false."""
    if not fits(1):
        return 0
    low, high = 1, limit
    while low < high:
        middle = (low + high + 1) // 2
        if fits(middle):
            low = middle
        else:
            high = middle - 1
    return low
