"""PaddlePaddle's PP-FormulaNet: SAM's ViT image encoder (GOT-OCR2's tower) with a projector of two strided
convolutions and two linears, read by an MBart-style decoder that cross-attends to the image's tokens in every
layer."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, model_validator

from ..schema import Flag, HeadCount, HFConfig, LayerCount, Name, PositionCount, Width
from ..spec import Extra, ImageInput, Layer, Linear, ModelNames, ModelSpec, Norm, PatchEmbedding, Table
from ..values import replace
from .bart import CROSS_ATTENTION, SELF_ATTENTION, bart_attention, decoder_layer
from .blocks import check_padding_row
from .got_ocr2 import GotOcr2VisionConfig
from .multimodal import MultimodalLayers, relocate
from .registry import family, tower
from .towers import Tower, projector_module

# PPFormulaNetLearnedPositionalEmbedding: fairseq's offset, two rows past max_position_embeddings.
POSITION_OFFSET = 2


@tower("pp_formulanet_vision", transformers="PPFormulaNetVisionConfig")
class PPFormulaNetVisionConfig(GotOcr2VisionConfig):
    """configuration_pp_formulanet.py (PPFormulaNetVisionConfig) / PPFormulaNetVisionModel: GOT-OCR2's SAM tower (at
    image_size 512 by default, the only size it reads: its positions are not resized) and, inside the vision model,
    the projector multi_modal_projector: conv1 (3 × 3, stride 2, post_conv_in_channels → post_conv_mid_channels) and
    conv2 (3 × 3, stride 2, → post_conv_out_channels), both without bias, then linear_1 (post_conv_out_channels square)
    and linear_2 (→ decoder_hidden_size), biased."""

    post_conv_in_channels: Width
    post_conv_out_channels: Width
    post_conv_mid_channels: Width
    decoder_hidden_size: Width

    @property
    def image_tokens(self) -> int:
        """The tokens an image becomes: the patch grid halved twice by the projector's strided convolutions (a
        3 × 3 kernel, padding 1: ⌈side / 2⌉ each time)."""
        side = self.image_size // self.patch_size
        for _ in range(2):
            side = (side + 1) // 2
        return side * side

    def projector(self, prefix: str) -> tuple[Extra, ...]:
        """multi_modal_projector under PREFIX (the vision model's own module)."""
        base = prefix + "multi_modal_projector."
        mid, out = self.post_conv_mid_channels, self.post_conv_out_channels
        return (
            projector_module(base + "conv1", PatchEmbedding(self.post_conv_in_channels, (3, 3), mid)),
            projector_module(base + "conv2", PatchEmbedding(mid, (3, 3), out)),
            projector_module(base + "linear_1", Linear(out, out, True)),
            projector_module(base + "linear_2", Linear(out, self.decoder_hidden_size, True)),
        )


@family(
    "pp_formulanet_text",
    transformers="PPFormulaNetTextConfig",
    architecture="PP-FormulaNet",
    model_class="PPFormulaNetTextModel",
)
class PPFormulaNetTextConfig(HFConfig):
    """configuration_pp_formulanet.py (PPFormulaNetTextConfig) / PPFormulaNetTextModel: MBart's decoder alone —
    embed_tokens (scaled by √d_model with scale_embedding: no weight), learned positions of max_position_embeddings
    + 2 rows, layernorm_embedding, decoder_layers pre-LN layers of self-attention, cross-attention (encoder_attn: q,
    k, v and out_proj d_model wide, biased) and a plain MLP (fc1, fc2, biased), a final layer_norm. encoder_layers and
    encoder_attention_heads build nothing (the image encoder is the vision model). Alone (its model_type) it is the
    base model, without a head; the wrapper adds lm_head."""

    informational_fields = frozenset({"max_position_embeddings", "pad_token_id", "scale_embedding"})

    vocab_size: Width
    max_position_embeddings: PositionCount
    # PPFormulaNetTextConfig.attribute_map: num_hidden_layers, num_attention_heads and hidden_size name these
    encoder_layers: LayerCount
    encoder_attention_heads: HeadCount
    decoder_layers: LayerCount
    decoder_ffn_dim: Width
    decoder_attention_heads: HeadCount
    activation_function: Name
    d_model: Width
    scale_embedding: Flag
    pad_token_id: Annotated[int | None, Field(strict=True)]
    tie_word_embeddings: Flag

    @model_validator(mode="after")
    def _check_heads(self) -> PPFormulaNetTextConfig:
        if self.d_model % self.decoder_attention_heads:
            raise ValueError(
                f"d_model ({self.d_model}) is not a multiple of decoder_attention_heads "
                f"({self.decoder_attention_heads}); PPFormulaNetAttention refuses it"
            )
        check_padding_row(self.pad_token_id, self.vocab_size)
        return self

    def unused_fields(self) -> set[str]:
        return {"encoder_layers", "encoder_attention_heads", "tie_word_embeddings"}

    def layer(self) -> Layer:
        """One decoder layer: BART's, with its cross-attention reading d_model-wide image tokens."""
        hidden, heads = self.d_model, self.decoder_attention_heads
        attention, cross = bart_attention(hidden, heads, SELF_ATTENTION), bart_attention(hidden, heads, CROSS_ATTENTION)
        return decoder_layer(
            "model.decoder.layers.{i}", attention, cross, self.decoder_ffn_dim, self.activation_function
        )

    def language_model_spec(self) -> ModelSpec:
        """The decoder under model.decoder. and the wrapper's lm_head (never tied: _tied_weights_keys is {})."""
        root = "model.decoder."
        norm = Norm("layernorm", self.d_model, bias=True)
        rows = self.max_position_embeddings + POSITION_OFFSET
        return ModelSpec(
            model_type=self.model_type,
            hidden_size=self.d_model,
            vocab_size=self.vocab_size,
            layers=(self.layer(),) * self.decoder_layers,
            final_norm=norm,
            tie_word_embeddings=False,
            names=ModelNames(root + "embed_tokens", root + "layer_norm", "lm_head", base_model_prefix="model"),
            extras=(
                Extra("embedding", root + "embed_positions", Table(rows, self.d_model)),
                Extra("norm", root + "layernorm_embedding", norm),
            ),
        )

    def to_spec(self) -> ModelSpec:
        """PPFormulaNetTextModel: the decoder without a head, its modules at the top level."""
        spec = replace(self.language_model_spec(), lm_head=False)
        return relocate(spec, "", "lm_head", (("decoder.", ""),))


@family(
    "pp_formulanet",
    transformers="PPFormulaNetConfig",
    architecture="PP-FormulaNet",
    model_class="PPFormulaNetForConditionalGeneration",
)
class PPFormulaNetConfig(MultimodalLayers):
    """configuration_pp_formulanet.py / modeling_pp_formulanet.py (PPFormulaNetForConditionalGeneration): the vision
    model (model.encoder.: the SAM tower and its projector) and the decoder (model.decoder.), whose every layer
    cross-attends to one image's tokens — (image_size / patch_size) halved twice, 64 by default — whatever the
    context; lm_head is never tied (_tied_weights_keys is {}). The image reaches the text as those keys, not as
    tokens: no image rule (flops with an `image` refuses); a text token's FLOPs count the cross-attention over one image."""

    text_model_type = "pp_formulanet_text"
    vision_model_type = "pp_formulanet_vision"
    vision_prefix = "model.encoder."
    lm_head_name = "lm_head"
    informational_fields = frozenset({"is_encoder_decoder"})

    vision_config: dict[str, Any] | None
    is_encoder_decoder: Flag

    def image_input(self, tower: Tower) -> ImageInput | None:
        return None

    def projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        vision = self.vision
        assert isinstance(vision, PPFormulaNetVisionConfig)
        return vision.projector(self.vision_prefix)

    def notes(self) -> list[str]:
        vision = self.vision
        if not isinstance(vision, PPFormulaNetVisionConfig):  # pragma: no cover - the wrapper always has its tower
            return super().notes()
        return super().notes() + [
            f"every decoder layer cross-attends to one image's {vision.image_tokens:,} tokens (the projector's output), "
            "counted per text token; the image reaches the text as those keys, not as tokens, so flops `image` has "
            "no rule for it"
        ]

    def wrapped_spec(self) -> ModelSpec:
        """The decoder with its head, its cross-attention reading one image's tokens, and the vision model."""
        text, vision = self.text, self.vision
        assert isinstance(text, PPFormulaNetTextConfig) and isinstance(vision, PPFormulaNetVisionConfig)
        spec = replace(text.language_model_spec(), model_type=self.model_type, cross_attention_keys=vision.image_tokens)
        return self.whole(spec)
