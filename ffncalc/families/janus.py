"""Janus (DeepSeek; transformers 5.24, modeling_janus.py): a language model (Llama's by default) that reads images
through a SigLIP-like tower and an aligner MLP, and generates images as tokens of a VQ-VAE's codebook (its
generation embeddings, aligner and head); the VQ-VAE's encoder and decoder are kept beside them."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from pydantic import Field

from ..schema import Flag, HeadCount, LayerCount, Name, Width
from ..spec import (
    Attention,
    DenseFfn,
    Extra,
    ImageInput,
    Layer,
    Linear,
    ModelSpec,
    Norm,
    PatchEmbedding,
    Table,
    names,
)
from ..values import replace
from .chameleon import conv, group_norm, groups_check, vq_attention_block, vq_resnet_block
from .multimodal import MultimodalConfig
from .registry import family, tower
from .towers import Module, Tower, TowerConfig, projector_module, tower_module

JANUS_ATTENTION = names(
    q="self_attn.q_proj", k="self_attn.k_proj", v="self_attn.v_proj", o="self_attn.projection_layer",
    q_norm="self_attn.q_norm", k_norm="self_attn.k_norm",
)  # fmt: skip
JANUS_MLP = names(up="mlp.fc1", down="mlp.fc2")


@tower("janus_vision_model", transformers="JanusVisionConfig")
class JanusVisionConfig(TowerConfig):
    """configuration_janus.py (JanusVisionConfig) / JanusVisionModel: a biased patch convolution, a learned position
    per patch of an image_size square, LayerNorm layers (q, k, v biased with attention_bias, projection_layer always
    biased, with use_qk_norm a LayerNorm with bias over all heads' queries and keys; fc1 and fc2 of
    int(hidden_size · mlp_ratio), biased) and post_layernorm. Its image processor resizes every image to
    image_size: (image_size / patch_size)² patches, each one token."""

    hidden_size: Width
    num_hidden_layers: LayerCount
    num_attention_heads: HeadCount
    num_channels: Width
    image_size: Width
    patch_size: Width
    hidden_act: Name
    mlp_ratio: Annotated[float, Field(gt=0)]
    attention_bias: Flag
    projection_dim: Width
    use_qk_norm: Flag
    depth: Width

    def tower(self, prefix: str) -> Tower:
        """The layers and modules above, hidden_size wide; the aligner (the wrapper's projector) reads them."""
        hidden, heads, bias = self.hidden_size, self.num_attention_heads, self.attention_bias
        head_dim = hidden // heads
        head_norm = Norm("layernorm", hidden, bias=True) if self.use_qk_norm else None
        attention = Attention(
            hidden, heads, heads, head_dim, head_dim, JANUS_ATTENTION, bias, bias, bias, True,
            q_norm=head_norm, k_norm=head_norm,
        )  # fmt: skip
        ffn = DenseFfn(hidden, int(hidden * self.mlp_ratio), False, self.hidden_act, JANUS_MLP, True)
        norm = Norm("layernorm", hidden, bias=True)
        layer = Layer(
            prefix + "encoder.layers.{i}",
            attention,
            ffn,
            (("layer_norm1", norm), ("layer_norm2", norm)),
            stack="vision",
        )
        extras = (
            tower_module(
                prefix + "embeddings.patch_embedding",
                PatchEmbedding(self.num_channels, (self.patch_size,) * 2, hidden, True),
            ),
            tower_module(
                prefix + "embeddings.position_embedding", Table((self.image_size // self.patch_size) ** 2, hidden)
            ),
            tower_module(prefix + "post_layernorm", norm),
        )
        image = ImageInput(self.patch_size, "fixed", self.image_size)
        return Tower((layer,) * self.num_hidden_layers, extras, hidden, image)


@tower("janus_vqgan", transformers="JanusVQVAEConfig")
class JanusVQVAEConfig(TowerConfig):
    """configuration_janus.py (JanusVQVAEConfig) / JanusVQVAE: Chameleon's VQ-GAN encoder, with an attention block
    after each ResNet block of the last level only, and its decoder (conv_in from latent_channels, a middle of two
    blocks around an attention block, per level from the last num_res_blocks + 1 blocks, an attention block after each
    on the last level, a 3 × 3 upsample convolution between levels; norm_out and conv_out to out_channels); the
    codebook (quantize.embedding, num_embeddings × embed_dim), quant_conv and post_quant_conv (1 × 1). It encodes and
    decodes images for generation, never for a text token nor for an image the tower reads."""

    embed_dim: Width
    num_embeddings: Width
    double_latent: Flag
    latent_channels: Width
    in_channels: Width
    base_channels: Width
    channel_multiplier: Annotated[list[Width], Field(min_length=1, max_length=16)]
    num_res_blocks: Width
    out_channels: Width
    projection_dim: Width
    num_hidden_layers: LayerCount
    hidden_act: Name
    image_token_embed_dim: Width

    _check_groups = groups_check()

    def encoder(self) -> list[tuple[str, Module]]:
        """JanusVQVAEEncoder's modules, in its order."""
        base, multipliers = self.base_channels, self.channel_multiplier
        last = len(multipliers) - 1
        found: list[tuple[str, Module]] = [("encoder.conv_in", conv(self.in_channels, base, 3))]
        block_in = base
        for level, multiplier in enumerate(multipliers):
            block_in, block_out = base * [1, *multipliers][level], base * multiplier
            for index in range(self.num_res_blocks):
                found += vq_resnet_block(f"encoder.down.{level}.block.{index}.", block_in, block_out)
                block_in = block_out
                if level == last:
                    found += vq_attention_block(f"encoder.down.{level}.attn.{index}.", block_in)
            if level != last:
                found.append((f"encoder.down.{level}.downsample.conv", conv(block_in, block_in, 3)))
        found += self.middle("encoder.mid.", block_in)
        latent = 2 * self.latent_channels if self.double_latent else self.latent_channels
        return found + [("encoder.norm_out", group_norm(block_in)), ("encoder.conv_out", conv(block_in, latent, 3))]

    def decoder(self) -> list[tuple[str, Module]]:
        """JanusVQVAEDecoder's modules, in its order (up.0 is the last level, up.{n-1} the first)."""
        base, multipliers = self.base_channels, self.channel_multiplier
        last = len(multipliers) - 1
        block_in = base * multipliers[last]
        found: list[tuple[str, Module]] = [("decoder.conv_in", conv(self.latent_channels, block_in, 3))]
        found += self.middle("decoder.mid.", block_in)
        for position, level in enumerate(reversed(range(len(multipliers)))):
            block_out = base * multipliers[level]
            for index in range(self.num_res_blocks + 1):
                found += vq_resnet_block(f"decoder.up.{position}.block.{index}.", block_in, block_out)
                block_in = block_out
                if level == last:
                    found += vq_attention_block(f"decoder.up.{position}.attn.{index}.", block_in)
            if level != 0:
                found.append((f"decoder.up.{position}.upsample.conv", conv(block_in, block_in, 3)))
        return found + [
            ("decoder.norm_out", group_norm(block_in)),
            ("decoder.conv_out", conv(block_in, self.out_channels, 3)),
        ]

    @staticmethod
    def middle(name: str, channels: int) -> list[tuple[str, Module]]:
        """JanusVQVAEMidBlock: block_1, attn_1, block_2, all CHANNELS wide."""
        return [
            *vq_resnet_block(name + "block_1.", channels, channels),
            *vq_attention_block(name + "attn_1.", channels),
            *vq_resnet_block(name + "block_2.", channels, channels),
        ]

    def tower(self, prefix: str) -> Tower:
        modules = [
            *self.encoder(),
            ("quantize.embedding", Table(self.num_embeddings, self.embed_dim)),
            ("quant_conv", conv(self.latent_channels, self.embed_dim, 1)),
            ("post_quant_conv", conv(self.embed_dim, self.latent_channels, 1)),
            *self.decoder(),
        ]
        extras = tuple(tower_module(prefix + name, module, runs="not_generating") for name, module in modules)
        return Tower((), extras, self.embed_dim, None)


@family("janus", transformers="JanusConfig", architecture="Janus", model_class="JanusForConditionalGeneration")
class JanusConfig(MultimodalConfig):
    """configuration_janus.py / JanusForConditionalGeneration: the tower under model.vision_model., its aligner
    (model.aligner.: fc1 hidden → projection_dim, then depth − 1 hidden_layers projection_dim → projection_dim, all
    biased), the VQ-VAE under model.vqmodel., the image-generation modules (generation_embeddings [num_embeddings,
    embed_dim]; generation_aligner: fc1 embed_dim → projection_dim and num_hidden_layers − 1 hidden_layers;
    generation_head: proj_out image_token_embed_dim → projection_dim and vision_head → num_embeddings; all biased,
    of vq_config), the language model under model.language_model.; tie_word_embeddings (default true) ties lm_head."""

    text_model_type = "llama"
    text_defaults: ClassVar[dict[str, Any]] = {"model_type": "llama"}
    vision_model_type = "janus_vision_model"
    language_model_prefix = "model.language_model."
    vision_prefix = "model.vision_model."
    lm_head_name = "lm_head"

    vq_config: dict[str, Any] | None

    def tower_blocks(self) -> tuple[tuple[str, str, dict[str, Any]], ...]:
        return (*super().tower_blocks(), ("vq_config", "janus_vqgan", {}))

    def projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        """JanusVisionAlignerMLP: fc1 and depth − 1 hidden layers, once per image token."""
        vision = self.vision
        assert isinstance(vision, JanusVisionConfig)
        width = vision.projection_dim
        layers = [projector_module("model.aligner.fc1", Linear(tower.hidden_size, width, True))]
        layers += [
            projector_module(f"model.aligner.hidden_layers.{index}", Linear(width, width, True))
            for index in range(vision.depth - 1)
        ]
        return tuple(layers)

    def wrapped_spec(self) -> ModelSpec:
        """The language model and tower, with the VQ-VAE and the image-generation modules (run for no text token)."""
        spec = super().wrapped_spec()
        vq = self.towers["vq_config"]
        assert isinstance(vq, JanusVQVAEConfig)
        width = vq.projection_dim
        generation: list[tuple[str, Module]] = [
            ("generation_embeddings", Table(vq.num_embeddings, vq.embed_dim)),
            ("generation_aligner.fc1", Linear(vq.embed_dim, width, True)),
            *(
                (f"generation_aligner.hidden_layers.{index}", Linear(width, width, True))
                for index in range(vq.num_hidden_layers - 1)
            ),
            ("generation_head.proj_out", Linear(vq.image_token_embed_dim, width, True)),
            ("generation_head.vision_head", Linear(width, vq.num_embeddings, True)),
        ]
        extras = vq.tower("model.vqmodel.").extras + tuple(
            Extra("other", "model." + name, module, runs="not_generating") for name, module in generation
        )
        return replace(spec, extras=spec.extras + extras)

    def notes(self) -> list[str]:
        return super().notes() + [
            "the VQ-VAE (vq_config) and the image-generation modules are counted by parameter only: they encode, "
            "embed and decode image tokens when Janus generates an image, never for a text token or an image it reads"
        ]
