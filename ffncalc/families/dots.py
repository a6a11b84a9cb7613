"""rednote-hilab's dots.llm1: Qwen3's attention (per-head q/k norms) and DeepSeek-V3's dense-then-MoE stack."""

from __future__ import annotations

from typing import Literal

from pydantic import model_validator

from ..schema import (
    ExpertCount,
    Flag,
    HeadCount,
    LayerCount,
    LayerIndex,
    Name,
    PositionCount,
    Width,
    derives,
    unroutable,
)
from ..spec import CheckpointExtra, DenseFfn, Layer, MoeFfn, StoredTensor, names
from .base import DecoderConfig
from .blocks import is_sparse, windows_of_layer_types
from .registry import family

DOTS_MOE = names(router="mlp.gate", experts="mlp.experts.{e}")
DOTS_SHARED = names(
    gate="mlp.shared_experts.gate_proj", up="mlp.shared_experts.up_proj", down="mlp.shared_experts.down_proj"
)


@family(
    "dots1",
    transformers="Dots1Config",
    architecture="dots.llm1",
    model_class="Dots1ForCausalLM",
    heads_divide_hidden=False,  # configuration_*.py floors hidden_size // num_attention_heads
    read_beyond={"head_dim": "read by the modeling code with getattr"},
)
class Dots1Config(DecoderConfig):
    """configuration_dots1.py / modular_dots1.py.

    Layer i is MoE when i ≥ first_k_dense_replace: n_routed_experts routed experts of
    moe_intermediate_size (saved one module per expert), one shared MLP of n_shared_experts ×
    moe_intermediate_size, and DeepSeek-V3's router with its e_score_correction_bias buffer. Layers
    ``layer_types`` marks sliding (default: those ≥ max_window_layers, while sliding_window is set)
    attend within sliding_window. The expert counts have no default (None): a config with MoE layers
    must give them, or transformers fails.
    """

    moe_names = DOTS_MOE

    num_hidden_layers: LayerCount
    intermediate_size: Width
    tie_word_embeddings: Flag
    attention_bias: Flag
    max_position_embeddings: PositionCount
    hidden_act: Name
    head_dim: Width | None = None
    moe_intermediate_size: Width
    num_key_value_heads: HeadCount | None
    n_shared_experts: ExpertCount | None
    n_routed_experts: ExpertCount | None
    num_experts_per_tok: ExpertCount | None
    first_k_dense_replace: LayerIndex
    sliding_window: Width | None
    max_window_layers: LayerIndex
    layer_types: list[Literal["full_attention", "sliding_attention"]] | None

    @model_validator(mode="after")
    def _check_experts(self) -> Dots1Config:
        if self.first_k_dense_replace < self.num_hidden_layers:
            for field in ("n_routed_experts", "n_shared_experts"):
                if getattr(self, field) is None:
                    raise ValueError(
                        f"{field}: required field is missing (Dots1Config leaves it None and cannot build the MoE layers)"
                    )
        return self

    def unused_fields(self) -> set[str]:
        unused = {"max_window_layers"} if self.layer_types is not None else set()
        if self.first_k_dense_replace >= self.num_hidden_layers:
            unused |= {"n_shared_experts", "n_routed_experts", "num_experts_per_tok", "moe_intermediate_size"}
        return unused

    def warnings(self) -> list[str]:
        if self.first_k_dense_replace >= self.num_hidden_layers:  # no MoE layer
            return super().warnings()
        experts = self.n_routed_experts or 0
        return super().warnings() + unroutable(
            self.num_experts_per_tok, experts, "num_experts_per_tok", "n_routed_experts"
        )

    def notes(self) -> list[str]:
        if self.num_experts_per_tok is None and self.first_k_dense_replace < self.num_hidden_layers:
            return [
                "num_experts_per_tok is unset (transformers' default is None): the model is built but cannot "
                "route a token, so active parameters and FLOPs count no routed expert."
            ]
        return []

    @derives(
        "layer_types",
        "sliding_attention from max_window_layers on (while sliding_window is set), full_attention before",
    )
    def window_kinds(self) -> list[str]:
        return super().window_kinds()

    def layer_windows(self) -> list[int | None]:
        if self.layer_types is not None:
            return windows_of_layer_types(self.layer_types, self.sliding_window)
        window = self.sliding_window
        return [window if i >= self.max_window_layers else None for i in range(self.num_hidden_layers)]

    def sparse(self, index: int) -> bool:
        return is_sparse(index, first=self.first_k_dense_replace)

    def ffn(self, index: int) -> DenseFfn | MoeFfn:
        if not self.sparse(index):
            return self.gated_ffn()
        width = self.moe_intermediate_size
        experts = self.n_routed_experts or 0
        return self.moe_ffn(
            experts,
            self.num_experts_per_tok or 0,
            width,
            shared_width=width * (self.n_shared_experts or 0),
            num_shared_experts=self.n_shared_experts or 0,
            shared_names=DOTS_SHARED,
        )

    def build_layer(self, index: int, window: int | None) -> Layer:
        return self.layer(self.attention(window, **self.per_head_norms()), self.ffn(index))

    def checkpoint_extras(self) -> tuple[CheckpointExtra, ...]:
        sparse = tuple(i for i in range(self.num_hidden_layers) if self.sparse(i))
        if not sparse:
            return ()
        return (
            CheckpointExtra(
                name="router e_score_correction_bias",
                reason=f"{len(sparse)} MoE layers × {self.n_routed_experts} experts; a buffer set by load balancing, not trained",
                tensors=(
                    StoredTensor(self.layer_name + ".mlp.gate.e_score_correction_bias", (self.n_routed_experts or 0,)),
                ),
                per_layer=sparse,
                buffer=True,
            ),
        )
