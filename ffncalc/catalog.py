"""A cache of the bundled configs' counts, for the commands that summarise all of them.

`ffncalc models` counts every bundled config and preset, `models `families`` names every adapter, and `compare`
counts several models: done live, that creates the pydantic adapters of dozens of families, about half a second,
for a listing. The package ships the counts of its bundled configs (``bundled_catalog.json``, written by
``tools/write_catalog.py`` and held equal to a live count by tests/test_catalog.py), so the first listing after an
install reads them instead of counting (2.8 s before, on this 2-core machine). A config the shipped counts do not
match (an edited bundled file) is counted live once, and what was counted is stored in the user's cache; later
listings read it.

The cache lives in the user's cache folder (FFNCALC_CACHE_DIR, else $XDG_CACHE_HOME/ffncalc, else
~/.cache/ffncalc), one file per engine: its name carries a fingerprint of the package's source, so a changed
engine never reads another's counts, and each entry carries the sha256 of the file it counted, so an edited config
is counted live. Nothing in the repository has to be regenerated when the code changes. An unreadable, corrupt or
unwritable cache only means counting live. This module stores and reads; it counts nothing.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from functools import cache
from pathlib import Path
from typing import Any


def cache_dir() -> Path:
    """FFNCALC_CACHE_DIR, else $XDG_CACHE_HOME/ffncalc, else ~/.cache/ffncalc."""
    explicit = os.environ.get("FFNCALC_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "ffncalc"


@cache
def engine_fingerprint() -> str:
    """sha256 over the path, size and modification time of every .py file of the package: any change to the code
    changes it. These are what Python itself checks before reusing a module's bytecode; reading and hashing the
    2 MB of source instead cost every listing about 40 M instructions (callgrind), more than counting a model."""
    package = os.path.dirname(os.path.abspath(__file__))
    digest = hashlib.sha256()
    for path in sorted(_python_files(package)):
        status = os.stat(path)
        relative = os.path.relpath(path, package).replace(os.sep, "/")
        digest.update(f"{relative}\0{status.st_size}\0{status.st_mtime_ns}\0".encode())
    return digest.hexdigest()


def _python_files(folder: str) -> list[str]:
    """Every .py file under FOLDER (os.scandir: a pathlib glob costs more than the stats it leads to)."""
    found = []
    for entry in os.scandir(folder):
        if entry.is_dir(follow_symlinks=False):
            found += _python_files(entry.path)
        elif entry.name.endswith(".py"):
            found.append(entry.path)
    return found


def catalog_path() -> Path:
    """This engine's cache file."""
    return cache_dir() / f"catalog-{engine_fingerprint()[:32]}.json"


#: The counts shipped with the package: the same shape as a user's cache, without an engine fingerprint (the
#: test that holds it equal to a live count is what ties it to the code).
SHIPPED = Path(__file__).with_name("bundled_catalog.json")


@cache
def read_shipped() -> dict[str, Any]:
    """The catalog shipped with the package, or an empty one when it is missing or unreadable."""
    try:
        shipped = json.loads(SHIPPED.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return shipped if isinstance(shipped, dict) else {}


def _catalogs() -> tuple[dict[str, Any], ...]:
    """Where counts are looked up, in order: this engine's own cache, then the shipped counts."""
    return read_catalog(), read_shipped()


def file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@cache
def read_catalog() -> dict[str, Any]:
    """This engine's cache, or an empty one when it is missing, unreadable, or written by other code."""
    try:
        catalog = json.loads(catalog_path().read_text(encoding="utf-8"))
        if not isinstance(catalog, dict) or catalog.get("engine") != engine_fingerprint():
            return {}
    except (OSError, ValueError):
        return {}
    return catalog


def counted(name: str, path: Path) -> dict[str, Any] | None:
    """What the cache or the shipped counts hold for bundled config or preset NAME, if counted from PATH's current
    bytes."""
    digest = None
    for catalog in _catalogs():
        entry = catalog.get("models", {}).get(name)
        if not isinstance(entry, dict):
            continue
        try:
            digest = digest or file_digest(path)
        except OSError:  # counted live, which reports the file it cannot read
            return None
        if entry.get("sha256") == digest:
            return entry
    return None


def families() -> dict[str, list[str]] | None:
    """Each family with its model_types, as the adapters name them; None when neither the cache nor the shipped
    counts hold them."""
    for catalog in _catalogs():
        listed = catalog.get("families")
        if isinstance(listed, dict):
            return listed
    return None


def store(catalog: dict[str, Any]) -> None:
    """Write CATALOG (its "engine" set to this engine) as this engine's cache, atomically; a failure is no error."""
    folder = cache_dir()
    with contextlib.suppress(OSError):
        folder.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=".catalog-", suffix=".tmp", dir=folder)
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as file:
                json.dump({**catalog, "engine": engine_fingerprint()}, file)
            os.replace(temporary, catalog_path())
        finally:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
        _forget_old(folder)
    read_catalog.cache_clear()


KEPT = 8  # catalogs kept: each version of the code (each checkout or install sharing the folder) writes its own


def _forget_old(folder: Path) -> None:
    """Remove all but the KEPT most recently written catalogs: every code change writes a new one."""
    written = sorted(folder.glob("catalog-*.json"), key=lambda path: path.stat().st_mtime, reverse=True)
    for path in written[KEPT:]:
        with contextlib.suppress(OSError):
            path.unlink()
