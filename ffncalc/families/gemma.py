"""Gemma (tied, head_dim 256, GeGLU), Gemma-2 (four norms a layer, alternating windows), VaultGemma (Gemma-2
with norms before the sublayers only), Gemma-3 (q/k norms, 5 local : 1 global) and the Gemma-3 multimodal
wrapper."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import AliasChoices, Field, model_validator

from ..schema import Flag, HeadCount, LayerCount, Name, PositionCount, Width
from ..spec import Layer, Norm
from .base import DecoderConfig
from .blocks import periodic_window, windows_of_layer_types
from .multimodal import MultimodalConfig


class GemmaConfig(DecoderConfig):
    """configuration_gemma.py: embeddings tied unless told otherwise; head_dim 256 by default.

    Gemma's RMSNorm scales by (1 + weight), which changes its values, not its size.
    """

    architecture = "Gemma"
    config_class = "GemmaConfig"
    default_model_class = "GemmaForCausalLM"
    heads_divide_hidden = False  # configuration_*.py floors hidden_size // num_attention_heads
    derived_defaults = {"num_key_value_heads": "num_attention_heads"}

    vocab_size: Width = 256000
    hidden_size: Width = 3072
    intermediate_size: Width = 24576
    num_hidden_layers: LayerCount = 28
    num_attention_heads: HeadCount = 16
    num_key_value_heads: HeadCount | None = 16
    head_dim: Width | None = 256
    hidden_act: Name = "gelu_pytorch_tanh"
    max_position_embeddings: PositionCount = 8192
    tie_word_embeddings: Flag = True
    mlp_bias: ClassVar[bool] = False
    pad_token_id: int | None = Field(0, strict=True)


class Gemma2Config(GemmaConfig):
    """configuration_gemma2.py: norms before and after both attention and FFN; windows from layer_types,
    by default on the even-indexed layers (every second layer global). transformers refuses a hidden
    size that is not a multiple of the heads, head_dim or not."""

    architecture = "Gemma-2"
    config_class = "Gemma2Config"
    default_model_class = "Gemma2ForCausalLM"
    heads_divide_hidden = True  # Gemma2Config.validate_architecture
    derived_defaults = {"layer_types": "every second layer global, the others sliding"}
    global_period: ClassVar[int] = 2

    hidden_size: Width = 2304
    intermediate_size: Width = 9216
    num_hidden_layers: LayerCount = 26
    num_attention_heads: HeadCount = 8
    num_key_value_heads: HeadCount | None = 4
    # Gemma-2 and 3 name the activation `hidden_activation`; older configs only have `hidden_act`.
    hidden_act: Name = Field(
        default="gelu_pytorch_tanh", validation_alias=AliasChoices("hidden_activation", "hidden_act")
    )
    sliding_window: Width | None = 4096
    layer_types: list[Literal["full_attention", "sliding_attention"]] | None = None

    def resolved(self, field: str):
        if field == "layer_types":
            return ["full_attention" if window is None else "sliding_attention" for window in self.layer_windows()]
        return super().resolved(field)

    @property
    def window(self) -> int | None:
        return self.sliding_window

    def layer_windows(self) -> list[int | None]:
        if self.layer_types is not None:
            return windows_of_layer_types(self.layer_types, self.window)
        return [periodic_window(i, self.window, self.global_period) for i in range(self.num_hidden_layers)]

    def sandwich_norms(self) -> tuple[tuple[str, Norm], ...]:
        norm = self.rms_norm()
        return (
            ("input_layernorm", norm),
            ("post_attention_layernorm", norm),
            ("pre_feedforward_layernorm", norm),
            ("post_feedforward_layernorm", norm),
        )

    def build_layer(self, index: int, window: int | None) -> Layer:
        return self.layer(self.attention(window), self.gated_ffn(), self.sandwich_norms())


class VaultGemmaConfig(Gemma2Config):
    """configuration_vaultgemma.py / modular_vaultgemma.py: Gemma-2's layer without the norms after attention
    and after the FFN (input_layernorm and pre_feedforward_layernorm remain); Gemma-2's windows."""

    architecture = "VaultGemma"
    config_class = "VaultGemmaConfig"
    default_model_class = "VaultGemmaForCausalLM"

    def build_layer(self, index: int, window: int | None) -> Layer:
        norm = self.rms_norm()
        norms = (("input_layernorm", norm), ("pre_feedforward_layernorm", norm))
        return self.layer(self.attention(window), self.gated_ffn(), norms)


class Gemma3TextConfig(Gemma2Config):
    """configuration_gemma3.py (text): Gemma-2's layer plus RMSNorm on each query and key head; by
    default every ``sliding_window_pattern``-th layer (6, a key read only for layer_types) is global.
    With use_bidirectional_attention the window becomes sliding_window // 2 + 1."""

    architecture = "Gemma-3"
    config_class = "Gemma3TextConfig"
    default_model_class = "Gemma3ForCausalLM"
    undeclared_keys = frozenset({"sliding_window_pattern"})  # still in configs on the Hub; __post_init__ reads it
    derived_defaults = {"layer_types": "every sliding_window_pattern-th layer (default 6) global, the others sliding"}

    vocab_size: Width = 262208
    max_position_embeddings: PositionCount = 131072
    use_bidirectional_attention: Flag = False
    sliding_window_pattern: LayerCount = 6  # not a field of Gemma3TextConfig: a key it still reads

    @property
    def global_period(self) -> int:  # type: ignore[override]
        return self.sliding_window_pattern

    @property
    def window(self) -> int | None:
        if self.sliding_window is not None and self.use_bidirectional_attention:
            return self.sliding_window // 2 + 1
        return self.sliding_window

    def unused_fields(self) -> set[str]:
        return {"sliding_window_pattern"} if self.layer_types is not None else set()

    def build_layer(self, index: int, window: int | None) -> Layer:
        attention = self.attention(window, **self.per_head_norms())
        return self.layer(attention, self.gated_ffn(), self.sandwich_norms())


class Gemma3Config(MultimodalConfig):
    """configuration_gemma3.py: a SigLIP vision tower and a projector around a Gemma-3 text model; the
    top-level tie_word_embeddings (default true) decides tying."""

    architecture = "Gemma-3"
    config_class = "Gemma3Config"
    default_model_class = "Gemma3ForConditionalGeneration"
    text_model_type = "gemma3_text"
    tie_word_embeddings: Flag = True
