"""Kyutai's Moshi (moshi): its temporal transformer as a text causal LM, Llama's layers with a fused gated MLP and a
token table one row longer than the head; and Kyutai's speech-to-text (kyutai_speech_to_text), the same transformer
over text and audio streams with the Mimi codec."""

from __future__ import annotations

from functools import cached_property
from typing import Annotated, Any

from pydantic import Field, model_validator

from ..schema import Flag, HeadCount, HFConfig, LayerCount, Name, PositionCount, Width, read_block
from ..spec import Layer, ModelSpec, names
from ..values import replace
from .base import DecoderConfig
from .mimi import MimiConfig
from .registry import family

MOSHI_ATTENTION = names(
    q="self_attn.q_proj.linear", k="self_attn.k_proj.linear", v="self_attn.v_proj.linear", o="self_attn.o_proj.linear"
)
# fc1 holds the gate and the up projection, concatenated in that order (MoshiGatingMLP views its output as 2 halves
# and multiplies act(first) by the second); fc2 reads ffn_dim // 2.
MOSHI_MLP = names(gate="mlp.fc1", up="mlp.fc1", down="mlp.fc2")
# MimiConfig's num_codebooks, the audio encoder MoshiConfig builds by default.
MIMI_CODEBOOKS = 32


class MoshiLayers(DecoderConfig):
    """Moshi's temporal transformer (modeling_moshi.py), which Kyutai's speech-to-text keeps: Llama's layers without
    biases (MoshiLinear holds each of q, k, v, o as .linear), head_dim (default hidden_size // heads); MoshiGatingMLP:
    fc1 hidden → ffn_dim (gate and up halves), fc2 ffn_dim / 2 → hidden. The attention refuses a hidden_size that is
    not a multiple of the heads. Every layer attends to the whole context: create_causal_mask, sliding_window never
    read. A registered config adds its token table, its head and what it builds beside them."""

    attention_names = MOSHI_ATTENTION
    mlp_names = MOSHI_MLP
    # sliding_window: held, never read (create_causal_mask)
    informational_fields = DecoderConfig.informational_fields | {"sliding_window"}

    num_hidden_layers: LayerCount
    num_key_value_heads: HeadCount | None
    head_dim: Width | None
    hidden_act: Name
    max_position_embeddings: PositionCount
    sliding_window: Width
    ffn_dim: Width
    num_codebooks: Width
    tie_word_embeddings: Flag

    @model_validator(mode="after")
    def _check_ffn_dim(self) -> MoshiLayers:
        if self.ffn_dim % 2:
            raise ValueError(
                f"ffn_dim ({self.ffn_dim}) must be even ({self.config_class} requires it: fc1 holds two halves)"
            )
        return self

    def build_layer(self, index: int, window: int | None) -> Layer:
        return self.layer(self.attention(None), self.gated_ffn(self.ffn_dim // 2))


@family("moshi", transformers="MoshiConfig", architecture="Moshi", model_class="MoshiForCausalLM")
class MoshiConfig(MoshiLayers):
    """configuration_moshi.py / modeling_moshi.py (MoshiForCausalLM, the class the causal-LM mapping builds): the
    temporal transformer MoshiModel, text only (MoshiLayers). embed_tokens has vocab_size + 1 rows (the extra one the
    audio streams' start token), lm_head vocab_size; nothing is tied, whatever tie_word_embeddings says
    (MoshiForCausalLM declares no tied weights). MoshiForConditionalGeneration's depth decoder, audio embeddings and
    Mimi codec are not built by this class."""

    # tie_word_embeddings: MoshiForCausalLM ties nothing; num_codebooks and audio_encoder_config: only MoshiConfig's
    # check reads them for this class.
    informational_fields = MoshiLayers.informational_fields | {
        "tie_word_embeddings",
        "num_codebooks",
        "audio_encoder_config",
    }

    audio_encoder_config: dict[str, Any] | None

    @model_validator(mode="after")
    def _check_moshi(self) -> MoshiConfig:
        codebooks = (self.audio_encoder_config or {}).get("num_codebooks", MIMI_CODEBOOKS)
        if isinstance(codebooks, int) and self.num_codebooks > codebooks:
            raise ValueError(
                f"num_codebooks ({self.num_codebooks}) exceeds the audio encoder's ({codebooks}); MoshiConfig refuses it"
            )
        return self

    @property
    def token_rows(self) -> int:
        """vocab_size + 1: MoshiModel's embed_tokens."""
        return self.vocab_size + 1

    def to_spec(self) -> ModelSpec:
        spec = super().to_spec()
        return replace(spec, vocab_size=self.token_rows, lm_head_rows=self.vocab_size, tie_word_embeddings=False)

    def model_class(self) -> str:
        return self.default_model_class

    def notes(self) -> list[str]:
        named = (self.architectures or [self.default_model_class])[0]
        if named == self.default_model_class:
            return []
        return [
            f"{named} is not counted: it also builds Moshi's depth decoder, audio token tables and the Mimi codec "
            "(audio_encoder_config), which no adapter lays out; counted as MoshiForCausalLM, its temporal transformer."
        ]


@family(
    "kyutai_speech_to_text",
    transformers="KyutaiSpeechToTextConfig",
    architecture="Kyutai speech-to-text",
    model_class="KyutaiSpeechToTextForConditionalGeneration",
)
class KyutaiSpeechToTextConfig(MoshiLayers):
    """configuration_kyutai_speech_to_text.py / modeling_kyutai_speech_to_text.py
    (KyutaiSpeechToTextForConditionalGeneration, transformers 5.24): Moshi's temporal transformer (MoshiLayers) over
    a text stream and num_codebooks audio streams, and the Mimi codec (codec_config, MimiModel whole) that turns the
    waveform into the audio streams' codes, kept in float32 whatever the model's dtype (_keep_in_fp32_modules_strict).
    embed_tokens.embed_tokens holds vocab_size + num_codebooks · codebook_vocab_size + 1 rows (each position sums a
    text row and a row per stream; audio_pad_token_id, the last row by default, is the padding row); lm_head scores
    the vocab_size text tokens, or is the whole table where tie_word_embeddings says so (default: not)."""

    informational_fields = MoshiLayers.informational_fields | {"audio_bos_token_id", "pad_token_id"}

    codebook_vocab_size: Width
    audio_pad_token_id: Annotated[int | None, Field(strict=True)]  # the table's padding row: it must be a row of it
    codec_config: dict[str, Any] | None

    @model_validator(mode="after")
    def _check_padding_row(self) -> KyutaiSpeechToTextConfig:
        rows = self.token_rows
        if self.audio_pad_token_id is not None and not -rows <= self.audio_pad_token_id < rows:
            raise ValueError(
                f"audio_pad_token_id ({self.audio_pad_token_id}) is not a row of the token table ({rows} rows: "
                "vocab_size + num_codebooks · codebook_vocab_size + 1); torch refuses such a padding_idx"
            )
        return self

    @property
    def token_rows(self) -> int:
        """vocab_size + num_codebooks · codebook_vocab_size + 1: KyutaiSpeechToTextEmbeddings' table."""
        return self.vocab_size + self.num_codebooks * self.codebook_vocab_size + 1

    @cached_property
    def codec(self) -> MimiConfig:
        """The codec: codec_config read alone (MimiConfig's defaults when absent)."""
        return read_block(MimiConfig, {**(self.codec_config or {}), "model_type": "mimi"}, "codec_config")

    def nested_configs(self) -> dict[str, HFConfig]:
        return {"codec_config": self.codec}

    def model_class(self) -> str:
        return self.default_model_class

    def to_spec(self) -> ModelSpec:
        spec = super().to_spec()
        codec = self.codec.tower("codec_model.")
        tied = self.tie_word_embeddings
        return replace(
            spec,
            vocab_size=self.token_rows,
            lm_head_rows=None if tied else self.vocab_size,
            names=replace(spec.names, embed_tokens="model.embed_tokens.embed_tokens"),
            extras=spec.extras + codec.extras,
            checkpoint_extras=spec.checkpoint_extras + codec.checkpoint_extras,
        )

    def notes(self) -> list[str]:
        return [
            f"{self.model_type} reads speech through the Mimi codec (the audio tower here, decoder included, which "
            "transformers builds too): a text token runs the temporal transformer only, each position summing a "
            f"text row and {self.num_codebooks} audio rows of the token table. Audio FLOPs are not counted: the "
            "codec reads clips of any length, no fixed window.",
            "transformers keeps the codec in float32 whatever the model's dtype (_keep_in_fp32_modules_strict); "
            "ffncalc's byte figures count it at the model's dtype.",
        ]
