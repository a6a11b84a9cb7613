"""Andrej Karpathy's nanochat: Qwen3's attention with parameter-free norms, a plain relu² MLP."""

from __future__ import annotations

from pydantic import Field

from ..schema import HeadCount, LayerCount, Name, PositionCount, Width
from ..spec import DenseFfn, Layer, ModelSpec, names
from ..values import replace
from .base import AttentionBias, DecoderConfig, FfnWidth, HeadDim, HiddenLayers, KvHeads, TiedEmbeddings
from .registry import family

NANOCHAT_MLP = names(up="mlp.fc1", down="mlp.fc2")


@family("nanochat")
class NanoChatConfig(HeadDim, KvHeads, AttentionBias, TiedEmbeddings, FfnWidth, HiddenLayers, DecoderConfig):
    """configuration_nanochat.py / modular_nanochat.py: q, k, v and o with attention_bias; every norm (before
    attention and the MLP, on each query and key head, at the end) is an RMSNorm without a weight, so holds no
    parameter; an fc1/fc2 MLP of hidden_act (relu2) without biases; the logits soft-capped (no parameter)."""

    architecture = "nanochat"
    config_class = "NanoChatConfig"
    default_model_class = "NanoChatForCausalLM"
    heads_divide_hidden = False  # NanoChatConfig does not check hidden_size; the attention floors it
    undeclared_keys = frozenset({"head_dim"})  # read by the modeling code with getattr
    mlp_names = NANOCHAT_MLP

    vocab_size: Width = 50304
    hidden_size: Width = 768
    intermediate_size: Width = 8192
    num_hidden_layers: LayerCount = 12
    num_attention_heads: HeadCount = 6
    hidden_act: Name = "relu2"
    max_position_embeddings: PositionCount = 2048
    pad_token_id: int | None = Field(1, strict=True)

    def build_layer(self, index: int, window: int | None) -> Layer:
        mlp = DenseFfn(self.hidden_size, self.intermediate_size, False, self.hidden_act, self.mlp_names)
        return self.layer(self.attention(window), mlp, norms=())

    def to_spec(self) -> ModelSpec:
        return replace(super().to_spec(), final_norm=None)
