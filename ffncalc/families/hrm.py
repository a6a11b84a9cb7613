"""The Hierarchical Reasoning Model's text LM (HRM-Text): two stacks of gated-attention layers, a fast one (L) and a
slow one (H), run H_cycles · (L_cycles + 1) times a token over the same weights."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from ..schema import Flag, LayerCount, Name, PositionCount, Width, derives
from ..spec import Extra, Layer, LearnedTensor, ModelSpec, Parameter, Projection, names
from ..values import replace
from .base import DecoderConfig
from .registry import family

# Its checkpoints fuse gate, q, k and v into attn.gqkv_proj and the MLP's gate and up into mlp.gate_up_proj
# (conversion_mapping.py's hrm_text splits them on load); transformers saves the weights so and any biases under the
# modules' own names, which it does not fuse.
HRM_ATTENTION = names(q="attn.gqkv_proj", k="attn.gqkv_proj", v="attn.gqkv_proj", o="attn.o_proj")
HRM_MLP = names(gate="mlp.gate_up_proj", up="mlp.gate_up_proj", down="mlp.down_proj")


@family("hrm_text", transformers="HrmTextConfig", architecture="HRM-Text", model_class="HrmTextForCausalLM")
class HrmTextConfig(DecoderConfig):
    """configuration_hrm_text.py / modeling_hrm_text.py: HrmTextModel holds two stacks (L_module, H_module) of
    num_layers_per_stack layers each (default num_hidden_layers; __post_init__ then sets num_hidden_layers to the
    number of stack-layer runs, num_layers_per_stack · H_cycles · (L_cycles + 1), each a slot of the cache). A layer:
    multi-head attention (q, k, v, o of heads · head_dim, biased by attention_bias) with a sigmoid output gate
    gate_proj (hidden → heads · head_dim, biased too), a SwiGLU of intermediate_size (mlp_bias). Every norm (two a
    layer, each stack's final_norm) is an RMSNorm without a weight; the model has no final norm of its own. z_L_init
    (hidden) is the fast stack's initial state, a parameter. Per token the fast stack runs H_cycles · L_cycles times
    and the slow one H_cycles times: the runs after each stack's first are counted as layers that borrow every
    tensor (``Layer.borrowed``), each with its own cache slot."""

    attention_names = HRM_ATTENTION
    mlp_names = HRM_MLP
    informational_fields = DecoderConfig.informational_fields | {"L_bp_cycles", "prefix_lm", "embedding_scale"}

    tie_word_embeddings: Flag
    mlp_bias: Flag
    attention_bias: Flag
    hidden_act: Name
    intermediate_size: Width
    num_hidden_layers: LayerCount
    head_dim: Width
    max_position_embeddings: PositionCount
    H_cycles: LayerCount
    L_cycles: LayerCount
    num_layers_per_stack: LayerCount | None
    prefix_lm: Flag
    L_bp_cycles: Annotated[list[int] | None, Field(max_length=4096)]

    @property
    @derives("num_layers_per_stack", "num_hidden_layers")
    def stack_layers(self) -> int:
        return self.num_layers_per_stack or self.num_hidden_layers

    def build_layer(self, index: int, window: int | None) -> Layer:
        """A layer with its weights as the checkpoint fuses them and its biases as transformers saves them."""
        width, biased = self.num_attention_heads * self.resolved_head_dim, self.attention_biased
        gate = Projection("gate_proj", "attn.gqkv_proj", self.hidden_size, width, component="attention")
        biases = [
            Parameter("attention", part, f"self_attn.{part}_proj.bias", (width,))
            for part in ("gate", "q", "k", "v")
            if biased
        ]
        if self.mlp_biased:
            biases += [
                Parameter("ffn", part, f"mlp.{part}_proj.bias", (self.intermediate_size,)) for part in ("gate", "up")
            ]
            biases.append(Parameter("ffn", "down", "mlp.down_proj.bias", (self.hidden_size,)))
        attention = self.attention(window, q_bias=False, k_bias=False, v_bias=False)
        return self.layer(attention, self.gated_ffn(bias=False), (), projections=(gate,), parameters=tuple(biases))

    def build_layers(self) -> tuple[Layer, ...]:
        """The fast stack, the slow stack (numbered from 0 again), then their further runs, borrowing every tensor."""
        count = self.stack_layers
        layers = [self.build_layer(index, None) for index in range(count)]
        fast = tuple(replace(layer, name="model.L_module.layers.{i}") for layer in layers)
        slow = tuple(replace(layer, name="model.H_module.layers.{i}", index_offset=count) for layer in layers)
        fast_again = tuple(replace(layer, borrowed=("",)) for layer in fast) * (self.H_cycles * self.L_cycles - 1)
        slow_again = tuple(replace(layer, borrowed=("",)) for layer in slow) * (self.H_cycles - 1)
        return fast + slow + fast_again + slow_again

    def to_spec(self) -> ModelSpec:
        z_init = Extra("other", "model.z_L_init", LearnedTensor((self.hidden_size,)))
        return replace(super().to_spec(), final_norm=None, extras=(z_init,))
