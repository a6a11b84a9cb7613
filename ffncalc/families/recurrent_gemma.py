"""Google's RecurrentGemma (Griffin): Gemma's embeddings and GeGLU MLPs around a temporal block that is, by
block_types in turn, Griffin's RG-LRU recurrent block or local (sliding-window) attention.

Kept apart from families/gemma.py: beyond its Gemma embeddings, nothing in its layers is Gemma's.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from ..schema import Flag, HeadCount, LayerCount, Name, Width, derives
from ..spec import DenseFfn, Layer, ModelNames, names
from .base import DecoderConfig
from .mixers import rg_lru
from .registry import family

TEMPORAL = "temporal_block."
GRIFFIN_ATTENTION = names(q=TEMPORAL + "q_proj", k=TEMPORAL + "k_proj", v=TEMPORAL + "v_proj", o=TEMPORAL + "o_proj")
GRIFFIN_MLP = names(gate="mlp_block.gate_proj", up="mlp_block.up_proj", down="mlp_block.down_proj")
RG_LRU = names(
    linear_x=TEMPORAL + "linear_x",
    linear_y=TEMPORAL + "linear_y",
    linear_out=TEMPORAL + "linear_out",
    conv_1d=TEMPORAL + "conv_1d",
    input_gate_weight=TEMPORAL + "rg_lru.input_gate_weight",
    input_gate_bias=TEMPORAL + "rg_lru.input_gate_bias",
    recurrent_gate_weight=TEMPORAL + "rg_lru.recurrent_gate_weight",
    recurrent_gate_bias=TEMPORAL + "rg_lru.recurrent_gate_bias",
    recurrent_param=TEMPORAL + "rg_lru.recurrent_param",
)
BLOCK_CYCLES = 100  # transformers repeats block_types 100 times and cuts the list at num_hidden_layers


@family(
    "recurrent_gemma",
    transformers="RecurrentGemmaConfig",
    architecture="RecurrentGemma",
    model_class="RecurrentGemmaForCausalLM",
    heads_divide_hidden=False,  # configuration_recurrent_gemma.py floors hidden_size // num_attention_heads
    read_beyond={"head_dim": "set by __post_init__, overridden by the config's key"},
)
class RecurrentGemmaConfig(DecoderConfig):
    """configuration_recurrent_gemma.py / modeling_recurrent_gemma.py.

    Layer i's temporal block is block_types[i mod len(block_types)]: "recurrent" (linear_x, linear_y, a conv of
    conv1d_width and the RG-LRU over lru_width, default hidden_size; linear_out) or "attention" (q, k, v with
    attention_bias, o always biased; within attention_window_size). Every layer has temporal_pre_norm,
    channel_pre_norm and a GeGLU MLP of intermediate_size // 2 with biases (mlp_block). Embeddings tied.
    head_dim is not a field: __post_init__ sets hidden_size // num_attention_heads, and a config's key overrides it.
    """

    attention_names = GRIFFIN_ATTENTION
    mlp_names = GRIFFIN_MLP
    model_names = ModelNames(embed_tokens="model.embed_tokens", final_norm="model.final_norm")

    num_hidden_layers: LayerCount
    intermediate_size: Width
    tie_word_embeddings: Flag
    head_dim: Width | None = None
    lru_width: Width | None
    attention_window_size: Width
    conv1d_width: Width
    hidden_activation: Name
    block_types: Annotated[list[Literal["recurrent", "attention"]], Field(min_length=1, max_length=1 << 14)]
    num_key_value_heads: HeadCount | None
    attention_bias: Flag

    @property
    def activation(self) -> str:
        """hidden_activation: RecurrentGemmaConfig's name for the MLP's activation (it has no hidden_act)."""
        return self.hidden_activation

    @property
    def mlp_biased(self) -> bool:
        """The MLP's projections always carry biases (no mlp_bias switch)."""
        return True

    @model_validator(mode="after")
    def _check_griffin(self) -> RecurrentGemmaConfig:
        if self.kv_heads > self.num_attention_heads:
            raise ValueError(
                f"num_key_value_heads ({self.kv_heads}) must not exceed num_attention_heads ({self.num_attention_heads})"
            )
        if self.num_hidden_layers > BLOCK_CYCLES * len(self.block_types):
            raise ValueError(
                f"block_types ({len(self.block_types)} entries) repeated {BLOCK_CYCLES} times covers fewer than "
                f"num_hidden_layers ({self.num_hidden_layers}), which transformers cannot build"
            )
        return self

    def unused_fields(self) -> set[str]:
        blocks = {self.block_types[index % len(self.block_types)] for index in range(self.num_hidden_layers)}
        unused = set() if "attention" in blocks else {"num_key_value_heads", "attention_window_size", "attention_bias"}
        return unused if "recurrent" in blocks else unused | {"lru_width", "conv1d_width"}

    @derives("lru_width", "hidden_size")
    def width(self) -> int:
        return self.lru_width or self.hidden_size

    def build_layers(self) -> tuple[Layer, ...]:
        mlp = DenseFfn(
            self.hidden_size, self.intermediate_size // 2, True, self.hidden_activation, GRIFFIN_MLP, bias=True
        )
        norm = self.rms_norm()
        norms = (("temporal_pre_norm", norm), ("channel_pre_norm", norm))
        attention = self.attention(self.attention_window_size, o_bias=True)
        recurrent = rg_lru(self.hidden_size, self.width(), self.num_attention_heads, self.conv1d_width, RG_LRU)
        by_block = {
            "attention": self.layer(attention, mlp, norms),
            "recurrent": self.layer(None, mlp, norms, mixer=recurrent),
        }
        return tuple(
            by_block[self.block_types[index % len(self.block_types)]] for index in range(self.num_hidden_layers)
        )
