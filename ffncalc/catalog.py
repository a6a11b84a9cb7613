"""The bundled configs counted ahead of time, for the commands that summarise all of them.

`ffncalc models` counts every bundled config and preset, `models --families` names every adapter,
and `compare` counts several models: done live, that creates the pydantic adapters of dozens of
families, about half a second, for a listing. ``tools/write_catalog.py`` runs this same engine over
every bundled file and writes ``fixtures/catalog.json``, which those commands read instead.

It is never used stale: it holds a fingerprint of the engine's source (every .py file of the
package) and the sha256 of each file it counted. When either differs (the code changed, a config
was edited or added), that part is counted live. tests/test_catalog.py recounts every entry and
fails when the catalog is not current.
"""

from __future__ import annotations

import hashlib
import json
from functools import cache
from pathlib import Path
from typing import Any

from .source import data_dir

CATALOG_NAME = "catalog.json"


def catalog_path() -> Path:
    """The catalog shipped inside the installed package, or fixtures/catalog.json in a checkout."""
    return data_dir("bundled_catalog", "") / CATALOG_NAME


def engine_fingerprint() -> str:
    """sha256 over the name and bytes of every .py file of the package: any change to the code changes it."""
    package = Path(__file__).parent
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        digest.update(path.relative_to(package).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@cache
def read_catalog() -> dict[str, Any]:
    """The catalog, or an empty one when it is missing, unreadable, or was written by other code than this."""
    try:
        catalog = json.loads(catalog_path().read_text(encoding="utf-8"))
        if not isinstance(catalog, dict) or catalog.get("engine") != engine_fingerprint():
            return {}
    except (OSError, ValueError):  # unreadable: everything is counted live, and says why if it cannot be
        return {}
    return catalog


def counted(name: str, path: Path) -> dict[str, Any] | None:
    """What the catalog holds for bundled config or preset NAME, if it was counted from PATH's current bytes."""
    entry = read_catalog().get("models", {}).get(name)
    try:
        if not isinstance(entry, dict) or entry.get("sha256") != file_digest(path):
            return None
    except OSError:  # counted live, which reports the file it cannot read
        return None
    return entry


def families() -> dict[str, list[str]] | None:
    """Each family with its model_types, as the adapters name them; None when the catalog is not current."""
    listed = read_catalog().get("families")
    return listed if isinstance(listed, dict) else None


def build_catalog() -> dict[str, Any]:
    """The catalog as this code counts it now: every bundled config and preset, and the family list."""
    from .api import compare, list_bundled, list_families
    from .source import bundled_models, presets

    files = {**bundled_models(), **presets()}
    models = {}
    for row in list_bundled(live=True):
        models[row.model] = {
            "sha256": file_digest(files[row.model]),
            "model": row.model_dump(mode="json"),
            "compare": [compared.model_dump(mode="json") for compared in compare([row.model], live=True)],
        }
    return {"engine": engine_fingerprint(), "families": list_families(live=True), "models": models}
