"""BAAI's Emu3 (emu3): Chameleon's early fusion with a Llama language model, and a VQ-VAE that reads images (and
videos, with temporal convolutions) as tokens of the vocabulary, its decoder kept beside it to draw them."""

from __future__ import annotations

from functools import cached_property
from typing import Annotated, Any

from pydantic import Field, model_validator

from ..results import DefaultUsed
from ..schema import Flag, HeadCount, HFConfig, LayerCount, Name, PositionCount, Width, read_block
from ..spec import CheckpointExtra, Linear, ModelSpec, PatchEmbedding, StoredTensor, Table
from ..values import replace
from .base import DecoderConfig
from .chameleon import GROUPS, conv, group_norm
from .multimodal import relocate
from .registry import family, tower
from .towers import Module, Tower, TowerConfig, tower_module


def conv3d(in_channels: int, out_channels: int, kernel: tuple[int, int, int]) -> PatchEmbedding:
    """A biased Conv3d: weight [out, in, frames, height, width] and bias [out]."""
    return PatchEmbedding(in_channels, kernel, out_channels, True)


class Emu3Blocks:
    """Emu3VQVAE's blocks, named relative to their module; channel widths given."""

    embed_dim: int
    hidden_size: int

    def spatial_norm(self, name: str, channels: int) -> list[tuple[str, Module]]:
        """Emu3VQVAESpatialNorm: a GroupNorm of CHANNELS, and conv_y and conv_b (1 × 1, embed_dim → CHANNELS) that
        scale and shift it by the quantized latents."""
        return [
            (name + "norm_layer", group_norm(channels)),
            (name + "conv_y", conv(self.embed_dim, channels, 1)),
            (name + "conv_b", conv(self.embed_dim, channels, 1)),
        ]

    def norm(self, name: str, channels: int, spatial: bool) -> list[tuple[str, Module]]:
        """A GroupNorm in the encoder, a spatial norm in the decoder."""
        return self.spatial_norm(name + ".", channels) if spatial else [(name, group_norm(channels))]

    def resnet(self, name: str, in_channels: int, out_channels: int, spatial: bool) -> list[tuple[str, Module]]:
        """Emu3VQVAEResnetBlock: norm1, conv1 (3 × 3), norm2, conv2 (3 × 3), and a 1 × 1 nin_shortcut where the
        channels change."""
        block = [
            *self.norm(name + "norm1", in_channels, spatial),
            (name + "conv1", conv(in_channels, out_channels, 3)),
            *self.norm(name + "norm2", out_channels, spatial),
            (name + "conv2", conv(out_channels, out_channels, 3)),
        ]
        if in_channels != out_channels:
            block.append((name + "nin_shortcut", conv(in_channels, out_channels, 1)))
        return block

    def attention(self, name: str) -> list[tuple[str, Module]]:
        """Emu3VQVAEAttentionBlock: biased q, k, v and out_proj of hidden_size over every position."""
        width = self.hidden_size
        return [(name + part, Linear(width, width, True)) for part in ("q_proj", "k_proj", "v_proj", "out_proj")]

    def temporal_resnet(self, name: str, channels: int) -> list[tuple[str, Module]]:
        """Emu3VQVAETemporalResnetBlock (in = out channels): BatchNorm3d, a 3 × 3 × 3 convolution, twice."""
        return [
            (name + "norm1", group_norm(channels)),  # BatchNorm3d's weight and bias
            (name + "conv1.conv", conv3d(channels, channels, (3, 3, 3))),
            (name + "norm2", group_norm(channels)),
            (name + "conv2.conv", conv3d(channels, channels, (3, 3, 3))),
        ]


@tower("emu3_vqgan", transformers="Emu3VQVAEConfig")
class Emu3VQVAEConfig(Emu3Blocks, TowerConfig):
    """configuration_emu3.py (Emu3VQVAEConfig) / modeling_emu3.py (Emu3VQVAE), encoder and decoder both built.
    The encoder: conv_in; per level of channel_multiplier num_res_blocks ResNet blocks (GroupNorms, 3 × 3
    convolutions, a 1 × 1 nin_shortcut where the channels change), after each an attention block (q, k, v, out_proj
    of hidden_size) and its GroupNorm (attn_norms) where the level's index is in attn_resolutions, a strided 3 × 3
    downsample between levels; a middle block (two ResNet blocks around an attention block and its GroupNorm);
    norm_out, conv_out to latent_channels (twice that with double_latent); log2(temporal_downsample_factor)
    temporal downsamples (Conv3d 4 × 3 × 3) and num_res_blocks temporal ResNet blocks (BatchNorm3d, Conv3d
    3 × 3 × 3). The decoder mirrors it with num_res_blocks + 1 blocks a level and spatial norms (a GroupNorm, and
    conv_y and conv_b from the quantized latents, 1 × 1 embed_dim → channels). Then the codebook (quantize.embedding,
    codebook_size × embed_dim) and quant_conv and post_quant_conv (Conv3d 3 × 1 × 1). Each BatchNorm3d also saves its
    running_mean, running_var and num_batches_tracked."""

    informational_fields = frozenset({"out_channels"})  # read: the decoder's conv_out (see tower)

    codebook_size: Width
    embed_dim: Width
    latent_channels: Width
    double_latent: Flag
    in_channels: Width
    out_channels: Width
    temporal_downsample_factor: Width
    base_channels: Width
    channel_multiplier: Annotated[list[Width], Field(min_length=1, max_length=16)]
    num_res_blocks: Width
    attn_resolutions: Annotated[list[int], Field(max_length=16)]
    hidden_size: Width
    num_attention_heads: HeadCount

    @model_validator(mode="after")
    def _check_widths(self) -> Emu3VQVAEConfig:
        for multiplier in [1, *self.channel_multiplier]:
            if self.base_channels * multiplier % GROUPS:
                raise ValueError(
                    f"base_channels × channel_multiplier ({self.base_channels} × {multiplier}) is not a multiple of "
                    f"{GROUPS}; torch's GroupNorm({GROUPS}, …) in every block refuses it"
                )
        if self.hidden_size % self.num_attention_heads:
            raise ValueError(
                f"hidden_size ({self.hidden_size}) is not a multiple of num_attention_heads "
                f"({self.num_attention_heads}); Emu3VQVAEAttentionBlock refuses it"
            )
        return self

    @property
    def temporal_blocks(self) -> int:
        """int(log2(temporal_downsample_factor)): the temporal down- and upsampling convolutions."""
        return self.temporal_downsample_factor.bit_length() - 1

    def encoder(self) -> list[tuple[str, Module]]:
        """Emu3VQVAEEncoder's modules."""
        base, multipliers = self.base_channels, self.channel_multiplier
        found: list[tuple[str, Module]] = [("encoder.conv_in", conv(self.in_channels, base, 3))]
        block_in = base
        for level, multiplier in enumerate(multipliers):
            block_in, block_out = base * [1, *multipliers][level], base * multiplier
            name = f"encoder.down_block.down.{level}."
            for index in range(self.num_res_blocks):
                found += self.resnet(f"{name}block.{index}.", block_in, block_out, spatial=False)
                block_in = block_out
                if level in self.attn_resolutions:
                    found += self.attention(f"{name}attn.{index}.")
                    found.append((f"{name}attn_norms.{index}", group_norm(block_in)))
            if level != len(multipliers) - 1:
                found.append((name + "downsample.conv", conv(block_in, block_in, 3)))
        found += self.middle("encoder.middle_block.", block_in, spatial=False)
        latent = 2 * self.latent_channels if self.double_latent else self.latent_channels
        found += [("encoder.norm_out", group_norm(block_in)), ("encoder.conv_out", conv(block_in, latent, 3))]
        for index in range(self.temporal_blocks):
            found.append((f"encoder.time_conv.{index}.conv.conv", conv3d(latent, latent, (4, 3, 3))))
        for index in range(self.num_res_blocks):
            found += self.temporal_resnet(f"encoder.time_res_stack.{index}.", latent)
        return found

    def middle(self, name: str, channels: int, spatial: bool) -> list[tuple[str, Module]]:
        """Emu3VQVAEMiddleBlock: block_1, attn_norm and attn_1, block_2."""
        return [
            *self.resnet(name + "block_1.", channels, channels, spatial),
            *self.norm(name + "attn_norm", channels, spatial),
            *self.attention(name + "attn_1."),
            *self.resnet(name + "block_2.", channels, channels, spatial),
        ]

    def decoder(self) -> list[tuple[str, Module]]:
        """Emu3VQVAEDecoder's modules."""
        base, multipliers, latent = self.base_channels, self.channel_multiplier, self.latent_channels
        found: list[tuple[str, Module]] = []
        for index in range(self.num_res_blocks):
            found += self.temporal_resnet(f"decoder.time_res_stack.{index}.", latent)
        for index in range(self.temporal_blocks):
            found.append((f"decoder.time_conv.{index}.conv.conv", conv3d(latent, latent, (3, 3, 3))))
        block_in = base * multipliers[-1]
        found.append(("decoder.conv_in", conv(latent, block_in, 3)))
        found += self.middle("decoder.middle_block.", block_in, spatial=True)
        for level in reversed(range(len(multipliers))):
            block_out, name = base * multipliers[level], f"decoder.up_block.up.{level}."
            for index in range(self.num_res_blocks + 1):
                found += self.resnet(f"{name}block.{index}.", block_in, block_out, spatial=True)
                block_in = block_out
                if level in self.attn_resolutions:
                    found += self.attention(f"{name}attn.{index}.")
                    found += self.spatial_norm(f"{name}attn_norms.{index}.", block_in)
            if level != 0:
                found.append((name + "upsample.conv", conv(block_in, block_in, 3)))
        first = base * multipliers[0]
        found += self.spatial_norm("decoder.norm_out.", first)
        found.append(("decoder.conv_out", conv(first, self.out_channels, 3)))
        return found

    def batch_norm_statistics(self, prefix: str) -> CheckpointExtra:
        """Each BatchNorm3d's running_mean and running_var (its channels) and num_batches_tracked (a scalar)."""
        tensors: list[StoredTensor] = []
        latent = 2 * self.latent_channels if self.double_latent else self.latent_channels
        for stack, channels in (("encoder", latent), ("decoder", self.latent_channels)):
            for index in range(self.num_res_blocks):
                for norm in ("norm1", "norm2"):
                    name = f"{prefix}{stack}.time_res_stack.{index}.{norm}."
                    tensors += [
                        StoredTensor(name + "running_mean", (channels,)),
                        StoredTensor(name + "running_var", (channels,)),
                        StoredTensor(name + "num_batches_tracked", ()),
                    ]
        reason = "the temporal ResNet blocks' BatchNorm3d statistics: persistent buffers, saved with the weights"
        return CheckpointExtra("BatchNorm statistics", reason, tuple(tensors), buffer=True)

    def tower(self, prefix: str) -> Tower:
        latent, embed = self.latent_channels, self.embed_dim
        modules = [
            *self.encoder(),
            *self.decoder(),
            ("quantize.embedding", Table(self.codebook_size, embed)),
            ("quant_conv.conv", conv3d(latent, embed, (3, 1, 1))),
            ("post_quant_conv.conv", conv3d(embed, latent, (3, 1, 1))),
        ]
        extras = tuple(tower_module(prefix + name, module) for name, module in modules)
        saved = (self.batch_norm_statistics(prefix),) if self.num_res_blocks else ()
        return Tower((), extras, embed, None, checkpoint_extras=saved)  # no image rule: a convolutional tokenizer


class Emu3TextConfig(DecoderConfig):
    """configuration_emu3.py (Emu3TextConfig) / modeling_emu3.py (Emu3TextModel): Llama's layers; attention_bias
    and mlp_bias are class attributes a config may set, head_dim a key Emu3Attention reads with getattr.

    A block read only inside Emu3Config's text_config: transformers' record holds the registered model_types'
    classes, not Emu3TextConfig, so its defaults are written here (held to transformers by tests/test_family_emu3.py)."""

    architecture = "Emu3"
    config_class = "Emu3TextConfig"
    default_model_class = "Emu3ForCausalLM"
    undeclared_keys = frozenset({"head_dim", "attention_bias", "mlp_bias"})

    num_hidden_layers: LayerCount = 32
    intermediate_size: Width = 14336
    tie_word_embeddings: Flag = False
    max_position_embeddings: PositionCount = 9216
    head_dim: Width | None = None
    mlp_bias: Flag = False
    attention_bias: Flag = False
    hidden_act: Name = "silu"
    vocab_size: Width = 184622
    num_key_value_heads: HeadCount | None = 8
    pad_token_id: int | None = Field(151643, strict=True)


@family("emu3", transformers="Emu3Config", architecture="Emu3", model_class="Emu3ForConditionalGeneration")
class Emu3Config(HFConfig):
    """configuration_emu3.py / modeling_emu3.py (Emu3ForConditionalGeneration): Emu3TextModel (text_config) with
    lm_head, tied to its token table with the wrapper's tie_word_embeddings (default false), and the VQ-VAE
    (vq_config) under vqmodel.; an image runs the VQ-VAE's encoder once and becomes tokens of the vocabulary
    (vocabulary_map). Stored in transformers 4's layout (conversion mapping "emu3"): text_model.model.,
    text_model.lm_head, vqmodel."""

    informational_fields = frozenset({"vocabulary_map"})

    text_config: dict[str, Any] | None
    vq_config: dict[str, Any] | None
    vocabulary_map: dict[str, Any] | None
    tie_word_embeddings: Flag

    @property
    def text_only(self) -> bool:
        """Whether the class counted is Emu3ForCausalLM, the language model alone (what AutoModelForCausalLM builds
        from an Emu3Config: its text_config), without the VQ-VAE and without reading vocabulary_map."""
        return self.model_class() == "Emu3ForCausalLM"

    @model_validator(mode="after")
    def _check_vocabulary_map(self) -> Emu3Config:
        # Emu3ImageVocabularyMapping reads vocab_map.get("<|extra_200|>"); Emu3ForCausalLM has no image tokens
        if self.vocabulary_map is None and not self.text_only:
            raise ValueError(
                "vocabulary_map: transformers cannot build Emu3 without it (Emu3Model reads the image tokens from "
                "it); give the tokenizer's map, as the published config.json does"
            )
        return self

    @cached_property
    def text(self) -> Emu3TextConfig:
        """text_config read by its adapter (Emu3TextConfig's defaults where absent)."""
        return read_block(Emu3TextConfig, {**(self.text_config or {}), "model_type": "emu3_text_model"}, "text_config")

    @cached_property
    def vq(self) -> Emu3VQVAEConfig:
        """vq_config read by its adapter (Emu3VQVAEConfig's defaults where absent)."""
        return read_block(Emu3VQVAEConfig, {**(self.vq_config or {}), "model_type": "emu3_vqgan"}, "vq_config")

    def nested_configs(self) -> dict[str, HFConfig]:
        return {"text_config": self.text, "vq_config": self.vq}

    def defaults_used(self) -> list[DefaultUsed]:
        own = [d for d in super().defaults_used() if d.field not in ("text_config", "vq_config")]
        if self.text_only:  # Emu3ForCausalLM builds no VQ-VAE and ties as text_config says
            wrapper = [d for d in own if d.field != "tie_word_embeddings"]
            return wrapper + self.nested_defaults({"text_config": self.text})
        return own + self.nested_defaults()

    def max_context(self) -> int | None:
        return self.text.max_context()

    def warnings(self) -> list[str]:
        return self.text.warnings()

    def to_spec(self) -> ModelSpec:
        if self.text_only:  # Emu3ForCausalLM: model., lm_head, tied as text_config says
            return replace(self.text.to_spec(), model_type=self.model_type)
        text = replace(self.text.to_spec(), model_type=self.model_type, tie_word_embeddings=self.tie_word_embeddings)
        spec = relocate(text, "text_model.model.", "text_model.lm_head")
        tower = self.vq.tower("vqmodel.")
        return replace(
            spec,
            extras=spec.extras + tower.extras,
            checkpoint_extras=spec.checkpoint_extras + tower.checkpoint_extras,
        )

    def notes(self) -> list[str]:
        if self.text_only:
            return [
                "Emu3ForCausalLM is the language model alone: transformers builds it from text_config, without the VQ-VAE"
            ]
        return [
            "emu3 reads an image as tokens of its own vocabulary: the VQ-VAE (vq_config, its encoder and the decoder "
            "that draws generated tokens back into pixels) is counted as the vision tower and never runs for a text "
            "token; no image rule (flops `image` refuses: a convolutional tokenizer)"
        ]
