"""Training layouts: how a job of many GPUs splits a model (tensor, pipeline, context, expert and data
parallelism, ZeRO), what the busiest GPU holds, what each collective sends per step, and the step time, tokens/s
per GPU and MFU to expect. Pure functions of a ModelSpec, a ParallelLayout and an Accelerator.

Sources (read, not copied; every rule below cites where it comes from):
- Megatron-LM (NVIDIA/Megatron-LM, core_r0.14.0): megatron/training/arguments.py (world size = TP·PP·CP·DP;
  experts % EP; expert_tensor_parallel_size defaults to tensor_model_parallel_size; layers % (PP·VPP) unless
  account_for_embedding_in_pipeline_split / account_for_loss_in_pipeline_split count the embedding and the loss as
  a layer each), megatron/core/parallel_state.py (rank order tp-cp-ep-dp-pp: TP innermost, PP outermost; expert
  data-parallel size = world ÷ (ETP·EP·PP)), megatron/core/pipeline_parallel/schedules.py @ d98e8a64 (1F1B warm-up:
  PP − rank − 1 micro-batches; interleaved: (PP − rank − 1)·2 + (VPP − 1)·PP, capped at all of them, in
  get_schedule_table's chunk order), megatron/training/theoretical_memory_usage.py @ d98e8a64 (first stage holds PP
  micro-batches; the interleaved penalty 1 + (PP−1)/(PP·VPP), which it does not cap at the micro-batches a step
  has: the schedule's own count is used here; it counts 6 + 12/DP bytes a parameter with the distributed optimizer,
  fp32 gradients, where ffncalc keeps ZeRO's 2 + 2 + 12 convention, Rajbhandari et al. 2020).
- Llama 3 (Grattafiori et al. 2024, §3.3.2): one layer fewer on the first and last pipeline stages (126 layers
  over 16 stages: 7 + 14·8 + 7).
- torchtitan's ParallelismConfig (pytorch/torchtitan torchtitan/config/job_config.py) for one typed layout value.
- Narayanan et al. 2021 (Megatron-LM, SC21): the bubble (PP − 1) ÷ (VPP · micro-batches) of the ideal step.
"""

from __future__ import annotations

from functools import cache
from typing import Any, Literal

from .errors import UsageError
from .results import Result
from .spec import Layer, ModelSpec, MoeFfn
from .values import Value

Recompute = Literal["none", "selective", "full"]

# Bytes per parameter, mixed precision (ffncalc's `train` and `memory --train` convention, Rajbhandari et al. 2020
# §3.1): 16-bit weights 2, 16-bit gradients 2, Adam's float32 master weights, momentum and variance 12.
WEIGHT_BYTES, GRADIENT_BYTES, OPTIMIZER_BYTES = 2, 2, 12
ACTIVATION_BYTES = 2  # bf16 on the wire: TP, PP, EP and CP messages


class ParallelLayout(Value):
    """How one training job splits the model and the batch across its GPUs (torchtitan's ParallelismConfig is the
    model): tp · pp · cp · dp GPUs; ep carved out of the dp · cp ranks for the MoE layers (Megatron-LM); vpp model
    chunks per pipeline rank (interleaved 1F1B); micro_batch sequences per forward; global_batch sequences per
    optimizer step (0: one micro-batch per data-parallel rank); zero_stage 0–3 over the data-parallel ranks."""

    tp: int = 1
    pp: int = 1
    cp: int = 1
    ep: int = 1
    dp: int = 1
    vpp: int = 1
    micro_batch: int = 1
    global_batch: int = 0
    sequence_parallel: bool = False
    zero_stage: int = 1
    recompute: Recompute = "none"
    # With recompute "selective": the modules recomputed, as Megatron-LM's recompute_modules names them (RECOMPUTE_MODULES);
    # empty: its default, core_attn.
    recompute_modules: tuple[str, ...] = ()

    @property
    def modules(self) -> tuple[str, ...]:
        """The modules selective recomputation recomputes (none without it)."""
        if self.recompute != "selective":
            return ()
        return self.recompute_modules or ("core_attn",)

    @property
    def gpus(self) -> int:
        return self.tp * self.pp * self.cp * self.dp

    @property
    def sequences(self) -> int:
        """Sequences per optimizer step: global_batch, or micro_batch × dp."""
        return self.global_batch or self.micro_batch * self.dp

    @property
    def micro_batches(self) -> int:
        """Micro-batches each pipeline runs per step (gradient accumulation): sequences ÷ (micro_batch × dp)."""
        return self.sequences // (self.micro_batch * self.dp)

    @property
    def expert_data_parallel(self) -> int:
        """The ranks an expert's gradients are reduced over: tp · dp · cp ÷ ep (expert TP 1, as Megatron-Bridge's
        MoE recipes set expert_tensor_parallel_size; Megatron-LM's own default is the TP size)."""
        return self.tp * self.dp * self.cp // self.ep

    def checked(self, spec: ModelSpec, seq: int) -> ParallelLayout:
        """This layout, or a UsageError naming the first rule it breaks (fields, not flags)."""
        from .parallel import check_tensor_parallel

        for name in ("tp", "pp", "cp", "ep", "dp", "vpp", "micro_batch"):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise UsageError(f"{name} must be a whole number of at least 1 (got {value})")
        if self.zero_stage not in (0, 1, 2, 3):
            raise UsageError(f"zero_stage must be 0, 1, 2 or 3 (got {self.zero_stage})")
        if self.recompute not in ("none", "selective", "full"):
            raise UsageError(f"recompute must be none, selective or full (got {self.recompute!r})")
        check_recompute_modules(spec, self.recompute, self.recompute_modules)
        if self.sequence_parallel and self.tp < 2:
            raise UsageError("sequence_parallel splits activations across tensor-parallel ranks; it needs tp ≥ 2")
        if self.vpp > 1 and self.pp < 2:
            raise UsageError(f"vpp {self.vpp} interleaves pipeline stages; it needs pp ≥ 2")
        check_tensor_parallel(spec, self.tp, "training")
        stage_layers(len(pipeline_layers(spec)), self.pp, self.vpp)  # refuses what does not divide
        experts = {layer.ffn.num_experts for layer in pipeline_layers(spec) if isinstance(layer.ffn, MoeFfn)}
        if self.ep > 1 and not experts:
            raise UsageError(f"ep {self.ep} splits experts, and this model has none; use ep 1")
        for count in sorted(experts):
            if count % self.ep:
                raise UsageError(f"ep {self.ep} does not divide {count} experts (each rank holds experts ÷ ep)")
        if (self.tp * self.dp * self.cp) % self.ep:
            raise UsageError(
                f"ep {self.ep} does not divide tp {self.tp} × dp {self.dp} × cp {self.cp} = "
                f"{self.tp * self.dp * self.cp} (the experts' ranks are carved out of each pipeline stage's, with "
                "expert tp 1: Megatron-LM parallel_state.py, world = expert tp · ep · expert dp · pp)"
            )
        if self.cp > 1 and seq % (2 * self.cp):
            raise UsageError(
                f"cp {self.cp} does not split a sequence of {seq:,} tokens: it must divide by 2 × cp = {2 * self.cp} "
                "(Megatron's load-balanced context parallelism cuts it into 2 · cp chunks)"
            )
        if self.global_batch < 0 or self.sequences % (self.micro_batch * self.dp):
            raise UsageError(
                f"global_batch {self.sequences:,} is not a multiple of micro_batch × dp ({self.micro_batch} × "
                f"{self.dp:,} = {self.micro_batch * self.dp:,})"
            )
        if self.zero_stage == 3 and self.dp * self.cp == 1:
            raise UsageError("zero_stage 3 on one data-parallel rank shards nothing; use zero_stage 0 or more dp")
        return self


# Megatron-LM @ d98e8a64, megatron/core/transformer/transformer_config.py, recompute_modules (with
# recompute_granularity "selective"; default ["core_attn"]): the ones ffncalc counts. "layernorm" and "mla_up_proj"
# use output-discarding checkpointing: the module's output is not kept for the backward but recomputed from its
# input, which is kept anyway. DeepSeek-V3's technical report §3.2.3 names the same two ("recomputation of RMSNorm
# and MLA up-projection").
RECOMPUTE_MODULES = {
    "core_attn": "the attention scores (FlashAttention stores none: FLOPs only)",
    "layernorm": "input_layernorm and pre_mlp_layernorm: each block's normed input, 2sbh, not stored",
    "mla_up_proj": "MLA's up-projections and RoPE: the heads' Q, K and V, 2sb·(2·heads·qk + heads·v), not stored",
}


def check_recompute_modules(spec: ModelSpec, recompute: str, modules: tuple[str, ...]) -> None:
    """A UsageError naming `recompute_modules` where they cannot be counted."""
    if not modules:
        return
    if recompute != "selective":
        raise UsageError(
            "`recompute_modules` choose what selective recomputation recomputes; add `recompute` selective"
        )
    unknown = [m for m in modules if m not in RECOMPUTE_MODULES]
    if unknown:
        raise UsageError(
            f"`recompute_modules` {', '.join(unknown)}: ffncalc counts {', '.join(RECOMPUTE_MODULES)} (Megatron-LM's "
            "names)"
        )
    if "mla_up_proj" in modules and not any(
        layer.attention is not None and layer.attention.mla is not None for layer in pipeline_layers(spec)
    ):
        raise UsageError("`recompute_modules` mla_up_proj recomputes MLA's up-projections; this model has no MLA")


def stored_activations(layer: Layer, s: int, b: int, h: int, layout: ParallelLayout) -> tuple[int, int]:
    """One layer's stored activations (copied, split) under LAYOUT's recomputation: full keeps the layer's input 2sbh;
    otherwise footprint.layer_activations (FlashAttention), less what the selective modules recompute
    (RECOMPUTE_MODULES)."""
    from .footprint import layer_activations

    if layout.recompute == "full":
        return 2 * s * b * h, 0
    copied, split = layer_activations(layer, s, b, h, True)
    modules = layout.modules
    if "layernorm" in modules:
        blocks = sum(part is not None for part in (layer.attention, layer.mixer, layer.ffn))
        copied -= blocks * 2 * s * b * h
    att = layer.attention
    if "mla_up_proj" in modules and att is not None and att.mla is not None:
        split -= 2 * s * b * att.num_heads * (2 * att.qk_head_dim + att.v_head_dim)
    return copied, split


def recompute_flops(spec: ModelSpec, seq: int, forward_total: int, forward_scores: int, layout: ParallelLayout) -> int:
    """Per sequence, what LAYOUT's recomputation runs again: full, one forward pass; selective, the forward attention
    scores (core_attn) and MLA's up-projections (mla_up_proj: 2 FLOPs a weight of q_b and kv_b per token; the norms
    and RoPE count no matmul FLOPs)."""
    if layout.recompute == "full":
        return forward_total
    modules, extra = layout.modules, 0
    if "core_attn" in modules:
        extra += forward_scores
    if "mla_up_proj" in modules:
        for layer in pipeline_layers(spec):
            att = layer.attention
            if att is None or att.mla is None:
                continue
            mla = att.mla
            q_up = 0
            if mla.q_lora_rank:
                q_up = (mla.q_b_input or mla.q_lora_rank) * (att.num_heads * att.qk_head_dim + mla.output_gate)
            kv_up = mla.kv_lora_rank * att.num_heads * (mla.qk_nope_head_dim + mla.v_head_dim)
            extra += 2 * seq * (q_up + kv_up)
    return extra


def training_layout(
    spec: ModelSpec,
    seq: int,
    gpus: int,
    *,
    tp: int = 1,
    pp: int = 1,
    cp: int = 1,
    ep: int = 1,
    dp: int | None = None,
    vpp: int = 1,
    micro_batch: int = 1,
    global_batch: int | None = None,
    sequence_parallel: bool = False,
    zero_stage: int = 1,
    recompute: str = "none",
    recompute_modules: tuple[str, ...] = (),
) -> ParallelLayout:
    """The checked layout of a job of GPUS (dp: gpus ÷ (tp · pp · cp) unless given): what `train` and
    `memory` with `train` both count, so they answer one memory per GPU. Errors name fields in backticks."""
    model = tp * pp * cp
    if gpus % model:
        raise UsageError(
            f"`gpus` {gpus:,} is not a multiple of `tensor_parallel` × `pipeline_parallel` × `context_parallel` "
            f"({model:,}): data-parallel ranks are `gpus` ÷ ({tp} × {pp} × {cp})"
        )
    if dp is not None and dp * model != gpus:
        raise UsageError(
            f"`tensor_parallel` × `pipeline_parallel` × `context_parallel` × `data_parallel` is {model * dp:,}, not "
            f"`gpus` {gpus:,}; leave out `data_parallel` to derive it"
        )
    return ParallelLayout(
        tp=tp,
        pp=pp,
        cp=cp,
        ep=ep,
        dp=gpus // model,
        vpp=vpp,
        micro_batch=micro_batch,
        global_batch=global_batch or 0,
        sequence_parallel=sequence_parallel,
        zero_stage=zero_stage,
        recompute=recompute,  # type: ignore[arg-type]
        recompute_modules=tuple(recompute_modules),
    ).checked(spec, seq)


def busiest_of(ranks: list[RankMemory]) -> RankMemory:
    """The pipeline rank that needs the most memory: the memory per GPU a layout needs (the first such rank)."""
    return max(ranks, key=lambda r: r.total)


# --- pipeline stages --------------------------------------------------------------------------------------


@cache
def layer_kinds(spec: ModelSpec) -> tuple[tuple[Layer, ...], tuple[int, ...]]:
    """The distinct layers of SPEC's pipeline, and each layer's index among them."""
    index: dict[Layer, int] = {}
    kind_of = tuple(index.setdefault(layer, len(index)) for layer in pipeline_layers(spec))
    return tuple(index), kind_of


def pipeline_layers(spec: ModelSpec) -> list[Layer]:
    from .structure import generating_layers

    return generating_layers(spec)


def stage_layers(layers: int, pp: int, vpp: int) -> list[int]:
    """Layers of each virtual stage, in pipeline order (virtual stage v · pp + rank is chunk v of rank `rank`).

    Megatron-LM (arguments.py): layers divide by pp · vpp; or, with account_for_embedding_in_pipeline_split and
    account_for_loss_in_pipeline_split, layers + 2 do (the embedding and the loss each take a layer's place on the
    first and last virtual stage: Llama 3's 126 layers over 16 stages, 7 + 14·8 + 7), or layers + 1 (the last stage
    one fewer). Otherwise an explicit pipeline_model_parallel_layout, as Megatron-Bridge writes DeepSeek-V3's 61
    layers over 16 stages (recipes/deepseek/h100/deepseek_v3.py): here the balanced one, the first stages one layer
    more. Refused when a virtual stage would hold no layer at all."""
    stages = pp * vpp
    if stages == 1:
        return [layers]
    for extra in (0, 2, 1):
        if (layers + extra) % stages == 0 and (layers + extra) // stages >= 1:
            counts = [(layers + extra) // stages] * stages
            if extra >= 1:
                counts[-1] -= 1  # the loss's place on the last virtual stage
            if extra == 2:
                counts[0] -= 1  # the embedding's place on the first
            return counts
    if stages > layers:
        raise UsageError(
            f"pp {pp} × vpp {vpp} = {stages} virtual stages are more than the {layers} layers (+ 2 for the embedding "
            "and the loss): each stage needs one"
        )
    each, more = divmod(layers, stages)
    return [each + 1] * more + [each] * (stages - more)


def rank_layer_indices(layers: int, pp: int, vpp: int) -> list[list[int]]:
    """For each pipeline rank, the indices of the layers it holds (its vpp chunks)."""
    return [[index for chunk in chunks for index in chunk] for chunks in rank_chunks(layers, pp, vpp)]


@cache
def rank_chunks(layers: int, pp: int, vpp: int) -> list[list[list[int]]]:
    """For each pipeline rank, the layer indices of each of its vpp model chunks (chunk v is virtual stage
    v · pp + rank)."""
    counts = stage_layers(layers, pp, vpp)
    starts = [sum(counts[:i]) for i in range(len(counts))]
    ranks: list[list[list[int]]] = [[] for _ in range(pp)]
    for virtual, (start, count) in enumerate(zip(starts, counts, strict=True)):
        ranks[virtual % pp].append(list(range(start, start + count)))
    return ranks


def in_flight(layout: ParallelLayout, rank: int) -> list[int]:
    """Micro-batches whose activations pipeline rank RANK holds at its peak, for each of its model chunks.

    Megatron-LM @ d98e8a64 (megatron/core/pipeline_parallel/schedules.py). 1F1B
    (get_pp_rank_microbatches, forward_backward_pipelining_without_interleaving): PP − rank − 1 warm-up forwards
    and one more before the first backward: min(micro-batches, PP − rank). Interleaved: (PP − rank − 1)·2 +
    (VPP − 1)·G warm-up chunk forwards (G = microbatch_group_size_per_vp_stage, PP by default:
    core/model_parallel_config.py), capped at micro-batches · VPP (are_all_microbatches_in_warmup), plus the
    steady state's first forward before its first backward; the chunk of each forward as get_schedule_table orders
    them (G micro-batches of chunk 0, the same G of chunk 1, …, then the next group). So a chunk's count is exact
    even where the chunks hold different numbers of layers (the first and last rank's)."""
    pp, vpp, m = layout.pp, layout.vpp, layout.micro_batches
    if pp == 1:
        return [1]
    if vpp == 1:
        return [min(m, pp - rank)]
    forwards = min(m * vpp, (pp - rank - 1) * 2 + (vpp - 1) * pp + 1)
    table = [
        chunk
        for start in range(0, m, pp)
        for chunk in range(vpp)
        for _ in range(start, m if start + pp >= m else start + pp)
    ]  # get_schedule_table's model chunk of each forward, in order
    return [table[:forwards].count(chunk) for chunk in range(vpp)]


# --- parameters of a rank ---------------------------------------------------------------------------------


class LayerParams(Value):
    """One layer's parameters as parallelism splits them: matrices over TP, vectors and routers copied, routed
    experts over EP (whole experts: expert TP 1)."""

    matrices: int
    copied: int
    experts: int


@cache
def layer_params(layer: Layer) -> LayerParams:
    from .tensors import layer_tensors

    matrices = copied = experts = 0
    for tensor in layer_tensors(layer):
        if tensor.borrowed or tensor.runs == "once_per_input":
            continue
        if tensor.part == "routed_experts":
            experts += tensor.elements
        elif tensor.part == "router" or len(tensor.shape) < 2:
            copied += tensor.elements
        else:
            matrices += tensor.elements
    return LayerParams(matrices, copied, experts)


def outer_params(spec: ModelSpec) -> tuple[int, int, int]:
    """(input tables, head matrix, the rest: final norm, head bias, model-level extras): the first stage's own, and
    the last stage's."""
    from .tensors import model_tensors

    embedding = head = rest = 0
    for tensor in model_tensors(spec):
        if tensor.borrowed or tensor.component in ("vision", "audio") or tensor.runs != "every_token":
            continue  # a tower's, or another module's, not the language model's stages
        if tensor.component == "embedding":
            embedding += tensor.elements
        elif tensor.component == "lm_head" and len(tensor.shape) >= 2:
            head += tensor.elements
        else:
            rest += tensor.elements
    if spec.tie_word_embeddings and spec.lm_head:
        head = spec.vocab_size * spec.hidden_size  # Megatron keeps the tied table on the last stage too
    return embedding, head, rest


def routed_params_per_token(layer: Layer) -> int:
    """The routed expert parameters one token runs through in LAYER: k of its E experts' (0 without experts)."""
    if not isinstance(layer.ffn, MoeFfn):
        return 0
    return layer_params(layer).experts * layer.ffn.experts_per_token // layer.ffn.num_experts


class RankMemory(Result):
    """One GPU's training memory: its pipeline stage's parameters, and the activations 1F1B holds there."""

    pipeline_rank: int
    layers: int  # layers this rank holds (all its chunks)
    dense_params: int  # parameters this GPU holds of the non-expert weights (after TP)
    expert_params: int  # of the routed experts (after EP and expert TP)
    weights: int  # bytes, after ZeRO-3's sharding where it applies
    gradients: int
    optimizer_states: int
    activations: int
    micro_batches_in_flight: float  # micro-batches' worth of this rank's layers held at the peak
    total: int


def _div(a: int, b: int) -> int:
    return -(-a // b)


def heaviest_rank(ranks: list[RankMemory]) -> int:
    """The pipeline rank whose step is longest: the most layers, and among those the most routed-expert parameters
    (MoE layers, whose all-to-alls and expert FLOPs the dense first layers of DeepSeek-style models lack)."""
    return max(ranks, key=lambda r: (r.layers, r.expert_params)).pipeline_rank


def _sharded(per_param: int, whole: int, dense: int, experts: int, n_dense: int, n_expert: int) -> int:
    """Bytes of a rank's dense and expert parameters at PER_PARAM bytes each: whole, or ZeRO-sharded (rounded up)."""
    if whole:
        return per_param * (dense + experts)
    return _div(per_param * dense, n_dense) + _div(per_param * experts, n_expert)


def rank_memory(spec: ModelSpec, layout: ParallelLayout, seq: int) -> list[RankMemory]:
    """Every pipeline rank's memory per GPU (weights, gradients, optimizer states, activations), ranks in order.

    Dense parameters split over TP (matrices) and copied (vectors, routers); routed experts over EP, whole (expert
    TP 1, as Megatron-Bridge's MoE recipes set expert_tensor_parallel_size; Megatron-LM's default would split them
    over TP too). ZeRO shards dense states over the dp · cp ranks (Megatron's distributed optimizer shards over the
    data-parallel group with context parallelism), expert states over the expert-data-parallel ranks
    tp · dp · cp ÷ ep: stage 1 the optimizer states, 2 the gradients
    too, 3 the weights too. Activations: stored_activations for one layer at seq ÷ cp tokens, per GPU as
    training_memory divides them by TP (copied parts by TP only with sequence parallelism), times the micro-batches
    in flight (in_flight); logits 4·s·b·vocab ÷ TP on the last stage for one micro-batch."""
    from .tensors import lm_head_rows

    layers = pipeline_layers(spec)
    t, n_dense, n_expert = layout.tp, layout.dp * layout.cp, layout.expert_data_parallel
    shard = {0: (1, 1, 1), 1: (1, 1, 0), 2: (1, 0, 0), 3: (0, 0, 0)}[layout.zero_stage]  # 0: sharded
    s, b, h = seq // layout.cp, layout.micro_batch, spec.hidden_size
    embedding, head, rest = outer_params(spec)
    # Each distinct layer's figures once (a model repeats a few kinds of layer), then each layer's as running sums:
    # a chunk is a run of consecutive layers, so its sums are two lookups (--plan evaluates a thousand layouts).
    distinct, kind_of = layer_kinds(spec)
    figures = []
    for layer in distinct:
        copied, split = stored_activations(layer, s, b, h, layout)
        p = layer_params(layer)
        figures.append(
            (
                _div(p.matrices, t) + p.copied,
                _div(p.experts, layout.ep),
                _div(copied * (1 if layout.sequence_parallel else t) + split, t),
            )
        )
    running = [(0, 0, 0)]
    for kind in kind_of:
        last, add = running[-1], figures[kind]
        running.append((last[0] + add[0], last[1] + add[1], last[2] + add[2]))
    result = []
    for rank, chunks in enumerate(rank_chunks(len(layers), layout.pp, layout.vpp)):
        dense = experts = activation = 0
        held = in_flight(layout, rank)
        for chunk, micro_batches in zip(chunks, held, strict=True):
            if not chunk:
                continue
            first, after = running[chunk[0]], running[chunk[-1] + 1]
            dense += after[0] - first[0]
            experts += after[1] - first[1]
            activation += (after[2] - first[2]) * micro_batches
        if rank == 0:
            dense += _div(embedding, t)
        if rank == layout.pp - 1 and not (layout.pp == 1 and spec.tie_word_embeddings):
            dense += _div(head, t)  # a tied table is the embedding's own on a single stage
        if rank == layout.pp - 1:
            dense += rest
        if rank == layout.pp - 1:
            activation += _div(4 * s * b * lm_head_rows(spec), t)

        weights, gradients, states = (
            _sharded(per_param, whole, dense, experts, n_dense, n_expert)
            for per_param, whole in zip((WEIGHT_BYTES, GRADIENT_BYTES, OPTIMIZER_BYTES), shard, strict=True)
        )
        result.append(
            RankMemory(
                pipeline_rank=rank,
                layers=sum(len(chunk) for chunk in chunks),
                dense_params=dense,
                expert_params=experts,
                weights=weights,
                gradients=gradients,
                optimizer_states=states,
                activations=activation,
                micro_batches_in_flight=sum(held) / len(held),
                total=weights + gradients + states + activation,
            )
        )
    return result


def layout_training(spec: ModelSpec, training: Any, layout: ParallelLayout, context: int) -> Any:
    """TRAINING's (a footprint.Training) per-GPU figures replaced by LAYOUT's busiest pipeline rank (layouts.rank_memory, the function
    `train` answers with): one memory per GPU for one layout, whichever command asks."""
    from .values import replace

    top = busiest_of(rank_memory(spec, layout, context))
    formula = training.activations_formula
    if layout.pp > 1 or layout.cp > 1:
        formula += (
            f"; × the micro-batches the busiest pipeline rank ({top.pipeline_rank}) holds in flight "
            f"({top.micro_batches_in_flight:g}, Megatron-LM's 1F1B schedule), sequence ÷ cp {layout.cp}"
        )
    return replace(
        training,
        gpus=layout.gpus,
        data_parallel=layout.dp,
        micro_batch=layout.micro_batch,
        trainable_parameters_per_rank=top.dense_params + top.expert_params,
        activations=top.activations,
        activations_formula=formula,
        weights_per_gpu=top.weights,
        gradients_per_gpu=top.gradients,
        optimizer_states_per_gpu=top.optimizer_states,
        per_gpu=top.total,
        layout={
            "tp": layout.tp,
            "pp": layout.pp,
            "cp": layout.cp,
            "ep": layout.ep,
            "dp": layout.dp,
            "vpp": layout.vpp,
            "micro_batch": layout.micro_batch,
            "global_batch": layout.sequences,
        },
        recompute_modules=list(layout.modules),
        busiest_rank=top.pipeline_rank,
        micro_batches_in_flight=top.micro_batches_in_flight,
    )


# --- the network ------------------------------------------------------------------------------------------

# Assumptions, stated in the report's conventions: NCCL reaches about 80 % of a link's per-direction peak as bus
# bandwidth on large messages (unverified round figure, in line with nccl-tests' busbw on DGX H100: ~360–390 of
# 450 GB/s NVLink, ~40–45 of 50 GB/s per 400 Gb/s NIC), and each collective call costs a fixed latency.
LINK_EFFICIENCY = 0.8
LATENCY = {"NVLink": 10e-6, "scale-out": 30e-6}


class Link(Value):
    name: str  # "NVLink" or "scale-out"
    bandwidth: float  # achieved bytes/s per GPU per direction


def link_for(span: int, chip: object) -> Link:
    """The link a group of SPAN consecutive ranks crosses: NVLink inside one NVLink domain (8 GPUs, 72 for
    NVL72), else the scale-out network at its per-GPU bandwidth."""
    domain = getattr(chip, "nvlink_domain", 8)
    nvlink = getattr(chip, "interconnect", None)
    scale_out = getattr(chip, "scale_out", None) or 50 * 10**9
    if span <= domain and nvlink:
        return Link("NVLink", nvlink * LINK_EFFICIENCY)
    return Link("scale-out", scale_out * LINK_EFFICIENCY)


class Collective(Result):
    """One kind of collective in a training step, on the busiest pipeline rank."""

    name: str
    group: int  # ranks taking part
    link: str  # NVLink or scale-out
    calls: int  # per step
    bytes: int  # bytes each GPU sends per step (ring algorithms: (n−1)/n of the buffer per all-gather/reduce-scatter)
    seconds: float  # calls × latency + bytes ÷ achieved bandwidth
    exposed_seconds: float  # what the step waits for
    overlapped: str  # how much overlaps compute, and why


class StepCompute(Value):
    forward: float  # seconds of one micro-batch's forward on the busiest stage
    step: float  # seconds of all micro-batches' forward and backward on the busiest stage (no bubble)
    attention: float  # seconds of the attention scores (forward + backward) in the step


def communication(
    spec: ModelSpec, layout: ParallelLayout, seq: int, chip: object, ranks: list[RankMemory], compute: StepCompute
) -> list[Collective]:
    """Each collective of one step with its bytes and time, on the pipeline rank that holds the most layers.

    Rank order tp-cp-ep-dp-pp (Megatron-LM parallel_state.py; experts etp-ep-dp-pp): a TP group spans tp
    consecutive GPUs, CP tp·cp, EP ep (expert TP 1), DP tp·cp·dp; PP neighbours sit tp·cp·dp GPUs apart. Per micro-batch, with s = seq ÷ cp tokens, b
    sequences, h hidden, 2-byte activations (A = s·b·h·2):
    - TP: 2 all-reduces of A per layer forward, 2 backward; with sequence parallelism an all-gather and a
      reduce-scatter instead of each (same bytes); each GPU sends 2·(tp−1)/tp · A per all-reduce. Exposed.
    - PP: each stage boundary sends A (÷ tp with sequence parallelism) forward and its gradient backward, per
      micro-batch and chunk; overlapped with compute except the 2·(pp−1) transfers of warm-up and cool-down.
    - DP: the rank's gradients, 2 bytes a parameter: ZeRO 0 all-reduce 2·(n−1)/n·G; ZeRO 1/2 reduce-scatter of G
      and all-gather of the updated weights, (n−1)/n each; ZeRO 3 an all-gather of the weights forward and backward
      per micro-batch and one reduce-scatter per step. Dense over dp·cp, experts over dp·cp÷ep. Overlapped with
      the last micro-batch's backward (and the weight all-gather with the first forward), except what exceeds it.
    - EP: per MoE layer, the routed tokens (k per token) dispatched and combined forward and backward: 4 all-to-alls,
      each GPU sending (ep−1)/ep of s·b·k·h·2 (÷ tp with sequence parallelism). Exposed.
    - CP: ring attention passes each rank's K and V (its KV heads ÷ tp) to its neighbour cp−1 times forward, K, V
      and their gradients backward (twice the bytes). Overlapped with the attention's compute, except what
      exceeds it.
    """
    layers = pipeline_layers(spec)
    busiest = ranks[heaviest_rank(ranks)]
    indices = rank_layer_indices(len(layers), layout.pp, layout.vpp)[busiest.pipeline_rank]
    mine = [layers[i] for i in indices]
    t, pp, cp, ep, vpp, m = layout.tp, layout.pp, layout.cp, layout.ep, layout.vpp, layout.micro_batches
    s, b, h = seq // cp, layout.micro_batch, spec.hidden_size
    a = s * b * h * ACTIVATION_BYTES
    sp = layout.sequence_parallel
    out: list[Collective] = []

    def add(name: str, group: int, span: int, calls: int, sent: int, exposed: float | None, overlapped: str) -> None:
        link = link_for(span, chip)
        seconds = calls * LATENCY[link.name] + sent / link.bandwidth
        out.append(
            Collective(
                name=name,
                group=group,
                link=link.name,
                calls=calls,
                bytes=sent,
                seconds=seconds,
                exposed_seconds=seconds if exposed is None else max(0.0, min(seconds, seconds - exposed)),
                overlapped=overlapped,
            )
        )

    recompute_extra = 1 if layout.recompute == "full" else 0  # full recomputation runs the forward's again
    if t > 1:
        calls = (4 + 2 * recompute_extra) * len(mine) * m
        name = "TP all-gather + reduce-scatter" if sp else "TP all-reduce"
        add(name, t, t, calls * (2 if sp else 1), calls * 2 * (t - 1) * a // t, None, "none (on the critical path)")
    if pp > 1:
        message = a // t if sp else a
        calls = 2 * m * vpp
        per_transfer = message / link_for(t * cp * layout.dp + 1, chip).bandwidth
        hidden = max(0.0, (calls - 2 * (pp - 1)) * per_transfer)
        add("PP send/recv activations", 2, t * cp * layout.dp + 1, calls, calls * message, hidden,
            "all but the 2·(pp−1) warm-up and cool-down transfers")  # fmt: skip
    n = layout.dp * cp
    dense_grad = busiest.dense_params * GRADIENT_BYTES
    expert_grad = busiest.expert_params * GRADIENT_BYTES
    last_backward = 2 * compute.forward
    for label, buffer, group, span in (
        ("DP", dense_grad, n, t * n),
        ("expert DP", expert_grad, layout.expert_data_parallel, t * n),  # spans the stage's ranks
    ):
        if group < 2 or buffer == 0:
            continue
        share = (group - 1) * buffer // group
        if layout.zero_stage == 0:
            add(f"{label} gradient all-reduce", group, span, 1, 2 * share, last_backward,
                "with the last micro-batch's backward")  # fmt: skip
        elif layout.zero_stage in (1, 2):
            add(f"{label} gradient reduce-scatter", group, span, 1, share, last_backward,
                "with the last micro-batch's backward")  # fmt: skip
            add(f"{label} weight all-gather", group, span, 1, share, compute.forward,
                "with the next step's first forward")  # fmt: skip
        else:
            add(f"{label} weight all-gather (ZeRO-3)", group, span, 2 * m, 2 * m * share, compute.step * 2 / 3,
                "with each micro-batch's forward and backward")  # fmt: skip
            add(f"{label} gradient reduce-scatter", group, span, 1, share, last_backward,
                "with the last micro-batch's backward")  # fmt: skip
    moe = [layer.ffn for layer in mine if isinstance(layer.ffn, MoeFfn)]
    if ep > 1 and moe:
        sent = sum(4 * (ep - 1) * (s * b * ffn.experts_per_token * h * ACTIVATION_BYTES // (t if sp else 1)) // ep
                   for ffn in moe) * m  # fmt: skip
        add("EP all-to-all dispatch + combine", ep, ep, 4 * len(moe) * m, sent, None, "none (on the critical path)")
    if cp > 1:
        kv = 0
        for layer in mine:
            if layer.attention is not None:
                att = layer.attention
                heads = att.num_heads if att.mla is not None else att.num_kv_heads
                width = heads * (att.qk_head_dim + (0 if att.values_are_keys else att.v_head_dim))
                kv += s * b * width * ACTIVATION_BYTES // t
        sent = 3 * (cp - 1) * kv * m
        add("CP ring K/V exchange", cp, t * cp, 3 * (cp - 1) * len(mine) * m, sent, compute.attention,
            "with the attention's compute")  # fmt: skip
    return out


# --- the expected step ------------------------------------------------------------------------------------

# Fitted by tools/fit_training.py on data/measurements/training_layouts.csv (see there for the rows and errors):
# the share of the dense peak the busiest stage's matmuls reach, by compute dtype; and the share of that the routed
# experts' FLOPs reach (grouped GEMMs of few tokens each, with the permutation and router work around them).
COMPUTE_EFFICIENCY = {"bf16": 0.55, "fp8": 0.49}
ROUTED_EXPERT_RATIO = 0.34


class LayoutReport(Result):
    """The train report's layout figures: one layout's per-GPU memory, communication and the step to expect."""

    layout: dict[str, int]  # tp, pp, cp, ep, dp, vpp, micro_batch, global_batch
    sequence_parallel: bool
    zero_stage: int
    recompute: Recompute
    recompute_modules: list[str]  # with selective recomputation, the modules recomputed (Megatron-LM's names)
    gpus: int
    micro_batches: int  # per step per pipeline (gradient accumulation)
    per_gpu_bytes: int  # the busiest rank's
    busiest_rank: int  # its pipeline rank
    gpu_memory: int
    fits: bool
    ranks: list[RankMemory]  # the first, the busiest and the last pipeline rank (without repeats)
    communication: list[Collective]
    compute_seconds: float  # the busiest stage's forward and backward of every micro-batch, at the fitted efficiency
    bubble_fraction: float  # (pp − 1) ÷ (vpp · micro-batches), of the compute
    exposed_communication_seconds: float
    expected_step_seconds: float
    expected_tokens_per_second_per_gpu: float
    expected_mfu: float
    compute_efficiency: float
    routed_expert_extra_seconds: float  # what the routed experts' lower efficiency adds (in compute_seconds)
    limiting: str  # compute, bubble, or the collective that costs most


def evaluate(
    spec: ModelSpec,
    layout: ParallelLayout,
    seq: int,
    chip: object,
    dtype: str,
    model_flops_per_sequence: int,
    hardware_flops_per_sequence: int,
    lm_head_flops_per_sequence: int,
    attention_flops_per_sequence: int,
    efficiency: float | None = None,
    expert_ratio: float | None = None,
) -> LayoutReport:
    """One checked layout on CHIP: memory of every rank, communication, the expected step (at EFFICIENCY of the
    dtype's dense peak, else the fitted COMPUTE_EFFICIENCY)."""
    ranks = rank_memory(spec, layout, seq)
    busiest = busiest_of(ranks)
    peak = chip.peak(dtype)  # type: ignore[attr-defined]
    bf16_peak = chip.peak("bf16")  # type: ignore[attr-defined]
    if efficiency is None:
        efficiency = COMPUTE_EFFICIENCY.get(dtype, COMPUTE_EFFICIENCY["fp8"])
    layers = len(pipeline_layers(spec))
    most_layers = max(r.layers for r in ranks)
    last_layers = ranks[-1].layers
    body = hardware_flops_per_sequence - lm_head_flops_per_sequence
    # FLOPs of one sequence on the stage that does most: its layers' share of the body, plus the head on the last.
    stage = max(body * most_layers / layers, body * last_layers / layers + lm_head_flops_per_sequence)
    per_gpu_sequence = stage / (layout.tp * layout.cp)
    m = layout.micro_batches
    step_compute = per_gpu_sequence * layout.micro_batch * m / (peak * efficiency)
    compute = StepCompute(
        forward=step_compute / m / 3,
        step=step_compute,
        attention=attention_flops_per_sequence * most_layers / layers / (layout.tp * layout.cp)
        * layout.micro_batch * m / (peak * efficiency),
    )  # fmt: skip
    collectives = communication(spec, layout, seq, chip, ranks, compute)
    bubble = (layout.pp - 1) / (layout.vpp * m)
    exposed = sum(c.exposed_seconds for c in collectives)
    # The routed experts' FLOPs on the busiest stage run at expert_ratio of the efficiency: the extra time.
    indices = rank_layer_indices(layers, layout.pp, layout.vpp)[heaviest_rank(ranks)]
    all_layers = pipeline_layers(spec)
    expert_flops = 6 * seq * sum(routed_params_per_token(all_layers[i]) for i in indices)
    ratio = ROUTED_EXPERT_RATIO if expert_ratio is None else expert_ratio
    expert_time = expert_flops / (layout.tp * layout.cp) * layout.micro_batch * m / (peak * efficiency)
    moe = expert_time * (1 / ratio - 1)
    step_compute += moe
    step = step_compute * (1 + bubble) + exposed
    tokens = layout.sequences * seq
    terms = {"compute": step_compute, "bubble": step_compute * bubble} | {
        c.name: c.exposed_seconds for c in collectives
    }
    limiting = max(list(terms)[1:], key=lambda k: terms[k]) if len(terms) > 1 else "compute"
    if terms[limiting] < 0.05 * step:
        limiting = "compute"
    shown = {0: ranks[0], busiest.pipeline_rank: busiest, len(ranks) - 1: ranks[-1]}
    return LayoutReport(
        layout={
            "tp": layout.tp,
            "pp": layout.pp,
            "cp": layout.cp,
            "ep": layout.ep,
            "dp": layout.dp,
            "vpp": layout.vpp,
            "micro_batch": layout.micro_batch,
            "global_batch": layout.sequences,
        },
        sequence_parallel=layout.sequence_parallel,
        zero_stage=layout.zero_stage,
        recompute=layout.recompute,
        recompute_modules=list(layout.modules),
        gpus=layout.gpus,
        micro_batches=m,
        per_gpu_bytes=busiest.total,
        busiest_rank=busiest.pipeline_rank,
        gpu_memory=chip.memory,  # type: ignore[attr-defined]
        fits=busiest.total <= chip.memory,  # type: ignore[attr-defined]
        ranks=[shown[k] for k in sorted(shown)],
        communication=collectives,
        compute_seconds=step_compute,
        bubble_fraction=bubble,
        exposed_communication_seconds=exposed,
        expected_step_seconds=step,
        expected_tokens_per_second_per_gpu=tokens / step / layout.gpus,
        expected_mfu=model_flops_per_sequence * layout.sequences / step / layout.gpus / bf16_peak,
        compute_efficiency=efficiency,
        routed_expert_extra_seconds=moe,
        limiting=limiting,
    )


LAYOUT_CONVENTIONS = [
    "layout: gpus = tp·pp·cp·dp; ep carved out of each stage's tp·dp·cp ranks for the MoE layers, expert TP 1 "
    "(Megatron-Bridge's MoE recipes; Megatron-LM's default is tp); rank order tp-cp-ep-dp-pp (TP innermost)",
    "per-GPU memory of the busiest pipeline rank: its layers' parameters (matrices ÷ tp, experts ÷ ep), "
    "embedding on the first stage, head on the last; 2 + 2 + 12 bytes a parameter, ZeRO sharding over dp·cp (experts "
    "tp·dp·cp÷ep); activations of one layer × the micro-batches 1F1B holds there (Megatron-LM schedules.py; "
    "interleaved: chunk by chunk in its warm-up order), ÷ tp (copied parts too with sequence parallelism), sequence "
    "÷ cp; selective recomputation's modules as Megatron-LM's recompute_modules (core_attn: no bytes with "
    "FlashAttention; layernorm: no normed block inputs; mla_up_proj: no MLA Q, K, V)",
    "communication: bytes each GPU sends per step (ring collectives); time = calls × latency (NVLink 10 µs, "
    "scale-out 30 µs) + bytes ÷ (80 % of the link's per-direction bandwidth per GPU); NVLink inside 8 GPUs (72 for "
    "NVL72), else the scale-out network; TP and EP exposed, PP, DP and CP overlapped as each entry says",
    "expected step = the busiest stage's compute at a fitted share of the dense peak (tools/fit_training.py on "
    "public measurements) × (1 + bubble (pp−1)/(vpp·micro-batches)) + exposed communication: a fitted expectation, "
    "not a ceiling and not a measurement; expected MFU by ffncalc's exact model FLOPs over the bf16 dense peak",
]


# --- the plan ---------------------------------------------------------------------------------------------


class Rejected(Result):
    """A layout `train` with `plan` leaves out because a GPU runs out of memory: which rank, by how much."""

    layout: dict[str, int]
    expected_tokens_per_second_per_gpu: float  # what it would give if it fitted
    per_gpu_bytes: int
    busiest_rank: int
    over_bytes: int  # per_gpu_bytes − the GPU's memory
    reason: str


class Plan(Value):
    layouts: list[LayoutReport]
    rejected: list[Rejected]
    limits: str


PLAN_SIZES = (1, 2, 4, 8, 16, 32, 64)
PLAN_MICRO_BATCHES = (1, 2, 4)
PLAN_VPP = (1, 2, 4)
PLAN_SHOWN = 20
PLAN_MAX = 20_000


def plan(
    spec: ModelSpec,
    seq: int,
    chip: object,
    dtype: str,
    gpus: int,
    *,
    global_batch: int | None,
    zero_stage: int,
    recompute: str,
    recompute_modules: tuple[str, ...] = (),
    **flops: int,
) -> Plan:
    """Every layout of GPUS this searches, evaluated; those that fit ranked by expected tokens/s per GPU (best
    first, the top PLAN_SHOWN kept), and the best-looking that do not fit, with the rank that runs out of memory.

    Searched: tp a power of two up to 8 within one NVLink domain that the heads divide; pp a power of two up to 64
    and the layers; vpp 1, 2, 4 (pp ≥ 2); cp a power of two up to 64 that 2·cp divides seq by; ep a power of two
    dividing the experts and dp·cp (MoE only); micro-batch 1, 2, 4; sequence parallelism whenever tp ≥ 2; the given
    ZeRO stage and recomputation. At most PLAN_MAX layouts are evaluated."""
    from .parallel import valid_sizes

    layers = len(pipeline_layers(spec))
    experts = sorted({layer.ffn.num_experts for layer in pipeline_layers(spec) if isinstance(layer.ffn, MoeFfn)})
    domain = getattr(chip, "nvlink_domain", 8)
    valid_tp = set(valid_sizes(spec, "training")) or {1}
    tps = [t for t in (1, 2, 4, 8) if t in valid_tp and t <= domain]
    batch = global_batch or gpus
    fitting: list[LayoutReport] = []
    too_big: list[LayoutReport] = []
    evaluated = 0
    for tp in tps:
        for pp in (p for p in PLAN_SIZES if p <= layers):
            for cp in (c for c in PLAN_SIZES if seq % (2 * c) == 0 or c == 1):
                if gpus % (tp * pp * cp):
                    continue
                dp = gpus // (tp * pp * cp)
                eps = [1] + [e for e in PLAN_SIZES[1:] if experts and all(n % e == 0 for n in experts)]
                for ep in (e for e in eps if (tp * dp * cp) % e == 0):
                    for vpp in (v for v in PLAN_VPP if (v == 1 or pp > 1) and pp * v <= layers):
                        for mb in PLAN_MICRO_BATCHES:
                            if batch % (mb * dp) or (zero_stage == 3 and dp * cp == 1):
                                continue
                            if evaluated >= PLAN_MAX:
                                break
                            layout = ParallelLayout(
                                tp=tp, pp=pp, cp=cp, ep=ep, dp=dp, vpp=vpp, micro_batch=mb, global_batch=batch,
                                sequence_parallel=tp > 1, zero_stage=zero_stage, recompute=recompute,  # type: ignore[arg-type]
                                recompute_modules=recompute_modules,
                            )  # fmt: skip
                            try:
                                layout.checked(spec, seq)
                            except UsageError:
                                continue
                            evaluated += 1
                            report = evaluate(spec, layout, seq, chip, dtype, **flops)
                            (fitting if report.fits else too_big).append(report)
    best_first = lambda r: -r.expected_tokens_per_second_per_gpu  # noqa: E731
    fitting.sort(key=best_first)
    too_big.sort(key=best_first)
    best = fitting[0].expected_tokens_per_second_per_gpu if fitting else 0.0
    shown_rejected = [r for r in too_big if r.expected_tokens_per_second_per_gpu > best][:5]
    no_pp = [r for r in too_big if r.layout["pp"] == 1][:1]  # why layouts without pipeline stages fail
    for extra in no_pp:
        if extra not in shown_rejected:
            shown_rejected.append(extra)
    limits = (
        f"{evaluated:,} layouts evaluated (tp ≤ 8 in one NVLink domain, pp and cp powers of two up to 64, vpp 1/2/4, "
        f"ep dividing the experts, micro-batch 1/2/4, at most {PLAN_MAX:,}); {len(fitting):,} fit, the best "
        f"{min(PLAN_SHOWN, len(fitting))} kept"
    )
    return Plan(fitting[:PLAN_SHOWN], [_rejected(r) for r in shown_rejected], limits)


def _rejected(report: LayoutReport) -> Rejected:
    over = report.per_gpu_bytes - report.gpu_memory
    gib = 1 << 30
    rank = next(r for r in report.ranks if r.pipeline_rank == report.busiest_rank)
    what = max(
        (("weights, gradients and optimizer states", rank.weights + rank.gradients + rank.optimizer_states),
         (f"activations of {rank.micro_batches_in_flight:g} micro-batches in flight", rank.activations)),
        key=lambda kv: kv[1],
    )  # fmt: skip
    return Rejected(
        layout=report.layout,
        expected_tokens_per_second_per_gpu=report.expected_tokens_per_second_per_gpu,
        per_gpu_bytes=report.per_gpu_bytes,
        busiest_rank=report.busiest_rank,
        over_bytes=over,
        reason=(
            f"pipeline rank {report.busiest_rank} needs {report.per_gpu_bytes / gib:,.1f} GiB, {over / gib:,.1f} GiB "
            f"over the {report.gpu_memory / gib:,.1f} GiB; most of it {what[0]} ({what[1] / gib:,.1f} GiB)"
        ),
    )
