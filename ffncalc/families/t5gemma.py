"""T5Gemma: an encoder-decoder of two Gemma-2 stacks, each configured by a block of its own (``encoder``,
``decoder``), the decoder's layers with cross-attention over the encoder's output."""

from __future__ import annotations

from functools import cached_property
from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field

from ..results import DefaultUsed
from ..schema import Flag, HFConfig, Name, derives, read_block
from ..spec import Extra, Layer, Linear, ModelNames, ModelSpec, Norm, Runs, Table, names
from .gemma import Gemma2Config
from .registry import family

CROSS_ATTENTION = names(q="cross_attn.q_proj", k="cross_attn.k_proj", v="cross_attn.v_proj", o="cross_attn.o_proj")

Kind = Literal["model", "encoder", "generation", "sequence", "token"]


class T5GemmaModuleConfig(Gemma2Config):
    """configuration_t5gemma.py's T5GemmaModuleConfig, one stack's block: Gemma2Config's fields and defaults
    (vocabulary 256,000, hidden 2,304, 26 layers, 8 heads and 4 key-value heads of 256, every second layer global,
    a window of 4,096)."""

    config_class = "T5GemmaModuleConfig"


@family(
    "t5gemma",
    transformers="T5GemmaConfig",
    architecture="T5Gemma",
    model_class="T5GemmaForConditionalGeneration",
    read_beyond={"num_labels": "PreTrainedConfig turns it into id2label"},
)
class T5GemmaConfig(HFConfig):
    """configuration_t5gemma.py / modeling_t5gemma.py (transformers 5.24).

    Two stacks, each read from its block with T5GemmaModuleConfig's defaults (a block left out is the default one):
    its own token table (embed_tokens), Gemma-2 layers with the norms named pre_/post_self_attn_layernorm and
    pre_/post_feedforward_layernorm, a final norm. The encoder's sliding layers are bidirectional: a token attends
    to keys up to sliding_window positions either side, 2 · sliding_window + 1 of them (fewer at the input's ends,
    which ffncalc does not subtract). Each decoder layer also holds cross_attn (its q and o on the decoder's width,
    k and v reading the encoder's hidden_size: cross_attention_hidden_size) with pre_/post_cross_attn_layernorm.
    The seq2seq LM's head (lm_head.out_proj, no bias) is tied to the decoder's table with the top-level
    tie_word_embeddings; the top-level vocab_size builds nothing. The classifiers (score.out_proj, biased, num_labels
    wide) read the decoder's output, or with is_encoder_decoder false the encoder alone (T5GemmaEncoderModel).
    """

    informational_fields = frozenset({"vocab_size"})  # read by no module: each block has its own
    class_prefix: ClassVar[str] = "T5Gemma"
    classes: ClassVar[dict[str, Kind]] = {
        "Model": "model",
        "EncoderModel": "encoder",
        "ForConditionalGeneration": "generation",
        "ForSequenceClassification": "sequence",
        "ForTokenClassification": "token",
    }
    blocks: ClassVar[tuple[str, str]] = ("encoder", "decoder")

    encoder: dict[str, Any] | None
    decoder: dict[str, Any] | None
    is_encoder_decoder: Flag
    tie_word_embeddings: Flag
    vocab_size: Annotated[int, Field(strict=True)]
    id2label: dict[str, Name] | None
    num_labels: int | None = Field(None, strict=True, ge=0, le=1 << 20)

    # --- the blocks ---

    def block(self, field: Literal["encoder", "decoder"]) -> T5GemmaModuleConfig:
        """A stack's block, validated with T5GemmaModuleConfig's defaults, its errors named under the block."""
        raw = getattr(self, field) or {}
        return read_block(T5GemmaModuleConfig, {**raw, "model_type": "t5_gemma_module"}, field)

    @cached_property
    def encoder_block(self) -> T5GemmaModuleConfig:
        return self.block("encoder")

    @cached_property
    def decoder_block(self) -> T5GemmaModuleConfig:
        return self.block("decoder")

    def nested_configs(self) -> dict[str, HFConfig]:
        return {"encoder": self.encoder_block, "decoder": self.decoder_block}

    def defaults_used(self) -> list[DefaultUsed]:
        """The top level's own defaults, then each block's, named under it."""
        own = [d for d in super().defaults_used() if d.field not in self.blocks and d.field != "id2label"]
        if self.kind not in ("sequence", "token") or self.id2label is not None:
            own = [d for d in own if d.field != "num_labels"]
        blocks = self.nested_configs()
        if self.kind == "encoder":  # T5GemmaEncoderModel builds no decoder
            del blocks["decoder"]
        nested = self.nested_defaults(blocks)
        return own + [d for d in nested if not d.field.endswith(".tie_word_embeddings")]

    # --- the class built ---

    def model_class(self) -> str:
        named = (self.architectures or [""])[0]
        return named if named.removeprefix(self.class_prefix) in self.classes else self.default_model_class

    @property
    def kind(self) -> Kind:
        return self.classes[self.model_class().removeprefix(self.class_prefix)]

    @property
    def with_decoder(self) -> bool:
        """Whether the class builds the decoder (a classifier does only with is_encoder_decoder)."""
        if self.kind in ("sequence", "token"):
            return self.is_encoder_decoder
        return self.kind != "encoder"

    @derives("num_labels", "len(id2label), else 2")
    def labels(self) -> int:
        """A classifier's width: len(id2label), or num_labels, or PreTrainedConfig's 2."""
        if self.id2label is not None:
            return len(self.id2label)
        return self.num_labels if self.num_labels is not None else 2

    def max_context(self) -> int | None:
        return self.decoder_block.max_position_embeddings if self.with_decoder else None

    def notes(self) -> list[str]:
        notes = []
        if self.with_decoder:
            notes.append(
                "Encoder-decoder: per generated token only the decoder runs (its cross-attention projects the "
                "encoder output's keys and values once); the context is both the decoder's length and the encoder's."
            )
        if self.architectures and self.model_class() != self.architectures[0]:
            notes.append(
                f"{self.architectures[0]} is not a T5Gemma class ffncalc knows; counted as {self.model_class()}."
            )
        return notes

    # --- the stacks ---

    def encoder_layers(self, root: str) -> tuple[Layer, ...]:
        block = self.encoder_block
        norm = block.rms_norm()
        norms = (
            ("pre_self_attn_layernorm", norm),
            ("post_self_attn_layernorm", norm),
            ("pre_feedforward_layernorm", norm),
            ("post_feedforward_layernorm", norm),
        )
        layers = []
        for window in block.layer_windows():
            reach = None if window is None else 2 * window + 1  # bidirectional: window keys either side, and itself
            attention = block.attention(reach)
            layers.append(Layer(f"{root}encoder.layers.{{i}}", attention, block.gated_ffn(), norms, stack="encoder"))
        return tuple(layers)

    def decoder_layers(self, root: str) -> tuple[Layer, ...]:
        block = self.decoder_block
        norm = block.rms_norm()
        norms = (
            ("pre_self_attn_layernorm", norm),
            ("post_self_attn_layernorm", norm),
            ("pre_cross_attn_layernorm", norm),
            ("post_cross_attn_layernorm", norm),
            ("pre_feedforward_layernorm", norm),
            ("post_feedforward_layernorm", norm),
        )
        cross = block.attention(None, names=CROSS_ATTENTION, kv_input_size=self.encoder_block.hidden_size)
        return tuple(
            Layer(
                f"{root}decoder.layers.{{i}}",
                block.attention(window),
                block.gated_ffn(),
                norms,
                cross_attention=cross,
                stack="decoder",
            )
            for window in block.layer_windows()
        )

    def to_spec(self) -> ModelSpec:
        root = "" if self.kind in ("model", "encoder") else "model."
        encoder = self.encoder_block
        # the encoder's table and final norm, which run over the input only when a decoder generates
        runs: Runs = "not_generating" if self.with_decoder else "every_token"
        extras = [Extra("norm", f"{root}encoder.norm", encoder.rms_norm(), runs)]
        if self.kind in ("sequence", "token"):
            width = self.decoder_block.hidden_size if self.with_decoder else encoder.hidden_size
            extras.append(Extra("other", "score.out_proj", Linear(width, self.labels(), bias=True), "not_generating"))
        if not self.with_decoder:
            return ModelSpec(
                model_type=self.model_type,
                hidden_size=encoder.hidden_size,
                vocab_size=encoder.vocab_size,
                layers=self.encoder_layers(root),
                final_norm=None,
                tie_word_embeddings=False,
                names=ModelNames(f"{root}encoder.embed_tokens", "", base_model_prefix="model"),
                lm_head=False,
                extras=tuple(extras),
            )
        decoder = self.decoder_block
        table = Extra("embedding", f"{root}encoder.embed_tokens", Table(encoder.vocab_size, encoder.hidden_size), runs)
        return ModelSpec(
            model_type=self.model_type,
            hidden_size=decoder.hidden_size,
            vocab_size=decoder.vocab_size,
            layers=self.encoder_layers(root) + self.decoder_layers(root),
            final_norm=Norm("rmsnorm", decoder.hidden_size),
            tie_word_embeddings=self.tie_word_embeddings,
            names=ModelNames(
                f"{root}decoder.embed_tokens",
                f"{root}decoder.norm",
                lm_head="lm_head.out_proj",
                base_model_prefix="model",
            ),
            lm_head=self.kind == "generation",
            extras=tuple([table] + extras),
        )
