"""SmolLM3 (configuration_smollm3.py): Llama's layer with no RoPE in some layers and optional windows."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from ..schema import Flag, HeadCount, LayerCount, Name, PositionCount, Width, derives, per_config
from .base import DecoderConfig
from .blocks import windows_of_layer_types
from .registry import family


@family(
    "smollm3",
    transformers="SmolLM3Config",
    architecture="SmolLM3",
    model_class="SmolLM3ForCausalLM",
    heads_divide_hidden=False,  # configuration_*.py floors hidden_size // num_attention_heads
    read_beyond={"head_dim": "read by the modeling code with getattr"},
)
class SmolLM3Config(DecoderConfig):
    """configuration_smollm3.py / modeling_smollm3.py: Llama's layer, embeddings tied. With use_sliding_window,
    the layers ``layer_types`` marks sliding (default: those without RoPE, ``no_rope_layers`` 0, by default
    every no_rope_layer_interval-th) attend within sliding_window."""

    num_hidden_layers: LayerCount
    intermediate_size: Width
    tie_word_embeddings: Flag
    mlp_bias: Flag
    attention_bias: Flag
    hidden_act: Name
    head_dim: Width | None = None
    num_key_value_heads: HeadCount | None
    max_position_embeddings: PositionCount
    use_sliding_window: Flag
    sliding_window: Width | None
    no_rope_layers: Annotated[list[Literal[0, 1]] | None, Field(max_length=1 << 14)]
    no_rope_layer_interval: LayerCount
    layer_types: list[Literal["full_attention", "sliding_attention"]] | None

    @model_validator(mode="after")
    def _check_rope_layers(self) -> SmolLM3Config:
        if self.no_rope_layers is not None and len(self.no_rope_layers) < self.num_hidden_layers:
            raise ValueError(
                f"no_rope_layers has {len(self.no_rope_layers)} entries for {self.num_hidden_layers} layers"
            )
        return self

    def unused_fields(self) -> set[str]:
        rope = {"no_rope_layers", "no_rope_layer_interval"}  # they move RoPE, and default the layer_types
        if not self.use_sliding_window:
            return {"sliding_window", "layer_types"} | rope
        return rope if self.layer_types is not None else set()

    @derives("no_rope_layers", "0 on every no_rope_layer_interval-th layer, else 1")
    @per_config
    def rope_layers(self) -> list[int]:
        if self.no_rope_layers is not None:
            return list(self.no_rope_layers)
        return [int((i + 1) % self.no_rope_layer_interval != 0) for i in range(self.num_hidden_layers)]

    @derives(
        "layer_types",
        "sliding_attention where no_rope_layers is 0 (with use_sliding_window and a sliding_window), else full_attention",
    )
    @per_config
    def kinds(self) -> list[str]:
        if self.layer_types is not None:
            return list(self.layer_types)
        sliding = self.use_sliding_window and self.sliding_window is not None
        return ["sliding_attention" if sliding and not rope else "full_attention" for rope in self.rope_layers()]

    def layer_windows(self) -> list[int | None]:
        return windows_of_layer_types(self.kinds(), self.sliding_window if self.use_sliding_window else None)
