"""Mistral 4: DeepSeek-V3's multi-head latent attention and dense-then-MoE stack with Mistral 4's defaults."""

from __future__ import annotations

from pydantic import AliasChoices, Field

from ..schema import ExpertCount, ExpertCountOrZero, HeadCount, LayerCount, LayerIndex, PositionCount, Width
from ..spec import CheckpointExtra, names
from .base import TiedEmbeddings
from .deepseek import DeepseekLayers
from .registry import family


@family("mistral4")
class Mistral4Config(TiedEmbeddings, DeepseekLayers):
    """configuration_mistral4.py / modeling_mistral4.py (Mistral 4): DeepSeek-V3's MLA and dense-then-MoE stack with
    Mistral 4's defaults; the router (softmax) has no correction bias, there are no multi-token-prediction layers, and
    transformers saves the routed experts stacked, gate and up fused (Mistral4Experts: mlp.experts.gate_up_proj
    [E, 2I, H], down_proj [E, H, I]; conversion_mapping.py has no entry for mistral4)."""

    architecture = "Mistral 4"
    config_class = "Mistral4Config"
    default_model_class = "Mistral4ForCausalLM"
    moe_names = names(router="mlp.gate", experts="mlp.experts")
    expert_names = names(gate="gate_up_proj", up="gate_up_proj", down="down_proj", parameters=True)

    vocab_size: Width = 131072
    hidden_size: Width = 4096
    intermediate_size: Width = 12288
    moe_intermediate_size: Width = 2048
    num_hidden_layers: LayerCount = 36
    num_attention_heads: HeadCount = 32
    num_key_value_heads: HeadCount | None = 32
    n_routed_experts: ExpertCountOrZero = Field(
        128, validation_alias=AliasChoices("n_routed_experts", "num_local_experts")
    )
    kv_lora_rank: Width = 256
    q_lora_rank: Width | None = 1024
    qk_nope_head_dim: Width = 64
    num_experts_per_tok: ExpertCount | None = 4
    first_k_dense_replace: LayerIndex = 0
    max_position_embeddings: PositionCount = 1048576
    pad_token_id: int | None = Field(11, strict=True)
    routing_fields = ("num_experts_per_tok", "n_routed_experts")

    def checkpoint_extras(self) -> tuple[CheckpointExtra, ...]:
        return self.rotary_extras()
