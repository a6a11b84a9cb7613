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

from pydantic import AliasChoices, Field

from ..schema import HeadCount, LayerCount, PositionCount, Width, derives
from ..spec import (
    Attention,
    CheckpointExtra,
    DenseFfn,
    Layer,
    Linear,
    Norm,
    Parameter,
    Projection,
    StoredTensor,
    names,
)
from ..values import replace
from .registry import tower
from .towers import Tower, TowerConfig, audio_module

GRANITE_SPEECH_ATTENTION = names(q="attn.to_q", k="attn.to_kv", v="attn.to_kv", o="attn.to_out")
GRANITE_SPEECH_FFN = names(up="ff1.up_proj", down="ff1.down_proj")
GRANITE_SPEECH_NORMS = ("ff1.pre_norm", "attn.pre_norm", "conv.norm", "conv.batch_norm", "ff2.pre_norm", "post_norm")
# nn.BatchNorm1d's persistent buffers, saved with every checkpoint: running statistics per channel and a step count.
BATCH_NORM_BUFFERS = (("running_mean", True), ("running_var", True), ("num_batches_tracked", False))


@tower("granite_speech_encoder")
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

    config_class = "GraniteSpeechEncoderConfig"
    informational_fields = frozenset({"dropout"})

    input_dim: Width = Field(160, validation_alias=AliasChoices("input_dim", "num_mel_bins"))
    num_layers: LayerCount = Field(10, validation_alias=AliasChoices("num_layers", "num_hidden_layers"))
    hidden_dim: Width = Field(1024, validation_alias=AliasChoices("hidden_dim", "hidden_size"))
    feedforward_mult: Width = 4
    num_heads: HeadCount = Field(8, validation_alias=AliasChoices("num_heads", "num_attention_heads"))
    dim_head: Width | None = None
    output_dim: Width = 42
    context_size: PositionCount = 200
    max_pos_emb: PositionCount = 512
    conv_kernel_size: Width = 15
    conv_expansion_factor: Width = 2

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


@tower("granite_speech_plus_encoder")
class GraniteSpeechPlusEncoderConfig(GraniteSpeechEncoderConfig):
    """configuration_granite_speech_plus.py (GraniteSpeechPlusEncoderConfig) / modeling_granite_speech_plus.py:
    Granite Speech's encoder, which also hands on the outputs of the blocks cat_hidden_layers names, concatenated
    with its last along the features (no weights of its own: the Q-Former's encoder_hidden_size reads them)."""

    config_class = "GraniteSpeechPlusEncoderConfig"

    cat_hidden_layers: list[int] | None = None

    def tower(self, prefix: str) -> Tower:
        tower = super().tower(prefix)
        return replace(tower, hidden_size=self.hidden_dim * (len(self.cat_hidden_layers or []) + 1))
