"""Falcon (7B, 40B, 180B): multi-query or grouped KV heads, parallel attention and FFN; and Falcon-H1, whose every
layer runs a Mamba-2 mixer and attention side by side. (Falcon-Mamba, a pure Mamba, is in families/mamba.py.)"""

from __future__ import annotations

from typing import Literal

from pydantic import AliasChoices, Field

from ..schema import Flag, HeadCount, LayerCount, Name, PositionCount, Width, derives, ungroupable
from ..spec import Layer, ModelNames, ModelSpec, Norm, names
from .base import (
    DecoderConfig,
    LayerNormDecoder,
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


@family(
    "falcon",
    transformers="FalconConfig",
    architecture="Falcon",
    model_class="FalconForCausalLM",
    other_names={
        "hidden_size": "FalconConfig.__post_init__ reads an n_embed key as hidden_size (backward compatibility)",
        "num_hidden_layers": "n_layer, the name of Falcon's first (RefinedWeb) configs; FalconConfig's attribute_map has none",
        "num_attention_heads": "n_head, the name of Falcon's first (RefinedWeb) configs; FalconConfig's attribute_map has none",
    },
)
class FalconConfig(LayerNormDecoder):
    """configuration_falcon.py / modeling_falcon.py.

    KV heads: num_kv_heads with new_decoder_architecture, 1 with multi_query, else all heads.
    Norms: ln_attn and ln_mlp (new architecture, two in parallel), one input_layernorm
    (parallel_attn), or input and post-attention (sequential). Biases follow ``bias``.
    """

    informational_fields = frozenset({"max_position_embeddings"})

    vocab_size: Width
    hidden_size: Width = Field(validation_alias=AliasChoices("hidden_size", "n_embed"))
    num_hidden_layers: LayerCount = Field(validation_alias=AliasChoices("num_hidden_layers", "n_layer"))
    num_attention_heads: HeadCount = Field(validation_alias=AliasChoices("num_attention_heads", "n_head"))
    num_ln_in_parallel_attn: LayerCount | None
    num_kv_heads: HeadCount | None
    alibi: Flag
    new_decoder_architecture: Flag
    multi_query: Flag
    parallel_attn: Flag
    bias: Flag
    max_position_embeddings: PositionCount
    ffn_hidden_size: Width | None
    activation: Name
    tie_word_embeddings: Flag
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


@family(
    "falcon_h1",
    transformers="FalconH1Config",
    architecture="Falcon-H1",
    model_class="FalconH1ForCausalLM",
    heads_divide_hidden=False,  # the attention reads head_dim, else floors hidden_size // num_attention_heads
    read_beyond={"head_dim": "read by the modeling code with getattr"},
)
class FalconH1Config(MambaHeads, DecoderConfig):
    """configuration_falcon_h1.py / modeling_falcon_h1.py.

    Every layer feeds its input_layernorm's output to Llama-style attention (attention_bias) and to a Mamba-2
    mixer at once, adds both, then a pre_ff_layernorm and a gated MLP (feed_forward, mlp_bias). The mixer is
    mamba_d_ssm wide (None: mamba_expand · hidden_size), in mamba_n_heads heads of mamba_d_head ("auto": the
    width / heads; transformers refuses a head width that does not tile it); in_proj follows mamba_proj_bias,
    out_proj projectors_bias, and its gated RMSNorm exists only with mamba_rms_norm. The μP multipliers scale
    activations, not parameters.
    """

    mlp_names = names(gate="feed_forward.gate_proj", up="feed_forward.up_proj", down="feed_forward.down_proj")
    model_names = ModelNames(embed_tokens="model.embed_tokens", final_norm="model.final_layernorm")

    num_hidden_layers: LayerCount
    intermediate_size: Width
    tie_word_embeddings: Flag
    mlp_bias: Flag
    attention_bias: Flag
    hidden_act: Name
    head_dim: Width | None = None
    num_key_value_heads: HeadCount | None
    max_position_embeddings: PositionCount
    mamba_d_ssm: Width | None
    mamba_n_heads: HeadCount
    mamba_d_head: Width | Literal["auto"]
    mamba_n_groups: HeadCount
    mamba_d_state: Width
    mamba_d_conv: Width
    mamba_expand: Width
    mamba_conv_bias: Flag
    mamba_proj_bias: Flag
    mamba_rms_norm: Flag
    projectors_bias: Flag

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
