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
from typing import Any

from .results import Result

# llama.cpp's tensor names (gguf-py/gguf/constants.py TENSOR_NAMES) → ffncalc's components (those `params` uses).
_COMPONENTS = (
    (r"^token_embd\.weight$", "embedding"),
    (r"^(token_embd_norm|output_norm)\.(weight|bias)$", "norm"),
    (r"^output\.(weight|bias)$", "lm_head"),
    (r"^rope_(freqs|factors_long|factors_short)\.weight$", "not parameters"),
    (r"^blk\.\d+\.exp_probs_b\.bias$", "not parameters"),  # e_score_correction_bias: a buffer in transformers
    (r"^blk\.\d+\.[a-z_]*norm[a-z_]*\.(weight|bias)$", "norm"),
    (r"^blk\.\d+\.attn_[a-z_]+\.(weight|bias)$", "attention"),
    (r"^blk\.\d+\.(ffn_[a-z_]+|exp_probs_b)\.(weight|bias)$", "ffn"),
)


@cache
def _patterns() -> tuple[tuple[re.Pattern[str], str], ...]:
    return tuple((re.compile(pattern), part) for pattern, part in _COMPONENTS)


def component(name: str) -> str:
    """The component a llama.cpp tensor name belongs to: embedding, attention, ffn, norm, lm_head, not parameters
    (rotary tables llama.cpp stores as tensors, which transformers computes; a router's score-correction bias,
    which transformers holds as a buffer) or other."""
    for pattern, part in _patterns():
        if pattern.match(name):
            return part
    return "other"


def layer_of(name: str) -> int | None:
    """The repeating layer (block) a tensor belongs to, or None for one outside the blocks."""
    if not name.startswith("blk."):
        return None
    number = name[4:].split(".", 1)[0]
    return int(number) if number.isdigit() else None


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


# --- what a GGUF stores, by type and by component ----------------------------------------------------------


class GgufTypeBytes(Result):
    """The tensors of one ggml type: how many, their weights and bytes, and bits per weight of the type."""

    type: str  # ggml's name: Q4_K, Q6_K, F32 …
    tensors: int
    elements: int
    bytes: int
    bits_per_weight: float


class GgufWeights(Result):
    """A GGUF's tensor data as its header describes it: exact bytes by ggml type and by component."""

    file: str
    files: list[str]
    architecture: str  # general.architecture
    file_type: str | None  # general.file_type as llama.cpp names it, e.g. MOSTLY_Q4_K_M
    header_only: bool
    header_bytes: int  # metadata and tensor infos, before the data section (Σ over split parts)
    tensors: int
    bytes: int  # Σ ggml_nbytes: the weights as stored
    padded_bytes: int  # the data sections as laid out (each tensor padded to general.alignment)
    elements: int  # every tensor's elements
    parameters: int  # the elements of the parameter tensors (rotary tables llama.cpp stores as tensors left out)
    parameters_match: bool  # parameters equal ffncalc's count of the mapped config
    bits_per_weight: float  # bytes × 8 ÷ elements
    by_type: list[GgufTypeBytes]
    by_component: dict[str, int]  # bytes
    elements_by_component: dict[str, int]


def gguf_weights(gguf: Any, counted: int) -> GgufWeights:
    """GGUF's tensors summed by type and component; COUNTED is ffncalc's parameter count of the mapped config."""
    by_type: dict[int, list[int]] = {}
    by_component: dict[str, int] = {}
    elements_by_component: dict[str, int] = {}
    for tensor in gguf.tensors:
        row = by_type.setdefault(tensor.kind, [0, 0, 0])
        size = tensor.bytes
        row[0] += 1
        row[1] += tensor.elements
        row[2] += size
        part = component(tensor.name)
        by_component[part] = by_component.get(part, 0) + size
        elements_by_component[part] = elements_by_component.get(part, 0) + tensor.elements
    elements = sum(row[1] for row in by_type.values())
    parameters = elements - elements_by_component.get("not parameters", 0)
    file_type = gguf.get("general.file_type")
    return GgufWeights(
        file=gguf.location,
        files=list(gguf.files),
        architecture=gguf.architecture,
        file_type=_file_type(file_type),
        header_only=gguf.header_only,
        header_bytes=gguf.header_bytes,
        tensors=len(gguf.tensors),
        bytes=gguf.data_bytes,
        padded_bytes=gguf.padded_bytes,
        elements=elements,
        parameters=parameters,
        parameters_match=parameters == counted,
        bits_per_weight=gguf.data_bytes * 8 / elements if elements else 0.0,
        by_type=[
            GgufTypeBytes(
                type=type_name(kind),
                tensors=row[0],
                elements=row[1],
                bytes=row[2],
                bits_per_weight=bits_per_weight(kind),
            )
            for kind, row in sorted(by_type.items(), key=lambda item: -item[1][2])
        ],
        by_component=dict(sorted(by_component.items())),
        elements_by_component=dict(sorted(elements_by_component.items())),
    )


def _file_type(value: Any) -> str | None:
    """general.file_type as llama.cpp's enum names it (gguf's LlamaFileType), or None."""
    if not isinstance(value, int) or isinstance(value, bool):
        return None
    from gguf import LlamaFileType

    try:
        return LlamaFileType(value).name
    except ValueError:
        return str(value)
