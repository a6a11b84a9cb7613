"""LED (allenai/led-base-16384, the Longformer Encoder-Decoder): BART's stacks and heads, its encoder's self-attention
Longformer's (a two-sided sliding window of attention_window keys a layer, scored in overlapping chunks over the input
padded to a multiple of the largest, with global projections for the tokens an input marks as global)."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import model_validator

from ..schema import PositionCount, Width
from ..spec import Layer, ModelSpec, names
from ..values import replace
from .bart import BartLayout, Kind
from .longformer import Windows, global_projections, layer_windows, windowed
from .registry import family

# LEDEncoderAttention: the Longformer attention (longformer_self_attn) and its output projection (output)
LONGFORMER_SELF_ATTENTION = "self_attn.longformer_self_attn"
LED_ENCODER_ATTENTION = names(
    q=f"{LONGFORMER_SELF_ATTENTION}.query",
    k=f"{LONGFORMER_SELF_ATTENTION}.key",
    v=f"{LONGFORMER_SELF_ATTENTION}.value",
    o="self_attn.output",
)


@family("led", transformers="LEDConfig", architecture="LED", model_class="LEDForConditionalGeneration")
class LEDConfig(BartLayout):
    """configuration_led.py / modeling_led.py: BART's post-LN stacks, tables and heads under led.* (shared, a learned
    position table a stack, max_encoder_position_embeddings and max_decoder_position_embeddings rows with no offset,
    layernorm_embedding, the seq2seq LM's head tied to shared and its final_logits_bias buffer, qa_outputs for spans;
    no sequence classifier, no causal LM). The encoder's self-attention is LEDEncoderAttention: Longformer's
    (self_attn.longformer_self_attn: query, key, value and query_global, key_global, value_global, all biased) and
    self_attn.output.

    As Longformer's, each encoder layer's attention_window (one for all, or one a layer: num_hidden_layers is
    encoder_layers) is two-sided, w = attention_window / 2 keys either side of a query, scored in overlapping chunks;
    LEDEncoder pads the input to a multiple of the largest window and drops the padding after its last layer, so the
    decoder's cross-attention reads the input's positions. ffncalc counts an input with no global tokens
    (global_attention_mask absent or zeros): the global projections hold parameters and cost no FLOPs."""

    class_prefix = "LED"
    base_model_prefix = "led"
    classes: ClassVar[dict[str, Kind]] = {
        "Model": "model",
        "ForConditionalGeneration": "generation",
        "ForQuestionAnswering": "question",
    }
    position_offset = 0

    max_encoder_position_embeddings: PositionCount
    max_decoder_position_embeddings: PositionCount
    attention_window: Width | Windows

    @model_validator(mode="after")
    def _check_windows(self) -> LEDConfig:
        self.windows()
        return self

    def windows(self) -> list[int]:
        """Each encoder layer's attention_window."""
        return layer_windows(self.attention_window, self.encoder_layers)

    def position_rows(self, kind: Literal["encoder", "decoder"]) -> int:
        return self.max_encoder_position_embeddings if kind == "encoder" else self.max_decoder_position_embeddings

    def model_root(self) -> str:
        return "" if self.kind == "model" else "led."

    def notes(self) -> list[str]:
        return [
            *super().notes(),
            "Counted with no global tokens (global_attention_mask absent or zeros): the encoder's query_global, "
            "key_global and value_global hold parameters and run for no token; a global token would also run them and "
            "attend to, and be attended by, every token.",
        ]

    def stack(self, kind: Literal["encoder", "decoder"], root: str) -> tuple[Layer, ...]:
        layers = super().stack(kind, root)
        if kind == "decoder":
            return layers
        layer = layers[0]
        assert layer.attention is not None
        attention = replace(layer.attention, names=LED_ENCODER_ATTENTION)
        layer = replace(
            layer, attention=attention, parameters=global_projections(LONGFORMER_SELF_ATTENTION, self.d_model)
        )
        return tuple(windowed(layer, window) for window in self.windows())

    def to_spec(self) -> ModelSpec:
        return replace(super().to_spec(), encoder_pad_to=max(self.windows()))
