"""WavTokenizer's encoder (transformers 5.24, configuration_wavtokenizer.py / modeling_wavtokenizer.py): the SEANet
encoder and the codebook that turn a waveform into one code a frame, as Apertus 1.5 reads audio (its audio_config,
model_type wavtokenizer_encoder). Counted by parameter: it hands the language model token ids, not features."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from ..schema import LayerCount, Width, WidthOrZero
from ..spec import CheckpointExtra, LearnedTensor, Norm, PatchEmbedding, StoredTensor
from .registry import tower
from .towers import Module, Tower, TowerConfig, audio_module


@tower("wavtokenizer_encoder", transformers="WavTokenizerEncoderConfig")
class WavTokenizerEncoderConfig(TowerConfig):
    """configuration_wavtokenizer.py (WavTokenizerEncoderConfig) / WavTokenizerEncoderModel: encoder.layers (a
    convolution from audio_channels to num_filters; per entry of reversed(upsampling_ratios), num_residual_layers
    residual blocks (a residual_kernel_size convolution to dim // compress, a 1-wide one back, a 1-wide shortcut with
    use_conv_shortcut) and a strided convolution doubling the width; an LSTM of num_lstm_layers over the width; a
    last_kernel_size convolution to hidden_size), each convolution biased and weight-normed (stored as its
    parametrizations: original0 [out, 1, 1], original1 [out, in, kernel]) or, with norm_type "time_group_norm",
    plain and followed by a GroupNorm; the ELUs between hold nothing. The codebook (quantizer.codebook) is four
    buffers, saved with the weights: inited, cluster_size, embed and embed_avg."""

    informational_fields = frozenset({"decoder_hidden_size", "decoder_attention_num_groups"})

    audio_channels: Width
    num_filters: Width
    upsampling_ratios: Annotated[list[Width], Field(max_length=64)]
    num_residual_layers: WidthOrZero
    compress: Width
    use_conv_shortcut: Annotated[bool, Field(strict=True)]
    norm_type: Literal["weight_norm", "time_group_norm"]
    kernel_size: Width
    last_kernel_size: Width
    residual_kernel_size: Width
    num_lstm_layers: LayerCount
    hidden_size: Width
    codebook_size: Width
    codebook_dim: Width
    decoder_hidden_size: Width
    decoder_attention_num_groups: Width

    @model_validator(mode="after")
    def _check_widths(self) -> WavTokenizerEncoderConfig:
        # WavTokenizerConfig.validate_architecture
        if self.codebook_dim != self.hidden_size:
            raise ValueError(
                f"codebook_dim ({self.codebook_dim}) must equal hidden_size ({self.hidden_size}): WavTokenizer has no "
                "projections around its quantizer, as transformers requires"
            )
        if self.decoder_hidden_size % self.decoder_attention_num_groups:
            raise ValueError(
                f"decoder_hidden_size ({self.decoder_hidden_size}) must be a multiple of decoder_attention_num_groups "
                f"({self.decoder_attention_num_groups}), as transformers requires"
            )
        return self

    def conv(self, name: str, in_channels: int, out_channels: int, kernel: int) -> list[tuple[str, Module]]:
        """WavTokenizerConv1d NAME: a biased 1-D convolution, weight-normed, or plain and followed by a GroupNorm."""
        if self.norm_type == "weight_norm":
            weight = name + ".conv.parametrizations.weight."
            return [
                (weight + "original0", LearnedTensor((out_channels, 1, 1))),
                (weight + "original1", LearnedTensor((out_channels, in_channels, kernel), matmul=True)),
                (name + ".conv.bias", LearnedTensor((out_channels,))),
            ]
        return [
            (name + ".conv", PatchEmbedding(in_channels, (kernel,), out_channels, True)),
            (name + ".norm", Norm("layernorm", out_channels, bias=True)),
        ]

    def encoder(self) -> list[tuple[str, Module]]:
        """WavTokenizerEncoder's modules, by their index in encoder.layers."""
        found = self.conv("encoder.layers.0", self.audio_channels, self.num_filters, self.kernel_size)
        index, width = 1, self.num_filters
        for ratio in reversed(self.upsampling_ratios):
            for _ in range(self.num_residual_layers):
                block, hidden = f"encoder.layers.{index}.", width // self.compress
                found += self.conv(block + "block.1", width, hidden, self.residual_kernel_size)
                found += self.conv(block + "block.3", hidden, width, 1)
                if self.use_conv_shortcut:
                    found += self.conv(block + "shortcut", width, width, 1)
                index += 1
            found += self.conv(f"encoder.layers.{index + 1}", width, 2 * width, 2 * ratio)  # after an ELU
            index, width = index + 2, 2 * width
        lstm = f"encoder.layers.{index}.lstm."
        for layer in range(self.num_lstm_layers):
            found += [
                (f"{lstm}weight_ih_l{layer}", LearnedTensor((4 * width, width), matmul=True)),
                (f"{lstm}weight_hh_l{layer}", LearnedTensor((4 * width, width), matmul=True)),
                (f"{lstm}bias_ih_l{layer}", LearnedTensor((4 * width,))),
                (f"{lstm}bias_hh_l{layer}", LearnedTensor((4 * width,))),
            ]
        return found + self.conv(f"encoder.layers.{index + 2}", width, self.hidden_size, self.last_kernel_size)

    def tower(self, prefix: str) -> Tower:
        extras = tuple(audio_module(prefix + name, module) for name, module in self.encoder())
        codebook = prefix + "quantizer.codebook."
        size, dim = self.codebook_size, self.codebook_dim
        buffers = CheckpointExtra(
            name="WavTokenizer codebook buffers",
            reason="the codebook's codes and their running statistics: buffers, saved with the weights",
            tensors=(
                StoredTensor(codebook + "inited", (1,)),
                StoredTensor(codebook + "cluster_size", (size,)),
                StoredTensor(codebook + "embed", (size, dim)),
                StoredTensor(codebook + "embed_avg", (size, dim)),
            ),
            buffer=True,
        )
        return Tower((), extras, self.hidden_size, None, (buffers,))
