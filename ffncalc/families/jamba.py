"""AI21's Jamba: a stack of Mamba layers with an attention layer every attn_layer_period-th, and a MoE FFN
every expert_layer_period-th (a gated MLP elsewhere)."""

from __future__ import annotations

import math
from typing import Annotated, Literal

from pydantic import Field, model_validator

from ..schema import ExpertCount, Flag, HeadCount, LayerCount, Name, PositionCount, Width, derives
from ..spec import Layer, ModelNames, names
from .base import DecoderConfig
from .blocks import is_sparse
from .mixers import mamba
from .registry import family

JAMBA_MAMBA = names(
    in_proj="mamba.in_proj",
    conv1d="mamba.conv1d",
    x_proj="mamba.x_proj",
    dt_proj="mamba.dt_proj",
    A_log="mamba.A_log",
    D="mamba.D",
    out_proj="mamba.out_proj",
    dt_norm="mamba.dt_layernorm",
    b_norm="mamba.b_layernorm",
    c_norm="mamba.c_layernorm",
)


@family(
    "jamba",
    transformers="JambaConfig",
    architecture="Jamba",
    model_class="JambaForCausalLM",
    heads_divide_hidden=False,  # the attention reads head_dim, else floors hidden_size // num_attention_heads
    routing=("num_experts_per_tok", "num_experts"),
    read_beyond={"head_dim": "read by the modeling code with getattr"},
)
class JambaConfig(DecoderConfig):
    """configuration_jamba.py / modeling_jamba.py.

    Layer i attends (Llama attention without biases) when i % attn_layer_period == attn_layer_offset, else runs a
    Mamba mixer (mamba_expand · hidden_size wide, with RMSNorms on dt, B and C); its FFN is a MoE of num_experts
    when i % expert_layer_period == expert_layer_offset and num_experts > 1, else a gated MLP. Both offsets must
    be below their periods (transformers refuses others).
    """

    mlp_names = names(gate="feed_forward.gate_proj", up="feed_forward.up_proj", down="feed_forward.down_proj")
    moe_names = names(router="feed_forward.router", experts="feed_forward.experts.{e}")
    model_names = ModelNames(embed_tokens="model.embed_tokens", final_norm="model.final_layernorm")

    num_hidden_layers: LayerCount
    intermediate_size: Width
    tie_word_embeddings: Flag
    hidden_act: Name
    head_dim: Width | None = None
    num_key_value_heads: HeadCount
    max_position_embeddings: PositionCount
    num_experts_per_tok: ExpertCount
    num_experts: ExpertCount
    expert_layer_period: LayerCount
    expert_layer_offset: Annotated[int, Field(strict=True, ge=0)]
    attn_layer_period: LayerCount
    attn_layer_offset: Annotated[int, Field(strict=True, ge=0)]
    mamba_d_state: Width
    mamba_d_conv: Width
    mamba_expand: Width
    mamba_dt_rank: Width | Literal["auto"]
    mamba_conv_bias: Flag
    mamba_proj_bias: Flag

    @model_validator(mode="after")
    def _check_offsets(self) -> JambaConfig:
        for kind in ("attn", "expert"):
            offset, period = getattr(self, f"{kind}_layer_offset"), getattr(self, f"{kind}_layer_period")
            if offset >= period:
                raise ValueError(f"{kind}_layer_offset ({offset}) must be smaller than {kind}_layer_period ({period})")
        return self

    def unused_fields(self) -> set[str]:
        unused = set()
        if self.num_experts <= 1:
            unused |= {"num_experts_per_tok", "expert_layer_period", "expert_layer_offset"}
        if self.attn_layer_offset >= self.num_hidden_layers:  # no layer attends
            unused |= {"num_attention_heads", "num_key_value_heads"}
        return unused

    @derives("mamba_dt_rank", "ceil(hidden_size / 16)", when="auto")
    def dt_rank(self) -> int:
        return math.ceil(self.hidden_size / 16) if self.mamba_dt_rank == "auto" else self.mamba_dt_rank

    def build_layers(self) -> tuple[Layer, ...]:
        built: dict[tuple[bool, bool], Layer] = {}
        layers = []
        for index in range(self.num_hidden_layers):
            attends = index % self.attn_layer_period == self.attn_layer_offset
            sparse = self.num_experts > 1 and is_sparse(
                index, every=self.expert_layer_period, phase=self.expert_layer_offset
            )
            if (attends, sparse) not in built:
                built[attends, sparse] = self.jamba_layer(attends, sparse)
            layers.append(built[attends, sparse])
        return tuple(layers)

    def jamba_layer(self, attends: bool, sparse: bool) -> Layer:
        ffn = (
            self.moe_ffn(self.num_experts, self.num_experts_per_tok, self.intermediate_size)
            if sparse
            else self.gated_ffn()
        )
        norm = self.rms_norm()
        norms = (("input_layernorm", norm), ("pre_ff_layernorm", norm))
        if attends:
            return self.layer(self.attention(None), ffn, norms)
        mixer = mamba(
            self.hidden_size,
            self.mamba_expand * self.hidden_size,
            self.mamba_d_state,
            self.dt_rank(),
            self.mamba_d_conv,
            JAMBA_MAMBA,
            proj_bias=self.mamba_proj_bias,
            conv_bias=self.mamba_conv_bias,
            dt_bc_norms=True,
        )
        return self.layer(None, ffn, norms, mixer=mixer)
