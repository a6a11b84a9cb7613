"""NVIDIA's Canary (modeling_canary.py, transformers 5.24): a FastConformer encoder (Parakeet's,
``families/conformer.py``) and a Transformer decoder with cross-attention."""

from __future__ import annotations

from functools import cached_property
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict

from ..errors import InvalidConfigError
from ..schema import Flag, HeadCount, HFConfig, LayerCount, Name, Width, read_block
from ..spec import Attention, DenseFfn, Extra, Layer, ModelNames, ModelSpec, Norm, Runs, names
from .conformer import ParakeetEncoderConfig
from .registry import family

Kind = Literal["model", "generation"]
SELF_ATTENTION = names(q="self_attn.q_proj", k="self_attn.k_proj", v="self_attn.v_proj", o="self_attn.o_proj")
CROSS_ATTENTION = names(
    q="encoder_attn.q_proj", k="encoder_attn.k_proj", v="encoder_attn.v_proj", o="encoder_attn.o_proj"
)
DECODER_MLP = names(up="mlp.fc1", down="mlp.fc2")
# CanaryConfig.sub_configs_defaults["encoder_config"].init_kwargs (transformers 5.24): canary-1b-v2's encoder.
CANARY_ENCODER = {
    "model_type": "parakeet_encoder",
    "num_hidden_layers": 32,
    "num_mel_bins": 128,
    "scale_input": False,
    "layerdrop": 0.0,
}


class CanaryDecoder(BaseModel):
    """CanaryDecoderConfig's fields (transformers 5.24): the decoder CanaryConfig's decoder_config holds."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    vocab_size: Width = 16384
    hidden_size: Width = 1024
    intermediate_size: Width = 4096
    num_hidden_layers: LayerCount = 8
    num_attention_heads: HeadCount = 8
    num_key_value_heads: HeadCount = 8
    hidden_act: Name = "relu"
    attention_bias: Flag = True
    head_dim: Width = 128


@family("canary", transformers="CanaryConfig", architecture="Canary", model_class="CanaryForConditionalGeneration")
class CanaryConfig(HFConfig):
    """configuration_canary.py / modeling_canary.py (transformers 5.24): a ParakeetEncoder (encoder_config; canary-1b-v2's
    when absent, a given block read alone) and CanaryDecoder (decoder_config): a token table (its sinusoidal positions
    are an unsaved buffer), embedding_layernorm, layers of self-attention, cross-attention (encoder_attn) and an MLP
    (fc1, fc2 with biases; q, k, v, o biased where attention_bias, heads of head_dim), three LayerNorms each, a final
    norm. proj_out has a bias; its weight is tied to the token table (tie_word_embeddings, default true). The
    cross-attention's keys and values read the decoder's width: a checkpoint's encoder is as wide. The encoder's
    length follows the clip (8 × subsampled frames): the context stands for it, as for Moonshine."""

    informational_fields = frozenset({"pad_token_id", "use_cache"})
    classes: ClassVar[dict[str, Kind]] = {"CanaryModel": "model", "CanaryForConditionalGeneration": "generation"}

    vocab_size: Width
    tie_word_embeddings: Flag
    encoder_config: dict[str, Any] | None
    decoder_config: dict[str, Any] | None

    def model_class(self) -> str:
        named = (self.architectures or [""])[0]
        return named if named in self.classes else self.default_model_class

    @cached_property
    def encoder(self) -> ParakeetEncoderConfig:
        raw = dict(self.encoder_config) if self.encoder_config is not None else dict(CANARY_ENCODER)
        return read_block(ParakeetEncoderConfig, {**raw, "model_type": "parakeet_encoder"}, "encoder_config")

    @cached_property
    def decoder(self) -> CanaryDecoder:
        decoder = read_block(CanaryDecoder, self.decoder_config or {}, "decoder_config")
        if decoder.vocab_size != self.vocab_size:
            raise InvalidConfigError(
                f"decoder_config.vocab_size: {decoder.vocab_size} must be the config's vocab_size ({self.vocab_size}), "
                "as transformers requires"
            )
        return decoder

    def validate_nested(self) -> None:
        self.encoder  # noqa: B018 - each block, or an error naming its field
        self.decoder  # noqa: B018

    def nested_configs(self) -> dict[str, HFConfig]:
        return {"encoder_config": self.encoder}

    def decoder_attention(self, attention_names) -> Attention:
        decoder = self.decoder
        bias = decoder.attention_bias
        return Attention(
            decoder.hidden_size, decoder.num_attention_heads, decoder.num_key_value_heads, decoder.head_dim,
            decoder.head_dim, attention_names, bias, bias, bias, bias,
        )  # fmt: skip

    def to_spec(self) -> ModelSpec:
        kind = self.classes[self.model_class()]
        root = "" if kind == "model" else "model."
        decoder, encoder = self.decoder, self.encoder
        hidden = decoder.hidden_size
        norm = Norm("layernorm", hidden, bias=True)
        decoder_layer = Layer(
            f"{root}decoder.layers.{{i}}",
            self.decoder_attention(SELF_ATTENTION),
            DenseFfn(hidden, decoder.intermediate_size, False, decoder.hidden_act, DECODER_MLP, bias=True),
            (("input_layernorm", norm), ("post_attention_layernorm", norm), ("final_layernorm", norm)),
            cross_attention=self.decoder_attention(CROSS_ATTENTION),
            stack="decoder",
        )
        encoder_layer = encoder.block(f"{root}encoder.layers.{{i}}", "encoder")
        runs: Runs = "not_generating"
        extras = [Extra("other", name, module, runs) for name, module in encoder.subsampling(f"{root}encoder.")]
        extras.append(Extra("norm", f"{root}decoder.embedding_layernorm", norm))
        return ModelSpec(
            model_type=self.model_type,
            hidden_size=hidden,
            vocab_size=decoder.vocab_size,
            layers=(encoder_layer,) * encoder.num_hidden_layers + (decoder_layer,) * decoder.num_hidden_layers,
            final_norm=norm,
            tie_word_embeddings=self.tie_word_embeddings,
            names=ModelNames(
                f"{root}decoder.embed_tokens", f"{root}decoder.norm", lm_head="proj_out", base_model_prefix="model"
            ),
            lm_head=kind != "model",
            lm_head_bias=True,
            extras=tuple(extras),
            checkpoint_extras=(encoder.batch_norm_buffers(f"{root}encoder."),),
        )

    def notes(self) -> list[str]:
        return [
            "Encoder-decoder over log-mel frames: per generated token only the decoder runs (its cross-attention "
            "projects the encoder output's keys and values once); the encoder's length follows the clip, so the "
            "context stands for it too. What a clip costs (`audio`) is not counted: Canary reads no fixed window."
        ]
