"""ggml's tensor types: bytes per block as ggml defines them, and llama.cpp's tensor names as ffncalc's components.

Block sizes come from the ``gguf`` package's ``GGML_QUANT_SIZES`` (ggml's own table, ``ggml/src/ggml.c``
``type_traits``: Q4_0 18 bytes per 32 weights, Q4_K 144 per 256, Q6_K 210 per 256 …), imported when a GGUF is
read, never at start-up. A tensor's bytes are ggml_nbytes: rows × (row length ÷ block size) × block bytes, and a row
whose length is not a whole number of blocks cannot be stored at all.
"""

from __future__ import annotations

import math
import re
from functools import cache

# llama.cpp's tensor names (gguf-py/gguf/constants.py TENSOR_NAMES) → ffncalc's components (those `params` uses).
_COMPONENTS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern), component)
    for pattern, component in (
        (r"^token_embd\.weight$", "embedding"),
        (r"^(token_embd_norm|output_norm)\.(weight|bias)$", "norm"),
        (r"^output\.(weight|bias)$", "lm_head"),
        (r"^rope_(freqs|factors_long|factors_short)\.weight$", "not parameters"),
        (r"^blk\.\d+\.[a-z_]*norm[a-z_]*\.(weight|bias)$", "norm"),
        (r"^blk\.\d+\.attn_[a-z_]+\.(weight|bias)$", "attention"),
        (r"^blk\.\d+\.(ffn_[a-z_]+|exp_probs_b)\.(weight|bias)$", "ffn"),
    )
)


def component(name: str) -> str:
    """The component a llama.cpp tensor name belongs to: embedding, attention, ffn, norm, lm_head, not parameters
    (rotary tables llama.cpp stores as tensors; transformers computes them) or other."""
    for pattern, part in _COMPONENTS:
        if pattern.match(name):
            return part
    return "other"


LAYER = re.compile(r"^blk\.(\d+)\.")


def layer_of(name: str) -> int | None:
    """The repeating layer (block) a tensor belongs to, or None for one outside the blocks."""
    found = LAYER.match(name)
    return int(found[1]) if found else None


@cache
def quant_sizes() -> dict[int, tuple[str, int, int]]:
    """ggml type id → (name, weights per block, bytes per block), from the gguf package."""
    from gguf import GGML_QUANT_SIZES, GGMLQuantizationType

    return {int(kind): (GGMLQuantizationType(kind).name, *GGML_QUANT_SIZES[kind]) for kind in GGML_QUANT_SIZES}


def type_name(kind: int) -> str:
    return quant_sizes()[kind][0]


def known_type(kind: int) -> bool:
    return kind in quant_sizes()


def type_id(name: str) -> int:
    """A ggml type's id from its name (q8_0, Q4_K, f16 …), or KeyError."""
    wanted = name.upper()
    for kind, (label, _, _) in quant_sizes().items():
        if label == wanted:
            return kind
    raise KeyError(name)


def row_fits(kind: int, row: int) -> bool:
    """Whether a row of ROW weights is a whole number of KIND's blocks (ggml refuses others)."""
    return row % quant_sizes()[kind][1] == 0


def nbytes(kind: int, shape: tuple[int, ...]) -> int:
    """ggml_nbytes of a contiguous tensor of type KIND and SHAPE (ggml's order: ne[0], the row, first)."""
    _, block, size = quant_sizes()[kind]
    if not shape:
        return size
    return math.prod(shape[1:]) * (shape[0] // block) * size


def bits_per_weight(kind: int) -> float:
    _, block, size = quant_sizes()[kind]
    return size * 8 / block
