"""Reading the units people type: contexts like 128k, dtypes like bfloat16."""

from __future__ import annotations

import re
from fractions import Fraction

from .errors import UsageError

MIB, GIB = 1 << 20, 1 << 30  # binary units, declared once
MAX_WIDTH = 1 << 24  # hidden, FFN, head and vocabulary sizes: 16,777,216
MAX_CONTEXT = 1 << 40  # far beyond any context window; keeps the arithmetic meaningful
CONTEXT = re.compile(r"^\s*(-?\d+(?:\.\d+)?)\s*([kKmM]?)\s*$")
# Context windows are powers of two, so k and M are binary: 128k = 131,072, 1M = 1,048,576.
CONTEXT_MULTIPLIERS = {"": 1, "k": 1024, "m": 1024 * 1024}

# Bytes per element of each safetensors dtype.
DTYPE_BYTES = {
    "F64": 8, "I64": 8, "U64": 8,
    "F32": 4, "I32": 4, "U32": 4,
    "F16": 2, "BF16": 2, "I16": 2, "U16": 2,
    "F8_E4M3": 1, "F8_E5M2": 1, "F8_E8M0": 1, "I8": 1, "U8": 1, "BOOL": 1,
}  # fmt: skip
# torch_dtype names, and the short ones people type, → safetensors dtypes.
TORCH_DTYPES = {
    "float64": "F64", "double": "F64", "float32": "F32", "float": "F32", "fp32": "F32", "f32": "F32",
    "bfloat16": "BF16", "bf16": "BF16", "float16": "F16", "half": "F16", "fp16": "F16", "f16": "F16",
    "float8_e4m3fn": "F8_E4M3", "float8_e4m3": "F8_E4M3", "fp8": "F8_E4M3", "float8_e5m2": "F8_E5M2",
    "int8": "I8", "uint8": "U8",
}  # fmt: skip


def parse_context(text: str | int) -> int:
    """'8k' → 8,192; '1.5k' → 1,536; '1M' → 1,048,576 (k = 1024). Zero, negatives, fractions of a token and junk are errors."""
    if isinstance(text, int) and not isinstance(text, bool):
        value = text
    else:
        match = CONTEXT.match(str(text))
        if match is not None and len(match[1]) > 30:  # beyond MAX_CONTEXT by far; also keeps int() from refusing
            raise UsageError(f"context of {len(match[1]):,} digits is larger than {MAX_CONTEXT:,} tokens")
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


def safetensors_dtype(dtype: str) -> str:
    """bfloat16, torch.bfloat16, bf16 or BF16 → BF16; an unknown dtype is an error naming the known ones."""
    name = dtype.strip().removeprefix("torch.")
    if name.upper() in DTYPE_BYTES:
        return name.upper()
    if name.lower() not in TORCH_DTYPES:
        raise UsageError(f"dtype {dtype!r} is not one ffncalc knows; use one of: {', '.join(sorted(TORCH_DTYPES))}")
    return TORCH_DTYPES[name.lower()]


def bytes_per_element(dtype: str | None) -> int:
    """Bytes of one stored element of DTYPE (bfloat16 → 2)."""
    if dtype is None:
        raise UsageError("the config names no torch_dtype; pass `dtype`, e.g. `dtype` bf16")
    return DTYPE_BYTES[safetensors_dtype(dtype)]


SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(GiB|GB|TiB|TB|MiB|MB|PiB|PB)?\s*$", re.I)
SIZE_UNITS = {
    "gib": 1 << 30, "gb": 10**9, "tib": 1 << 40, "tb": 10**12, "mib": 1 << 20, "mb": 10**6, "pib": 1 << 50,
    "pb": 10**15,
}  # fmt: skip
#: The one unit rule of every size ffncalc reads or prints (stated in the help and the README).
UNIT_RULE = "GB = 10^9 bytes, GiB = 2^30 bytes"


def parse_size(text: str) -> int:
    """'96GB' → 96·10⁹ bytes, '80GiB' → 80·2³⁰ (UNIT_RULE); a bare number is refused: GPU memory is sold in
    "GB" that are sometimes GiB, so the reader says which."""
    match = SIZE.match(text)
    if match is None or len(match[1]) > 30:  # thousands of digits would only be refused later, and slowly
        raise UsageError(f"memory size {text[:40]!r} is not a size; use e.g. 96GB (10^9 bytes) or 80GiB (2^30 bytes)")
    if match[2] is None:
        raise UsageError(
            f"memory size {text.strip()!r} has no unit; write {match[1]}GB (10^9 bytes) or {match[1]}GiB (2^30 bytes)"
        )
    unit = match[2].lower()
    value = int(Fraction(match[1]) * SIZE_UNITS[unit])
    if not 0 < value <= 1 << 50:
        raise UsageError(f"memory size {text!r} must be above 0 and at most 1 PiB")
    return value
