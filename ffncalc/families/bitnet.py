"""Microsoft's BitNet b1.58: Llama's layer with an RMSNorm before o_proj and one before down_proj."""

from __future__ import annotations

from ..schema import HeadCount, LayerCount, Name, PositionCount, Width
from ..spec import DenseFfn, Layer
from .base import AttentionBias, DecoderConfig, FfnWidth, HeadDim, HiddenLayers, TiedEmbeddings
from .registry import family


@family("bitnet")
class BitNetConfig(HeadDim, AttentionBias, TiedEmbeddings, FfnWidth, HiddenLayers, DecoderConfig):
    """configuration_bitnet.py / modular_bitnet.py: Llama's attention (attention_bias on q, k, v, o) whose output
    passes an RMSNorm of hidden_size (attn_sub_norm) before o_proj; a gated MLP without biases (GemmaMLP, relu2)
    whose product passes an RMSNorm of intermediate_size (ffn_sub_norm) before down_proj.

    Its checkpoints (quant_method "bitnet") store the linear weights as ternary values packed four to a uint8
    (integrations/bitnet.py, VALUES_PER_ITEM); ffncalc counts the parameters, and says it does not read that layout.
    """

    architecture = "BitNet"
    config_class = "BitNetConfig"
    default_model_class = "BitNetForCausalLM"
    heads_divide_hidden = False  # BitNetConfig does not check hidden_size; the attention floors it
    undeclared_keys = frozenset({"head_dim"})  # read by the modeling code with getattr

    vocab_size: Width = 128256
    hidden_size: Width = 2560
    intermediate_size: Width = 6912
    num_hidden_layers: LayerCount = 30
    num_attention_heads: HeadCount = 20
    num_key_value_heads: HeadCount | None = 5
    hidden_act: Name = "relu2"
    max_position_embeddings: PositionCount = 2048

    def build_layer(self, index: int, window: int | None) -> Layer:
        mlp = DenseFfn(self.hidden_size, self.intermediate_size, True, self.hidden_act, self.mlp_names)
        sub_norms = (
            ("self_attn.attn_sub_norm", self.rms_norm()),
            ("mlp.ffn_sub_norm", self.rms_norm(self.intermediate_size)),
        )
        return self.layer(self.attention(window), mlp, self.pre_norms() + sub_norms)
