"""Pegasus-X (google/pegasus-x-large): Pegasus's pre-LN stacks with computed sinusoidal positions and unbiased
attention, whose encoder attends within blocks of block_size (staggered by half a block every other layer) plus
num_global_tokens learned global tokens that run through every layer and attend to everything."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import model_validator

from ..schema import Flag, PositionCount, Width
from ..spec import Attention, Extra, Layer, ModelSpec, Names, Table
from ..values import replace
from .bart import BartLayout, Kind
from .registry import family


@family(
    "pegasus_x",
    transformers="PegasusXConfig",
    architecture="Pegasus-X",
    model_class="PegasusXForConditionalGeneration",
)
class PegasusXConfig(BartLayout):
    """configuration_pegasus_x.py / modeling_pegasus_x.py (transformers 5.24): BART's stacks under model.* as Pegasus
    lays them out (pre-LN layers, a final layer_norm on each stack, no LayerNorm on the embeddings, the seq2seq LM's
    head tied to shared, no final_logits_bias), the positions sinusoidal and computed at each forward (no table);
    q, k, v and out_proj without biases, fc1 and fc2 with. Only PegasusXModel and PegasusXForConditionalGeneration.

    The encoder (PegasusXEncoder) holds embed_global, num_global_tokens learned tokens, which every layer runs beside
    the input (its own global_self_attn_layer_norm; the same projections, final_layer_norm and MLP), and pads the input
    to P, a multiple of block_size, dropping the padding after its last layer (the decoder's cross-attention reads the
    input's positions). PegasusXGlobalLocalAttention: the P positions' queries read their block of block_size keys
    and the G global keys; the G global queries read all G + P. Every other layer (odd ones, with
    stagger_local_blocks) pads half a block of zeros at either end first, so its attention and projections run over
    P + block_size positions (its MLP over P)."""

    class_prefix = "PegasusX"
    classes: ClassVar[dict[str, Kind]] = {"Model": "model", "ForConditionalGeneration": "generation"}
    positions = "computed"
    logits_bias = False
    embedding_norm = False
    final_norms = True

    max_position_embeddings: PositionCount
    num_global_tokens: Width
    block_size: Width
    stagger_local_blocks: Flag

    @model_validator(mode="after")
    def _check_blocks(self) -> PegasusXConfig:
        if self.stagger_local_blocks and self.block_size % 2:
            raise ValueError(
                f"block_size {self.block_size} is odd with stagger_local_blocks: transformers pads half a block at "
                "either end and cannot split the result into blocks (block_size must be a multiple of 2)"
            )
        return self

    def position_rows(self, kind: Literal["encoder", "decoder"]) -> int:
        return self.max_position_embeddings  # computed: no table holds them

    def attention(self, heads: int, attention_names: Names) -> Attention:
        head_dim = self.d_model // heads
        return Attention(self.d_model, heads, heads, head_dim, head_dim, attention_names)

    def stack(self, kind: Literal["encoder", "decoder"], root: str) -> tuple[Layer, ...]:
        layers = super().stack(kind, root)
        if kind == "decoder":
            return layers
        block, layer = self.block_size, layers[0]
        assert layer.attention is not None
        local = replace(layer.attention, window=block, scored_blocks=(block, 1), global_tokens=self.num_global_tokens)
        norms = (*layer.norms, ("global_self_attn_layer_norm", self.layer_norm()))
        return tuple(
            replace(
                layer,
                attention=replace(local, staggered_by=block if index % 2 == 1 and self.stagger_local_blocks else 0),
                norms=norms,
            )
            for index in range(len(layers))
        )

    def stack_extras(self, kind: Literal["encoder", "decoder"], root: str) -> list[Extra]:
        extras = super().stack_extras(kind, root)
        if kind == "decoder":
            return extras
        table = Table(self.num_global_tokens, self.d_model)
        return [*extras, Extra("other", f"{self.stack_module(root, 'encoder')}.embed_global", table, "not_generating")]

    def notes(self) -> list[str]:
        return [
            *super().notes(),
            f"The encoder runs {self.num_global_tokens:,} global tokens (embed_global) through every layer beside the "
            "input: what they cost is paid once a prompt, whatever its length.",
        ]

    def to_spec(self) -> ModelSpec:
        return replace(super().to_spec(), encoder_pad_to=self.block_size)
