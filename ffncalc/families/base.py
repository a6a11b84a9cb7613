"""The Llama-shaped decoder that most families refine: fields, transformers' defaults, builders.

A family adapter subclasses ``DecoderConfig``, changes the defaults its
``configuration_<family>.py`` sets, and assembles its layers from the builders here.
"""

from __future__ import annotations

from typing import Literal

from pydantic import model_validator

from ..schema import Flag, HFConfig, HeadCount, LayerCount, Name, Width
from ..spec import Attention, CheckpointExtra, DenseFfn, Layer, ModelSpec, Norm

LayerType = Literal["full_attention", "sliding_attention"]


def experts_check(per_token_field: str, experts_field: str):
    """A model validator for MoE adapters: experts per token may not exceed the experts there are."""

    def check(self):
        per_token, experts = getattr(self, per_token_field), getattr(self, experts_field)
        if experts and per_token > experts:
            raise ValueError(f"{per_token_field} ({per_token}) exceeds {experts_field} ({experts})")
        return self

    return model_validator(mode="after")(check)


class DecoderConfig(HFConfig):
    """Fields of a Llama-style decoder; defaults are LlamaConfig's where transformers has one.

    The five sizes are required: transformers would fall back to a 7B-sized default,
    which for a config that omits them is a guess, not a count.
    """

    vocab_size: Width
    hidden_size: Width
    intermediate_size: Width
    num_hidden_layers: LayerCount
    num_attention_heads: HeadCount
    num_key_value_heads: HeadCount | None = None  # None: as many as num_attention_heads (MHA)
    head_dim: Width | None = None  # None: hidden_size // num_attention_heads
    tie_word_embeddings: Flag = False
    attention_bias: Flag = False
    mlp_bias: Flag = False
    hidden_act: Name = "silu"
    sliding_window: Width | None = None
    layer_types: list[LayerType] | None = None

    @model_validator(mode="after")
    def _check_shapes(self) -> "DecoderConfig":
        if self.head_dim is None and self.hidden_size < self.num_attention_heads:
            raise ValueError(
                f"hidden_size ({self.hidden_size}) is smaller than num_attention_heads "
                f"({self.num_attention_heads}) and no head_dim is given"
            )
        if self.num_attention_heads % self.kv_heads:
            raise ValueError(
                f"num_attention_heads ({self.num_attention_heads}) is not a multiple of "
                f"num_key_value_heads ({self.kv_heads})"
            )
        if self.layer_types is not None and len(self.layer_types) != self.num_hidden_layers:
            raise ValueError(
                f"layer_types has {len(self.layer_types)} entries for {self.num_hidden_layers} layers"
            )
        return self

    # --- resolved values (transformers' defaulting rules) ---

    @property
    def kv_heads(self) -> int:
        return self.num_key_value_heads or self.num_attention_heads

    @property
    def resolved_head_dim(self) -> int:
        return self.head_dim or self.hidden_size // self.num_attention_heads

    def layer_windows(self) -> list[int | None]:
        """Each layer's attention window: from ``layer_types`` if given, else the family's rule."""
        if self.layer_types is not None:
            return [self.sliding_window if kind == "sliding_attention" else None for kind in self.layer_types]
        return [self.default_window(index) for index in range(self.num_hidden_layers)]

    def default_window(self, index: int) -> int | None:
        """Window of layer ``index`` when the config has no layer_types: every layer slides if a window is set."""
        return self.sliding_window

    # --- builders ---

    def rms_norm(self, dim: int | None = None) -> Norm:
        return Norm("rmsnorm", dim or self.hidden_size)

    def attention(self, window: int | None, **overrides) -> Attention:
        """Standard q/k/v/o attention with this config's heads; ``overrides`` set biases, norms, sinks."""
        fields = dict(
            hidden_size=self.hidden_size,
            num_heads=self.num_attention_heads,
            num_kv_heads=self.kv_heads,
            qk_head_dim=self.resolved_head_dim,
            v_head_dim=self.resolved_head_dim,
            q_bias=self.attention_bias,
            k_bias=self.attention_bias,
            v_bias=self.attention_bias,
            o_bias=self.attention_bias,
            window=window,
        )
        fields.update(overrides)
        return Attention(**fields)

    def per_head_norms(self) -> dict:
        """RMSNorm over each query and key head (Qwen3, Gemma-3): attention() overrides."""
        norm = self.rms_norm(self.resolved_head_dim)
        return {"q_norm": norm, "k_norm": norm}

    def gated_ffn(self, width: int | None = None, bias: bool | None = None) -> DenseFfn:
        return DenseFfn(
            hidden_size=self.hidden_size,
            intermediate_size=width or self.intermediate_size,
            gated=True,
            activation=self.hidden_act,
            bias=self.mlp_bias if bias is None else bias,
        )

    def pre_norms(self) -> tuple[tuple[str, Norm], ...]:
        """Llama's two RMSNorms per layer: before attention and before the FFN."""
        norm = self.rms_norm()
        return (("input_layernorm", norm), ("post_attention_layernorm", norm))

    def build_layer(self, index: int, window: int | None) -> Layer:
        """A Llama layer; families override this to change attention, FFN or norms."""
        return Layer(attention=self.attention(window), ffn=self.gated_ffn(), norms=self.pre_norms())

    def rotary_extras(self) -> tuple[CheckpointExtra, ...]:
        """Rotary ``inv_freq`` tables: buffers that transformers before 4.32 saved with the weights (Llama-2-7b)."""
        if not self.written_before(4, 32):
            return ()
        per_layer = self.resolved_head_dim // 2
        return (
            CheckpointExtra(
                name="rotary inv_freq buffers",
                elements=per_layer * self.num_hidden_layers,
                reason=(
                    f"{per_layer} per layer × {self.num_hidden_layers} layers; buffers, not parameters, which "
                    f"transformers before 4.32 saved with the weights (this config: {self.transformers_version})"
                ),
            ),
        )

    def checkpoint_extras(self) -> tuple[CheckpointExtra, ...]:
        return self.rotary_extras()

    def notes(self) -> tuple[str, ...]:
        return ()

    def to_spec(self) -> ModelSpec:
        layers = tuple(self.build_layer(index, window) for index, window in enumerate(self.layer_windows()))
        return self.make_spec(
            hidden_size=self.hidden_size,
            vocab_size=self.vocab_size,
            layers=layers,
            final_norm=self.rms_norm(),
            tie_word_embeddings=self.tie_word_embeddings,
            checkpoint_extras=self.checkpoint_extras(),
            notes=self.notes(),
        )
