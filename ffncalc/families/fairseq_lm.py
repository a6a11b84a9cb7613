"""fairseq's decoder-only language models as transformers ports them: XGLM (Meta, 2021) and BioGPT (Microsoft, 2022).

Pre-LN layers with biases everywhere: self-attention (q, k, v, out_proj) behind self_attn_layer_norm, a plain MLP
(fc1, fc2) behind final_layer_norm, and a LayerNorm after the last layer; the token table scaled by √d on the way
in (no parameter) and tied to the head.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, model_validator

from ..schema import Flag, HeadCount, HFConfig, LayerCount, Name, PositionCount, Width
from ..spec import Attention, DenseFfn, Layer, ModelNames, ModelSpec, Norm, Norms, names
from .blocks import check_padding_row, heads_divide
from .registry import family

SELF_ATTENTION = names(q="self_attn.q_proj", k="self_attn.k_proj", v="self_attn.v_proj", o="self_attn.out_proj")
CROSS_ATTENTION = names(
    q="encoder_attn.q_proj", k="encoder_attn.k_proj", v="encoder_attn.v_proj", o="encoder_attn.out_proj"
)
FAIRSEQ_MLP = names(up="fc1", down="fc2")


def biased_attention(width: int, heads: int, attention_names) -> Attention:
    """Multi-head attention of ``heads`` heads of width // heads, every projection biased."""
    head_dim = width // heads
    return Attention(width, heads, heads, head_dim, head_dim, attention_names, True, True, True, True)


def padding_row_checked(self):
    """torch refuses a padding_idx that is not a row of the token table (the table is built with pad_token_id)."""
    check_padding_row(self.pad_token_id, self.vocab_size)
    return self


@family("xglm", transformers="XGLMConfig", architecture="XGLM", model_class="XGLMForCausalLM")
class XglmConfig(HFConfig):
    """configuration_xglm.py / modeling_xglm.py: sinusoidal positions computed into a buffer that is neither a
    parameter nor saved (XGLMSinusoidalPositionalEmbedding); with add_cross_attention each layer also attends to an
    encoder's states (encoder_attn, biased, and its LayerNorm encoder_attn_layer_norm)."""

    informational_fields = frozenset({"max_position_embeddings", "pad_token_id"})

    vocab_size: Width
    max_position_embeddings: PositionCount
    d_model: Width
    ffn_dim: Width
    num_layers: LayerCount
    attention_heads: HeadCount
    activation_function: Name
    add_cross_attention: Flag
    tie_word_embeddings: Flag
    pad_token_id: Annotated[int | None, Field(strict=True)]
    _check_heads = heads_divide("d_model", "attention_heads")
    _check_padding = model_validator(mode="after")(padding_row_checked)

    def notes(self) -> list[str]:
        if not self.add_cross_attention:
            return []
        return [
            "add_cross_attention: each layer also attends to an encoder's states (XGLMForCausalLM is the decoder "
            "alone); counted as if the encoder's states were as long as the context."
        ]

    def to_spec(self) -> ModelSpec:
        norm = Norm("layernorm", self.d_model, bias=True)
        ffn = DenseFfn(self.d_model, self.ffn_dim, False, self.activation_function, FAIRSEQ_MLP, bias=True)
        norms: Norms = (("self_attn_layer_norm", norm), ("final_layer_norm", norm))
        cross = None
        if self.add_cross_attention:
            cross = biased_attention(self.d_model, self.attention_heads, CROSS_ATTENTION)
            norms += (("encoder_attn_layer_norm", norm),)
        attention = biased_attention(self.d_model, self.attention_heads, SELF_ATTENTION)
        layer = Layer("model.layers.{i}", attention, ffn, norms, cross_attention=cross)
        return ModelSpec(
            model_type=self.model_type,
            hidden_size=self.d_model,
            vocab_size=self.vocab_size,
            layers=(layer,) * self.num_layers,
            final_norm=norm,
            tie_word_embeddings=self.tie_word_embeddings,
            names=ModelNames("model.embed_tokens", "model.layer_norm"),
        )


@family("biogpt", transformers="BioGptConfig", architecture="BioGPT", model_class="BioGptForCausalLM")
class BioGptConfig(HFConfig):
    """configuration_biogpt.py / modeling_biogpt.py: learned positions with 2 rows more than max_position_embeddings
    (fairseq's offset); the model under ``biogpt.``, its head output_projection (no bias)."""

    informational_fields = frozenset({"pad_token_id"})

    vocab_size: Width
    hidden_size: Width
    num_hidden_layers: LayerCount
    num_attention_heads: HeadCount
    intermediate_size: Width
    hidden_act: Name
    max_position_embeddings: PositionCount
    tie_word_embeddings: Flag
    pad_token_id: Annotated[int | None, Field(strict=True)]
    _check_heads = heads_divide("hidden_size", "num_attention_heads")
    _check_padding = model_validator(mode="after")(padding_row_checked)

    def to_spec(self) -> ModelSpec:
        norm = Norm("layernorm", self.hidden_size, bias=True)
        ffn = DenseFfn(self.hidden_size, self.intermediate_size, False, self.hidden_act, FAIRSEQ_MLP, bias=True)
        attention = biased_attention(self.hidden_size, self.num_attention_heads, SELF_ATTENTION)
        layer = Layer("biogpt.layers.{i}", attention, ffn, (("self_attn_layer_norm", norm), ("final_layer_norm", norm)))
        return ModelSpec(
            model_type=self.model_type,
            hidden_size=self.hidden_size,
            vocab_size=self.vocab_size,
            layers=(layer,) * self.num_hidden_layers,
            final_norm=norm,
            tie_word_embeddings=self.tie_word_embeddings,
            names=ModelNames(
                "biogpt.embed_tokens",
                "biogpt.layer_norm",
                lm_head="output_projection",
                position_embeddings="biogpt.embed_positions",
                base_model_prefix="biogpt",
            ),
            position_embeddings=self.max_position_embeddings + 2,
        )
