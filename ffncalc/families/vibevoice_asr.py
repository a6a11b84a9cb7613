"""VibeVoice-ASR (modeling_vibevoice_asr.py, transformers 5.24): two convolutional tokenizer encoders over the
waveform (acoustic and semantic, VibeVoice's ConvNeXt stages), a projector that adds their two paths, and Qwen2."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from pydantic import Field, model_validator

from ..schema import Name, Width
from ..spec import Extra, LearnedTensor, Linear, ModelSpec, Norm
from .multimodal import MultimodalLayers, with_tower
from .registry import family, tower
from .towers import Module, Tower, TowerConfig, audio_module


@tower("vibevoice_acoustic_tokenizer_encoder", transformers="VibeVoiceAcousticTokenizerEncoderConfig")
class VibeVoiceAcousticTokenizerEncoderConfig(TowerConfig):
    """configuration_vibevoice_acoustic_tokenizer.py (VibeVoiceAcousticTokenizerEncoderConfig) /
    modeling_vibevoice_acoustic_tokenizer.py (VibeVoiceAcousticTokenizerEncoderModel): a causal convolution stem
    (channels → num_filters, kernel_size taps), then one stage per downsampling ratio r (a causal convolution of 2 · r
    taps and stride r doubling the channels), each group of channels followed by depths[...] ConvNeXt blocks (an
    RMSNorm, a depthwise causal convolution of kernel_size taps with bias, a layer scale gamma, an RMSNorm, linear1
    and linear2 of ffn_expansion times the channels with biases, a layer scale ffn_gamma), and a head convolution
    to hidden_size (kernel_size taps). Every convolution has a bias. Its stages run at as many rates as it has
    ratios, over clips of any length: no fixed-window rule."""

    informational_fields = frozenset({"rms_norm_eps", "layer_scale_init_value", "vae_std"})

    channels: Width
    hidden_size: Width
    kernel_size: Width
    num_filters: Width
    downsampling_ratios: Annotated[list[Width], Field(min_length=1, max_length=16)]
    depths: Annotated[list[int], Field(min_length=1, max_length=17)]
    hidden_act: Name
    ffn_expansion: Width

    @model_validator(mode="after")
    def _check_depths(self) -> VibeVoiceAcousticTokenizerEncoderConfig:
        if len(self.depths) < len(self.downsampling_ratios) + 1:
            raise ValueError(
                f"depths needs an entry for the stem and each of the {len(self.downsampling_ratios)} downsampling "
                f"ratios ({len(self.downsampling_ratios) + 1}), not {len(self.depths)} (transformers fails to build it)"
            )
        return self

    def blocks(self, prefix: str, width: int, depth: int) -> list[tuple[str, Module]]:
        """DEPTH ConvNeXt blocks of WIDTH channels under PREFIX ("stem.stage.")."""
        wide = self.ffn_expansion * width
        found: list[tuple[str, Module]] = []
        for index in range(depth):
            block = f"{prefix}{index}."
            found += [
                (block + "norm", Norm("rmsnorm", width)),
                (block + "mixer.conv.weight", LearnedTensor((width, 1, self.kernel_size), matmul=True)),
                (block + "mixer.conv.bias", LearnedTensor((width,))),
                (block + "gamma", LearnedTensor((width,))),
                (block + "ffn_norm", Norm("rmsnorm", width)),
                (block + "ffn.linear1", Linear(width, wide, True)),
                (block + "ffn.linear2", Linear(wide, width, True)),
                (block + "ffn_gamma", LearnedTensor((width,))),
            ]
        return found

    def tower(self, prefix: str) -> Tower:
        return Tower(
            (),
            tuple(audio_module(prefix + name, module) for name, module in self.encoder_modules()),
            self.hidden_size,
            None,
        )

    def encoder_modules(self) -> list[tuple[str, Module]]:
        """The encoder's modules by name: the stem, a stage per downsampling ratio, the head."""
        filters = self.num_filters
        modules: list[tuple[str, Module]] = [
            ("stem.conv.conv.weight", LearnedTensor((filters, self.channels, self.kernel_size), matmul=True)),
            ("stem.conv.conv.bias", LearnedTensor((filters,))),
            *self.blocks("stem.stage.", filters, self.depths[0]),
        ]
        for stage, ratio in enumerate(self.downsampling_ratios):
            before, after = filters * 2**stage, filters * 2 ** (stage + 1)
            layer = f"conv_layers.{stage}."
            modules += [
                (layer + "conv.conv.weight", LearnedTensor((after, before, 2 * ratio), matmul=True)),
                (layer + "conv.conv.bias", LearnedTensor((after,))),
                *self.blocks(layer + "stage.", after, self.depths[stage + 1]),
            ]
        last = filters * 2 ** len(self.downsampling_ratios)
        modules += [
            ("head.conv.weight", LearnedTensor((self.hidden_size, last, self.kernel_size), matmul=True)),
            ("head.conv.bias", LearnedTensor((self.hidden_size,))),
        ]
        return modules


@family(
    "vibevoice_asr",
    transformers="VibeVoiceAsrConfig",
    architecture="VibeVoice-ASR",
    model_class="VibeVoiceAsrForConditionalGeneration",
)
class VibeVoiceAsrConfig(MultimodalLayers):
    """configuration_vibevoice_asr.py / modeling_vibevoice_asr.py (transformers 5.24): an acoustic and a semantic
    tokenizer encoder (VibeVoiceAcousticTokenizerEncoderModel each; the semantic one 128 wide by default), a language
    model built by AutoModel (Qwen2 by default; a given text_config is read alone) and VibeVoiceAsrMultiModalProjector,
    which maps each path to the text width (acoustic_linear_1 and semantic_linear_1 with biases, an RMSNorm each,
    acoustic_linear_2 and semantic_linear_2 text → text with biases) and adds them. The head is never tied
    (VibeVoiceAsrForConditionalGeneration declares no tied weights). Saved in transformers 4's layout (conversion
    mapping "vibevoice_asr": acoustic_tokenizer_encoder., semantic_tokenizer_encoder., multi_modal_projector.,
    language_model.)."""

    text_model_type = "qwen2"
    text_defaults: ClassVar[dict[str, Any]] = {"model_type": "qwen2"}
    audio_model_type = "vibevoice_acoustic_tokenizer_encoder"
    audio_defaults: ClassVar[dict[str, Any]] = {"model_type": "vibevoice_acoustic_tokenizer_encoder"}
    audio_prefix = "acoustic_tokenizer_encoder."
    semantic_prefix: ClassVar[str] = "semantic_tokenizer_encoder."
    # VibeVoiceAsrConfig.sub_configs_defaults["semantic_tokenizer_encoder_config"].init_kwargs
    semantic_defaults: ClassVar[dict[str, Any]] = {
        "model_type": "vibevoice_acoustic_tokenizer_encoder",
        "hidden_size": 128,
    }
    informational_fields = frozenset(
        {"audio_token_id", "audio_bos_token_id", "audio_eos_token_id", "acoustic_tokenizer_chunk_size"}
    )

    acoustic_tokenizer_encoder_config: dict[str, Any] | None
    semantic_tokenizer_encoder_config: dict[str, Any] | None

    def tower_blocks(self) -> tuple[tuple[str, str, dict[str, Any]], ...]:
        return (
            ("acoustic_tokenizer_encoder_config", self.audio_model_type, self.audio_defaults),
            ("semantic_tokenizer_encoder_config", self.audio_model_type, self.semantic_defaults),
        )

    @property
    def audio(self) -> TowerConfig | None:
        """The acoustic tokenizer's encoder (the semantic one is added beside it)."""
        return self.towers.get("acoustic_tokenizer_encoder_config")

    @property
    def semantic(self) -> TowerConfig:
        return self.towers["semantic_tokenizer_encoder_config"]

    def audio_projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        semantic = self.semantic.tower(self.semantic_prefix)
        modules: list[tuple[str, Module]] = []
        for path, width in (("acoustic", tower.hidden_size), ("semantic", semantic.hidden_size)):
            modules += [
                (f"{path}_linear_1", Linear(width, text_hidden, True)),
                (f"{path}_norm", Norm("rmsnorm", text_hidden)),
                (f"{path}_linear_2", Linear(text_hidden, text_hidden, True)),
            ]
        return tuple(
            audio_module("multi_modal_projector." + name, module, "projector", "per_audio_token")
            for name, module in modules
        )

    def wrapped_spec(self) -> ModelSpec:
        """The language model and the acoustic tower with the projector, then the semantic tower beside them."""
        spec = super().wrapped_spec()
        return with_tower(spec, self.semantic.tower(self.semantic_prefix), (), image=spec.image)
