"""Audio towers of multimodal models: counted as vision towers are (``families/vision.py``), per layer and by
stored name, under the "audio" stack and component.

Whisper's encoder as a tower (Voxtral, Qwen2-Audio): two convolutions over a fixed window of log-mel frames, a
learned position per window position, pre-LN layers; what a clip costs is counted (``flops `audio```).

The Universal Speech Model's Conformer (Gemma 3n and Gemma 4): two strided convolutions subsample the
mel spectrogram (4× in time and in frequency), a linear reads the channels × frequencies of each frame, and each
Conformer block runs a half-step FFN, local self-attention with relative positions, a light convolution
(a gated linear, a depthwise causal convolution, a linear) and a second half-step FFN, each between RMSNorms.
Their FLOPs are not counted (they read clips of any length, by a rule ffncalc does not hold).
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, model_validator

from ..schema import Flag, HeadCount, LayerCount, Name, PositionCount, Width, derives
from ..spec import (
    Attention,
    AudioInput,
    CheckpointExtra,
    Conv,
    DenseFfn,
    Layer,
    LearnedTensor,
    Linear,
    Mixer,
    Names,
    Norm,
    Parameter,
    Projection,
    StoredTensor,
    Table,
    names,
)
from ..values import replace
from .bart import BART_MLP, SELF_ATTENTION
from .blocks import LLAMA_ATTENTION, LLAMA_MLP, encoder_layer
from .registry import tower
from .towers import Tower, TowerConfig, audio_module

# WhisperFeatureExtractor (feature_extraction_whisper.py, transformers 5.24): sampling_rate 16,000, hop_length 160.
WHISPER_FRAMES_PER_SECOND = 16_000 // 160


def whisper_encoder_layer(name: str, hidden: int, heads: int, ffn: int, activation: str, k_bias: bool = False) -> Layer:
    """WhisperEncoderLayer and its descendants: pre-LN, q, v and out_proj biased (k_proj too when K_BIAS), fc1 and fc2
    biased, self_attn_layer_norm and final_layer_norm."""
    return encoder_layer(
        name,
        hidden,
        heads,
        ffn,
        activation,
        attention_names=SELF_ATTENTION,
        ffn_names=BART_MLP,
        norm_names=("self_attn_layer_norm", "final_layer_norm"),
        norm_kind="layernorm",
        bias=True,
        gated=False,
        k_bias=k_bias,
        stack="audio",
    )


def whisper_encoder_tower(
    prefix: str, hidden: int, layers: int, heads: int, ffn: int, activation: str, mel_bins: int, positions: int
) -> Tower:
    """Whisper's encoder (WhisperEncoder's layout) under PREFIX: conv1 (mel_bins → hidden, 3 taps) at every frame and
    conv2 (hidden → hidden, 3 taps, stride 2) at every position, with biases; a table of POSITIONS rows; pre-LN layers
    (q, v, out_proj biased, k_proj not; fc1, fc2 biased; two LayerNorms); a final LayerNorm. It reads exactly
    2 · POSITIONS frames (its forward refuses any other length): one window, 30 s at 1,500 positions."""
    norm = Norm("layernorm", hidden, bias=True)
    layer = whisper_encoder_layer(prefix + "layers.{i}", hidden, heads, ffn, activation)
    extras = (
        audio_module(prefix + "conv1.weight", LearnedTensor((hidden, mel_bins, 3), matmul=True)),
        audio_module(prefix + "conv1.bias", LearnedTensor((hidden,))),
        audio_module(
            prefix + "conv2.weight", LearnedTensor((hidden, hidden, 3), matmul=True), runs="per_audio_position"
        ),
        audio_module(prefix + "conv2.bias", LearnedTensor((hidden,)), runs="per_audio_position"),
        audio_module(prefix + "embed_positions", Table(positions, hidden), runs="per_audio_position"),
        audio_module(prefix + "layer_norm", norm, runs="per_audio_position"),
    )
    audio = AudioInput(
        frames=2 * positions, frames_per_second=WHISPER_FRAMES_PER_SECOND, positions=positions, stack="audio"
    )
    return Tower((layer,) * layers, extras, hidden, None, audio=audio)


@tower("voxtral_encoder", transformers="VoxtralEncoderConfig")
class VoxtralEncoderConfig(TowerConfig):
    """configuration_voxtral.py (VoxtralEncoderConfig) / modeling_voxtral.py (VoxtralEncoder): Whisper's encoder,
    whose output the wrapper regroups (see VoxtralConfig)."""

    hidden_size: Width
    intermediate_size: Width
    num_hidden_layers: LayerCount
    num_attention_heads: HeadCount
    activation_function: Name
    num_mel_bins: Width
    max_source_positions: PositionCount

    def tower(self, prefix: str) -> Tower:
        return whisper_encoder_tower(
            prefix, self.hidden_size, self.num_hidden_layers, self.num_attention_heads, self.intermediate_size,
            self.activation_function, self.num_mel_bins, self.max_source_positions,
        )  # fmt: skip


@tower("qwen2_audio_encoder", transformers="Qwen2AudioEncoderConfig")
class Qwen2AudioEncoderConfig(TowerConfig):
    """configuration_qwen2_audio.py (Qwen2AudioEncoderConfig) / modeling_qwen2_audio.py (Qwen2AudioEncoder):
    Whisper's encoder, its last layer's output average-pooled two positions into one (AvgPool1d(2, stride 2), no
    weights) before the final LayerNorm."""

    d_model: Width
    encoder_ffn_dim: Width
    encoder_layers: LayerCount
    encoder_attention_heads: HeadCount
    activation_function: Name
    num_mel_bins: Width
    max_source_positions: PositionCount

    def tower(self, prefix: str) -> Tower:
        tower = whisper_encoder_tower(
            prefix, self.d_model, self.encoder_layers, self.encoder_attention_heads, self.encoder_ffn_dim,
            self.activation_function, self.num_mel_bins, self.max_source_positions,
        )  # fmt: skip
        assert tower.audio is not None
        return replace(tower, audio=replace(tower.audio, tokens=self.max_source_positions // 2))


@tower("audioflamingo3_encoder", transformers="AudioFlamingo3EncoderConfig")
class AudioFlamingo3EncoderConfig(VoxtralEncoderConfig):
    """configuration_audioflamingo3.py (AudioFlamingo3EncoderConfig) / modular_audioflamingo3.py
    (AudioFlamingo3Encoder, a Qwen2AudioEncoder): Whisper's encoder under Voxtral's field names, its last layer's
    output average-pooled two positions into one before the final LayerNorm. Music Flamingo's tower too."""

    def tower(self, prefix: str) -> Tower:
        tower = super().tower(prefix)
        assert tower.audio is not None
        return replace(tower, audio=replace(tower.audio, tokens=self.max_source_positions // 2))


OMNIASR_ATTENTION = names(q="attention.q_proj", k="attention.k_proj", v="attention.v_proj", o="attention.out_proj")
OMNIASR_MLP = names(up="feed_forward.intermediate_dense", down="feed_forward.output_dense")


@tower("omniasr_audio", transformers="OmniASRAudioConfig")
class OmniASRAudioConfig(TowerConfig):
    """configuration_omniasr.py (OmniASRAudioConfig) / modeling_omniasr.py (OmniASRAudioModel): wav2vec 2.0's encoder
    over the raw waveform: a convolution per entry of conv_dim (1 → conv_dim[0] → …, kernels conv_kernel, strides
    conv_stride, biased where conv_bias, each followed by a LayerNorm of its channels), a LayerNorm and projection
    (conv_dim[-1] → hidden, with bias), a grouped positional convolution (hidden → hidden, num_conv_pos_embeddings
    taps in num_conv_pos_embedding_groups groups, with bias), pre-LN layers (q, k, v, out_proj and both FFN linears
    biased; two LayerNorms) and a final LayerNorm. Its convolutions run at as many rates as they have strides, and it
    reads clips of any length: no fixed-window rule."""

    informational_fields = frozenset({"layer_norm_eps"})

    hidden_size: Width
    conv_dim: Annotated[list[Width], Field(min_length=1)]
    conv_kernel: Annotated[list[Width], Field(min_length=1)]
    conv_stride: Annotated[list[Width], Field(min_length=1)]
    conv_bias: Flag
    num_attention_heads: HeadCount
    num_hidden_layers: LayerCount
    num_conv_pos_embeddings: Width
    num_conv_pos_embedding_groups: Width
    intermediate_size: Width
    hidden_act: Name

    @model_validator(mode="after")
    def _check_convolutions(self) -> OmniASRAudioConfig:
        if not len(self.conv_dim) == len(self.conv_kernel) == len(self.conv_stride):
            raise ValueError(
                f"conv_dim, conv_kernel and conv_stride must be as long as each other (transformers refuses it): "
                f"{len(self.conv_dim)}, {len(self.conv_kernel)}, {len(self.conv_stride)}"
            )
        if self.hidden_size % self.num_conv_pos_embedding_groups:
            raise ValueError(
                f"num_conv_pos_embedding_groups {self.num_conv_pos_embedding_groups} must divide hidden_size "
                f"{self.hidden_size} (torch refuses such a grouped convolution)"
            )
        return self

    def tower(self, prefix: str) -> Tower:
        hidden, heads = self.hidden_size, self.num_attention_heads
        layer = encoder_layer(
            prefix + "layers.{i}",
            hidden,
            heads,
            self.intermediate_size,
            self.hidden_act,
            attention_names=OMNIASR_ATTENTION,
            ffn_names=OMNIASR_MLP,
            norm_names=("layer_norm", "final_layer_norm"),
            norm_kind="layernorm",
            bias=True,
            gated=False,
            stack="audio",
        )
        subsampling = prefix + "subsampling."
        extras = []
        for index, (channels, kernel) in enumerate(zip(self.conv_dim, self.conv_kernel, strict=True)):
            conv = f"{subsampling}conv_layers.{index}."
            in_channels = self.conv_dim[index - 1] if index else 1
            extras.append(
                audio_module(conv + "conv.weight", LearnedTensor((channels, in_channels, kernel), matmul=True))
            )
            if self.conv_bias:
                extras.append(audio_module(conv + "conv.bias", LearnedTensor((channels,))))
            extras.append(audio_module(conv + "layer_norm", Norm("layernorm", channels, bias=True)))
        last, groups, taps = self.conv_dim[-1], self.num_conv_pos_embedding_groups, self.num_conv_pos_embeddings
        extras += [
            audio_module(subsampling + "layer_norm", Norm("layernorm", last, bias=True)),
            audio_module(subsampling + "projection", Linear(last, hidden, True)),
            audio_module(
                prefix + "encode_positions.conv.weight", LearnedTensor((hidden, hidden // groups, taps), matmul=True)
            ),
            audio_module(prefix + "encode_positions.conv.bias", LearnedTensor((hidden,))),
            audio_module(prefix + "layer_norm", Norm("layernorm", hidden, bias=True)),
        ]
        return Tower((layer,) * self.num_hidden_layers, tuple(extras), hidden, None)


# WhisperFeatureExtractor's defaults (chunk_length 30 s at 100 frames a second): the window GLM-ASR's processor cuts
# and pads every clip into; conv2 (stride 2, padding 1) leaves (3,000 − 1) // 2 + 1 = 1,500 positions of it.
WHISPER_WINDOW_FRAMES = 30 * WHISPER_FRAMES_PER_SECOND
GLMASR_ATTENTION = names(q="self_attn.q_proj", k="self_attn.k_proj", v="self_attn.v_proj", o="self_attn.o_proj")
GLMASR_MLP = names(up="mlp.fc1", down="mlp.fc2")


@tower("glmasr_encoder", transformers="GlmAsrEncoderConfig")
class GlmAsrEncoderConfig(TowerConfig):
    """configuration_glmasr.py (GlmAsrEncoderConfig) / modeling_glmasr.py (GlmAsrEncoder): Whisper's two
    convolutions (conv1 num_mel_bins → hidden, 3 taps; conv2 hidden → hidden, 3 taps, stride 2; with biases), no
    position table (rotary positions over half of each head), pre-LN layers of grouped-query attention (heads of
    hidden // heads; q, v and o_proj biased, k_proj not) and an MLP fc1, fc2 with biases, two LayerNorms each, a final
    LayerNorm. Its processor cuts a clip into windows of 30 s that the feature extractor pads to 3,000 frames."""

    informational_fields = frozenset({"max_position_embeddings", "rope_parameters"})

    hidden_size: Width
    intermediate_size: Width
    num_hidden_layers: LayerCount
    num_attention_heads: HeadCount
    num_key_value_heads: HeadCount | None
    hidden_act: Name
    num_mel_bins: Width

    @property
    @derives("num_key_value_heads", "num_attention_heads")
    def kv_heads(self) -> int:
        """num_key_value_heads, else every head (GlmAsrEncoderConfig.__post_init__)."""
        return self.num_key_value_heads or self.num_attention_heads

    def tower(self, prefix: str) -> Tower:
        hidden, heads = self.hidden_size, self.num_attention_heads
        head_dim = hidden // heads
        attention = Attention(
            hidden, heads, self.kv_heads, head_dim, head_dim, GLMASR_ATTENTION, True, False, True, True
        )
        norm = Norm("layernorm", hidden, bias=True)
        layer = Layer(
            prefix + "layers.{i}",
            attention,
            DenseFfn(hidden, self.intermediate_size, False, self.hidden_act, GLMASR_MLP, bias=True),
            (("input_layernorm", norm), ("post_attention_layernorm", norm)),
            stack="audio",
        )
        extras = (
            audio_module(prefix + "conv1.weight", LearnedTensor((hidden, self.num_mel_bins, 3), matmul=True)),
            audio_module(prefix + "conv1.bias", LearnedTensor((hidden,))),
            audio_module(
                prefix + "conv2.weight", LearnedTensor((hidden, hidden, 3), matmul=True), runs="per_audio_position"
            ),
            audio_module(prefix + "conv2.bias", LearnedTensor((hidden,)), runs="per_audio_position"),
            audio_module(prefix + "norm", norm, runs="per_audio_position"),
        )
        positions = (WHISPER_WINDOW_FRAMES - 1) // 2 + 1
        audio = AudioInput(WHISPER_WINDOW_FRAMES, WHISPER_FRAMES_PER_SECOND, positions, "audio")
        return Tower((layer,) * self.num_hidden_layers, extras, hidden, None, audio=audio)


@tower("qwen3_asr_encoder", transformers="Qwen3ASREncoderConfig")
class Qwen3ASREncoderConfig(TowerConfig):
    """configuration_qwen3_asr.py (Qwen3ASREncoderConfig) / modeling_qwen3_asr.py (Qwen3ASREncoder): three
    convolutions of 3 × 3, stride 2 (1 → downsample_hidden_size → itself → itself, with biases), conv_out (the
    channels × the mel bins left → d_model, no bias), sinusoidal positions (a buffer, not saved), Whisper's
    pre-LN layers with a bias on every projection (k_proj too) and ln_post. It reads chunks of 2 · n_window
    frames attending within windows of n_window_infer frames, whose last may be short: no fixed-window rule."""

    informational_fields = frozenset({"n_window", "n_window_infer", "max_position_embeddings", "scale_embedding"})

    d_model: Width
    encoder_ffn_dim: Width
    encoder_layers: LayerCount
    encoder_attention_heads: HeadCount
    activation_function: Name
    num_mel_bins: Width
    downsample_hidden_size: Width
    output_dim: Width

    def frequencies(self) -> int:
        """The mel bins left after the three stride-2 convolutions (padding 1, kernel 3): f ← (f + 1) // 2, thrice."""
        bins = self.num_mel_bins
        for _ in range(3):
            bins = (bins + 1) // 2
        return bins

    def tower(self, prefix: str) -> Tower:
        hidden, heads, channels = self.d_model, self.encoder_attention_heads, self.downsample_hidden_size
        norm = Norm("layernorm", hidden, bias=True)
        layer = whisper_encoder_layer(
            prefix + "layers.{i}", hidden, heads, self.encoder_ffn_dim, self.activation_function, k_bias=True
        )
        convs = tuple(
            module
            for index, in_channels in ((1, 1), (2, channels), (3, channels))
            for module in (
                audio_module(
                    f"{prefix}conv2d{index}.weight", LearnedTensor((channels, in_channels, 3, 3), matmul=True)
                ),
                audio_module(f"{prefix}conv2d{index}.bias", LearnedTensor((channels,))),
            )
        )
        extras = convs + (
            audio_module(prefix + "conv_out", Linear(channels * self.frequencies(), hidden), runs="per_audio_position"),
            audio_module(prefix + "ln_post", norm, runs="per_audio_position"),
        )
        return Tower((layer,) * self.encoder_layers, extras, hidden, None)


@tower("voxtral_realtime_encoder", transformers="VoxtralRealtimeEncoderConfig")
class VoxtralRealtimeEncoderConfig(TowerConfig):
    """configuration_voxtral_realtime.py (VoxtralRealtimeEncoderConfig) / modeling_voxtral_realtime.py
    (VoxtralRealtimeEncoder): two causal convolutions (embedder.conv1 num_mel_bins → hidden, 3 taps; conv2 hidden →
    hidden, 3 taps, stride 2; with biases), layers of causal attention within sliding_window positions (heads of
    head_dim, as many key-value heads; q, v and o_proj biased, k_proj not; rotary positions, no table) and a gated
    MLP (hidden_act; only down_proj biased), two RMSNorms each, a final RMSNorm. It streams clips of any length:
    no fixed-window rule."""

    informational_fields = frozenset({"vocab_size", "activation_function", "max_position_embeddings", "use_cache"})

    hidden_size: Width
    intermediate_size: Width
    num_hidden_layers: LayerCount
    num_attention_heads: HeadCount
    head_dim: Width
    hidden_act: Name
    num_mel_bins: Width
    sliding_window: Width

    def tower(self, prefix: str) -> Tower:
        hidden, heads, head_dim = self.hidden_size, self.num_attention_heads, self.head_dim
        attention = Attention(
            hidden,
            heads,
            heads,
            head_dim,
            head_dim,
            LLAMA_ATTENTION,
            True,
            False,
            True,
            True,
            window=self.sliding_window,
        )
        norm = Norm("rmsnorm", hidden)
        layer = Layer(
            prefix + "layers.{i}",
            attention,
            DenseFfn(hidden, self.intermediate_size, True, self.hidden_act, LLAMA_MLP),
            (("self_attn_layer_norm", norm), ("final_layer_norm", norm)),
            stack="audio",
            parameters=(Parameter("audio", "down_bias", "mlp.down_proj.bias", (hidden,)),),
        )
        embedder = prefix + "embedder."
        extras = (
            audio_module(embedder + "conv1.weight", LearnedTensor((hidden, self.num_mel_bins, 3), matmul=True)),
            audio_module(embedder + "conv1.bias", LearnedTensor((hidden,))),
            audio_module(
                embedder + "conv2.weight", LearnedTensor((hidden, hidden, 3), matmul=True), runs="per_audio_position"
            ),
            audio_module(embedder + "conv2.bias", LearnedTensor((hidden,)), runs="per_audio_position"),
            audio_module(prefix + "norm", norm, runs="per_audio_position"),
        )
        return Tower((layer,) * self.num_hidden_layers, extras, hidden, None)


def conformer_layer(
    name: str,
    hidden: int,
    heads: int,
    kernel: int,
    activation: str,
    *,
    attention_names: Names,
    ffn_names: tuple[Names, Names],
    light_conv: dict[str, str],
    relative_positions: str,
    per_dim_scale: str,
    norms: tuple[str, ...],
) -> Layer:
    """One Conformer block: FFN (hidden → 4 · hidden → hidden) twice, attention (q, k, v hidden → heads · head_dim,
    the output hidden → hidden, a projection of the relative positions hidden → heads · head_dim and a scale per
    head dimension, head_dim = hidden // heads), a light convolution (hidden → 2 · hidden gated back to hidden, a
    depthwise convolution of KERNEL taps, hidden → hidden), no biases; an RMSNorm of hidden for each of NORMS."""
    head_dim = hidden // heads
    attention = Attention(hidden, heads, heads, head_dim, head_dim, attention_names, o_input=hidden)
    first, second = (DenseFfn(hidden, 4 * hidden, False, activation, ffn) for ffn in ffn_names)
    conv = Mixer(
        "light_conv",
        projections=(
            Projection("linear_start", light_conv["linear_start"], hidden, 2 * hidden),
            Projection("linear_end", light_conv["linear_end"], hidden, hidden),
        ),
        convs=(Conv(light_conv["depthwise"], hidden, kernel, bias=False),),
        norms=tuple((light_conv[norm], Norm("rmsnorm", hidden)) for norm in ("pre_norm", "conv_norm")),
    )
    return Layer(
        name,
        attention,
        first,
        tuple((norm, Norm("rmsnorm", hidden)) for norm in norms),
        mixer=conv,
        stack="audio",
        parameters=(Parameter("audio", "per_dim_scale", per_dim_scale, (head_dim,)),),
        projections=(
            Projection("relative_positions", relative_positions, hidden, heads * head_dim, component="attention"),
            Projection("ffn2_up", second.names["up"], hidden, 4 * hidden, component="ffn"),
            Projection("ffn2_down", second.names["down"], 4 * hidden, hidden, component="ffn"),
        ),
    )


def subsampling_conv(in_channels: int, out_channels: int, kernel: tuple[int, ...]) -> LearnedTensor:
    """A 2-D convolution without bias: weight [out, in, kernel height (time), kernel width (frequency)]."""
    return LearnedTensor((out_channels, in_channels, *kernel), matmul=True)


# --- Gemma 4 --------------------------------------------------------------------------------------------

GEMMA4_AUDIO_ATTENTION = names(
    q="self_attn.q_proj.linear", k="self_attn.k_proj.linear", v="self_attn.v_proj.linear", o="self_attn.post.linear"
)
GEMMA4_AUDIO_FFNS = (
    names(up="feed_forward1.ffw_layer_1.linear", down="feed_forward1.ffw_layer_2.linear"),
    names(up="feed_forward2.ffw_layer_1.linear", down="feed_forward2.ffw_layer_2.linear"),
)
GEMMA4_AUDIO_NORMS = (
    "feed_forward1.pre_layer_norm", "feed_forward1.post_layer_norm", "norm_pre_attn", "norm_post_attn",
    "feed_forward2.pre_layer_norm", "feed_forward2.post_layer_norm", "norm_out",
)  # fmt: skip
GEMMA4_AUDIO_LIGHT_CONV = {
    "linear_start": "lconv1d.linear_start.linear",
    "linear_end": "lconv1d.linear_end.linear",
    "depthwise": "lconv1d.depthwise_conv1d",
    "pre_norm": "lconv1d.pre_layer_norm",
    "conv_norm": "lconv1d.conv_norm",
}
# Each Gemma4ClippableLinear of a layer, which saves four clipping bounds with use_clipped_linears.
GEMMA4_AUDIO_CLIPPED = (
    "self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.post",
    "feed_forward1.ffw_layer_1", "feed_forward1.ffw_layer_2", "feed_forward2.ffw_layer_1", "feed_forward2.ffw_layer_2",
    "lconv1d.linear_start", "lconv1d.linear_end",
)  # fmt: skip


@tower("gemma4_audio", transformers="Gemma4AudioConfig")
class Gemma4AudioConfig(TowerConfig):
    """configuration_gemma4.py (Gemma4AudioConfig) / modeling_gemma4.py (Gemma4AudioModel): two convolutions of 3 × 3
    (1 → subsampling_conv_channels[0] → [1], no bias, each with a LayerNorm without bias), input_proj_linear
    ([0] // 4 · [1] → hidden, as transformers builds it), Conformer blocks whose linears are Gemma4ClippableLinears
    (relative_k_proj is a plain one) and output_proj (hidden → output_proj_dims, with bias). With
    use_clipped_linears (the default) each clippable linear also saves four clipping bounds."""

    hidden_size: Width
    num_hidden_layers: LayerCount
    num_attention_heads: HeadCount
    hidden_act: Name
    subsampling_conv_channels: Annotated[list[Width], Field(min_length=2)]
    conv_kernel_size: Width
    use_clipped_linears: Flag
    output_proj_dims: Width

    def tower(self, prefix: str) -> Tower:
        hidden, layers = self.hidden_size, self.num_hidden_layers
        layer = conformer_layer(
            prefix + "layers.{i}", hidden, self.num_attention_heads, self.conv_kernel_size, self.hidden_act,
            attention_names=GEMMA4_AUDIO_ATTENTION, ffn_names=GEMMA4_AUDIO_FFNS, light_conv=GEMMA4_AUDIO_LIGHT_CONV,
            relative_positions="self_attn.relative_k_proj", per_dim_scale="self_attn.per_dim_scale", norms=GEMMA4_AUDIO_NORMS,
        )  # fmt: skip
        first, second = self.subsampling_conv_channels[:2]
        subsample = prefix + "subsample_conv_projection."
        extras = (
            audio_module(subsample + "layer0.conv.weight", subsampling_conv(1, first, (3, 3))),
            audio_module(subsample + "layer0.norm", Norm("layernorm", first)),
            audio_module(subsample + "layer1.conv.weight", subsampling_conv(first, second, (3, 3))),
            audio_module(subsample + "layer1.norm", Norm("layernorm", second)),
            audio_module(subsample + "input_proj_linear", Linear(first // 4 * second, hidden)),
            audio_module(prefix + "output_proj", Linear(hidden, self.output_proj_dims, True)),
        )
        saved: tuple[CheckpointExtra, ...] = ()
        if self.use_clipped_linears:
            bounds = tuple(
                StoredTensor(f"{prefix}layers.{{i}}.{module}.{bound}", ())
                for module in GEMMA4_AUDIO_CLIPPED
                for bound in ("input_min", "input_max", "output_min", "output_max")
            )
            reason = "use_clipped_linears: each clippable linear's bounds, saved as buffers"
            saved = (CheckpointExtra("audio clipping bounds", reason, bounds, tuple(range(layers)), buffer=True),)
        return Tower((layer,) * layers, extras, self.output_proj_dims, None, saved)


# --- Gemma 3n -------------------------------------------------------------------------------------------

GEMMA3N_AUDIO_ATTENTION = names(
    q="attention.attn.q_proj", k="attention.attn.k_proj", v="attention.attn.v_proj", o="attention.post"
)
GEMMA3N_AUDIO_FFNS = (
    names(up="ffw_layer_start.ffw_layer_1", down="ffw_layer_start.ffw_layer_2"),
    names(up="ffw_layer_end.ffw_layer_1", down="ffw_layer_end.ffw_layer_2"),
)
GEMMA3N_AUDIO_NORMS = (
    "ffw_layer_start.pre_layer_norm", "ffw_layer_start.post_layer_norm", "attention.pre_attn_norm", "attention.post_norm",
    "ffw_layer_end.pre_layer_norm", "ffw_layer_end.post_layer_norm", "norm",
)  # fmt: skip
GEMMA3N_AUDIO_LIGHT_CONV = {
    "linear_start": "lconv1d.linear_start",
    "linear_end": "lconv1d.linear_end",
    "depthwise": "lconv1d.depthwise_conv1d",
    "pre_norm": "lconv1d.pre_layer_norm",
    "conv_norm": "lconv1d.conv_norm",
}
Kernel = Annotated[list[Width], Field(min_length=2, max_length=2)]  # (time, frequency): transformers unpacks two


@tower("gemma3n_audio", transformers="Gemma3nAudioConfig")
class Gemma3nAudioConfig(TowerConfig):
    """configuration_gemma3n.py (Gemma3nAudioConfig) / modeling_gemma3n.py (Gemma3nAudioEncoder): two convolutions
    (1 → sscp_conv_channel_size[0] → [1], kernels sscp_conv_kernel_size, strides sscp_conv_stride_size, no bias,
    each with a cumulative group norm of one weight per channel), input_proj_linear (the last channels × the
    frequencies left → hidden), Conformer blocks. The wrapper's embedder (a table of vocab_size hard tokens, two
    RMSNorms, a projection) carries its output into the language model."""

    vocab_size: Width
    input_feat_size: Width
    hidden_size: Width
    conf_num_attention_heads: HeadCount
    conf_num_hidden_layers: LayerCount
    conf_conv_kernel_size: Width
    sscp_conv_channel_size: Annotated[list[Width], Field(min_length=2)]
    sscp_conv_kernel_size: Annotated[list[Kernel], Field(min_length=2)]
    sscp_conv_stride_size: Annotated[list[Kernel], Field(min_length=2)]

    def frequencies(self) -> int:
        """The mel bins left after both convolutions, each padding the frequencies by 1 on either side:
        f ← (f + 2 − kernel width) // stride width + 1, from input_feat_size."""
        bins = self.input_feat_size
        for kernel, stride in zip(self.sscp_conv_kernel_size[:2], self.sscp_conv_stride_size[:2], strict=True):
            bins = (bins + 2 - kernel[1]) // stride[1] + 1
        return bins

    def tower(self, prefix: str) -> Tower:
        hidden = self.hidden_size
        layer = conformer_layer(
            prefix + "conformer.{i}", hidden, self.conf_num_attention_heads, self.conf_conv_kernel_size, "silu",
            attention_names=GEMMA3N_AUDIO_ATTENTION, ffn_names=GEMMA3N_AUDIO_FFNS, light_conv=GEMMA3N_AUDIO_LIGHT_CONV,
            relative_positions="attention.attn.relative_position_embedding.pos_proj",
            per_dim_scale="attention.attn.per_dim_scale", norms=GEMMA3N_AUDIO_NORMS,
        )  # fmt: skip
        first, second = self.sscp_conv_channel_size[:2]
        kernels = self.sscp_conv_kernel_size
        subsample = prefix + "subsample_conv_projection."
        extras = (
            audio_module(subsample + "conv_0.conv.weight", subsampling_conv(1, first, tuple(kernels[0]))),
            audio_module(subsample + "conv_0.norm", Norm("layernorm", first)),
            audio_module(subsample + "conv_1.conv.weight", subsampling_conv(first, second, tuple(kernels[1]))),
            audio_module(subsample + "conv_1.norm", Norm("layernorm", second)),
            audio_module(subsample + "input_proj_linear", Linear(second * self.frequencies(), hidden)),
        )
        return Tower((layer,) * self.conf_num_hidden_layers, extras, hidden, None)
