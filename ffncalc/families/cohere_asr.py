"""Cohere's ASR model, Cohere Transcribe (modeling_cohere_asr.py, transformers 5.24): Parakeet's FastConformer encoder
(``families/conformer.py``) and a Transformer decoder with cross-attention and a learned position table."""

from __future__ import annotations

from functools import cached_property
from typing import Any, ClassVar, Literal

from ..schema import (
    Flag,
    HeadCount,
    HFConfig,
    LayerCount,
    Name,
    PositionCount,
    Width,
    derives,
    read_block,
)
from ..spec import Attention, DenseFfn, Extra, Layer, LearnedTensor, Linear, ModelNames, ModelSpec, Norm, Runs, names
from .conformer import NEMO_NAMES, ParakeetEncoderConfig
from .registry import family

Kind = Literal["model", "generation"]
# The decoder's modules under the names save_pretrained writes: conversion_mapping.py's "cohere_asr" renamings
# (transformers 5.24) reverted (self_attn → first_sub_layer, encoder_attn → second_sub_layer, mlp → third_sub_layer).
SELF_ATTENTION = names(
    q="first_sub_layer.query_net",
    k="first_sub_layer.key_net",
    v="first_sub_layer.value_net",
    o="first_sub_layer.out_projection",
)
CROSS_ATTENTION = names(
    q="second_sub_layer.query_net",
    k="second_sub_layer.key_net",
    v="second_sub_layer.value_net",
    o="second_sub_layer.out_projection",
)
DECODER_MLP = names(up="third_sub_layer.dense_in", down="third_sub_layer.dense_out")
DECODER_NORMS = ("layer_norm_1", "layer_norm_2", "layer_norm_3")
# CohereAsrConfig.sub_configs_defaults["encoder_config"].init_kwargs (transformers 5.24): the encoder when
# encoder_config is absent, and the values a given encoder_config block is laid over.
COHERE_ASR_ENCODER: dict[str, Any] = {
    "model_type": "parakeet_encoder",
    "hidden_size": 1280,
    "num_hidden_layers": 48,
    "num_attention_heads": 8,
    "intermediate_size": 5120,
    "hidden_act": "silu",
    "attention_bias": True,
    "convolution_bias": True,
    "conv_kernel_size": 9,
    "subsampling_factor": 8,
    "subsampling_conv_channels": 256,
    "num_mel_bins": 128,
    "subsampling_conv_kernel_size": 3,
    "subsampling_conv_stride": 2,
    "max_position_embeddings": 5000,
    "scale_input": False,
}


@family(
    "cohere_asr",
    transformers="CohereAsrConfig",
    architecture="Cohere-ASR",
    model_class="CohereAsrForConditionalGeneration",
)
class CohereAsrConfig(HFConfig):
    """configuration_cohere_asr.py / modeling_cohere_asr.py (transformers 5.24): a ParakeetEncoder (encoder_config laid
    over CohereAsrConfig's encoder defaults) and CohereAsrDecoder: a token table, a learned position table
    (pos_emb, max_position_embeddings rows), embedding_layernorm, proj (the encoder's width → hidden_size, biased: the
    encoder output the cross-attention reads), layers of self-attention, cross-attention and an MLP (fc1, fc2), all
    biased where attention_bias (the MLP always), heads of head_dim, three LayerNorms each, a final LayerNorm.
    proj_out has a bias; its weight is tied to the token table only where tie_word_embeddings (default false).
    Checkpoints keep NeMo's names (conversion_mapping.py's "cohere_asr"). The encoder's length follows the clip: the
    context stands for it, as for Canary."""

    informational_fields = frozenset(
        {"pad_token_id", "bos_token_id", "eos_token_id", "decoder_start_token_id", "use_cache", "attention_dropout"}
    )
    classes: ClassVar[dict[str, Kind]] = {
        "CohereAsrModel": "model",
        "CohereAsrForConditionalGeneration": "generation",
    }

    encoder_config: dict[str, Any] | None
    vocab_size: Width
    hidden_size: Width
    num_hidden_layers: LayerCount
    num_attention_heads: HeadCount
    num_key_value_heads: HeadCount | None
    intermediate_size: Width
    hidden_act: Name
    max_position_embeddings: PositionCount
    attention_bias: Flag
    tie_word_embeddings: Flag
    head_dim: Width | None

    def model_class(self) -> str:
        named = (self.architectures or [""])[0]
        return named if named in self.classes else self.default_model_class

    @property
    @derives("head_dim", "hidden_size // num_attention_heads")
    def head_width(self) -> int:
        """head_dim, else hidden_size // num_attention_heads (CohereAsrConfig.__post_init__)."""
        return self.head_dim or self.hidden_size // self.num_attention_heads

    @property
    @derives("num_key_value_heads", "num_attention_heads")
    def kv_heads(self) -> int:
        """num_key_value_heads, else num_attention_heads (CohereAsrConfig.__post_init__)."""
        return self.num_key_value_heads or self.num_attention_heads

    @cached_property
    def encoder(self) -> ParakeetEncoderConfig:
        raw = {**COHERE_ASR_ENCODER, **(self.encoder_config or {})}
        return read_block(ParakeetEncoderConfig, {**raw, "model_type": "parakeet_encoder"}, "encoder_config")

    def nested_configs(self) -> dict[str, HFConfig]:
        return {"encoder_config": self.encoder}

    def decoder_attention(self, attention_names) -> Attention:
        bias, head_dim = self.attention_bias, self.head_width
        return Attention(
            self.hidden_size, self.num_attention_heads, self.kv_heads, head_dim, head_dim, attention_names,
            bias, bias, bias, bias,
        )  # fmt: skip

    def to_spec(self) -> ModelSpec:
        root = "" if self.classes[self.model_class()] == "model" else "model."
        encoder, hidden = self.encoder, self.hidden_size
        decoder = f"{root}transf_decoder."
        norm = Norm("layernorm", hidden, bias=True)
        decoder_layer = Layer(
            f"{decoder}_decoder.layers.{{i}}",
            self.decoder_attention(SELF_ATTENTION),
            DenseFfn(hidden, self.intermediate_size, False, self.hidden_act, DECODER_MLP, bias=True),
            tuple((name, norm) for name in DECODER_NORMS),
            cross_attention=self.decoder_attention(CROSS_ATTENTION),
            stack="decoder",
        )
        encoder_layer = encoder.block(f"{root}encoder.layers.{{i}}", "encoder", NEMO_NAMES)
        per_clip: Runs = "not_generating"
        extras = [
            Extra("other", name, module, per_clip)
            for name, module in encoder.subsampling(f"{root}encoder.", NEMO_NAMES)
        ]
        extras += [
            Extra("other", f"{root}encoder_decoder_proj", Linear(encoder.hidden_size, hidden, True), per_clip),
            Extra("other", f"{decoder}_embedding.position_embedding.pos_enc", LearnedTensor((self.max_position_embeddings, hidden))),
            Extra("norm", f"{decoder}_embedding.layer_norm", norm),
        ]  # fmt: skip
        return ModelSpec(
            model_type=self.model_type,
            hidden_size=hidden,
            vocab_size=self.vocab_size,
            layers=(encoder_layer,) * encoder.num_hidden_layers + (decoder_layer,) * self.num_hidden_layers,
            final_norm=norm,
            tie_word_embeddings=self.tie_word_embeddings,
            names=ModelNames(
                f"{decoder}_embedding.token_embedding",
                f"{decoder}_decoder.final_layer_norm",
                lm_head="log_softmax.mlp.layer0",
                base_model_prefix="model",
            ),
            lm_head=root != "",
            lm_head_bias=True,
            extras=tuple(extras),
            checkpoint_extras=(encoder.batch_norm_buffers(f"{root}encoder.", NEMO_NAMES),),
        )

    def notes(self) -> list[str]:
        return [
            "Encoder-decoder over log-mel frames: per generated token only the decoder runs (its cross-attention "
            "projects the encoder output's keys and values once); the encoder's length follows the clip, so the "
            "context stands for it too. What a clip costs (`audio`) is not counted: Cohere ASR reads no fixed window."
        ]
