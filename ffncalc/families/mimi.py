"""Kyutai's Mimi codec (modeling_mimi.py, transformers 5.24) as a tower: SEANet convolutions, a transformer on each
side of a split residual vector quantizer, the whole MimiModel (encoder and decoder)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, model_validator

from ..schema import Flag, HeadCount, LayerCount, Name, PositionCount, Width
from ..spec import CheckpointExtra, Extra, LearnedTensor, Linear, Norm, StoredTensor
from .registry import tower
from .towers import Module, Tower, TowerConfig, audio_module


@tower(
    "mimi",
    transformers="MimiConfig",
    read_beyond={"frame_rate": "MimiConfig.__post_init__ pops it from its kwargs (older configs)"},
)
class MimiConfig(TowerConfig):
    """configuration_mimi.py / modeling_mimi.py (MimiModel, as AutoModel builds it from a codec_config).

    Encoder: SEANet's encoder_seanet.layers (a convolution audio_channels → F = num_filters of
    kernel_size taps; per upsampling ratio r, reversed, at width s · F: num_residual_layers residual blocks, then a
    convolution s · F → 2s · F of 2r taps, stride r; a last convolution → hidden_size of last_kernel_size taps), an
    encoder_transformer and a downsample convolution. Decoder: an upsample transposed convolution, a
    decoder_transformer and SEANet's decoder_seanet.layers (a convolution hidden_size → 2^R · F of kernel_size taps;
    per ratio a transposed convolution s · F → s · F / 2 of 2r taps, stride r, then residual blocks; a last
    convolution F → audio_channels). A residual block at width d: block.1, d → d / compress over residual_kernel_size
    taps, block.3, d / compress → d over 1 tap (and shortcut, d → d over 1 tap, with use_conv_shortcut). Every SEANet
    convolution has a bias; the empty indices are ELUs. Each transformer: num_hidden_layers pre-LN layers (LayerNorms
    with biases; q heads × head_dim, k and v kv heads × head_dim, o, biased where attention_bias; fc1 and fc2 of
    intermediate_size without biases; a learned layer scale after each). The downsample (hidden → hidden over
    2 · latent_stride taps, stride latent_stride) and upsample (the same, transposed, in upsample_groups groups) have
    no biases and exist only where frame_rate differs from the encodec frame rate ⌈sampling_rate / Π ratios⌉:
    frame_rate is the config's own (an older key) or sampling_rate / frame_size, frame_size Π ratios · 2.

    The quantizer: num_semantic_quantizers and num_quantizers − num_semantic_quantizers codebooks, each split keeping
    1 × 1 input_proj and output_proj convolutions (hidden ↔ vector_quantization_hidden_dimension, no bias) where those
    widths differ; each codebook is three persistent buffers (initialized, cluster_usage, embed_sum
    codebook_size × codebook_dim), saved but not parameters. The codec reads and writes waveforms at any length: no
    fixed-window rule, so no audio FLOPs.

    Saved in Mimi's original flat layout (conversion_mapping's MimiModel renamings, reverted on save): encoder.layers,
    encoder_transformer., downsample., upsample., decoder_transformer., decoder.layers and quantizer., which
    transformers loads as encoder.encoder_seanet.layers, encoder.encoder_transformer., encoder.downsample.,
    decoder.upsample., decoder.decoder_transformer. and decoder.decoder_seanet.layers."""

    informational_fields = frozenset(
        {"dilation_growth_rate", "use_causal_conv", "pad_mode", "trim_right_ratio", "use_streaming", "norm_eps"}
    )

    sampling_rate: Width
    audio_channels: Width
    hidden_size: Width
    num_filters: Width
    num_residual_layers: LayerCount
    upsampling_ratios: Annotated[list[Width] | None, Field(min_length=1, max_length=16)]
    kernel_size: Width
    last_kernel_size: Width
    residual_kernel_size: Width
    compress: Width
    codebook_size: Width
    codebook_dim: Width | None
    num_quantizers: Width
    use_conv_shortcut: Flag
    vector_quantization_hidden_dimension: Width
    num_semantic_quantizers: Width
    upsample_groups: Width
    num_hidden_layers: LayerCount
    intermediate_size: Width
    num_attention_heads: HeadCount
    num_key_value_heads: HeadCount
    head_dim: Width | None
    hidden_act: Name
    max_position_embeddings: PositionCount
    sliding_window: Width
    attention_bias: Flag
    frame_rate: float | None = Field(None, gt=0)

    @model_validator(mode="after")
    def _check_mimi(self) -> MimiConfig:
        if self.num_semantic_quantizers >= self.num_quantizers:
            raise ValueError(
                f"num_semantic_quantizers ({self.num_semantic_quantizers}) must be fewer than num_quantizers "
                f"({self.num_quantizers}); MimiConfig refuses it"
            )
        if self.codebook_size & (self.codebook_size - 1):
            raise ValueError(f"codebook_size ({self.codebook_size}) must be a power of 2; MimiConfig refuses it")
        if self.resamples and self.hidden_size % self.upsample_groups:
            raise ValueError(
                f"hidden_size ({self.hidden_size}) is not a multiple of upsample_groups ({self.upsample_groups}); "
                "torch refuses the upsample convolution"
            )
        return self

    @property
    def ratios(self) -> list[int]:
        """upsampling_ratios, [8, 6, 5, 4] when unset."""
        return self.upsampling_ratios or [8, 6, 5, 4]

    @property
    def hop(self) -> int:
        """Π ratios: the samples of one encodec frame."""
        hop = 1
        for ratio in self.ratios:
            hop *= ratio
        return hop

    @property
    def latent_stride(self) -> int:
        """int(encodec frame rate / frame rate): the downsample's stride."""
        encodec_rate = -(-self.sampling_rate // self.hop)
        rate = self.frame_rate if self.frame_rate is not None else self.sampling_rate / (2 * self.hop)
        return int(encodec_rate / rate)

    @property
    def resamples(self) -> bool:
        """Whether the downsample and upsample convolutions exist: frame_rate differs from the encodec frame rate."""
        encodec_rate = -(-self.sampling_rate // self.hop)
        rate = self.frame_rate if self.frame_rate is not None else self.sampling_rate / (2 * self.hop)
        return rate != encodec_rate

    @staticmethod
    def conv(name: str, out: int, into: int, taps: int, bias: bool = True) -> list[tuple[str, Module]]:
        """A convolution's weight [out, in, taps] under NAME (and its bias)."""
        found: list[tuple[str, Module]] = [(name + ".weight", LearnedTensor((out, into, taps), matmul=True))]
        return found + ([(name + ".bias", LearnedTensor((out,)))] if bias else [])

    def residual_blocks(self, prefix: str, width: int) -> list[tuple[str, Module]]:
        """One MimiResnetBlock at WIDTH under PREFIX (layers.{i}.)."""
        hidden = width // self.compress
        found = self.conv(prefix + "block.1.conv", hidden, width, self.residual_kernel_size)
        found += self.conv(prefix + "block.3.conv", width, hidden, 1)
        if self.use_conv_shortcut:
            found += self.conv(prefix + "shortcut.conv", width, width, 1)
        return found

    def encoder_seanet(self) -> list[tuple[str, Module]]:
        filters = self.num_filters
        found = self.conv("layers.0.conv", filters, self.audio_channels, self.kernel_size)
        index, scale = 1, 1
        for ratio in reversed(self.ratios):
            width = scale * filters
            for _ in range(self.num_residual_layers):
                found += self.residual_blocks(f"layers.{index}.", width)
                index += 1
            found += self.conv(f"layers.{index + 1}.conv", 2 * width, width, 2 * ratio)  # after an ELU
            index, scale = index + 2, scale * 2
        return found + self.conv(f"layers.{index + 1}.conv", self.hidden_size, scale * filters, self.last_kernel_size)

    def decoder_seanet(self) -> list[tuple[str, Module]]:
        filters, scale = self.num_filters, 2 ** len(self.ratios)
        found = self.conv("layers.0.conv", scale * filters, self.hidden_size, self.kernel_size)
        index = 1
        for ratio in self.ratios:
            width = scale * filters
            # after an ELU: ConvTranspose1d's weight is [in, out, taps], its bias [out]
            transposed = f"layers.{index + 1}.conv."
            found += [
                (transposed + "weight", LearnedTensor((width, width // 2, 2 * ratio), matmul=True)),
                (transposed + "bias", LearnedTensor((width // 2,))),
            ]
            index += 2
            for _ in range(self.num_residual_layers):
                found += self.residual_blocks(f"layers.{index}.", width // 2)
                index += 1
            scale //= 2
        return found + self.conv(f"layers.{index + 1}.conv", self.audio_channels, filters, self.last_kernel_size)

    def transformer(self, prefix: str) -> list[tuple[str, Module]]:
        """num_hidden_layers MimiTransformerLayers under PREFIX."""
        d, bias = self.hidden_size, self.attention_bias
        head = self.head_dim or d // self.num_attention_heads
        q, kv = self.num_attention_heads * head, self.num_key_value_heads * head
        found: list[tuple[str, Module]] = []
        for index in range(self.num_hidden_layers):
            layer = f"{prefix}layers.{index}."
            found += [
                (layer + "self_attn.q_proj", Linear(d, q, bias)),
                (layer + "self_attn.k_proj", Linear(d, kv, bias)),
                (layer + "self_attn.v_proj", Linear(d, kv, bias)),
                (layer + "self_attn.o_proj", Linear(q, d, bias)),
                (layer + "mlp.fc1", Linear(d, self.intermediate_size)),
                (layer + "mlp.fc2", Linear(self.intermediate_size, d)),
                (layer + "input_layernorm", Norm("layernorm", d, bias=True)),
                (layer + "post_attention_layernorm", Norm("layernorm", d, bias=True)),
                (layer + "self_attn_layer_scale.scale", LearnedTensor((d,))),
                (layer + "mlp_layer_scale.scale", LearnedTensor((d,))),
            ]
        return found

    def quantizers(self) -> tuple[tuple[str, int], ...]:
        """Each residual vector quantizer and its codebooks."""
        semantic = self.num_semantic_quantizers
        return (("semantic", semantic), ("acoustic", self.num_quantizers - semantic))

    def tower(self, prefix: str) -> Tower:
        d, stride = self.hidden_size, self.latent_stride
        encoder = [("encoder." + name, module) for name, module in self.encoder_seanet()]
        encoder += self.transformer("encoder_transformer.")
        decoder = []
        if self.resamples:
            encoder += self.conv("downsample.conv", d, d, 2 * stride, bias=False)
            decoder += self.conv("upsample.conv", d, d // self.upsample_groups, 2 * stride, bias=False)
        decoder += self.transformer("decoder_transformer.")
        decoder += [("decoder." + name, module) for name, module in self.decoder_seanet()]
        vq = self.vector_quantization_hidden_dimension
        for kind, _ in self.quantizers():
            if vq != d:
                quantizer = f"quantizer.{kind}_residual_vector_quantizer."
                encoder += [(quantizer + "input_proj.weight", LearnedTensor((vq, d, 1), matmul=True))]
                decoder += [(quantizer + "output_proj.weight", LearnedTensor((d, vq, 1), matmul=True))]
        extras: list[Extra] = [audio_module(prefix + name, module) for name, module in encoder]
        # the decoder turns codes back into a waveform: it never runs to read a clip, nor for a text token
        extras += [audio_module(prefix + name, module, runs="not_generating") for name, module in decoder]
        return Tower((), tuple(extras), d, None, checkpoint_extras=(self.codebooks(prefix),))

    def codebooks(self, prefix: str) -> CheckpointExtra:
        """Every codebook's persistent buffers: initialized [1], cluster_usage [codebook_size] and embed_sum
        [codebook_size, codebook_dim]."""
        size, dim = self.codebook_size, self.codebook_dim or self.hidden_size
        tensors = []
        for kind, count in self.quantizers():
            for index in range(count):
                book = f"{prefix}quantizer.{kind}_residual_vector_quantizer.layers.{index}.codebook."
                tensors += [
                    StoredTensor(book + "initialized", (1,)),
                    StoredTensor(book + "cluster_usage", (size,)),
                    StoredTensor(book + "embed_sum", (size, dim)),
                ]
        reason = (
            f"each of the {self.num_quantizers} codebooks of the codec's quantizer is kept as persistent buffers "
            "(embed_sum over cluster_usage is the codebook): saved with every checkpoint, not parameters"
        )
        return CheckpointExtra(name="Mimi codebooks", reason=reason, tensors=tuple(tensors), buffer=True)
