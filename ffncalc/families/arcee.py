"""Arcee's AFM: Llama's attention and norms around a plain up/down MLP (ReLU² by default)."""

from __future__ import annotations

from ..schema import Name, PositionCount, Width
from ..spec import DenseFfn, Layer
from .base import DecoderConfig
from .registry import family


@family("arcee")
class ArceeConfig(DecoderConfig):
    """configuration_arcee.py / modular_arcee.py: LlamaConfig's fields and checks (hidden_size a multiple of
    the heads) with AFM's defaults; the MLP is plain, up and down with mlp_bias (NemotronMLP's layout)."""

    architecture = "Arcee"
    config_class = "ArceeConfig"
    default_model_class = "ArceeForCausalLM"

    hidden_size: Width = 2560
    intermediate_size: Width = 18432
    hidden_act: Name = "relu2"
    max_position_embeddings: PositionCount = 4096

    def build_layer(self, index: int, window: int | None) -> Layer:
        mlp = DenseFfn(self.hidden_size, self.intermediate_size, False, self.hidden_act, self.mlp_names, self.mlp_bias)
        return self.layer(self.attention(window), mlp)
