"""Multimodal wrappers: a language model nested in ``text_config``, read with its own family's adapter,
a vision tower in ``vision_config`` and an audio tower in ``audio_config``, each read with a tower adapter
(``families/vision.py``, ``families/audio.py``).

The wrapper's top-level fields count where transformers reads them: ``tie_word_embeddings``
(the wrapper class's default when the key is absent), the dtype, and what shapes its projector. A
checkpoint of the wrapper keeps the language model under its own prefix (``language_model.model.``
for the LLaVA-style layout of Gemma 3, Mistral 3 and Llama 4) and each tower under another. ffncalc counts
what an image costs (``flops `image```), and what an audio clip costs (``flops `audio```) where the audio tower
reads fixed windows (Whisper's).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cached_property
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import Field

from ..errors import InvalidConfigError
from ..results import DefaultUsed
from ..schema import METADATA_FIELDS, Flag, HFConfig, read_block, read_quantization
from ..spec import (
    AudioInput,
    CheckpointExtra,
    Extra,
    ImageInput,
    Layer,
    ModelNames,
    ModelSpec,
    Names,
    StoredTensor,
)
from ..values import replace
from .towers import Tower, TowerConfig

if TYPE_CHECKING:
    from ..quantization import Block


class MultimodalLayers(HFConfig):
    """A wrapper: ``text_config`` holds the language model; each wrapper names its text model_type and layout. This
    base declares neither vision_config nor tie_word_embeddings, as an audio-language model's configuration class
    (Voxtral's, Qwen2-Audio's) has neither: its head is tied by ``tied()`` (never, here)."""

    #: The language model's model_type when ``text_config`` names none.
    text_model_type: ClassVar[str] = ""
    #: The language model when ``text_config`` is absent (the wrapper's sub_configs_defaults init_kwargs).
    text_defaults: ClassVar[dict[str, Any]] = {}
    #: Where the checkpoint keeps the language model: its prefix replaces the text model's "model.".
    language_model_prefix: ClassVar[str] = "language_model.model."
    lm_head_name: ClassVar[str] = "language_model.lm_head"
    #: Whether a given text_config is read over text_defaults (VoxtralConfig.__post_init__ merges them); else alone.
    text_defaults_under_given: ClassVar[bool] = False
    #: Starts of names renamed once under that prefix, (old, new): Kimi-K2.5 saves its layers as blocks.
    language_model_renames: ClassVar[tuple[tuple[str, str], ...]] = ()
    #: Whether the language model's own tie_word_embeddings decides tying (transformers builds it whole from
    #: text_config, as BLIP-2 does), not a flag of the wrapper's.
    text_ties: ClassVar[bool] = False

    #: The vision tower's model_type when ``vision_config`` names none of the known towers ("": none counted yet).
    vision_model_type: ClassVar[str] = ""
    #: The tower when ``vision_config`` is absent (the wrapper's sub_configs_defaults init_kwargs).
    vision_defaults: ClassVar[dict[str, Any]] = {}
    #: Where the checkpoint keeps the tower's modules.
    vision_prefix: ClassVar[str] = "vision_tower."
    #: Whether a config without vision_config (or audio_config) gets the wrapper's default tower (False: optional).
    tower_when_absent: ClassVar[bool] = True
    #: The audio tower's model_type, its defaults and its prefix, as for the vision tower ("": the wrapper has none).
    #: A wrapper with an audio tower declares the audio_config field.
    audio_model_type: ClassVar[str] = ""
    audio_defaults: ClassVar[dict[str, Any]] = {}
    audio_prefix: ClassVar[str] = "audio_tower."
    #: Tower fields that, absent, mean no such tower although tower_when_absent gives the others their defaults
    #: (a sub_configs_defaults entry marked optional).
    optional_towers: ClassVar[frozenset[str]] = frozenset()

    #: Classes in ``architectures`` for which transformers builds the language model alone from this config
    #: (AutoModelForCausalLM takes its text config): no towers, the text model's own layout and tying.
    text_only_classes: ClassVar[frozenset[str]] = frozenset()

    text_config: dict[str, Any] | None = Field(None)

    def tied(self) -> bool:
        """Whether the output head is the token table (no: a wrapper without tie_word_embeddings ties nothing)."""
        return False

    @property
    def text_only(self) -> bool:
        """Whether the class counted is the language model alone (architectures[0] in text_only_classes)."""
        return self.model_class() in self.text_only_classes

    @cached_property
    def text(self) -> HFConfig:
        """The language model's config, validated by its own family's adapter."""
        from . import adapter_for

        if self.text_config is None:
            raw = dict(self.text_defaults)
        else:
            raw = (
                {**self.text_defaults, **self.text_config} if self.text_defaults_under_given else dict(self.text_config)
            )
        model_type = raw.get("model_type") or self.text_model_type
        if not isinstance(model_type, str):
            raise InvalidConfigError("text_config.model_type: must be a string")
        adapter = adapter_for(model_type)
        if adapter is None:
            raise InvalidConfigError(f"text_config.model_type: {model_type!r} is not a language model ffncalc knows")
        return read_block(adapter, {**raw, "model_type": model_type}, "text_config")

    def tower_blocks(self) -> tuple[tuple[str, str, dict[str, Any]], ...]:
        """Each block that configures a tower: (its field, the tower's model_type when the block names none of the
        known towers, the block when the config has none). A wrapper with a second vision tower adds its block."""
        return (
            ("vision_config", self.vision_model_type, self.vision_defaults),
            ("audio_config", self.audio_model_type, self.audio_defaults),
        )

    @cached_property
    def towers(self) -> dict[str, TowerConfig]:
        """Each tower ffncalc counts, by the field that configures it, validated by its tower adapter."""
        found = {}
        for field, own_type, defaults in self.tower_blocks():
            tower = self._tower(field, own_type, defaults)
            if tower is not None and tower.uncounted() is None:
                found[field] = tower
        return found

    @property
    def vision(self) -> TowerConfig | None:
        """The vision tower's config; None without one, or where ffncalc counts none."""
        return self.towers.get("vision_config")

    @property
    def audio(self) -> TowerConfig | None:
        """The audio tower's config; None without one, or where ffncalc counts none."""
        return self.towers.get("audio_config")

    def _present(self, field: str) -> bool:
        """Whether the model has the tower FIELD configures: given, or the wrapper's default where it has one."""
        given = getattr(self, field, None) is not None
        defaulted = self.tower_when_absent and field not in self.optional_towers
        return field in type(self).model_fields and (given or defaulted)

    def _tower(self, field: str, own_type: str, defaults: dict[str, Any]) -> TowerConfig | None:
        """The tower FIELD holds (absent or null: the wrapper's default tower, or none where it is optional)."""
        from . import adapter_for
        from .registry import lookup

        given = getattr(self, field, None)
        if not own_type or not self._present(field):
            return None
        raw = dict(given) if given is not None else dict(defaults)
        named = raw.get("model_type")
        # transformers maps a tower config named after the wrapper (qwen3_vl) to the wrapper's own tower.
        model_type = named if isinstance(named, str) and lookup(named, "towers") is not None else own_type
        adapter = adapter_for(model_type, "towers")
        assert adapter is not None and issubclass(adapter, TowerConfig), model_type
        return read_block(adapter, {**raw, "model_type": model_type}, field)

    def uncounted_towers(self) -> list[str]:
        """The towers this model has that ffncalc does not count, each with the reason."""
        found = []
        for field, own_type, defaults in self.tower_blocks():
            if not self._present(field):
                continue
            tower = self._tower(field, own_type, defaults)
            reason = "not counted yet" if tower is None else tower.uncounted()
            if reason is not None:
                found.append(f"its {tower_kind(field)} tower: {reason}")
        return found

    def image_input(self, tower: Tower) -> ImageInput | None:
        """How an image becomes patches and tokens: the tower's rule, unless the wrapper's projector merges them."""
        return tower.image

    def projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        """The modules that carry the tower's features into the language model's TEXT_HIDDEN width (none by default)."""
        return ()

    def audio_projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        """The modules that carry the audio tower's features into the language model (none by default)."""
        return ()

    def audio_input(self, tower: Tower) -> AudioInput | None:
        """How a clip becomes windows, positions and tokens: the tower's rule, unless the wrapper's projector
        regroups its positions."""
        return tower.audio

    def max_context(self) -> int | None:
        return self.text.max_context()

    def nested_configs(self) -> dict[str, HFConfig]:
        return {"text_config": self.text} | self.towers

    @cached_property
    def quantization(self) -> Block | None:
        """The wrapper's quantization_config, or its language model's (Kimi-K2.5's int4 release nests it there)."""
        own = read_quantization(self.quantization_config, "quantization_config")
        nested = read_quantization(self.text.quantization_config, "text_config.quantization_config")
        return own if own is not None else nested

    def defaults_used(self) -> list[DefaultUsed]:
        """The wrapper's own defaults, then each nested block's: what the wrapper fills in (its model_type, and the
        whole default block when the config has none), then what that block's own adapter fills in."""
        own = super().defaults_used()
        nested = self._block_defaults("text_config", self.text, self.text_defaults) + [
            replace_default(default, "text_config." + default.field)
            for default in self.text.defaults_used()
            if default.field != "tie_word_embeddings" or self.text_ties  # else the wrapper's own flag decides
        ]
        for field, _, defaults in self.tower_blocks():
            tower = self.towers.get(field)
            if tower is not None and not self.text_only:
                nested += self._block_defaults(field, tower, defaults)
                nested += [replace_default(default, f"{field}.{default.field}") for default in tower.defaults_used()]
        blocks = {"text_config"} | {field for field, _, _ in self.tower_blocks()}
        return [d for d in own if d.field not in blocks] + nested

    def _block_defaults(self, field: str, block: HFConfig, defaults: dict[str, Any]) -> list[DefaultUsed]:
        """What the wrapper's configuration class fills into FIELD when the config has no such block: the
        model_type it reads the block as, and each field of its default block (sub_configs_defaults). The block's
        adapter sees those as given, so its own defaults_used cannot list them. (A block built from the config's
        own top-level keys, as Qwen2.5-VL's flat configs are read, is not absent.)"""
        if getattr(self, field, None) is not None:
            return []
        rule = f"{self.config_class}'s default {field}"
        skip = METADATA_FIELDS | block.informational_fields
        return [DefaultUsed(field=f"{field}.model_type", value=block.model_type, rule=rule)] + [
            DefaultUsed(field=f"{field}.{key}", value=value, rule=rule)
            for key, value in defaults.items()
            if key not in skip
        ]

    def notes(self) -> list[str]:
        if self.text_only:
            return [
                f"{self.model_class()} is the language model alone: transformers builds {self.text.model_type} from "
                "text_config, without the towers"
            ] + self.text.notes()
        towers = [f"the {tower_kind(field)} tower ({tower.config_class})" for field, tower in self.towers.items()]
        uncounted = self.uncounted_towers()
        if not towers:
            counted = f"{self.model_type} is multimodal: its language model ({self.text.model_type}) is counted"
            if not uncounted:  # its towers are optional, and this config has none
                return [counted + "; this config has no vision or audio tower"] + self.text.notes()
            return [f"{counted}, not its towers nor their projectors ({'; '.join(uncounted)})"] + self.text.notes()
        counted = (
            f"{self.model_type} is multimodal: the language model ({self.text.model_type}), {', '.join(towers)} and "
            f"the projector{'s' if len(towers) > 1 else ''} are counted; a text token runs the language model only"
        )
        notes = [counted]
        if uncounted:
            notes.append(f"not counted, nor its projector: {'; '.join(uncounted)}")
        if self.audio is not None and self.audio_input(self.audio.tower(self.audio_prefix)) is None:
            notes.append(
                "audio FLOPs are not counted: ffncalc estimates what a clip costs (`audio`) only for towers that read "
                "fixed windows of audio, as Whisper's"
            )
        return notes + self.text.notes()

    def warnings(self) -> list[str]:
        return self.text.warnings()

    def to_spec(self) -> ModelSpec:
        """The whole model, or the language model alone where architectures[0] names a text-only class."""
        if self.text_only:
            return replace(self.text.to_spec(), model_type=self.model_type)
        return self.wrapped_spec()

    def wrapped_spec(self) -> ModelSpec:
        """The language model relocated under the wrapper's prefix, with the towers and projectors."""
        spec = self.text.to_spec()
        spec = relocate(
            replace(spec, model_type=self.model_type, tie_word_embeddings=self.tied()),
            self.language_model_prefix,
            self.lm_head_name,
            self.language_model_renames,
        )
        return self.whole(spec)

    def whole(self, spec: ModelSpec) -> ModelSpec:
        """SPEC (the relocated language model) with what the wrapper adds: each tower's layers and modules, its
        projector, and the output head a checkpoint written by transformers 4 may store although the model ties it."""
        if (
            spec.tie_word_embeddings
            and self.written_before(5, 0)
            and getattr(self.text, "tie_word_embeddings", None) is False
        ):
            head = StoredTensor(spec.names.lm_head + ".weight", (spec.vocab_size, spec.hidden_size))
            reason = (
                f"written by transformers {self.transformers_version}, which took tie_word_embeddings from text_config "
                "(false): the checkpoint stores its own output head; transformers 5 ties the head to the embeddings, "
                "as the wrapper's tie_word_embeddings (default true) says, and does not use it"
            )
            spec = replace(
                spec,
                checkpoint_extras=spec.checkpoint_extras + (CheckpointExtra("untied output head", reason, (head,)),),
            )
        text_hidden = spec.hidden_size
        if self.vision is not None:
            tower = self.vision.tower(self.vision_prefix)
            image = self.image_input(tower) if tower.image is not None else None  # a convolutional tower: no rule
            spec = with_tower(spec, tower, self.projector(tower, text_hidden), image=image)
        if self.audio is not None:
            tower = self.audio.tower(self.audio_prefix)
            spec = with_tower(spec, tower, self.audio_projector(tower, text_hidden), image=spec.image)
            spec = replace(spec, audio=self.audio_input(tower))
        return spec


class MultimodalConfig(MultimodalLayers):
    """A wrapper with a vision tower (vision_config) whose head is tied by its tie_word_embeddings flag."""

    vision_config: dict[str, Any] | None
    tie_word_embeddings: Flag

    def tied(self) -> bool:
        return self.tie_word_embeddings


def with_tower(spec: ModelSpec, tower: Tower, projector: tuple[Extra, ...], image: ImageInput | None) -> ModelSpec:
    """SPEC with TOWER's layers, modules and saved buffers, and PROJECTOR's modules."""
    return replace(
        spec,
        layers=spec.layers + tower.layers,
        extras=spec.extras + tower.extras + projector,
        checkpoint_extras=spec.checkpoint_extras + tower.checkpoint_extras,
        image=image,
    )


def tower_kind(field: str) -> str:
    """What a tower block's field calls its tower: "vision_config" → "vision", "high_res_vision_config" → "high-res
    vision"."""
    return field.removesuffix("_config").replace("high_res_", "high-res ").replace("_", " ")


def replace_default(default: DefaultUsed, field: str) -> DefaultUsed:
    return replace(default, field=field)


def relocate(spec: ModelSpec, prefix: str, lm_head: str, renames: tuple[tuple[str, str], ...] = ()) -> ModelSpec:
    """The same model stored under another prefix: "model." becomes PREFIX in every name, then a name that starts
    with one of RENAMES' old starts takes its new one."""

    def move(name: str) -> str:
        name = prefix + name.removeprefix("model.") if name.startswith("model.") else name
        for old, new in renames:
            if name.startswith(old):
                return new + name.removeprefix(old)
        return name

    return moved(spec, move, lm_head)


def nest(spec: ModelSpec, prefix: str) -> ModelSpec:
    """The same model kept inside another as its module PREFIX ("language_model."): PREFIX before every name, the
    head's too (BLIP-2 holds a whole OPTForCausalLM or T5ForConditionalGeneration)."""
    return moved(spec, lambda name: prefix + name if name else name, prefix + spec.names.lm_head)


def moved(spec: ModelSpec, move: Callable[[str], str], lm_head: str) -> ModelSpec:
    """SPEC with every stored name passed through MOVE, and its head stored as LM_HEAD."""
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
            lm_head_bias=move(names.lm_head_bias),
            embedding_parameter=names.embedding_parameter,
        ),
        extras=tuple(replace(extra, name=move(extra.name)) for extra in spec.extras),
        checkpoint_extras=tuple(_move_extra(extra, move) for extra in spec.checkpoint_extras),
    )


def _move_extra(extra: CheckpointExtra, move: Callable[[str], str]) -> CheckpointExtra:
    return replace(
        extra,
        tensors=tuple(StoredTensor(move(t.name), t.shape) for t in extra.tensors),
        layers=tuple((index, replace(layer, name=move(layer.name))) for index, layer in extra.layers),
    )


#: A checkpoint's renamings of a layer's modules, as (pattern over ".module.", its saved spelling), applied in turn.
Renamings = tuple[tuple[str, str], ...]


def saved_module(module: str, renamings: Renamings) -> str:
    """MODULE (relative to its layer) as a checkpoint that RENAMINGS describe spells it."""
    spelled = f".{module}."
    for pattern, saved in renamings:
        spelled = re.sub(pattern, saved, spelled)
    return spelled[1:-1]


def saved_layer(layer: Layer, renamings: Renamings) -> Layer:
    """LAYER with its attention's and FFN's modules and its norms as a checkpoint that RENAMINGS describe spells
    them (conversion_mapping.py's renamings of a family, reverted)."""

    def saved(block_names: Names) -> Names:
        modules = tuple((part, saved_module(module, renamings)) for part, module in block_names.modules)
        return replace(block_names, modules=modules)

    attention, ffn = layer.attention, layer.ffn
    return replace(
        layer,
        attention=None if attention is None else replace(attention, names=saved(attention.names)),
        ffn=None if ffn is None else replace(ffn, names=saved(ffn.names)),
        norms=tuple((saved_module(name, renamings), norm) for name, norm in layer.norms),
    )


def saved_spec(spec: ModelSpec, renamings: Renamings) -> ModelSpec:
    """SPEC with every layer as saved_layer spells it (a layer shared by several indices renamed once)."""
    saved: dict[Layer, Layer] = {}
    return replace(spec, layers=tuple(saved.setdefault(layer, saved_layer(layer, renamings)) for layer in spec.layers))
