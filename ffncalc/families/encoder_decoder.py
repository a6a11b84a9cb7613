"""EncoderDecoderModel: any encoder and a decoder with cross-attention, each configured by a block of its own
(``encoder``, ``decoder``) and read by its own family's adapter, composed as transformers composes them."""

from __future__ import annotations

from functools import cached_property
from typing import Any, Literal

from ..errors import InvalidConfigError
from ..results import DefaultUsed
from ..schema import HFConfig, read_block
from ..spec import Extra, Linear, ModelSpec, Table
from ..values import replace
from .bert import BertLayout
from .multimodal import nest
from .registry import family

Block = Literal["encoder", "decoder"]


@family(
    "encoder-decoder",
    transformers="EncoderDecoderConfig",
    architecture="Encoder-decoder",
    model_class="EncoderDecoderModel",
)
class EncoderDecoderConfig(HFConfig):
    """configuration_encoder_decoder.py / modeling_encoder_decoder.py (transformers 5.24).

    The encoder is what AutoModel builds from the ``encoder`` block (the bare model, its pooler included, under
    encoder.*), the decoder what AutoModelForCausalLM builds from the ``decoder`` block (under decoder.*), each
    counted by its own family. A block left out is BertConfig's defaults (the decoder's with is_decoder and
    add_cross_attention); a given block is read as it is, so its decoder cross-attends only where it says
    add_cross_attention, as transformers builds it. When the two hidden sizes differ (and the decoder names no
    cross_attention_hidden_size) enc_to_dec_proj (biased) maps the encoder's output to the decoder's width, once per
    input position. Nothing is tied across the two; the decoder ties its own head as its block says. ffncalc lays out
    the encoders and decoders of BERT's lineage, whose decoders take encoder_hidden_states as EncoderDecoderModel
    requires.
    """

    encoder: dict[str, Any] | None
    decoder: dict[str, Any] | None

    # --- the blocks ---

    def block(self, field: Block) -> BertLayout:
        """A block read by its own family's adapter, its errors named under the block."""
        from . import adapter_for

        raw = getattr(self, field)
        if raw is None:
            raw = {"model_type": "bert"} | (
                {"is_decoder": True, "add_cross_attention": True} if field == "decoder" else {}
            )
        model_type = raw.get("model_type")
        adapter = adapter_for(model_type) if isinstance(model_type, str) else None
        if adapter is None or not issubclass(adapter, BertLayout):
            raise InvalidConfigError(
                f"{field}.model_type: {model_type!r} is not one ffncalc composes; it lays out the {field}s of BERT's "
                "lineage (bert, roberta, xlm-roberta, electra, ernie …) only"
            )
        wanted = "Model" if field == "encoder" else self.causal_lm(adapter)
        config = read_block(adapter, {**raw, "architectures": [adapter.class_prefix + wanted]}, field)
        return config

    @staticmethod
    def causal_lm(adapter: type[BertLayout]) -> str:
        """The class AutoModelForCausalLM builds, without the family's prefix: BERT's LMHeadModel, the others' ForCausalLM."""
        for head in ("LMHeadModel", "ForCausalLM"):
            if head in adapter.classes:
                return head
        raise InvalidConfigError(
            f"decoder.model_type: {adapter.architecture} has no causal LM class, which EncoderDecoderModel builds "
            "the decoder as"
        )

    @cached_property
    def encoder_block(self) -> BertLayout:
        return self.block("encoder")

    @cached_property
    def decoder_block(self) -> BertLayout:
        return self.block("decoder")

    def nested_configs(self) -> dict[str, HFConfig]:
        return {"encoder": self.encoder_block, "decoder": self.decoder_block}

    def defaults_used(self) -> list[DefaultUsed]:
        """Each block's defaults, named under it (a block left out: BertConfig's, every one of them)."""
        own = [d for d in super().defaults_used() if d.field not in ("encoder", "decoder")]
        return own + self.nested_defaults()

    def max_context(self) -> int | None:
        return self.decoder_block.max_context()

    def notes(self) -> list[str]:
        return [
            "Encoder-decoder: per generated token only the decoder runs (its cross-attention projects the encoder "
            "output's keys and values once); the context is both the decoder's length and the encoder's.",
            *(f"{field}: {note}" for field, block in self.nested_configs().items() for note in block.notes()),
        ]

    # --- the model ---

    def projection(self, encoder_width: int, decoder_width: int) -> list[Extra]:
        """enc_to_dec_proj where the widths differ and the decoder names no cross_attention_hidden_size."""
        named = (self.decoder or {}).get("cross_attention_hidden_size")
        if encoder_width == decoder_width or named is not None:
            return []
        return [Extra("other", "enc_to_dec_proj", Linear(encoder_width, decoder_width, bias=True), "once_per_input")]

    def to_spec(self) -> ModelSpec:
        encoder = nest(self.encoder_block.to_spec(), "encoder.")
        decoder = nest(self.decoder_block.to_spec(), "decoder.")
        named = (self.decoder or {}).get("cross_attention_hidden_size")
        if named is not None and named != encoder.hidden_size:
            raise InvalidConfigError(
                f"decoder.cross_attention_hidden_size ({named}) must be the encoder's hidden_size "
                f"({encoder.hidden_size}), as EncoderDecoderModel requires"
            )
        # The encoder's own tables and modules run over the input, never for a generated token.
        width = encoder.embedding_dim or encoder.hidden_size
        tables = [Extra("embedding", encoder.names.embed_tokens, Table(encoder.vocab_size, width), "not_generating")]
        if encoder.position_embeddings:
            rows = Table(encoder.position_embeddings, width)
            tables.append(Extra("embedding", encoder.names.position_embeddings, rows, "not_generating"))
        if encoder.final_norm is not None:
            tables.append(Extra("norm", encoder.names.final_norm, encoder.final_norm, "not_generating"))
        moved = [
            replace(extra, runs="not_generating") if extra.runs == "every_token" else extra for extra in encoder.extras
        ]
        return replace(
            decoder,
            model_type=self.model_type,
            layers=tuple(replace(layer, stack="encoder") for layer in encoder.layers)
            + tuple(replace(layer, stack="decoder") for layer in decoder.layers),
            extras=tuple(tables + moved + self.projection(encoder.hidden_size, decoder.hidden_size)) + decoder.extras,
            checkpoint_extras=encoder.checkpoint_extras + decoder.checkpoint_extras,
        )
