"""Microsoft's BitNet b1.58: Llama's layer with an RMSNorm before o_proj and one before down_proj."""

from __future__ import annotations

from ..schema import Flag, HeadCount, LayerCount, Name, PositionCount, Width
from ..spec import DenseFfn, Layer
from .base import DecoderConfig
from .registry import family


@family(
    "bitnet",
    transformers="BitNetConfig",
    architecture="BitNet",
    model_class="BitNetForCausalLM",
    heads_divide_hidden=False,  # BitNetConfig does not check hidden_size; the attention floors it
    read_beyond={"head_dim": "read by the modeling code with getattr"},
)
class BitNetConfig(DecoderConfig):
    """configuration_bitnet.py / modular_bitnet.py: Llama's attention (attention_bias on q, k, v, o) whose output
    passes an RMSNorm of hidden_size (attn_sub_norm) before o_proj; a gated MLP without biases (GemmaMLP, relu2)
    whose product passes an RMSNorm of intermediate_size (ffn_sub_norm) before down_proj.

    Its checkpoints (quant_method "bitnet") store the linear weights as ternary values packed four to a uint8
    (integrations/bitnet.py, VALUES_PER_ITEM); ffncalc counts the parameters, and says it does not read that layout.
    """

    num_hidden_layers: LayerCount
    intermediate_size: Width
    tie_word_embeddings: Flag
    attention_bias: Flag
    head_dim: Width | None = None
    num_key_value_heads: HeadCount | None
    hidden_act: Name
    max_position_embeddings: PositionCount

    def build_layer(self, index: int, window: int | None) -> Layer:
        mlp = DenseFfn(self.hidden_size, self.intermediate_size, True, self.hidden_act, self.mlp_names)
        sub_norms = (
            ("self_attn.attn_sub_norm", self.rms_norm()),
            ("mlp.ffn_sub_norm", self.rms_norm(self.intermediate_size)),
        )
        return self.layer(self.attention(window), mlp, self.pre_norms() + sub_norms)
