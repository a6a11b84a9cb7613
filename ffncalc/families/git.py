"""Microsoft's GIT (git): a CLIP vision tower whose image tokens, projected, lead a BERT-layered causal decoder."""

from __future__ import annotations

from functools import cached_property
from typing import Annotated, Any

from pydantic import Field, model_validator

from ..results import DefaultUsed
from ..schema import (
    Flag,
    HeadCount,
    HFConfig,
    LayerCount,
    Name,
    PositionCount,
    Width,
    WidthOrZero,
    read_block,
)
from ..spec import (
    Attention,
    DenseFfn,
    Extra,
    ImageInput,
    Layer,
    LearnedTensor,
    Linear,
    ModelNames,
    ModelSpec,
    Norm,
)
from ..values import replace
from .bert import BERT_ATTENTION, BERT_MLP
from .blocks import check_padding_row, heads_divide
from .multimodal import replace_default, with_tower
from .registry import family, tower
from .towers import Tower, projector_module
from .vision import ClipVisionConfig


@tower("git_vision_model", transformers="GitVisionConfig")
class GitVisionConfig(ClipVisionConfig):
    """configuration_git.py (GitVisionConfig) / modeling_git.py (GitVisionModel): CLIP's vision transformer (a class
    token, a patch convolution without bias, a position per patch and for the class token, pre_layrnorm, the
    layers, post_layernorm), patches of 16 by default."""


@family("git", transformers="GitConfig", architecture="GIT", model_class="GitForCausalLM")
class GitConfig(HFConfig):
    """configuration_git.py / modeling_git.py (GitForCausalLM): under git., the image encoder (GitVisionModel, at
    image_encoder.vision_model.), visual_projection (a Sequential: Linear vision hidden → hidden with bias, then a
    LayerNorm with bias) and, with num_image_with_embedding, one learned [1, 1, vision hidden] vector per frame
    (img_temporal_embedding) added to the image's features; GitEmbeddings (word and learned position tables, a
    LayerNorm) and GitEncoder's BERT layers (query, key, value, attention.output.dense, intermediate.dense,
    output.dense, all biased, post-LN), run causally over the text after the image's tokens. output (hidden →
    vocab_size, with bias) is tied to the word table with tie_word_embeddings (its bias is kept)."""

    informational_fields = frozenset({"pad_token_id"})

    vocab_size: Width
    hidden_size: Width
    num_hidden_layers: LayerCount
    num_attention_heads: HeadCount
    intermediate_size: Width
    hidden_act: Name
    max_position_embeddings: PositionCount
    pad_token_id: Annotated[int | None, Field(strict=True)]
    tie_word_embeddings: Flag
    num_image_with_embedding: WidthOrZero | None
    vision_config: dict[str, Any] | None

    _check_heads = heads_divide("hidden_size", "num_attention_heads")

    @model_validator(mode="after")
    def _check_padding_row(self) -> GitConfig:
        check_padding_row(self.pad_token_id, self.vocab_size)
        return self

    @cached_property
    def vision(self) -> GitVisionConfig:
        """vision_config read by its adapter (GitVisionConfig's defaults where absent)."""
        return read_block(
            GitVisionConfig, {**(self.vision_config or {}), "model_type": "git_vision_model"}, "vision_config"
        )

    def nested_configs(self) -> dict[str, HFConfig]:
        return {"vision_config": self.vision}

    def defaults_used(self) -> list[DefaultUsed]:
        own = [default for default in super().defaults_used() if default.field != "vision_config"]
        nested = self.vision.defaults_used()
        return own + [replace_default(default, "vision_config." + default.field) for default in nested]

    def decoder_layer(self) -> Layer:
        """A BERT layer: biased q, k, v and o, a plain biased MLP, a LayerNorm after each sublayer."""
        hidden, heads = self.hidden_size, self.num_attention_heads
        head_dim = hidden // heads
        norm = Norm("layernorm", hidden, bias=True)
        attention = Attention(hidden, heads, heads, head_dim, head_dim, BERT_ATTENTION, True, True, True, True)
        ffn = DenseFfn(hidden, self.intermediate_size, False, self.hidden_act, BERT_MLP, bias=True)
        norms = (("attention.output.LayerNorm", norm), ("output.LayerNorm", norm))
        return Layer("git.encoder.layer.{i}", attention, ffn, norms)

    def projector(self, tower: Tower) -> tuple[Extra, ...]:
        """visual_projection's Linear and LayerNorm, and the per-frame vectors added to the tower's output."""
        hidden, prefix = self.hidden_size, "git.visual_projection.visual_projection."
        frames = tuple(
            projector_module(f"git.img_temporal_embedding.{frame}", LearnedTensor((1, 1, tower.hidden_size)))
            for frame in range(self.num_image_with_embedding or 0)
        )
        return (
            *frames,
            projector_module(prefix + "0", Linear(tower.hidden_size, hidden, bias=True)),
            projector_module(prefix + "1", Norm("layernorm", hidden, bias=True)),
        )

    def to_spec(self) -> ModelSpec:
        hidden = self.hidden_size
        spec = ModelSpec(
            model_type=self.model_type,
            hidden_size=hidden,
            vocab_size=self.vocab_size,
            layers=(self.decoder_layer(),) * self.num_hidden_layers,
            final_norm=None,
            tie_word_embeddings=self.tie_word_embeddings,
            names=ModelNames(
                "git.embeddings.word_embeddings",
                "",
                lm_head="output",
                position_embeddings="git.embeddings.position_embeddings",
                base_model_prefix="git",
            ),
            position_embeddings=self.max_position_embeddings,
            lm_head_bias=True,
            extras=(Extra("norm", "git.embeddings.LayerNorm", Norm("layernorm", hidden, bias=True)),),
        )
        vision = self.vision.tower("git.image_encoder.vision_model.")
        return with_tower(spec, vision, self.projector(vision), image=self.image_input(vision))

    def image_input(self, tower: Tower) -> ImageInput | None:
        """Every feature the tower's last layer hands on, its class token too: GitModel projects them all and the
        text reads them as the image's tokens."""
        image = tower.image
        if image is None or image.resize != "fixed":
            return image
        return replace(image, pooled_tokens=(image.size // image.patch_size) ** 2 + image.extra_tokens)

    def notes(self) -> list[str]:
        notes = []
        if self.architectures and self.architectures[0] != self.default_model_class:
            notes.append(f"{self.architectures[0]} is not a GIT class ffncalc knows; counted as GitForCausalLM.")
        return notes

    def model_class(self) -> str:
        return self.default_model_class
