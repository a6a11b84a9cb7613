"""Pix2Struct (Google; transformers 5.24, configuration_pix2struct.py / modeling_pix2struct.py): an encoder-decoder
whose encoder is a ViT over flattened image patches and whose decoder is T5 v1.1's (gated-GELU, RMS norms, relative
position buckets in its first block).

The encoder reads a fixed number of patches whatever the image: Pix2StructImageProcessor rescales each image to at
most max_patches patches of 16 × 16 and pads to max_patches (2048 by default; a checkpoint's
preprocessor_config.json, not config.json, may set another), so ffncalc counts the encoder over 2048 positions and a
generated token's cross-attention over them, as Whisper's over its window."""

from __future__ import annotations

from typing import Any

from pydantic import AliasChoices, Field, model_validator

from ..schema import Flag, HeadCount, HFConfig, LayerCount, Name, Nested, Width
from ..spec import Attention, DenseFfn, Extra, Layer, Linear, ModelNames, ModelSpec, Norm, Stack, Table, names
from .registry import family

# Pix2StructImageProcessor.max_patches (image_processing_pix2struct.py, transformers 5.24): the encoder's positions
MAX_PATCHES = 2048

TEXT_SELF_ATTENTION = names(
    q="self_attention.attention.query",
    k="self_attention.attention.key",
    v="self_attention.attention.value",
    o="self_attention.attention.output",
    relative_position_bias="self_attention.attention.relative_attention_bias",
)
TEXT_CROSS_ATTENTION = names(
    q="encoder_decoder_attention.attention.query",
    k="encoder_decoder_attention.attention.key",
    v="encoder_decoder_attention.attention.value",
    o="encoder_decoder_attention.attention.output",
)
TEXT_MLP = names(gate="mlp.DenseReluDense.wi_0", up="mlp.DenseReluDense.wi_1", down="mlp.DenseReluDense.wo")
VISION_ATTENTION = names(q="attention.query", k="attention.key", v="attention.value", o="attention.output")
VISION_MLP = names(gate="mlp.wi_0", up="mlp.wi_1", down="mlp.wo")


def patch_encoder_layer(
    name: str, width: int, heads: int, head_dim: int, ffn_width: int, activation: str, stack: Stack
) -> Layer:
    """A layer of Pix2Struct's patch encoder (Kosmos-2.5's tower too): RMS norms before the attention (query, key,
    value, output heads · head_dim wide, no biases) and before the gated MLP (wi_0, wi_1, wo, no biases)."""
    norm = Norm("rmsnorm", width)
    return Layer(
        name,
        Attention(width, heads, heads, head_dim, head_dim, VISION_ATTENTION),
        DenseFfn(width, ffn_width, True, activation, VISION_MLP),
        (("pre_attention_layer_norm", norm), ("pre_mlp_layer_norm", norm)),
        stack=stack,
    )


def patch_embedding_modules(
    prefix: str, patch_dim: int, width: int, rows: int
) -> tuple[tuple[str, Linear | Table | Norm], ...]:
    """The patch encoder's modules outside its layers, under PREFIX: embeddings.patch_projection (a flattened patch
    of PATCH_DIM values → WIDTH, biased), row_embedder and column_embedder (ROWS each, added), the final RMS
    layernorm."""
    return (
        (prefix + "embeddings.patch_projection", Linear(patch_dim, width, True)),
        (prefix + "embeddings.row_embedder", Table(rows, width)),
        (prefix + "embeddings.column_embedder", Table(rows, width)),
        (prefix + "layernorm", Norm("rmsnorm", width)),
    )


class Pix2StructTextFields(Nested):
    """configuration_pix2struct.py (Pix2StructTextConfig): the decoder's sizes, under their attribute_map names too."""

    vocab_size: Width = 50244
    hidden_size: Width = 768
    d_kv: Width = 64
    d_ff: Width = 2048
    num_layers: LayerCount = Field(
        12, validation_alias=AliasChoices("num_layers", "num_hidden_layers", "decoder_layers", "encoder_layers")
    )
    num_heads: HeadCount = Field(
        12,
        validation_alias=AliasChoices(
            "num_heads", "num_attention_heads", "decoder_attention_heads", "encoder_attention_heads"
        ),
    )
    relative_attention_num_buckets: Width = 32
    dense_act_fn: Name = "gelu_new"

    @model_validator(mode="after")
    def _check_heads(self) -> Pix2StructTextFields:
        # Pix2StructTextAttention projects hidden_size → hidden_size and views the result as num_heads heads of d_kv
        if self.num_heads * self.d_kv != self.hidden_size:
            raise ValueError(
                f"num_heads × d_kv ({self.num_heads} × {self.d_kv}) must equal hidden_size ({self.hidden_size}): "
                "Pix2StructTextAttention views its hidden_size-wide projections as num_heads heads of d_kv "
                "(transformers builds such a model but cannot run it)"
            )
        return self


class Pix2StructVisionFields(Nested):
    """configuration_pix2struct.py (Pix2StructVisionConfig): the encoder's sizes."""

    hidden_size: Width = 768
    patch_embed_hidden_size: Width = 768
    d_ff: Width = 2048
    d_kv: Width = 64
    num_hidden_layers: LayerCount = 12
    num_attention_heads: HeadCount = 12
    dense_act_fn: Name = "gelu_new"
    seq_len: Width = 4096


@family(
    "pix2struct",
    transformers="Pix2StructConfig",
    architecture="Pix2Struct",
    model_class="Pix2StructForConditionalGeneration",
    own_defaults=dict.fromkeys(
        ("text_config", "vision_config"),
        "the record holds None; __post_init__ builds the block from its own configuration class's defaults",
    ),
)
class Pix2StructConfig(HFConfig):
    """configuration_pix2struct.py (Pix2StructConfig) / Pix2StructForConditionalGeneration. The encoder (encoder.):
    embeddings (patch_projection, patch_embed_hidden_size → hidden_size, biased; row_embedder and column_embedder,
    seq_len rows each, added), layers (pre_attention_layer_norm and pre_mlp_layer_norm, RMS; query, key, value,
    output num_attention_heads · d_kv wide, no biases; a gated MLP wi_0, wi_1, wo), a final layernorm. The decoder
    (decoder.): T5 v1.1's blocks (self_attention, encoder_decoder_attention reading the encoder's output, mlp, each
    after an RMS layer_norm; query, key, value, output hidden_size square), relative position buckets × heads in the
    first block, final_layer_norm, and its own lm_head, tied to embed_tokens by the top-level tie_word_embeddings
    (default false; Pix2StructConfig copies it into text_config)."""

    informational_fields = frozenset({"is_vqa"})

    # model_validate: with aliases, the pydantic mypy plugin reads the class as requiring its fields
    text_config: Pix2StructTextFields = Field(default_factory=lambda: Pix2StructTextFields.model_validate({}))
    vision_config: Pix2StructVisionFields = Field(default_factory=Pix2StructVisionFields)
    tie_word_embeddings: Flag
    is_vqa: Flag

    @model_validator(mode="before")
    @classmethod
    def _default_blocks(cls, raw: Any) -> Any:
        """A null text_config or vision_config is the defaults (Pix2StructConfig's sub_configs_defaults)."""
        if not isinstance(raw, dict):
            return raw
        return {
            key: value for key, value in raw.items() if value is not None or key not in ("text_config", "vision_config")
        }

    def model_class(self) -> str:
        return self.default_model_class

    def warnings(self) -> list[str]:
        text, vision = self.text_config.hidden_size, self.vision_config.hidden_size
        if text == vision:
            return []
        return [
            f"vision_config.hidden_size ({vision}) differs from text_config.hidden_size ({text}): the decoder's "
            "cross-attention reads the encoder's output through hidden_size-wide key and value projections; "
            "transformers builds such a model, but it cannot run"
        ]

    def decoder_layer(self, buckets: int) -> Layer:
        text = self.text_config
        width, heads, d_kv = text.hidden_size, text.num_heads, text.d_kv
        norm = Norm("rmsnorm", width)
        return Layer(
            "decoder.layer.{i}",
            Attention(width, heads, heads, d_kv, d_kv, TEXT_SELF_ATTENTION, relative_position_buckets=buckets),
            DenseFfn(width, text.d_ff, True, text.dense_act_fn, TEXT_MLP),
            (
                ("self_attention.layer_norm", norm),
                ("encoder_decoder_attention.layer_norm", norm),
                ("mlp.layer_norm", norm),
            ),
            cross_attention=Attention(width, heads, heads, d_kv, d_kv, TEXT_CROSS_ATTENTION),
        )

    def to_spec(self) -> ModelSpec:
        text, vision = self.text_config, self.vision_config
        first = self.decoder_layer(text.relative_attention_num_buckets)
        decoder = (first,) + (self.decoder_layer(0),) * (text.num_layers - 1)
        width = vision.hidden_size
        encoder = patch_encoder_layer(
            "encoder.encoder.layer.{i}", width, vision.num_attention_heads, vision.d_kv, vision.d_ff,
            vision.dense_act_fn, "encoder",
        )  # fmt: skip
        # the encoder's modules outside its layers run once per patch, as its layers do
        extras = tuple(
            Extra("norm", name, module, "once_per_input")
            if isinstance(module, Norm)
            else Extra("embedding", name, module, "once_per_input")
            for name, module in patch_embedding_modules(
                "encoder.", vision.patch_embed_hidden_size, width, vision.seq_len
            )
        )
        return ModelSpec(
            model_type=self.model_type,
            hidden_size=text.hidden_size,
            vocab_size=text.vocab_size,
            layers=(encoder,) * vision.num_hidden_layers + decoder,
            final_norm=Norm("rmsnorm", text.hidden_size),
            tie_word_embeddings=self.tie_word_embeddings,
            names=ModelNames(
                "decoder.embed_tokens", "decoder.final_layer_norm", lm_head="decoder.lm_head", base_model_prefix=""
            ),
            extras=extras,
            cross_attention_keys=MAX_PATCHES,
        )

    def notes(self) -> list[str]:
        return [
            f"pix2struct's encoder reads {MAX_PATCHES:,} flattened patches whatever the image (Pix2StructImageProcessor "
            "pads every image to max_patches, 2048 by default; a checkpoint's preprocessor_config.json may set "
            "another): the prefill runs the encoder over them, and a generated token's cross-attention reads them all"
        ]
