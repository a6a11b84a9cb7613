"""The Swiss AI Initiative's Apertus: Llama's attention with per-head q/k norms, a plain MLP whose xIELU
activation learns two scalars per layer; Apertus 1.5's language model, whose head may be pruned to the text tokens."""

from __future__ import annotations

from pydantic import Field, model_validator

from ..schema import Name, PositionCount, Width
from ..spec import CheckpointExtra, DenseFfn, Layer, ModelSpec, Parameter, StoredTensor
from ..values import replace
from .base import AttentionBias, DecoderConfig, FfnWidth, HeadDim, HiddenLayers, KvHeads, TiedEmbeddings
from .registry import family


@family("apertus")
class ApertusConfig(HeadDim, KvHeads, AttentionBias, TiedEmbeddings, FfnWidth, HiddenLayers, DecoderConfig):
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


@family("apertus1p5_text")
class Apertus1p5TextConfig(ApertusConfig):
    """configuration_apertus1p5.py / modeling_apertus1p5.py (Apertus1p5TextForCausalLM): Apertus's layers with an
    extended vocabulary (text, then image and audio codes: vocab_size 266,752) and a head that output_vocab_size may
    prune to its first rows (None, or vocab_size itself: unpruned); the token table keeps vocab_size rows."""

    architecture = "Apertus 1.5"
    config_class = "Apertus1p5TextConfig"
    default_model_class = "Apertus1p5TextForCausalLM"

    vocab_size: Width = 266752
    output_vocab_size: Width | None = None

    @model_validator(mode="after")
    def _check_output_vocab(self) -> Apertus1p5TextConfig:
        if self.output_vocab_size is not None and self.output_vocab_size > self.vocab_size:
            raise ValueError(
                f"output_vocab_size ({self.output_vocab_size}) must be in [1, vocab_size] (vocab_size is "
                f"{self.vocab_size}), as transformers requires"
            )
        return self

    @property
    def pruned(self) -> bool:
        """A head of fewer rows than the table; tied, transformers makes the head the table itself, every row."""
        return (
            self.output_vocab_size is not None
            and self.output_vocab_size < self.vocab_size
            and not self.tie_word_embeddings
        )

    def notes(self) -> list[str]:
        notes = super().notes()
        if self.tie_word_embeddings and self.output_vocab_size is not None and self.output_vocab_size < self.vocab_size:
            notes.append(
                f"output_vocab_size ({self.output_vocab_size}) with tie_word_embeddings true: transformers ties the "
                f"head to the token table, whose {self.vocab_size:,} rows it then computes; counted so (released "
                "checkpoints are untied)"
            )
        return notes

    def to_spec(self) -> ModelSpec:
        spec = super().to_spec()
        return replace(spec, lm_head_rows=self.output_vocab_size) if self.pruned else spec
