"""Tencent's Hunyuan: the dense model (hunyuan_v1_dense: Llama's layer with per-head q/k norms), its MoE
(hunyuan_v1_moe: routed experts beside a shared MLP in every layer) and Hy3 (hy_v3: a dense first layer, then
sigmoid-routed experts beside a shared MLP)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from ..schema import (
    MAX_LAYERS,
    ExpertCount,
    ExpertCountOrZero,
    Flag,
    HeadCount,
    LayerCount,
    Name,
    PositionCount,
    Width,
    derives,
    unroutable,
)
from ..spec import CheckpointExtra, DenseFfn, Layer, MoeFfn, StoredTensor, names
from .base import (
    DecoderConfig,
)
from .blocks import MlpLayerTypes, entries_check, required_field
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


@family(
    "hunyuan_v1_dense",
    transformers="HunYuanDenseV1Config",
    architecture="Hunyuan",
    model_class="HunYuanDenseV1ForCausalLM",
    heads_divide_hidden=False,  # configuration_*.py floors hidden_size // num_attention_heads
)
class HunYuanDenseV1Config(DecoderConfig):
    """configuration_hunyuan_v1_dense.py / modular_hunyuan_v1_dense.py: Llama's layer (attention_bias on q, k,
    v, o; no MLP bias) with an RMSNorm on each query and key head (query_layernorm, key_layernorm).

    head_dim is a field left None by default, and the attention cannot be built without it:
    transformers 5.24 refuses a config without head_dim.
    """

    attention_names = HUNYUAN_ATTENTION

    num_hidden_layers: LayerCount
    intermediate_size: Width
    tie_word_embeddings: Flag
    attention_bias: Flag
    max_position_embeddings: PositionCount
    num_key_value_heads: HeadCount | None
    hidden_act: Name
    head_dim: Width | None
    _check_head_dim = required_field("head_dim", "HunYuanDenseV1Config")

    def build_layer(self, index: int, window: int | None) -> Layer:
        return self.layer(self.attention(window, **self.per_head_norms()), self.ffn(index))

    def ffn(self, index: int):
        return self.gated_ffn()


@family(
    "hunyuan_v1_moe",
    transformers="HunYuanMoEV1Config",
    architecture="Hunyuan-MoE",
    model_class="HunYuanMoEV1ForCausalLM",
)
class HunYuanMoEV1Config(HunYuanDenseV1Config):
    """configuration_hunyuan_v1_moe.py / modular_hunyuan_v1_moe.py: the dense model's attention; every FFN a MoE
    of num_experts routed experts of width intermediate_size (stored stacked, saved one module per expert,
    routed by gate.wg) beside a shared MLP of the same width (shared_mlp). moe_topk may be one number or
    one per layer."""

    moe_names = HUNYUAN_MOE

    num_experts: ExpertCount
    moe_topk: ExpertCount | Annotated[list[ExpertCount], Field(max_length=MAX_LAYERS)]
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


HY_V3_MOE = names(router="mlp.router.gate", experts="mlp.experts.{e}")
HY_V3_SHARED = names(gate="mlp.shared_mlp.gate_proj", up="mlp.shared_mlp.up_proj", down="mlp.shared_mlp.down_proj")


@family(
    "hy_v3",
    transformers="HYV3Config",
    architecture="Hy3",
    model_class="HYV3ForCausalLM",
    heads_divide_hidden=False,  # the attention reads head_dim; HYV3Config does not check hidden_size
    routing=("num_experts_per_tok", "num_experts"),
)
class HYV3Config(MlpLayerTypes, DecoderConfig):
    """configuration_hy_v3.py / modular_hy_v3.py (Hy3): Apertus's attention (an RMSNorm on each query and key
    head; attention_bias on q, k, v, o); a layer's FFN by mlp_layer_types (default: the first dense, the others
    sparse). Dense: a gated MLP of intermediate_size (mlp_bias). Sparse: num_experts routed experts of
    moe_intermediate_size (a sigmoid router without bias, its correction bias a persistent buffer) beside one shared
    MLP of num_shared_experts × moe_intermediate_size (mlp_bias).

    transformers keeps the experts stacked and renames on load; it saves them under the checkpoint's names
    (conversion_mapping.py, "hy_v3"): mlp.experts.{e}.*, mlp.router.gate, mlp.shared_mlp, mlp.expert_bias.
    """

    moe_names = HY_V3_MOE

    num_hidden_layers: LayerCount
    intermediate_size: Width
    tie_word_embeddings: Flag
    mlp_bias: Flag
    attention_bias: Flag
    hidden_act: Name
    num_key_value_heads: HeadCount
    head_dim: Width
    max_position_embeddings: PositionCount
    num_experts: ExpertCount
    num_experts_per_tok: ExpertCount
    num_shared_experts: ExpertCountOrZero
    moe_intermediate_size: Width
    mlp_layer_types: Annotated[list[Literal["dense", "sparse"]], Field(max_length=MAX_LAYERS)] | None
    # HYV3Config has no layer_types, so validate_layer_type never checks this list: the model indexes it by layer
    _check_mlp_layer_types = entries_check("mlp_layer_types", exact=False)

    @derives("mlp_layer_types", "dense for the first layer, sparse for the others")
    def default_mlp_kinds(self) -> list[str]:
        return ["dense"] + ["sparse"] * (self.num_hidden_layers - 1)

    def sparse_layers(self) -> tuple[int, ...]:
        return tuple(index for index in range(self.num_hidden_layers) if self.sparse(index))

    def unused_fields(self) -> set[str]:
        kinds = set(self.mlp_kinds()[: self.num_hidden_layers])
        unused = set() if "dense" in kinds else {"intermediate_size"}
        if "sparse" not in kinds:
            unused |= {"num_experts", "num_experts_per_tok", "num_shared_experts", "moe_intermediate_size"}
        return unused

    def build_layers(self) -> tuple[Layer, ...]:
        attention = self.attention(None, **self.per_head_norms())
        shared_width = self.num_shared_experts * self.moe_intermediate_size
        ffns: dict[str, DenseFfn | MoeFfn] = {
            "dense": self.gated_ffn(),
            "sparse": self.moe_ffn(
                self.num_experts,
                self.num_experts_per_tok,
                self.moe_intermediate_size,
                shared_width=shared_width,
                shared_names=HY_V3_SHARED,
                shared_bias=self.mlp_bias,
            ),
        }
        built = {kind: self.layer(attention, ffn) for kind, ffn in ffns.items()}
        return tuple(built[kind] for kind in self.mlp_kinds()[: self.num_hidden_layers])

    def checkpoint_extras(self) -> tuple[CheckpointExtra, ...]:
        sparse = self.sparse_layers()
        if not sparse:
            return super().checkpoint_extras()
        bias = CheckpointExtra(
            name="router expert_bias",
            reason=f"{len(sparse)} MoE layers × {self.num_experts} experts; the router's correction bias, a buffer "
            "set by load balancing, not trained",
            tensors=(StoredTensor(self.layer_name + ".mlp.expert_bias", (self.num_experts,)),),
            per_layer=sparse,
            buffer=True,
        )
        return super().checkpoint_extras() + (bias,)
