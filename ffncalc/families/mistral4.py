"""Mistral 4: DeepSeek-V3's multi-head latent attention and dense-then-MoE stack with Mistral 4's defaults."""

from __future__ import annotations

from ..schema import ExpertCount, ExpertCountOrZero, Flag, LayerIndex
from ..spec import CheckpointExtra, names
from .deepseek import DeepseekLayers
from .registry import family


@family(
    "mistral4",
    transformers="Mistral4Config",
    architecture="Mistral 4",
    model_class="Mistral4ForCausalLM",
    routing=("num_experts_per_tok", "n_routed_experts"),
)
class Mistral4Config(DeepseekLayers):
    """configuration_mistral4.py / modeling_mistral4.py (Mistral 4): DeepSeek-V3's MLA and dense-then-MoE stack with
    Mistral 4's defaults; the router (softmax) has no correction bias, there are no multi-token-prediction layers, and
    transformers saves the routed experts stacked, gate and up fused (Mistral4Experts: mlp.experts.gate_up_proj
    [E, 2I, H], down_proj [E, H, I]; conversion_mapping.py has no entry for mistral4)."""

    moe_names = names(router="mlp.gate", experts="mlp.experts")
    expert_names = names(gate="gate_up_proj", up="gate_up_proj", down="down_proj", parameters=True)

    tie_word_embeddings: Flag
    n_routed_experts: ExpertCountOrZero
    num_experts_per_tok: ExpertCount | None
    first_k_dense_replace: LayerIndex

    def checkpoint_extras(self) -> tuple[CheckpointExtra, ...]:
        return self.rotary_extras()
