"""Training arithmetic: what training a model on N tokens costs, the MFU a measured run implies under each
framework's FLOP convention, and the compute-optimal size (Hoffmann et al. 2022). Pure functions.

Conventions (stated once, here and in train's JSON document's ``conventions``):
- model FLOPs: ffncalc's exact count (``compute.count_flops``): 3 × the causal forward pass of each sequence of
  `seq` tokens, every matmul a token uses, attention scores with causal masking and windows;
- hardware FLOPs add what recomputation runs again: full recomputation one more forward pass, selective
  recomputation (Korthikanti et al. 2022) the forward attention scores;
- time and cost: GPU-hours = FLOPs ÷ (MFU × dense peak × 3,600); days = GPU-hours ÷ GPUs ÷ 24;
  cost = GPU-hours × price. The MFU is an assumption (default 0.4), never a measurement;
- MFU from a measured run: FLOPs per token × tokens per second ÷ (GPUs × dense peak), per convention.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from typing import Literal

from .compute import FlopsBreakdown
from .errors import UsageError
from .layouts import Collective, LayoutReport, Rejected
from .results import ModelInfo, Result
from .spec import ModelSpec, MoeFfn
from .values import Value

Recompute = Literal["none", "selective", "full"]

SECONDS_PER_HOUR = 3600
HOURS_PER_DAY = 24
DEFAULT_MFU = 0.4
CHINCHILLA_TOKENS_PER_PARAM = 20

# Hoffmann et al. 2022 ("Training Compute-Optimal Large Language Models", arXiv 2203.15556), Approach 3, eq. 10:
# the fitted loss L(N, D) = E + A / N^α + B / D^β. Read from a secondary source that quotes the paper
# (https://ml-hero-book.pages.dev/ch16-pretraining/03-chinchilla/); the paper's own text was not read.
CHINCHILLA_E, CHINCHILLA_A, CHINCHILLA_B = 1.69, 406.4, 410.7
CHINCHILLA_ALPHA, CHINCHILLA_BETA = 0.34, 0.28

TOKENS = re.compile(r"^\s*(\d+(?:\.\d+)?(?:e\d+)?)\s*([kmbtKMBT]?)\s*$")
TOKEN_MULTIPLIERS = {"": 1, "k": 10**3, "m": 10**6, "b": 10**9, "t": 10**12}
MAX_TOKENS = 10**18


def parse_tokens(text: str | int, option: str = "`tokens`") -> int:
    """'15T' → 15,000,000,000,000; '1.4T', '300B', '2e12' (decimal prefixes: a token count, not a context)."""
    if isinstance(text, int) and not isinstance(text, bool):
        value = text
    else:
        match = TOKENS.match(str(text)[:40])
        if match is None:
            raise UsageError(f"{option} {str(text)[:40]!r} is not a number of tokens; use e.g. 15T, 300B or 2e12")
        exact = Fraction(match[1]) * TOKEN_MULTIPLIERS[match[2].lower()]
        if exact.denominator != 1:
            raise UsageError(f"{option} {text!r} is not a whole number of tokens")
        value = int(exact)
    if not 1 <= value <= MAX_TOKENS:
        raise UsageError(f"{option} must be from 1 to {MAX_TOKENS:.0e} tokens (got {value:,})")
    return value


# --- the run ----------------------------------------------------------------------------------------------


def scaled(per_sequence: int, tokens: int, seq: int) -> int:
    """per_sequence × tokens / seq, rounded to the nearest integer (halves to even): a run of tokens / seq sequences."""
    return round(Fraction(per_sequence * tokens, seq))


def total_components(forward: dict[str, int], tokens: int, seq: int) -> FlopsBreakdown:
    """3 × each forward component of one sequence, × tokens / seq (each rounded; ``total`` is their sum)."""
    parts = {name: scaled(3 * value, tokens, seq) for name, value in forward.items() if name != "total"}
    return FlopsBreakdown(**parts, total=sum(parts.values()))


def recompute_flops(forward_total: int, forward_scores: int, recompute: Recompute) -> int:
    """Per sequence, what recomputation runs again: full, one forward pass; selective, the forward attention scores."""
    return {"none": 0, "selective": forward_scores, "full": forward_total}[recompute]


class Hardware(Value):
    """The accelerators the run uses: name, dense peak FLOP/s in the training dtype, memory per GPU."""

    name: str
    dtype: str
    peak: int
    memory: int


def gpu_hours(flops: int, mfu: float, peak: int) -> float:
    """FLOPs ÷ (MFU × peak × 3,600)."""
    return flops / (mfu * peak * SECONDS_PER_HOUR)


def mfu_of(flops_per_token: float, tokens_per_second: float, gpus: int, peak: int) -> float:
    """FLOPs per token × tokens per second (whole job) ÷ (GPUs × peak)."""
    return flops_per_token * tokens_per_second / (gpus * peak)


# --- the peers' conventions: FLOPs per token as each framework counts them ---------------------------------


class PeerShape(Value):
    """What the peers' formulas read from a model: parameter counts and its attention layers' shapes."""

    params: int  # every parameter a token uses (active for MoE), language model only
    embedding_params: int  # the input token tables (nn.Embedding), and any learned position table
    position_params: int  # a learned absolute position table (nanoGPT's wpe); 0 for rotary models
    tied: bool
    hidden: int
    attention_layers: tuple[tuple[int, int, int], ...]  # per layer with attention: (heads, qk_head_dim, v_head_dim)
    router_flops: int  # 2 · hidden · experts per MoE layer, per token: a GEMM Megatron's formula leaves out


def peer_shape(spec: ModelSpec, params: int, embedding_params: int) -> PeerShape:
    """The fields the peers' formulas read, from the spec and the parameter counts."""
    from .compute import FLOPS_PER_MULTIPLY_ADD
    from .structure import generating_layers

    layers = generating_layers(spec)
    return PeerShape(
        params=params,
        embedding_params=embedding_params,
        position_params=spec.position_embeddings * spec.hidden_size,
        tied=spec.tie_word_embeddings,
        hidden=spec.hidden_size,
        attention_layers=tuple(
            (layer.attention.num_heads, layer.attention.qk_head_dim, layer.attention.v_head_dim)
            for layer in layers
            if layer.attention is not None
        ),
        router_flops=sum(
            FLOPS_PER_MULTIPLY_ADD * layer.ffn.hidden_size * layer.ffn.num_experts
            for layer in layers
            if isinstance(layer.ffn, MoeFfn)
        ),
    )


def palm_flops_per_token(shape: PeerShape, seq: int) -> int:
    """PaLM (Chowdhery et al. 2022, appendix B): 6N + 12·L·H·Q·T, with L·H·Q summed over the attention layers.

    N: every parameter a token uses, the input table included (PaLM ties it to the head, so its N counts the table
    once, as the head); Q: the query head's width; T: the sequence length. Not causal: every token is charged T keys.
    The appendix itself was not read; the formula is as nanoGPT's estimate_mfu transcribes it (it cites appendix B).
    """
    return 6 * shape.params + 12 * sum(heads * qk for heads, qk, _ in shape.attention_layers) * seq


def nanogpt_flops_per_token(shape: PeerShape, seq: int) -> int:
    """nanoGPT `estimate_mfu` (karpathy/nanoGPT model.py, commit 04a1d697): 6N + 12·L·H·Q·T with
    N = get_num_params(non_embedding=True) (every parameter but the position table wpe) and Q = n_embd // n_head,
    the hidden size over the heads, whatever the model's head_dim. T: block_size, the sequence length."""
    n = shape.params - shape.position_params
    return 6 * n + 12 * sum(heads * (shape.hidden // heads) for heads, _, _ in shape.attention_layers) * seq


def torchtitan_flops_per_token(shape: PeerShape, seq: int) -> int:
    """torchtitan `get_dense_model_nparams_and_flops` / `get_moe_model_nparams_and_flops` (pytorch/torchtitan
    torchtitan/models/utils.py, commit b5bcd76c): 6·N' + 6·L·H·(qk_head_dim + v_head_dim)·T, N' the active
    parameters less the nn.Embedding tables unless the head is tied to them; L counts every layer with attention
    (sliding windows too); not causal ("we follow the convention and do not account for sparsity in causal
    attention"). The older `get_num_flop_per_token` (6·N' + 12·l·h·q·t) is the same for qk_head_dim = v_head_dim."""
    matmul_params = shape.params if shape.tied else shape.params - shape.embedding_params
    return 6 * matmul_params + 6 * sum(heads * (qk + v) for heads, qk, v in shape.attention_layers) * seq


def megatron_flops_per_token(fixed_forward: int, shape: PeerShape, seq: int) -> Fraction:
    """Megatron-LM `num_floating_point_operations` (NVIDIA/Megatron-LM megatron/training/training.py, commit
    d98e8a64, `transformer_flops`) for one token of a BSHD batch: 3 · 2 · (every token-linear GEMM: QKV, output,
    MLP or routed + shared experts, logits) + 3 · 2 · Σ_layers H·(qk + v)/2 · s, the core attention halved for the
    causal mask with s² keys per sequence (s·(s+1)/2 exactly). The token-linear GEMMs are the weights ffncalc's
    matmul count sees, less the MoE router (not in Megatron's formula); padded_vocab_size is taken as the vocab."""
    linear = 3 * (fixed_forward - shape.router_flops)
    core = Fraction(6 * sum(heads * (qk + v) for heads, qk, v in shape.attention_layers) * seq, 2)
    return linear + core


CONVENTION_NOTES = {
    "ffncalc": "exact: every matmul a token uses, 3 × forward; causal scores Σ_i keys(i), capped by windows",
    "megatron": "GEMMs × 3 × 2 + causal core attention s²/2 per sequence; no router GEMM, no windows",
    "torchtitan": "6 × active params less the input table (unless tied) + 6·L·H·(qk+v)·T; not causal; no windows",
    "palm": "6N (N: every active parameter, the input table too) + 12·L·H·Q·T; not causal; no windows",
    "nanogpt": "6N (N less the position table) + 12·L·H·(hidden/H)·T; not causal; no windows",
}


class Convention(Result):
    """One framework's training FLOPs per token for this model, and the MFU a measured run implies by it."""

    name: str
    source: str
    flops_per_token: int  # rounded to the nearest integer where the formula is fractional (Megatron's s²/2)
    ratio_to_exact: float  # this convention's FLOPs per token ÷ ffncalc's
    mfu: float | None  # with --measured-tokens-per-second
    note: str


class ComputeOptimal(Result):
    """The parameters and tokens one rule makes of a compute budget C."""

    rule: str
    params: int
    tokens: int
    loss: float | None = None  # Approach 3: the fitted loss there


class ComputeOptimalReport(Result):
    """Hoffmann et al. 2022 for compute C: by 20 tokens per parameter and by Approach 3's fitted loss."""

    compute: int  # FLOPs: --compute, or this run's total model FLOPs
    compute_source: str
    rules: list[ComputeOptimal]
    tokens_per_param: float | None  # this run's tokens per (active) parameter
    times_past_20: float | None  # tokens_per_param ÷ 20


def chinchilla_20(compute: int) -> ComputeOptimal:
    """C = 6·N·D with D = 20·N: N = √(C / 120), D = 20·N (N rounded to the nearest whole parameter)."""
    params = round(math.sqrt(compute / (6 * CHINCHILLA_TOKENS_PER_PARAM)))
    return ComputeOptimal(rule="20 tokens/param", params=params, tokens=CHINCHILLA_TOKENS_PER_PARAM * params)


def chinchilla_approach_3(compute: int) -> ComputeOptimal:
    """Minimise E + A/N^α + B/D^β under C = 6·N·D: N = G·(C/6)^(β/(α+β)), D = (C/6)^(α/(α+β)) / G,
    G = (α·A / (β·B))^(1/(α+β)) (Hoffmann et al. 2022, eq. 4 with the Approach 3 fit)."""
    alpha, beta = CHINCHILLA_ALPHA, CHINCHILLA_BETA
    g = (alpha * CHINCHILLA_A / (beta * CHINCHILLA_B)) ** (1 / (alpha + beta))
    params = g * (compute / 6) ** (beta / (alpha + beta))
    tokens = (compute / 6) ** (alpha / (alpha + beta)) / g
    loss = CHINCHILLA_E + CHINCHILLA_A / params**alpha + CHINCHILLA_B / tokens**beta
    return ComputeOptimal(rule="Approach 3 (fitted loss)", params=round(params), tokens=round(tokens), loss=loss)


# --- the report -------------------------------------------------------------------------------------------


class Memory(Result):
    """Training memory per GPU (memory with `train`), and whether it fits the accelerator."""

    per_gpu: int
    gpu_memory: int
    fits: bool
    zero_stage: int
    formula: str


class Batch(Result):
    """How the job is laid out: global batch = micro-batch × data-parallel ranks × accumulation steps."""

    micro_batch: int  # sequences per GPU per forward (what activations are stored for)
    data_parallel: int  # gpus ÷ tensor_parallel
    tensor_parallel: int
    sequence_parallel: bool
    accumulation_steps: int
    global_batch: int  # sequences per optimizer step
    tokens_per_step: int  # global_batch × seq
    steps: int  # ⌈tokens ÷ tokens_per_step⌉


class TrainReport(ModelInfo):
    """train's JSON document: what training MODEL on `tokens` costs, and the MFU of a measured run by convention."""

    tokens: int
    seq: int
    params: int  # active parameters (the total for a dense model): what tokens per parameter divide by
    flops_per_sequence: int  # model FLOPs, forward + backward, of one sequence of seq tokens
    flops_per_token: int  # flops_per_sequence / seq, rounded to the nearest integer
    total_flops: int  # flops_per_sequence × tokens / seq, rounded to the nearest integer
    components: FlopsBreakdown
    recompute: Recompute
    hardware_flops: int  # total_flops + what recomputation runs again
    gpu: str
    dtype: str
    peak_flops: int  # dense, per GPU
    gpus: int
    mfu: float  # assumed
    mfu_assumed: bool
    gpu_hours: float
    days: float
    price: float | None  # per GPU-hour
    cost: float | None
    batch: Batch
    memory: Memory
    measured_tokens_per_second: float | None  # the whole job's
    hfu: float | None  # the measured run's hardware FLOPs utilisation by ffncalc's count
    mfu_by_convention: dict[str, float | None]
    flops_per_token_by_convention: list[Convention]
    compute_optimal: ComputeOptimalReport
    conventions: list[str]
    # The layout (--tp --pp --cp --ep --dp --vpp …; with --plan the best one found): the busiest GPU's memory,
    # each collective per step, and the step to expect at the fitted compute efficiency (layouts.evaluate).
    layout: dict[str, int] | None = None  # tp, pp, cp, ep, dp, vpp, micro_batch, global_batch
    per_gpu_bytes: int | None = None  # the busiest pipeline rank's
    fits: bool | None = None
    communication: list[Collective] | None = None
    bubble_fraction: float | None = None
    expected_step_seconds: float | None = None  # a fitted expectation, not a ceiling and not a measurement
    expected_tokens_per_second_per_gpu: float | None = None
    expected_mfu: float | None = None
    layout_report: LayoutReport | None = None  # every figure of the layout (ranks, compute, limiting term)
    layouts: list[LayoutReport] | None = None  # --plan: the layouts that fit, best first
    rejected: list[Rejected] | None = None  # --plan: the best-looking layouts that do not fit, and why
    plan_limits: str | None = None  # --plan: what was searched


CONVENTIONS = [
    "model FLOPs: ffncalc's exact count, 3 × the causal forward pass of each sequence (backward ≈ 2 × forward); "
    "total = FLOPs per sequence × tokens / seq, rounded to the nearest integer",
    "hardware FLOPs: model FLOPs + recomputation (full: one more forward; selective: the forward attention scores)",
    "GPU-hours = total FLOPs ÷ (MFU × dense peak × 3,600); days = GPU-hours ÷ GPUs ÷ 24; cost = GPU-hours × price",
    "time and cost at an assumed MFU (default 0.4), not a measurement; peaks are dense (no 2:4 sparsity)",
    "MFU of a measured run = FLOPs per token × tokens/s ÷ (GPUs × dense peak), each convention with its own "
    "FLOPs per token; HFU uses hardware FLOPs",
    "compute-optimal (Hoffmann et al. 2022): C = 6·N·D; 20 tokens/param: N = √(C/120); Approach 3: minimum of "
    "E + A/N^α + B/D^β (E 1.69, A 406.4, B 410.7, α 0.34, β 0.28)",
]
