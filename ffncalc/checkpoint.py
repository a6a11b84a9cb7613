"""What a checkpoint stores, read from safetensors headers only: a local folder or a Hub repo.

No weights are read: a safetensors file starts with an 8-byte little-endian length and a JSON
header naming every tensor's dtype, shape and byte span; huggingface_hub fetches the same headers
from the Hub with range requests. Files are chosen as transformers chooses them: the files
``model.safetensors.index.json`` names, else ``model.safetensors``; other formats beside them
(Mistral's ``consolidated.safetensors``, ``original/``) are not read, and the report says so.

Every header is checked by one function, ``validate_header``, whichever parser read it (ffncalc's own for a
folder, huggingface_hub's ``get_safetensors_metadata`` for the Hub), against the format's rules as the reference
implementation enforces them on load (safetensors' ``Metadata::validate``): known dtypes, shapes of non-negative
integers, byte spans that are contiguous from 0 and match shape × dtype size, no size past what 64 bits hold, and
at most ``MAX_TENSORS`` tensors. Both parsers read the JSON with Python's json: a name given twice in one header
keeps its last entry, and the offsets then tell whether data went missing (a gap where the first one was).
Across the files of a checkpoint a name is stored once. Only a folder's file has a known length: there, the data
must also end where the file does.
"""

from __future__ import annotations

import json
import math
import re
import stat
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from .errors import CheckpointError, ConfigNotFoundError, HubError
from .source import find_bundled, looks_like_path, offline, parse_config_text, presets, read_config_file
from .units import DTYPE_BYTES
from .values import Value

if TYPE_CHECKING:
    from huggingface_hub import SafetensorsRepoMetadata

MAX_SAFETENSORS_HEADER = 100 * 1024 * 1024  # the format's own cap on the JSON header
SAFETENSORS_INDEX = "model.safetensors.index.json"
SAFETENSORS_SINGLE = "model.safetensors"
MAX_TENSORS = 1_000_000  # a header naming more is refused (the largest published checkpoints hold ~100,000)
MAX_BYTES = 2**64 - 1  # safetensors reads sizes and offsets as 64-bit integers and refuses what overflows them


class HeaderTensor(Value):
    """One tensor of a checkpoint: name, dtype as safetensors spells it (BF16, U8 …), shape, and its file."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    file: str = ""

    @property
    def elements(self) -> int:
        return math.prod(self.shape)

    @property
    def bytes(self) -> int:
        return self.elements * DTYPE_BYTES.get(self.dtype, 0)


class Checkpoint(Value):
    """What a checkpoint stores. With ``index_only`` only the index was found: names, no shapes."""

    location: str
    files: tuple[str, ...]
    tensors: tuple[HeaderTensor, ...]
    index_only: bool = False
    index_total_size: int | None = None
    missing_files: tuple[str, ...] = ()
    ignored: tuple[str, ...] = ()  # files and folders of other formats, not read
    index_problems: tuple[str, ...] = ()  # where the index disagrees with itself or with the shards it names


def read_safetensors_header(path: Path) -> list[HeaderTensor]:
    """An 8-byte little-endian header length, then a JSON header of {name: {dtype, shape, data_offsets}}, checked."""
    label = path.name
    try:
        mode = path.stat().st_mode
        if not stat.S_ISREG(mode):
            raise CheckpointError(f"{path}: not a regular file; a safetensors file is a plain file")
        size = path.stat().st_size
        with path.open("rb") as handle:
            prefix = handle.read(8)
            if len(prefix) < 8:
                raise CheckpointError(f"{path}: too short to be a safetensors file")
            length = int.from_bytes(prefix, "little")
            if length > MAX_SAFETENSORS_HEADER:
                raise CheckpointError(
                    f"{path}: safetensors header of {length:,} bytes exceeds the format's 100 MB limit"
                )
            header = handle.read(length)
    except OSError as error:
        raise ConfigNotFoundError(f"{path}: cannot read: {error.strerror or error}") from None
    if len(header) < length:
        raise CheckpointError(f"{path}: the safetensors header is cut short ({len(header):,} of {length:,} bytes)")
    tensors, data_bytes = parse_safetensors_header(header, str(path), label)
    if size - 8 - length != data_bytes:
        raise CheckpointError(
            f"{path}: the header describes {data_bytes:,} bytes of data but the file holds {size - 8 - length:,}; "
            "the file is truncated or corrupt"
        )
    return tensors


# One header entry as a parser hands it over, unchecked: name, dtype, shape, data_offsets.
Entry = tuple[str, object, object, object]


def parse_safetensors_header(header: bytes, where: str, file: str = "") -> tuple[list[HeaderTensor], int]:
    """The JSON header of a safetensors file → its tensors and the data bytes it says follow, after validate_header."""
    try:
        data = parse_config_text(header, where)
    except Exception as error:
        raise CheckpointError(f"{where}: the safetensors header is not valid JSON ({error})") from None
    entries: list[Entry] = []
    for name, entry in data.items():
        if name == "__metadata__":
            continue
        if not isinstance(entry, dict):
            raise CheckpointError(f"{where}: tensor {name!r} has no dtype, shape and data_offsets in the header")
        entries.append((name, entry.get("dtype"), entry.get("shape"), entry.get("data_offsets")))
    return validate_header(entries, where, file)


def validate_header(entries: Sequence[Entry], where: str, file: str) -> tuple[list[HeaderTensor], int]:
    """One file's header entries, from either parser → its tensors and the data bytes they span, or CheckpointError:
    at most MAX_TENSORS; each dtype one of safetensors'; each shape a list of integers ≥ 0; each data_offsets
    [begin, end] with begin ≤ end < 2^64 and end − begin = Π shape × dtype size; the spans contiguous from 0."""
    if len(entries) > MAX_TENSORS:
        raise CheckpointError(f"{where}: {len(entries):,} tensors is more than a safetensors header can sensibly hold")
    spans = []
    tensors = []
    for name, dtype, shape, offsets in entries:
        if not isinstance(dtype, str) or dtype not in DTYPE_BYTES:
            raise CheckpointError(
                f"{where}: tensor {name!r} has dtype {dtype!r}, not one of safetensors' ({', '.join(DTYPE_BYTES)})"
            )
        if not isinstance(shape, (list, tuple)) or not all(_count(size) for size in shape):
            raise CheckpointError(f"{where}: tensor {name!r} has shape {_shown(shape)}, not a list of sizes ≥ 0")
        if not (
            isinstance(offsets, (list, tuple))
            and len(offsets) == 2
            and all(_count(o) and o <= MAX_BYTES for o in offsets)
            and offsets[0] <= offsets[1]
        ):
            raise CheckpointError(f"{where}: tensor {name!r} has data_offsets {_shown(offsets)}, not [begin, end]")
        needed = math.prod(shape) * DTYPE_BYTES[dtype]
        if offsets[1] - offsets[0] != needed:
            raise CheckpointError(
                f"{where}: tensor {name!r} spans {offsets[1] - offsets[0]:,} bytes but its shape {list(shape)} of "
                f"{dtype} takes {needed:,}"
            )
        tensors.append(HeaderTensor(name, dtype, tuple(shape), file))
        spans.append((offsets[0], offsets[1], name))
    spans.sort()
    end = 0
    for start, stop, name in spans:
        if start != end:
            raise CheckpointError(
                f"{where}: tensor {name!r} starts at byte {start:,}, not {end:,}: its data_offsets overlap or leave a gap"
            )
        end = stop
    return tensors, end


def check_names_unique(tensors: Iterable[HeaderTensor], where: str) -> None:
    """A tensor name is stored in one file of a checkpoint only: which copy would be loaded is otherwise undefined."""
    seen: dict[str, str] = {}
    for tensor in tensors:
        first = seen.setdefault(tensor.name, tensor.file)
        if first != tensor.file:
            raise CheckpointError(f"{where}: tensor {tensor.name!r} is stored in both {first} and {tensor.file}")


def _count(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _shown(value: object) -> str:
    """A value from a header, as JSON and at most 40 characters (a header may hold anything)."""
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text[:40]


def read_local_checkpoint(folder: Path) -> Checkpoint:
    """The files transformers would load from FOLDER: those its index names, else model.safetensors."""
    index_path = folder / SAFETENSORS_INDEX
    others = (
        sorted(
            p.name + ("/" if p.is_dir() else "")
            for p in folder.iterdir()
            if (p.suffix == ".safetensors" and p.name != SAFETENSORS_SINGLE) or (p.is_dir() and p.name == "original")
        )
        if folder.is_dir()
        else []
    )
    if index_path.is_file():
        weight_map, total_size = read_index(index_path)
        files = sorted(set(weight_map.values()))
        ignored = tuple(name for name in others if name not in files)
        present = [name for name in files if (folder / name).exists()]
        missing = tuple(name for name in files if name not in present)
        if not present:  # the names are still checked; the shards are missing files all the same
            tensors = tuple(HeaderTensor(name, "", (), file) for name, file in weight_map.items())
            return Checkpoint(str(folder), (SAFETENSORS_INDEX,), tensors, True, total_size, missing, ignored)
        read = tuple(tensor for name in present for tensor in read_safetensors_header(folder / name))
        check_names_unique(read, str(folder))
        problems = index_problems(weight_map, total_size, read, missing, ignored)
        return Checkpoint(str(folder), tuple(files), read, False, total_size, missing, ignored, problems)
    single = folder / SAFETENSORS_SINGLE
    if single.exists():
        ignored = tuple(others)
        return Checkpoint(str(folder), (SAFETENSORS_SINGLE,), tuple(read_safetensors_header(single)), ignored=ignored)
    found = f"; found {', '.join(others[:3])}, which transformers does not load" if others else ""
    raise ConfigNotFoundError(
        f"{folder}: no {SAFETENSORS_SINGLE} and no {SAFETENSORS_INDEX}{found}; verify reads a checkpoint's headers"
    )


SHARD = re.compile(r"^model-\d+-of-\d+\.safetensors$")


def index_problems(
    weight_map: dict[str, str],
    total_size: int | None,
    read: tuple[HeaderTensor, ...],
    missing: tuple[str, ...],
    ignored: tuple[str, ...],
) -> tuple[str, ...]:
    """Where an index disagrees with the shards it names (transformers loads each tensor from the shard the index
    names, and only the tensors it names): a stored tensor it leaves out, an entry no shard stores, a tensor
    listed under another shard, a shard beside it that it does not name, a total_size that is not the shards'
    sum of tensor bytes (safetensors' own rule for metadata.total_size)."""
    problems = []
    stored = {tensor.name: tensor.file for tensor in read}
    unlisted = sorted(name for name in stored if name not in weight_map)
    absent = sorted(name for name, file in weight_map.items() if name not in stored and file not in missing)
    moved = sorted(name for name, file in stored.items() if name in weight_map and weight_map[name] != file)

    def named(what: str, names: list[str]) -> None:
        if names:
            shown = ", ".join(names[:3]) + (f" and {len(names) - 3:,} more" if len(names) > 3 else "")
            problems.append(f"{len(names):,} {what}: {shown}")

    named("stored tensor(s) the index does not list (transformers does not load them)", unlisted)
    named("index entr(y/ies) no shard stores", absent)
    named("tensor(s) stored in another shard than the index names", [f"{n} ({stored[n]})" for n in moved])
    named("shard(s) beside the index that it does not name", [name for name in ignored if SHARD.match(name)])
    if total_size is not None and not missing:
        summed = sum(tensor.bytes for tensor in read)
        if summed != total_size:
            problems.append(f"metadata.total_size is {total_size:,} bytes; the shards' tensors hold {summed:,}")
    return tuple(problems)


def read_index(path: Path) -> tuple[dict[str, str], int | None]:
    """An index's weight_map (tensor → file) and metadata.total_size."""
    index = read_config_file(path)
    weight_map = index.get("weight_map")
    metadata = index.get("metadata")
    total_size = metadata.get("total_size") if isinstance(metadata, dict) else None
    if not isinstance(weight_map, dict) or not all(
        isinstance(v, str) and isinstance(k, str) for k, v in weight_map.items()
    ):
        raise CheckpointError(f"{path}: an index needs a weight_map of tensor names to file names")
    if any("/" in f or "\\" in f or f.startswith(".") for f in weight_map.values()):
        raise CheckpointError(f"{path}: the weight_map names files outside the folder")
    if not _count(total_size):
        total_size = None
    return weight_map, total_size


def fetch_hub_checkpoint(repo_id: str, revision: str | None, token: str | None) -> Checkpoint:
    """Every tensor's name, dtype and shape from the Hub, reading only the safetensors headers (range requests),
    validated as a folder's are."""
    from .hub import safetensors_metadata

    label = repo_id if revision is None else f"{repo_id}@{revision}"
    return hub_checkpoint(label, safetensors_metadata(repo_id, revision, token))


def hub_checkpoint(label: str, metadata: SafetensorsRepoMetadata) -> Checkpoint:
    """What huggingface_hub's parser read from a Hub repo's headers, through validate_header file by file; a sharded
    repo's index is held against its shards as a folder's is."""
    tensors: list[HeaderTensor] = []
    for file, file_metadata in sorted(metadata.files_metadata.items()):
        entries = [(name, info.dtype, info.shape, info.data_offsets) for name, info in file_metadata.tensors.items()]
        tensors += validate_header(entries, f"{label}/{file}", file)[0]
    check_names_unique(tensors, label)
    problems: tuple[str, ...] = ()
    if metadata.sharded:
        index = metadata.metadata or {}
        total_size = index.get("total_size") if isinstance(index, dict) else None
        problems = index_problems(
            metadata.weight_map, total_size if _count(total_size) else None, tuple(tensors), (), ()
        )
    return Checkpoint(label, tuple(sorted(metadata.files_metadata)), tuple(tensors), index_problems=problems)


def load_checkpoint(model: str, revision: str | None = None, token: str | None = None) -> Checkpoint:
    """The checkpoint beside MODEL: its folder when MODEL is a path, else the Hub repo of that id."""
    path = Path(model).expanduser()
    if path.is_file():
        return read_local_checkpoint(path.parent)
    if path.is_dir():
        return read_local_checkpoint(path)
    if looks_like_path(model):
        raise ConfigNotFoundError(f"{model}: no such file or folder")
    if model.lower() in presets():
        raise ConfigNotFoundError(
            f"{model} is a preset (a model published without weights): there is no checkpoint to verify"
        )
    bundled = find_bundled(model)  # a bundled id is the Hub repo of that name, in its canonical case
    if bundled is None:
        return fetch_hub_checkpoint(model, revision, token)
    headers_needed = (
        "verify reads the checkpoint's safetensors headers, which the bundled config does not carry: "
        "verify a local folder holding the checkpoint, or go online"
    )
    if offline():
        raise CheckpointError(
            f"{bundled[0]}: HF_HUB_OFFLINE is set, so the Hub's headers cannot be read; {headers_needed}"
        )
    try:
        return fetch_hub_checkpoint(bundled[0], revision, token)
    except HubError as error:
        raise HubError(f"{error}; {headers_needed}") from None
