"""The declared defaults of transformers' configuration classes, for the families ffncalc reads.

A side script (torch and transformers in a side venv, see tools/meta_count.py):

    /tmp/side/bin/python tools/config_defaults.py > tests/expected/transformers_defaults.json

For each model_type ffncalc supports (its families' @family and @tower registrations, read from their source, so
ffncalc need not be importable here) it records the configuration class, its dataclass fields with
their defaults, and its attribute_map (the other names a config may use for a field). tools/write_record.py ships
it with the package, trimmed to the fields families read (ffncalc/transformers_defaults.json), where a declared
family takes its defaults and other names from; tests/test_defaults.py holds the shipped copy and every adapter's
fields to this.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import math
import sys
from pathlib import Path

import transformers
from transformers.models.auto.configuration_auto import CONFIG_MAPPING

REGISTRY = Path(__file__).resolve().parent.parent / "ffncalc" / "families" / "registry.py"


def registered_model_types() -> list[str]:
    """Every model_type a family or tower registers, read by ffncalc's own index of the modules' syntax trees
    (registry.scan), loaded from its file: it imports nothing of ffncalc's, so ffncalc need not be installed here."""
    spec = importlib.util.spec_from_file_location("ffncalc_registry", REGISTRY)
    assert spec is not None and spec.loader is not None
    registry = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(registry)
    found = registry.scan(REGISTRY.parent)
    return sorted(set(found["families"]) | set(found["towers"]))


def plain(value):
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    try:
        json.dumps(value)
        return value
    except TypeError:
        return repr(value)


def main() -> None:
    model_types = registered_model_types()
    document = {
        "generated_by": "tools/config_defaults.py",
        "transformers_version": transformers.__version__,
        "classes": {},
    }
    for model_type in model_types:
        if model_type not in CONFIG_MAPPING:
            continue
        cls = CONFIG_MAPPING[model_type]
        fields = {}
        for field in dataclasses.fields(cls):
            if field.default is not dataclasses.MISSING:
                fields[field.name] = plain(field.default)
            elif field.default_factory is not dataclasses.MISSING:
                fields[field.name] = plain(field.default_factory())
        document["classes"][model_type] = {
            "class": cls.__name__,
            "fields": fields,
            "attribute_map": dict(getattr(cls, "attribute_map", {})),
        }
    json.dump(document, sys.stdout, indent=1, sort_keys=True)
    print()


if __name__ == "__main__":
    main()
