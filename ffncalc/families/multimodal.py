"""Multimodal wrappers: a language model nested in ``text_config``, read with its own family's adapter.

The wrapper's top-level fields count where transformers reads them: ``tie_word_embeddings``
(the wrapper class's default when the key is absent) and the dtype. A checkpoint of the
wrapper keeps the language model under its own prefix (``language_model.model.`` for the
LLaVA-style layout of Gemma 3, Mistral 3 and Llama 4).
"""

from __future__ import annotations

from dataclasses import replace
from functools import cached_property
from typing import Any, ClassVar

from pydantic import Field, ValidationError

from ..errors import InvalidConfigError
from ..results import DefaultUsed
from ..schema import Flag, HFConfig, describe_validation_error
from ..spec import CheckpointExtra, Layer, ModelNames, ModelSpec, StoredTensor


class MultimodalConfig(HFConfig):
    """A wrapper: ``text_config`` holds the language model; each wrapper names its text model_type and layout."""

    #: The language model's model_type when ``text_config`` names none.
    text_model_type: ClassVar[str] = ""
    #: The language model when ``text_config`` is absent (the wrapper's sub_configs_defaults init_kwargs).
    text_defaults: ClassVar[dict[str, Any]] = {}
    #: Where the checkpoint keeps the language model: its prefix replaces the text model's "model.".
    language_model_prefix: ClassVar[str] = "language_model.model."
    lm_head_name: ClassVar[str] = "language_model.lm_head"

    text_config: dict[str, Any] | None = Field(None)
    tie_word_embeddings: Flag = True

    @cached_property
    def text(self) -> HFConfig:
        """The language model's config, validated by its own family's adapter."""
        from . import adapter_for

        raw = dict(self.text_config) if self.text_config is not None else dict(self.text_defaults)
        model_type = raw.get("model_type") or self.text_model_type
        if not isinstance(model_type, str):
            raise InvalidConfigError("text_config.model_type: must be a string")
        adapter = adapter_for(model_type)
        if adapter is None:
            raise InvalidConfigError(f"text_config.model_type: {model_type!r} is not a language model ffncalc knows")
        try:
            return adapter.model_validate({**raw, "model_type": model_type})
        except ValidationError as error:
            raise describe_validation_error(error, "", prefix="text_config") from None

    def max_context(self) -> int | None:
        return self.text.max_context()

    def validate_nested(self) -> None:
        self.text  # noqa: B018 - validates text_config, raising a field-named error

    def defaults_used(self) -> list[DefaultUsed]:
        own = super().defaults_used()
        nested = [
            replace_default(default, "text_config." + default.field)
            for default in self.text.defaults_used()
            if default.field != "tie_word_embeddings"  # the wrapper's own flag decides
        ]
        return [d for d in own if d.field != "text_config"] + nested

    def notes(self) -> list[str]:
        counted = f"{self.model_type} is multimodal: its language model ({self.text.model_type}) is counted; "
        return [counted + "the vision tower and projector are not counted yet."] + self.text.notes()

    def warnings(self) -> list[str]:
        return self.text.warnings()

    def to_spec(self) -> ModelSpec:
        spec = self.text.to_spec()
        return relocate(
            replace(spec, model_type=self.model_type, tie_word_embeddings=self.tie_word_embeddings),
            self.language_model_prefix,
            self.lm_head_name,
        )


def replace_default(default: DefaultUsed, field: str) -> DefaultUsed:
    return default.model_copy(update={"field": field})


def relocate(spec: ModelSpec, prefix: str, lm_head: str) -> ModelSpec:
    """The same model stored under another prefix: "model." becomes PREFIX in every name."""

    def move(name: str) -> str:
        return prefix + name.removeprefix("model.") if name.startswith("model.") else name

    layers: dict[Layer, Layer] = {}
    for layer in spec.layers:
        layers.setdefault(layer, replace(layer, name=move(layer.name)))
    names = spec.names
    return replace(
        spec,
        layers=tuple(layers[layer] for layer in spec.layers),
        names=ModelNames(
            embed_tokens=move(names.embed_tokens),
            final_norm=move(names.final_norm),
            lm_head=lm_head,
            position_embeddings=move(names.position_embeddings),
            base_model_prefix=names.base_model_prefix,
        ),
        checkpoint_extras=tuple(_move_extra(extra, move) for extra in spec.checkpoint_extras),
    )


def _move_extra(extra: CheckpointExtra, move) -> CheckpointExtra:
    return replace(
        extra,
        tensors=tuple(StoredTensor(move(t.name), t.shape) for t in extra.tensors),
        layers=tuple((index, replace(layer, name=move(layer.name))) for index, layer in extra.layers),
    )
