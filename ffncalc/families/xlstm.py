"""NX-AI's xLSTM (xlstm, xLSTM-7B): blocks of an mLSTM layer (a matrix memory per head, updated by exponential
input and forget gates) and a SwiGLU feed-forward, each after an RMSNorm."""

from __future__ import annotations

from fractions import Fraction
from typing import Annotated, Literal

from pydantic import Field, model_validator

from ..schema import Flag, HeadCount, HFConfig, LayerCount, Width, derives
from ..spec import DenseFfn, Layer, Mixer, ModelNames, ModelSpec, Norm, Projection, names
from .registry import family

BLOCK = "backbone.blocks.{i}"
MLSTM = "mlstm_layer."
SINGLE_FFN = names(gate="ffn.proj_up_gate", up="ffn.proj_up", down="ffn.proj_down")
FUSED_FFN = names(gate="ffn.proj_up_gate_z", up="ffn.proj_up_gate_z", down="ffn.proj_down")


def round_up(value: Fraction, multiple: int) -> int:
    """configuration_xlstm.round_up_to_next_multiple_of: ⌊(x + m − 1) / m⌋ · m."""
    return (value + multiple - 1) // multiple * multiple


@family("xlstm", transformers="xLSTMConfig", architecture="xLSTM", model_class="xLSTMForCausalLM")
class XLSTMConfig(HFConfig):
    """configuration_xlstm.py / modeling_xlstm.py (transformers' own mLSTM, without the external xlstm package).
    num_hidden_layers (alias num_blocks) blocks under backbone.blocks, each:

    - norm_mlstm (an RMSNorm; with a bias when use_bias), then the mLSTM layer: q and k (hidden → int(hidden ·
      qk_dim_factor)), v and ogate_preact (hidden → int(hidden · v_dim_factor)), igate_preact and fgate_preact
      (hidden → num_heads, always biased), all others biased by use_bias; fused as qkv_opreact and ifgate_preact when
      weight_mode is "fused"; multihead_norm over the values (a weight, a bias with use_bias); out_proj back. Each head
      keeps a (qk / heads) × (v / heads) memory C, a normaliser n of qk / heads and a stabiliser m; per element of C a
      token costs the decay, the gated outer-product update and the read-out (5 FLOPs; n's update and read 4 an
      element);
    - norm_ffn, then a SwiGLU (proj_up_gate, proj_up; proj_down) of round_up(hidden · ffn_proj_factor,
      ffn_round_up_to_multiple_of) (fused as proj_up_gate_z).

    The embeddings (embedding_dim wide, default hidden_size), out_norm (a weight only, whatever use_bias), lm_head
    (never tied: xLSTMForCausalLM declares no tie, whatever tie_word_embeddings says). xLSTMModel builds num_blocks
    blocks where the config sets it, else num_hidden_layers."""

    informational_fields = frozenset(
        {"tie_word_embeddings", "add_out_norm", "chunk_size", "max_inference_chunksize", "pad_token_id"}
    )

    vocab_size: Width
    hidden_size: Width
    embedding_dim: Width | None
    num_hidden_layers: LayerCount | None
    num_blocks: LayerCount | None
    num_heads: HeadCount
    use_bias: Flag
    tie_word_embeddings: Flag
    add_out_norm: Flag
    qk_dim_factor: Annotated[float, Field(gt=0, le=64)]
    v_dim_factor: Annotated[float, Field(gt=0, le=64)]
    ffn_proj_factor: Annotated[float, Field(gt=0, le=64)]
    ffn_round_up_to_multiple_of: Width
    weight_mode: Literal["single", "fused"]
    chunk_size: Width
    max_inference_chunksize: Width

    @model_validator(mode="after")
    def _check_blocks(self) -> XLSTMConfig:
        if self.blocks is None:
            raise ValueError("num_hidden_layers: required field is missing (num_blocks too: xLSTMConfig needs one)")
        return self

    @property
    @derives("num_blocks", "num_hidden_layers")
    def blocks(self) -> int | None:
        """The blocks xLSTMModel builds: num_blocks where the config sets it, else num_hidden_layers."""
        return self.num_blocks if self.num_blocks is not None else self.num_hidden_layers

    @property
    @derives("embedding_dim", "hidden_size")
    def embedding_width(self) -> int:
        return self.embedding_dim or self.hidden_size

    def widths(self) -> tuple[int, int]:
        """(qk, v): int(hidden · factor), in floating point as xLSTMLayer computes them."""
        return int(self.hidden_size * self.qk_dim_factor), int(self.hidden_size * self.v_dim_factor)

    def ffn_width(self) -> int:
        """round_up(hidden · ffn_proj_factor): the float factor taken exactly (Fraction), as Python multiplies it."""
        return round_up(Fraction(self.hidden_size * self.ffn_proj_factor), self.ffn_round_up_to_multiple_of)

    def norm(self, dim: int | None = None, bias: bool | None = None) -> Norm:
        biased = self.use_bias if bias is None else bias
        return Norm("layernorm" if biased else "rmsnorm", dim or self.hidden_size, bias=biased)

    def mlstm(self) -> Mixer:
        hidden, heads, bias = self.hidden_size, self.num_heads, self.use_bias
        qk, v = self.widths()
        projections: tuple[Projection, ...]
        if self.weight_mode == "single":
            projections = (
                Projection("q", MLSTM + "q", hidden, qk, bias),
                Projection("k", MLSTM + "k", hidden, qk, bias),
                Projection("v", MLSTM + "v", hidden, v, bias),
                Projection("ogate", MLSTM + "ogate_preact", hidden, v, bias),
                Projection("igate", MLSTM + "igate_preact", hidden, heads, True),
                Projection("fgate", MLSTM + "fgate_preact", hidden, heads, True),
            )
        else:
            projections = (
                Projection("qkv_o", MLSTM + "qkv_opreact", hidden, 2 * qk + 2 * v, bias),
                Projection("ifgate", MLSTM + "ifgate_preact", hidden, 2 * heads, True),
            )
        memory = heads * (qk // heads) * (v // heads)
        normaliser = heads * (qk // heads)
        return Mixer(
            kind="mlstm",
            projections=projections + (Projection("out_proj", MLSTM + "out_proj", v, hidden, bias),),
            norms=((MLSTM + "multihead_norm", self.norm(v)),),
            state_elements=memory + normaliser + heads,
            state_update_flops=5 * memory + 4 * normaliser,
        )

    def to_spec(self) -> ModelSpec:
        ffn_names = SINGLE_FFN if self.weight_mode == "single" else FUSED_FFN
        ffn = DenseFfn(self.hidden_size, self.ffn_width(), True, "silu", ffn_names, bias=self.use_bias)
        norms = (("norm_mlstm", self.norm()), ("norm_ffn", self.norm()))
        block = Layer(BLOCK, None, ffn, norms, mixer=self.mlstm())
        width = self.embedding_width
        return ModelSpec(
            model_type=self.model_type,
            hidden_size=self.hidden_size,
            vocab_size=self.vocab_size,
            layers=(block,) * (self.blocks or 0),
            final_norm=self.norm(bias=False),
            tie_word_embeddings=False,  # xLSTMForCausalLM declares no tie: lm_head is its own tensor
            names=ModelNames(
                embed_tokens="backbone.embeddings", final_norm="backbone.out_norm", base_model_prefix="backbone"
            ),
            embedding_dim=width if width != self.hidden_size else None,
        )
