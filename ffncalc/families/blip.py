"""BLIP-2 and InstructBLIP: a ViT (EVA's, BLIP-2's vision model), a Q-Former (BERT-style layers over a few learned
queries, with cross-attention to the image's features every few layers) and a language model transformers builds
whole from text_config (OPT, T5, Llama …) under language_model."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import model_validator

from ..errors import InvalidConfigError
from ..results import DefaultUsed
from ..schema import Flag, HeadCount, LayerCount, Name, PositionCount, Width
from ..spec import (
    Attention,
    DenseFfn,
    Extra,
    ImageInput,
    Layer,
    LearnedTensor,
    Linear,
    ModelSpec,
    Norm,
    PatchEmbedding,
    Table,
    names,
)
from ..values import replace
from .bert import BertLayers
from .multimodal import MultimodalConfig, MultimodalLayers, nest
from .registry import family, tower
from .towers import Module, Tower, TowerConfig, projector_module, tower_module

BLIP_ATTENTION = names(q="self_attn.qkv", k="self_attn.qkv", v="self_attn.qkv", o="self_attn.projection")
BLIP_MLP = names(up="mlp.fc1", down="mlp.fc2")


def _heads_divide(width: int, heads: int, what: str) -> None:
    if width % heads:
        raise ValueError(f"hidden_size ({width}) is not a multiple of num_attention_heads ({heads}); {what} refuses it")


class BlipVisionLayers(TowerConfig):
    """BLIP's vision model (modeling_blip.py, BlipVisionModel) and BLIP-2's copy: a class token (class_embedding), a
    biased patch convolution over 3 channels, a learned position per patch and for the class token
    (position_embedding, an nn.Parameter), pre-LN layers whose attention is one fused qkv (biased) and a biased
    projection, a plain biased MLP, and post_layernorm. The image processor resizes every image to image_size square.
    BLIP-2's defaults; BLIP's configuration class has no qkv_bias (its qkv is always biased)."""

    hidden_size: Width
    intermediate_size: Width
    num_hidden_layers: LayerCount
    num_attention_heads: HeadCount
    image_size: Width
    patch_size: Width
    hidden_act: Name

    @model_validator(mode="after")
    def _check_heads(self) -> BlipVisionLayers:
        _heads_divide(self.hidden_size, self.num_attention_heads, "transformers' BLIP attention")
        return self

    def qkv_biased(self) -> bool:
        """Whether the fused qkv has a bias (BLIP's always has)."""
        return True

    @property
    def positions(self) -> int:
        """The class token and one position per patch of an image_size square: (image_size / patch_size)² + 1."""
        return (self.image_size // self.patch_size) ** 2 + 1

    def tower(self, prefix: str) -> Tower:
        hidden, heads, bias = self.hidden_size, self.num_attention_heads, self.qkv_biased()
        head_dim = hidden // heads
        attention = Attention(hidden, heads, heads, head_dim, head_dim, BLIP_ATTENTION, bias, bias, bias, True)
        ffn = DenseFfn(hidden, self.intermediate_size, False, self.hidden_act, BLIP_MLP, True)
        layer_norm = Norm("layernorm", hidden, bias=True)
        layer = Layer(
            prefix + "encoder.layers.{i}", attention, ffn, (("layer_norm1", layer_norm), ("layer_norm2", layer_norm)),
            stack="vision",
        )  # fmt: skip
        extras = (
            tower_module(prefix + "embeddings.class_embedding", LearnedTensor((1, 1, hidden))),
            tower_module(
                prefix + "embeddings.patch_embedding", PatchEmbedding(3, (self.patch_size,) * 2, hidden, True)
            ),
            tower_module(prefix + "embeddings.position_embedding", LearnedTensor((1, self.positions, hidden))),
            tower_module(prefix + "post_layernorm", layer_norm),
        )
        image = ImageInput(self.patch_size, "fixed", self.image_size, extra_tokens=1)
        return Tower((layer,) * self.num_hidden_layers, extras, hidden, image)


@tower("blip_2_vision_model", transformers="Blip2VisionConfig")
class Blip2VisionConfig(BlipVisionLayers):
    """configuration_blip_2.py (Blip2VisionConfig) / modeling_blip_2.py (Blip2VisionModel), InstructBLIP's and
    InstructBLIP-Video's copies: BLIP's vision model, its qkv bias (q and v biases with zeros for k between them, one
    parameter of 3 · hidden) only with qkv_bias."""

    qkv_bias: Flag

    def qkv_biased(self) -> bool:
        return self.qkv_bias


@tower("blip_vision_model", transformers="BlipVisionConfig")
class BlipVisionConfig(BlipVisionLayers):
    """configuration_blip.py (BlipVisionConfig): BLIP's vision model with BLIP-base's defaults (384 × 384 images)."""


@tower("instructblip_vision_model", transformers="InstructBlipVisionConfig")
class InstructBlipVisionConfig(Blip2VisionConfig):
    """configuration_instructblip.py (InstructBlipVisionConfig): BLIP-2's vision model and defaults."""


@tower("instructblipvideo_vision_model", transformers="InstructBlipVideoVisionConfig")
class InstructBlipVideoVisionConfig(Blip2VisionConfig):
    """configuration_instructblipvideo.py (InstructBlipVideoVisionConfig): BLIP-2's vision model and defaults."""


class QFormerLayers(TowerConfig):
    """The Q-Former's fields and layout that BLIP-2's and InstructBLIP's share (modeling_blip_2.py, Blip2QFormerModel):
    BERT-style post-LN layers: self-attention (query, key, value and output.dense, all biased, and output.LayerNorm),
    in every layer whose index is a multiple of cross_attention_frequency a cross-attention of the same shape whose
    key and value read the vision tower's width (the wrapper's __post_init__ sets encoder_hidden_size to it, whatever
    the block says), and two FFNs: intermediate_query and output_query for the queries, intermediate and output for
    text (where the Q-Former reads text)."""

    informational_fields = frozenset({"encoder_hidden_size", "pad_token_id"})

    vocab_size: Width
    hidden_size: Width
    num_hidden_layers: LayerCount
    num_attention_heads: HeadCount
    intermediate_size: Width
    hidden_act: Name
    max_position_embeddings: PositionCount
    pad_token_id: int | None
    cross_attention_frequency: Width
    encoder_hidden_size: Width

    @model_validator(mode="after")
    def _check_heads(self) -> QFormerLayers:
        _heads_divide(self.hidden_size, self.num_attention_heads, "transformers' Q-Former attention")
        return self

    def text_ffn(self) -> bool:
        """Whether each layer holds the FFN text tokens run (intermediate, output)."""
        return True

    def input_modules(self) -> list[tuple[str, Module]]:
        """What the layers read first: the embeddings of the text, or a LayerNorm over the queries alone."""
        return [("layernorm", Norm("layernorm", self.hidden_size, bias=True))]

    def modules(self, prefix: str, vision_width: int) -> tuple[tuple[str, Module], ...]:
        """Every module under PREFIX ("qformer."), its cross-attention's keys and values reading VISION_WIDTH."""
        hidden, inner = self.hidden_size, self.intermediate_size
        layer_norm = Norm("layernorm", hidden, bias=True)
        found = self.input_modules()
        ffns = ("_query", "") if self.text_ffn() else ("_query",)
        for index in range(self.num_hidden_layers):
            layer = f"encoder.layer.{index}."
            attentions = [("attention.", hidden)]
            if index % self.cross_attention_frequency == 0:
                attentions.append(("crossattention.", vision_width))
            for block, width in attentions:
                found += [
                    (layer + block + "attention.query", Linear(hidden, hidden, True)),
                    (layer + block + "attention.key", Linear(width, hidden, True)),
                    (layer + block + "attention.value", Linear(width, hidden, True)),
                    (layer + block + "output.dense", Linear(hidden, hidden, True)),
                    (layer + block + "output.LayerNorm", layer_norm),
                ]
            for suffix in ffns:
                found += [
                    (layer + f"intermediate{suffix}.dense", Linear(hidden, inner, True)),
                    (layer + f"output{suffix}.dense", Linear(inner, hidden, True)),
                    (layer + f"output{suffix}.LayerNorm", layer_norm),
                ]
        return tuple((prefix + name, module) for name, module in found)


@tower("blip_2_qformer", transformers="Blip2QFormerConfig")
class Blip2QFormerConfig(QFormerLayers):
    """configuration_blip_2.py (Blip2QFormerConfig): a LayerNorm over the queries (layernorm), no embeddings; the text
    FFN only with use_qformer_text_input (Blip2ForConditionalGeneration never runs it: it gives the Q-Former no
    text)."""

    use_qformer_text_input: Flag

    def text_ffn(self) -> bool:
        return self.use_qformer_text_input

    def unused_fields(self) -> set[str]:
        return {"vocab_size", "max_position_embeddings"}  # Blip2QFormerModel builds no embeddings


@tower("instructblip_qformer", transformers="InstructBlipQFormerConfig")
class InstructBlipQFormerConfig(QFormerLayers):
    """configuration_instructblip.py (InstructBlipQFormerConfig) / modeling_instructblip.py: BLIP-2's Q-Former that
    also reads the instruction: word and position embeddings and their LayerNorm (embeddings.layernorm, in place of
    BLIP-2's layernorm over the queries), and the text FFN in every layer."""

    def input_modules(self) -> list[tuple[str, Module]]:
        hidden = self.hidden_size
        return [
            ("embeddings.word_embeddings", Table(self.vocab_size, hidden)),
            ("embeddings.position_embeddings", Table(self.max_position_embeddings, hidden)),
            ("embeddings.layernorm", Norm("layernorm", hidden, bias=True)),
        ]


class QFormerWrapper(MultimodalLayers):
    """What BLIP-2's and InstructBLIP's wrappers share (modeling_blip_2.py, Blip2ForConditionalGeneration): the vision
    model (vision_model.), num_query_tokens learned queries (query_tokens, an nn.Parameter of the Q-Former's width),
    the Q-Former (qformer.), language_projection (a biased linear from the Q-Former's width to the language model's)
    and the language model transformers builds whole from text_config (language_model.: AutoModelForCausalLM, or
    AutoModelForSeq2SeqLM for an encoder-decoder such as Flan-T5; OPT by default). The configuration classes have no
    tie_word_embeddings: the language model's own flag ties its head. An image becomes num_query_tokens tokens of the
    language model, whatever its size.

    No image rule: the queries' self-attention and their cross-attention over the tower's patches are FLOPs the image
    arithmetic does not express; the Q-Former is counted by parameter, as the projector."""

    #: The classes that build this layout; a config naming another is counted as default_model_class, with a note.
    counted_classes: ClassVar[frozenset[str]] = frozenset()
    text_model_type = "opt"
    text_defaults = {"model_type": "opt"}
    text_ties = True
    vision_prefix = "vision_model."
    qformer_model_type: ClassVar[str] = ""
    #: What transformers keeps in float32 when it loads the model in 16 bits (the class's _keep_in_fp32_modules).
    kept_in_float32: ClassVar[str] = ""

    vision_config: dict[str, Any] | None
    qformer_config: dict[str, Any] | None
    num_query_tokens: Width

    def model_class(self) -> str:
        named = (self.architectures or [""])[0]
        return named if named in self.counted_classes else self.default_model_class

    def tower_blocks(self) -> tuple[tuple[str, str, dict[str, Any]], ...]:
        qformer = ("qformer_config", self.qformer_model_type, {"model_type": self.qformer_model_type})
        return super().tower_blocks() + (qformer,)

    @property
    def qformer(self) -> QFormerLayers:
        block = self.towers["qformer_config"]
        if not isinstance(block, QFormerLayers):
            raise InvalidConfigError(
                f"qformer_config.model_type: {block.model_type!r} is not a Q-Former; give {self.qformer_model_type!r} "
                "or leave it out"
            )
        return block

    def validate_nested(self) -> None:
        super().validate_nested()
        self.qformer  # noqa: B018 - a Q-Former, or an error naming the field

    def tied(self) -> bool:
        """Whether the language model's head is its token table: its own config decides (T5's always is)."""
        return self.text.to_spec().tie_word_embeddings

    def image_input(self, tower: Tower) -> ImageInput | None:
        return None

    def projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        qformer = self.qformer
        modules = (
            ("query_tokens", LearnedTensor((1, self.num_query_tokens, qformer.hidden_size))),
            *qformer.modules("qformer.", tower.hidden_size),
            ("language_projection", Linear(qformer.hidden_size, text_hidden, True)),
        )
        return tuple(projector_module(name, module) for name, module in modules)

    def wrapped_spec(self) -> ModelSpec:
        """The language model as transformers builds it from text_config (its head, its tying) under
        language_model., with the tower and the Q-Former."""
        spec = nest(replace(self.text.to_spec(), model_type=self.model_type), "language_model.")
        return self.whole(spec)

    def notes(self) -> list[str]:
        counted = self.model_class()
        renamed = (
            [f"{self.architectures[0]} is not a {self.architecture} class ffncalc knows; counted as {counted}."]
            if self.architectures and counted != self.architectures[0]
            else []
        )
        counted_note = (
            f"{self.model_type} is multimodal: the language model ({self.text.model_type}), the vision tower and the "
            "Q-Former (counted as the projector, with the query tokens and language_projection) are counted; a text "
            f"token runs the language model only, and an image becomes {self.num_query_tokens} tokens "
            "(num_query_tokens). No image rule: the queries' self- and cross-attention over the tower's patches are "
            "FLOPs ffncalc's image arithmetic does not express (flops with an `image` refuses)"
        )
        float32 = (
            f"transformers keeps {self.kept_in_float32} in float32 (_keep_in_fp32_modules) when it loads the model in "
            "16 bits; ffncalc's memory counts them at the model's dtype"
        )
        return [*renamed, counted_note, float32, *self.text.notes()]


@tower("instructblipvideo_qformer", transformers="InstructBlipVideoQFormerConfig")
class InstructBlipVideoQFormerConfig(InstructBlipQFormerConfig):
    """configuration_instructblipvideo.py (InstructBlipVideoQFormerConfig): InstructBLIP's Q-Former and defaults."""


@family("blip-2", transformers="Blip2Config", architecture="BLIP-2", model_class="Blip2ForConditionalGeneration")
class Blip2Config(QFormerWrapper):
    """configuration_blip_2.py (Blip2Config) / modeling_blip_2.py: Blip2ForConditionalGeneration and Blip2Model
    build the same modules; image_text_hidden_size sizes the retrieval classes' projections only."""

    counted_classes = frozenset({"Blip2ForConditionalGeneration", "Blip2Model"})
    vision_model_type = "blip_2_vision_model"
    vision_defaults = {"model_type": "blip_2_vision_model"}
    qformer_model_type = "blip_2_qformer"
    kept_in_float32 = "the Q-Former and the query tokens"
    informational_fields = frozenset({"image_text_hidden_size"})

    image_text_hidden_size: Width


@family(
    "instructblip",
    transformers="InstructBlipConfig",
    architecture="InstructBLIP",
    model_class="InstructBlipForConditionalGeneration",
)
class InstructBlipConfig(QFormerWrapper):
    """configuration_instructblip.py (InstructBlipConfig) / modeling_instructblip.py
    (InstructBlipForConditionalGeneration): BLIP-2's layout with InstructBLIP's Q-Former, which also reads the
    instruction (its embeddings and text FFN, run once over the prompt, never per generated token)."""

    counted_classes = frozenset({"InstructBlipForConditionalGeneration"})
    vision_model_type = "instructblip_vision_model"
    vision_defaults = {"model_type": "instructblip_vision_model"}
    qformer_model_type = "instructblip_qformer"
    kept_in_float32 = "the query tokens"


@family(
    "instructblipvideo",
    transformers="InstructBlipVideoConfig",
    architecture="InstructBLIP-Video",
    model_class="InstructBlipVideoForConditionalGeneration",
)
class InstructBlipVideoConfig(InstructBlipConfig):
    """configuration_instructblipvideo.py / modeling_instructblipvideo.py (InstructBlipVideoForConditionalGeneration):
    InstructBLIP's modules; each frame of a video runs the tower and the Q-Former, num_query_tokens tokens a frame."""

    counted_classes = frozenset({"InstructBlipVideoForConditionalGeneration"})
    vision_model_type = "instructblipvideo_vision_model"
    vision_defaults = {"model_type": "instructblipvideo_vision_model"}
    qformer_model_type = "instructblipvideo_qformer"


@family("blip_text_model", transformers="BlipTextConfig", architecture="BLIP", model_class="BlipTextLMHeadModel")
class BlipTextConfig(BertLayers):
    """configuration_blip.py (BlipTextConfig) / modeling_blip_text.py (BlipTextLMHeadModel): BERT's embeddings (word
    and position tables, a LayerNorm; no token types) and post-LN layers under bert., each with a cross-attention
    (crossattention.: key and value read encoder_hidden_size, the vision tower's width, which BlipConfig sets) when
    is_decoder (default true), no pooler, and BERT's masked-LM head (cls.predictions: transform, decoder tied to the
    word table, bias)."""

    class_prefix = "BlipText"
    base_model_prefix = "bert"
    classes = frozenset({"LMHeadModel"})
    bert_heads: ClassVar[dict[str, tuple[bool, bool, bool, int | str | None]]] = {
        "LMHeadModel": (False, True, False, None)
    }
    labelled_classes: ClassVar[frozenset[str]] = frozenset()
    informational_fields = frozenset({"pad_token_id", "projection_dim"})

    encoder_hidden_size: Width
    projection_dim: Width
    is_decoder: Flag

    def cross_attends(self) -> bool:
        return self.is_decoder

    def encoder_layer(self) -> Layer:
        """BERT's post-LN layer; the cross-attention's key and value read encoder_hidden_size."""
        layer = super().encoder_layer()
        if layer.cross_attention is None:
            return layer
        return replace(layer, cross_attention=replace(layer.cross_attention, kv_input_size=self.encoder_hidden_size))


@family("blip", transformers="BlipConfig", architecture="BLIP", model_class="BlipForConditionalGeneration")
class BlipConfig(MultimodalConfig):
    """configuration_blip.py (BlipConfig) / modeling_blip.py (BlipForConditionalGeneration): the vision model
    (vision_model.) and the text decoder (text_decoder.: BlipTextLMHeadModel), whose every layer cross-attends to the
    vision model's output: an image's class token and patches, (image_size / patch_size)² + 1 keys whatever the
    context (BlipConfig sets the decoder's encoder_hidden_size to the tower's width). The image reaches the text as
    those keys, not as tokens: no image rule (flops with an `image` refuses); a text token's FLOPs count the cross-attention
    over one image's keys. tie_word_embeddings (default true) ties the decoder's head to its word table."""

    text_model_type = "blip_text_model"
    vision_model_type = "blip_vision_model"
    vision_prefix = "vision_model."
    informational_fields = frozenset({"projection_dim", "image_text_hidden_size", "logit_scale_init_value"})

    projection_dim: Width
    image_text_hidden_size: Width

    def model_class(self) -> str:
        """BlipForConditionalGeneration; a config naming another BLIP class (question answering, retrieval: other
        modules) is counted as it, with a note."""
        return self.default_model_class

    def image_input(self, tower: Tower) -> ImageInput | None:
        return None

    def notes(self) -> list[str]:
        vision = self.vision
        renamed = (
            [f"{self.architectures[0]} is not a class ffncalc counts for BLIP; counted as {self.model_class()}."]
            if self.architectures and self.architectures[0] != self.model_class()
            else []
        )
        if not isinstance(vision, BlipVisionLayers):  # pragma: no cover - BlipConfig always has its tower
            return renamed
        return renamed + [
            f"blip is multimodal: the text decoder ({self.text.model_type}) and the vision tower ({vision.config_class})"
            f" are counted. Every decoder layer cross-attends to one image's {vision.positions:,} positions (the class "
            "token and the patches), counted per text token; the image reaches the text as those keys, not as tokens, "
            "so flops `image` has no rule for it"
        ]

    def defaults_used(self) -> list[DefaultUsed]:
        """The defaults taken, text_config.encoder_hidden_size as BlipConfig.__post_init__ sets it: the tower's width."""
        vision, field = self.vision, "text_config.encoder_hidden_size"
        if not isinstance(vision, BlipVisionLayers):  # pragma: no cover - BlipConfig always has its tower
            return super().defaults_used()
        rule = "BlipConfig sets it to vision_config.hidden_size"
        return [
            DefaultUsed(field=field, value=vision.hidden_size, rule=rule) if d.field == field else d
            for d in super().defaults_used()
        ]

    def wrapped_spec(self) -> ModelSpec:
        """The text decoder whole under text_decoder., its cross-attention reading one image's positions."""
        vision, text = self.vision, self.text
        if isinstance(vision, BlipVisionLayers) and isinstance(text, BlipTextConfig):  # BlipConfig.__post_init__
            text = text.model_copy(update={"encoder_hidden_size": vision.hidden_size})
        spec = replace(text.to_spec(), model_type=self.model_type, tie_word_embeddings=self.tied())
        if isinstance(vision, BlipVisionLayers) and any(layer.cross_attention for layer in spec.layers):
            spec = replace(spec, cross_attention_keys=vision.positions)
        return self.whole(nest(spec, "text_decoder."))
