"""Falcon (7B, 40B, 180B): multi-query or grouped KV heads, parallel attention and FFN; and Falcon-H1, whose every
layer runs a Mamba-2 mixer and attention side by side. (Falcon-Mamba, a pure Mamba, is in families/mamba.py.)"""

from __future__ import annotations

from typing import Literal

from pydantic import AliasChoices, Field

from ..schema import Flag, HeadCount, LayerCount, Name, PositionCount, Width, derives, ungroupable
from ..spec import Layer, ModelNames, ModelSpec, Norm, names
from .base import (
    AttentionBias,
    DecoderConfig,
    FfnWidth,
    HeadDim,
    HiddenAct,
    HiddenLayers,
    LayerNormDecoder,
    MlpBias,
    TiedEmbeddings,
)
from .blocks import MambaHeads, heads_divide, mamba_heads_check
from .mixers import mamba2, mamba2_names
from .registry import family

FALCON_ATTENTION = names(
    q="self_attention.query_key_value",
    k="self_attention.query_key_value",
    v="self_attention.query_key_value",
    o="self_attention.dense",
)
FALCON_MLP = names(up="mlp.dense_h_to_4h", down="mlp.dense_4h_to_h")


@family("falcon")
class FalconConfig(LayerNormDecoder):
    """configuration_falcon.py / modeling_falcon.py.

    KV heads: num_kv_heads with new_decoder_architecture, 1 with multi_query, else all heads.
    Norms: ln_attn and ln_mlp (new architecture, two in parallel), one input_layernorm
    (parallel_attn), or input and post-attention (sequential). Biases follow ``bias``.
    """

    architecture = "Falcon"
    config_class = "FalconConfig"
    default_model_class = "FalconForCausalLM"
    informational_fields = frozenset({"max_position_embeddings"})

    vocab_size: Width = 65024
    hidden_size: Width = Field(4544, validation_alias=AliasChoices("hidden_size", "n_embed"))
    num_hidden_layers: LayerCount = Field(32, validation_alias=AliasChoices("num_hidden_layers", "n_layer"))
    num_attention_heads: HeadCount = Field(71, validation_alias=AliasChoices("num_attention_heads", "n_head"))
    num_ln_in_parallel_attn: LayerCount | None = None
    num_kv_heads: HeadCount | None = None
    alibi: Flag = False
    new_decoder_architecture: Flag = False
    multi_query: Flag = True
    parallel_attn: Flag = True
    bias: Flag = False
    max_position_embeddings: PositionCount = 2048
    ffn_hidden_size: Width | None = None
    activation: Name = "gelu"
    tie_word_embeddings: Flag = True
    _check_heads = heads_divide("hidden_size", "num_attention_heads")

    @property
    def width(self) -> int:
        return self.hidden_size

    @derives("num_kv_heads", "num_attention_heads")
    def grouped_kv_heads(self) -> int:
        return self.num_kv_heads or self.num_attention_heads

    @derives("ffn_hidden_size", "4 · hidden_size")
    def ffn_width(self) -> int:
        return self.ffn_hidden_size or 4 * self.hidden_size

    def kv_heads(self) -> int:
        if self.new_decoder_architecture:
            return self.num_kv_heads or self.num_attention_heads
        return 1 if self.multi_query else self.num_attention_heads

    def warnings(self) -> list[str]:
        # modeling_falcon.py (new_decoder_architecture) views the fused projection as num_heads // num_kv_heads + 2
        # heads per KV head; only that architecture reads num_kv_heads for its weights.
        found = super().warnings()
        if not self.new_decoder_architecture:
            return found
        return found + ungroupable(self.num_attention_heads, self.kv_heads(), "num_attention_heads", "num_kv_heads")

    def norms(self) -> tuple[tuple[str, Norm], ...]:
        norm = self.layer_norm()
        if not self.parallel_attn:
            return (("input_layernorm", norm), ("post_attention_layernorm", norm))
        two = self.num_ln_in_parallel_attn or (2 if self.new_decoder_architecture else 1)
        return (("ln_attn", norm), ("ln_mlp", norm)) if two == 2 else (("input_layernorm", norm),)

    def to_spec(self) -> ModelSpec:
        ffn = self.plain_ffn(self.ffn_hidden_size or 4 * self.width, self.activation, self.bias, FALCON_MLP)
        attention = self.mha(self.num_attention_heads, self.bias, FALCON_ATTENTION, kv_heads=self.kv_heads())
        layer = Layer(self.layer_name, attention, ffn, self.norms())
        return self.decoder_spec(
            layer,
            self.num_hidden_layers,
            self.layer_norm(),
            self.tie_word_embeddings,
            vocab_size=self.vocab_size,
            names=ModelNames("transformer.word_embeddings", "transformer.ln_f", base_model_prefix="transformer"),
        )


# --- Falcon-H1: attention and a Mamba-2 mixer in parallel in every layer ---------------------------------

FALCON_H1_MAMBA = mamba2_names("mamba.")


@family("falcon_h1")
class FalconH1Config(
    HeadDim, HiddenAct, AttentionBias, MlpBias, MambaHeads, TiedEmbeddings, FfnWidth, HiddenLayers, DecoderConfig
):
    """configuration_falcon_h1.py / modeling_falcon_h1.py.

    Every layer feeds its input_layernorm's output to Llama-style attention (attention_bias) and to a Mamba-2
    mixer at once, adds both, then a pre_ff_layernorm and a gated MLP (feed_forward, mlp_bias). The mixer is
    mamba_d_ssm wide (None: mamba_expand · hidden_size), in mamba_n_heads heads of mamba_d_head ("auto": the
    width / heads; transformers refuses a head width that does not tile it); in_proj follows mamba_proj_bias,
    out_proj projectors_bias, and its gated RMSNorm exists only with mamba_rms_norm. The μP multipliers scale
    activations, not parameters.
    """

    architecture = "Falcon-H1"
    config_class = "FalconH1Config"
    default_model_class = "FalconH1ForCausalLM"
    heads_divide_hidden = False  # the attention reads head_dim, else floors hidden_size // num_attention_heads
    undeclared_keys = frozenset({"head_dim"})  # read by the modeling code with getattr
    mlp_names = names(gate="feed_forward.gate_proj", up="feed_forward.up_proj", down="feed_forward.down_proj")
    model_names = ModelNames(embed_tokens="model.embed_tokens", final_norm="model.final_layernorm")

    vocab_size: Width = 128000
    hidden_size: Width = 4096
    intermediate_size: Width = 14336
    num_hidden_layers: LayerCount = 32
    num_attention_heads: HeadCount = 32
    num_key_value_heads: HeadCount | None = 8
    max_position_embeddings: PositionCount = 8192
    pad_token_id: int | None = Field(0, strict=True)
    mamba_d_ssm: Width | None = 1024
    mamba_n_heads: HeadCount = 128
    mamba_d_head: Width | Literal["auto"] = "auto"
    mamba_n_groups: HeadCount = 1
    mamba_d_state: Width = 256
    mamba_d_conv: Width = 4
    mamba_expand: Width = 2
    mamba_conv_bias: Flag = True
    mamba_proj_bias: Flag = False
    mamba_rms_norm: Flag = False
    projectors_bias: Flag = False

    _check_mamba_heads = mamba_heads_check()

    def unused_fields(self) -> set[str]:
        return {"mamba_expand"} if self.mamba_d_ssm is not None else set()

    @derives(
        "mamba_d_head", "the mixer's width (mamba_d_ssm, or mamba_expand · hidden_size) / mamba_n_heads", when="auto"
    )
    def mamba_head_dim(self) -> int:
        return super().mamba_head_dim()

    def mamba_inner(self) -> int:
        """The mixer's width: mamba_d_ssm, else mamba_expand · hidden_size."""
        return self.mamba_expand * self.hidden_size if self.mamba_d_ssm is None else self.mamba_d_ssm

    def build_layer(self, index: int, window: int | None) -> Layer:
        mixer = mamba2(
            self.hidden_size,
            self.mamba_n_heads,
            self.mamba_head_dim(),
            self.mamba_n_groups,
            self.mamba_d_state,
            self.mamba_d_conv,
            FALCON_H1_MAMBA,
            proj_bias=self.mamba_proj_bias,
            conv_bias=self.mamba_conv_bias,
            out_proj_bias=self.projectors_bias,
            gated_norm=self.mamba_rms_norm,
        )
        norm = self.rms_norm()
        norms = (("input_layernorm", norm), ("pre_ff_layernorm", norm))
        return self.layer(self.attention(window), self.gated_ffn(), norms, mixer=mixer)
