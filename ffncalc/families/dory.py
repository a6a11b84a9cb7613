"""Dory: an nGPT decoder on the unit sphere (parameter-free L2 norms, learned per-channel scales) whose middle layers
run n_recurrent_loops times over the same weights."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from ..schema import MAX_LAYERS, Flag, HeadCount, LayerCount, LayerIndex, Name, PositionCount, Width, derives
from ..spec import Extra, Layer, LearnedTensor, ModelNames, ModelSpec, Parameter, Projection
from ..values import replace
from .base import DecoderConfig
from .blocks import entries_check, windows_of_layer_types
from .registry import family

# transformers saves the base model as its checkpoints name it (conversion_mapping.py's dory, reverted): backbone.,
# embeddings, and the attention's output gate g_proj.
DORY_LAYER = "backbone.layers.{i}"
DORY_MODEL = ModelNames(embed_tokens="backbone.embeddings", final_norm="", base_model_prefix="backbone")


@family(
    "dory",
    transformers="DoryConfig",
    architecture="Dory",
    model_class="DoryForCausalLM",
    heads_divide_hidden=False,  # head_dim is a field; nothing checks hidden_size against the heads
)
class DoryConfig(DecoderConfig):
    """configuration_dory.py / modular_dory.py: each layer is AfmoeAttention (q, k, v, o with attention_bias, heads of
    head_dim; gate_proj hidden → heads · head_dim, no bias, saved as g_proj) with nGPT's scales sqk and s_gate (one
    per query channel), a Llama MLP (mlp_bias) with suv_gate and suv_up (one per intermediate channel), and the
    residual interpolation rates lambda_1 and lambda_2 (one per hidden channel). Every norm (the layers' four, q and
    k, the sub-norms, the final) is an L2 norm without weights. The head is lm_head with logit_scale (one per token).

    The layers run as n_input_layers, then n_recurrent_layers (default: the rest) n_recurrent_loops times over the
    same weights, then n_output_layers: the repeated runs are counted as layers that borrow every tensor
    (``Layer.borrowed``), each with its own key-value cache (recurrent_kv_cache_mode "per_loop"). Layers layer_types
    marks sliding (default: all but every fourth) attend within sliding_window. A config as transformers writes it
    lists an attention block and an "mlp" block per layer (to_dict doubles the layer counts): __post_init__ halves
    them, and so does ffncalc."""

    layer_name = DORY_LAYER
    model_names = DORY_MODEL
    informational_fields = DecoderConfig.informational_fields | {"recurrent_kv_cache_mode"}

    tie_word_embeddings: Flag
    mlp_bias: Flag
    attention_bias: Flag
    hidden_act: Name
    intermediate_size: Width
    num_hidden_layers: LayerCount
    num_key_value_heads: HeadCount
    head_dim: Width
    max_position_embeddings: PositionCount
    sliding_window: Width
    layer_types: Annotated[list[Literal["full_attention", "sliding_attention"]], Field(max_length=MAX_LAYERS)] | None
    n_input_layers: LayerIndex
    n_recurrent_layers: LayerIndex | None
    n_output_layers: LayerIndex
    n_recurrent_loops: LayerCount
    recurrent_kv_cache_mode: Literal["per_loop", "last_loop"]

    _check_layer_types = entries_check("layer_types", exact=True)

    @model_validator(mode="before")
    @classmethod
    def _collapse_layer_pairs(cls, raw: Any) -> Any:
        """DoryConfig.__post_init__: layer_types listing 'mlp' blocks is the saved two-blocks-a-layer form; take every
        other entry and halve num_hidden_layers, n_input_layers, n_output_layers and n_recurrent_layers."""
        if not isinstance(raw, dict) or not isinstance(raw.get("layer_types"), list) or "mlp" not in raw["layer_types"]:
            return raw
        halved = {
            key: raw[key] // 2 for key in COUNTS if isinstance(raw.get(key), int) and not isinstance(raw[key], bool)
        }
        halved |= {
            key: cls.model_fields[key].default // 2 for key in COUNTS if key not in raw and key != "n_recurrent_layers"
        }
        return {**raw, **halved, "layer_types": raw["layer_types"][::2]}

    @model_validator(mode="after")
    def _check_stages(self) -> DoryConfig:
        stages = self.n_input_layers + self.recurrent_layers + self.n_output_layers
        if self.recurrent_layers < 0 or stages != self.num_hidden_layers:
            raise ValueError(
                f"n_input_layers + n_recurrent_layers + n_output_layers ({stages}) must equal num_hidden_layers "
                f"({self.num_hidden_layers}), as DoryConfig.validate_architecture requires"
            )
        return self

    @property
    @derives("n_recurrent_layers", "num_hidden_layers − n_input_layers − n_output_layers")
    def recurrent_layers(self) -> int:
        if self.n_recurrent_layers is not None:
            return self.n_recurrent_layers
        return self.num_hidden_layers - self.n_input_layers - self.n_output_layers

    @derives("layer_types", "full_attention every fourth layer, sliding_attention the others")
    def kinds(self) -> list[str]:
        if self.layer_types is not None:
            return list(self.layer_types)
        return ["full_attention" if (i + 1) % 4 == 0 else "sliding_attention" for i in range(self.num_hidden_layers)]

    def unused_fields(self) -> set[str]:
        return set() if "sliding_attention" in self.kinds() else {"sliding_window"}

    def layer_windows(self) -> list[int | None]:
        return windows_of_layer_types(self.kinds(), self.sliding_window)

    def build_layer(self, index: int, window: int | None) -> Layer:
        width = self.num_attention_heads * self.resolved_head_dim
        gate = Projection("gate_proj", "self_attn.g_proj", self.hidden_size, width, component="attention")
        scales = (
            Parameter("attention", "sqk", "self_attn.sqk", (width,)),
            Parameter("attention", "s_gate", "self_attn.s_gate", (width,)),
            Parameter("ffn", "suv_gate", "mlp.suv_gate", (self.intermediate_size,)),
            Parameter("ffn", "suv_up", "mlp.suv_up", (self.intermediate_size,)),
            Parameter("other", "lambda_1", "lambda_1", (self.hidden_size,)),
            Parameter("other", "lambda_2", "lambda_2", (self.hidden_size,)),
        )
        return self.layer(self.attention(window), self.gated_ffn(), (), projections=(gate,), parameters=scales)

    def build_layers(self) -> tuple[Layer, ...]:
        """Every layer once, then the recurrent layers' further loops, each borrowing all of its layer's tensors."""
        held = super().build_layers()
        recurrent = held[self.n_input_layers : self.n_input_layers + self.recurrent_layers]
        loops = tuple(replace(layer, borrowed=("",)) for layer in recurrent) * (self.n_recurrent_loops - 1)
        return held + loops

    def to_spec(self) -> ModelSpec:
        logit_scale = Extra("lm_head", "lm_head.logit_scale", LearnedTensor((self.vocab_size,)))
        return replace(super().to_spec(), final_norm=None, extras=(logit_scale,))

    def notes(self) -> list[str]:
        notes = super().notes()
        if self.recurrent_kv_cache_mode == "last_loop" and self.n_recurrent_loops > 1:
            notes.append(
                "recurrent_kv_cache_mode is last_loop: the recurrent layers cache only their last loop's keys and "
                "values, while ffncalc's key-value cache counts one for every loop"
            )
        return notes


COUNTS = ("num_hidden_layers", "n_input_layers", "n_output_layers", "n_recurrent_layers")
