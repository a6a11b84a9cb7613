"""Longformer (allenai/longformer-base-4096): RoBERTa's embeddings, post-LN layers and heads, whose self-attention
reads a two-sided sliding window of attention_window keys (per layer) in overlapping chunks, with separate global
projections for the tokens an input marks as global."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, model_validator

from ..schema import MAX_LAYERS, Width
from ..spec import Layer, ModelSpec, Parameter
from ..values import replace
from .bert import ROBERTA_HEADS, RobertaLayout
from .registry import family

# The global projections of every layer (LongformerSelfAttention.query_global, key_global, value_global, biased):
# they run only for the tokens a global_attention_mask marks, which ffncalc's figures have none of.
GLOBAL_PROJECTIONS = ("query_global", "key_global", "value_global")

Windows = Annotated[list[Width], Field(min_length=1, max_length=MAX_LAYERS)]


def layer_windows(attention_window: int | list[int], layers: int) -> list[int]:
    """Each of LAYERS layers' attention_window (one for all, or one a layer), refused where transformers asserts: a
    list not one a layer, an odd window, or (its forward) a window not dividing the largest, to whose multiple the
    input is padded."""
    windows = list(attention_window) if isinstance(attention_window, list) else [attention_window] * layers
    if len(windows) != layers:
        raise ValueError(
            f"attention_window lists {len(windows)} windows for {layers} layers (num_hidden_layers); transformers "
            "asserts one a layer"
        )
    odd = sorted({window for window in windows if window % 2})
    if odd:
        raise ValueError(f"attention_window {odd[0]} is odd; transformers asserts each window is even")
    largest = max(windows)
    uneven = sorted({window for window in windows if largest % window})
    if uneven:
        raise ValueError(
            f"attention_window {uneven[0]} does not divide the largest, {largest}: transformers pads the input to a "
            f"multiple of {largest} and asserts every layer's window divides it, which fails for most inputs"
        )
    return windows


def global_projections(module: str, hidden: int) -> tuple[Parameter, ...]:
    """MODULE's query_global, key_global and value_global (hidden → hidden, biased): parameters that run only for global
    tokens."""
    return tuple(
        Parameter("attention", name, f"{module}.{name}.{tensor}", shape)
        for name in GLOBAL_PROJECTIONS
        for tensor, shape in (("weight", (hidden, hidden)), ("bias", (hidden,)))
    )


def windowed(layer: Layer, window: int) -> Layer:
    """LAYER with its two-sided window of WINDOW + 1 keys (window / 2 either side and its own), scored in chunks."""
    assert layer.attention is not None
    return replace(layer, attention=replace(layer.attention, window=window + 1, two_sided_chunks=True))


@family("longformer", transformers="LongformerConfig", architecture="Longformer", model_class="LongformerForMaskedLM")
class LongformerConfig(RobertaLayout):
    """configuration_longformer.py / modeling_longformer.py: RoBERTa's embeddings under longformer.* (word, position
    and token-type tables, a LayerNorm; no position_ids buffer), post-LN layers whose attention.self holds query, key,
    value and, beside them, query_global, key_global and value_global (all hidden → hidden, biased), then
    attention.output.dense, the MLP and two LayerNorms; RoBERTa's heads (lm_head: dense, layer_norm, a decoder tied to
    the word table, and a bias), the pooler only in LongformerModel and the multiple-choice model. No causal LM.

    Each layer's attention_window (one for all layers, or one per layer; even, as transformers asserts) is two-sided:
    a query reads the w = attention_window / 2 keys either side of it and its own, 2w + 1. LongformerModel pads the
    input to a multiple of the largest window (P positions) and drops the padding after the last layer, so the layers
    run over P positions and the head over the input's; each layer scores its window in overlapping chunks
    (Attention.two_sided_chunks), what compute.sliding_chunks_flops counts. Global attention runs only for tokens an
    input's global_attention_mask marks: ffncalc counts an input with none (global_attention_mask absent or zeros),
    so the global projections hold parameters and cost no FLOPs. The padding mask transformers spreads over the chunks
    with the same chunked product contracts a width of 1, which torch runs as a multiplication, not a matmul."""

    class_prefix = "Longformer"
    base_model_prefix = "longformer"
    classes = frozenset(ROBERTA_HEADS) - {"ForCausalLM"}

    attention_window: Width | Windows

    @model_validator(mode="after")
    def _check_windows(self) -> LongformerConfig:
        self.windows()
        return self

    def notes(self) -> list[str]:
        return [
            *super().notes(),
            "Counted with no global tokens (global_attention_mask absent or zeros): query_global, key_global and "
            "value_global hold parameters and run for no token; a global token would also run them and attend to, "
            "and be attended by, every token.",
        ]

    def windows(self) -> list[int]:
        """Each layer's attention_window."""
        return layer_windows(self.attention_window, self.num_hidden_layers)

    def encoder_layer(self) -> Layer:
        return replace(super().encoder_layer(), parameters=global_projections("attention.self", self.hidden_size))

    def to_spec(self) -> ModelSpec:
        spec = super().to_spec()
        layers = tuple(windowed(layer, window) for layer, window in zip(spec.layers, self.windows(), strict=True))
        return replace(spec, layers=layers, encoder_pad_to=max(self.windows()), checkpoint_extras=())
