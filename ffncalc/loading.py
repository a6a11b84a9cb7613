"""Loading a model: its config.json found and read (``source``), changed by any overrides (``overrides``),
validated by its family's adapter (``families``) and turned into a spec, with what to say about it."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from .overrides import Override, parse_override
from .results import ModelInfo
from .source import RawConfig, load_raw_config
from .values import Value

if TYPE_CHECKING:
    from .schema import HFConfig
    from .spec import ModelSpec


class LoadedModel(Value):
    """A model's validated config and spec, with the name and source it was loaded under."""

    name: str
    source: str  # "bundled", "preset", "file" or "hub"
    config: HFConfig
    spec: ModelSpec
    info: ModelInfo
    raw: RawConfig  # the config as read, before any override


CUSTOM_CODE_NOTE = "The repo declares custom code (auto_map); ffncalc read the config as data and ran none of it."


def load_config(
    model: str,
    revision: str | None = None,
    token: str | None = None,
    as_type: str | None = None,
    overrides: Iterable[str | Override] = (),
) -> LoadedModel:
    """Find MODEL's config.json (path, folder, bundled config or Hub id) and turn it into a spec.

    AS_TYPE counts a config with another family's rules (forks, renamed custom code); the info says so.
    OVERRIDES ("intermediate_size=16384", or Override values) change fields of the config before it is read.
    """
    changes = tuple(item if isinstance(item, Override) else parse_override(item) for item in overrides)
    return loaded_from(load_raw_config(model, revision=revision, token=token), as_type, changes)


def loaded_from(raw: RawConfig, as_type: str | None = None, overrides: tuple[Override, ...] = ()) -> LoadedModel:
    """A config.json read from its source, with OVERRIDES applied, validated and turned into a spec."""
    from .families import parse_config
    from .overrides import apply_overrides, check_read, follow_notes, shadowing_keys

    data = apply_overrides(raw.data, overrides) if overrides else raw.data
    config = parse_config(data, raw.name, as_type=as_type)
    if overrides and (unshadowed := shadowing_keys(config, data, overrides)) is not None:
        data = unshadowed
        config = parse_config(data, raw.name, as_type=as_type)
    block = config.quantization
    quantization_notes, quantization_warnings = _quantization_words(block)
    notes = list(config.notes()) + quantization_notes
    if overrides:
        check_read(config, overrides)
        notes = follow_notes(config, overrides, raw.data) + notes
    if raw.note:
        notes.insert(0, raw.note)
    if "auto_map" in raw.data:
        notes.append(CUSTOM_CODE_NOTE)
    counted_as = None
    warnings = config.warnings() + quantization_warnings
    if as_type and as_type != raw.data.get("model_type"):
        counted_as = as_type
        note, assumed = counted_as_report(config, data, as_type)
        notes.insert(0, note)
        warnings = assumed + warnings
    info = ModelInfo(
        model=raw.name,
        source=raw.source,
        model_type=str(data.get("model_type")),
        architecture=config.family_name(),
        model_class=config.model_class() or None,
        counted_as=counted_as,
        overrides=[str(override) for override in overrides],
        defaults_used=config.defaults_used(),
        notes=notes,
        warnings=warnings,
    )
    return LoadedModel(name=raw.name, source=raw.source, config=config, spec=config.to_spec(), info=info, raw=raw)


def counted_as_report(config: HFConfig, data: dict[str, object], as_type: str) -> tuple[str, list[str]]:
    """`as_type`: a note naming the config's keys the family's rules read and those they ignore, and a warning when the
    family's defaults stand in for sizes the config does not give (a config of another lineage, such as a Mamba
    config counted as llama, or a wrapper counted as its own text model)."""
    from .overrides import readable_keys
    from .schema import METADATA_FIELDS

    readable = readable_keys(config)
    keys = [key for key in data if key not in METADATA_FIELDS]
    read = [key for key in keys if key in readable]
    ignored = [key for key in keys if key not in readable]
    family = f"{as_type!r} ({config.config_class})"
    note = (
        f"model_type {data.get('model_type')!r} counted with the rules of {family} (`as_type`): they read "
        f"{_some(read)} of the config's keys and ignore {_some(ignored)}."
    )
    # Sizes taken from the family's defaults (not derived from the config's own fields by a rule).
    assumed = [
        default
        for default in config.defaults_used()
        if default.rule is None and isinstance(default.value, int) and not isinstance(default.value, bool)
    ]
    if not assumed:
        return note, []
    fields = ", ".join(default.field for default in assumed)
    values = ", ".join(f"{default.field} = {default.value}" for default in assumed)
    return note, [
        f"`as_type` {as_type}: the config does not give {fields}; {config.config_class}'s defaults were assumed "
        f"({values}), and {len(ignored)} of its keys are ignored: it may not be a {as_type} config at all"
    ]


def _some(keys: list[str], shown: int = 8) -> str:
    """'3 (a, b, c)', or the first SHOWN names and how many more; 'none' for no key."""
    if not keys:
        return "none"
    names = ", ".join(keys[:shown]) + (f" and {len(keys) - shown} more" if len(keys) > shown else "")
    return f"{len(keys)} ({names})"


def _quantization_words(block: Any) -> tuple[list[str], list[str]]:
    """The notes and warnings a quantization block calls for (none, and nothing imported, without one)."""
    if block is None:
        return [], []
    from .quantization import notes, warnings

    return notes(block), warnings(block)
