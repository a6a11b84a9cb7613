"""Andrej Karpathy's nanochat: Qwen3's attention with parameter-free norms, a plain relu² MLP."""

from __future__ import annotations

from ..schema import Flag, HeadCount, LayerCount, Name, PositionCount, Width
from ..spec import DenseFfn, Layer, ModelSpec, names
from ..values import replace
from .base import DecoderConfig
from .registry import family

NANOCHAT_MLP = names(up="mlp.fc1", down="mlp.fc2")


@family(
    "nanochat",
    transformers="NanoChatConfig",
    architecture="nanochat",
    model_class="NanoChatForCausalLM",
    heads_divide_hidden=False,  # NanoChatConfig does not check hidden_size; the attention floors it
    read_beyond={"head_dim": "read by the modeling code with getattr"},
)
class NanoChatConfig(DecoderConfig):
    """configuration_nanochat.py / modular_nanochat.py: q, k, v and o with attention_bias; every norm (before
    attention and the MLP, on each query and key head, at the end) is an RMSNorm without a weight, so holds no
    parameter; an fc1/fc2 MLP of hidden_act (relu2) without biases; the logits soft-capped (no parameter)."""

    mlp_names = NANOCHAT_MLP

    num_hidden_layers: LayerCount
    intermediate_size: Width
    tie_word_embeddings: Flag
    attention_bias: Flag
    num_key_value_heads: HeadCount | None
    head_dim: Width | None = None
    hidden_act: Name
    max_position_embeddings: PositionCount

    def build_layer(self, index: int, window: int | None) -> Layer:
        mlp = DenseFfn(self.hidden_size, self.intermediate_size, False, self.hidden_act, self.mlp_names)
        return self.layer(self.attention(window), mlp, norms=())

    def to_spec(self) -> ModelSpec:
        return replace(super().to_spec(), final_norm=None)
