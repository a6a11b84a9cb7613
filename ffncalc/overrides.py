"""What if: config fields changed before counting (`sets`: KEY=VALUE) and swept over values (`sweeps`).

An override changes the config.json dict before the family reads it, so a changed config goes through the same
schema and family rules as a file would: a bad value gets the same error naming the field, and a field that is
derived from others (head_dim from hidden_size) follows them unless the config sets it. A key the family does not
read is refused, with the nearest fields it does read: a silently ignored "what if" would be a wrong answer.
"""

from __future__ import annotations

import copy
import difflib
import json
import math
import re
from typing import Any

from pydantic import BaseModel

from .errors import UsageError
from .schema import HFConfig
from .values import Value

KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,99}(\.[A-Za-z_][A-Za-z0-9_-]{0,99}){0,4}")
MAX_SWEEP_POINTS = 100_000  # a sweep is counted in one process; more points than this is a typo, not a study


class Override(Value):
    """One changed field: its dotted path into the config (text_config.num_hidden_layers) and its new value."""

    key: str
    value: Any

    @property
    def path(self) -> tuple[str, ...]:
        return tuple(self.key.split("."))

    def __str__(self) -> str:
        return f"{self.key}={json.dumps(self.value)}"


def parse_value(text: str) -> Any:
    """VALUE as JSON (16384, 1e-5, null, true, [..], {..}, "text"), else as a bare word (silu)."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def parse_override(text: str, option: str = "`sets`") -> Override:
    """KEY=VALUE → Override; the key is a field name, dotted into nested configs (text_config.hidden_size)."""
    key, equals, value = text.partition("=")
    key = key.strip()
    if not equals or not key:
        raise UsageError(f"{option} {text!r}: write KEY=VALUE, e.g. {option} intermediate_size=16384")
    if not KEY.fullmatch(key):
        raise UsageError(f"{option} {text!r}: {key!r} is not a config field name (letters, digits, _ and dots)")
    return Override(key, parse_value(value.strip()))


def apply_overrides(raw: dict[str, Any], overrides: tuple[Override, ...]) -> dict[str, Any]:
    """A copy of the config dict with each override written in (later ones win); nested blocks are made if absent."""
    changed = copy.deepcopy(raw)
    for override in overrides:
        *parents, leaf = override.path
        block = changed
        for depth, part in enumerate(parents):
            inner = block.get(part)
            if inner is None:
                inner = block[part] = {}
            if not isinstance(inner, dict):
                where = ".".join(override.path[: depth + 1])
                raise UsageError(
                    f"`sets` {override.key}: {where} is not a nested config in this model (it is {inner!r})"
                )
            block = inner
        block[leaf] = override.value
    return changed


def shadowing_keys(config: HFConfig, data: dict[str, Any], overrides: tuple[Override, ...]) -> dict[str, Any] | None:
    """DATA with each override also written under the other names its field has in the same block, or None when no
    override has one there.

    A field read under several names (bloom's num_hidden_layers is also n_layer; a vision tower's depth is also
    num_hidden_layers) takes the first the config holds: an override under another name than the config's own
    would be listed as applied and change nothing. Writing it under every name the block holds makes it change
    what the config's own key would, whichever the adapter prefers."""
    changed: dict[str, Any] | None = None
    for override in overrides:
        *parents, leaf = override.path
        model: BaseModel | None = config
        block: Any = data
        for part in parents:
            if model is None or not isinstance(block, dict):
                break
            readable = readable_keys(model)
            nested = model.nested_configs() if isinstance(model, HFConfig) else {}
            field = readable.get(part)
            inner = nested.get(field, getattr(model, field, None)) if field else None
            model = inner if isinstance(inner, BaseModel) else None
            block = block.get(part)
        if model is None or not isinstance(block, dict):
            continue
        readable = readable_keys(model)
        field = readable.get(leaf)
        others = [key for key in block if key != leaf and field is not None and readable.get(key) == field]
        if not others:
            continue
        if changed is None:
            changed = copy.deepcopy(data)
        target = changed
        for part in parents:
            target = target[part]
        for key in others:
            target[key] = override.value
    return changed


def check_read(config: HFConfig, overrides: tuple[Override, ...]) -> None:
    """Refuse an override of a key that the family does not read, naming the nearest ones it does."""
    for override in overrides:
        _check_path(config, override.path, override.key)


def readable_keys(model: BaseModel) -> dict[str, str]:
    """Every key MODEL's adapter reads → the field it fills (field names and their config.json aliases)."""
    keys: dict[str, str] = {}
    for name, field in type(model).model_fields.items():
        keys[name] = name
        alias = field.validation_alias
        for choice in getattr(alias, "choices", ()) or ((alias,) if isinstance(alias, str) else ()):
            if isinstance(choice, str):
                keys[choice] = name
        if isinstance(field.alias, str):
            keys[field.alias] = name
    return keys


def _nested_blocks(model: BaseModel) -> list[tuple[str, BaseModel]]:
    """MODEL's nested configs by field name, as far as they can be built (none for a plain block)."""
    from .errors import FfncalcError

    if not isinstance(model, HFConfig):
        return []
    try:
        return list(model.nested_configs().items())
    except FfncalcError:  # a block its other values cannot build: no suggestion from it
        return []


def _check_path(model: BaseModel, path: tuple[str, ...], shown: str) -> None:
    head, rest = path[0], path[1:]
    readable = readable_keys(model)
    if head not in readable:
        # A field of a nested config first (text_config.num_hidden_layers on a multimodal model), then near spellings.
        nested_fields = [f"{name}.{head}" for name, block in _nested_blocks(model) if head in readable_keys(block)]
        near = nested_fields or difflib.get_close_matches(head, list(readable), n=3, cutoff=0.6)
        hint = f"; did you mean {' or '.join(near)}?" if near else " (nothing ffncalc counts depends on it)"
        kind = getattr(model, "model_type", None) or type(model).__name__
        raise UsageError(f"`sets` {shown}: {head} is not a field that {kind} reads{hint}")
    if not rest:
        decider = model.superseded_fields().get(readable[head]) if isinstance(model, HFConfig) else None
        if decider is not None:
            kind = getattr(model, "model_type", None) or type(model).__name__
            raise UsageError(
                f"`sets` {shown}: {kind} takes {readable[head]} from {decider}, so the change would alter nothing; "
                f"change {decider} instead"
            )
        return
    nested = model.nested_configs() if isinstance(model, HFConfig) else {}
    inner = nested.get(readable[head], getattr(model, readable[head], None))
    if isinstance(inner, BaseModel):
        _check_path(inner, rest, shown)
    # a free-form block (rope_scaling, quantization_config) takes any key; its own rules check the values


def follow_notes(config: HFConfig, overrides: tuple[Override, ...], raw: dict[str, Any]) -> list[str]:
    """For each derived field whose rule reads a changed field: whether it followed (left out) or kept its value."""
    notes = []
    changed = {override.path[-1] for override in overrides if len(override.path) == 1}
    for field, derivation in config.derivations().items():
        sources = set(re.findall(r"[A-Za-z_]\w*", derivation.rule)) & changed
        if not sources or field in changed:
            continue
        source = ", ".join(sorted(sources))
        if raw.get(field, derivation.when) != derivation.when:
            notes.append(
                f"{field} keeps the config's {raw[field]} (the config sets it, so it does not follow {source})"
            )
        elif getattr(config, field) == derivation.when:
            value = config.resolved(field)
            notes.append(f"{field} follows {source}: {derivation.rule} = {value} (the config leaves it out)")
    return notes


VARIANT = re.compile(r"^(?P<model>.+?):(?P<changes>[A-Za-z_][A-Za-z0-9_.-]*=.*)$", re.S)


def split_variant(written: str) -> tuple[str, tuple[Override, ...]]:
    """MODEL:KEY=VALUE[,KEY=VALUE…] → (MODEL, its overrides); a name without one → (name, ())."""
    match = VARIANT.match(written)
    if match is None:
        return written, ()
    pieces = re.split(r",(?=[A-Za-z_][A-Za-z0-9_.-]*=)", match["changes"])
    return match["model"], tuple(parse_override(piece) for piece in pieces)


# --- sweeps ---------------------------------------------------------------------------------------


class Sweep(Value):
    """One swept field and the values it takes, in order."""

    key: str
    values: tuple[Any, ...]


def parse_sweep(text: str) -> Sweep:
    """KEY=V1,V2,… | KEY=START:STOP:STEP (arithmetic, STOP included) | KEY=START:STOP:×2 (doubling) → Sweep."""
    override = parse_override(text, "`sweeps`")
    spec = text.partition("=")[2].strip()
    range_form = re.fullmatch(r"(-?\d+):(-?\d+)(?::([×x*]?)(\d+))?", spec)
    if range_form:
        start, stop, times, step = int(range_form[1]), int(range_form[2]), range_form[3], int(range_form[4] or 1)
        values = _geometric(start, stop, step, text) if times else _arithmetic(start, stop, step, text)
    else:
        values = tuple(parse_value(part.strip()) for part in _split_list(spec))
        if not spec or any(part.strip() == "" for part in _split_list(spec)):
            raise UsageError(f"`sweeps` {text!r}: list the values, e.g. `sweeps` num_key_value_heads=1,2,4,8")
    if len(values) > MAX_SWEEP_POINTS:
        raise UsageError(f"`sweeps` {text!r}: {len(values):,} values; at most {MAX_SWEEP_POINTS:,}")
    return Sweep(override.key, values)


def _split_list(spec: str) -> list[str]:
    """Split V1,V2 at top-level commas, so that JSON lists stay whole ([1,2],[3,4])."""
    parts, depth, current = [], 0, ""
    for char in spec:
        depth += char in "[{"
        depth -= char in "]}"
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    return [*parts, current]


def _arithmetic(start: int, stop: int, step: int, text: str) -> tuple[int, ...]:
    if step <= 0 or stop < start:
        raise UsageError(f"`sweeps` {text!r}: START:STOP:STEP needs START ≤ STOP and a STEP above 0, e.g. 8:64:8")
    if (stop - start) // step + 1 > MAX_SWEEP_POINTS:
        raise UsageError(f"`sweeps` {text!r}: more than {MAX_SWEEP_POINTS:,} values")
    return tuple(range(start, stop + 1, step))


def _geometric(start: int, stop: int, factor: int, text: str) -> tuple[int, ...]:
    if start <= 0 or factor < 2 or stop < start:
        raise UsageError(f"`sweeps` {text!r}: START:STOP:×F needs 0 < START ≤ STOP and F ≥ 2, e.g. 1:64:×2")
    count = int(math.log(stop / start, factor)) + 2
    return tuple(value for value in (start * factor**n for n in range(count)) if value <= stop)


def sweep_points(sweeps: tuple[Sweep, ...]) -> list[tuple[Override, ...]]:
    """Every combination of the swept values (two sweeps: a grid, the first varying slowest)."""
    points: list[tuple[Override, ...]] = [()]
    for sweep in sweeps:
        points = [(*point, Override(sweep.key, value)) for point in points for value in sweep.values]
    if len(points) > MAX_SWEEP_POINTS:
        raise UsageError(f"`sweeps`: {len(points):,} points in all; at most {MAX_SWEEP_POINTS:,}")
    return points
