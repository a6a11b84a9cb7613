"""Meta's Code World Model (CWM): Llama's layer without attention biases, sliding and full layers by layer_types."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from ..schema import MAX_LAYERS, Flag, HeadCount, LayerCount, Name, PositionCount, Width, derives
from .base import DecoderConfig
from .blocks import windows_of_layer_types
from .registry import family


@family("cwm", transformers="CwmConfig", architecture="CWM", model_class="CwmForCausalLM")
class CwmConfig(DecoderConfig):
    """configuration_cwm.py / modular_cwm.py: q, k, v and o without biases (CwmAttention builds them so), Llama's
    MLP (mlp_bias); the layers in layer_types' sliding_attention attend within sliding_window (default: every
    fourth layer from the first full, the others sliding; a sliding_window of 0 or null turns the windows off)."""

    num_hidden_layers: LayerCount
    intermediate_size: Width
    tie_word_embeddings: Flag
    mlp_bias: Flag
    hidden_act: Name
    num_key_value_heads: HeadCount | None
    head_dim: Width | None
    max_position_embeddings: PositionCount
    sliding_window: Annotated[int, Field(strict=True, ge=0)] | None
    layer_types: Annotated[list[Literal["full_attention", "sliding_attention"]], Field(max_length=MAX_LAYERS)] | None

    @derives("layer_types", "full_attention on every fourth layer from the first, sliding_attention on the others")
    def kinds(self) -> list[str]:
        if self.layer_types is not None:
            return list(self.layer_types)
        return ["full_attention" if index % 4 == 0 else "sliding_attention" for index in range(self.num_hidden_layers)]

    def layer_windows(self) -> list[int | None]:
        return windows_of_layer_types(self.kinds(), self.sliding_window or None)
