"""ffncalc's own format, for models published without a config.json (GPT-3, the original
Transformer) and for designs of your own. A preset is a JSON file with ``"model_type": "ffncalc"``:

    {
      "model_type": "ffncalc",
      "title": "GPT-3 175B",                  # shown in tables
      "layout": "decoder",                    # or "encoder-decoder"
      "vocab_size": 50257, "hidden_size": 12288, "num_layers": 96, "num_heads": 96,
      "head_dim": 128,                        # default hidden_size / num_heads
      "ffn_size": 49152, "activation": "gelu", "gated": false,
      "attention_bias": true, "ffn_bias": true,
      "norm": "layernorm", "norm_bias": true, "final_norm": true,
      "learned_positions": 2048,              # rows of a learned position table; 0 for sinusoids/rotary
      "tie_word_embeddings": true,
      "num_decoder_layers": 6,                # encoder-decoder only (num_layers is the encoder's)
      "published_params": 175000000000,       # the paper's figure, shown beside ffncalc's
      "published_source": "Brown et al. 2020, Table 2.1",
      "notes": ["…"]
    }
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from ..schema import Flag, HeadCount, HFConfig, LayerCount, Width
from ..spec import Attention, DenseFfn, Extra, Layer, ModelNames, ModelSpec, Norm, Stack, names
from .registry import family

PRESET_ATTENTION = names(q="attention.q", k="attention.k", v="attention.v", o="attention.o")
PRESET_CROSS = names(q="cross_attention.q", k="cross_attention.k", v="cross_attention.v", o="cross_attention.o")
PRESET_FFN = names(gate="ffn.gate", up="ffn.up", down="ffn.down")


@family("ffncalc")
class PresetConfig(HFConfig):
    """A model described directly in ffncalc's terms: no family defaults to apply.

    Presets have no published checkpoint; their tensor names are ffncalc's own (``layers.{i}.attention.q``).
    """

    architecture = "preset"
    config_class = "ffncalc preset"
    title: str = Field(max_length=200)
    layout: Literal["decoder", "encoder-decoder"] = "decoder"
    vocab_size: Width
    hidden_size: Width
    num_layers: LayerCount
    num_decoder_layers: LayerCount | None = None
    num_heads: HeadCount
    head_dim: Width | None = None
    ffn_size: Width
    activation: str = Field("gelu", max_length=40)
    gated: Flag = False
    attention_bias: Flag = True
    ffn_bias: Flag = True
    norm: Literal["layernorm", "rmsnorm"] = "layernorm"
    norm_bias: Flag = True
    final_norm: Flag = True
    learned_positions: int = Field(0, ge=0, le=1 << 26)
    tie_word_embeddings: Flag = True
    published_params: int | None = Field(None, ge=1)
    published_source: str = Field("", max_length=300)
    preset_notes: list[str] = Field(default_factory=list, max_length=20, alias="notes")

    @model_validator(mode="after")
    def _check(self) -> PresetConfig:
        if self.head_dim is None and self.hidden_size % self.num_heads:
            raise ValueError(
                f"hidden_size ({self.hidden_size}) is not a multiple of num_heads ({self.num_heads}); give head_dim"
            )
        return self

    def family_name(self) -> str:
        return self.title  # a preset is named by its title, not a family

    def model_class(self) -> str:
        return ""

    def defaults_used(self):
        return []  # a preset is complete by construction: its defaults are ffncalc's, documented above

    def notes(self) -> list[str]:
        return list(self.preset_notes)

    def attention(self, attention_names=PRESET_ATTENTION) -> Attention:
        width = self.head_dim or self.hidden_size // self.num_heads
        bias = self.attention_bias
        heads = self.num_heads
        return Attention(self.hidden_size, heads, heads, width, width, attention_names, bias, bias, bias, bias)

    def norm_module(self) -> Norm:
        return Norm(self.norm, self.hidden_size, bias=self.norm_bias and self.norm == "layernorm")

    def layer(self, stack: Stack) -> Layer:
        norm = self.norm_module()
        ffn = DenseFfn(self.hidden_size, self.ffn_size, self.gated, self.activation, PRESET_FFN, bias=self.ffn_bias)
        name = f"{stack}.layers.{{i}}"
        if stack == "decoder" and self.layout == "encoder-decoder":
            norms = (("self_attention_norm", norm), ("cross_attention_norm", norm), ("ffn_norm", norm))
            return Layer(
                name, self.attention(), ffn, norms, cross_attention=self.attention(PRESET_CROSS), stack="decoder"
            )
        return Layer(name, self.attention(), ffn, (("attention_norm", norm), ("ffn_norm", norm)), stack=stack)

    def to_spec(self) -> ModelSpec:
        norm = self.norm_module()
        if self.layout == "encoder-decoder":
            decoders = self.num_decoder_layers or self.num_layers
            layers = (self.layer("encoder"),) * self.num_layers + (self.layer("decoder"),) * decoders
            extras = (Extra("norm", "encoder.final_norm", norm, "not_generating"),) if self.final_norm else ()
        else:
            layers = (self.layer("decoder"),) * self.num_layers
            extras = ()
        return ModelSpec(
            model_type=self.model_type,
            hidden_size=self.hidden_size,
            vocab_size=self.vocab_size,
            layers=layers,
            final_norm=norm if self.final_norm else None,
            tie_word_embeddings=self.tie_word_embeddings,
            names=ModelNames(
                "embed_tokens", "final_norm", position_embeddings="position_embeddings", base_model_prefix=""
            ),
            position_embeddings=self.learned_positions,
            extras=extras,
        )
