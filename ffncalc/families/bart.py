"""BART and the encoder-decoders that keep its layout: mBART (pre-LN, final norms), Marian (sinusoidal positions,
optionally separate source and target vocabularies) and Pegasus (sinusoidal positions, final norms).

An encoder stack and a decoder stack of post-LN (BART, Marian) or pre-LN (mBART, Pegasus) layers with biases
everywhere: self-attention (q, k, v, out_proj), in the decoder cross-attention over the encoder's output
(encoder_attn), and fc1, fc2. One token table (``shared``) feeds both stacks and the head.
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import AliasChoices, Field, model_validator

from ..schema import Flag, HeadCount, HFConfig, LayerCount, Name, PositionCount, Width, derives
from ..spec import (
    Attention,
    CheckpointExtra,
    DenseFfn,
    Extra,
    Layer,
    Linear,
    ModelNames,
    ModelSpec,
    Names,
    Norm,
    Norms,
    NotSaved,
    Runs,
    StoredTensor,
    Table,
    names,
)
from ..values import replace
from .blocks import check_heads_divide
from .registry import family

SELF_ATTENTION = names(q="self_attn.q_proj", k="self_attn.k_proj", v="self_attn.v_proj", o="self_attn.out_proj")
CROSS_ATTENTION = names(
    q="encoder_attn.q_proj", k="encoder_attn.k_proj", v="encoder_attn.v_proj", o="encoder_attn.out_proj"
)
BART_MLP = names(up="fc1", down="fc2")

Kind = Literal["model", "generation", "sequence", "question", "causal"]


class BartStacks:
    """BART's layers, which the seq2seq families that copy them share (BART's descendants, Whisper, Speech2Text):
    self-attention and the MLP (the decoder's also cross-attention), each followed by its LayerNorm. A family with
    other biases (Whisper's k_proj) overrides ``attention``."""

    d_model: int
    encoder_ffn_dim: int
    decoder_ffn_dim: int
    activation_function: str
    encoder_attention_heads: int
    decoder_attention_heads: int
    encoder_layers: int
    decoder_layers: int
    # Where the stacks and their sublayers are stored: BART's names; SeamlessM4T's text model keeps the same layers
    # as text_encoder and text_decoder, with cross_attention, ffn.fc1 and ffn_layer_norm.
    stack_modules: ClassVar[dict[str, str]] = {"encoder": "encoder", "decoder": "decoder"}
    cross_attention_names: ClassVar[Names] = CROSS_ATTENTION
    mlp_names: ClassVar[Names] = BART_MLP
    norm_modules: ClassVar[dict[str, str]] = {
        "self": "self_attn_layer_norm",
        "cross": "encoder_attn_layer_norm",
        "ffn": "final_layer_norm",
    }

    def stack_module(self, root: str, kind: Literal["encoder", "decoder"]) -> str:
        """Where a stack is stored: root + its module (model.encoder, text_decoder)."""
        return root + self.stack_modules[kind]

    def layer_norm(self) -> Norm:
        return Norm("layernorm", self.d_model, bias=True)

    def attention(self, heads: int, attention_names) -> Attention:
        return bart_attention(self.d_model, heads, attention_names)

    def stack(self, kind: Literal["encoder", "decoder"], root: str) -> tuple[Layer, ...]:
        """A stack's layers: self-attention and the MLP (the decoder's also cross-attention), each with its LayerNorm."""
        norm = self.layer_norm()
        name = f"{self.stack_module(root, kind)}.layers.{{i}}"
        mlp, norm_of = self.mlp_names, self.norm_modules
        if kind == "encoder":
            ffn = DenseFfn(self.d_model, self.encoder_ffn_dim, False, self.activation_function, mlp, bias=True)
            norms: Norms = ((norm_of["self"], norm), (norm_of["ffn"], norm))
            layer = Layer(
                name, self.attention(self.encoder_attention_heads, SELF_ATTENTION), ffn, norms, stack="encoder"
            )
            return (layer,) * self.encoder_layers
        heads = self.decoder_attention_heads
        self_attention, cross = self.attention(heads, SELF_ATTENTION), self.attention(heads, self.cross_attention_names)
        norms_named = (norm_of["self"], norm_of["cross"], norm_of["ffn"])
        layer = decoder_layer(
            name, self_attention, cross, self.decoder_ffn_dim, self.activation_function, mlp, norms_named
        )
        return (layer,) * self.decoder_layers


def bart_attention(hidden: int, heads: int, attention_names: Names) -> Attention:
    """BART's attention: HEADS heads of hidden / heads, q, k, v and o biased."""
    head_dim = hidden // heads
    return Attention(hidden, heads, heads, head_dim, head_dim, attention_names, True, True, True, True)


def decoder_layer(
    name: str,
    attention: Attention,
    cross: Attention,
    ffn_width: int,
    activation: str,
    mlp_names: Names = BART_MLP,
    norm_names: tuple[str, str, str] = ("self_attn_layer_norm", "encoder_attn_layer_norm", "final_layer_norm"),
) -> Layer:
    """BART's decoder layer stored as NAME: ATTENTION, the CROSS attention over the encoder's positions and a plain
    biased MLP FFN_WIDTH wide (MLP_NAMES), each with its LayerNorm (NORM_NAMES: after it, or before it in MBart's
    pre-LN layers: the same parameters)."""
    hidden = attention.hidden_size
    norm = Norm("layernorm", hidden, bias=True)
    ffn = DenseFfn(hidden, ffn_width, False, activation, mlp_names, bias=True)
    norms = tuple((module, norm) for module in norm_names)
    return Layer(name, attention, ffn, norms, cross_attention=cross, stack="decoder")


class BartLayout(BartStacks, HFConfig):
    """BART's fields, classes and builders but the size of its position tables: what BartConfig (max_position_embeddings
    for both stacks) shares with LED (one for each stack). See BartConfig.
    """

    read_beyond = {"num_labels": "no field: PreTrainedConfig turns a num_labels key into id2label"}
    informational_fields = frozenset({"pad_token_id"})
    class_prefix: ClassVar[str] = "Bart"
    classes: ClassVar[dict[str, Kind]] = {
        "Model": "model",
        "ForConditionalGeneration": "generation",
        "ForSequenceClassification": "sequence",
        "ForQuestionAnswering": "question",
        "ForCausalLM": "causal",
    }
    default_labels: ClassVar[int] = 3  # BartConfig.__post_init__'s num_labels
    # learned tables; sinusoidal ones held as frozen parameters (counted, saved); or computed into a buffer that is
    # neither a parameter nor saved (M2M-100)
    positions: ClassVar[Literal["learned", "sinusoidal", "computed"]] = "learned"
    position_offset: ClassVar[int] = 2  # a learned table's rows past max_position_embeddings (fairseq's; Blenderbot: 0)
    logits_bias: ClassVar[bool] = True  # the seq2seq LM adds a final_logits_bias buffer (M2M-100 does not)
    embedding_norm: ClassVar[bool] = True  # layernorm_embedding on each stack's input
    final_norms: ClassVar[bool] = False  # a layer_norm at the end of each stack (pre-LN families)
    # what that norm is stored as (BigBird-Pegasus keeps it as layernorm_embedding, applied after the last layer)
    final_norm_module: ClassVar[str] = "layer_norm"
    base_model_prefix: ClassVar[str] = "model"

    vocab_size: Width
    encoder_layers: LayerCount
    encoder_ffn_dim: Width
    encoder_attention_heads: HeadCount
    decoder_layers: LayerCount
    decoder_ffn_dim: Width
    decoder_attention_heads: HeadCount
    activation_function: Name
    d_model: Width
    pad_token_id: Annotated[int | None, Field(strict=True)]  # the token table's padding row: it must be a row of it
    tie_word_embeddings: Flag
    id2label: dict[str, Name] | None
    num_labels: int | None = Field(None, strict=True, ge=0, le=1 << 20)

    def position_rows(self, kind: Literal["encoder", "decoder"]) -> int:
        """The rows of a stack's position table."""
        raise NotImplementedError

    @model_validator(mode="after")
    def _check_shapes(self) -> BartLayout:
        check_heads_divide(self, "d_model")
        for vocab in {self.vocab_size, self.target_vocab_size}:
            if self.pad_token_id is not None and not -vocab <= self.pad_token_id < vocab:
                raise ValueError(
                    f"pad_token_id ({self.pad_token_id}) is not a row of the embedding table ({vocab} rows); "
                    "torch refuses such a padding_idx"
                )
        return self

    def defaults_used(self):
        skipped = {"id2label"} | (set() if self.kind == "sequence" and self.id2label is None else {"num_labels"})
        return [d for d in super().defaults_used() if d.field not in skipped]

    # --- what the class builds ---

    def model_class(self) -> str:
        named = (self.architectures or [""])[0]
        return named if named.removeprefix(self.class_prefix) in self.classes else self.default_model_class

    @property
    def kind(self) -> Kind:
        return self.classes[self.model_class().removeprefix(self.class_prefix)]

    @derives("num_labels", "len(id2label), else 3 (2 for mBART)")
    def labels(self) -> int:
        """The sequence classifier's width: len(id2label), or num_labels, or the family's default."""
        if self.id2label is not None:
            return len(self.id2label)
        return self.num_labels if self.num_labels is not None else self.default_labels

    def unused_fields(self) -> set[str]:
        return {"encoder_layers", "encoder_ffn_dim", "encoder_attention_heads"} if self.kind == "causal" else set()

    def notes(self) -> list[str]:
        notes = [
            "Encoder-decoder: per generated token only the decoder runs (its cross-attention projects the "
            "encoder output's keys and values once); the context is both the decoder's length and the encoder's."
        ]
        if self.kind == "causal":
            notes = [
                f"{self.model_class()} is the decoder alone (with its cross-attention, which it runs only "
                "when given an encoder's states); the encoder is not built."
            ]
        counted = self.model_class()
        if self.architectures and counted != self.architectures[0]:
            notes.append(
                f"{self.architectures[0]} is not a {self.architecture} class ffncalc knows; counted as {counted}."
            )
        return notes

    # --- vocabularies (Marian may keep two) ---

    @property
    def shares_embeddings(self) -> bool:
        """One table for both stacks (``shared``)."""
        return True

    @property
    def target_vocab_size(self) -> int:
        """The decoder's vocabulary."""
        return self.vocab_size

    @property
    def head_vocab_size(self) -> int:
        """The seq2seq head's outputs (and final_logits_bias's)."""
        return self.vocab_size

    # --- the stacks ---

    def stack_extras(self, kind: Literal["encoder", "decoder"], root: str) -> list[Extra]:
        """A stack's position table, the LayerNorm on its embeddings, and (encoder) its final LayerNorm."""
        runs: Runs = "not_generating" if kind == "encoder" else "every_token"
        rows = self.position_rows(kind)
        extras = []
        if self.positions != "computed":
            extras.append(
                Extra("embedding", f"{self.stack_module(root, kind)}.embed_positions", Table(rows, self.d_model), runs)
            )
        if self.embedding_norm:
            extras.append(
                Extra("norm", f"{self.stack_module(root, kind)}.layernorm_embedding", self.layer_norm(), runs)
            )
        if self.final_norms and kind == "encoder":  # the decoder's is the spec's final norm
            name = f"{self.stack_module(root, 'encoder')}.{self.final_norm_module}"
            extras.append(Extra("norm", name, self.layer_norm(), runs))
        return extras

    def token_tables(self, root: str) -> tuple[str, list[Extra]]:
        """The main token table's name, and the stacks' own tables when they are not it (untied, or Marian's)."""
        tied = self.tie_word_embeddings
        if self.kind == "causal":
            return f"{self.stack_module(root, 'decoder')}.embed_tokens", []
        encoder = Extra(
            "embedding",
            f"{self.stack_module(root, 'encoder')}.embed_tokens",
            Table(self.vocab_size, self.d_model),
            "not_generating",
        )
        decoder = Extra(
            "embedding",
            f"{self.stack_module(root, 'decoder')}.embed_tokens",
            Table(self.target_vocab_size, self.d_model),
        )
        if self.shares_embeddings:
            return f"{root}shared", [] if tied else [encoder, decoder]
        return f"{self.stack_module(root, 'decoder')}.embed_tokens", [encoder]

    def head_extras(self) -> list[Extra]:
        d_model = self.d_model
        if self.kind == "sequence":
            return [
                Extra("other", "classification_head.dense", Linear(d_model, d_model, bias=True), "not_generating"),
                Extra(
                    "other", "classification_head.out_proj", Linear(d_model, self.labels(), bias=True), "not_generating"
                ),
            ]
        if self.kind == "question":
            return [
                Extra("other", "qa_outputs", Linear(d_model, 2, bias=True), "not_generating")
            ]  # num_labels is set to 2
        return []

    def checkpoint_extras(self, root: str) -> tuple[CheckpointExtra, ...]:
        extras = []
        if self.kind == "generation" and self.logits_bias:
            extras.append(
                CheckpointExtra(
                    name="final_logits_bias buffer",
                    reason=f"1 × {self.head_vocab_size:,} added to the logits: a persistent buffer, zero unless resized",
                    tensors=(StoredTensor("final_logits_bias", (1, self.head_vocab_size)),),
                    buffer=True,
                )
            )
        if self.tie_word_embeddings and self.shares_embeddings and self.kind != "causal":
            extras.append(
                CheckpointExtra(
                    name="tied copies of the token table",
                    reason="the stacks read the shared table; some checkpoints store it again under each stack's name",
                    tensors=tuple(
                        StoredTensor(
                            f"{self.stack_module(root, kind)}.embed_tokens.weight", (self.vocab_size, self.d_model)
                        )
                        for kind in ("encoder", "decoder")
                    ),
                    likely=False,
                )
            )
        return tuple(extras)

    def model_root(self) -> str:
        """Where the class keeps its base model's modules: model. under a head, nothing in the bare model."""
        return "" if self.kind == "model" else "model."

    def to_spec(self) -> ModelSpec:
        root = self.model_root()
        causal = self.kind == "causal"
        layers = self.stack("decoder", root) if causal else self.stack("encoder", root) + self.stack("decoder", root)
        embed, tables = self.token_tables(root)
        extras = tables + ([] if causal else self.stack_extras("encoder", root)) + self.stack_extras("decoder", root)
        # the main table's rows (and the head's outputs): the shared table's, or the decoder's own
        vocab = self.vocab_size if self.shares_embeddings and not causal else self.target_vocab_size
        lm_head = self.kind in ("generation", "causal")
        if causal and vocab != self.vocab_size and not self.tie_word_embeddings:
            # Marian's causal LM: a head of vocab_size outputs over a decoder table of decoder_vocab_size rows
            extras.append(Extra("lm_head", "lm_head", Linear(self.d_model, self.vocab_size)))
            lm_head = False
        return ModelSpec(
            model_type=self.model_type,
            hidden_size=self.d_model,
            vocab_size=vocab,
            layers=layers,
            final_norm=self.layer_norm() if self.final_norms else None,
            tie_word_embeddings=self.tie_word_embeddings,
            names=ModelNames(
                embed,
                f"{self.stack_module(root, 'decoder')}.{self.final_norm_module}",
                base_model_prefix=self.base_model_prefix,
            ),
            lm_head=lm_head,
            extras=tuple(extras + self.head_extras()),
            checkpoint_extras=self.checkpoint_extras(root),
        )


@family(
    "bart",
    transformers="BartConfig",
    architecture="BART",
    model_class="BartForConditionalGeneration",
    read_beyond={"num_labels": "no field: PreTrainedConfig turns a num_labels key into id2label"},
)
class BartConfig(BartLayout):
    """configuration_bart.py / modeling_bart.py.

    Learned positions with 2 rows more than max_position_embeddings (the offset kept from fairseq), one
    table per stack; a LayerNorm on each stack's embeddings (layernorm_embedding); post-LN layers. The
    class in ``architectures`` decides what is built around the stacks: the seq2seq LM (a head tied to
    ``shared``, and a final_logits_bias buffer that checkpoints store), a sequence classifier (dense and
    out_proj, num_labels wide: 3 unless the config says), a span predictor (qa_outputs, 2), the bare model,
    or the decoder alone as a causal LM (its head tied to the decoder's table). With tie_word_embeddings
    false nothing is tied: the shared table, each stack's own table and the head are four tensors.
    """

    max_position_embeddings: PositionCount

    def position_rows(self, kind: Literal["encoder", "decoder"]) -> int:
        return self.max_position_embeddings + (self.position_offset if self.positions == "learned" else 0)


@family("mbart", transformers="MBartConfig", architecture="mBART", model_class="MBartForConditionalGeneration")
class MBartConfig(BartConfig):
    """configuration_mbart.py / modeling_mbart.py: BART's model with pre-LN layers and a final LayerNorm on each
    stack (layer_norm) beside the one on its embeddings; classifiers 2 wide unless the config says."""

    class_prefix = "MBart"
    default_labels = 2
    final_norms = True


@family("pegasus", transformers="PegasusConfig", architecture="Pegasus", model_class="PegasusForConditionalGeneration")
class PegasusConfig(BartConfig):
    """configuration_pegasus.py / modeling_pegasus.py: pre-LN layers and a final LayerNorm on each stack, no
    LayerNorm on the embeddings; sinusoidal positions, max_position_embeddings rows per stack, held as frozen
    parameters (transformers counts and saves them); no classification classes."""

    class_prefix = "Pegasus"
    classes = {"Model": "model", "ForConditionalGeneration": "generation", "ForCausalLM": "causal"}
    default_labels = 2
    positions = "sinusoidal"
    embedding_norm = False
    final_norms = True


@family("marian", transformers="MarianConfig", architecture="Marian", model_class="MarianMTModel")
class MarianConfig(BartConfig):
    """configuration_marian.py / modeling_marian.py (OPUS-MT): post-LN layers without LayerNorms on the
    embeddings or at the ends; sinusoidal positions, max_position_embeddings rows per stack, held as frozen
    parameters (transformers counts them; MarianMTModel leaves them out when it saves). With
    share_encoder_decoder_embeddings false there is no shared table: the encoder's (vocab_size) and the
    decoder's (decoder_vocab_size, default vocab_size), the head tied to the decoder's."""

    class_prefix = "Marian"
    classes = {"Model": "model", "MTModel": "generation", "ForCausalLM": "causal"}
    default_labels = 2
    positions = "sinusoidal"
    embedding_norm = False

    decoder_vocab_size: Width | None
    share_encoder_decoder_embeddings: Flag

    @property
    def shares_embeddings(self) -> bool:
        return self.share_encoder_decoder_embeddings

    @property
    @derives("decoder_vocab_size", "vocab_size")
    def target_vocab_size(self) -> int:
        return self.decoder_vocab_size or self.vocab_size

    @property
    def head_vocab_size(self) -> int:
        return self.vocab_size if self.share_encoder_decoder_embeddings else self.target_vocab_size

    def to_spec(self) -> ModelSpec:
        spec = super().to_spec()
        if self.kind != "generation":  # only MarianMTModel declares _keys_to_ignore_on_save
            return spec
        tables = ("model.encoder.embed_positions.weight", "model.decoder.embed_positions.weight")
        reason = (
            "sinusoidal position tables, computed when the model is built: MarianMTModel leaves them out when it "
            "saves (_keys_to_ignore_on_save), and older checkpoints may hold them"
        )
        return replace(spec, not_saved=NotSaved(tables, reason))


@family("plbart", transformers="PLBartConfig", architecture="PLBART", model_class="PLBartForConditionalGeneration")
class PLBartConfig(BartConfig):
    """configuration_plbart.py / modeling_plbart.py (PLBART, code and text): BART's layout (post-LN, learned
    positions with fairseq's offset of 2, layernorm_embedding) with its own defaults; classifiers 2 wide unless the
    config says; no question-answering class."""

    class_prefix = "PLBart"
    classes = {
        "Model": "model",
        "ForConditionalGeneration": "generation",
        "ForSequenceClassification": "sequence",
        "ForCausalLM": "causal",
    }
    default_labels = 2

    @derives("num_labels", "len(id2label), else 2")
    def labels(self) -> int:
        return super().labels()


@family("m2m_100", transformers="M2M100Config", architecture="M2M-100", model_class="M2M100ForConditionalGeneration")
class M2M100Config(BartConfig):
    """configuration_m2m_100.py / modeling_m2m_100.py (M2M-100, NLLB-200's dense models): pre-LN layers and a final
    LayerNorm on each stack, no LayerNorm on the embeddings; sinusoidal positions computed into a buffer that is
    neither a parameter nor saved; no final_logits_bias; the bare model and the seq2seq LM only."""

    class_prefix = "M2M100"
    classes = {"Model": "model", "ForConditionalGeneration": "generation"}
    positions = "computed"
    embedding_norm = False
    final_norms = True
    logits_bias = False


@family(
    "blenderbot",
    transformers="BlenderbotConfig",
    architecture="Blenderbot",
    model_class="BlenderbotForConditionalGeneration",
)
class BlenderbotConfig(BartConfig):
    """configuration_blenderbot.py / modeling_blenderbot.py: pre-LN layers and a final LayerNorm on each stack, no
    LayerNorm on the embeddings, learned positions of exactly max_position_embeddings rows; no classifiers."""

    class_prefix = "Blenderbot"
    classes = {"Model": "model", "ForConditionalGeneration": "generation", "ForCausalLM": "causal"}
    position_offset = 0
    embedding_norm = False
    final_norms = True


@family(
    "blenderbot-small",
    transformers="BlenderbotSmallConfig",
    architecture="Blenderbot-Small",
    model_class="BlenderbotSmallForConditionalGeneration",
)
class BlenderbotSmallConfig(BartConfig):
    """configuration_blenderbot_small.py / modeling_blenderbot_small.py: BART's post-LN layers and layernorm_embedding,
    learned positions of exactly max_position_embeddings rows; no classifiers."""

    class_prefix = "BlenderbotSmall"
    classes = {"Model": "model", "ForConditionalGeneration": "generation", "ForCausalLM": "causal"}
    position_offset = 0


@family(
    "fsmt",
    transformers="FSMTConfig",
    architecture="FSMT",
    model_class="FSMTForConditionalGeneration",
    other_names={
        "vocab_size": "tgt_vocab_size (the field; vocab_size its attribute_map name) read first, as FSMT's configs give it"
    },
)
class FSMTConfig(BartConfig):
    """configuration_fsmt.py / modeling_fsmt.py (fairseq's WMT19 translation models, facebook/wmt19-*): BART's post-LN
    layers without LayerNorms on the embeddings or at the ends, a source table (src_vocab_size) for the encoder and a
    target table (tgt_vocab_size) for the decoder, and the head inside the decoder (decoder.output_projection, no
    bias). Sinusoidal positions held as frozen parameters (counted and saved), max_position_embeddings + pad_token_id + 1
    rows per stack. tie_word_embeddings ties the source table and the head to the target table. The bare model and
    the seq2seq LM only, which differ by the model. prefix alone; no final_logits_bias."""

    class_prefix = "FSMT"
    classes = {"Model": "model", "ForConditionalGeneration": "generation"}
    positions = "sinusoidal"
    embedding_norm = False
    logits_bias = False

    vocab_size: Width = Field(validation_alias=AliasChoices("tgt_vocab_size", "vocab_size"))
    src_vocab_size: Width

    @model_validator(mode="after")
    def _check_tables(self) -> FSMTConfig:
        if self.pad_token_id is None or self.pad_token_id < 0:
            raise ValueError(
                f"pad_token_id ({self.pad_token_id}): FSMT's position tables have max_position_embeddings + "
                "pad_token_id + 1 rows, so it must be a row index (0 or more)"
            )
        if self.tie_word_embeddings and self.src_vocab_size != self.vocab_size:
            raise ValueError(
                f"tie_word_embeddings: the source table ({self.src_vocab_size} rows) cannot be tied to the target "
                f"table (tgt_vocab_size {self.vocab_size})"
            )
        if self.pad_token_id >= self.src_vocab_size:
            raise ValueError(
                f"pad_token_id ({self.pad_token_id}) is not a row of the source table (src_vocab_size "
                f"{self.src_vocab_size}); torch refuses such a padding_idx"
            )
        return self

    def unused_fields(self) -> set[str]:
        return set()

    def to_spec(self) -> ModelSpec:
        root = "" if self.kind == "model" else "model."
        d_model, rows = self.d_model, self.max_position_embeddings + (self.pad_token_id or 0) + 1
        extras = [
            Extra("embedding", f"{root}encoder.embed_positions", Table(rows, d_model), "not_generating"),
            Extra("embedding", f"{root}decoder.embed_positions", Table(rows, d_model)),
        ]
        if not self.tie_word_embeddings:
            source = Table(self.src_vocab_size, d_model)
            extras.insert(0, Extra("embedding", f"{root}encoder.embed_tokens", source, "not_generating"))
        return ModelSpec(
            model_type=self.model_type,
            hidden_size=d_model,
            vocab_size=self.vocab_size,
            layers=self.stack("encoder", root) + self.stack("decoder", root),
            final_norm=None,
            tie_word_embeddings=self.tie_word_embeddings,
            names=ModelNames(
                f"{root}decoder.embed_tokens", "", lm_head=f"{root}decoder.output_projection", base_model_prefix="model"
            ),
            extras=tuple(extras),
        )


@family("mvp", transformers="MvpConfig", architecture="MVP", model_class="MvpForConditionalGeneration")
class MvpConfig(BartConfig):
    """configuration_mvp.py / modeling_mvp.py (MVP, RUCAIBox): BART's layout (post-LN, learned positions with
    fairseq's offset of 2, layernorm_embedding, final_logits_bias) with its own vocabulary; classifiers 2 wide unless
    the config says. With use_prompt the seq2seq classes also build MvpPrompt modules (a prompt_length table and a
    two-layer MLP per stack, the decoder's twice), whose prompt_length keys and values every attention reads beside
    the context and which the decoder recomputes on every forward pass: ffncalc's spec cannot state that cost, so
    such a config is refused. MvpForCausalLM builds its decoder without prompts whatever use_prompt says."""

    class_prefix = "Mvp"
    default_labels = 2  # MvpConfig sets no num_labels: PreTrainedConfig's 2

    use_prompt: Flag

    @derives("num_labels", "len(id2label), else 2")
    def labels(self) -> int:
        return super().labels()

    @model_validator(mode="after")
    def _check_prompts(self) -> MvpConfig:
        if self.use_prompt and self.kind != "causal":
            raise ValueError(
                "use_prompt true: MVP's layer-wise prompts (prompt_length keys prepended to every attention, recomputed on each forward "
                "pass) are not counted yet; ffncalc counts MVP with use_prompt false"
            )
        return self

    def unused_fields(self) -> set[str]:
        return super().unused_fields() | ({"use_prompt"} if self.kind == "causal" else set())
