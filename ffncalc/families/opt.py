"""OPT (Meta, 2022): learned positions with an offset, token tables projected in and out, biases everywhere."""

from __future__ import annotations

from typing import ClassVar

from pydantic import AliasChoices, Field

from ..schema import Flag, HeadCount, LayerCount, Name, PositionCount, Width, derives
from ..spec import Extra, Layer, Linear, ModelNames, ModelSpec, Norm, names
from .base import LayerNormDecoder
from .blocks import heads_divide
from .registry import family

OPT_ATTENTION = names(q="self_attn.q_proj", k="self_attn.k_proj", v="self_attn.v_proj", o="self_attn.out_proj")
OPT_MLP = names(up="fc1", down="fc2")


@family(
    "opt",
    transformers="OPTConfig",
    architecture="OPT",
    model_class="OPTForCausalLM",
    other_names={
        "remove_final_layer_norm": "OPTConfig's field is _remove_final_layer_norm, a name pydantic keeps private"
    },
)
class OptConfig(LayerNormDecoder):
    """configuration_opt.py / modeling_opt.py: learned positions with 2 extra rows (the offset kept
    from fairseq); tokens embedded at word_embed_proj_dim and projected in and out when it differs
    from hidden; biases everywhere (enable_bias); a final LayerNorm only when the norms come before
    the sublayers (do_layer_norm_before)."""

    layer_name = "model.decoder.layers.{i}"
    position_offset: ClassVar[int] = 2

    vocab_size: Width
    hidden_size: Width
    num_hidden_layers: LayerCount
    ffn_dim: Width
    max_position_embeddings: PositionCount
    do_layer_norm_before: Flag
    remove_final_layer_norm: Flag = Field(validation_alias=AliasChoices("_remove_final_layer_norm"))
    word_embed_proj_dim: Width | None
    num_attention_heads: HeadCount
    activation_function: Name
    enable_bias: Flag
    layer_norm_elementwise_affine: Flag
    tie_word_embeddings: Flag
    _check_heads = heads_divide("hidden_size", "num_attention_heads")

    @property
    def width(self) -> int:
        return self.hidden_size

    @property
    @derives("word_embed_proj_dim", "hidden_size")
    def embedding_width(self) -> int:
        return self.word_embed_proj_dim or self.hidden_size

    def norms(self, *modules: str) -> tuple[tuple[str, Norm], ...]:
        # Without elementwise affine a LayerNorm has no parameters at all.
        return tuple((module, self.layer_norm()) for module in modules) if self.layer_norm_elementwise_affine else ()

    def to_spec(self) -> ModelSpec:
        ffn = self.plain_ffn(self.ffn_dim, self.activation_function, self.enable_bias, OPT_MLP)
        attention = self.mha(self.num_attention_heads, self.enable_bias, OPT_ATTENTION)
        layer = Layer(self.layer_name, attention, ffn, self.norms("self_attn_layer_norm", "final_layer_norm"))
        embedding_dim = self.embedding_width
        extras: tuple[Extra, ...] = ()
        if embedding_dim != self.width:
            extras = (
                Extra("other", "model.decoder.project_in", Linear(embedding_dim, self.width)),
                Extra("other", "model.decoder.project_out", Linear(self.width, embedding_dim)),
            )
        final = self.do_layer_norm_before and not self.remove_final_layer_norm and self.layer_norm_elementwise_affine
        return self.decoder_spec(
            layer,
            self.num_hidden_layers,
            self.layer_norm() if final else None,
            self.tie_word_embeddings,
            vocab_size=self.vocab_size,
            names=ModelNames(
                "model.decoder.embed_tokens",
                "model.decoder.final_layer_norm",
                position_embeddings="model.decoder.embed_positions",
            ),
            position_embeddings=self.max_position_embeddings + self.position_offset,
            embedding_dim=embedding_dim,
            extras=extras,
        )
