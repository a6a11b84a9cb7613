"""CTRL (Salesforce, 2019): a conditional transformer LM with fixed sinusoidal positions and a biased head."""

from __future__ import annotations

from ..schema import Flag, HeadCount, LayerCount, PositionCount, Width
from ..spec import Layer, ModelNames, ModelSpec, names
from .base import LayerNormDecoder
from .blocks import heads_divide
from .registry import family

CTRL_ATTENTION = names(
    q="multi_head_attention.Wq",
    k="multi_head_attention.Wk",
    v="multi_head_attention.Wv",
    o="multi_head_attention.dense",
)
CTRL_MLP = names(up="ffn.0", down="ffn.2")  # nn.Sequential(Linear, ReLU, Linear)


@family("ctrl", transformers="CTRLConfig", architecture="CTRL", model_class="CTRLLMHeadModel")
class CtrlConfig(LayerNormDecoder):
    """configuration_ctrl.py / modeling_ctrl.py: pre-LN layers (layernorm1, layernorm2) with biases on every
    linear, a ReLU MLP of dff; sinusoidal positions computed into a buffer that is neither a parameter nor saved
    (n_positions rows); a final LayerNorm; the head lm_head tied to the token table w, with a bias of its own."""

    context_field = "n_positions"
    informational_fields = frozenset({"n_positions"})
    layer_name = "transformer.h.{i}"

    vocab_size: Width
    n_positions: PositionCount
    n_embd: Width
    dff: Width
    n_layer: LayerCount
    n_head: HeadCount
    tie_word_embeddings: Flag
    # transformers builds heads of int(n_embd / n_head) and reshapes q, k and v to them: the model cannot run otherwise
    _check_heads = heads_divide("n_embd", "n_head")

    @property
    def width(self) -> int:
        return self.n_embd

    def to_spec(self) -> ModelSpec:
        norm = self.layer_norm()
        ffn = self.plain_ffn(self.dff, "relu", True, CTRL_MLP)
        attention = self.mha(self.n_head, True, CTRL_ATTENTION)
        layer = Layer(self.layer_name, attention, ffn, (("layernorm1", norm), ("layernorm2", norm)))
        return self.decoder_spec(
            layer,
            self.n_layer,
            norm,
            self.tie_word_embeddings,
            vocab_size=self.vocab_size,
            names=ModelNames("transformer.w", "transformer.layernorm", base_model_prefix="transformer"),
            lm_head_bias=True,
        )
