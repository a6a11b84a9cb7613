"""OpenAI's Whisper: a speech encoder (two convolutions over log-mel frames, then pre-LN layers) and a text decoder
with cross-attention, in BART's module names."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import Field, model_validator

from ..schema import Flag, HeadCount, HFConfig, LayerCount, Name, PositionCount, Width
from ..spec import (
    Attention,
    AudioInput,
    Extra,
    LearnedTensor,
    ModelNames,
    ModelSpec,
    Runs,
    Table,
)
from .audio import WHISPER_FRAMES_PER_SECOND
from .bart import BartStacks
from .blocks import check_heads_divide, check_padding_row
from .registry import family

Kind = Literal["model", "generation", "causal"]


@family("whisper", transformers="WhisperConfig", architecture="Whisper", model_class="WhisperForConditionalGeneration")
class WhisperConfig(BartStacks, HFConfig):
    """configuration_whisper.py / modeling_whisper.py.

    Encoder: conv1 (num_mel_bins → d_model, 3 taps) and conv2 (d_model → d_model, 3 taps, stride 2) with biases,
    a position table of max_source_positions rows (a parameter transformers freezes: counted and saved), pre-LN
    layers, a final layer_norm. Decoder: a token table, a learned position table of max_target_positions rows,
    pre-LN layers with cross-attention (encoder_attn), a final layer_norm. Every attention's k_proj has no bias;
    q, v and out_proj, fc1 and fc2 have. The head (proj_out) is tied to the decoder's token table unless
    tie_word_embeddings is false. Classes: WhisperModel, WhisperForConditionalGeneration, WhisperForCausalLM (the
    decoder alone, its cross-attention run only when given an encoder's states).
    """

    informational_fields = frozenset({"pad_token_id"})
    context_field = "max_target_positions"  # the decoder's longest context
    class_prefix: ClassVar[str] = "Whisper"
    classes: ClassVar[dict[str, Kind]] = {
        "Model": "model",
        "ForConditionalGeneration": "generation",
        "ForCausalLM": "causal",
    }

    vocab_size: Width
    num_mel_bins: Width
    encoder_layers: LayerCount
    encoder_attention_heads: HeadCount
    decoder_layers: LayerCount
    decoder_attention_heads: HeadCount
    encoder_ffn_dim: Width
    decoder_ffn_dim: Width
    activation_function: Name
    d_model: Width
    max_source_positions: PositionCount
    max_target_positions: PositionCount
    pad_token_id: Annotated[int | None, Field(strict=True)]  # the token table's padding row: it must be a row of it
    tie_word_embeddings: Flag

    @model_validator(mode="after")
    def _check_shapes(self) -> WhisperConfig:
        check_heads_divide(self, "d_model")
        check_padding_row(self.pad_token_id, self.vocab_size)
        return self

    def model_class(self) -> str:
        named = (self.architectures or [""])[0]
        return named if named.removeprefix(self.class_prefix) in self.classes else self.default_model_class

    @property
    def kind(self) -> Kind:
        return self.classes[self.model_class().removeprefix(self.class_prefix)]

    def unused_fields(self) -> set[str]:
        if self.kind != "causal":
            return set()
        return {"num_mel_bins", "encoder_layers", "encoder_attention_heads", "encoder_ffn_dim", "max_source_positions"}

    def notes(self) -> list[str]:
        if self.kind == "causal":
            notes = [
                f"{self.model_class()} is the decoder alone (with its cross-attention, which it runs only when given "
                "an encoder's states); the encoder is not built."
            ]
        else:
            notes = [
                "Encoder-decoder: per generated token only the decoder runs, its cross-attention reading the "
                f"encoder's output, always max_source_positions ({self.max_source_positions:,}) positions whatever "
                "the context (the encoder reads one window of twice as many mel frames, 30 s at 1,500 positions, and "
                "refuses any other length): its cache and scores are counted for that many. flops `audio` SECONDS: "
                "what a clip costs the encoder."
            ]
        if self.architectures and self.model_class() != self.architectures[0]:
            notes.append(
                f"{self.architectures[0]} is not a Whisper class ffncalc knows; counted as {self.model_class()}."
            )
        return notes

    def attention(self, heads: int, attention_names) -> Attention:
        """q, v and out_proj with biases, k_proj without (WhisperAttention)."""
        width = self.d_model // heads
        return Attention(self.d_model, heads, heads, width, width, attention_names, True, False, True, True)

    def encoder_extras(self, root: str) -> list[Extra]:
        """The convolutions over the log-mel frames (conv1 keeps the frame rate, conv2 strides by 2: it runs per
        position), the position table and the final LayerNorm: none runs for a generated token."""
        d = self.d_model
        frame: Runs = "per_audio_frame"
        position: Runs = "per_audio_position"
        prefix = f"{root}encoder."
        return [
            Extra("other", prefix + "conv1.weight", LearnedTensor((d, self.num_mel_bins, 3), matmul=True), frame),
            Extra("other", prefix + "conv1.bias", LearnedTensor((d,)), frame),
            Extra("other", prefix + "conv2.weight", LearnedTensor((d, d, 3), matmul=True), position),
            Extra("other", prefix + "conv2.bias", LearnedTensor((d,)), position),
            Extra("embedding", prefix + "embed_positions", Table(self.max_source_positions, d), position),
            Extra("norm", prefix + "layer_norm", self.layer_norm(), position),
        ]

    def audio_input(self) -> AudioInput:
        """WhisperEncoder.forward refuses any input but max_source_positions · 2 frames (conv1's stride 1 times
        conv2's 2), which conv2 halves back to max_source_positions; WhisperFeatureExtractor makes 100 frames a
        second (16 kHz, a hop of 160 samples) and pads every clip to a whole window (30 s at 1,500 positions)."""
        return AudioInput(
            frames=2 * self.max_source_positions,
            frames_per_second=WHISPER_FRAMES_PER_SECOND,
            positions=self.max_source_positions,
            stack="encoder",
        )

    def to_spec(self) -> ModelSpec:
        root = "" if self.kind == "model" else "model."
        causal = self.kind == "causal"
        layers = self.stack("decoder", root) if causal else self.stack("encoder", root) + self.stack("decoder", root)
        runs: Runs = "every_token"
        positions = Extra(
            "embedding", f"{root}decoder.embed_positions", Table(self.max_target_positions, self.d_model), runs
        )
        extras = ([] if causal else self.encoder_extras(root)) + [positions]
        return ModelSpec(
            model_type=self.model_type,
            hidden_size=self.d_model,
            vocab_size=self.vocab_size,
            layers=layers,
            final_norm=self.layer_norm(),
            tie_word_embeddings=self.tie_word_embeddings,
            names=ModelNames(
                f"{root}decoder.embed_tokens",
                f"{root}decoder.layer_norm",
                lm_head="proj_out",
                base_model_prefix="model",
            ),
            lm_head=self.kind != "model",
            extras=tuple(extras),
            # The encoder's output is always max_source_positions long, however short the clip (or the context);
            # the decoder alone (ForCausalLM) reads whatever encoder states it is given.
            audio=None if causal else self.audio_input(),
            cross_attention_keys=None if causal else self.max_source_positions,
        )
