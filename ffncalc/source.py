"""Finding and reading a config.json: a path, a folder, a bundled config, or the Hub.

Resolution order for the MODEL argument:
1. an existing file or folder (a folder must hold config.json);
2. something that can only be a path (ends in .json, starts with ./ / ~) and does not exist: an error;
3. a bundled config whose Hub id matches (case-insensitively), unless a revision is asked for;
4. a Hub id, fetched with huggingface_hub (its cache, HF_TOKEN / --token, HF_HUB_OFFLINE).
huggingface_hub is imported only on the last path: its download machinery is slow to import.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .errors import ConfigNotFoundError, HubError, InvalidConfigError

MAX_CONFIG_BYTES = 4 * 1024 * 1024  # real configs are a few KB; the largest multimodal ones ~100 KB
MAX_JSON_DEPTH = 64
BUNDLED_SEPARATOR = "__"  # org/name is bundled as org__name.json
REPO_ID = re.compile(r"^(?:[\w.-]{1,96}/)?[\w.-]{1,96}$")


@dataclass(frozen=True)
class RawConfig:
    """A config.json's parsed content and where it came from."""

    data: dict[str, Any]
    name: str  # what to call the model in output
    source: str  # "bundled", "file", "hub"
    location: str  # the file read


def bundled_dir() -> Path:
    """Bundled configs: inside the installed package, or fixtures/configs in a checkout."""
    packaged = Path(__file__).parent / "bundled_configs"
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parent.parent / "fixtures" / "configs"


def bundled_models() -> dict[str, Path]:
    """Hub id → bundled file, for every bundled config."""
    models = {}
    for path in sorted(bundled_dir().glob("*.json")):
        stem = path.name.removesuffix(".json")
        models[stem.replace(BUNDLED_SEPARATOR, "/", 1)] = path
    return models


def find_bundled(model: str) -> tuple[str, Path] | None:
    """The bundled config named by a Hub id (any case), or by a name that only one bundled model has."""
    models = bundled_models()
    wanted = model.lower()
    for repo_id, path in models.items():
        if repo_id.lower() == wanted:
            return repo_id, path
    if "/" not in model:
        matches = [(repo_id, path) for repo_id, path in models.items() if repo_id.split("/")[-1].lower() == wanted]
        if len(matches) == 1:
            return matches[0]
    return None


def load_raw_config(model: str, revision: str | None = None, token: str | None = None) -> RawConfig:
    """Find MODEL's config.json (path, folder, bundled, Hub) and parse it into a dict."""
    path = Path(model).expanduser()
    if path.is_dir():
        config_path = path / "config.json"
        if not config_path.is_file():
            raise ConfigNotFoundError(f"{model}: folder has no config.json; point at the folder of a model or at its config.json")
        return RawConfig(read_config_file(config_path), str(path), "file", str(config_path))
    if path.is_file():
        return RawConfig(read_config_file(path), str(path), "file", str(path))
    if _looks_like_path(model):
        raise ConfigNotFoundError(f"{model}: no such file or folder")
    if revision is None:
        bundled = find_bundled(model)
        if bundled is not None:
            repo_id, bundled_path = bundled
            return RawConfig(read_config_file(bundled_path), repo_id, "bundled", str(bundled_path))
    if not REPO_ID.match(model) or "--" in model or ".." in model:
        raise ConfigNotFoundError(
            f"{model!r} is neither an existing path, a bundled model (see `ffncalc models`), nor a Hub id like org/name"
        )
    downloaded = download_config(model, revision=revision, token=token)
    label = model if revision is None else f"{model}@{revision}"
    return RawConfig(read_config_file(downloaded), label, "hub", str(downloaded))


def _looks_like_path(model: str) -> bool:
    return (
        model.endswith(".json")
        or model.startswith((".", "/", "~"))
        or model.count("/") > 1
        or "\\" in model
    )


def read_config_file(path: Path) -> dict[str, Any]:
    """Read and parse a config.json: at most MAX_CONFIG_BYTES, UTF-8, strict JSON, an object at the top."""
    try:
        size = path.stat().st_size
        if size > MAX_CONFIG_BYTES:
            raise InvalidConfigError(
                f"{path}: {size:,} bytes is too large for a config.json (limit {MAX_CONFIG_BYTES:,}); is it the right file?"
            )
        with path.open("rb") as handle:
            content = handle.read(MAX_CONFIG_BYTES + 1)
    except OSError as error:
        raise ConfigNotFoundError(f"{path}: cannot read: {error.strerror or error}") from None
    if len(content) > MAX_CONFIG_BYTES:
        raise InvalidConfigError(f"{path}: larger than {MAX_CONFIG_BYTES:,} bytes; is it the right file?")
    return parse_config_text(content, str(path))


def parse_config_text(content: bytes, label: str) -> dict[str, Any]:
    """bytes → dict, refusing non-UTF-8, NaN/Infinity, nesting deeper than MAX_JSON_DEPTH, and non-objects."""
    try:
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise InvalidConfigError(f"{label}: not UTF-8 text (byte {error.start}); a config.json is JSON text") from None
    if _nesting_depth(text) > MAX_JSON_DEPTH:
        raise InvalidConfigError(f"{label}: JSON nested deeper than {MAX_JSON_DEPTH} levels; not a model config")
    try:
        data = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as error:
        raise InvalidConfigError(f"{label}: invalid JSON at line {error.lineno}, column {error.colno}: {error.msg}") from None
    except ValueError as error:
        raise InvalidConfigError(f"{label}: {error}") from None
    if not isinstance(data, dict):
        raise InvalidConfigError(f"{label}: the JSON is a {type(data).__name__}, not an object of config fields")
    return data


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON; sizes must be plain integers")


def _nesting_depth(text: str) -> int:
    """Deepest bracket nesting outside strings; checked before json.loads, which recurses."""
    depth = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def download_config(repo_id: str, revision: str | None, token: str | None) -> Path:
    """Fetch config.json alone with huggingface_hub (its cache, token and offline mode)."""
    from huggingface_hub import hf_hub_download
    from huggingface_hub.utils import logging as hub_logging

    from . import __version__

    # huggingface_hub logs each retry as a warning; our one-line error says what happened in the end.
    hub_logging.set_verbosity_error()
    try:
        return Path(
            hf_hub_download(
                repo_id,
                "config.json",
                revision=revision,
                token=token,
                library_name="ffncalc",
                library_version=__version__,
            )
        )
    except Exception as error:  # noqa: BLE001 - every failure becomes one of ours, or is re-raised
        raise explain_hub_failure(error, repo_id, revision, token) from None


def _saved_token() -> str | None:
    """The token huggingface_hub would send: HF_TOKEN or the stored login."""
    from huggingface_hub import get_token

    return get_token()


def explain_hub_failure(error: Exception, repo_id: str, revision: str | None, token: str | None) -> Exception:
    """The one-line ffncalc error for a huggingface_hub failure: what happened and what to do."""
    from huggingface_hub import constants
    from huggingface_hub import errors as hub_errors

    where = repo_id if revision is None else f"{repo_id}@{revision}"
    if isinstance(error, hub_errors.GatedRepoError):
        if token or _saved_token():
            return HubError(
                f"{repo_id} is gated and the token has no access: accept its terms on the Hub with that account, "
                "or use another token (--token / HF_TOKEN)"
            )
        return HubError(
            f"{repo_id} is gated: accept its terms on the Hub, then log in (`hf auth login`), set HF_TOKEN or pass --token"
        )
    if isinstance(error, hub_errors.RevisionNotFoundError):
        return ConfigNotFoundError(f"{repo_id} has no revision {revision!r}; check --revision")
    if isinstance(error, hub_errors.RepositoryNotFoundError):
        hint = "check the id, or the token's access" if token else "check the id, or pass --token / set HF_TOKEN if it is private"
        return ConfigNotFoundError(f"no model {repo_id!r} on the Hub: {hint}")
    if isinstance(error, hub_errors.RemoteEntryNotFoundError):
        return ConfigNotFoundError(f"{where} has no config.json; is it a transformers model?")
    if isinstance(error, hub_errors.LocalEntryNotFoundError):
        if constants.HF_HUB_OFFLINE:
            return HubError(
                f"{where}: config.json is not in the local cache and HF_HUB_OFFLINE is set; go online once, or unset HF_HUB_OFFLINE"
            )
        # The Hub failed and the cache had nothing: the cause says how the Hub failed.
        cause = error.__cause__ or error.__context__
        if isinstance(cause, Exception) and not isinstance(cause, hub_errors.LocalEntryNotFoundError):
            return explain_hub_failure(cause, repo_id, revision, token)
        return HubError(f"{where}: the Hub could not be reached and config.json is not cached; check the connection or HF_ENDPOINT")
    if isinstance(error, hub_errors.HfHubHTTPError):
        status = getattr(getattr(error, "response", None), "status_code", None)
        if status in (401, 403):
            return HubError(f"{where}: the Hub refused access ({status}); log in, set HF_TOKEN or pass --token")
        return HubError(f"{where}: the Hub answered HTTP {status or 'error'}; try again later")
    kinds = {cls.__name__ for cls in type(error).__mro__}
    if "TimeoutException" in kinds or isinstance(error, TimeoutError):
        return HubError(f"{where}: the Hub ({constants.ENDPOINT}) did not answer in time; try again, or check HF_ENDPOINT")
    if "TransportError" in kinds or isinstance(error, OSError):
        return HubError(f"{where}: cannot reach the Hub ({constants.ENDPOINT}); check the connection or HF_ENDPOINT")
    return error


# --- checkpoints: what a folder or a Hub repo stores, read from headers only ---------------------

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
    if _looks_like_path(model):
        raise ConfigNotFoundError(f"{model}: no such file or folder")
    repo_id = find_bundled(model)[0] if find_bundled(model) else model
    return fetch_hub_checkpoint(repo_id, revision, token)
