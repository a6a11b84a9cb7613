"""OpenBMB's CPM-Ant: pre-norm layers (RMS-style norms with a weight only, a GELU-gated FFN) over a token table that
also holds the prompt tokens, a segment table, and one table of relative-position and segment-pair biases per head."""

from __future__ import annotations

from ..schema import Flag, HeadCount, HFConfig, LayerCount, Width
from ..spec import (
    Attention,
    DenseFfn,
    Extra,
    Layer,
    LearnedTensor,
    ModelNames,
    ModelSpec,
    Norm,
    Table,
    names,
)
from .registry import family

CPMANT_ATTENTION = names(
    q="self_att.self_attention.project_q",
    k="self_att.self_attention.project_k",
    v="self_att.self_attention.project_v",
    o="self_att.self_attention.attention_out",
)
CPMANT_FFN = names(gate="ffn.ffn.w_in.w_0", up="ffn.ffn.w_in.w_1", down="ffn.ffn.w_out")


@family("cpmant", transformers="CpmAntConfig", architecture="CPM-Ant", model_class="CpmAntForCausalLM")
class CpmAntConfig(HFConfig):
    """configuration_cpmant.py / modeling_cpmant.py: num_hidden_layers pre-norm blocks under cpmant.encoder.layers:
    a norm (CpmAntLayerNorm: a weight, no bias), attention of num_attention_heads heads of dim_head (project_q, k,
    v, attention_out; no biases), a norm and a GELU-gated FFN of dim_ff (w_in.w_0, w_in.w_1, w_out); output_layernorm
    after the last. input_embedding has vocab_size + prompt_types · prompt_length rows (the prompt tokens after the
    vocabulary), segment_embedding segment_types; position_bias.relative_attention_bias holds segment_types² +
    position_bias_num_buckets biases per head, which every layer adds to its scores. lm_head (vocab_size rows) is its
    own tensor whatever tie_word_embeddings says: CpmAntForCausalLM ties nothing (the head would be a slice of the
    token table)."""

    informational_fields = frozenset({"tie_word_embeddings", "position_bias_max_distance"})

    vocab_size: Width
    hidden_size: Width
    num_attention_heads: HeadCount
    dim_head: Width
    dim_ff: Width
    num_hidden_layers: LayerCount
    position_bias_num_buckets: Width
    position_bias_max_distance: Width
    prompt_types: LayerCount
    prompt_length: LayerCount
    segment_types: LayerCount
    tie_word_embeddings: Flag

    def norm(self) -> Norm:
        return Norm("rmsnorm", self.hidden_size)

    def layer(self) -> Layer:
        hidden, heads, head_dim = self.hidden_size, self.num_attention_heads, self.dim_head
        attention = Attention(hidden, heads, heads, head_dim, head_dim, CPMANT_ATTENTION)
        ffn = DenseFfn(hidden, self.dim_ff, gated=True, activation="gelu", names=CPMANT_FFN)
        norms = (("self_att.layernorm_before_attention", self.norm()), ("ffn.layernorm_before_ffn", self.norm()))
        return Layer("cpmant.encoder.layers.{i}", attention, ffn, norms)

    def to_spec(self) -> ModelSpec:
        biases = (self.segment_types**2 + self.position_bias_num_buckets, self.num_attention_heads)
        return ModelSpec(
            model_type=self.model_type,
            hidden_size=self.hidden_size,
            vocab_size=self.vocab_size + self.prompt_types * self.prompt_length,
            layers=(self.layer(),) * self.num_hidden_layers,
            final_norm=self.norm(),
            tie_word_embeddings=False,
            names=ModelNames(
                embed_tokens="cpmant.input_embedding",
                final_norm="cpmant.encoder.output_layernorm",
                base_model_prefix="cpmant",
            ),
            lm_head_rows=self.vocab_size,
            extras=(
                Extra("embedding", "cpmant.segment_embedding", Table(self.segment_types, self.hidden_size)),
                Extra("attention", "cpmant.position_bias.relative_attention_bias", LearnedTensor(biases)),
            ),
        )

    def notes(self) -> list[str]:
        return [
            f"CpmAntModel puts prompt_length ({self.prompt_length}) prompt tokens before every input: a prompt of "
            f"n tokens runs as n + {self.prompt_length} positions, which ffncalc's FLOPs and cache at context n "
            "leave out."
        ]
