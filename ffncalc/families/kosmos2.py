"""Kosmos-2 (Microsoft; transformers 5.24, modeling_kosmos2.py): a CLIP tower, an image-to-text projection that
pools its output into latent_query_num tokens by cross-attention, and a fairseq-style (XGLM-like) decoder with
sub-LayerNorms (Magneto's: one inside the attention before out_proj, one inside the FFN before fc2).

Kosmos-2.5 (modeling_kosmos2_5.py): the same projection and decoder (without the attention's sub-LayerNorm, with a
segment table), over Pix2Struct's patch encoder as its tower."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from pydantic import Field, model_validator

from ..schema import Flag, HeadCount, HFConfig, LayerCount, Name, PositionCount, Width
from ..spec import (
    DenseFfn,
    Extra,
    ImageInput,
    Layer,
    LearnedTensor,
    Linear,
    ModelNames,
    ModelSpec,
    Norm,
    Norms,
    Table,
    names,
)
from ..values import replace
from .blocks import heads_divide
from .fairseq_lm import CROSS_ATTENTION, SELF_ATTENTION, biased_attention, padding_row_checked
from .multimodal import MultimodalConfig
from .pix2struct import patch_embedding_modules, patch_encoder_layer
from .registry import family, tower
from .towers import Tower, TowerConfig, projector_module, tower_module
from .vision import ClipVisionConfig

KOSMOS2_FFN = names(up="ffn.fc1", down="ffn.fc2")


class Kosmos2TextLayers(HFConfig):
    """The text model Kosmos-2 and Kosmos-2.5 share (configuration_kosmos2.py, configuration_kosmos2_5.py): XGLM's
    layer (self_attn_layer_norm, biased q, k, v, out_proj; final_layer_norm, biased fc1 and fc2) with a LayerNorm
    over the FFN's inner width before fc2 (ffn.ffn_layernorm), sinusoidal positions (a buffer, not saved), a final
    layer_norm, the head tied to the token table unless tie_word_embeddings is false."""

    informational_fields = frozenset({"max_position_embeddings", "pad_token_id"})

    vocab_size: Width
    max_position_embeddings: PositionCount
    embed_dim: Width
    layers: LayerCount
    ffn_dim: Width
    attention_heads: HeadCount
    activation_function: Name
    tie_word_embeddings: Flag
    pad_token_id: Annotated[int | None, Field(strict=True)]
    _check_heads = heads_divide("embed_dim", "attention_heads")
    _check_padding = model_validator(mode="after")(padding_row_checked)

    #: Where the layers and the modules outside them are kept (the text model's model.).
    prefix: ClassVar[str] = "model."
    #: Whether the attention normalises its output before out_proj (Kosmos-2's self_attn.inner_attn_ln, Magneto's).
    inner_attention_norm: ClassVar[bool] = True

    @property
    def hidden_size(self) -> int:
        """embed_dim, as the wrapper reads a language model's width."""
        return self.embed_dim

    def text_layer(self) -> Layer:
        """A layer: the attention (and its inner norm where the family has one), the FFN and its inner norm."""
        width = self.embed_dim
        norm = Norm("layernorm", width, bias=True)
        ffn = DenseFfn(width, self.ffn_dim, False, self.activation_function, KOSMOS2_FFN, bias=True)
        norms: Norms = (
            ("self_attn_layer_norm", norm),
            *((("self_attn.inner_attn_ln", norm),) if self.inner_attention_norm else ()),
            ("final_layer_norm", norm),
            ("ffn.ffn_layernorm", Norm("layernorm", self.ffn_dim, bias=True)),
        )
        attention = biased_attention(width, self.attention_heads, SELF_ATTENTION)
        return Layer(self.prefix + "layers.{i}", attention, ffn, norms)

    def text_extras(self) -> tuple[Extra, ...]:
        """Modules outside the layers besides the token table and the final norm (none here)."""
        return ()

    def to_spec(self) -> ModelSpec:
        return ModelSpec(
            model_type=self.model_type,
            hidden_size=self.embed_dim,
            vocab_size=self.vocab_size,
            layers=(self.text_layer(),) * self.layers,
            final_norm=Norm("layernorm", self.embed_dim, bias=True),
            tie_word_embeddings=self.tie_word_embeddings,
            names=ModelNames(self.prefix + "embed_tokens", self.prefix + "layer_norm"),
            extras=self.text_extras(),
        )


@family(
    "kosmos_2_text_model",
    transformers="Kosmos2TextConfig",
    architecture="Kosmos-2",
    model_class="Kosmos2TextForCausalLM",
)
class Kosmos2TextConfig(Kosmos2TextLayers):
    """configuration_kosmos2.py (Kosmos2TextConfig) / Kosmos2TextForCausalLM: the shared text model, with a LayerNorm
    over the attention's output before out_proj (self_attn.inner_attn_ln). With add_cross_attention each layer also
    has encoder_attn (biased, no inner norm) and encoder_attn_layer_norm."""

    add_cross_attention: Flag

    def notes(self) -> list[str]:
        if not self.add_cross_attention:
            return []
        return [
            "add_cross_attention: each layer also attends to an encoder's states (encoder_attn), which Kosmos-2 "
            "never runs; counted as if the encoder's states were as long as the context."
        ]

    def text_layer(self) -> Layer:
        layer = super().text_layer()
        if not self.add_cross_attention:
            return layer
        cross = biased_attention(self.embed_dim, self.attention_heads, CROSS_ATTENTION)
        norm = Norm("layernorm", self.embed_dim, bias=True)
        return replace(layer, cross_attention=cross, norms=layer.norms + (("encoder_attn_layer_norm", norm),))


@tower("kosmos_2_vision_model", transformers="Kosmos2VisionConfig")
class Kosmos2VisionConfig(ClipVisionConfig):
    """configuration_kosmos2.py (Kosmos2VisionConfig) / Kosmos2VisionModel: CLIP's tower (kept one level down,
    model.), with its own defaults."""

    def tower(self, prefix: str) -> Tower:
        return super().tower(prefix + "model.")


@family(
    "kosmos-2", transformers="Kosmos2Config", architecture="Kosmos-2", model_class="Kosmos2ForConditionalGeneration"
)
class Kosmos2Config(MultimodalConfig):
    """configuration_kosmos2.py / Kosmos2ForConditionalGeneration: the tower under vision_model., the language model
    under text_model. (text_model.model. and text_model.lm_head), and image_to_text_projection: dense (vision
    hidden → embed_dim, biased), latent_query [latent_query_num, embed_dim] and x_attn (q, k, v, out_proj, embed_dim
    square, biased), whose latent queries attend to the projected patches and to themselves. The head is tied to
    the token table when tie_word_embeddings (default true) or text_config's (default true) says so: each model ties
    its own.

    An image's FLOPs (`image`) count the tower, dense and x_attn's k and v over the patches, and q and out_proj over
    the latent_query_num tokens; they leave out dense over the class token, k and v over the class token and the
    latent queries, and x_attn's scores (a lower bound: the projection's keys are the patches, the class token and
    the queries, which ffncalc's image rule cannot state)."""

    text_model_type = "kosmos_2_text_model"
    text_defaults: ClassVar[dict[str, Any]] = {"model_type": "kosmos_2_text_model"}
    vision_model_type = "kosmos_2_vision_model"
    language_model_prefix = "text_model.model."
    lm_head_name = "text_model.lm_head"
    vision_prefix = "vision_model."

    latent_query_num: Width

    def tied(self) -> bool:
        """Kosmos2ForConditionalGeneration ties by its own flag, and the Kosmos2TextForCausalLM inside it by its."""
        return self.tie_word_embeddings or getattr(self.text, "tie_word_embeddings", False) is True

    def image_input(self, tower: Tower) -> ImageInput | None:
        """The tower's rule; the projection hands latent_query_num tokens to the language model."""
        if tower.image is None:
            return None
        return replace(tower.image, pooled_tokens=self.latent_query_num)

    def projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        """dense and x_attn's k and v per patch; latent_query; x_attn's q and out_proj per image token."""
        base = "image_to_text_projection."
        square = Linear(text_hidden, text_hidden, True)
        return (
            tower_module(base + "dense", Linear(tower.hidden_size, text_hidden, True), "projector"),
            projector_module(base + "latent_query", LearnedTensor((self.latent_query_num, text_hidden))),
            projector_module(base + "x_attn.q_proj", square),
            tower_module(base + "x_attn.k_proj", square, "projector"),
            tower_module(base + "x_attn.v_proj", square, "projector"),
            projector_module(base + "x_attn.out_proj", square),
        )

    def notes(self) -> list[str]:
        return super().notes() + [
            "an image's FLOPs (`image`) leave out the projection's pass over the class token, the keys and values "
            "of the class token and the latent queries, and its cross-attention scores: a lower bound"
        ]


# --- Kosmos-2.5 -------------------------------------------------------------------------------------------------------

# Kosmos2_5ImageProcessor (image_processing_kosmos2_5.py, transformers 5.24): every image rescaled to at most
# max_patches patches of 16 × 16 and padded to max_patches
KOSMOS2_5_PATCH = 16
KOSMOS2_5_MAX_PATCHES = 4096


@family(
    "kosmos_2_5_text_model",
    transformers="Kosmos2_5TextConfig",
    architecture="Kosmos-2.5",
    model_class="Kosmos2_5TextForCausalLM",
)
class Kosmos2_5TextConfig(Kosmos2TextLayers):
    """configuration_kosmos2_5.py (Kosmos2_5TextConfig) / Kosmos2_5TextForCausalLM: the shared text model without
    the attention's sub-LayerNorm, and a segment table of two rows (segment_emb: text or image) added to every
    token."""

    inner_attention_norm = False

    def text_extras(self) -> tuple[Extra, ...]:
        return (Extra("other", self.prefix + "segment_emb", Table(2, self.embed_dim)),)


@tower("kosmos_2_5_vision_model", transformers="Kosmos2_5VisionConfig")
class Kosmos2_5VisionConfig(TowerConfig):
    """configuration_kosmos2_5.py (Kosmos2_5VisionConfig) / Kosmos2_5VisionModel: Pix2Struct's patch encoder
    (patch_projection of a flattened patch, row and column tables of max_num_patches rows, RMS-normed layers of
    num_attention_heads · head_dim with a gated MLP, a final layernorm). It reads the 4,096 patches of 16 × 16
    Kosmos2_5ImageProcessor pads every image to."""

    hidden_size: Width
    patch_embed_hidden_size: Width
    intermediate_size: Width
    head_dim: Width
    num_hidden_layers: LayerCount
    num_attention_heads: HeadCount
    dense_act_fn: Name
    max_num_patches: Width

    def tower(self, prefix: str) -> Tower:
        width = self.hidden_size
        layer = patch_encoder_layer(
            prefix + "encoder.layer.{i}", width, self.num_attention_heads, self.head_dim, self.intermediate_size,
            self.dense_act_fn, "vision",
        )  # fmt: skip
        modules = patch_embedding_modules(prefix, self.patch_embed_hidden_size, width, self.max_num_patches)
        extras = tuple(tower_module(name, module) for name, module in modules)
        image = ImageInput(KOSMOS2_5_PATCH, "budget", KOSMOS2_5_MAX_PATCHES)
        return Tower((layer,) * self.num_hidden_layers, extras, width, image)


@family(
    "kosmos-2.5",
    transformers="Kosmos2_5Config",
    architecture="Kosmos-2.5",
    model_class="Kosmos2_5ForConditionalGeneration",
)
class Kosmos2_5Config(Kosmos2Config):
    """configuration_kosmos2_5.py / Kosmos2_5ForConditionalGeneration: Kosmos-2's layout (vision_model.,
    text_model.model., text_model.lm_head, image_to_text_projection) with Kosmos-2.5's text model and tower, and
    latent_query_num (default 2048) image tokens. Only text_config's tie_word_embeddings (default true) ties: the
    wrapper's flag is not read."""

    text_model_type = "kosmos_2_5_text_model"
    text_defaults: ClassVar[dict[str, Any]] = {"model_type": "kosmos_2_5_text_model"}
    vision_model_type = "kosmos_2_5_vision_model"
    text_ties = True

    def tied(self) -> bool:
        """Kosmos2_5TextForCausalLM ties by its own flag, whatever the wrapper's says."""
        return getattr(self.text, "tie_word_embeddings", True) is True

    def notes(self) -> list[str]:
        return MultimodalConfig.notes(self) + [
            "an image's FLOPs (`image`) leave out the keys and values of the latent queries and the projection's "
            "cross-attention scores: a lower bound"
        ]
