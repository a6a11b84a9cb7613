"""What a checkpoint stores, read from safetensors headers only: a local folder or a Hub repo.

No weights are read: a safetensors file starts with an 8-byte little-endian length and a JSON
header naming every tensor's dtype and shape; huggingface_hub fetches the same headers from
the Hub with range requests.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .errors import ConfigNotFoundError, InvalidConfigError
from .source import explain_hub_failure, find_bundled, looks_like_path, parse_config_text, read_config_file

MAX_SAFETENSORS_HEADER = 100 * 1024 * 1024  # the format's own cap on the JSON header
SAFETENSORS_INDEX = "model.safetensors.index.json"


@dataclass(frozen=True)
class StoredTensor:
    """One tensor of a checkpoint: name, dtype as safetensors spells it (BF16, U8 …) and shape."""

    name: str
    dtype: str
    shape: tuple[int, ...]

    @property
    def elements(self) -> int:
        count = 1
        for size in self.shape:
            count *= size
        return count


@dataclass(frozen=True)
class Checkpoint:
    """What a checkpoint stores. ``tensors`` is None when only an index was found (names, no shapes)."""

    location: str
    files: tuple[str, ...]
    tensors: tuple[StoredTensor, ...] | None
    tensor_names: tuple[str, ...]
    index_total_size: int | None = None


def read_safetensors_header(path: Path) -> list[StoredTensor]:
    """An 8-byte little-endian header length, then a JSON header of {name: {dtype, shape, data_offsets}}."""
    try:
        with path.open("rb") as handle:
            prefix = handle.read(8)
            if len(prefix) < 8:
                raise InvalidConfigError(f"{path}: too short to be a safetensors file")
            length = int.from_bytes(prefix, "little")
            if length > MAX_SAFETENSORS_HEADER:
                raise InvalidConfigError(f"{path}: safetensors header of {length:,} bytes exceeds the format's 100 MB limit")
            header = handle.read(length)
    except OSError as error:
        raise ConfigNotFoundError(f"{path}: cannot read: {error.strerror or error}") from None
    if len(header) < length:
        raise InvalidConfigError(f"{path}: the safetensors header is cut short ({len(header):,} of {length:,} bytes)")
    return parse_safetensors_header(header, str(path))


def parse_safetensors_header(header: bytes, label: str) -> list[StoredTensor]:
    """The JSON header of a safetensors file → its tensors (the __metadata__ entry is skipped)."""
    data = parse_config_text(header, label)
    tensors = []
    for name, entry in data.items():
        if name == "__metadata__":
            continue
        shape = entry.get("shape") if isinstance(entry, dict) else None
        dtype = entry.get("dtype") if isinstance(entry, dict) else None
        if not isinstance(dtype, str) or not isinstance(shape, list) or not all(
            isinstance(size, int) and not isinstance(size, bool) and size >= 0 for size in shape
        ):
            raise InvalidConfigError(f"{label}: tensor {name!r} has no valid dtype and shape in the header")
        tensors.append(StoredTensor(name, dtype, tuple(shape)))
    return tensors


def read_local_checkpoint(folder: Path) -> Checkpoint:
    """A folder's *.safetensors headers, or failing those its model.safetensors.index.json."""
    files = sorted(folder.glob("*.safetensors"))
    if files:
        tensors = [tensor for path in files for tensor in read_safetensors_header(path)]
        return Checkpoint(str(folder), tuple(p.name for p in files), tuple(tensors), tuple(t.name for t in tensors))
    index_path = folder / SAFETENSORS_INDEX
    if index_path.is_file():
        index = read_config_file(index_path)
        weight_map = index.get("weight_map")
        total_size = (index.get("metadata") or {}).get("total_size")
        if not isinstance(weight_map, dict) or not isinstance(total_size, int):
            raise InvalidConfigError(f"{index_path}: an index needs a weight_map and metadata.total_size")
        return Checkpoint(str(folder), (SAFETENSORS_INDEX,), None, tuple(weight_map), index_total_size=total_size)
    raise ConfigNotFoundError(
        f"{folder}: no *.safetensors files and no {SAFETENSORS_INDEX}; verify reads a checkpoint's headers"
    )


def fetch_hub_checkpoint(repo_id: str, revision: str | None, token: str | None) -> Checkpoint:
    """Every tensor's name, dtype and shape from the Hub, reading only the safetensors headers (range requests)."""
    from huggingface_hub import HfApi
    from huggingface_hub import errors as hub_errors
    from huggingface_hub.utils import logging as hub_logging

    hub_logging.set_verbosity_error()
    try:
        metadata = HfApi().get_safetensors_metadata(repo_id, revision=revision, token=token)
    except hub_errors.NotASafetensorsRepoError:
        raise ConfigNotFoundError(
            f"{repo_id} has neither model.safetensors nor {SAFETENSORS_INDEX}; verify reads safetensors headers"
        ) from None
    except hub_errors.SafetensorsParsingError as error:
        raise InvalidConfigError(f"{repo_id}: a safetensors header could not be parsed ({error})") from None
    except Exception as error:  # noqa: BLE001 - translated like every Hub failure
        raise explain_hub_failure(error, repo_id, revision, token) from None
    tensors = [
        StoredTensor(name, info.dtype, tuple(info.shape))
        for file_metadata in metadata.files_metadata.values()
        for name, info in file_metadata.tensors.items()
    ]
    label = repo_id if revision is None else f"{repo_id}@{revision}"
    return Checkpoint(label, tuple(sorted(metadata.files_metadata)), tuple(tensors), tuple(t.name for t in tensors))


def load_checkpoint(model: str, revision: str | None = None, token: str | None = None) -> Checkpoint:
    """The checkpoint beside MODEL: its folder when MODEL is a path, else the Hub repo of that id."""
    path = Path(model).expanduser()
    if path.is_file():
        return read_local_checkpoint(path.parent)
    if path.is_dir():
        return read_local_checkpoint(path)
    if looks_like_path(model):
        raise ConfigNotFoundError(f"{model}: no such file or folder")
    bundled = find_bundled(model)  # a bundled id is the Hub repo of that name, in its canonical case
    return fetch_hub_checkpoint(bundled[0] if bundled else model, revision, token)
