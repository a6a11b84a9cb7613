"""fairseq's S2T (Speech2Text): strided convolutions with gated linear units over log-mel features, then a pre-LN
encoder and a text decoder with cross-attention, in BART's module names, with sinusoidal positions."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import Field, model_validator

from ..schema import Flag, HeadCount, HFConfig, LayerCount, Name, PositionCount, Width
from ..spec import Extra, LearnedTensor, ModelNames, ModelSpec, Runs
from .bart import BartStacks
from .blocks import check_heads_divide, check_padding_row
from .registry import family

Kind = Literal["model", "generation"]


@family(
    "speech_to_text",
    transformers="Speech2TextConfig",
    architecture="Speech2Text",
    model_class="Speech2TextForConditionalGeneration",
)
class Speech2TextConfig(BartStacks, HFConfig):
    """configuration_speech_to_text.py / modeling_speech_to_text.py (transformers 5.24).

    Encoder: Conv1dSubsampler, num_conv_layers convolutions of conv_kernel_sizes taps, stride 2, with biases (the
    first reads input_feat_per_channel · input_channels features, each later one half the previous one's
    conv_channels, as its gated linear unit leaves them; the last emits 2 · d_model, which its GLU halves); pre-LN
    layers (self-attention, fc1, fc2, every linear biased), a final layer_norm. Decoder: a token table, pre-LN
    layers with cross-attention (encoder_attn), a final layer_norm. Both position tables are sinusoidal buffers
    that are neither parameters nor saved. The head (lm_head) is tied to the decoder's token table unless
    tie_word_embeddings is false.
    """

    informational_fields = frozenset({"pad_token_id", "max_source_positions", "scale_embedding"})
    context_field = "max_target_positions"  # the decoder's longest context
    class_prefix: ClassVar[str] = "Speech2Text"
    classes: ClassVar[dict[str, Kind]] = {"Model": "model", "ForConditionalGeneration": "generation"}

    vocab_size: Width
    encoder_layers: LayerCount
    encoder_ffn_dim: Width
    encoder_attention_heads: HeadCount
    decoder_layers: LayerCount
    decoder_ffn_dim: Width
    decoder_attention_heads: HeadCount
    activation_function: Name
    d_model: Width
    max_source_positions: PositionCount
    max_target_positions: PositionCount
    num_conv_layers: LayerCount
    conv_kernel_sizes: Annotated[list[Width], Field(max_length=64)]
    conv_channels: Width
    input_feat_per_channel: Width
    input_channels: Width
    scale_embedding: Flag
    pad_token_id: Annotated[int | None, Field(strict=True)]  # the token table's padding row: it must be a row of it
    tie_word_embeddings: Flag

    @model_validator(mode="after")
    def _check_shapes(self) -> Speech2TextConfig:
        if len(self.conv_kernel_sizes) != self.num_conv_layers:
            raise ValueError(
                f"conv_kernel_sizes has {len(self.conv_kernel_sizes)} entries for num_conv_layers "
                f"({self.num_conv_layers}); transformers requires one kernel size per convolution"
            )
        check_heads_divide(self, "d_model")
        check_padding_row(self.pad_token_id, self.vocab_size)
        return self

    def model_class(self) -> str:
        named = (self.architectures or [""])[0]
        return named if named.removeprefix(self.class_prefix) in self.classes else self.default_model_class

    def notes(self) -> list[str]:
        notes = [
            "Encoder-decoder over log-mel features: per generated token only the decoder runs (its cross-attention "
            "projects the encoder output's keys and values once); the encoder's length follows the clip (its "
            f"{self.num_conv_layers} stride-2 convolutions divide the frames by {2**self.num_conv_layers}), so the "
            "context stands for it too. What a clip costs (`audio`) is not counted: S2T reads no fixed window."
        ]
        if self.architectures and self.model_class() != self.architectures[0]:
            notes.append(
                f"{self.architectures[0]} is not a Speech2Text class ffncalc knows; counted as {self.model_class()}."
            )
        return notes

    def encoder_extras(self, root: str) -> list[Extra]:
        """Conv1dSubsampler's convolutions (in → out, kernel taps, with biases) and the final LayerNorm: none runs
        for a generated token."""
        runs: Runs = "not_generating"
        extras = []
        last = self.num_conv_layers - 1
        for i, kernel in enumerate(self.conv_kernel_sizes):
            reads = self.input_feat_per_channel * self.input_channels if i == 0 else self.conv_channels // 2
            emits = self.conv_channels if i < last else 2 * self.d_model
            module = f"{root}encoder.conv.conv_layers.{i}."
            extras += [
                Extra("other", module + "weight", LearnedTensor((emits, reads, kernel), matmul=True), runs),
                Extra("other", module + "bias", LearnedTensor((emits,)), runs),
            ]
        extras.append(Extra("norm", f"{root}encoder.layer_norm", self.layer_norm(), runs))
        return extras

    def to_spec(self) -> ModelSpec:
        kind = self.classes[self.model_class().removeprefix(self.class_prefix)]
        root = "" if kind == "model" else "model."
        return ModelSpec(
            model_type=self.model_type,
            hidden_size=self.d_model,
            vocab_size=self.vocab_size,
            layers=self.stack("encoder", root) + self.stack("decoder", root),
            final_norm=self.layer_norm(),
            tie_word_embeddings=self.tie_word_embeddings,
            names=ModelNames(f"{root}decoder.embed_tokens", f"{root}decoder.layer_norm", base_model_prefix="model"),
            lm_head=kind != "model",
            extras=tuple(self.encoder_extras(root)),
        )
