"""Tencent's Hunyuan: the dense model (hunyuan_v1_dense: Llama's layer with per-head q/k norms) and its MoE
(hunyuan_v1_moe: routed experts beside a shared MLP in every layer)."""

from __future__ import annotations

from typing import Annotated, ClassVar

from pydantic import AliasChoices, Field, model_validator

from ..schema import MAX_LAYERS, ExpertCount, Width, unroutable
from ..spec import Layer, MoeFfn, names
from .base import DecoderConfig
from .blocks import required_field
from .registry import family

HUNYUAN_ATTENTION = names(
    q="self_attn.q_proj",
    k="self_attn.k_proj",
    v="self_attn.v_proj",
    o="self_attn.o_proj",
    q_norm="self_attn.query_layernorm",
    k_norm="self_attn.key_layernorm",
)
HUNYUAN_MOE = names(router="mlp.gate.wg", experts="mlp.experts.{e}")
HUNYUAN_SHARED = names(gate="mlp.shared_mlp.gate_proj", up="mlp.shared_mlp.up_proj", down="mlp.shared_mlp.down_proj")


@family("hunyuan_v1_dense")
class HunYuanDenseV1Config(DecoderConfig):
    """configuration_hunyuan_v1_dense.py / modular_hunyuan_v1_dense.py: Llama's layer (attention_bias on q, k,
    v, o; no MLP bias) with an RMSNorm on each query and key head (query_layernorm, key_layernorm).

    head_dim is a field left None by default, and the attention cannot be built without it:
    transformers 5.24 refuses a config without head_dim.
    """

    architecture = "Hunyuan"
    config_class = "HunYuanDenseV1Config"
    default_model_class = "HunYuanDenseV1ForCausalLM"
    heads_divide_hidden = False  # configuration_*.py floors hidden_size // num_attention_heads
    derived_defaults = {"num_key_value_heads": "num_attention_heads"}
    attention_names = HUNYUAN_ATTENTION

    vocab_size: Width = 290943
    pad_token_id: int | None = Field(0, strict=True)
    mlp_bias: ClassVar[bool] = False
    _check_head_dim = required_field("head_dim", "HunYuanDenseV1Config")

    def build_layer(self, index: int, window: int | None) -> Layer:
        return self.layer(self.attention(window, **self.per_head_norms()), self.ffn(index))

    def ffn(self, index: int):
        return self.gated_ffn()


@family("hunyuan_v1_moe")
class HunYuanMoEV1Config(HunYuanDenseV1Config):
    """configuration_hunyuan_v1_moe.py / modular_hunyuan_v1_moe.py: the dense model's attention; every FFN a MoE
    of num_experts routed experts of width intermediate_size (stored stacked, saved one module per expert,
    routed by gate.wg) beside a shared MLP of the same width (shared_mlp). moe_topk may be one number or
    one per layer."""

    architecture = "Hunyuan-MoE"
    config_class = "HunYuanMoEV1Config"
    default_model_class = "HunYuanMoEV1ForCausalLM"
    moe_names = HUNYUAN_MOE

    num_experts: ExpertCount = Field(1, validation_alias=AliasChoices("num_experts", "num_local_experts"))
    moe_topk: ExpertCount | Annotated[list[ExpertCount], Field(max_length=MAX_LAYERS)] = Field(
        1, validation_alias=AliasChoices("moe_topk", "num_experts_per_tok")
    )
    _check_head_dim = required_field("head_dim", "HunYuanMoEV1Config")

    @model_validator(mode="after")
    def _check_topk(self) -> HunYuanMoEV1Config:
        if isinstance(self.moe_topk, list) and len(self.moe_topk) < self.num_hidden_layers:
            raise ValueError(f"moe_topk has {len(self.moe_topk)} entries for {self.num_hidden_layers} layers")
        return self

    def top_k(self, index: int) -> int:
        return self.moe_topk[index] if isinstance(self.moe_topk, list) else self.moe_topk

    def warnings(self) -> list[str]:
        most = max(self.top_k(i) for i in range(self.num_hidden_layers))
        return super().warnings() + unroutable(most, self.num_experts, "moe_topk", "num_experts")

    def ffn(self, index: int) -> MoeFfn:
        top_k = self.top_k(index)
        width = self.intermediate_size
        return self.moe_ffn(self.num_experts, top_k, width, shared_width=width, shared_names=HUNYUAN_SHARED)
