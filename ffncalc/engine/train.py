"""The training engine: what training a model costs (training.py), the MFU of a measured run by each convention,
the compute-optimal size, and the parallel layout's memory, communication and expected speed (layouts.py);
assembled from TrainOptions."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import UsageError
from ..loading import LoadedModel
from ..results import Remarks
from ..units import parse_context
from ..values import Value, field_values, replace
from .inputs import (
    check_types,
    engine_door,
    loaded_model,
)
from .params import account

if TYPE_CHECKING:
    from ..training import TrainReport

MAX_GPUS = 1 << 24  # the most GPUs a job may have (--gpus), and so the most --days may ask for
DEFAULT_TOKENS = 10**12  # a run of 1T tokens when neither tokens nor a compute budget is given
MIN_MEASURED_MFU = 1e-6


class TrainOptions(Value):
    """What `train` estimates: the run (tokens, sequence length), the hardware and the assumptions about it."""

    tokens: int | str | None = None  # 15T, 300B, 2e12 (decimal); None: what `compute` buys, else DEFAULT_TOKENS
    seq: int | str = 8192  # tokens per sequence: 8192 or "8k" (k = 1024)
    gpu: str = "h100"
    gpus: int = 1
    compute_dtype: str = "bf16"  # the matmuls' dtype: which dense peak
    mfu: float | None = None  # None: DEFAULT_MFU, assumed (or the measured run's, with measured_tokens_per_second)
    price: float | None = None  # per GPU-hour
    days: float | None = None  # the inverse: the GPUs needed to finish in this many days
    recompute: str = "none"
    zero_stage: int = 1
    measured_tokens_per_second: float | None = None
    per_gpu: bool = False  # measured_tokens_per_second is per GPU
    compute: float | None = None  # compute-optimal for this budget instead of the run's
    tensor_parallel: int = 1  # ranks each matrix is split across; the data-parallel ranks are gpus ÷ tensor_parallel
    sequence_parallel: bool = False  # Megatron's sequence parallelism across the tensor-parallel ranks
    micro_batch: int = 1  # sequences per GPU per forward: what activations are stored for
    global_batch: int | None = None  # sequences per optimizer step; None: micro_batch × data-parallel ranks
    pipeline_parallel: int = 1  # pipeline stages (--pp)
    context_parallel: int = 1  # ranks each sequence is split across (--cp)
    expert_parallel: int = 1  # ranks the routed experts are split across, carved out of dp × cp (--ep)
    data_parallel: int | None = None  # None: gpus ÷ (tp · pp · cp)
    virtual_stages: int = 1  # model chunks per pipeline rank, interleaved 1F1B (--vpp)
    plan: bool = False  # rank every layout of --gpus that fits, by expected tokens/s per GPU
    recompute_modules: tuple[str, ...] = ()  # with recompute "selective": Megatron-LM's modules (layouts)

    def checked(self) -> TrainOptions:
        """These options, or a UsageError naming the first that cannot be used (before any download)."""
        check_types(self)
        from ..training import parse_tokens

        if self.tokens is not None:
            parse_tokens(self.tokens)
        parse_context(self.seq)
        if not isinstance(self.gpus, int) or isinstance(self.gpus, bool) or not 1 <= self.gpus <= MAX_GPUS:
            raise UsageError(f"`gpus` must be a whole number from 1 to {MAX_GPUS:,} (got {self.gpus})")
        if self.mfu is not None and not 0 < self.mfu <= 1:
            raise UsageError(f"`mfu` must be above 0 and at most 1, e.g. 0.4 (got {self.mfu})")
        for name, value in (("`price`", self.price), ("`days`", self.days), ("`compute`", self.compute)):
            if value is not None and not (0 < value < float("inf")):
                raise UsageError(f"{name} must be a positive number (got {value})")
        if self.measured_tokens_per_second is not None and not 0 < self.measured_tokens_per_second < float("inf"):
            raise UsageError(
                f"`measured_tokens_per_second` must be a positive number (got {self.measured_tokens_per_second})"
            )
        if self.per_gpu and self.measured_tokens_per_second is None:
            raise UsageError("`per_gpu` says how `measured_tokens_per_second` was counted; add it")
        if self.recompute not in ("none", "selective", "full"):
            raise UsageError(f"`recompute` must be none, selective or full (got {self.recompute!r})")
        if self.zero_stage not in (0, 1, 2, 3):
            raise UsageError(f"`zero_stage` must be 0, 1, 2 or 3 (got {self.zero_stage})")
        if self.days is not None and self.gpus != 1:
            raise UsageError("`days` finds the number of GPUs; give `days` or `gpus`, not both")
        for name, number in (
            ("`tensor_parallel`", self.tensor_parallel),
            ("`micro_batch`", self.micro_batch),
            ("`global_batch`", self.global_batch),
            ("`pipeline_parallel`", self.pipeline_parallel),
            ("`context_parallel`", self.context_parallel),
            ("`expert_parallel`", self.expert_parallel),
            ("`data_parallel`", self.data_parallel),
            ("`virtual_stages`", self.virtual_stages),
        ):
            if number is not None and (not isinstance(number, int) or isinstance(number, bool) or number < 1):
                raise UsageError(f"{name} must be a whole number of at least 1 (got {number})")
        model = self.tensor_parallel * self.pipeline_parallel * self.context_parallel
        if self.days is None and self.gpus % model and not self.plan:
            raise UsageError(
                f"`gpus` {self.gpus} is not a multiple of `tensor_parallel` × `pipeline_parallel` × `context_parallel` ({model}): data-parallel ranks are "
                "`gpus` ÷ (`tensor_parallel` × `pipeline_parallel` × `context_parallel`)"
            )
        if self.data_parallel is not None and self.days is None and model * self.data_parallel != self.gpus:
            raise UsageError(
                f"`tensor_parallel` × `pipeline_parallel` × `context_parallel` × `data_parallel` is {model * self.data_parallel:,}, not `gpus` {self.gpus:,}; leave out "
                "`data_parallel` to derive it"
            )
        if self.plan and (self.days is not None or self.gpus < 2):
            raise UsageError("`plan` searches the layouts of a job; give its `gpus` (2 or more), not `days`")
        if self.sequence_parallel and self.tensor_parallel < 2:
            raise UsageError(
                "`sequence_parallel` splits activations across tensor-parallel ranks; add `tensor_parallel` 2 or more"
            )
        return self


# The batch that minimises the loss for a compute budget C (FLOPs), fitted by Bi et al. 2024, "DeepSeek LLM:
# Scaling Open-Source Language Models with Longtermism", §3.1: B_opt = 0.2920 · C^0.3271 tokens.
BATCH_LAW_SOURCE = "Bi et al. 2024 §3.1: 0.2920 · C^0.3271 tokens"


def optimal_global_batch(flops: int, seq: int) -> int:
    """Sequences per optimizer step for a run of FLOPS at SEQ tokens a sequence: DeepSeek LLM's optimal batch in
    tokens ÷ SEQ, rounded to the nearest power of two (so that the data-parallel sizes of a power-of-two cluster
    divide it), at least 1."""
    import math

    sequences = 0.2920 * float(flops) ** 0.3271 / seq
    return 1 << max(0, round(math.log2(sequences))) if sequences >= 1 else 1


@engine_door
def train(model: str | LoadedModel, options: TrainOptions | None = None, **changes: Any) -> TrainReport:
    """What training MODEL on OPTIONS.tokens costs: FLOPs, GPU-hours, days and cost at an assumed MFU; the MFU of
    a measured run as each framework counts FLOPs; the compute-optimal size; training memory per GPU."""
    import math
    from fractions import Fraction

    from ..accelerators import DTYPES, accelerator
    from ..compute import count_flops
    from ..footprint import training_memory, weight_layout
    from ..training import (
        CONVENTION_NOTES,
        CONVENTIONS,
        DEFAULT_MFU,
        HOURS_PER_DAY,
        Batch,
        ComputeOptimalReport,
        Convention,
        Memory,
        TrainReport,
        chinchilla_20,
        chinchilla_approach_3,
        gpu_hours,
        megatron_flops_per_token,
        mfu_of,
        nanogpt_flops_per_token,
        palm_flops_per_token,
        parse_tokens,
        peer_shape,
        scaled,
        torchtitan_flops_per_token,
        total_components,
    )

    options = replace(options or TrainOptions(), **changes).checked()
    dtype = options.compute_dtype.lower()
    if dtype not in DTYPES:
        raise UsageError(f"`compute_dtype` {options.compute_dtype!r}: use one of {', '.join(DTYPES)}")
    chip = accelerator(options.gpu)
    peak = chip.peak(dtype)
    if peak is None:
        raise UsageError(f"{chip.name} has no {dtype} units; use `compute_dtype` bf16")
    seq = parse_context(options.seq)
    loaded = loaded_model(model)
    info, remarks = loaded.info, Remarks()
    if options.tokens is not None:
        tokens = parse_tokens(options.tokens)
    elif options.compute is not None:
        # A budget without a run: the run is the budget spent on this model, the tokens it buys (ffncalc's exact
        # FLOPs per token at this sequence length), so the time, cost and memory answer the question asked.
        per_token = Fraction(count_flops(loaded.spec, seq, info).training, seq)
        tokens = max(1, math.floor(Fraction(round(options.compute)) / per_token))
        remarks.notes.append(
            f"no number of tokens given: the run is the {options.compute:.4g}-FLOP budget spent on this model, "
            f"{tokens:,} tokens at its exact FLOPs per token"
        )
    else:
        tokens = DEFAULT_TOKENS
        remarks.notes.append(f"no number of tokens given: {tokens:,} assumed")
    limit = loaded.config.max_context()
    if limit is not None and seq > limit:
        remarks.warnings.append(
            f"`seq` {seq:,} exceeds this config's {loaded.config.context_field} ({limit:,}); counted anyway"
        )
    from ..parallel import check_tensor_parallel

    check_tensor_parallel(loaded.spec, options.tensor_parallel, "training")
    flops = count_flops(loaded.spec, seq, info)
    forward = flops.prefill
    per_sequence = flops.training
    total = scaled(per_sequence, tokens, seq)
    from ..layouts import ParallelLayout, check_recompute_modules
    from ..layouts import recompute_flops as layout_recompute_flops

    check_recompute_modules(loaded.spec, options.recompute, options.recompute_modules)
    recomputed = ParallelLayout(recompute=options.recompute, recompute_modules=options.recompute_modules)  # type: ignore[arg-type]
    hardware = total + scaled(
        layout_recompute_flops(loaded.spec, seq, forward.total, forward.attention_scores, recomputed), tokens, seq
    )
    params_report = account(loaded)
    active = params_report.active_params or params_report.language_model_params
    shape = peer_shape(loaded.spec, active, params_report.components.embedding)

    measured = options.measured_tokens_per_second
    gpus = options.gpus
    mfu, assumed = (options.mfu or DEFAULT_MFU), True  # given or the default, an assumption
    hours = gpu_hours(total, mfu, peak)
    tp = options.tensor_parallel
    model_ranks = tp * options.pipeline_parallel * options.context_parallel
    if options.days is not None:  # whole model replicas (tp · pp · cp GPUs each)
        needed = math.ceil(hours / (options.days * HOURS_PER_DAY) / model_ranks) * model_ranks
        if needed > MAX_GPUS:
            raise UsageError(
                f"finishing in {options.days:g} days needs {needed:,.3g} GPUs at an MFU of {mfu:g}, more than any "
                f"job ffncalc models ({MAX_GPUS:,}); allow more days"
            )
        gpus = max(model_ranks, needed)
    data_parallel = gpus // model_ranks
    per_step = options.micro_batch * data_parallel
    if options.plan and options.global_batch is None:  # one batch for every layout compared: the optimal one's
        options = replace(options, global_batch=optimal_global_batch(total, seq))
        remarks.notes.append(
            f"no `global_batch` given: {options.global_batch:,} sequences of {seq:,} assumed, the batch DeepSeek LLM's "
            f"scaling law gives this run's {total:.3g} FLOPs ({BATCH_LAW_SOURCE}), rounded to a power of two"
        )
    global_batch = options.global_batch or per_step
    if global_batch % per_step and not options.plan:
        raise UsageError(
            f"`global_batch` {global_batch:,} is not a multiple of `micro_batch` × data-parallel ranks "
            f"({options.micro_batch} × {data_parallel:,} = {per_step:,})"
        )
    job_rate = None if measured is None else measured * (gpus if options.per_gpu else 1)
    exact_per_token = Fraction(per_sequence, seq)
    if job_rate is not None:
        measured_mfu = mfu_of(float(exact_per_token), job_rate, gpus, peak)
        # A rate past the chips' peak is no measurement of this model on them; one under a millionth of it would
        # take longer than any run (a miscounted unit either way).
        if not MIN_MEASURED_MFU <= measured_mfu <= 1:
            unit = "per GPU (`per_gpu`)" if options.per_gpu else "for the whole job of `gpus`"
            raise UsageError(
                f"{job_rate:,.4g} tokens/s {unit} would be an MFU of {measured_mfu:,.4g} on {gpus:,} × {chip.name} "
                f"(dense {dtype}): a measured rate must give an MFU above {MIN_MEASURED_MFU:g} and at most 1; check "
                "the rate, `gpus`, `per_gpu` and `compute_dtype`"
            )
        if options.mfu is None:  # the measured run's own MFU sets the time and cost
            mfu, assumed = measured_mfu, False
            hours = gpu_hours(total, mfu, peak)
    fixed_forward = flops_profile_fixed(loaded.spec)
    peers = {
        "ffncalc": ("ffncalc compute.count_flops", exact_per_token),
        "megatron": (
            "NVIDIA/Megatron-LM megatron/training/training.py num_floating_point_operations @ d98e8a64",
            megatron_flops_per_token(fixed_forward, shape, seq),
        ),
        "torchtitan": (
            "pytorch/torchtitan torchtitan/models/utils.py get_*_model_nparams_and_flops @ b5bcd76c",
            Fraction(torchtitan_flops_per_token(shape, seq)),
        ),
        "palm": ("PaLM (Chowdhery et al. 2022) appendix B", Fraction(palm_flops_per_token(shape, seq))),
        "nanogpt": ("karpathy/nanoGPT model.py estimate_mfu @ 04a1d697", Fraction(nanogpt_flops_per_token(shape, seq))),
    }
    conventions = [
        Convention(
            name=name,
            source=source,
            flops_per_token=round(value),
            ratio_to_exact=float(value / exact_per_token),
            mfu=None if job_rate is None else mfu_of(float(value), job_rate, gpus, peak),
            note=CONVENTION_NOTES[name],
        )
        for name, (source, value) in peers.items()
    ]
    hfu = None if job_rate is None else mfu_of(float(Fraction(hardware, tokens)), job_rate, gpus, peak)

    budget = total if options.compute is None else round(options.compute)
    compute_optimal = ComputeOptimalReport(
        compute=budget,
        compute_source="this run's total model FLOPs" if options.compute is None else "`compute`",
        rules=[chinchilla_20(budget), chinchilla_approach_3(budget)],
        tokens_per_param=tokens / active,
        times_past_20=tokens / active / 20,
    )
    if options.zero_stage == 3 and data_parallel * options.context_parallel == 1 and not options.plan:
        raise UsageError(
            "`zero_stage` 3 on one data-parallel rank shards nothing; give `gpus` 2 or more, or `zero_stage` 0"
        )
    layout_figures = _train_layout(loaded, options, chip, dtype, seq, gpus, global_batch, flops)
    # Full training in 16-bit mixed precision, as `memory --train` counts it (footprint.training_memory), without the
    # inference figures memory() would add.
    training = training_memory(
        loaded.spec,
        weight_layout(loaded.spec, "BF16", None),
        seq,
        options.micro_batch,
        "adamw",
        options.recompute,  # type: ignore[arg-type]
        data_parallel,
        options.zero_stage,
        tensor_parallel=tp,
        sequence_parallel=options.sequence_parallel,
    )
    # One answer: the memory per GPU is the layout's busiest rank (layouts.rank_memory, as `memory --train` counts
    # it); with --plan the best layout's, or where none fits the best-looking one's that does not.
    rejected = layout_figures.get("rejected") or []
    if layout_figures.get("layout_report") is not None:
        per_gpu = layout_figures["per_gpu_bytes"]
    elif rejected:
        per_gpu = rejected[0].per_gpu_bytes
    else:  # --plan found no layout of these GPUs at all
        per_gpu = training.per_gpu
    # The batch as the layout runs it: the stated one, or with --plan the best layout's (else the stated options').
    best = layout_figures.get("layout_report")
    batch_layout = ParallelLayout(
        tp=tp, dp=data_parallel, micro_batch=options.micro_batch, global_batch=global_batch,
        sequence_parallel=options.sequence_parallel,
    )  # fmt: skip
    if best is not None:
        batch_layout = ParallelLayout(
            tp=best.layout["tp"], dp=best.layout["dp"], micro_batch=best.layout["micro_batch"],
            global_batch=best.layout["global_batch"], sequence_parallel=best.sequence_parallel,
        )  # fmt: skip
    if per_gpu > chip.memory and not options.plan:
        remarks.warnings.append(
            f"training memory is {per_gpu / (1 << 30):,.1f} GiB per GPU at ZeRO stage {options.zero_stage}, more than "
            f"{chip.name}'s {chip.memory / (1 << 30):,.1f} GiB: it does not fit (`zero_stage` 3, `recompute` full, or "
            "more `gpus`)"
        )
    report = TrainReport(
        **field_values(info),
        tokens=tokens,
        seq=seq,
        params=active,
        flops_per_sequence=per_sequence,
        flops_per_token=round(exact_per_token),
        total_flops=total,
        components=total_components(field_values(forward), tokens, seq),
        recompute=options.recompute,  # type: ignore[arg-type]
        hardware_flops=hardware,
        gpu=chip.name,
        dtype=dtype,
        peak_flops=peak,
        gpus=gpus,
        mfu=mfu,
        mfu_assumed=assumed,
        gpu_hours=hours,
        days=hours / gpus / HOURS_PER_DAY,
        price=options.price,
        cost=None if options.price is None else hours * options.price,
        batch=Batch(
            micro_batch=batch_layout.micro_batch,
            data_parallel=batch_layout.dp,
            tensor_parallel=batch_layout.tp,
            sequence_parallel=batch_layout.sequence_parallel,
            accumulation_steps=batch_layout.micro_batches,
            global_batch=global_batch,
            tokens_per_step=global_batch * seq,
            steps=-(-tokens // (global_batch * seq)),
        ),
        memory=Memory(
            per_gpu=per_gpu,
            gpu_memory=chip.memory,
            fits=per_gpu <= chip.memory,
            zero_stage=options.zero_stage,
            formula=training.activations_formula,
        ),
        measured_tokens_per_second=job_rate,
        hfu=hfu,
        mfu_by_convention={convention.name: convention.mfu for convention in conventions},
        flops_per_token_by_convention=conventions,
        compute_optimal=compute_optimal,
        conventions=CONVENTIONS + flops.conventions + layout_figures.pop("conventions"),
        **layout_figures,
    )
    return remarks.about(report)


def _train_layout(
    loaded: LoadedModel,
    options: TrainOptions,
    chip: Any,
    dtype: str,
    seq: int,
    gpus: int,
    global_batch: int,
    flops: Any,
) -> dict[str, Any]:
    """The layout figures of `train` (layouts.evaluate), or with `plan` every layout of the job ranked."""
    from .. import layouts

    forward = flops.prefill
    recomputed = layouts.ParallelLayout(recompute=options.recompute, recompute_modules=options.recompute_modules)  # type: ignore[arg-type]
    recompute = layouts.recompute_flops(loaded.spec, seq, forward.total, forward.attention_scores, recomputed)
    figures = dict(
        model_flops_per_sequence=flops.training,
        hardware_flops_per_sequence=flops.training + recompute,
        lm_head_flops_per_sequence=3 * forward.lm_head,
        attention_flops_per_sequence=3 * forward.attention_scores,
    )
    if options.plan:
        plan = layouts.plan(
            loaded.spec, seq, chip, dtype, gpus, global_batch=options.global_batch, zero_stage=options.zero_stage,
            recompute=options.recompute, recompute_modules=options.recompute_modules, **figures,
        )  # fmt: skip
        best = plan.layouts[0] if plan.layouts else None
        out = _layout_keys(best)
        out.update(layouts=plan.layouts, rejected=plan.rejected, plan_limits=plan.limits)
        out["conventions"] = layouts.LAYOUT_CONVENTIONS
        return out
    layout = layouts.training_layout(
        loaded.spec,
        seq,
        gpus,
        tp=options.tensor_parallel,
        pp=options.pipeline_parallel,
        cp=options.context_parallel,
        ep=options.expert_parallel,
        vpp=options.virtual_stages,
        micro_batch=options.micro_batch,
        global_batch=global_batch,
        sequence_parallel=options.sequence_parallel,
        zero_stage=options.zero_stage,
        recompute=options.recompute,
        recompute_modules=options.recompute_modules,
    )
    report = layouts.evaluate(loaded.spec, layout, seq, chip, dtype, **figures)
    out = _layout_keys(report)
    out["conventions"] = layouts.LAYOUT_CONVENTIONS
    return out


def _layout_keys(report: Any) -> dict[str, Any]:
    """The train report's top-level layout keys, from a layouts.LayoutReport (None: all None)."""
    if report is None:
        return dict(layout_report=None)
    return dict(
        layout=report.layout,
        per_gpu_bytes=report.per_gpu_bytes,
        fits=report.fits,
        communication=report.communication,
        bubble_fraction=report.bubble_fraction,
        expected_step_seconds=report.expected_step_seconds,
        expected_tokens_per_second_per_gpu=report.expected_tokens_per_second_per_gpu,
        expected_mfu=report.expected_mfu,
        layout_report=report,
    )


def flops_profile_fixed(spec: Any) -> int:
    """The forward matmul FLOPs one token costs whatever the context (compute.flops_profile's fixed part)."""
    from ..compute import flops_profile

    return flops_profile(spec).fixed
