"""Conformer speech encoders as audio towers (Gulati et al. 2020): each block a half-step feed-forward module,
self-attention with relative positions, a convolution module (a pointwise convolution gated by a GLU, a depthwise
convolution, a normalisation, a pointwise convolution) and a second half-step feed-forward module, each behind its
own pre-norm.

Granite Speech's encoder (modeling_granite_speech.py, GraniteSpeechCTCEncoder, after lucidrains/conformer) is the
first here: Shaw's relative positions (a learned table of 2 · max_pos_emb + 1 rows of dim_head that each query scores
against) within blocks of context_size frames, a BatchNorm in the convolution module, and a CTC side branch at the
middle layer. Its clip FLOPs are not counted: its attention's relative-position scores and its block padding are
terms ffncalc's clip arithmetic does not state.
"""

from __future__ import annotations

from ..schema import Flag, HeadCount, LayerCount, Name, PositionCount, Width, derives
from ..spec import (
    Attention,
    CheckpointExtra,
    DenseFfn,
    Layer,
    LearnedTensor,
    Linear,
    Names,
    Norm,
    Parameter,
    Projection,
    Stack,
    StoredTensor,
    names,
)
from ..values import Value, replace
from .registry import tower
from .towers import Tower, TowerConfig, audio_module

GRANITE_SPEECH_ATTENTION = names(q="attn.to_q", k="attn.to_kv", v="attn.to_kv", o="attn.to_out")
GRANITE_SPEECH_FFN = names(up="ff1.up_proj", down="ff1.down_proj")
GRANITE_SPEECH_NORMS = ("ff1.pre_norm", "attn.pre_norm", "conv.norm", "conv.batch_norm", "ff2.pre_norm", "post_norm")
# nn.BatchNorm1d's persistent buffers, saved with every checkpoint: running statistics per channel and a step count.
BATCH_NORM_BUFFERS = (("running_mean", True), ("running_var", True), ("num_batches_tracked", False))


@tower("granite_speech_encoder", transformers="GraniteSpeechEncoderConfig")
class GraniteSpeechEncoderConfig(TowerConfig):
    """configuration_granite_speech.py (GraniteSpeechEncoderConfig) / modeling_granite_speech.py
    (GraniteSpeechCTCEncoder): input_linear (input_dim → hidden_dim, with bias), Conformer blocks and, after the
    middle block (num_layers // 2), out (hidden → output_dim) and out_mid (output_dim → hidden), both with biases.

    A block: ff1 and ff2 (a LayerNorm, up_proj hidden → feedforward_mult · hidden, SiLU, down_proj back, with biases);
    attention (a LayerNorm, to_q hidden → heads · dim_head and to_kv hidden → 2 · heads · dim_head without biases,
    to_out back with bias, rel_pos_emb a table of 2 · max_pos_emb + 1 rows of dim_head) within blocks of context_size
    frames; the convolution module (a LayerNorm, up_conv a 1 × 1 convolution hidden → 2 · inner with bias, a GLU,
    depth_conv a depthwise convolution of conv_kernel_size taps over inner = conv_expansion_factor · hidden without
    bias, a BatchNorm1d of inner, down_conv a 1 × 1 convolution inner → hidden with bias); post_norm, a LayerNorm."""

    informational_fields = frozenset({"dropout"})

    input_dim: Width
    num_layers: LayerCount
    hidden_dim: Width
    feedforward_mult: Width
    num_heads: HeadCount
    dim_head: Width | None
    output_dim: Width
    context_size: PositionCount
    max_pos_emb: PositionCount
    conv_kernel_size: Width
    conv_expansion_factor: Width

    @property
    @derives("dim_head", "hidden_dim // num_heads")
    def head_width(self) -> int:
        """dim_head, else hidden_dim // num_heads (GraniteSpeechEncoderConfig.__post_init__)."""
        return self.dim_head or self.hidden_dim // self.num_heads

    def block(self, prefix: str) -> Layer:
        """One Conformer block under PREFIX (… "layers.{i}")."""
        hidden, heads, head_dim = self.hidden_dim, self.num_heads, self.head_width
        inner, wide = self.conv_expansion_factor * hidden, self.feedforward_mult * hidden
        attention = Attention(
            hidden, heads, heads, head_dim, head_dim, GRANITE_SPEECH_ATTENTION, o_bias=True,
            window=self.context_size, chunked=True,
        )  # fmt: skip
        norms = tuple(
            (name, Norm("layernorm", inner if name == "conv.batch_norm" else hidden, bias=True))
            for name in GRANITE_SPEECH_NORMS
        )
        conv = (
            Parameter("audio", "up_conv", "conv.up_conv.weight", (2 * inner, hidden, 1), matmul=True),
            Parameter("audio", "up_conv_bias", "conv.up_conv.bias", (2 * inner,)),
            Parameter("audio", "depth_conv", "conv.depth_conv.conv.weight", (inner, 1, self.conv_kernel_size), matmul=True),
            Parameter("audio", "down_conv", "conv.down_conv.weight", (hidden, inner, 1), matmul=True),
            Parameter("audio", "down_conv_bias", "conv.down_conv.bias", (hidden,)),
            Parameter("audio", "rel_pos_emb", "attn.rel_pos_emb.weight", (2 * self.max_pos_emb + 1, head_dim)),
        )  # fmt: skip
        return Layer(
            prefix,
            attention,
            DenseFfn(hidden, wide, False, "silu", GRANITE_SPEECH_FFN, bias=True),
            norms,
            stack="audio",
            parameters=conv,
            projections=(
                Projection("ffn2_up", "ff2.up_proj", hidden, wide, True, component="ffn"),
                Projection("ffn2_down", "ff2.down_proj", wide, hidden, True, component="ffn"),
            ),
        )

    def tower(self, prefix: str) -> Tower:
        hidden, layers = self.hidden_dim, self.num_layers
        extras = (
            audio_module(prefix + "input_linear", Linear(self.input_dim, hidden, True)),
            audio_module(prefix + "out", Linear(hidden, self.output_dim, True)),
            audio_module(prefix + "out_mid", Linear(self.output_dim, hidden, True)),
        )
        inner = self.conv_expansion_factor * hidden
        buffers = tuple(
            StoredTensor(f"{prefix}layers.{{i}}.conv.batch_norm.{name}", (inner,) if per_channel else ())
            for name, per_channel in BATCH_NORM_BUFFERS
        )
        saved = CheckpointExtra(
            "BatchNorm statistics",
            "each convolution module's BatchNorm1d keeps running statistics and a step count: persistent buffers",
            buffers,
            tuple(range(layers)),
            buffer=True,
        )
        return Tower((self.block(prefix + "layers.{i}"),) * layers, extras, hidden, None, (saved,))


@tower("granite_speech_plus_encoder", transformers="GraniteSpeechPlusEncoderConfig")
class GraniteSpeechPlusEncoderConfig(GraniteSpeechEncoderConfig):
    """configuration_granite_speech_plus.py (GraniteSpeechPlusEncoderConfig) / modeling_granite_speech_plus.py:
    Granite Speech's encoder, which also hands on the outputs of the blocks cat_hidden_layers names, concatenated
    with its last along the features (no weights of its own: the Q-Former's encoder_hidden_size reads them)."""

    cat_hidden_layers: list[int] | None

    def tower(self, prefix: str) -> Tower:
        tower = super().tower(prefix)
        return replace(tower, hidden_size=self.hidden_dim * (len(self.cat_hidden_layers or []) + 1))


# --- Parakeet (NVIDIA NeMo's FastConformer) --------------------------------------------------------------

PARAKEET_ATTENTION = names(q="self_attn.q_proj", k="self_attn.k_proj", v="self_attn.v_proj", o="self_attn.o_proj")
PARAKEET_FFN = names(up="feed_forward1.linear1", down="feed_forward1.linear2")
PARAKEET_NORMS = ("norm_feed_forward1", "norm_self_att", "norm_conv", "norm_feed_forward2", "norm_out")


class FastConformerNames(Value):
    """Where a FastConformer's modules are saved: Parakeet's names, or NeMo's where a conversion mapping reverts them."""

    attention: Names = PARAKEET_ATTENTION
    relative_k: str = "self_attn.relative_k_proj"
    bias_u: str = "self_attn.bias_u"
    bias_v: str = "self_attn.bias_v"
    batch_norm: str = "conv.norm"
    subsampling_convs: str = "subsampling.layers."
    subsampling_linear: str = "subsampling.linear"


PARAKEET_NAMES = FastConformerNames()
# conversion_mapping.py's "cohere_asr" renamings (transformers 5.24), reverted as save_pretrained writes them.
NEMO_NAMES = FastConformerNames(
    attention=names(q="self_attn.linear_q", k="self_attn.linear_k", v="self_attn.linear_v", o="self_attn.linear_out"),
    relative_k="self_attn.linear_pos",
    bias_u="self_attn.pos_bias_u",
    bias_v="self_attn.pos_bias_v",
    batch_norm="conv.batch_norm",
    subsampling_convs="pre_encode.conv.",
    subsampling_linear="pre_encode.out",
)


@tower("parakeet_encoder", transformers="ParakeetEncoderConfig")
class ParakeetEncoderConfig(TowerConfig):
    """configuration_parakeet.py (ParakeetEncoderConfig) / modeling_parakeet.py (ParakeetEncoder): a subsampling of
    log2(subsampling_factor) 2-D convolutions of subsampling_conv_kernel_size, stride subsampling_conv_stride (1 →
    channels, then a depthwise and a 1 × 1 convolution of the channels for each further halving; all biased), a linear
    (channels · the mel bins left → hidden, biased), sinusoidal relative positions (an unsaved buffer) and FastConformer
    blocks: feed_forward1 and feed_forward2 (linear1 hidden → intermediate, linear2 back, biased where
    attention_bias), self-attention (q, k, v, o biased where attention_bias, as many key-value heads as heads, of
    hidden // heads; relative_k_proj hidden → heads · head_dim without bias; bias_u and bias_v, [heads, head_dim]),
    the convolution module (pointwise_conv1 hidden → 2 · hidden, a depthwise convolution of conv_kernel_size taps,
    a BatchNorm1d, pointwise_conv2 hidden → hidden, biased where convolution_bias) and five LayerNorms."""

    informational_fields = frozenset({"max_position_embeddings", "scale_input"})

    hidden_size: Width
    num_hidden_layers: LayerCount
    num_attention_heads: HeadCount
    intermediate_size: Width
    hidden_act: Name
    attention_bias: Flag
    convolution_bias: Flag
    conv_kernel_size: Width
    subsampling_factor: Width
    subsampling_conv_channels: Width
    num_mel_bins: Width
    subsampling_conv_kernel_size: Width
    subsampling_conv_stride: Width
    max_position_embeddings: PositionCount
    scale_input: Flag

    def block(self, name: str, stack: Stack, saved: FastConformerNames = PARAKEET_NAMES) -> Layer:
        """One FastConformer block stored as NAME (… "layers.{i}"), in STACK, its modules under SAVED's names."""
        hidden, heads, bias, conv_bias = (
            self.hidden_size,
            self.num_attention_heads,
            self.attention_bias,
            self.convolution_bias,
        )
        head_dim = hidden // heads
        attention = Attention(hidden, heads, heads, head_dim, head_dim, saved.attention, bias, bias, bias, bias)
        norm = Norm("layernorm", hidden, bias=True)
        parameters = [
            Parameter("attention", "bias_u", saved.bias_u, (heads, head_dim)),
            Parameter("attention", "bias_v", saved.bias_v, (heads, head_dim)),
            Parameter("mixer", "pointwise_conv1", "conv.pointwise_conv1.weight", (2 * hidden, hidden, 1), matmul=True),
            Parameter("mixer", "depthwise_conv", "conv.depthwise_conv.weight", (hidden, 1, self.conv_kernel_size), matmul=True),
            Parameter("mixer", "pointwise_conv2", "conv.pointwise_conv2.weight", (hidden, hidden, 1), matmul=True),
        ]  # fmt: skip
        if conv_bias:
            parameters += [
                Parameter("mixer", "pointwise_conv1_bias", "conv.pointwise_conv1.bias", (2 * hidden,)),
                Parameter("mixer", "depthwise_conv_bias", "conv.depthwise_conv.bias", (hidden,)),
                Parameter("mixer", "pointwise_conv2_bias", "conv.pointwise_conv2.bias", (hidden,)),
            ]
        inner = self.intermediate_size
        return Layer(
            name,
            attention,
            DenseFfn(hidden, inner, False, self.hidden_act, PARAKEET_FFN, bias=bias),
            tuple((module, norm) for module in PARAKEET_NORMS) + ((saved.batch_norm, norm),),
            stack=stack,
            parameters=tuple(parameters),
            projections=(
                Projection("relative_k", saved.relative_k, hidden, heads * head_dim, component="attention"),
                Projection("ffn2_up", "feed_forward2.linear1", hidden, inner, bias, component="ffn"),
                Projection("ffn2_down", "feed_forward2.linear2", inner, hidden, bias, component="ffn"),
            ),
        )

    def halvings(self) -> int:
        """The subsampling's strided convolutions: int(log2(subsampling_factor)), as transformers takes it."""
        return max(self.subsampling_factor.bit_length() - 1, 0)

    def subsampling(
        self, prefix: str, saved: FastConformerNames = PARAKEET_NAMES
    ) -> list[tuple[str, LearnedTensor | Linear]]:
        """The subsampling's modules under PREFIX ("…encoder."): ModuleList indices count its ReLUs too."""
        convs = prefix + saved.subsampling_convs
        channels, kernel, stride = (
            self.subsampling_conv_channels,
            self.subsampling_conv_kernel_size,
            self.subsampling_conv_stride,
        )
        found: list[tuple[str, LearnedTensor | Linear]] = [
            (f"{convs}0.weight", LearnedTensor((channels, 1, kernel, kernel), matmul=True)),
            (f"{convs}0.bias", LearnedTensor((channels,))),
        ]  # fmt: skip
        for step in range(self.halvings() - 1):
            depthwise, pointwise = 2 + 3 * step, 3 + 3 * step
            found += [
                (f"{convs}{depthwise}.weight", LearnedTensor((channels, 1, kernel, kernel), matmul=True)),
                (f"{convs}{depthwise}.bias", LearnedTensor((channels,))),
                (f"{convs}{pointwise}.weight", LearnedTensor((channels, channels, 1, 1), matmul=True)),
                (f"{convs}{pointwise}.bias", LearnedTensor((channels,))),
            ]
        bins = self.num_mel_bins // stride ** self.halvings()
        return found + [(prefix + saved.subsampling_linear, Linear(channels * bins, self.hidden_size, True))]

    def batch_norm_buffers(self, prefix: str, saved: FastConformerNames = PARAKEET_NAMES) -> CheckpointExtra:
        """Each convolution module's BatchNorm1d statistics and step count, persistent buffers."""
        buffers = tuple(
            StoredTensor(f"{prefix}layers.{{i}}.{saved.batch_norm}.{name}", (self.hidden_size,) if per_channel else ())
            for name, per_channel in BATCH_NORM_BUFFERS
        )
        reason = "each convolution module's BatchNorm1d keeps running statistics and a step count: persistent buffers"
        return CheckpointExtra(
            "BatchNorm statistics", reason, buffers, tuple(range(self.num_hidden_layers)), buffer=True
        )

    def tower(self, prefix: str) -> Tower:
        layers = (self.block(prefix + "layers.{i}", "audio"),) * self.num_hidden_layers
        extras = tuple(audio_module(name, module) for name, module in self.subsampling(prefix))
        return Tower(layers, extras, self.hidden_size, None, (self.batch_norm_buffers(prefix),))
