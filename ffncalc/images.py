"""One image through a vision tower: the patches and tokens the family's rule makes of it, and the FLOPs.

2 FLOPs per multiply-add, matrix multiplications only, as for text (``compute.py``). The tower's layers
run over every patch (and a class token where the tower has one), each attending to all of them, or
only within its 2-D window; the patch embedding runs once per patch; the projector (and any adapter
after the merge) once per token the image becomes in the language model.
"""

from __future__ import annotations

import math

from .compute import FLOPS_PER_MULTIPLY_ADD, ImageFlops, score_flops_per_key
from .errors import UsageError
from .results import Result
from .spec import ImageInput, Layer, ModelSpec
from .tensors import attention_tensors, extra_tensors, ffn_tensors, mixer_tensors


class ImageGrid(Result):
    """An image as the tower reads it: its resized size, its patches (rows × columns) and its tokens."""

    resized_width: int
    resized_height: int
    rows: int
    columns: int
    image_tokens: int


def parse_image_size(text: str) -> tuple[int, int]:
    """'1024x768' → (1024, 768): width × height in pixels."""
    parts = text.lower().replace("×", "x").split("x")
    if len(parts) != 2 or not all(part.strip().isdigit() and len(part.strip()) <= 6 for part in parts):
        raise UsageError(f"`image` {text!r}: give the image's width and height in pixels, e.g. 1024x768")
    width, height = (int(part) for part in parts)
    if not (1 <= width <= 100_000 and 1 <= height <= 100_000):
        raise UsageError(f"`image` {text!r}: each side must be from 1 to 100,000 pixels")
    return width, height


def image_grid(rule: ImageInput, width: int, height: int) -> ImageGrid:
    """The family's resizing rule applied to a WIDTH × HEIGHT image, then cut into patches and merged into tokens."""
    p = rule.patch_size
    if rule.resize == "budget":  # a fixed number of patches, however large the image: its size is kept
        tokens = rule.pooled_tokens if rule.pooled_tokens is not None else rule.size // rule.merge**2
        return ImageGrid(resized_width=width, resized_height=height, rows=rule.size, columns=1, image_tokens=tokens)
    if rule.resize in ("fixed", "tiles"):
        resized_w = resized_h = rule.size
    elif rule.resize == "patch_budget":
        resized_w, resized_h = _patch_budget(rule, width, height)
    elif rule.resize == "pad":  # Inkling 2: never scaled, each side padded up to whole merged units
        resized_w, resized_h = -(-width // rule.size) * rule.size, -(-height // rule.size) * rule.size
    elif rule.resize == "longest_edge":  # Pixtral: scaled down to fit, then whole merged units (the last padded)
        ratio = max(width / rule.size, height / rule.size)
        w, h = (math.floor(width / ratio), math.floor(height / ratio)) if ratio > 1 else (width, height)
        if not (w and h):
            raise UsageError(
                f"`image` {width}x{height}: scaled to fit {rule.size} px, its short side becomes 0 px, which "
                "transformers' PixtralImageProcessor cannot resize to (it refuses the image); a side may be at most "
                f"{rule.size} times the other"
            )
        # transformers 5.24 pixtral/processing_pixtral.py (_process_images): the image processor is handed
        # patch_size · spatial_merge_size, so each side is padded to whole merged units, not whole patches.
        unit = p * rule.merge
        resized_w, resized_h = -(-w // unit) * unit, -(-h // unit) * unit
    else:  # Qwen's smart_resize: each side to the nearest multiple of the factor (Python's round), at least one
        resized_w = max(rule.size, round(width / rule.size) * rule.size)
        resized_h = max(rule.size, round(height / rule.size) * rule.size)
    rows, columns = resized_h // p, resized_w // p
    if rule.pooled_tokens is not None:
        tokens = rule.pooled_tokens
    else:
        tokens = (rows // rule.merge) * (columns // (rule.merge_columns or rule.merge))
    return ImageGrid(resized_width=resized_w, resized_height=resized_h, rows=rows, columns=columns, image_tokens=tokens)


def _patch_budget(rule: ImageInput, width: int, height: int) -> tuple[int, int]:
    """Kimi's navit_resize: scaled by min(1, √(size / patches), max_side · p / each side), each side truncated (at
    least 1 px, at most max_side patches), then padded to a multiple of merge · p (merge_columns · p across)."""
    p, max_side = rule.patch_size, rule.max_side or rule.size
    patches = max(1, height // p) * max(1, width // p)
    scale = min(1.0, math.sqrt(rule.size / patches), max_side * p / height, max_side * p / width)
    h = min(max(1, int(height * scale)), max_side * p)
    w = min(max(1, int(width * scale)), max_side * p)
    rows, columns = rule.merge * p, (rule.merge_columns or rule.merge) * p
    return -(-w // columns) * columns, -(-h // rows) * rows


def _window_pairs(rows: int, columns: int, merge: int, units: int) -> int:
    """Query-key pairs of attention within 2-D windows of UNITS × UNITS merged units (MERGE² patches each), the
    edge windows smaller: Σ over windows of (its patches)² = (Σ row blocks²) · (Σ column blocks²) · merge⁴."""

    def squares(length: int) -> int:
        blocks = [units] * (length // units) + ([length % units] if length % units else [])
        return sum(block * block for block in blocks)

    return squares(rows // merge) * squares(columns // merge) * merge**4


def _matmul_weights(tensors) -> int:
    return sum(tensor.elements for tensor in tensors if tensor.matmul)


def count_image_flops(spec: ModelSpec, model: str, width: int, height: int) -> ImageFlops:
    """Patch embedding (2 · weights · patches) + layers (2 · weights · n, + 2 · heads · (qk + v) per query-key pair)
    + projector (2 · weights · image tokens), for one image (one tile of a tiling tower)."""
    rule = spec.image
    if rule is None:
        raise UsageError(
            f"{model}: `image` needs a vision transformer tower (one that reads an image as patches) whose image rule "
            "ffncalc knows; this model has none (a convolutional tower, as Gemma 3n's, or one whose image processor "
            "reads this config's images by a rule ffncalc lacks, is counted by parameter only)"
        )
    grid = image_grid(rule, width, height)
    patches = grid.rows * grid.columns
    n = patches + rule.extra_tokens  # what the layers carry
    attention_projections = attention_scores = ffn = mixers = 0
    for layer in (layer for layer in spec.layers if layer.stack == "vision"):
        attention_projections += FLOPS_PER_MULTIPLY_ADD * n * _layer_weights(layer, "attention")
        ffn += FLOPS_PER_MULTIPLY_ADD * n * _layer_weights(layer, "ffn")
        mixers += FLOPS_PER_MULTIPLY_ADD * n * _layer_weights(layer, "mixer")
        attention = layer.attention
        if attention is not None:
            windowed = attention.window is not None and rule.window_units is not None
            pairs = _window_pairs(grid.rows, grid.columns, rule.merge, rule.window_units) if windowed else n * n  # type: ignore[arg-type]
            attention_scores += score_flops_per_key(attention) * pairs
    per_patch = per_token = 0
    for extra in spec.extras:
        weights = _matmul_weights(extra_tensors(extra))
        if extra.runs == "per_patch":
            per_patch += weights
        elif extra.runs == "per_image_token":
            per_token += weights
    patch_embedding = FLOPS_PER_MULTIPLY_ADD * per_patch * patches
    projector = FLOPS_PER_MULTIPLY_ADD * per_token * grid.image_tokens
    total = patch_embedding + attention_projections + attention_scores + ffn + mixers + projector
    return ImageFlops(
        width=width,
        height=height,
        resized_width=grid.resized_width,
        resized_height=grid.resized_height,
        per_tile=rule.resize == "tiles",
        patches=patches,
        image_tokens=grid.image_tokens,
        patch_embedding=patch_embedding,
        attention_projections=attention_projections,
        attention_scores=attention_scores,
        ffn=ffn,
        projector=projector,
        total=total,
        mixers=mixers,
    )


def _layer_weights(layer: Layer, block: str) -> int:
    """The matmul weights of a tower layer's attention, FFN or other mixer (a tower counts each under "vision"); a
    mixer's state updates are not counted (no tower's mixer carries a state: LFM3-VL's convolve within a frame)."""
    if block == "attention":
        return _matmul_weights(attention_tensors(layer.attention)) if layer.attention is not None else 0
    if block == "mixer":
        return _matmul_weights(mixer_tensors(layer.mixer)) if layer.mixer is not None else 0
    return _matmul_weights(ffn_tensors(layer.ffn)) if layer.ffn is not None else 0
