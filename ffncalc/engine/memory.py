"""The memory engine: will a model fit — its weights, KV cache, activations and training states, the serving
engine's own KV-cache budget and capacity (serving.py), and the largest context, batch or concurrency that fits
(`solve`). The arithmetic is footprint.py's and serving.py's; this module assembles it from MemoryOptions."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import UsageError
from ..loading import LoadedModel
from ..results import Remarks
from ..units import parse_context
from ..values import Value, replace
from .inputs import (
    cache_element_type,
    check_quantization,
    check_types,
    context_of,
    engine_door,
    loaded_model,
    stored_as,
)

if TYPE_CHECKING:
    from ..footprint import MemoryReport


class MemoryOptions(Value):
    """What `memory` counts: the context and batch, the weights' and cache's dtypes, training, the GPUs, and the
    serving engine whose KV-cache arithmetic to follow."""

    context: int | str | None = None  # tokens (8192 or "8k"); None: DEFAULT_CONTEXT, capped at the model's own limit
    batch: int = 1
    dtype: str | None = None  # what if every weight were stored so (WHAT_IF); None: as the checkpoint stores them
    kv_dtype: str | None = None  # the cache's element type; None: the weights' dtype (BF16 for quantized weights)
    quant_group_size: int | None = None  # `dtype` int4: inputs per group (GPTQ layout; None: 128)
    quantize_head: bool = False  # a quantized `dtype`: the output head quantized too (False: it stays BF16)
    train: bool = False
    optimizer: str = "adamw"
    recompute: str = "none"
    # ZeRO over the data-parallel ranks; None: stage 1 as `train` takes it (0 with `lora_rank`: ZeRO over adapters
    # is not modelled)
    zero_stage: int | None = None
    gpus: int = 1  # all the GPUs: inference, one copy's (pipeline stages × tensor parallel); training, the job's
    tensor_parallel: int | None = None  # None: inference over `gpus` ÷ `pipeline_parallel`; training, none
    sequence_parallel: bool = False  # training: Megatron's sequence parallelism across the tensor-parallel ranks
    gpu_memory: str | None = None  # another accelerator's memory, e.g. "96GB"
    chunk: int = 2048  # prefill chunk of the activation buffer, in tokens
    # Serving: an engine's KV-cache arithmetic (serving.py). "none", "vllm", "vllm@0.11" or "sglang".
    engine: str = "none"
    gpu: str | None = None  # the accelerator an engine's budget and --solve use; None: --gpu-memory, else h100
    kv_budget: str | None = None  # the KV-cache memory per GPU the engine printed, e.g. "40GiB": skips the budget
    gpu_memory_utilization: float | None = None  # vLLM's gpu_memory_utilization / SGLang's mem_fraction_static
    max_num_batched_tokens: int | None = None  # None: vLLM's default for the accelerator
    block_size: int | None = None  # None: vLLM's (16; 64 for MLA)
    runtime_reserve: str | None = None  # None: accelerators.RUNTIME_RESERVE
    solve: str | None = None  # "ctx", "batch" or "concurrency": the largest that fits
    expert_parallel: int = 1  # with an engine: routed experts over this many GPUs (serving_layout); training: over
    # this many of the data-parallel ranks (layouts)
    dp_attention: bool = False  # with an engine: attention data-parallel, each GPU its own requests' KV
    disaggregate: str | None = None  # with an engine: "P:D", prefill and decode on pools of P and D GPUs
    # Stages the layers split into: inference, each stage over `tensor_parallel` GPUs (the busiest stage per GPU);
    # training, the layout's (layouts.training_layout, as `train` counts it: the busiest pipeline rank per GPU)
    pipeline_parallel: int = 1
    context_parallel: int = 1
    data_parallel: int | None = None  # None: gpus ÷ (tensor_parallel · pipeline_parallel · context_parallel)
    virtual_stages: int = 1
    micro_batch: int | None = None  # None: batch
    global_batch: int | None = None  # sequences per optimizer step; None: micro_batch × data-parallel ranks
    recompute_modules: tuple[str, ...] = ()  # with recompute "selective": Megatron-LM's modules (layouts)
    # Training
    attention: str = "flash"  # "flash" (no s × s scores stored) or "eager" (Korthikanti et al.'s full formula)
    lora_rank: int | None = None  # LoRA adapters of this rank on the attention and FFN projections, base frozen

    def checked(self) -> MemoryOptions:
        """These options, or a UsageError naming the first that cannot be counted (before any download)."""
        check_types(self)
        from ..serving import parse_engine

        if self.context is not None:
            parse_context(self.context)
        check_quantization(self.dtype, self.quant_group_size, self.quantize_head)
        for name, value in (("batch", self.batch), ("gpus", self.gpus), ("chunk", self.chunk)):
            if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 1 << 20:
                raise UsageError(f"`{name}` must be a whole number from 1 to {1 << 20:,} (got {value})")
        if self.zero_stage not in (None, 0, 1, 2, 3):
            raise UsageError(f"`zero_stage` must be 0, 1, 2 or 3 (got {self.zero_stage})")
        if self.recompute not in ("none", "selective", "full"):
            raise UsageError(f"`recompute` must be none, selective or full (got {self.recompute!r})")
        if self.kv_dtype is not None:
            cache_element_type(self.kv_dtype, "`kv_dtype`")
        engine = parse_engine(self.engine)
        serving = (self.kv_budget, self.gpu_memory_utilization, self.max_num_batched_tokens, self.block_size)
        if engine.engine == "none" and any(value is not None for value in serving):
            raise UsageError(
                "`kv_budget`, `gpu_memory_utilization`, `max_num_batched_tokens` and `block_size` apply to an "
                "engine; add `engine` vllm (or sglang)"
            )
        for name, number in (
            ("`max_num_batched_tokens`", self.max_num_batched_tokens),
            ("`block_size`", self.block_size),
        ):
            if number is not None and not 1 <= number <= 1 << 24:
                raise UsageError(f"{name} must be a whole number from 1 to {1 << 24:,} (got {number})")
        if self.gpu_memory_utilization is not None and not 0 < self.gpu_memory_utilization <= 1:
            raise UsageError(
                f"`gpu_memory_utilization` must be above 0 and at most 1, e.g. 0.9 (got {self.gpu_memory_utilization})"
            )
        if self.solve is not None and self.solve not in ("ctx", "batch", "concurrency"):
            raise UsageError(f"`solve` must be ctx, batch or concurrency (got {self.solve!r})")
        if ((self.expert_parallel != 1 and not self.train) or self.dp_attention) and engine.engine == "none":
            raise UsageError(
                "`expert_parallel` and `dp_attention` follow an engine's layout (or training's); add `engine` sglang "
                "(or vllm), or `train`"
            )
        self._check_layout()
        if not 1 <= self.expert_parallel <= 1024:
            raise UsageError(f"`expert_parallel` must be a whole number from 1 to 1,024 (got {self.expert_parallel})")
        if (self.expert_parallel != 1 or self.dp_attention) and self.solve is not None:
            raise UsageError("`solve` with `expert_parallel` or `dp_attention` is not modelled; drop `solve`")
        if self.solve == "concurrency" and engine.engine == "none":
            raise UsageError("`solve` concurrency is the engine's figure; add `engine` vllm (or use `solve` batch)")
        if self.attention not in ("flash", "eager"):
            raise UsageError(f"`attention` must be flash or eager (got {self.attention!r})")
        trained = self.optimizer != "adamw" or self.recompute != "none" or self.zero_stage is not None
        if trained and not self.train:
            raise UsageError("`optimizer`, `recompute` and `zero_stage` apply to `train`; add `train`")
        training_only = self.lora_rank is not None or self.attention != "flash"
        if training_only and not self.train:
            raise UsageError("`attention` and `lora_rank` apply to `train`; add `train`")
        if self.lora_rank is not None and not 1 <= self.lora_rank <= 1 << 16:
            raise UsageError(f"`lora_rank` must be a whole number from 1 to 65,536 (got {self.lora_rank})")
        if self.lora_rank is not None and self.zero_stage:
            raise UsageError(
                "`lora_rank` with `zero_stage` is not modelled (ZeRO would shard only the adapters' states)"
            )
        tp = self.tensor_parallel
        if tp is not None and (not isinstance(tp, int) or isinstance(tp, bool) or not 1 <= tp <= 1 << 20):
            raise UsageError(f"`tensor_parallel` must be a whole number from 1 to {1 << 20:,} (got {tp})")
        if tp is not None and self.gpus > 1 and self.gpus % tp:
            raise UsageError(
                f"`gpus` {self.gpus} is not a multiple of `tensor_parallel` {tp}: data-parallel ranks are `gpus` ÷ `tensor_parallel`"
            )
        stages = self.pipeline_parallel if isinstance(self.pipeline_parallel, int) else 1
        if tp is not None and self.gpus > 1 and not self.train and self.gpus != tp * stages:
            raise UsageError(
                "without `train` the model is split across `tensor_parallel` × `pipeline_parallel` GPUs; give "
                "`tensor_parallel` or `gpus`, not both"
            )
        if tp is None and not self.train and self.gpus > 1 and self.gpus % stages:
            raise UsageError(
                f"`gpus` {self.gpus} is not a multiple of `pipeline_parallel` {stages}: each stage holds "
                "`gpus` ÷ `pipeline_parallel` of them"
            )
        if self.sequence_parallel and not self.train:
            raise UsageError("`sequence_parallel` applies to `train`; add `train`")
        if self.sequence_parallel and (tp or 1) < 2:
            raise UsageError(
                "`sequence_parallel` splits activations across tensor-parallel ranks; add `tensor_parallel` 2 or more"
            )
        if self.lora_rank is not None and (tp or 1) > 1:
            raise UsageError(
                "`lora_rank` with `tensor_parallel` is not modelled (how adapters split across ranks varies); drop `tensor_parallel`"
            )
        if self.zero_stage == 3 and self.train and self.data_parallel_ranks * self.context_parallel == 1:
            raise UsageError(
                "`zero_stage` 3 on one data-parallel rank shards nothing; give `gpus` 2 or more, or `zero_stage` 0"
            )
        if self.disaggregate is not None:
            from ..serving_layout import parse_disaggregate

            parse_disaggregate(self.disaggregate, self.inference_parallel * self.pipeline_parallel)
        return self

    LAYOUT_FIELDS = (
        "context_parallel", "data_parallel", "virtual_stages", "micro_batch", "global_batch",
    )  # fmt: skip

    def _check_layout(self) -> None:
        """The training layout's fields: whole numbers, given only with `train`, with the optimizer and attention the
        layout counts (layouts.rank_memory: AdamW in mixed precision, FlashAttention, every weight trained)."""
        given = []
        for name in self.LAYOUT_FIELDS:
            value = getattr(self, name)
            if value is None:
                continue
            if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 1 << 24:
                raise UsageError(f"`{name}` must be a whole number from 1 to {1 << 24:,} (got {value})")
            if value != 1 or name in ("data_parallel", "micro_batch", "global_batch"):
                given.append(f"`{name}`")
        if self.recompute_modules:
            given.append("`recompute_modules`")
        if given and not self.train:
            raise UsageError(f"{', '.join(given)}: a training layout; add `train`")
        stages = self.pipeline_parallel
        if not isinstance(stages, int) or isinstance(stages, bool) or not 1 <= stages <= 1 << 24:
            raise UsageError(f"`pipeline_parallel` must be a whole number from 1 to {1 << 24:,} (got {stages})")
        if self.train and stages != 1:
            given.append("`pipeline_parallel`")
        if stages != 1 and not self.train:
            engine = self.engine.strip().lower()
            if engine.startswith("sglang"):
                raise UsageError(
                    "`pipeline_parallel` with `engine` sglang is not modelled (how its stages size their pools); "
                    "use `engine` vllm"
                )
            if self.expert_parallel != 1 or self.dp_attention:
                raise UsageError(
                    "`pipeline_parallel` with `expert_parallel` or `dp_attention` is not modelled in memory"
                )
        if self.disaggregate is not None and (self.train or self.engine.strip().lower() == "none"):
            raise UsageError("`disaggregate` splits an engine's GPUs into prefill and decode pools; add `engine` vllm")
        if self.micro_batch is not None and self.batch != 1 and self.micro_batch != self.batch:
            raise UsageError("`batch` and `micro_batch` both give training's sequences per GPU; give one")
        if self.train and not self.layout_counted and (given or self.expert_parallel != 1):
            raise UsageError(
                f"{', '.join(given) or '`expert_parallel`'}: a training layout is counted as the train command "
                "counts it, with `optimizer` adamw, `attention` flash and no `lora_rank`"
            )

    @property
    def layout_counted(self) -> bool:
        """Training memory is the layout's busiest rank (as `train` counts it): AdamW, FlashAttention, no LoRA."""
        return self.optimizer == "adamw" and self.attention == "flash" and self.lora_rank is None

    @property
    def zero(self) -> int:
        """The ZeRO stage counted: `zero_stage`, else 1 (`train`'s default), or 0 with `lora_rank`."""
        if self.zero_stage is not None:
            return self.zero_stage
        return 0 if self.lora_rank is not None else 1

    @property
    def inference_parallel(self) -> int:
        """The GPUs each inference stage splits its layers across: `tensor_parallel`, else `gpus` ÷ `pipeline_parallel`."""
        return self.tensor_parallel or max(1, self.gpus // self.pipeline_parallel)

    @property
    def training_parallel(self) -> int:
        """Training's tensor-parallel ranks: `tensor_parallel`, else none."""
        return self.tensor_parallel or 1

    @property
    def data_parallel_ranks(self) -> int:
        """Training's data-parallel ranks: `data_parallel`, else all the job's GPUs ÷ (tp · pp · cp)."""
        if self.data_parallel is not None:
            return self.data_parallel
        model = self.training_parallel * self.pipeline_parallel * self.context_parallel
        return max(self.gpus, model) // model


@engine_door
def memory(
    model: str | LoadedModel, context: int | str | None = None, options: MemoryOptions | None = None, **changes: Any
) -> MemoryReport:
    """Will MODEL fit: weights (as stored, or as a dtype), KV cache at CONTEXT × batch, activations, training.

    OPTIONS (or keyword CHANGES to the defaults, e.g. batch=8, kv_dtype="fp8") say what to count."""
    from ..footprint import ACCELERATORS, count_memory

    options = replace(options or MemoryOptions(), **changes)
    if context is not None:
        options = replace(options, context=context)
    options.checked()
    loaded = loaded_model(model)
    remarks = Remarks()
    question = _question(loaded, options, remarks)
    accelerators = dict(ACCELERATORS)
    asked = question.gpu_name if options.gpu is not None or options.gpu_memory is not None else None
    if asked is not None:
        accelerators = {asked: question.gpu_memory} | accelerators
    parallel_layout = _training_layout(loaded, options, question.context)
    report = count_memory(
        loaded.spec,
        loaded.info,
        weight_dtype=question.weight_dtype,
        scheme=question.scheme,
        context=question.context,
        batch=options.batch,
        kv_dtype=question.cache_dtype,
        chunk=options.chunk,
        gpus=options.inference_parallel,
        accelerators=accelerators,
        train=options.train,
        optimizer=options.optimizer,  # type: ignore[arg-type]
        recompute=options.recompute,  # type: ignore[arg-type]
        zero_stage=options.zero,
        data_parallel=options.data_parallel_ranks,
        tensor_parallel=options.training_parallel,
        sequence_parallel=options.sequence_parallel,
        layout_training=parallel_layout,
        reserve=question.reserve,
        attention=options.attention,  # type: ignore[arg-type]
        lora_rank=options.lora_rank,
        asked=asked,
        pipeline_parallel=1 if options.train else options.pipeline_parallel,
    )
    if question.version.engine != "none":
        from .serving import serve

        engine = serve(loaded.spec, question)
        report = replace(report, engine=engine)
        if engine.max_concurrency < 1:
            remarks.warnings.append(
                f"{engine.engine} would refuse to start: one request of {question.context:,} tokens needs more KV "
                f"cache than the {engine.kv_capacity_tokens:,} tokens it has room for (a shorter context, its "
                "max_model_len, or more GPUs)"
            )
    if options.solve is not None:
        report = replace(report, solved=_solve(loaded, options, question, report))
    return remarks.about(report)


def _question(loaded: LoadedModel, options: MemoryOptions, remarks: Remarks) -> Any:
    """What the options mean for LOADED, resolved once: the context, the weights and cache as counted (as the
    engine loads them), the accelerator an engine's budget and `solve` use (`gpu`, else `gpu_memory`, else the
    H100), the runtime reserve, the layout; notes on what was assumed go to REMARKS."""
    from fractions import Fraction

    from ..accelerators import accelerator, memory_of, reserve_of
    from ..parallel import check_tensor_parallel
    from ..serving import parse_engine
    from ..units import parse_size
    from .serving import ServingQuestion

    if options.train:
        check_tensor_parallel(loaded.spec, options.training_parallel, "training")
    else:
        check_tensor_parallel(loaded.spec, options.inference_parallel, "serving")
    tokens = context_of(options.context, loaded, remarks)
    weights = stored_as(
        loaded, options.dtype, options.kv_dtype, options.quant_group_size, options.quantize_head, options.engine
    )
    version = parse_engine(options.engine)
    remarks.notes += weights.notes
    if options.train and weights.scheme is not None:
        method = weights.scheme.method
        remarks.notes.append(
            f"`train` with {method} weights and `lora_rank`: QLoRA-style, the base frozen as stored ({method}, no "
            "gradients, no optimizer states) and the 16-bit adapters trained in mixed precision."
            if options.lora_rank is not None
            else f"`train` with {method} weights: the training figures are full training in 16-bit mixed precision "
            "(2 bytes a weight and a gradient, the optimizer's float32 states); a quantized model is trained only as "
            "a frozen base with adapters (add `lora_rank` for QLoRA-style figures)."
        )
    if options.gpu_memory is not None and options.gpu is None:
        gpu_name, gpu_memory = f"your GPU ({options.gpu_memory.strip()})", memory_of(options.gpu_memory)
    else:
        chip = accelerator(options.gpu or "h100")
        gpu_name, gpu_memory = chip.name, chip.memory
    reserve = reserve_of(options.runtime_reserve)
    return ServingQuestion(
        version=version,
        gpu_name=gpu_name,
        gpu_memory=gpu_memory,
        reserve=reserve,
        context=tokens,
        weight_dtype=weights.dtype,
        scheme=weights.scheme,
        cache_dtype=weights.cache_dtype,
        tensor_parallel=options.inference_parallel,
        pipeline_parallel=1 if options.train else options.pipeline_parallel,
        expert_parallel=options.expert_parallel,
        dp_attention=options.dp_attention,
        disaggregate=options.disaggregate,
        kv_budget=None if options.kv_budget is None else parse_size(options.kv_budget),
        gpu_memory_utilization=None
        if options.gpu_memory_utilization is None
        else Fraction(str(options.gpu_memory_utilization)),
        max_num_batched_tokens=options.max_num_batched_tokens,
        block_size=options.block_size,
        model_limit=loaded.config.max_context(),
        served_as=weights.served_as,
    )


def _training_layout(loaded: LoadedModel, options: MemoryOptions, tokens: int) -> Any:
    """With `train` and the layout counted as `train` counts it: the busiest rank's figures in place of the
    single-rank count (layouts.layout_training, bound to the layout); None otherwise."""
    if not (options.train and options.layout_counted):
        return None
    from functools import partial

    from ..layouts import layout_training, training_layout

    layout = training_layout(
        loaded.spec,
        tokens,
        max(options.gpus, options.training_parallel * options.pipeline_parallel * options.context_parallel),
        tp=options.training_parallel,
        pp=options.pipeline_parallel,
        cp=options.context_parallel,
        ep=options.expert_parallel,
        dp=options.data_parallel,
        vpp=options.virtual_stages,
        micro_batch=options.micro_batch or options.batch,
        global_batch=options.global_batch,
        sequence_parallel=options.sequence_parallel,
        zero_stage=options.zero,
        recompute=options.recompute,
        recompute_modules=options.recompute_modules,
    )
    return partial(layout_training, loaded.spec, layout=layout, context=tokens)


def _solve(loaded: LoadedModel, options: MemoryOptions, question: Any, report: MemoryReport) -> Any:
    """`solve`, with ffncalc's own figure per GPU counted as `memory` counts it without an engine or training (the
    weights as the engine loads them: its dtype rule already applied)."""
    from .serving import solve

    plain = replace(
        options, engine="none", solve=None, train=False, lora_rank=None, attention="flash", zero_stage=None,
        kv_budget=None, gpu_memory_utilization=None, max_num_batched_tokens=None, block_size=None,
        dtype=options.dtype or question.served_as,
    )  # fmt: skip

    def per_gpu(ctx: int, batch: int) -> int:
        return memory(loaded, options=replace(plain, context=ctx, batch=batch)).per_gpu_inference

    where = f"{question.gpu_name} × {options.inference_parallel} (tensor parallel)"
    if options.pipeline_parallel > 1:
        where += f" × {options.pipeline_parallel} stages"
    return solve(
        options.solve or "", per_gpu, engine=report.engine, context=question.context, batch=options.batch,
        model_limit=question.model_limit, limit=question.gpu_memory - question.reserve, where=where,
        gpu_name=question.gpu_name,
    )  # fmt: skip
