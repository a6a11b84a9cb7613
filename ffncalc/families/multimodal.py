"""Multimodal wrappers: a language model nested in ``text_config``, read with its own family's adapter,
and a vision tower in ``vision_config``, read with a tower adapter (``families/vision.py``).

The wrapper's top-level fields count where transformers reads them: ``tie_word_embeddings``
(the wrapper class's default when the key is absent), the dtype, and what shapes its projector. A
checkpoint of the wrapper keeps the language model under its own prefix (``language_model.model.``
for the LLaVA-style layout of Gemma 3, Mistral 3 and Llama 4) and the tower under another.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import Field, ValidationError

from ..errors import InvalidConfigError
from ..results import DefaultUsed
from ..schema import Flag, HFConfig, describe_validation_error
from ..spec import (
    CheckpointExtra,
    Extra,
    ImageInput,
    Layer,
    LearnedTensor,
    Linear,
    ModelNames,
    ModelSpec,
    Norm,
    PatchEmbedding,
    StoredTensor,
    Table,
)

if TYPE_CHECKING:
    from .vision import TowerConfig


@dataclass(frozen=True)
class Tower:
    """A vision tower's layers (stack "vision") and its modules outside them, named under the wrapper's prefix."""

    layers: tuple[Layer, ...]
    extras: tuple[Extra, ...]
    hidden_size: int  # the width of what it hands on (before any projector)
    image: ImageInput
    checkpoint_extras: tuple[CheckpointExtra, ...] = ()  # buffers its modules save


Module = Linear | Norm | Table | PatchEmbedding | LearnedTensor


def tower_module(name: str, module: Module, component: str = "vision", runs: str = "per_patch") -> Extra:
    """A module of a tower or projector outside its layers: it runs for each patch of an image, or for each token
    the image becomes (runs="per_image_token"), never for a text token."""
    return Extra(component, name, module, runs=runs)  # type: ignore[arg-type]


def projector_module(name: str, module: Module) -> Extra:
    """A module that carries the tower's merged features into the language model: once per image token."""
    return tower_module(name, module, "projector", "per_image_token")


class MultimodalConfig(HFConfig):
    """A wrapper: ``text_config`` holds the language model; each wrapper names its text model_type and layout."""

    #: The language model's model_type when ``text_config`` names none.
    text_model_type: ClassVar[str] = ""
    #: The language model when ``text_config`` is absent (the wrapper's sub_configs_defaults init_kwargs).
    text_defaults: ClassVar[dict[str, Any]] = {}
    #: Where the checkpoint keeps the language model: its prefix replaces the text model's "model.".
    language_model_prefix: ClassVar[str] = "language_model.model."
    lm_head_name: ClassVar[str] = "language_model.lm_head"

    #: The vision tower's model_type when ``vision_config`` names none of the known towers ("": none counted yet).
    vision_model_type: ClassVar[str] = ""
    #: The tower when ``vision_config`` is absent (the wrapper's sub_configs_defaults init_kwargs).
    vision_defaults: ClassVar[dict[str, Any]] = {}
    #: Where the checkpoint keeps the tower's modules.
    vision_prefix: ClassVar[str] = "vision_tower."
    #: Whether a config without vision_config gets the wrapper's default tower (False: the tower is optional).
    tower_when_absent: ClassVar[bool] = True

    text_config: dict[str, Any] | None = Field(None)
    vision_config: dict[str, Any] | None = Field(None)
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

    @cached_property
    def vision(self) -> TowerConfig | None:
        """The vision tower's config, validated by its tower adapter; None where ffncalc counts no tower yet."""
        from . import TOWERS, adapter_for
        from .vision import TowerConfig

        if not self.vision_model_type or (self.vision_config is None and not self.tower_when_absent):
            return None
        raw = dict(self.vision_config) if self.vision_config is not None else dict(self.vision_defaults)
        named = raw.get("model_type")
        # transformers maps a vision_config named after the wrapper (qwen3_vl) to the wrapper's own tower.
        model_type = named if isinstance(named, str) and named in TOWERS else self.vision_model_type
        adapter = adapter_for(model_type, TOWERS)
        assert adapter is not None and issubclass(adapter, TowerConfig), model_type
        try:
            return adapter.model_validate({**raw, "model_type": model_type})
        except ValidationError as error:
            raise describe_validation_error(error, "", prefix="vision_config") from None

    def image_input(self, tower: Tower) -> ImageInput:
        """How an image becomes patches and tokens: the tower's rule, unless the wrapper's projector merges them."""
        return tower.image

    def projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        """The modules that carry the tower's features into the language model's TEXT_HIDDEN width (none by default)."""
        return ()

    def max_context(self) -> int | None:
        return self.text.max_context()

    def validate_nested(self) -> None:
        self.text  # noqa: B018 - validates text_config, raising a field-named error
        self.vision  # noqa: B018 - and vision_config

    def defaults_used(self) -> list[DefaultUsed]:
        own = super().defaults_used()
        nested = [
            replace_default(default, "text_config." + default.field)
            for default in self.text.defaults_used()
            if default.field != "tie_word_embeddings"  # the wrapper's own flag decides
        ]
        if self.vision is not None:
            nested += [replace_default(default, "vision_config." + default.field) for default in self.vision.defaults_used()]
        return [d for d in own if d.field not in ("text_config", "vision_config")] + nested

    def notes(self) -> list[str]:
        if self.vision is None:
            counted = f"{self.model_type} is multimodal: its language model ({self.text.model_type}) is counted; "
            return [counted + "its vision tower and projector are not counted yet."] + self.text.notes()
        counted = (
            f"{self.model_type} is multimodal: the language model ({self.text.model_type}), the vision tower "
            f"({self.vision.config_class}) and the projector are counted; a text token runs the language model only"
        )
        return [counted] + self.text.notes()

    def warnings(self) -> list[str]:
        return self.text.warnings()

    def to_spec(self) -> ModelSpec:
        spec = self.text.to_spec()
        spec = relocate(
            replace(spec, model_type=self.model_type, tie_word_embeddings=self.tie_word_embeddings),
            self.language_model_prefix,
            self.lm_head_name,
        )
        return self.whole(spec)

    def whole(self, spec: ModelSpec) -> ModelSpec:
        """SPEC (the relocated language model) with what the wrapper adds: the vision tower's layers and modules, the
        projector, and the output head a checkpoint written by transformers 4 may store although the model ties it."""
        if spec.tie_word_embeddings and self.written_before(5, 0) and getattr(self.text, "tie_word_embeddings", None) is False:
            head = StoredTensor(spec.names.lm_head + ".weight", (spec.vocab_size, spec.hidden_size))
            reason = (
                f"written by transformers {self.transformers_version}, which took tie_word_embeddings from text_config "
                "(false): the checkpoint stores its own output head; transformers 5 ties the head to the embeddings, "
                "as the wrapper's tie_word_embeddings (default true) says, and does not use it"
            )
            spec = replace(spec, checkpoint_extras=spec.checkpoint_extras + (CheckpointExtra("untied output head", reason, (head,)),))
        if self.vision is None:
            return spec
        tower = self.vision.tower(self.vision_prefix)
        projector = self.projector(tower, spec.hidden_size)
        extras = spec.extras + tower.extras + projector
        saved = spec.checkpoint_extras + tower.checkpoint_extras
        return replace(
            spec, layers=spec.layers + tower.layers, extras=extras, checkpoint_extras=saved, image=self.image_input(tower)
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
        extras=tuple(replace(extra, name=move(extra.name)) for extra in spec.extras),
        checkpoint_extras=tuple(_move_extra(extra, move) for extra in spec.checkpoint_extras),
    )


def _move_extra(extra: CheckpointExtra, move) -> CheckpointExtra:
    return replace(
        extra,
        tensors=tuple(StoredTensor(move(t.name), t.shape) for t in extra.tensors),
        layers=tuple((index, replace(layer, name=move(layer.name))) for index, layer in extra.layers),
    )
