"""Vision encoders for retrieval (ModernVBERT, UltraVBERT): a SigLIP tower whose patches a pixel shuffle merges, a
connector into a masked-LM encoder built bare (AutoModel), and the wrapper's own prediction head and decoder."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from ..results import DefaultUsed
from ..schema import HFConfig, Name, Width
from ..spec import Extra, ImageInput, Linear, ModelSpec, Norm
from ..values import replace
from .multimodal import MultimodalConfig, nest
from .registry import family
from .towers import Tower, projector_module

# Each class: (the masked-LM head, a classifier num_labels wide).
VBERT_HEADS: dict[str, tuple[bool, bool]] = {
    "Model": (False, False),
    "ForMaskedLM": (True, False),
    "ForSequenceClassification": (False, True),
    "ForTokenClassification": (False, True),
}


class _VBertConfig(MultimodalConfig):
    """What ModernVBERT and UltraVBERT share: ``{prefix}Model`` holds the tower (model.vision_model.), the connector
    (model.connector.modality_projection: vision hidden · pixel_shuffle_factor² → text hidden, no bias) and the
    encoder built by AutoModel from text_config, its bare model whatever text_config's architectures say
    (model.text_model.); the classes put a head of their own on it. An image is resized to the tower's image_size and
    pixel_shuffle_factor × pixel_shuffle_factor patches become one token. The top-level tie_word_embeddings (default
    false) ties the decoder to the token table."""

    class_prefix: ClassVar[str] = ""
    default_model_class = ""
    language_model_prefix = "model.text_model."
    lm_head_name = "lm_head"
    vision_model_type = "siglip_vision_model"
    vision_prefix = "model.vision_model."
    read_beyond = {"num_labels": "PreTrainedConfig turns it into id2label"}
    #: Where a checkpoint keeps the masked LM's prediction head and its decoder.
    projection_head: ClassVar[str] = "projection_head"
    decoder_name: ClassVar[str] = "lm_head"

    pixel_shuffle_factor: Width
    id2label: dict[str, Name] | None
    num_labels: int | None = Field(None, strict=True, ge=0, le=1 << 20)

    def model_class(self) -> str:
        named = (self.architectures or [""])[0]
        return named if named.removeprefix(self.class_prefix) in VBERT_HEADS else self.default_model_class

    def head_class(self) -> str:
        return self.model_class().removeprefix(self.class_prefix)

    def defaults_used(self) -> list[DefaultUsed]:
        labelled = VBERT_HEADS[self.head_class()][1] and self.id2label is None
        skipped = {"id2label"} | (set() if labelled else {"num_labels"})
        return [default for default in super().defaults_used() if default.field not in skipped]

    def labels(self) -> int:
        """The classifier's width: len(id2label), or num_labels, or 2 (PreTrainedConfig's default)."""
        if self.id2label is not None:
            return len(self.id2label)
        return self.num_labels if self.num_labels is not None else 2

    def bare_text(self) -> HFConfig:
        """The encoder as AutoModel builds it: its family's bare model."""
        prefix = getattr(self.text, "class_prefix", "")
        return self.text.model_copy(update={"architectures": [f"{prefix}Model"]})

    def image_input(self, tower: Tower) -> ImageInput | None:
        return None if tower.image is None else replace(tower.image, merge=self.pixel_shuffle_factor)

    def projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        merged = tower.hidden_size * self.pixel_shuffle_factor**2
        return (projector_module("model.connector.modality_projection", Linear(merged, text_hidden)),)

    def prediction_head(self, module: str, hidden: int) -> list[Extra]:
        """The head between the encoder and the decoder (or the classifier) under MODULE."""
        return []

    def decoder_bias(self) -> bool:
        return False

    def wrapped_spec(self) -> ModelSpec:
        text = self.bare_text()
        spec = nest(replace(text.to_spec(), model_type=self.model_type), self.language_model_prefix)
        mlm, classifier = VBERT_HEADS[self.head_class()]
        hidden = spec.hidden_size
        extras: list[Extra] = []
        if mlm:
            extras += self.prediction_head(self.projection_head, hidden)
        if classifier:
            extras += self.prediction_head("head", hidden)
            extras.append(Extra("other", "classifier", Linear(hidden, self.labels(), bias=True), "not_generating"))
        spec = replace(
            spec,
            names=replace(spec.names, lm_head=self.decoder_name, lm_head_bias=""),
            tie_word_embeddings=self.tied(),
            lm_head=mlm,
            lm_head_bias=mlm and self.decoder_bias(),
            extras=spec.extras + tuple(extras),
        )
        return self.whole(spec)


@family(
    "modernvbert", transformers="ModernVBertConfig", architecture="ModernVBERT", model_class="ModernVBertForMaskedLM"
)
class ModernVBertConfig(_VBertConfig):
    """configuration_modernvbert.py / modeling_modernvbert.py (ModernVBERT/modernvbert): SigLIP's tower (its
    attention-pooling head too, by SiglipVisionConfig's default), the connector and a ModernBERT encoder. Heads:
    ModernVBertPredictionHead (dense, biased by the text model's classifier_bias, and a LayerNorm, biased by its
    norm_bias) as projection_head before lm_head (hidden → vocab, biased by decoder_bias), or as head before a
    classifier (biased)."""

    class_prefix = "ModernVBert"
    text_model_type = "modernbert"
    text_defaults = {"model_type": "modernbert"}
    vision_defaults = {"model_type": "siglip_vision_model"}

    def prediction_head(self, module: str, hidden: int) -> list[Extra]:
        text = self.text
        dense = Linear(hidden, hidden, bias=getattr(text, "classifier_bias", False))
        norm = Norm("layernorm", hidden, bias=getattr(text, "norm_bias", False))
        return [Extra("other", f"{module}.dense", dense), Extra("norm", f"{module}.norm", norm)]

    def decoder_bias(self) -> bool:
        return bool(getattr(self.text, "decoder_bias", True))


@family("ultravbert", transformers="UltraVBertConfig", architecture="UltraVBERT", model_class="UltraVBertForMaskedLM")
class UltraVBertConfig(_VBertConfig):
    """configuration_ultravbert.py / modeling_ultravbert.py: SigLIP's tower without its pooling head (vision_use_head
    false in UltraVBertConfig's default tower), the connector followed by an RMSNorm of the text width (norm) and an
    UltraBERT encoder. Heads: UltraVBertPredictionHead (linear1 hidden → prediction_head_size, linear2 back, no
    biases) as projection_head before lm_head (no bias), stored as head and head.decoder; the classifiers have none
    (nn.Identity) before a classifier (biased)."""

    class_prefix = "UltraVBert"
    text_model_type = "ultrabert"
    text_defaults = {"model_type": "ultrabert"}
    vision_defaults = {"model_type": "siglip_vision_model", "vision_use_head": False}
    # named as checkpoints store them: transformers 5.24 renames head.decoder to lm_head and head to projection_head
    # on load (conversion_mapping.py, "UltraVBertForMaskedLM"), and back when it saves
    projection_head = "head"
    decoder_name = "head.decoder"

    def projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        norm = projector_module("model.connector.norm", Norm("rmsnorm", text_hidden))
        return (*super().projector(tower, text_hidden), norm)

    def prediction_head(self, module: str, hidden: int) -> list[Extra]:
        if module != self.projection_head or not VBERT_HEADS[self.head_class()][0]:  # the classifiers' head: none
            return []
        width = getattr(self.text, "prediction_head_size", hidden)
        return [
            Extra("other", f"{module}.linear1", Linear(hidden, width)),
            Extra("other", f"{module}.linear2", Linear(width, hidden)),
        ]
