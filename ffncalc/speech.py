"""One audio clip through a speech encoder that reads fixed windows (Whisper's): the windows, frames and positions
its rule makes of the clip, and the FLOPs.

2 FLOPs per multiply-add, matrix multiplications only, as for text (``compute.py``). A clip of s seconds is read
as ⌈s / window⌉ windows, the last padded to a whole one (Whisper's feature extractor pads every input to 30 s,
and the encoder refuses any other length); per window the convolutions run over its frames (a stride-2
convolution over the positions it leaves), the layers over its positions, each attending to all of them and to
no other window's, then an encoder-decoder's decoder layers project each position's cross-attention keys and
values once, or an audio tower's projector runs once per token the window becomes in the language model.
"""

from __future__ import annotations

import math
from fractions import Fraction

from .compute import (
    FLOPS_PER_MULTIPLY_ADD,
    AudioFlops,
    audio_front_end_flops,
    cross_kv_weights,
    extra_weights_by_runs,
    score_flops_per_key,
)
from .errors import UsageError
from .spec import AudioInput, ModelSpec
from .tensors import Tensor, attention_tensors, ffn_tensors


def matmul_weights(tensors: list[Tensor]) -> int:
    """The elements of the tensors a position is multiplied by (weights, not biases or norms)."""
    return sum(tensor.elements for tensor in tensors if tensor.matmul)


MAX_SECONDS = 86_400  # a day of audio: beyond it a figure is no longer about one clip


def parse_audio_seconds(text: str) -> Fraction:
    """'45' or '12.5' → the clip's length in seconds, exactly."""
    try:
        seconds = Fraction(text.strip()) if len(text) <= 20 else None
    except (ValueError, ZeroDivisionError):
        seconds = None
    if seconds is None:
        raise UsageError(f"`audio` {text!r}: give the clip's length in seconds, e.g. 45 or 12.5")
    if not 0 < seconds <= MAX_SECONDS:
        raise UsageError(f"`audio` {text!r}: the clip must be longer than 0 and at most {MAX_SECONDS:,} seconds")
    return seconds


def window_seconds(rule: AudioInput) -> Fraction:
    """A window's length: frames / frames per second."""
    return Fraction(rule.frames, rule.frames_per_second)


def whole(value: Fraction) -> int | float:
    """An exact integer where the value is one, else the nearest float (for JSON)."""
    return int(value) if value.denominator == 1 else float(value)


def audio_convention(spec: ModelSpec) -> str:
    """How `audio` reads a clip, stated once for the JSON conventions."""
    audio = spec.audio
    assert audio is not None
    reader = "the decoder's cross-attention" if audio.tokens is None else "the language model"
    window = f"{whole(window_seconds(audio)):,}"
    return (
        f"`audio` s: the encoder reads ⌈s / {window}⌉ windows of {window} s ({audio.frames_per_second:,} log-mel "
        f"frames a second; the last window padded), each {audio.frames:,} frames through its convolutions and {audio.positions:,} positions "
        f"through its layers, attending within the window only; the figures are for every window, and {reader} "
        "reads each window's output"
    )


def count_audio_flops(spec: ModelSpec, model: str, seconds: Fraction) -> AudioFlops:
    """Per window: convolutions (2 · weights · frames or positions) + layers (2 · weights · positions, + 2 · heads ·
    (qk + v) · positions²; a tower's layers counted as images.py counts a vision tower's) + cross-attention keys and values (2 · weights · positions) or projector (2 · weights ·
    tokens); times ⌈seconds / window⌉ windows."""
    rule = spec.audio
    if rule is None:
        raise UsageError(
            f"{model}: `audio` needs a speech encoder that reads fixed windows of audio (Whisper's 30 s); this model "
            "has none whose rule ffncalc knows (an audio tower of variable length is counted by parameter only)"
        )
    windows = math.ceil(seconds / window_seconds(rule))
    n = rule.positions
    projections = ffn = scores = 0
    for layer in (layer for layer in spec.layers if layer.stack == rule.stack):
        if layer.attention is not None:
            projections += FLOPS_PER_MULTIPLY_ADD * matmul_weights(attention_tensors(layer.attention)) * n
            scores += score_flops_per_key(layer.attention) * n * n  # each position attends to all in its window
        if layer.ffn is not None:
            ffn += FLOPS_PER_MULTIPLY_ADD * matmul_weights(ffn_tensors(layer.ffn)) * n
    encoder_decoder = rule.tokens is None
    cross_kv = FLOPS_PER_MULTIPLY_ADD * cross_kv_weights(spec) * rule.positions if encoder_decoder else 0
    per_token = extra_weights_by_runs(spec).get("per_audio_token", 0)
    projector = 0 if encoder_decoder else FLOPS_PER_MULTIPLY_ADD * per_token * (rule.tokens or 0)
    front_end = audio_front_end_flops(spec)
    per_window = front_end + projections + scores + ffn + cross_kv + projector
    return AudioFlops(
        seconds=whole(seconds),
        window_seconds=whole(window_seconds(rule)),
        windows=windows,
        frames=windows * rule.frames,
        encoder_positions=windows * rule.positions,
        audio_tokens=None if rule.tokens is None else windows * rule.tokens,
        front_end=windows * front_end,
        attention_projections=windows * projections,
        attention_scores=windows * scores,
        ffn=windows * ffn,
        cross_attention_kv=windows * cross_kv,
        projector=windows * projector,
        total=windows * per_window,
    )
