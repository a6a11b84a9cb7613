"""Every adapter reads the fields of its transformers configuration class, with the same defaults.

The expected defaults are transformers 5.24's own (tests/expected/transformers_defaults.json,
written by tools/config_defaults.py from the configuration classes' dataclass fields).
"""

import json

import pytest
from pydantic import BaseModel

from ffncalc.families import FAMILIES, TOWERS, adapter_for
from ffncalc.schema import METADATA_FIELDS

from .conftest import EXPECTED

TRANSFORMERS = json.loads((EXPECTED / "transformers_defaults.json").read_text())["classes"]


def declared_fields(model_type):
    """(field, names the config may use for it, default) for each architectural field the adapter reads."""
    adapter = adapter_for(model_type, TOWERS if model_type in TOWERS else FAMILIES)
    for name, field in adapter.model_fields.items():
        if name in METADATA_FIELDS or name in adapter.undeclared_keys:
            continue
        if isinstance(field.default, BaseModel) or field.default_factory not in (None, list):
            continue  # nested blocks (DBRX's attn_config) are built by transformers' __post_init__
        aliases = set(getattr(field.validation_alias, "choices", []) or []) | {name}
        default = [] if field.default_factory is list else field.default
        yield name, aliases, default


@pytest.mark.parametrize("model_type", sorted(TRANSFORMERS))
def test_every_field_an_adapter_reads_is_a_field_of_transformers_class(model_type):
    known = TRANSFORMERS[model_type]
    names = set(known["fields"]) | set(known["attribute_map"]) | set(known["attribute_map"].values())
    unknown = [name for name, aliases, _ in declared_fields(model_type) if not aliases & names]
    assert unknown == [], f"{known['class']} has no field {unknown}"


@pytest.mark.parametrize("model_type", sorted(TRANSFORMERS))
def test_every_default_is_transformers_default(model_type):
    known = TRANSFORMERS[model_type]
    fields = known["fields"]
    mapped = {**{v: k for k, v in known["attribute_map"].items()}, **known["attribute_map"]}
    wrong = {}
    for name, aliases, default in declared_fields(model_type):
        field = next((alias for alias in aliases if alias in fields), None)
        if field is None:
            field = next((mapped[alias] for alias in aliases if mapped.get(alias) in fields), None)
        if field is None:
            continue
        theirs = fields[field]
        if theirs is None and default is None:
            continue
        if theirs != default and not (theirs is None and default == []):
            wrong[name] = (default, theirs)
    assert wrong == {}, f"{known['class']}: ffncalc's default vs transformers' {wrong}"
