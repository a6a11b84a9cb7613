"""GPT-2: learned positions, LayerNorms with biases, biases on every linear, a tied head."""

from __future__ import annotations

from pydantic import AliasChoices, Field, model_validator

from ..schema import Flag, HFConfig, HeadCount, LayerCount, Name, PositionCount, Width
from ..spec import Attention, CheckpointExtra, DenseFfn, Layer, ModelSpec, Norm


class Gpt2Config(HFConfig):
    """configuration_gpt2.py: n_embd / n_layer / n_head / n_positions (hidden_size etc. accepted too);
    ``n_inner: null`` means 4 · n_embd. Conv1D c_attn is q, k, v side by side."""

    architecture = "GPT-2"
    vocab_size: Width
    n_embd: Width = Field(validation_alias=AliasChoices("n_embd", "hidden_size"))
    n_layer: LayerCount = Field(validation_alias=AliasChoices("n_layer", "num_hidden_layers"))
    n_head: HeadCount = Field(validation_alias=AliasChoices("n_head", "num_attention_heads"))
    n_positions: PositionCount = Field(1024, validation_alias=AliasChoices("n_positions", "max_position_embeddings"))
    n_inner: Width | None = None
    activation_function: Name = "gelu_new"
    tie_word_embeddings: Flag = True

    @model_validator(mode="after")
    def _check_heads(self) -> "Gpt2Config":
        if self.n_embd % self.n_head:
            raise ValueError(f"n_embd ({self.n_embd}) is not a multiple of n_head ({self.n_head})")
        return self

    def to_spec(self) -> ModelSpec:
        hidden = self.n_embd
        norm = Norm("layernorm", hidden, bias=True)
        attention = Attention.uniform(hidden, self.n_head, bias=True)
        ffn = DenseFfn(hidden, self.n_inner or 4 * hidden, gated=False, activation=self.activation_function, bias=True)
        layer = Layer(attention=attention, ffn=ffn, norms=(("ln_1", norm), ("ln_2", norm)))
        mask = CheckpointExtra(
            name="attn.bias causal-mask buffers",
            elements=self.n_layer * self.n_positions * self.n_positions,
            reason=f"{self.n_layer} layers × {self.n_positions}² mask entries, saved by older transformers (e.g. openai-community/gpt2)",
        )
        return self.make_spec(
            hidden_size=hidden,
            vocab_size=self.vocab_size,
            layers=(layer,) * self.n_layer,
            final_norm=norm,
            tie_word_embeddings=self.tie_word_embeddings,
            position_embeddings=self.n_positions,
            checkpoint_extras=(mask,),
        )
