"""Chameleon (Meta): an early-fusion decoder that reads images as tokens of its own vocabulary, made by a VQ-GAN
encoder (convolutions and a codebook) kept beside the language model."""

from __future__ import annotations

from functools import cached_property
from typing import Annotated, Any

from pydantic import Field, model_validator

from ..results import DefaultUsed
from ..schema import Flag, HeadCount, HFConfig, LayerCount, Name, Width, read_block
from ..spec import Extra, Layer, ModelSpec, Norm, PatchEmbedding, Table
from ..values import replace
from .base import DecoderConfig
from .multimodal import replace_default
from .registry import family, tower
from .towers import Module, Tower, TowerConfig, tower_module

# torch.nn.GroupNorm(num_groups=32, …) in every block of the VQ-GAN: its channels must be a multiple of 32.
GROUPS = 32


def groups_check():
    """A model validator for a VQ-GAN's channels: base_channels × each channel_multiplier (and × 1) a multiple of
    GROUPS, which torch's GroupNorm(GROUPS, …) in every block requires."""

    def check(self):
        for multiplier in [1, *self.channel_multiplier]:
            if self.base_channels * multiplier % GROUPS:
                raise ValueError(
                    f"base_channels × channel_multiplier ({self.base_channels} × {multiplier}) is not a multiple of "
                    f"{GROUPS}; torch's GroupNorm({GROUPS}, …) in every block refuses it"
                )
        return self

    return model_validator(mode="after")(check)


def conv(in_channels: int, out_channels: int, kernel: int) -> PatchEmbedding:
    """A biased kernel × kernel convolution: weight [out, in, kernel, kernel] and bias [out]."""
    return PatchEmbedding(in_channels, (kernel, kernel), out_channels, True)


def group_norm(channels: int) -> Norm:
    """GroupNorm(32, channels, affine=True): a weight and a bias of channels."""
    return Norm("layernorm", channels, bias=True)


def vq_resnet_block(name: str, in_channels: int, out_channels: int) -> list[tuple[str, Module]]:
    """A VQ-GAN ResNet block: GroupNorm, 3 × 3 convolution, GroupNorm, 3 × 3 convolution, and nin_shortcut (1 × 1)
    where the channels change."""
    block: list[tuple[str, Module]] = [
        (name + "norm1", group_norm(in_channels)),
        (name + "conv1", conv(in_channels, out_channels, 3)),
        (name + "norm2", group_norm(out_channels)),
        (name + "conv2", conv(out_channels, out_channels, 3)),
    ]
    if in_channels != out_channels:
        block.append((name + "nin_shortcut", conv(in_channels, out_channels, 1)))
    return block


def vq_attention_block(name: str, channels: int) -> list[tuple[str, Module]]:
    """A VQ-GAN attention block: a GroupNorm and 1 × 1 q, k, v and proj_out convolutions over every position."""
    return [(name + "norm", group_norm(channels))] + [
        (name + part, conv(channels, channels, 1)) for part in ("q", "k", "v", "proj_out")
    ]


@tower("chameleon_vqgan", transformers="ChameleonVQVAEConfig")
class ChameleonVQVAEConfig(TowerConfig):
    """configuration_chameleon.py (ChameleonVQVAEConfig) / modeling_chameleon.py (ChameleonVQVAE): the encoder only
    (conv_in; per level of channel_multiplier num_res_blocks ResNet blocks of two GroupNorms and two 3 × 3
    convolutions, a 1 × 1 nin_shortcut where the channels change, an attention block of 1 × 1 q, k, v, proj_out
    convolutions after each where the level's resolution is in attn_resolutions, a strided 3 × 3 downsample
    between levels; a middle of two blocks around one attention block (when attn_type is "vanilla"); norm_out and
    conv_out to latent_channels, twice that with double_latent), the codebook (quantize.embedding, num_embeddings ×
    embed_dim) and the 1 × 1 quant_conv and post_quant_conv. An image of resolution² pixels becomes
    (resolution / 2^(levels − 1))² tokens of the language model's vocabulary."""

    informational_fields = frozenset({"resolution"})

    embed_dim: Width
    num_embeddings: Width
    double_latent: Flag
    latent_channels: Width
    resolution: Width
    in_channels: Width
    base_channels: Width
    channel_multiplier: Annotated[list[Width], Field(min_length=1, max_length=16)]
    num_res_blocks: Width
    attn_resolutions: list[int] | None
    attn_type: Name  # any other builds no attention block

    _check_groups = groups_check()

    def encoder(self) -> list[tuple[str, Module]]:
        """ChameleonVQVAEEncoder's modules, in its order."""
        base, multipliers = self.base_channels, self.channel_multiplier
        found: list[tuple[str, Module]] = [("encoder.conv_in", conv(self.in_channels, base, 3))]
        resolution = self.resolution
        block_in = base
        for level, multiplier in enumerate(multipliers):
            block_in, block_out = base * ([1, *multipliers][level]), base * multiplier
            attends = self.attn_resolutions is not None and resolution in self.attn_resolutions
            for index in range(self.num_res_blocks):
                found += vq_resnet_block(f"encoder.down.{level}.block.{index}.", block_in, block_out)
                block_in = block_out
                if attends and self.attn_type == "vanilla":
                    found += vq_attention_block(f"encoder.down.{level}.attn.{index}.", block_in)
            if level != len(multipliers) - 1:
                found.append((f"encoder.down.{level}.downsample.conv", conv(block_in, block_in, 3)))
                resolution //= 2
        found += vq_resnet_block("encoder.mid.block_1.", block_in, block_in)
        if self.attn_type == "vanilla":
            found += vq_attention_block("encoder.mid.attn_1.", block_in)
        found += vq_resnet_block("encoder.mid.block_2.", block_in, block_in)
        latent = 2 * self.latent_channels if self.double_latent else self.latent_channels
        found += [("encoder.norm_out", group_norm(block_in)), ("encoder.conv_out", conv(block_in, latent, 3))]
        return found

    def tower(self, prefix: str) -> Tower:
        modules = [
            *self.encoder(),
            ("quantize.embedding", Table(self.num_embeddings, self.embed_dim)),
            ("quant_conv", conv(self.latent_channels, self.embed_dim, 1)),
            ("post_quant_conv", conv(self.embed_dim, self.latent_channels, 1)),
        ]
        extras = tuple(tower_module(prefix + name, module) for name, module in modules)
        return Tower((), extras, self.embed_dim, None)  # no image rule: a convolutional tokenizer


@family(
    "chameleon",
    transformers="ChameleonConfig",
    architecture="Chameleon",
    model_class="ChameleonForConditionalGeneration",
)
class ChameleonConfig(DecoderConfig):
    """configuration_chameleon.py / modeling_chameleon.py (ChameleonForConditionalGeneration): Llama's layers with a
    LayerNorm with bias over each head's queries and keys (ChameleonLayerNorm((heads, head_dim)): weight and bias
    stored [heads, head_dim] and [kv heads, head_dim]); swin_norm moves the norms after the sublayers (the same
    parameters); model_parallel_size reshapes, holds nothing. The VQ-GAN (vq_config) sits under model.vqmodel.; an
    image runs its encoder once and becomes tokens of the language model's vocabulary (vocabulary_map)."""

    informational_fields = DecoderConfig.informational_fields | {"vocabulary_map", "model_parallel_size"}

    num_hidden_layers: LayerCount
    intermediate_size: Width
    tie_word_embeddings: Flag
    mlp_bias: Flag
    attention_bias: Flag
    max_position_embeddings: Width
    hidden_act: Name
    num_key_value_heads: HeadCount | None
    model_parallel_size: int | None
    swin_norm: Flag
    vq_config: dict[str, Any] | None
    vocabulary_map: dict[str, Any] | None

    @model_validator(mode="after")
    def _check_vocabulary_map(self) -> ChameleonConfig:
        if self.vocabulary_map is None:  # ChameleonImageVocabularyMapping reads vocab_map.get("<image>")
            raise ValueError(
                "vocabulary_map: transformers cannot build Chameleon without it (ChameleonModel reads the image "
                "tokens from it); give the tokenizer's map, as the published config.json does"
            )
        return self

    @cached_property
    def vq(self) -> ChameleonVQVAEConfig:
        """vq_config read by its adapter (ChameleonVQVAEConfig's defaults where absent)."""
        return read_block(
            ChameleonVQVAEConfig, {**(self.vq_config or {}), "model_type": "chameleon_vqgan"}, "vq_config"
        )

    def nested_configs(self) -> dict[str, HFConfig]:
        return {"vq_config": self.vq}

    def defaults_used(self) -> list[DefaultUsed]:
        own = [default for default in super().defaults_used() if default.field != "vq_config"]
        return own + [replace_default(default, "vq_config." + default.field) for default in self.vq.defaults_used()]

    def build_layer(self, index: int, window: int | None) -> Layer:
        head_dim, heads, kv_heads = self.resolved_head_dim, self.num_attention_heads, self.kv_heads
        q_norm = Norm("layernorm", heads * head_dim, bias=True, shape=(heads, head_dim))
        k_norm = Norm("layernorm", kv_heads * head_dim, bias=True, shape=(kv_heads, head_dim))
        return self.layer(self.attention(window, q_norm=q_norm, k_norm=k_norm), self.gated_ffn())

    def to_spec(self) -> ModelSpec:
        spec = super().to_spec()
        tokenizer: tuple[Extra, ...] = self.vq.tower("model.vqmodel.").extras
        return replace(spec, extras=spec.extras + tokenizer)

    def notes(self) -> list[str]:
        return [
            "chameleon reads an image as tokens of its own vocabulary: the VQ-GAN encoder and codebook (vq_config) "
            "are counted as the vision tower and run once per image, never for a text token; no image rule "
            "(flops `image` refuses: a convolutional tokenizer)"
        ]
