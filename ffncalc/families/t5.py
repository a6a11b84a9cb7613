"""T5 and its descendants: encoder-decoders with relative position buckets and no biases. T5, mT5, UMT5 (a
bias table in every block), Switch Transformers (top-1 experts in every few blocks) and Pop2Piano (over a
spectrogram, with a head of its own)."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import AliasChoices, Field, model_validator

from ..schema import ACTIVATIONS, Flag, HeadCount, HFConfig, LayerCount, Name, Width, WidthOrZero, derives
from ..spec import (
    Attention,
    CheckpointExtra,
    DenseFfn,
    Extra,
    Layer,
    ModelNames,
    ModelSpec,
    MoeFfn,
    Norm,
    Norms,
    StoredTensor,
    Table,
    names,
)
from ..values import replace
from .registry import family

SELF_ATTENTION = names(
    q="layer.0.SelfAttention.q",
    k="layer.0.SelfAttention.k",
    v="layer.0.SelfAttention.v",
    o="layer.0.SelfAttention.o",
    relative_position_bias="layer.0.SelfAttention.relative_attention_bias",
)
CROSS_ATTENTION = names(
    q="layer.1.EncDecAttention.q",
    k="layer.1.EncDecAttention.k",
    v="layer.1.EncDecAttention.v",
    o="layer.1.EncDecAttention.o",
)


def t5_ffn_names(sublayer: int, gated: bool):
    prefix = f"layer.{sublayer}.DenseReluDense."
    if gated:
        return names(gate=prefix + "wi_0", up=prefix + "wi_1", down=prefix + "wo")
    return names(up=prefix + "wi", down=prefix + "wo")


class _T5Stacks(HFConfig):
    """What T5's descendants share: an encoder and a decoder stack of blocks (layer.0 self-attention, in the decoder
    layer.1 cross-attention, then the feed-forward sublayer), RMS layer norms (weight only) before each sublayer and
    after each stack, no biases, attention num_heads · d_kv wide, relative-position buckets × heads in the first
    block of each stack (in every block with ``bias_every_layer``), one ``shared`` token table."""

    read_beyond = {"tie_word_embeddings": "T5Config has none (__post_init__ pops it): the model always ties"}

    bias_every_layer: ClassVar[bool] = False  # UMT5: each block its own relative_attention_bias

    other_names = {"d_kv": "also read as head_dim, the name T5-derived configs give it (no attribute_map entry)"}
    vocab_size: Width
    d_model: Width
    d_kv: Width = Field(validation_alias=AliasChoices("d_kv", "head_dim"))
    d_ff: Width
    num_layers: LayerCount
    num_decoder_layers: LayerCount | None
    num_heads: HeadCount
    relative_attention_num_buckets: Width
    tie_word_embeddings: Flag = True

    @property
    @derives("num_decoder_layers", "num_layers")
    def decoder_layers(self) -> int:
        return self.num_decoder_layers or self.num_layers

    def attention(self, attention_names, buckets: int = 0) -> Attention:
        d_kv, heads = self.d_kv, self.num_heads
        return Attention(self.d_model, heads, heads, d_kv, d_kv, attention_names, relative_position_buckets=buckets)

    def ffn(self, kind: Literal["encoder", "decoder"], index: int, sublayer: int) -> DenseFfn | MoeFfn:
        """The feed-forward sublayer of block INDEX of a stack (its module: layer.SUBLAYER)."""
        raise NotImplementedError  # pragma: no cover - each family builds its own

    def encoder_attention(self, attention: Attention) -> Attention:
        """An encoder block's self-attention, given T5's (LongT5: local, under layer.0.LocalSelfAttention)."""
        return attention

    def stack(self, kind: Literal["encoder", "decoder"], count: int) -> tuple[Layer, ...]:
        norm = Norm("rmsnorm", self.d_model)
        name = f"{kind}.block.{{i}}"
        layers = []
        for index in range(count):
            buckets = self.relative_attention_num_buckets if index == 0 or self.bias_every_layer else 0
            attention = self.attention(SELF_ATTENTION, buckets)
            if kind == "encoder":
                norms: Norms = (("layer.0.layer_norm", norm), ("layer.1.layer_norm", norm))
                layer = Layer(name, self.encoder_attention(attention), self.ffn(kind, index, 1), norms, stack="encoder")
                layers.append(layer)
            else:
                norms = (("layer.0.layer_norm", norm), ("layer.1.layer_norm", norm), ("layer.2.layer_norm", norm))
                cross = self.attention(CROSS_ATTENTION)
                ffn = self.ffn(kind, index, 2)
                layers.append(Layer(name, attention, ffn, norms, cross_attention=cross, stack="decoder"))
        return tuple(layers)

    def model_tied(self) -> bool:
        """Whether the head is the shared table."""
        return True

    def to_spec(self) -> ModelSpec:
        norm = Norm("rmsnorm", self.d_model)
        return ModelSpec(
            model_type=self.model_type,
            hidden_size=self.d_model,
            vocab_size=self.vocab_size,
            layers=self.stack("encoder", self.num_layers) + self.stack("decoder", self.decoder_layers),
            final_norm=norm,  # the decoder's final_layer_norm
            tie_word_embeddings=self.model_tied(),
            names=ModelNames("shared", "decoder.final_layer_norm", base_model_prefix=""),
            extras=(Extra("norm", "encoder.final_layer_norm", norm, "not_generating"),),
            checkpoint_extras=self.stored_extras(),
        )

    def stored_extras(self) -> tuple[CheckpointExtra, ...]:
        return ()

    def notes(self) -> list[str]:
        return [
            "Encoder-decoder: per generated token only the decoder runs (its cross-attention projects the "
            "encoder output's keys and values once); the context is both the decoder's length and the encoder's."
        ]


@family(
    "t5",
    transformers="T5Config",
    architecture="T5",
    model_class="T5ForConditionalGeneration",
    read_beyond={"tie_word_embeddings": "popped by __post_init__: the model always ties"},
)
class T5Config(_T5Stacks):
    """configuration_t5.py / modeling_t5.py.

    No biases anywhere; RMS layer norms (weight only). Attention width is num_heads · d_kv. The
    first block of each stack holds the relative-position bias (buckets × heads).
    feed_forward_proj "relu" (T5) is wi → wo; "gated-gelu" (T5 v1.1, Flan-T5, mT5) is wi_0, wi_1 → wo.
    transformers 5 always ties the head to the shared embedding (tie_word_embeddings is read only to
    scale the decoder's output); checkpoints saved untied (v1.1, Flan-T5) still store lm_head.
    """

    feed_forward_proj: Name
    tie_word_embeddings: Flag = True  # read for the checkpoint's layout only: the model ties regardless

    @model_validator(mode="after")
    def _check_activation(self) -> T5Config:
        parts = self.feed_forward_proj.split("-")
        if (len(parts) > 1 and parts[0] != "gated") or len(parts) > 2 or parts[-1] not in ACTIVATIONS:
            raise ValueError(
                f"feed_forward_proj: {self.feed_forward_proj!r} is not 'gated-ACT' or 'ACT' with an activation "
                "transformers knows (e.g. 'gated-gelu', 'relu')"
            )
        return self

    def unused_fields(self) -> set[str]:
        return {"tie_word_embeddings"}  # the model ties whatever it says

    @property
    def gated(self) -> bool:
        return self.feed_forward_proj.startswith("gated-")

    def ffn(self, kind: Literal["encoder", "decoder"], index: int, sublayer: int) -> DenseFfn:
        activation = self.feed_forward_proj.split("-")[-1]
        return DenseFfn(self.d_model, self.d_ff, self.gated, activation, t5_ffn_names(sublayer, self.gated))

    def stored_extras(self) -> tuple[CheckpointExtra, ...]:
        width = (self.vocab_size, self.d_model)
        extras = [
            CheckpointExtra(
                name="decoder cross-attention relative_attention_bias",
                reason=(
                    f"{self.relative_attention_num_buckets} buckets × {self.num_heads} heads, stored by the original "
                    "T5 checkpoints (t5-small, -base, -large) though no module uses it"
                ),
                tensors=(
                    StoredTensor(
                        "decoder.block.0.layer.1.EncDecAttention.relative_attention_bias.weight",
                        (self.relative_attention_num_buckets, self.num_heads),
                    ),
                ),
                likely=self.feed_forward_proj == "relu",  # the original checkpoints; the v1.1 family has none
            ),
            CheckpointExtra(
                name="untied lm_head",
                reason=(
                    f"{width[0]:,} × {width[1]:,}: saved untied (tie_word_embeddings false), while transformers 5 "
                    "ties T5's head to the shared embedding"
                ),
                tensors=(StoredTensor("lm_head.weight", width),),
                likely=not self.tie_word_embeddings,
            ),
            CheckpointExtra(
                name="tied copies of the shared embedding",
                reason="encoder.embed_tokens and decoder.embed_tokens are the shared table, stored again by some checkpoints",
                tensors=(
                    StoredTensor("encoder.embed_tokens.weight", width),
                    StoredTensor("decoder.embed_tokens.weight", width),
                ),
                likely=False,
            ),
        ]
        return tuple(extras)


@family("mt5", transformers="MT5Config", architecture="mT5", model_class="MT5ForConditionalGeneration")
class MT5Config(T5Config):
    """configuration_mt5.py: T5's layout with mT5's defaults (gated-gelu, a 250,112-token vocabulary)."""


@family("umt5", transformers="UMT5Config", architecture="UMT5", model_class="UMT5ForConditionalGeneration")
class UMT5Config(MT5Config):
    """configuration_umt5.py / modeling_umt5.py: mT5's layout and defaults, with a relative_attention_bias table in
    every block of each stack, not only the first."""

    bias_every_layer = True


@family(
    "switch_transformers",
    transformers="SwitchTransformersConfig",
    architecture="Switch Transformers",
    model_class="SwitchTransformersForConditionalGeneration",
)
class SwitchTransformersConfig(_T5Stacks):
    """configuration_switch_transformers.py / modeling_switch_transformers.py (Google's Switch Transformers).

    T5's blocks, where some feed-forward sublayers are a top-1 mixture of experts: a router (router.classifier,
    bias with router_bias) and num_experts expert MLPs (wi → wo with dense_act_fn, as the dense sublayer's, layer.N.mlp.wi and wo). Block i
    of a stack is sparse when i % step == 1 or step == 1, step = layers // num_sparse_*_layers (with 0 sparse layers
    transformers sets step = layers, which still makes block 1 sparse, and every block of a one-block stack).
    The head is tied to the shared table unless tie_word_embeddings is false. expert_capacity (tokens an expert
    takes before it drops the rest) changes no parameter; ffncalc counts each token through its expert.
    """

    num_experts: Width
    num_sparse_encoder_layers: WidthOrZero
    num_sparse_decoder_layers: WidthOrZero
    router_bias: Flag
    dense_act_fn: Name

    def model_tied(self) -> bool:
        return self.tie_word_embeddings

    def to_spec(self) -> ModelSpec:
        """T5's; untied, each stack reads its own token table beside shared and the head (nothing is tied)."""
        spec = super().to_spec()
        if self.tie_word_embeddings:
            return spec
        tables = (
            Extra("embedding", "encoder.embed_tokens", Table(self.vocab_size, self.d_model), "not_generating"),
            Extra("embedding", "decoder.embed_tokens", Table(self.vocab_size, self.d_model)),
        )
        return replace(spec, extras=spec.extras + tables)

    def sparse(self, kind: Literal["encoder", "decoder"], index: int) -> bool:
        """Whether block INDEX of a stack routes its tokens to experts (SwitchTransformersStack's rule)."""
        layers = self.num_layers if kind == "encoder" else self.decoder_layers
        sparse = self.num_sparse_encoder_layers if kind == "encoder" else self.num_sparse_decoder_layers
        step = layers // sparse if sparse > 0 else layers
        return step > 0 and (index % step == 1 or step == 1)

    def ffn(self, kind: Literal["encoder", "decoder"], index: int, sublayer: int) -> DenseFfn | MoeFfn:
        prefix = f"layer.{sublayer}.mlp."
        if not self.sparse(kind, index):
            dense_names = names(up=prefix + "wi", down=prefix + "wo")
            return DenseFfn(self.d_model, self.d_ff, False, self.dense_act_fn, dense_names)
        expert = DenseFfn(self.d_model, self.d_ff, False, self.dense_act_fn, names(up="wi", down="wo"))
        return MoeFfn(
            hidden_size=self.d_model,
            num_experts=self.num_experts,
            experts_per_token=1,
            expert=expert,
            names=names(router=prefix + "router.classifier", experts=prefix + "experts.expert_{e}"),
            router_bias=self.router_bias,
        )


@family(
    "pop2piano",
    transformers="Pop2PianoConfig",
    architecture="Pop2Piano",
    model_class="Pop2PianoForConditionalGeneration",
)
class Pop2PianoConfig(_T5Stacks):
    """configuration_pop2piano.py / modeling_pop2piano.py (transformers 5.24): T5's stacks over a spectrogram.

    The encoder reads the feature extractor's frames as its inputs (the shared table, tied into both stacks, is read
    by the decoder only), after mel_conditioner, a table of composer_vocab_size composer embeddings (d_model wide)
    prepended as one more frame. Feed-forward sublayers are gated (wi_0, wi_1 → wo) when feed_forward_proj starts
    with "gated", else wi → wo, with dense_act_fn as the activation either way. lm_head is always its own:
    __post_init__ sets tie_word_embeddings to true, and the class ties only the stacks' token tables to shared.
    """

    informational_fields = frozenset({"relative_attention_max_distance", "pad_token_id"})

    composer_vocab_size: Width
    feed_forward_proj: Name
    dense_act_fn: Name

    @model_validator(mode="after")
    def _check_activation(self) -> Pop2PianoConfig:
        if self.dense_act_fn not in ACTIVATIONS:
            raise ValueError(f"dense_act_fn: {self.dense_act_fn!r} is not an activation transformers knows")
        return self

    def unused_fields(self) -> set[str]:
        return {"tie_word_embeddings"}  # lm_head is its own whatever it says

    def ffn(self, kind: Literal["encoder", "decoder"], index: int, sublayer: int) -> DenseFfn:
        gated = self.feed_forward_proj.split("-")[0] == "gated"  # Pop2PianoConfig.is_gated_act
        return DenseFfn(self.d_model, self.d_ff, gated, self.dense_act_fn, t5_ffn_names(sublayer, gated))

    def model_tied(self) -> bool:
        return False

    def to_spec(self) -> ModelSpec:
        """T5's, with lm_head of its own and the composer table, which only the encoder's input reads."""
        spec = super().to_spec()
        composers = Table(self.composer_vocab_size, self.d_model)
        return replace(
            spec, extras=(*spec.extras, Extra("embedding", "mel_conditioner.embedding", composers, "not_generating"))
        )

    def notes(self) -> list[str]:
        return [
            "Encoder-decoder over a spectrogram (beat-aligned frames, d_model wide, plus one composer embedding): per "
            "generated token only the decoder runs (its cross-attention projects the encoder output's keys and "
            "values once); the encoder's length follows the clip, so the context stands for it too. What a clip "
            "costs (`audio`) is not counted: Pop2Piano reads no fixed window."
        ]
