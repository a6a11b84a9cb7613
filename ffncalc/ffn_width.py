"""Llama's FFN width rule, forwards (dim → intermediate_size) and backwards (which settings give a width).

Meta's reference code (llama/model.py, FeedForward.__init__):

    hidden_dim = 4 * dim
    hidden_dim = int(2 * hidden_dim / 3)
    if ffn_dim_multiplier is not None:
        hidden_dim = int(ffn_dim_multiplier * hidden_dim)
    hidden_dim = multiple_of * ((hidden_dim + multiple_of - 1) // multiple_of)

It is reproduced here with the same Python float arithmetic and int() truncation, because a
product that lands a hair under an integer (1.15 · 20 = 22.999999999999996) truncates down.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import TYPE_CHECKING

from .errors import UsageError
from .results import Result
from .units import MAX_WIDTH

if TYPE_CHECKING:
    from .spec import DenseFfn, ModelSpec

REFERENCE_MULTIPLE_OF = 256  # the default in Meta's ModelArgs
SEARCH_MULTIPLIERS: tuple[float | None, ...] = (None,) + tuple(round(1 + 0.05 * step, 2) for step in range(11))
SEARCH_MULTIPLES_OF = (1, 8, 32, 64, 128, 256, 512, 1024, 2048, 4096)
MAX_MULTIPLIER = 64.0


class DimStep(Result):
    """One step of the rule: what it does, the formula with its numbers, and the value."""

    name: str
    formula: str
    value: int


class Derivation(Result):
    """intermediate_size from dim, ffn_dim_multiplier and multiple_of, step by step."""

    dim: int
    multiplier: float | None
    multiple_of: int
    steps: list[DimStep]
    intermediate_size: int
    parameter_matched_width: float  # 8·dim/3: a gated 3-matrix FFN with as many parameters as a 4·dim 2-matrix one
    above_parameter_matched: float  # intermediate_size / (8·dim/3) − 1
    ratio_to_dim: float


class Setting(Result):
    """A (multiplier, multiple_of) pair; multiplier None means the rule without it."""

    multiplier: float | None
    multiple_of: int


class Solve(Result):
    """Every searched (multiplier, multiple_of) pair that reproduces a width."""

    dim: int
    target: int
    settings: list[Setting]
    searched_multipliers: list[float | None]
    searched_multiples_of: list[int]
    ratio_to_dim: float


class DeriveDimReport(Result):
    """derive-dim's JSON document: a forward derivation, a backward solve, or both."""

    model: str | None
    derivation: Derivation | None
    solve: Solve | None
    notes: list[str]
    warnings: list[str] = []  # a degenerate result: a width of 0


def degenerate(derivation: Derivation | None) -> list[str]:
    """The warning for a rule that leaves no FFN: a multiplier so small that the width rounds down to 0."""
    if derivation is None or derivation.intermediate_size > 0:
        return []
    return [
        f"ffn_dim_multiplier {derivation.multiplier:g} makes the FFN width 0 (int() rounds {derivation.steps[1].value:,} "
        "times it down): the rule gives a model without an FFN"
    ]


def check_dim_inputs(dim: int, multiplier: float | None = None, multiple_of: int = REFERENCE_MULTIPLE_OF) -> None:
    """Refuse sizes the rule cannot mean: a non-positive or absurd dim, multiplier or multiple_of."""
    if not 1 <= dim <= MAX_WIDTH:
        raise UsageError(f"`dim` must be a whole number from 1 to {MAX_WIDTH:,} (got {dim})")
    if multiplier is not None and not (math.isfinite(multiplier) and 0 < multiplier <= MAX_MULTIPLIER):
        raise UsageError(f"`multiplier` must be a number above 0 and at most {MAX_MULTIPLIER:g} (got {multiplier})")
    if not 1 <= multiple_of <= MAX_WIDTH:
        raise UsageError(f"`multiple_of` must be a whole number from 1 to {MAX_WIDTH:,} (got {multiple_of})")


def meta_ffn_width(dim: int, multiplier: float | None, multiple_of: int) -> int:
    """The rule itself: multiple_of · ceil(int(mult · int(2 · 4·dim / 3)) / multiple_of)."""
    return derive_steps(dim, multiplier, multiple_of)[-1].value


def derive_steps(dim: int, multiplier: float | None, multiple_of: int) -> list[DimStep]:
    """The rule's steps with Meta's float arithmetic: 4·dim; int(2h/3); int(mult·h); round up to multiple_of."""
    width = 4 * dim
    steps = [DimStep(name="4 · dim", formula=f"4 · {dim}", value=width)]
    width = int(2 * width / 3)
    steps.append(DimStep(name="two thirds (gated FFN)", formula=f"int(2 · {steps[-1].value} / 3)", value=width))
    if multiplier is not None:
        previous = width
        width = int(multiplier * width)
        steps.append(
            DimStep(
                name="ffn_dim_multiplier",
                formula=f"int({multiplier:g} · {previous}) = int({multiplier * previous!r})",
                value=width,
            )
        )
    previous = width
    width = multiple_of * ((width + multiple_of - 1) // multiple_of)
    steps.append(
        DimStep(
            name="round up to multiple_of", formula=f"{multiple_of} · ceil({previous} / {multiple_of})", value=width
        )
    )
    return steps


def derive_intermediate_size(
    dim: int, multiplier: float | None = None, multiple_of: int = REFERENCE_MULTIPLE_OF
) -> Derivation:
    """Meta's rule forwards, with the parameter-matched width 8·dim/3 to compare it with."""
    check_dim_inputs(dim, multiplier, multiple_of)
    steps = derive_steps(dim, multiplier, multiple_of)
    width = steps[-1].value
    matched = Fraction(8 * dim, 3)
    return Derivation(
        dim=dim,
        multiplier=multiplier,
        multiple_of=multiple_of,
        steps=steps,
        intermediate_size=width,
        parameter_matched_width=float(matched),
        above_parameter_matched=float(width / matched - 1),
        ratio_to_dim=width / dim,
    )


def solve_intermediate_size(dim: int, target: int) -> Solve:
    """Every (multiplier ∈ {none, 1.00, 1.05 … 1.50}, multiple_of ∈ {1 … 4096}) that gives TARGET from DIM."""
    check_dim_inputs(dim)
    if not 1 <= target <= MAX_WIDTH:
        raise UsageError(f"`target` must be a whole number from 1 to {MAX_WIDTH:,} (got {target})")
    settings = [
        Setting(multiplier=multiplier, multiple_of=multiple_of)
        for multiplier in SEARCH_MULTIPLIERS
        for multiple_of in SEARCH_MULTIPLES_OF
        if meta_ffn_width(dim, multiplier, multiple_of) == target
    ]
    return Solve(
        dim=dim,
        target=target,
        settings=settings,
        searched_multipliers=list(SEARCH_MULTIPLIERS),
        searched_multiples_of=list(SEARCH_MULTIPLES_OF),
        ratio_to_dim=target / dim,
    )


def derivation_notes(derivation: Derivation | None, solve: Solve | None) -> list[str]:
    """What a reader needs beside the numbers: Llama 3's multiple_of, and a plain word when nothing fits."""
    notes = []
    if derivation is not None:
        notes.append(
            f"multiple_of {derivation.multiple_of}"
            + (" (the reference code's default)" if derivation.multiple_of == REFERENCE_MULTIPLE_OF else "")
            + "; Llama 3 used 1024 (8B) and 4096 (70B, 405B)."
        )
    if solve is not None:
        ratio = Fraction(solve.target, solve.dim)
        simple = ratio.denominator <= 4
        if not solve.settings:
            what = f"exactly {float(ratio):g} × hidden" if simple else f"{float(ratio):.3f} × hidden"
            notes.append(f"No searched setting gives {solve.target:,} from {solve.dim:,}: it is {what}, not this rule.")
        elif simple and ratio.denominator == 1:
            notes.append(
                f"{solve.target:,} is exactly {ratio.numerator} × hidden; the rule reaches it only as listed, "
                "which may be a coincidence of rounding rather than how it was chosen."
            )
    return notes


def model_ffn(spec: ModelSpec) -> DenseFfn | None:
    """The FFN a model's width rule would size: its first dense FFN, else one expert; None without an FFN."""
    from .spec import DenseFfn, MoeFfn

    ffns = [layer.ffn for layer in spec.layers if layer.ffn is not None and layer.stack in ("decoder", "encoder")]
    dense = next((ffn for ffn in ffns if isinstance(ffn, DenseFfn)), None)
    if dense is not None:
        return dense
    expert = next((ffn for ffn in ffns if isinstance(ffn, MoeFfn)), None)
    return expert.expert if expert is not None else None


def not_a_gated_ffn(model: str, ffn: DenseFfn | None) -> str:
    """Why the rule does not apply to MODEL: it has no FFN, or a plain (ungated) one."""
    if ffn is None:
        return f"{model} has no FFN layer (its layers mix tokens only), so there is no width to derive."
    ratio = Fraction(ffn.intermediate_size, ffn.hidden_size)
    return (
        f"{model}'s FFN is plain (up, activation, down), {ffn.intermediate_size:,} wide = {float(ratio):g} × hidden: "
        "Meta's rule sizes gated FFNs (gate, up, down) and does not apply."
    )
