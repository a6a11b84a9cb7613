"""The Swiss AI Initiative's Apertus: Llama's attention with per-head q/k norms, a plain MLP whose xIELU
activation learns two scalars per layer."""

from __future__ import annotations

from pydantic import Field

from ..schema import Name, PositionCount, Width
from ..spec import CheckpointExtra, DenseFfn, Layer, Parameter, StoredTensor
from .base import AttentionBias, DecoderConfig, HeadDim, KvHeads
from .registry import family


@family("apertus")
class ApertusConfig(HeadDim, KvHeads, AttentionBias, DecoderConfig):
    """configuration_apertus.py / modular_apertus.py: q/k RMSNorms per head; norms before attention
    (attention_layernorm) and before the MLP (feedforward_layernorm); a plain up/down MLP without bias.

    Its xIELU activation (the default hidden_act) is a module of each MLP with two learned scalars,
    alpha_p and alpha_n ([1] each), and two constant buffers, beta and eps ([] each), that
    transformers saves with the weights.
    """

    architecture = "Apertus"
    config_class = "ApertusConfig"
    default_model_class = "ApertusForCausalLM"
    heads_divide_hidden = False  # configuration_*.py floors hidden_size // num_attention_heads
    undeclared_keys = frozenset({"head_dim"})  # read by the modeling code with getattr

    vocab_size: Width = 131072
    intermediate_size: Width = 14336
    hidden_act: Name = "xielu"
    max_position_embeddings: PositionCount = 65536
    pad_token_id: int | None = Field(3, strict=True)

    @property
    def xielu(self) -> bool:
        return self.hidden_act == "xielu"

    def build_layer(self, index: int, window: int | None) -> Layer:
        mlp = DenseFfn(self.hidden_size, self.intermediate_size, False, self.hidden_act, self.mlp_names)
        norm = self.rms_norm()
        norms = (("attention_layernorm", norm), ("feedforward_layernorm", norm))
        scalars = tuple(Parameter("ffn", "activation", f"mlp.act_fn.{name}", (1,)) for name in ("alpha_p", "alpha_n"))
        return self.layer(
            self.attention(window, **self.per_head_norms()), mlp, norms, parameters=scalars if self.xielu else ()
        )

    def checkpoint_extras(self) -> tuple[CheckpointExtra, ...]:
        if not self.xielu:
            return super().checkpoint_extras()
        return super().checkpoint_extras() + (
            CheckpointExtra(
                name="xIELU beta and eps buffers",
                reason=f"two constants per layer × {self.num_hidden_layers} layers; buffers of the activation, saved with the weights",
                tensors=tuple(StoredTensor(f"{self.layer_name}.mlp.act_fn.{name}", ()) for name in ("beta", "eps")),
                per_layer=tuple(range(self.num_hidden_layers)),
                buffer=True,
            ),
        )
