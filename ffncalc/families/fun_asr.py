"""Fun-ASR-Nano (modeling_fun_asr_nano.py, transformers 5.24): a SAN-M encoder (self-attention whose values also pass
through an FSMN, a depthwise convolution) over low-frame-rate stacked mel frames, a projector with its own attention
layers, and Qwen3."""

from __future__ import annotations

from functools import cached_property
from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from ..errors import InvalidConfigError
from ..schema import (
    Flag,
    HeadCount,
    LayerCount,
    Name,
    PositionCount,
    Width,
    WidthOrZero,
    read_block,
)
from ..spec import Attention, DenseFfn, Extra, Layer, Linear, Norm, Norms, Parameter, names
from .audio_lm import AudioLanguageConfig
from .registry import family, tower
from .towers import Tower, TowerConfig, audio_module

FUN_ASR_ATTENTION = names(q="self_attn.q_proj", k="self_attn.k_proj", v="self_attn.v_proj", o="self_attn.o_proj")
FUN_ASR_MLP = names(up="mlp.fc1", down="mlp.fc2")


@tower("fun_asr_nano_encoder", transformers="FunAsrNanoEncoderConfig")
class FunAsrNanoEncoderConfig(TowerConfig):
    """configuration_fun_asr_nano.py (FunAsrNanoEncoderConfig) / modeling_fun_asr_nano.py (FunAsrNanoEncoder): sinusoidal
    positions (an unsaved buffer) added to num_stacked_frames stacked mel frames (input_size = num_mel_bins ·
    num_stacked_frames), then num_hidden_layers pre-LN layers: attention (q, k, v reading input_size in the first layer
    and hidden_size after, o, all biased; an FSMN over the values, a depthwise convolution of fsmn_kernel_size taps
    without bias), an MLP fc1, fc2 with biases, input_layernorm (of what the layer reads), post_attention_layernorm,
    and a final_layernorm only in the last transcription layer (num_hidden_layers − num_timestamp_prediction_layers −
    1) and the last layer. It reads clips of any length: no fixed-window rule."""

    informational_fields = frozenset({"max_position_embeddings", "layer_norm_eps"})

    num_mel_bins: Width
    hidden_size: Width
    num_attention_heads: HeadCount
    intermediate_size: Width
    num_hidden_layers: LayerCount
    hidden_act: Name
    max_position_embeddings: PositionCount
    num_stacked_frames: Width
    num_timestamp_prediction_layers: Annotated[int, Field(strict=True, ge=0)]
    fsmn_kernel_size: Width

    def layer(self, prefix: str, index: int) -> Layer:
        """Layer INDEX: the first reads the stacked frames; two normalise their output."""
        hidden, heads = self.hidden_size, self.num_attention_heads
        width = self.num_mel_bins * self.num_stacked_frames if index == 0 else hidden
        head_dim = hidden // heads
        attention = Attention(
            hidden, heads, heads, head_dim, head_dim, FUN_ASR_ATTENTION, True, True, True, True,
            input_size=width if width != hidden else None,
        )  # fmt: skip
        normed = (self.num_hidden_layers - self.num_timestamp_prediction_layers - 1, self.num_hidden_layers - 1)
        norms: Norms = (
            ("input_layernorm", Norm("layernorm", width, bias=True)),
            ("post_attention_layernorm", Norm("layernorm", hidden, bias=True)),
        )
        norms += (("final_layernorm", Norm("layernorm", hidden, bias=True)),) if index in normed else ()
        fsmn = Parameter("audio", "fsmn", "self_attn.fsmn.conv.weight", (hidden, 1, self.fsmn_kernel_size), True)
        return Layer(
            prefix + "layers.{i}",
            attention,
            DenseFfn(hidden, self.intermediate_size, False, self.hidden_act, FUN_ASR_MLP, bias=True),
            norms,
            stack="audio",
            parameters=(fsmn,),
        )

    def tower(self, prefix: str) -> Tower:
        layers = tuple(self.layer(prefix, index) for index in range(self.num_hidden_layers))
        return Tower(layers, (), self.hidden_size, None)


class FunAsrNanoAdaptor(BaseModel):
    """FunAsrNanoAdaptorConfig's fields (transformers 5.24): the projector's width, its attention layers and their
    inner width; it has no model_type of its own."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    hidden_size: Width = 1024
    num_attention_heads: HeadCount = 8
    intermediate_size: WidthOrZero = 256  # a quarter of the language model's width, 0 below 4
    num_hidden_layers: LayerCount = 2
    hidden_act: Name = "relu"
    projector_hidden_act: Name = "relu"
    projector_hidden_size: Width = 2048


# FunAsrNanoConfig.sub_configs_defaults["text_config"].init_kwargs (transformers 5.24): Fun-ASR-Nano-2512's Qwen3.
FUN_ASR_NANO_TEXT = {
    "model_type": "qwen3",
    "hidden_size": 1024,
    "intermediate_size": 3072,
    "num_hidden_layers": 28,
    "num_attention_heads": 16,
    "num_key_value_heads": 8,
    "max_position_embeddings": 40960,
    "tie_word_embeddings": True,
}


@family(
    "fun_asr_nano",
    transformers="FunAsrNanoConfig",
    architecture="Fun-ASR-Nano",
    model_class="FunAsrNanoForConditionalGeneration",
)
class FunAsrNanoConfig(AudioLanguageConfig):
    """configuration_fun_asr_nano.py / modeling_fun_asr_nano.py (transformers 5.24): FunAsrNanoEncoder, a language
    model built by AutoModel (Qwen3 by default; a given text_config is read alone) and FunAsrNanoMultiModalProjector:
    linear_1 (audio hidden → adaptor projector_hidden_size), linear_2 (→ adaptor hidden_size), both biased, then
    adaptor_config.num_hidden_layers layers of the encoder's shape without FSMN (q, k, v, o, fc1, fc2 biased;
    input_layernorm, post_attention_layernorm). Stored in transformers 5's layout (no conversion mapping);
    tie_word_embeddings (default true) ties lm_head. transformers refuses an adaptor whose hidden_size is not the
    language model's or whose intermediate_size is not a quarter of it, and so does ffncalc."""

    text_model_type = "qwen3"
    text_defaults = FUN_ASR_NANO_TEXT
    audio_model_type = "fun_asr_nano_encoder"
    audio_defaults: ClassVar[dict[str, Any]] = {"model_type": "fun_asr_nano_encoder"}
    language_model_prefix = "model.language_model."
    audio_prefix = "model.audio_tower."
    lm_head_name = "lm_head"
    informational_fields = frozenset({"audio_token_id", "initializer_range"})

    adaptor_config: dict[str, Any] | None
    tie_word_embeddings: Flag

    def tied(self) -> bool:
        return self.tie_word_embeddings

    @cached_property
    def adaptor(self) -> FunAsrNanoAdaptor:
        """adaptor_config read over FunAsrNanoAdaptorConfig's defaults, and checked against the language model."""
        adaptor = read_block(FunAsrNanoAdaptor, self.adaptor_config or {}, "adaptor_config")
        text_hidden = self.text.to_spec().hidden_size
        if adaptor.hidden_size != text_hidden:
            raise InvalidConfigError(
                f"adaptor_config.hidden_size: {adaptor.hidden_size} must be text_config.hidden_size ({text_hidden})"
            )
        if adaptor.intermediate_size != text_hidden // 4:
            raise InvalidConfigError(
                f"adaptor_config.intermediate_size: {adaptor.intermediate_size} must be text_config.hidden_size // 4 "
                f"({text_hidden // 4})"
            )
        return adaptor

    def validate_nested(self) -> None:
        super().validate_nested()
        self.adaptor  # noqa: B018 - the adaptor, or an error naming the field

    def audio_projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        adaptor = self.adaptor
        hidden, inner, wide = adaptor.hidden_size, adaptor.intermediate_size, adaptor.projector_hidden_size
        norm = Norm("layernorm", hidden, bias=True)
        modules: list[tuple[str, Linear | Norm]] = [
            ("linear_1", Linear(tower.hidden_size, wide, True)),
            ("linear_2", Linear(wide, hidden, True)),
        ]
        for index in range(adaptor.num_hidden_layers):
            layer = f"layers.{index}."
            modules += [(layer + f"self_attn.{part}_proj", Linear(hidden, hidden, True)) for part in "qkvo"]
            modules += [
                (layer + "mlp.fc1", Linear(hidden, inner, True)),
                (layer + "mlp.fc2", Linear(inner, hidden, True)),
            ]
            modules += [(layer + "input_layernorm", norm), (layer + "post_attention_layernorm", norm)]
        prefix = "model.multi_modal_projector."
        return tuple(audio_module(prefix + name, module, "projector", "per_audio_token") for name, module in modules)
