"""What transformers built (tests/expected/transformers/*.json, from tools/meta_count.py), and how
ffncalc's spec of the same config is compared with it."""

from __future__ import annotations

import functools
import hashlib
import json
from pathlib import Path

from ffncalc.loading import LoadedModel, loaded_from
from ffncalc.source import RawConfig
from ffncalc.spec import ModelSpec
from ffncalc.tensors import checkpoint_tensors, layer_indices

from .conftest import BUNDLED, EXPECTED

CONFIG_DIRS = (BUNDLED, Path(__file__).resolve().parent / "configs")
BUILT = EXPECTED / "transformers"


def built() -> dict[str, dict]:
    """Every configuration transformers built, by file stem."""
    return {path.stem: json.loads(path.read_text()) for path in sorted(BUILT.glob("*.json"))}


def config_of(stem: str) -> dict:
    """The config.json a record was built from (a bundled or test config; {"model_type": …} for defaults)."""
    if stem.startswith("defaults__"):
        return {"model_type": stem.removeprefix("defaults__")}
    for folder in CONFIG_DIRS:
        path = folder / f"{stem}.json"
        if path.exists():
            return json.loads(path.read_text())
    raise FileNotFoundError(stem)


@functools.cache
def loaded(stem: str) -> LoadedModel:
    """A record's config loaded as a file's would be, without writing one: the agreement tests hold the counting,
    and tests/test_cli.py and tests/test_hub.py hold reading configs from files and the Hub."""
    return loaded_from(RawConfig(data=config_of(stem), name=stem, source="file", location=f"{stem}.json"))


def stored_tensors(spec: ModelSpec) -> dict[str, tuple[int, ...]]:
    """ffncalc's view of what transformers saves: the parameters and the persistent buffers."""
    stored = checkpoint_tensors(spec)
    for extra in spec.checkpoint_extras:
        if not extra.buffer:
            continue
        for index in extra.per_layer or (None,):
            for tensor in extra.tensors:
                stored[tensor.name.format(i=index)] = tensor.shape
    return stored


def digest(tensors: dict[str, tuple[int, ...]]) -> str:
    """sha256 of the sorted "name [shape]" lines, as tools/meta_count.py computes it."""
    lines = "\n".join(f"{name} {list(shape)}" for name, shape in sorted(tensors.items()))
    return hashlib.sha256(lines.encode()).hexdigest()


__all__ = ["built", "config_of", "digest", "layer_indices", "loaded", "stored_tensors"]
