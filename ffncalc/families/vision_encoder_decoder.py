"""VisionEncoderDecoderModel: an image encoder (ViT by default) and a text decoder with cross-attention, each
configured by a block of its own (``encoder``, ``decoder``), composed as transformers composes them. The decoder is
read as EncoderDecoderModel's is; the encoder is laid out here."""

from __future__ import annotations

from functools import cached_property

from pydantic import model_validator

from ..errors import InvalidConfigError
from ..schema import Flag, HeadCount, HFConfig, LayerCount, Name, Width, read_block
from ..spec import (
    Attention,
    DenseFfn,
    Extra,
    Layer,
    LearnedTensor,
    Linear,
    ModelSpec,
    Norm,
    PatchEmbedding,
    names,
)
from ..values import replace
from .encoder_decoder import EncoderDecoderConfig
from .multimodal import nest
from .registry import family, tower
from .towers import TowerConfig

# ViTLayer as transformers 5.24 saves it (its conversion mapping reverts the q_proj … fc2 the modules are named now to
# the names every checkpoint holds)
VIT_ATTENTION = names(
    q="attention.attention.query",
    k="attention.attention.key",
    v="attention.attention.value",
    o="attention.output.dense",
)
VIT_MLP = names(up="intermediate.dense", down="output.dense")


@tower("vit", transformers="ViTConfig")
class ViTEncoderConfig(TowerConfig):
    """configuration_vit.py / modeling_vit.py (ViTModel, as AutoModel builds it: with its pooler). Embeddings: a class
    token (cls_token), a biased patch convolution (patch_embeddings.projection), a learned position per patch and for
    the class token (position_embeddings, stored as one tensor); num_hidden_layers pre-LN layers (layernorm_before,
    q, k and v biased with qkv_bias, a biased output dense; layernorm_after, a plain biased MLP), a final layernorm
    and the pooler (dense hidden → pooler_output_size, default hidden_size, on the class token). encoder_stride
    shapes only ViTForMaskedImageModeling's decoder."""

    hidden_size: Width
    num_hidden_layers: LayerCount
    num_attention_heads: HeadCount
    intermediate_size: Width
    hidden_act: Name
    image_size: Width
    patch_size: Width
    num_channels: Width
    qkv_bias: Flag
    pooler_output_size: Width | None

    def uncounted(self) -> str | None:
        return "ffncalc lays out ViT as a vision encoder-decoder's encoder, not as a tower yet"

    @property
    def positions(self) -> int:
        """What the layers run over, and the decoder's cross-attention reads: the patches and the class token."""
        return (self.image_size // self.patch_size) ** 2 + 1

    @model_validator(mode="after")
    def _check_heads(self) -> ViTEncoderConfig:
        if self.hidden_size % self.num_attention_heads:
            raise ValueError(
                f"hidden_size ({self.hidden_size}) is not a multiple of num_attention_heads "
                f"({self.num_attention_heads}); ViTSelfAttention refuses it"
            )
        return self

    def encoder(self, prefix: str) -> tuple[tuple[Layer, ...], tuple[Extra, ...]]:
        """The layers (the "encoder" stack, run once over the image's positions) and the modules outside them."""
        hidden, heads, bias = self.hidden_size, self.num_attention_heads, self.qkv_bias
        head_dim = hidden // heads
        attention = Attention(hidden, heads, heads, head_dim, head_dim, VIT_ATTENTION, bias, bias, bias, True)
        ffn = DenseFfn(hidden, self.intermediate_size, False, self.hidden_act, VIT_MLP, bias=True)
        norm = Norm("layernorm", hidden, bias=True)
        layer = Layer(
            prefix + "encoder.layer.{i}",
            attention,
            ffn,
            (("layernorm_before", norm), ("layernorm_after", norm)),
            stack="encoder",
        )
        patch = PatchEmbedding(self.num_channels, (self.patch_size,) * 2, hidden, bias=True)
        pooled = self.pooler_output_size or hidden
        extras = (
            Extra("embedding", prefix + "embeddings.cls_token", LearnedTensor((1, 1, hidden)), "not_generating"),
            Extra(
                "embedding",
                prefix + "embeddings.position_embeddings",
                LearnedTensor((1, self.positions, hidden)),
                "not_generating",
            ),
            Extra("embedding", prefix + "embeddings.patch_embeddings.projection", patch, "per_encoder_patch"),
            Extra("norm", prefix + "layernorm", norm, "not_generating"),
            # the pooler reads the class token once: no FLOPs per position
            Extra("other", prefix + "pooler.dense", Linear(hidden, pooled, bias=True), "not_generating"),
        )
        return (layer,) * self.num_hidden_layers, extras


@family(
    "vision-encoder-decoder",
    transformers="VisionEncoderDecoderConfig",
    architecture="Vision encoder-decoder",
    model_class="VisionEncoderDecoderModel",
)
class VisionEncoderDecoderConfig(EncoderDecoderConfig):
    """configuration_vision_encoder_decoder.py / modeling_vision_encoder_decoder.py (transformers 5.24).

    The encoder is what AutoModel builds from the ``encoder`` block (ViTModel by default, its pooler included, under
    encoder.*), the decoder what AutoModelForCausalLM builds from the ``decoder`` block (under decoder.*: BERT's
    LMHeadModel with is_decoder and add_cross_attention by default), read as EncoderDecoderModel's decoder is. The
    decoder's every cross-attention reads the image's (image_size / patch_size)² + 1 positions whatever the context;
    enc_to_dec_proj (biased) maps them to the decoder's width where the two differ and the decoder names no
    cross_attention_hidden_size. ffncalc lays out ViT encoders (DeiT, Swin, BEiT … are refused) and the decoders of
    BERT's lineage."""

    @cached_property
    def image_encoder(self) -> ViTEncoderConfig:
        from . import adapter_for

        raw = {"model_type": "vit"} if self.encoder is None else dict(self.encoder)
        model_type = raw.get("model_type")
        adapter = adapter_for(model_type, "towers") if isinstance(model_type, str) else None
        if adapter is None or not issubclass(adapter, ViTEncoderConfig):
            raise InvalidConfigError(
                f"encoder.model_type: {model_type!r} is not one ffncalc composes; it lays out ViT image encoders "
                "(vit) only"
            )
        return read_block(adapter, raw, "encoder")

    def nested_configs(self) -> dict[str, HFConfig]:
        return {"encoder": self.image_encoder, "decoder": self.decoder_block}

    def notes(self) -> list[str]:
        positions = self.image_encoder.positions
        return [
            f"Vision encoder-decoder: the encoder runs once over an image's {positions:,} positions (its patches and "
            "the class token); per generated token only the decoder runs, its cross-attention reading them all "
            "whatever the context.",
            *(f"decoder: {note}" for note in self.decoder_block.notes()),
        ]

    def to_spec(self) -> ModelSpec:
        vision = self.image_encoder
        layers, extras = vision.encoder("encoder.")
        decoder = nest(self.decoder_block.to_spec(), "decoder.")
        named = (self.decoder or {}).get("cross_attention_hidden_size")
        if named is not None and named != vision.hidden_size:
            raise InvalidConfigError(
                f"decoder.cross_attention_hidden_size ({named}) must be the encoder's hidden_size "
                f"({vision.hidden_size}), as VisionEncoderDecoderModel requires"
            )
        return replace(
            decoder,
            model_type=self.model_type,
            layers=layers + tuple(replace(layer, stack="decoder") for layer in decoder.layers),
            extras=extras + tuple(self.projection(vision.hidden_size, decoder.hidden_size)) + decoder.extras,
            cross_attention_keys=vision.positions,
            encoder_class_tokens=1,
        )
