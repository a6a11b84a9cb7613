"""Reading the units people type: contexts like 128k, dtypes like bfloat16."""

from __future__ import annotations

import re
from fractions import Fraction

from .errors import UsageError

MAX_CONTEXT = 1 << 40  # far beyond any context window; keeps the arithmetic meaningful
CONTEXT = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*([kKmM]?)\s*$")
# Context windows are powers of two, so k and M are binary: 128k = 131,072, 1M = 1,048,576.
CONTEXT_MULTIPLIERS = {"": 1, "k": 1024, "m": 1024 * 1024}

BYTES_PER_ELEMENT = {
    "float64": 8,
    "float32": 4,
    "float": 4,
    "bfloat16": 2,
    "float16": 2,
    "half": 2,
    "float8_e4m3fn": 1,
    "float8_e5m2": 1,
    "fp8": 1,
    "int8": 1,
}
DTYPE_ALIASES = {"fp32": "float32", "f32": "float32", "bf16": "bfloat16", "fp16": "float16", "f16": "float16"}


def parse_context(text: str | int) -> int:
    """'8k' → 8,192; '1.5k' → 1,536; '1M' → 1,048,576 (k = 1024). Zero, negatives, fractions of a token and junk are errors."""
    if isinstance(text, int) and not isinstance(text, bool):
        value = text
    else:
        match = CONTEXT.match(str(text))
        if match is None:
            raise UsageError(f"context {text!r} is not a number of tokens; use e.g. 8192, 8k or 1M (k = 1024)")
        exact = Fraction(match[1]) * CONTEXT_MULTIPLIERS[match[2].lower()]
        if exact.denominator != 1:
            raise UsageError(f"context {text!r} is not a whole number of tokens ({float(exact):,} tokens)")
        value = int(exact)
    if value <= 0:
        raise UsageError(f"context {text!r} must be at least 1 token")
    if value > MAX_CONTEXT:
        raise UsageError(f"context {text!r} is larger than {MAX_CONTEXT:,} tokens")
    return value


def bytes_per_element(dtype: str | None) -> int:
    """Bytes of one stored element of DTYPE (bfloat16 → 2); an unknown dtype is an error naming the known ones."""
    if dtype is None:
        raise UsageError("the config names no torch_dtype; pass --dtype, e.g. --dtype bfloat16")
    name = dtype.lower().removeprefix("torch.")
    name = DTYPE_ALIASES.get(name, name)
    if name not in BYTES_PER_ELEMENT:
        known = ", ".join(sorted(set(BYTES_PER_ELEMENT) | set(DTYPE_ALIASES)))
        raise UsageError(f"dtype {dtype!r} is not one ffncalc knows; use one of: {known}")
    return BYTES_PER_ELEMENT[name]
