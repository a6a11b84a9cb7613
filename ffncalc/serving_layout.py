"""How a served model is laid out over GPUs beyond tensor parallelism: expert parallelism, attention data-parallel,
and what each GPU then holds and sends. Pure arithmetic; the roofline (ffncalc.roofline) times it.

The layout follows SGLang's, whose arithmetic is the published one for DeepSeek-style MoE serving:

- ``tensor_parallel`` is the GPUs one model replica spans (SGLang's ``tp_size``: with ``enable_dp_attention`` it is
  the world size and attention data-parallel is carved out of it).
- ``expert_parallel``: routed experts split over EP ranks, each rank holding E/EP experts whole, each of them split
  over tensor_parallel ÷ expert_parallel ranks (SGLang's ``moe_tp_size = tp_size // ep_size``); dense parts (shared
  experts, dense FFN layers, the output head) stay over tensor_parallel. EP must divide the experts and the GPUs.
- ``dp_attention``: attention is not split; each of the tensor_parallel GPUs is its own attention data-parallel rank
  (``dp_size`` equal to ``tp_size``: ``attn_tp_size = tp_size // dp_size`` = 1, ``compute_dp_attention_world_info`` in
  python/sglang/srt/layers/dp_attention.py), holding the attention weights whole and the KV cache of its own
  requests only (the memory pool of python/sglang/srt/model_executor/model_runner.py is sized per rank with the
  whole cache cell: for MLA the latent once per rank, not copied to every TP rank). The batch splits over the ranks
  (⌈B ÷ ranks⌉ each: the busiest rank); the input embedding is copied whole on each rank (DeepseekV2Model's
  ``VocabParallelEmbedding(enable_tp=not is_dp_attention_enabled())``).

Communication, per GPU per step (CONVENTIONS says it in words): the all-to-all of an MoE layer under EP sends each
token's hidden state to the ranks of its k experts (DeepEP's dispatch) and back (combine), (EP−1)/EP of them on
another rank under uniform routing: ⌈T ÷ N⌉ × hidden × 2 bytes × k × (EP−1)/EP each way, T the step's tokens over
the N GPUs (each GPU dispatches the tokens it owns: its requests under dp_attention, its 1/N slice of the replicated
tokens otherwise, the attention all-reduce then a reduce-scatter before and an all-gather after, the same bytes).
"""

from __future__ import annotations

from .errors import UsageError
from .results import Result
from .spec import ModelSpec, MoeFfn
from .structure import generating_layers

ACTIVATION_BYTES = 2  # the hidden states dispatched and combined, in 16-bit

CONVENTIONS = [
    "expert parallelism over EP: each rank holds E/EP routed experts whole, each split over TP ÷ EP ranks (SGLang's "
    "moe_tp_size); shared experts, dense FFN layers and the head stay over TP; an MoE layer makes no all-reduce but "
    "an all-to-all dispatch and combine, each sending ⌈tokens ÷ TP⌉ × hidden × 2 bytes × k × (EP−1)/EP per GPU "
    "(each token's hidden state to the ranks of its k experts under uniform routing, as DeepEP does; 16-bit both "
    "ways, DeepEP's FP8 dispatch would halve the first), timed over the interconnect for the peers inside the GPU's "
    "NVLink domain and over the scale-out network for the rest at the same time (the slower of the two); the "
    "ceiling lets it hide behind the step's compute (the larger of the two, as DeepSeek's two-micro-batch overlap "
    "does), the expected figure adds it; a tensor-parallel group larger than the NVLink domain all-reduces at the "
    "scale-out network's rate",
    "attention data-parallel (SGLang's enable_dp_attention with dp_size equal to tp_size): attention weights whole on "
    "every GPU, the input embedding copied, each GPU the KV cache of ⌈batch ÷ TP⌉ sequences (MLA's latent once per "
    "rank); no all-reduce after attention; a dense FFN layer gathers the whole batch and reduce-scatters it back, "
    "the bytes of an all-reduce",
]


class ServingLayout(Result):
    """The speed report's layout: the GPUs a replica spans, how experts and attention are split over them."""

    tensor_parallel: int = 1  # GPUs one replica spans (SGLang's --tp)
    expert_parallel: int = 1  # ranks the routed experts are split over, E/EP whole experts each
    pipeline_parallel: int = 1  # stages the layers are split into, each over its own tensor_parallel GPUs
    dp_attention: bool = False  # attention data-parallel over the tensor_parallel GPUs (SGLang --enable-dp-attention)

    @property
    def attention_split(self) -> int:
        """Ranks each attention matrix and the KV heads are split over: 1 under attention data-parallel."""
        return 1 if self.dp_attention else self.tensor_parallel

    @property
    def attention_ranks(self) -> int:
        """Attention data-parallel ranks: the batch splits over them."""
        return self.tensor_parallel if self.dp_attention else 1

    @property
    def expert_split(self) -> int:
        """Ranks each routed expert is split over (SGLang's moe_tp_size = tp_size // ep_size)."""
        return self.tensor_parallel // self.expert_parallel


def moe_shape(spec: ModelSpec) -> tuple[int, int, int] | None:
    """(experts, experts per token, MoE layers) of the layers a token runs; None without MoE."""
    found = [layer.ffn for layer in generating_layers(spec) if isinstance(layer.ffn, MoeFfn)]
    if not found:
        return None
    return found[0].num_experts, found[0].experts_per_token, len(found)


def check_layout(spec: ModelSpec, layout: ServingLayout) -> None:
    """Refuse a layout the model or the GPUs cannot take, naming the rule (in the library's field names)."""
    ep, tp = layout.expert_parallel, layout.tensor_parallel
    if ep < 1 or tp < 1:
        raise UsageError(f"`tensor_parallel` and `expert_parallel` are whole numbers of 1 or more (got {tp} and {ep})")
    if ep == 1:
        return
    shape = moe_shape(spec)
    if shape is None:
        raise UsageError(f"`expert_parallel` {ep}: {spec.model_type} has no routed experts to split")
    experts = shape[0]
    if experts % ep:
        raise UsageError(
            f"`expert_parallel` {ep} does not divide the {experts} routed experts: each rank holds E/EP experts whole"
        )
    if tp % ep:
        raise UsageError(
            f"`expert_parallel` {ep} does not divide `tensor_parallel` {tp}: the EP ranks are GPUs of the replica, each "
            "expert split over `tensor_parallel` ÷ `expert_parallel` of them (SGLang's moe_tp_size)"
        )


def routed_expert_bytes(routed_tensors: list[tuple[int, int]], layout: ServingLayout) -> int:
    """Per GPU: the routed experts' stored bytes. ROUTED_TENSORS: (bytes, count) of each stored routed-expert
    tensor (one per expert). Under EP each rank holds 1/EP of them whole, each split over the expert split
    (rounded up); without EP every expert tensor is split over tensor_parallel."""
    split = layout.expert_split if layout.expert_parallel > 1 else layout.tensor_parallel
    held = sum(-(-size // split) * count for size, count in routed_tensors)
    if layout.expert_parallel == 1:
        return held
    return -(-held // layout.expert_parallel)


def batch_share(tokens: int, layout: ServingLayout) -> int:
    """Tokens (or sequences) the busiest attention rank takes: ⌈T ÷ attention ranks⌉."""
    return -(-tokens // layout.attention_ranks)


def all_to_all_bytes(spec: ModelSpec, tokens: int, layout: ServingLayout) -> tuple[int, int]:
    """(dispatch, combine) bytes one GPU sends in a step of TOKENS tokens, summed over the MoE layers:
    ⌈T ÷ N⌉ × hidden × 2 × k × (EP−1)/EP each way per MoE layer; (0, 0) without expert parallelism."""
    shape = moe_shape(spec)
    ep = layout.expert_parallel
    if ep == 1 or shape is None:
        return 0, 0
    _, per_token, layers = shape
    owned = -(-tokens // layout.tensor_parallel)
    each = layers * owned * spec.hidden_size * ACTIVATION_BYTES * per_token * (ep - 1) // ep
    return each, each


def allreduce_bytes(spec: ModelSpec, tokens: int, layout: ServingLayout) -> int:
    """Per GPU per direction: ring all-reduces of 2·(N−1)/N × T × hidden × 2 bytes: after each attention unless
    attention is data-parallel, after each mixer in attention's place (a Gated DeltaNet or Mamba layer; one beside
    an attention shares its all-reduce), after each FFN unless it is an MoE layer under EP (its all-to-all instead).
    Under attention data-parallel a dense FFN layer gathers and scatters the whole batch: the same bytes."""
    n = layout.tensor_parallel
    if n == 1:
        return 0
    moe_layers_by_ep = layout.expert_parallel > 1
    sublayers = 0
    for layer in generating_layers(spec):
        attention_all_reduce = layer.attention is not None and not layout.dp_attention
        sublayers += attention_all_reduce or (layer.attention is None and layer.mixer is not None)  # mixer in its place
        if layer.ffn is not None and not (moe_layers_by_ep and isinstance(layer.ffn, MoeFfn)):
            sublayers += 1
    return sublayers * 2 * (n - 1) * tokens * spec.hidden_size * ACTIVATION_BYTES // n


def layout_note(layout: ServingLayout, engine: str) -> str:
    """What the engine report's figures mean under the layout."""
    parts = []
    if layout.expert_parallel > 1:
        parts.append(f"routed experts over {layout.expert_parallel} GPUs, E/{layout.expert_parallel} whole each")
    if layout.dp_attention:
        who = (
            "SGLang's enable_dp_attention with dp_size N (dp_attention.py: attn_tp_size = tp_size // dp_size = 1)"
            if engine == "sglang"
            else "vLLM's data_parallel_size N with enable_expert_parallel (non-expert weights whole on each rank)"
        )
        parts.append(
            f"attention data-parallel over {layout.tensor_parallel} GPUs, {who}: each GPU's KV pool holds its own "
            f"requests (MLA's latent once), the figures are per rank and the replica serves "
            f"{layout.tensor_parallel} × max_concurrency"
        )
    return "; ".join(parts)


def pipeline_partitions(layers: int, stages: int) -> list[int]:
    """Layers per pipeline stage, as vLLM's get_pp_indices (vllm/distributed/utils.py) splits them: L // PP each,
    the remainder one each to the stages before the last, from the second-to-last backwards (the last stage holds
    the final norm and the head)."""
    if not 1 <= stages <= layers:
        raise UsageError(
            f"`pipeline_parallel` {stages}: the {layers} layers a token runs split into 1 to {layers} stages"
        )
    partitions = [layers // stages] * stages
    for i in range(2, layers % stages + 2):
        partitions[-i] += 1
    return partitions


def stage_specs(spec: ModelSpec, stages: int) -> list[ModelSpec]:
    """The model cut into pipeline stages: each stage's generating layers (contiguous, pipeline_partitions), the
    first also holding the layers a token does not run (an encoder, towers). Every stage keeps the embedding and
    head in its spec; the roofline counts the embedding on the first stage only and the head on the last."""
    from .values import replace

    generating = generating_layers(spec)
    others = tuple(layer for layer in spec.layers if all(layer is not g for g in generating))
    found, start = [], 0
    for index, size in enumerate(pipeline_partitions(len(generating), stages)):
        layers = tuple(generating[start : start + size])
        found.append(replace(spec, layers=(others + layers) if index == 0 else layers))
        start += size
    return found


PIPELINE_CONVENTION = (
    "pipeline parallelism over PP: the layers split into contiguous stages as vLLM's get_pp_indices splits them, the "
    "embedding on the first stage, the final norm and the head (and a tied table) on the last; per GPU the busiest stage's weights and KV (every sequence "
    "of the batch, its layers); the batch runs as min(batch, PP) micro-batches, each stage passing each micro-batch's "
    "tokens × hidden × 2 bytes to the next over the interconnect; a token's latency is the sum over the stages, and "
    "with PP micro-batches in flight the slowest stage sets the pace: TPOT = max(Σ stages, micro-batches × slowest); "
    "time to first token: the prompt through every stage in turn; the expected (≈) figures: each stage's fitted "
    "figure over its own sublayers, combined by the same rule (the profiles were fitted on runs without pipeline "
    "parallelism, so their fixed time per step is counted once per stage)"
)


class Disaggregation(Result):
    """Prefill and decode on separate pools of GPUs (speed's `disaggregate` P:D): each pool's rate, the KV cache each
    request moves from one to the other over the scale-out network, and the split that balances the two pools.
    CEILINGS: the roofline's TTFT and decode time; the transfer at the link's full rate."""

    prefill_gpus: int
    decode_gpus: int
    replica_gpus: int  # GPUs one copy of the model spans (tensor × pipeline parallel): each pool holds whole copies
    kv_bytes_per_request: int  # the prompt's cache, every layer, once (ffncalc's KV per token × the prompt)
    scale_out: int  # bytes/s per GPU per direction
    transfer_seconds: float  # kv ÷ (replica GPUs × scale_out): each GPU of the prefill copy sends its share
    prefill_requests_per_second: float  # (prefill GPUs ÷ replica) copies, one prompt each per TTFT
    decode_requests_per_second: float  # (decode GPUs ÷ replica) copies, batch requests each per decode time
    link_requests_per_second: float  # prefill GPUs × scale_out ÷ kv bytes
    requests_per_second: float  # the least of the three
    balanced_prefill_share: float  # prefill GPUs ÷ all GPUs at which the two pools' rates are equal


MAX_POOL_GPUS = 1 << 20  # a bound on what `disaggregate` reads, far past any cluster


def parse_disaggregate(text: str, replica: int) -> tuple[int, int]:
    """'P:D' → (P, D): whole numbers of GPUs, each a multiple of the GPUs one copy spans."""
    try:
        prefill, decode = (int(part) for part in text.split(":"))
    except ValueError:
        raise UsageError(f"`disaggregate` takes PREFILL_GPUS:DECODE_GPUS, e.g. 8:24 (got {text[:20]!r})") from None
    for count in (prefill, decode):
        if count > MAX_POOL_GPUS:
            raise UsageError(f"`disaggregate` {text[:20]}: a pool of at most {MAX_POOL_GPUS:,} GPUs")
        if count < 1 or count % replica:
            raise UsageError(
                f"`disaggregate` {text}: each pool holds whole copies of the model, a multiple of the {replica} GPUs "
                "one copy spans"
            )
    return prefill, decode


def disaggregation(
    prefill_gpus: int,
    decode_gpus: int,
    replica_gpus: int,
    *,
    ttft: float,
    decode_seconds: float,
    batch: int,
    kv_bytes: int,
    scale_out: int,
) -> Disaggregation:
    """Each pool's request rate and the balancing split. DECODE_SECONDS: the decode steps of one batch of BATCH
    requests from the first output token to the last (the request's ceiling less its prefill)."""
    prefill_rate = prefill_gpus / replica_gpus / ttft
    decode_rate = decode_gpus / replica_gpus * batch / decode_seconds if decode_seconds else float("inf")
    link_rate = prefill_gpus * scale_out / kv_bytes if kv_bytes else float("inf")
    per_request_decode = decode_seconds / batch  # a copy's decode time per request
    return Disaggregation(
        prefill_gpus=prefill_gpus,
        decode_gpus=decode_gpus,
        replica_gpus=replica_gpus,
        kv_bytes_per_request=kv_bytes,
        scale_out=scale_out,
        transfer_seconds=kv_bytes / (replica_gpus * scale_out),
        prefill_requests_per_second=prefill_rate,
        decode_requests_per_second=decode_rate,
        link_requests_per_second=link_rate,
        requests_per_second=min(prefill_rate, decode_rate, link_rate),
        balanced_prefill_share=ttft / (ttft + per_request_decode),
    )
