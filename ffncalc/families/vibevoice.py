"""VibeVoice (modeling_vibevoice.py, transformers 5.24): text-to-speech on Qwen2, with VibeVoice-ASR's tokenizer
encoders (the acoustic tokenizer whole, its decoder too), two connectors and a diffusion head that predicts the
acoustic latents."""

from __future__ import annotations

from functools import cached_property
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict

from ..schema import Flag, LayerCount, Name, Width, read_block
from ..spec import Extra, LearnedTensor, Linear, ModelSpec, Norm
from .multimodal import MultimodalLayers, with_tower
from .registry import family, tower
from .towers import Module, Tower, TowerConfig, audio_module
from .vibevoice_asr import VibeVoiceAcousticTokenizerEncoderConfig


@tower("vibevoice_acoustic_tokenizer", transformers="VibeVoiceAcousticTokenizerConfig")
class VibeVoiceAcousticTokenizerConfig(VibeVoiceAcousticTokenizerEncoderConfig):
    """configuration_vibevoice_acoustic_tokenizer.py / modeling_vibevoice_acoustic_tokenizer.py
    (VibeVoiceAcousticTokenizerModel): the encoder (VibeVoice-ASR's tower) and its mirror, the decoder, built from
    the same fields with depths reversed and the ratios reversed as upsampling ratios. With D = len(depths) and
    F = num_filters: a stem convolution hidden_size → F · 2^(D−1) (kernel_size taps) and depths[-1] ConvNeXt blocks,
    then per upsampling ratio r (stage s) a transposed convolution F · 2^(D−1−s) → F · 2^(D−2−s) of 2 · r taps,
    stride r (weight [in, out, taps]) and the next depths' blocks at its output width, and a head convolution
    F → channels (kernel_size taps). Every convolution has a bias. The decoder turns latents back into a waveform:
    it never runs for a text token, nor to read a clip."""

    def decoder_modules(self) -> list[tuple[str, Module]]:
        """The decoder's modules by name: the stem, a stage per upsampling ratio, the head."""
        depths = list(reversed(self.depths))
        filters, last = self.num_filters, len(depths) - 1
        wide = filters * 2**last
        modules: list[tuple[str, Module]] = [
            ("stem.conv.conv.weight", LearnedTensor((wide, self.hidden_size, self.kernel_size), matmul=True)),
            ("stem.conv.conv.bias", LearnedTensor((wide,))),
            *self.blocks("stem.stage.", wide, depths[0]),
        ]
        for stage, ratio in enumerate(reversed(self.downsampling_ratios)):
            before, after = filters * 2 ** (last - stage), filters * 2 ** (last - 1 - stage)
            layer = f"conv_layers.{stage}."
            modules += [
                (layer + "convtr.convtr.weight", LearnedTensor((before, after, 2 * ratio), matmul=True)),
                (layer + "convtr.convtr.bias", LearnedTensor((after,))),
                *self.blocks(layer + "stage.", after, depths[stage + 1]),
            ]
        modules += [
            ("head.conv.weight", LearnedTensor((self.channels, filters, self.kernel_size), matmul=True)),
            ("head.conv.bias", LearnedTensor((self.channels,))),
        ]
        return modules

    def tower(self, prefix: str) -> Tower:
        encoder = tuple(audio_module(f"{prefix}encoder.{name}", module) for name, module in self.encoder_modules())
        decoder = tuple(
            audio_module(f"{prefix}decoder.{name}", module, runs="not_generating")
            for name, module in self.decoder_modules()
        )
        return Tower((), encoder + decoder, self.hidden_size, None)


class VibeVoiceDiffusionHead(BaseModel):
    """VibeVoiceDiffusionHeadConfig's fields (transformers 5.24) that shape the head; VibeVoiceConfig sets its
    hidden_size to the language model's and its latent_size to the acoustic tokenizer's, whatever the block says."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    num_hidden_layers: LayerCount = 4
    intermediate_size: Width = 4608
    frequency_embedding_size: Width = 256
    hidden_act: Name = "silu"
    mlp_bias: Flag = False


@family(
    "vibevoice",
    transformers="VibeVoiceConfig",
    architecture="VibeVoice",
    model_class="VibeVoiceForConditionalGeneration",
)
class VibeVoiceConfig(MultimodalLayers):
    """configuration_vibevoice.py / modeling_vibevoice.py (VibeVoiceForConditionalGeneration, transformers 5.24): the
    acoustic tokenizer (audio_config, VibeVoiceAcousticTokenizerModel: encoder and decoder) as model.audio_tower, the
    language model built by AutoModel (Qwen2 by default; a given text_config is read alone), the semantic tokenizer's
    encoder (semantic_model_config, 128 wide by default), two connectors (multi_modal_projector for the acoustic
    latents, semantic_connector for the semantic features: linear_1 with bias, an RMSNorm act, linear_2 with bias),
    the diffusion head, and two learned scalars (latent_scaling_factor, latent_bias_factor). The head is tied to the
    token table where text_config's tie_word_embeddings says (VibeVoiceConfig copies it; Qwen2's default: no).

    The diffusion head (H = the language model's width, L = the acoustic latent width): noisy_images_proj L → H,
    cond_proj H → H, timestep_proj (fc1 frequency_embedding_size → H, fc2 H → H), num_hidden_layers adaptive layers
    (an RMSNorm, a gated MLP of intermediate_size with mlp_bias, linear H → 3H), final_layer (linear_1 H → 2H, linear_2
    H → L); no biases besides the MLP's. It and the tokenizer's decoder make speech, never a text token."""

    text_model_type = "qwen2"
    text_defaults: ClassVar[dict[str, Any]] = {"model_type": "qwen2"}
    text_ties = True  # VibeVoiceConfig.__post_init__ copies text_config's tie_word_embeddings
    language_model_prefix = "model.language_model."
    lm_head_name = "lm_head"
    audio_model_type = "vibevoice_acoustic_tokenizer"
    audio_defaults: ClassVar[dict[str, Any]] = {"model_type": "vibevoice_acoustic_tokenizer"}
    audio_prefix = "model.audio_tower."
    semantic_prefix: ClassVar[str] = "model.semantic_tokenizer_encoder."
    # VibeVoiceConfig.sub_configs_defaults["semantic_model_config"].init_kwargs
    semantic_defaults: ClassVar[dict[str, Any]] = {
        "model_type": "vibevoice_acoustic_tokenizer_encoder",
        "hidden_size": 128,
    }
    informational_fields = frozenset(
        {"audio_token_id", "audio_bos_token_id", "audio_eos_token_id", "diffusion_loss_weight", "pad_token_id"}
    )

    audio_config: dict[str, Any] | None
    semantic_model_config: dict[str, Any] | None
    diffusion_head_config: dict[str, Any] | None

    def tower_blocks(self) -> tuple[tuple[str, str, dict[str, Any]], ...]:
        return (
            ("audio_config", self.audio_model_type, self.audio_defaults),
            ("semantic_model_config", "vibevoice_acoustic_tokenizer_encoder", self.semantic_defaults),
        )

    def tied(self) -> bool:
        """VibeVoiceConfig.__post_init__: getattr(text_config, "tie_word_embeddings", False)."""
        return getattr(self.text, "tie_word_embeddings", False) is True

    @property
    def semantic(self) -> TowerConfig:
        return self.towers["semantic_model_config"]

    @cached_property
    def diffusion_head(self) -> VibeVoiceDiffusionHead:
        return read_block(VibeVoiceDiffusionHead, self.diffusion_head_config or {}, "diffusion_head_config")

    def validate_nested(self) -> None:
        super().validate_nested()
        self.diffusion_head  # noqa: B018 - or an error naming its field

    @staticmethod
    def connector(name: str, width: int, text_hidden: int) -> tuple[Extra, ...]:
        """VibeVoiceMultiModalProjector under NAME: linear_1 width → text with bias, an RMSNorm, linear_2 text → text
        with bias; once per audio token."""
        modules: tuple[tuple[str, Module], ...] = (
            ("linear_1", Linear(width, text_hidden, True)),
            ("act", Norm("rmsnorm", text_hidden)),
            ("linear_2", Linear(text_hidden, text_hidden, True)),
        )
        return tuple(
            audio_module(f"model.{name}.{part}", module, "projector", "per_audio_token") for part, module in modules
        )

    def audio_projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        return self.connector("multi_modal_projector", tower.hidden_size, text_hidden)

    def diffusion_modules(self, hidden: int, latent: int) -> tuple[Extra, ...]:
        """The diffusion head (see the class), and the two scalars that scale and shift the acoustic latents."""
        head = self.diffusion_head
        inner, bias = head.intermediate_size, head.mlp_bias
        modules: list[tuple[str, Module]] = [
            ("diffusion_head.noisy_images_proj", Linear(latent, hidden)),
            ("diffusion_head.cond_proj", Linear(hidden, hidden)),
            ("diffusion_head.timestep_proj.fc1", Linear(head.frequency_embedding_size, hidden)),
            ("diffusion_head.timestep_proj.fc2", Linear(hidden, hidden)),
        ]
        for index in range(head.num_hidden_layers):
            layer = f"diffusion_head.layers.{index}."
            modules += [
                (layer + "ffn.gate_proj", Linear(hidden, inner, bias)),
                (layer + "ffn.up_proj", Linear(hidden, inner, bias)),
                (layer + "ffn.down_proj", Linear(inner, hidden, bias)),
                (layer + "norm", Norm("rmsnorm", hidden)),
                (layer + "linear", Linear(hidden, 3 * hidden)),
            ]
        modules += [
            ("diffusion_head.final_layer.linear_1", Linear(hidden, 2 * hidden)),
            ("diffusion_head.final_layer.linear_2", Linear(hidden, latent)),
            ("latent_scaling_factor", LearnedTensor(())),
            ("latent_bias_factor", LearnedTensor(())),
        ]
        return tuple(Extra("other", "model." + name, module, runs="not_generating") for name, module in modules)

    def notes(self) -> list[str]:
        return super().notes() + [
            "The diffusion head and the two latent scalars (Other) and the acoustic tokenizer's decoder (in the audio "
            "tower) make speech from the language model's states: none of them runs for a text token."
        ]

    def wrapped_spec(self) -> ModelSpec:
        """The language model, the acoustic tokenizer and its connector, then the semantic encoder and its connector,
        the diffusion head and the latents' two scalars."""
        spec = super().wrapped_spec()
        semantic = self.semantic.tower(self.semantic_prefix)
        acoustic = self.audio
        assert acoustic is not None  # the audio tower is never optional here
        extras = self.connector("semantic_connector", semantic.hidden_size, spec.hidden_size)
        extras += self.diffusion_modules(spec.hidden_size, acoustic.tower(self.audio_prefix).hidden_size)
        return with_tower(spec, semantic, extras, image=spec.image)
