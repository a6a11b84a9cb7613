"""Kyutai's Moshi (moshi): its temporal transformer as a text causal LM, Llama's layers with a fused gated MLP and a
token table one row longer than the head."""

from __future__ import annotations

from typing import Any

from pydantic import model_validator

from ..schema import Flag, HeadCount, LayerCount, PositionCount, Width
from ..spec import Layer, ModelSpec, names
from ..values import replace
from .base import DecoderConfig, HeadDim, HiddenAct, HiddenLayers, KvHeads
from .registry import family

MOSHI_ATTENTION = names(
    q="self_attn.q_proj.linear", k="self_attn.k_proj.linear", v="self_attn.v_proj.linear", o="self_attn.o_proj.linear"
)
# fc1 holds the gate and the up projection, concatenated in that order (MoshiGatingMLP views its output as 2 halves
# and multiplies act(first) by the second); fc2 reads ffn_dim // 2.
MOSHI_MLP = names(gate="mlp.fc1", up="mlp.fc1", down="mlp.fc2")
# MimiConfig's num_codebooks, the audio encoder MoshiConfig builds by default.
MIMI_CODEBOOKS = 32


@family("moshi")
class MoshiConfig(HiddenAct, HeadDim, KvHeads, HiddenLayers, DecoderConfig):
    """configuration_moshi.py / modeling_moshi.py (MoshiForCausalLM, the class the causal-LM mapping builds): the
    temporal transformer MoshiModel, text only. Llama's layers without biases (MoshiLinear holds each of q, k, v, o
    as .linear), head_dim (default hidden_size // heads); MoshiGatingMLP: fc1 hidden → ffn_dim (gate and up
    halves), fc2 ffn_dim / 2 → hidden. embed_tokens has vocab_size + 1 rows (the extra one the audio streams' start
    token), lm_head vocab_size; nothing is tied, whatever tie_word_embeddings says (MoshiForCausalLM declares no
    tied weights). MoshiAttention refuses a hidden_size that is not a multiple of the
    heads. Every layer attends to the whole context: create_causal_mask, sliding_window never read.
    MoshiForConditionalGeneration's depth decoder, audio embeddings and Mimi codec are not built by this class."""

    architecture = "Moshi"
    config_class = "MoshiConfig"
    default_model_class = "MoshiForCausalLM"
    attention_names = MOSHI_ATTENTION
    mlp_names = MOSHI_MLP
    # sliding_window: held, never read (create_causal_mask); tie_word_embeddings: MoshiForCausalLM ties nothing;
    # num_codebooks and audio_encoder_config: only MoshiConfig's check reads them for this class.
    informational_fields = DecoderConfig.informational_fields | {
        "sliding_window",
        "tie_word_embeddings",
        "num_codebooks",
        "audio_encoder_config",
    }

    vocab_size: Width = 32000
    hidden_size: Width = 4096
    num_hidden_layers: LayerCount = 32
    num_attention_heads: HeadCount = 32
    max_position_embeddings: PositionCount = 3000
    sliding_window: Width = 3000
    ffn_dim: Width = 22528
    num_codebooks: Width = 8
    tie_word_embeddings: Flag = False
    audio_encoder_config: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _check_moshi(self) -> MoshiConfig:
        if self.ffn_dim % 2:
            raise ValueError(f"ffn_dim ({self.ffn_dim}) must be even (MoshiConfig requires it: fc1 holds two halves)")
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

    def build_layer(self, index: int, window: int | None) -> Layer:
        return self.layer(self.attention(None), self.gated_ffn(self.ffn_dim // 2))

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
