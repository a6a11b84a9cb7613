"""Llama (configuration_llama.py): the decoder most families refine."""

from __future__ import annotations

from .base import (
    AttentionBias,
    DecoderConfig,
    FfnWidth,
    HeadDim,
    HiddenAct,
    HiddenLayers,
    KvHeads,
    MaxPositions,
    MlpBias,
    TiedEmbeddings,
)
from .registry import family


@family("llama")
class LlamaConfig(
    HeadDim,
    HiddenAct,
    KvHeads,
    MaxPositions,
    AttentionBias,
    MlpBias,
    TiedEmbeddings,
    FfnWidth,
    HiddenLayers,
    DecoderConfig,
):
    """configuration_llama.py: q/k/v/o share ``attention_bias``; gate/up/down share ``mlp_bias``."""

    architecture = "Llama"
