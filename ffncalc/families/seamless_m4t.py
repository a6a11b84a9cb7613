"""SeamlessM4T and SeamlessM4T v2 as their text-to-text classes: M2M-100's pre-LN encoder-decoder stored under their
own module names, the speech encoder, text-to-unit model and vocoder not built."""

from __future__ import annotations

from pydantic import AliasChoices, Field

from ..schema import HeadCount, LayerCount, Width
from ..spec import names
from .bart import M2M100Config
from .registry import family


@family(
    "seamless_m4t",
    transformers="SeamlessM4TConfig",
    architecture="SeamlessM4T",
    model_class="SeamlessM4TForTextToText",
    other_names={"d_model": "SeamlessM4TConfig's field is hidden_size; BART's layers, which it shares, read d_model"},
)
class SeamlessM4TConfig(M2M100Config):
    """configuration_seamless_m4t.py / modeling_seamless_m4t.py (SeamlessM4TForTextToText, the class of the seq2seq
    mapping): a token table (shared) that both stacks read and the head is tied to, SeamlessM4TEncoder (text_encoder)
    and SeamlessM4TDecoder (text_decoder), pre-LN layers with biases everywhere (self_attn, the decoder's
    cross_attention, ffn.fc1 and ffn.fc2, each followed by a LayerNorm: self_attn_layer_norm,
    cross_attention_layer_norm, ffn_layer_norm) and a final layer_norm per stack; sinusoidal positions computed into
    a buffer that is neither a parameter nor saved; no final_logits_bias. The class's modules sit at the top (no
    model. prefix). The speech encoder, text-to-unit model and vocoder that SeamlessM4TModel and the speech classes
    add (speech_encoder_*, t2u_*, the vocoder's fields) are not built by this class."""

    class_prefix = "SeamlessM4T"
    classes = {"ForTextToText": "generation"}
    base_model_prefix = ""  # the text model's modules are at the top of every SeamlessM4T class
    stack_modules = {"encoder": "text_encoder", "decoder": "text_decoder"}
    cross_attention_names = names(
        q="cross_attention.q_proj", k="cross_attention.k_proj", v="cross_attention.v_proj", o="cross_attention.out_proj"
    )
    mlp_names = names(up="ffn.fc1", down="ffn.fc2")
    norm_modules = {"self": "self_attn_layer_norm", "cross": "cross_attention_layer_norm", "ffn": "ffn_layer_norm"}

    # SeamlessM4TConfig.attribute_map: num_hidden_layers and num_attention_heads are the decoder's
    encoder_layers: LayerCount
    encoder_attention_heads: HeadCount
    decoder_layers: LayerCount
    decoder_attention_heads: HeadCount
    d_model: Width = Field(validation_alias=AliasChoices("hidden_size", "d_model"))

    def model_root(self) -> str:
        return ""

    def notes(self) -> list[str]:
        notes = super().notes()
        named = (self.architectures or [self.default_model_class])[0]
        if named == self.default_model_class:
            return notes
        if named == f"{self.class_prefix}ForSpeechToText":
            built = "reads speech through a Conformer speech encoder (speech_encoder_*, its adapter) in place of the text encoder"
        else:
            built = "also builds the speech encoder, and where it speaks the text-to-unit model and the vocoder"
        notes[-1] = (
            f"{named} is not counted: it {built}, which no adapter lays out; counted as {self.default_model_class}, "
            "the text model."
        )
        return notes


@family(
    "seamless_m4t_v2",
    transformers="SeamlessM4Tv2Config",
    architecture="SeamlessM4T v2",
    model_class="SeamlessM4Tv2ForTextToText",
)
class SeamlessM4Tv2Config(SeamlessM4TConfig):
    """configuration_seamless_m4t_v2.py / modeling_seamless_m4t_v2.py (SeamlessM4Tv2ForTextToText): v1's text model,
    its sinusoidal buffers 4,096 positions long by default."""

    class_prefix = "SeamlessM4Tv2"
