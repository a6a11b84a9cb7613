"""Reading a GGUF file's header: its metadata and tensor table, never its weights.

A GGUF file (ggml's format: ggml/docs/gguf.md; the reference reader ggml/src/gguf.cpp gguf_init_from_file_impl)
is a 24-byte preamble (magic ``GGUF``, version, tensor count, metadata count), the metadata key–value pairs, one
info per tensor (name, dimensions, ggml type, offset into the data section), padding to the alignment, and the
tensor data. ffncalc reads up to the end of the tensor infos and no further.

Why not ``gguf.GGUFReader``: it memory-maps the whole file with numpy and builds an array over every tensor's
data, so it needs the whole file on disk (not a Hub range, not the bundled header-only files) and trusts the
counts it reads. Here the header is parsed with the format's own constants from the ``gguf`` package
(``GGUFValueType``, ``GGUF_MAGIC``, ``GGML_QUANT_SIZES`` through ``ggml``), imported only when a GGUF is read,
and every count and length is bounded before anything is allocated:

- at most MAX_HEADER_BYTES (64 MiB) of header: the largest real headers are a few MB to ~20 MB, nearly all of it
  the tokenizer (Gemma 3's 262,144 tokens with scores and types; Qwen's 151,643 tokens and 151,387 merges), so
  64 MiB is three times the largest while a hostile "terabytes of metadata" stops after 64 MiB read;
- a count (tensors, keys, array items) or a string length larger than the bytes left under that cap is refused
  before any is read (each item takes at least one byte), and so is a tensor count above MAX_TENSORS;
- tensor infos as gguf.cpp checks them: at most 4 dimensions (GGML_MAX_DIMS), a known ggml type, a row that is
  a whole number of the type's blocks, sizes whose product fits 63 bits, and offsets that follow one another in
  the order given, each tensor's ggml_nbytes padded to the alignment ("tensor '…' has offset …, expected …").

A local file must also be long enough for the data its header describes; a file that ends exactly where its
header does is taken as a header-only copy (as the bundled ones are) and said to be so.
"""

from __future__ import annotations

import math
import os
import re
import struct
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .errors import CheckpointError, ConfigNotFoundError
from .values import Value

MAX_HEADER_BYTES = 64 * 1024 * 1024
MAX_TENSORS = 1_000_000  # the largest published GGUFs hold a few thousand tensors per file
MAX_KEYS = 1_000_000
MAX_DIMS = 4  # GGML_MAX_DIMS
KEEP_ITEMS = 4096  # arrays longer than this (a tokenizer's tokens, scores, merges) are kept as their length only
MAX_SPLITS = 1024
SPLIT = re.compile(r"^(?P<prefix>.+)-(?P<no>\d{5})-of-(?P<count>\d{5})\.gguf$")  # llama_split_path: %s-%05d-of-%05d
CHUNK = 1 << 20  # bytes read (or asked of the Hub) at a time, growing as the header proves long


class GgufTensor(Value):
    """One tensor's info: name, ggml type id, shape in ggml's order (ne[0], the row, first), and its file."""

    name: str
    kind: int
    shape: tuple[int, ...]
    file: str = ""

    @property
    def type_name(self) -> str:
        from .ggml import type_name

        return type_name(self.kind)

    @property
    def elements(self) -> int:
        return math.prod(self.shape)

    @property
    def bytes(self) -> int:
        from .ggml import nbytes

        return nbytes(self.kind, self.shape)


class GgufFile(Value):
    """What a GGUF's header (or a split set's headers) says: metadata, tensors, and how much data they take."""

    location: str
    files: tuple[str, ...]
    version: int
    metadata: dict[str, Any]  # arrays longer than KEEP_ITEMS are absent here; array_lengths has every array's length
    array_lengths: dict[str, int]
    tensors: tuple[GgufTensor, ...]
    data_bytes: int  # Σ ggml_nbytes over the tensors: the weights as stored
    padded_bytes: int  # the data sections as laid out (each tensor padded to the alignment)
    header_bytes: int  # Σ over the files of the bytes before the data section
    header_only: bool  # a local copy of the header without its data (the bundled files)

    def get(self, key: str, default: Any = None) -> Any:
        return self.metadata.get(key, default)

    @property
    def architecture(self) -> str:
        return str(self.metadata.get("general.architecture", ""))


class ByteSource:
    """Where a header's bytes come from: READ(offset, count) → at most COUNT bytes (fewer at the end)."""

    def __init__(self, label: str, read: Callable[[int, int], bytes], size: int | None):
        self.label, self.read, self.size = label, read, size


class _Cursor:
    """Reads a header front to back from a ByteSource, never more than MAX_HEADER_BYTES."""

    def __init__(self, source: ByteSource, limit: int = MAX_HEADER_BYTES):
        self.source, self.limit = source, limit
        self.buffer = bytearray()
        self.position = 0
        self.ended = False
        self.chunk = CHUNK

    def _fill(self, end: int, what: str) -> None:
        if end > self.limit:
            raise CheckpointError(
                f"{self.source.label}: the GGUF header runs past {self.limit // (1 << 20)} MiB at {what}; real headers "
                "are a few MB (the tokenizer): the file is corrupt or not a model"
            )
        while len(self.buffer) < end and not self.ended:
            count = min(max(end - len(self.buffer), self.chunk), self.limit - len(self.buffer))
            data = self.source.read(len(self.buffer), count)
            self.chunk = min(self.chunk * 2, 16 * CHUNK)
            if len(data) < count:
                self.ended = True
            self.buffer += data[:count]
        if len(self.buffer) < end:
            raise CheckpointError(
                f"{self.source.label}: the GGUF header is cut short at {what} (byte {len(self.buffer):,}); the file "
                "is truncated or not a GGUF"
            )

    def take(self, count: int, what: str) -> bytes:
        end = self.position + count
        if end > len(self.buffer):
            self._fill(end, what)
        data = bytes(self.buffer[self.position : end])
        self.position = end
        return data

    def left(self) -> int:
        """Bytes that may still be read under the cap (more are refused whatever the file holds)."""
        return self.limit - self.position

    def unpack(self, form: str, what: str) -> Any:
        return struct.unpack(form, self.take(struct.calcsize(form), what))[0]

    def count(self, what: str, least: int = 1) -> int:
        """A u64 count of items of at least LEAST bytes each, refused when they could not fit the cap."""
        value = self.unpack("<Q", what)
        if value * least > self.left():
            raise CheckpointError(
                f"{self.source.label}: {what} is {value:,}, more than the header (at most "
                f"{self.limit // (1 << 20)} MiB) can hold; the file is corrupt"
            )
        return value

    def string(self, what: str) -> str:
        data = self.take(self.count(f"the length of {what}"), what)
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            raise CheckpointError(f"{self.source.label}: {what} is not UTF-8 text; the file is corrupt") from None


def _scalar_formats() -> dict[int, str]:
    from gguf import GGUFValueType as T

    return {
        T.UINT8: "<B", T.INT8: "<b", T.UINT16: "<H", T.INT16: "<h", T.UINT32: "<I", T.INT32: "<i",
        T.FLOAT32: "<f", T.BOOL: "<B", T.UINT64: "<Q", T.INT64: "<q", T.FLOAT64: "<d",
    }  # fmt: skip


def parse_header(source: ByteSource) -> tuple[dict[str, Any], dict[str, int], list, int, int, int]:
    """One file's header → (metadata, array lengths, tensor infos as (name, kind, shape, offset), the end of the
    infos, the data section's start, version).

    Arrays longer than KEEP_ITEMS are walked (their length is needed to find what follows) but not kept."""
    from gguf import GGUF_DEFAULT_ALIGNMENT, GGUF_MAGIC, GGUFValueType

    from .ggml import known_type, nbytes, quant_sizes, row_fits

    label = source.label
    cursor = _Cursor(source)
    magic = cursor.unpack("<I", "the magic number")
    if magic != GGUF_MAGIC:
        raise CheckpointError(f"{label}: not a GGUF file (it does not start with 'GGUF'); is it the right file?")
    version = cursor.unpack("<I", "the version")
    if version not in (2, 3):
        raise CheckpointError(
            f"{label}: GGUF version {version} is not read (versions 2 and 3 are, as llama.cpp reads them); "
            "convert it again with a current llama.cpp"
        )
    # A tensor info takes at least 8 (name length) + 4 (dims) + 4 (type) + 8 (offset) bytes; a key–value 8 + 4 + 1.
    tensor_count = cursor.count("the tensor count", 24)
    if tensor_count > MAX_TENSORS:
        raise CheckpointError(
            f"{label}: {tensor_count:,} tensors is more than a GGUF can sensibly hold (limit {MAX_TENSORS:,})"
        )
    key_count = cursor.count("the metadata key count", 13)
    if key_count > MAX_KEYS:
        raise CheckpointError(f"{label}: {key_count:,} metadata keys is more than a GGUF can sensibly hold")
    formats = _scalar_formats()
    metadata: dict[str, Any] = {}
    lengths: dict[str, int] = {}

    def value(kind: int, key: str, depth: int) -> Any:
        if kind in formats:
            item = cursor.unpack(formats[kind], f"the value of {key!r}")
            if kind == GGUFValueType.BOOL:
                if item > 1:
                    raise CheckpointError(
                        f"{label}: {key!r} is a bool of value {item}, not 0 or 1; the file is corrupt"
                    )
                return bool(item)
            return item
        if kind == GGUFValueType.STRING:
            return cursor.string(f"the value of {key!r}")
        if kind == GGUFValueType.ARRAY:
            if depth > 1:
                raise CheckpointError(f"{label}: {key!r} nests arrays deeper than the format's tools write")
            inner = cursor.unpack("<I", f"the item type of {key!r}")
            if inner not in formats and inner not in (GGUFValueType.STRING, GGUFValueType.ARRAY):
                raise CheckpointError(
                    f"{label}: {key!r} is an array of unknown value type {inner}; the file is corrupt"
                )
            size = struct.calcsize(formats[inner]) if inner in formats else 8
            length = cursor.count(f"the length of {key!r}", size)
            lengths[key] = length
            if inner in formats and length > KEEP_ITEMS:  # skipped whole, its bytes read
                cursor.take(length * size, f"the value of {key!r}")
                return None
            items = [value(inner, key, depth + 1) for _ in range(length)]
            return items if length <= KEEP_ITEMS else None
        raise CheckpointError(
            f"{label}: {key!r} has unknown value type {kind}; the file is corrupt or newer than GGUF v3"
        )

    for index in range(key_count):
        key = cursor.string(f"metadata key {index}")
        kind = cursor.unpack("<I", f"the value type of {key!r}")
        if key in metadata or key in lengths:
            raise CheckpointError(f"{label}: metadata key {key!r} is given twice; the file is corrupt")
        item = value(kind, key, 0)
        if item is not None or kind != GGUFValueType.ARRAY:
            metadata[key] = item
    alignment = metadata.get("general.alignment", GGUF_DEFAULT_ALIGNMENT)
    if not isinstance(alignment, int) or isinstance(alignment, bool) or alignment <= 0 or alignment & (alignment - 1):
        raise CheckpointError(f"{label}: general.alignment is {alignment!r}, not a power of two")
    quant_sizes()  # the table, once, before the loop
    infos = []
    expected = 0
    names: set[str] = set()
    for index in range(tensor_count):
        name = cursor.string(f"the name of tensor {index}")
        if name in names:
            raise CheckpointError(f"{label}: tensor {name!r} is named twice; the file is corrupt")
        names.add(name)
        dims = cursor.unpack("<I", f"the dimensions of {name!r}")
        if not 1 <= dims <= MAX_DIMS:
            raise CheckpointError(f"{label}: tensor {name!r} has {dims} dimensions; ggml tensors have 1 to {MAX_DIMS}")
        shape = tuple(cursor.unpack("<Q", f"the shape of {name!r}") for _ in range(dims))
        if math.prod(shape) >= 1 << 63:
            raise CheckpointError(f"{label}: tensor {name!r} has shape {list(shape)}, too large for ggml's int64")
        kind = cursor.unpack("<I", f"the type of {name!r}")
        if not known_type(kind):
            raise CheckpointError(
                f"{label}: tensor {name!r} has ggml type {kind}, which the installed gguf package does not know "
                "(pip install -U gguf) or which ggml has removed"
            )
        if not row_fits(kind, shape[0]):
            raise CheckpointError(
                f"{label}: tensor {name!r} has rows of {shape[0]:,} weights, not a whole number of "
                f"{quant_sizes()[kind][0]} blocks ({quant_sizes()[kind][1]} weights)"
            )
        offset = cursor.unpack("<Q", f"the offset of {name!r}")
        if offset != expected:
            raise CheckpointError(
                f"{label}: tensor {name!r} has offset {offset:,}, expected {expected:,} (the tensors before it, each "
                "padded to the alignment, as gguf.cpp requires); the file is corrupt"
            )
        expected += -(-nbytes(kind, shape) // alignment) * alignment
        infos.append((name, kind, shape, offset))
    data_start = -(-cursor.position // alignment) * alignment
    return metadata, lengths, infos, cursor.position, data_start, version


def local_source(path: Path) -> ByteSource:
    """A local file as a ByteSource (its size known, read as asked)."""
    shown = os.fsencode(path).decode("utf-8", "backslashreplace")
    try:
        if not path.is_file():
            raise ConfigNotFoundError(f"{shown}: no such file" if not path.exists() else f"{shown}: not a regular file")
        size = path.stat().st_size
    except OSError as error:
        raise ConfigNotFoundError(f"{shown}: cannot read: {error.strerror or error}") from None

    def read(offset: int, count: int) -> bytes:
        try:
            with path.open("rb") as handle:
                handle.seek(offset)
                return handle.read(count)
        except OSError as error:
            raise ConfigNotFoundError(f"{shown}: cannot read: {error.strerror or error}") from None

    return ByteSource(shown, read, size)


def read_gguf(sources: list[tuple[str, ByteSource]], location: str) -> GgufFile:
    """The headers of one GGUF or a split set's parts (in order) → one GgufFile, the parts held to one another."""
    metadata: dict[str, Any] = {}
    lengths: dict[str, int] = {}
    tensors: list[GgufTensor] = []
    data_bytes = padded = header = 0
    header_only = False
    version = 0
    seen: dict[str, str] = {}
    for number, (file, source) in enumerate(sources):
        meta, arrays, infos, end_of_infos, data_start, version = parse_header(source)
        alignment = meta.get("general.alignment", 32)
        span = sum(-(-GgufTensor(n, k, s).bytes // alignment) * alignment for n, k, s, _ in infos)
        if source.size is not None and source.size < data_start + span:
            if end_of_infos <= source.size <= data_start:  # the header alone, as the bundled files are
                header_only = True
            else:
                raise CheckpointError(
                    f"{source.label}: the header describes {span:,} bytes of tensor data from byte {data_start:,}, "
                    f"but the file holds {source.size:,} bytes: it is truncated (an interrupted download?)"
                )
        if len(sources) > 1:
            _check_split(source.label, meta, number, len(sources))
        if number == 0:
            metadata, lengths = meta, arrays
        for name, kind, shape, _ in infos:
            if name in seen:
                raise CheckpointError(f"{location}: tensor {name!r} is stored in both {seen[name]} and {file}")
            seen[name] = file
            tensors.append(GgufTensor(name, kind, shape, file))
        data_bytes += sum(GgufTensor(n, k, s).bytes for n, k, s, _ in infos)
        padded += span
        header += data_start
    if len(sources) > 1:
        claimed = metadata.get("split.tensors.count")
        if isinstance(claimed, int) and claimed != len(tensors):
            raise CheckpointError(
                f"{location}: split.tensors.count is {claimed:,} but the parts hold {len(tensors):,} tensors"
            )
    return GgufFile(
        location, tuple(file for file, _ in sources), version, metadata, lengths, tuple(tensors), data_bytes, padded,
        header, header_only,
    )  # fmt: skip


def _check_split(label: str, meta: dict[str, Any], number: int, count: int) -> None:
    """A split part's split.no and split.count (llama.cpp's gguf-split writes them in every part)."""
    if meta.get("split.no") != number or meta.get("split.count") != count:
        raise CheckpointError(
            f"{label}: split.no {meta.get('split.no')!r} of split.count {meta.get('split.count')!r}, but it is part "
            f"{number + 1} of {count} by its name; the set is mixed up"
        )


def split_names(name: str) -> list[str] | None:
    """A split set's part names from any one of them (…-00001-of-00003.gguf), or None for a single file."""
    found = SPLIT.match(name)
    if found is None:
        return None
    count = int(found["count"])
    if not 1 <= int(found["no"]) <= count or count > MAX_SPLITS:
        raise ConfigNotFoundError(f"{name}: part {int(found['no'])} of {count} is not a part of a split set")
    return [f"{found['prefix']}-{number:05d}-of-{count:05d}.gguf" for number in range(1, count + 1)]


def read_local_gguf(path: Path) -> GgufFile:
    """A local .gguf file, or every part of the split set it belongs to."""
    parts = split_names(path.name)
    names = parts or [path.name]
    sources = [(name, local_source(path.parent / name)) for name in names]
    location = os.fsencode(path if parts is None else path.parent / parts[0]).decode("utf-8", "backslashreplace")
    return read_gguf(sources, location)


def is_gguf_path(model: str) -> bool:
    return model.lower().endswith(".gguf")
