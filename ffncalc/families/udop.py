"""UDOP (Unifying Vision, Text, and Layout for Universal Document Processing): T5's stacks over a page's text tokens,
their boxes and the page image."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from ..schema import Flag, HeadCount, Nested, Width, derives
from ..spec import CheckpointExtra, Extra, ModelSpec, PatchEmbedding, Table
from ..values import replace
from .registry import family
from .t5 import T5Config

# RelativePositionBiasBase's default relative_attention_num_buckets: a relative_bias_args entry that names none has
# this many rows, whatever the config's relative_attention_num_buckets
BIAS_BUCKETS = 32


class RelativeBias(Nested):
    """One entry of relative_bias_args (create_relative_bias): a type, and the keywords its table's shape reads."""

    type: Literal["1d", "horizontal", "vertical"]
    relative_attention_num_buckets: Width = BIAS_BUCKETS
    prefix_bucket: Flag = False  # two more rows, for the prefix's pairs (unless expand)
    expand: Flag = False
    num_heads: HeadCount | None = None  # must be the model's num_heads (transformers refuses otherwise)

    @property
    def rows(self) -> int:
        """The table's rows: its buckets, and two for a prefix (RelativePositionBiasBase.__init__'s extra_head)."""
        return self.relative_attention_num_buckets + (2 if self.prefix_bucket and not self.expand else 0)


# UdopConfig.__post_init__'s relative_bias_args when a config gives none
DEFAULT_BIAS_ARGS = ({"type": "1d"}, {"type": "horizontal"}, {"type": "vertical"})


@family("udop", transformers="UdopConfig", architecture="UDOP", model_class="UdopForConditionalGeneration")
class UdopConfig(T5Config):
    """configuration_udop.py / modeling_udop.py (transformers 5.24): T5's encoder and decoder stacks (relative
    position buckets in block 0 of each, RMS norms, no biases, feed_forward_proj as T5's), the head tied to shared.

    The encoder reads the text tokens followed by the page image's (image_size // patch_size)² patches:
    patch_embed.proj (a biased convolution, patch_size square, stride its kernel) embeds the page, each token adds
    the patch under its box's centre, and combine_image_text_embeddings drops those patches from the image's and pads
    the rest back with zeros to all of them, so the encoder runs over n + (image_size // patch_size)² positions and
    every cross-attention reads them all. Each position adds the 2-D cell embedding of its box
    (encoder.cell_2d_embedding: x and y tables of max_2d_position_embeddings rows, looked up). The encoder's
    attention bias is the sum of relative_bias_args' tables (1d, horizontal, vertical, each buckets × heads, looked
    up); the first is tied to block 0's relative_attention_bias. The decoder stack is built by the same class: it
    also holds an embed_patches convolution and relative_bias tables of its own, which no forward runs.
    """

    max_2d_position_embeddings: Width
    image_size: Width
    patch_size: Width
    num_channels: Width
    relative_bias_args: Annotated[list[RelativeBias], Field(max_length=64)] | None

    @model_validator(mode="after")
    def _check_bias_heads(self) -> UdopConfig:
        for index, bias in enumerate(self.biases):
            if bias.num_heads is not None and bias.num_heads != self.num_heads:
                # create_relative_bias refuses a table with other heads than the model's
                raise ValueError(
                    f"relative_bias_args[{index}].num_heads ({bias.num_heads}) must be num_heads ({self.num_heads})"
                )
        return self

    @property
    @derives("relative_bias_args", "a 1d, a horizontal and a vertical table (UdopConfig.__post_init__)")
    def default_bias_args(self) -> list[dict[str, str]]:
        """What transformers gives relative_bias_args when a config leaves it None, as a config writes it."""
        return [dict(entry) for entry in DEFAULT_BIAS_ARGS]

    @property
    def biases(self) -> tuple[RelativeBias, ...]:
        """relative_bias_args' tables, in order: the config's, else the default three."""
        if self.relative_bias_args is None:
            return tuple(RelativeBias.model_validate(entry) for entry in self.default_bias_args)
        return tuple(self.relative_bias_args)

    @property
    def patches(self) -> int:
        """The page image's patches, which the encoder reads after the text tokens: (image_size // patch_size)²."""
        return (self.image_size // self.patch_size) ** 2

    def stored_extras(self) -> tuple[CheckpointExtra, ...]:
        return ()  # T5's are what T5's published checkpoints store; what UDOP's store beside these is not recorded

    def to_spec(self) -> ModelSpec:
        """T5's stacks; the page's patch convolution, run once for each patch, the cell tables and the relative bias
        tables, looked up; the decoder's own convolution and tables, never run."""
        spec = super().to_spec()
        patch = PatchEmbedding(self.num_channels, (self.patch_size, self.patch_size), self.d_model, bias=True)
        cells = Table(self.max_2d_position_embeddings, self.d_model)
        extras = [
            Extra("other", "patch_embed.proj", patch, "per_encoder_patch"),
            Extra("embedding", "encoder.cell_2d_embedding.x_position_embeddings", cells, "not_generating"),
            Extra("embedding", "encoder.cell_2d_embedding.y_position_embeddings", cells, "not_generating"),
            Extra("other", "decoder.embed_patches.proj", patch, "not_generating"),
        ]
        # the first table of each stack's relative_bias is tied to the encoder's block 0 relative_attention_bias
        for stack in ("encoder", "decoder"):
            for index, bias in enumerate(self.biases[1:], start=1):
                name = f"{stack}.relative_bias.biases.{index}.relative_attention_bias"
                extras.append(Extra("other", name, Table(bias.rows, self.num_heads), "not_generating"))
        return replace(spec, extras=spec.extras + tuple(extras), encoder_added_positions=self.patches)

    def notes(self) -> list[str]:
        return [
            f"Encoder-decoder over a page: the encoder reads the n input tokens (each with its box) and the page "
            f"image's {self.patches:,} patches after them ({self.image_size} px, patches of {self.patch_size}), so it "
            f"runs over n + {self.patches:,} positions, which every cross-attention reads; per generated token only "
            "the decoder runs."
        ]
