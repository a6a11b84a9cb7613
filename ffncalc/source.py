"""Finding and reading a config.json: a path, a folder, a bundled config, or the Hub.

Resolution order for the MODEL argument:
1. an existing file or folder (a folder must hold config.json);
2. something that can only be a path (ends in .json, starts with ./ / ~) and does not exist: an error;
3. a bundled config whose Hub id matches (case-insensitively), or a preset (gpt3-175b …),
   unless a revision is asked for;
4. a Hub id, fetched with huggingface_hub (its cache, HF_TOKEN / `token`, HF_HUB_OFFLINE).
huggingface_hub is imported only on the last path: its download machinery is slow to import.
"""

from __future__ import annotations

import errno
import json
import os
import re
from pathlib import Path
from typing import Any

from .errors import ConfigNotFoundError, FfncalcError, HubError, InvalidConfigError, UsageError
from .values import Value

MAX_CONFIG_BYTES = 4 * 1024 * 1024  # real configs are a few KB; the largest multimodal ones ~100 KB
MAX_JSON_DEPTH = 64
BUNDLED_SEPARATOR = "__"  # org/name is bundled as org__name.json
# huggingface_hub's validate_repo_id, in ASCII: each part 1–96 of [A-Za-z0-9_.-], starting and ending with a
# letter, digit or underscore; no "--" or ".."; not ending in ".git". Checked here so that a bad id is a usage
# error before huggingface_hub is imported.
_REPO_PART = r"[A-Za-z0-9_](?:[A-Za-z0-9_.-]{0,94}[A-Za-z0-9_])?"
REPO_ID = re.compile(rf"(?:{_REPO_PART}/)?{_REPO_PART}", re.ASCII)


def is_repo_id(model: str) -> bool:
    """Whether huggingface_hub would accept MODEL as a repo id."""
    return (
        REPO_ID.fullmatch(model) is not None and "--" not in model and ".." not in model and not model.endswith(".git")
    )


def display_path(path: Path | str) -> str:
    """A path as text that can always be printed and written as JSON (undecodable bytes as \\xNN escapes)."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


class RawConfig(Value):
    """A config.json's parsed content and where it came from."""

    data: dict[str, Any]
    name: str  # what to call the model in output
    source: str  # "bundled", "file", "hub"
    location: str  # the file read
    note: str | None = None  # how the name was resolved, when it was not given in full


def data_dir(packaged: str, checkout: str) -> Path:
    """Data shipped inside the installed package, or under fixtures/ in a checkout."""
    inside = Path(__file__).parent / packaged
    if inside.is_dir():
        return inside
    return Path(__file__).resolve().parent.parent / "fixtures" / checkout


def bundled_dir() -> Path:
    """Bundled real configs (fixtures/configs)."""
    return data_dir("bundled_configs", "configs")


def presets_dir() -> Path:
    """Presets in ffncalc's own format, for models published without a config.json (fixtures/presets)."""
    return data_dir("bundled_presets", "presets")


GGUF_HEADER_SUFFIX = ".header.gguf"  # a bundled GGUF is its header alone, named <short name>.header.gguf


def bundled_gguf_dir() -> Path:
    """Bundled GGUF headers (fixtures/gguf; ffncalc/bundled_gguf in the wheel)."""
    return data_dir("bundled_gguf", "gguf")


def bundled_ggufs() -> dict[str, Path]:
    """Short name → bundled GGUF header, e.g. qwen2.5-0.5b-instruct-q4_k_m."""
    folder = bundled_gguf_dir()
    if not folder.is_dir():
        return {}
    return {
        name.removesuffix(GGUF_HEADER_SUFFIX): folder / name
        for name in sorted(os.listdir(folder))
        if name.endswith(GGUF_HEADER_SUFFIX)
    }


def is_gguf(model: str, file: str | None = None) -> bool:
    """Whether MODEL (with `file` FILE) is read as a GGUF: a .gguf path, a Hub repo with a .gguf file, or the short
    name of a bundled GGUF header. Here, not in gguf_models, so that a config.json model imports none of GGUF's code."""
    return file is not None or model.lower().endswith(".gguf") or find_bundled_gguf(model) is not None


def find_bundled_gguf(model: str) -> tuple[str, Path] | None:
    """The bundled GGUF header MODEL names: its short name in any case, with or without .gguf or .header.gguf;
    None for anything else (a path that exists is the file, not a bundled name)."""
    if "/" in model or "\\" in model or len(model) > 200:
        return None
    wanted = model.lower().removesuffix(".gguf").removesuffix(".header")
    for name, path in bundled_ggufs().items():
        if name.lower() == wanted:
            if model.lower().endswith(".gguf") and Path(model).exists():
                return None
            return name, path
    return None


def _json_files(folder: Path) -> list[str]:
    """The names of FOLDER's .json files, sorted (os.listdir: a glob makes a Path of every file, and a command asks
    this on every start)."""
    return sorted(name for name in os.listdir(folder) if name.endswith(".json"))


def presets() -> dict[str, Path]:
    """Preset name → file, e.g. gpt3-175b."""
    folder = presets_dir()
    return {name.removesuffix(".json"): folder / name for name in _json_files(folder)}


def bundled_models() -> dict[str, Path]:
    """Hub id → bundled file, for every bundled config."""
    folder = bundled_dir()
    return {
        name.removesuffix(".json").replace(BUNDLED_SEPARATOR, "/", 1): folder / name for name in _json_files(folder)
    }


def find_bundled(model: str) -> tuple[str, Path] | None:
    """The bundled config named by a Hub id (any case), or by a name that only one bundled model has."""
    folder = bundled_dir()
    exact = model.replace("/", BUNDLED_SEPARATOR, 1) + ".json"
    if exact in _json_files(folder):  # the Hub id as bundled, in its own case: the common case, found at once
        return model, folder / exact
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


def _squashed(name: str) -> str:
    """A name as people type it, for matching: lower case, no separators (Llama-3-8B → llama38b); dots stay (3.1)."""
    return re.sub(r"[-_\s]+", "", name.lower())


def bundled_by_short_name(model: str) -> list[str]:
    """The bundled Hub ids a name without its organisation points to, best match first (several: ambiguous).

    A name matches where its squashed form equals a bundled name's, starts it (Mixtral-8x7B → Mixtral-8x7B-v0.1) or
    ends it after the organisation's own name (Llama-3-8B → Meta-Llama-3-8B); the best tier wins. Where it only ends
    a longer name (llama-8b in DeepSeek-R1-Distill-Llama-8B) or stands inside one (gemma3 → gemma-3-1b-it), the
    nearest names by spelling are listed beside it, so that the user chooses.
    """
    wanted = _squashed(model)
    if not wanted or "/" in model:
        return []
    tiers: list[list[str]] = [[], [], [], []]
    for repo_id in bundled_models():
        name = _squashed(repo_id.split("/")[-1])
        if name == wanted:
            tiers[0].append(repo_id)
        elif name.startswith(wanted):
            tiers[1].append(repo_id)
        elif name.endswith(wanted) and name[: -len(wanted)] in _squashed(repo_id.split("/")[0]):
            tiers[1].append(repo_id)  # the rest is the organisation's own name (Meta-Llama-3-8B for Llama-3-8B)
        elif name.endswith(wanted):
            tiers[2].append(repo_id)
        elif wanted in name:
            tiers[3].append(repo_id)
    found = next((tier for tier in tiers if tier), [])
    if found and found is not tiers[0] and found is not tiers[1]:
        # Only the end or the middle of a longer name matched (llama-8b in DeepSeek-R1-Distill-Llama-8B): another
        # lineage, perhaps not the model meant. The nearest by spelling are offered beside it, so the user chooses.
        found = list(dict.fromkeys([*found, *closest_bundled(model)]))
    return found


# Suffixes of a model's variants (chat, instruction-tuned, dated or quantized releases): without them, a name
# often names the base model that is bundled.
VARIANT_SUFFIX = re.compile(
    r"[-_](instruct|chat|it|base|hf|thinking|fp8|fp16|bf16|awq|gptq|gguf|\d{4}|v\d[\w.]*)$", re.I
)


def closest_bundled(model: str, limit: int = 3) -> list[str]:
    """The bundled Hub ids nearest MODEL as people name models: the base of a variant first (Qwen3-30B-A3B for
    Qwen3-30B-A3B-Instruct-2507), then by spelling."""
    import difflib

    ids = {repo_id.lower(): repo_id for repo_id in bundled_models()}
    wanted = model.lower()
    found: list[str] = sorted((ids[key] for key in ids if wanted.startswith(key)), key=len, reverse=True)
    base = model.split("/")[-1]
    while VARIANT_SUFFIX.search(base):
        base = VARIANT_SUFFIX.sub("", base)
        exact = [repo_id for repo_id in bundled_models() if _squashed(repo_id.split("/")[-1]) == _squashed(base)]
        if exact:
            found += exact
            break
    names = {_squashed(repo_id.split("/")[-1]): repo_id for repo_id in bundled_models()}
    found += [names[key] for key in difflib.get_close_matches(_squashed(base), list(names), n=limit, cutoff=0.75)]
    found += [ids[key] for key in difflib.get_close_matches(wanted, list(ids), n=limit, cutoff=0.75)]
    return list(dict.fromkeys(found))[:limit]


def suggestion(model: str) -> str:
    """What to say after a name found nowhere: the bundled models it is closest to, a variant's base first."""
    near = closest_bundled(model)
    if not near:
        return "`ffncalc models` lists the bundled ones"
    variant = _squashed(model.split("/")[-1]).startswith(_squashed(near[0].split("/")[-1]))
    caveat = " (the base model: a variant's config may differ)" if variant else ""
    return f"bundled and usable offline: {', '.join(near)}{caveat}"


def load_raw_config(model: str, revision: str | None = None, token: str | None = None) -> RawConfig:
    """Find MODEL's config.json (path, folder, bundled, preset, Hub) and parse it into a dict."""
    if not model.strip():
        raise UsageError("MODEL is empty; name a config.json, a folder, a bundled model or a Hub id")
    path, shown = local_path(model), display_path(model)
    is_dir, is_file = _exists(path, shown)
    if is_dir or is_file:
        if revision is not None:
            raise UsageError(f"`revision` applies to Hub ids; {shown} is a local {'folder' if is_dir else 'file'}")
        config_path = path / "config.json" if is_dir else path
        if not _exists(config_path, display_path(config_path))[1]:
            raise ConfigNotFoundError(
                f"{shown}: folder has no config.json; point at the folder of a model or at its config.json"
            )
        # A local folder named like a bundled Hub id says which one was read.
        name = display_path(path) + (" (local folder)" if is_dir and find_bundled(model) is not None else "")
        return RawConfig(read_config_file(config_path), name, "file", display_path(config_path))
    if looks_like_path(model):
        raise ConfigNotFoundError(f"{shown}: no such file or folder")
    preset = presets().get(model.lower())
    if preset is not None:
        if revision is not None:
            raise UsageError(f"{model} is a preset (published without a config.json): it has no Hub revisions")
        return RawConfig(read_config_file(preset), model.lower(), "preset", str(preset))
    if revision is None:
        bundled = find_bundled(model)
        if bundled is not None:
            repo_id, bundled_path = bundled
            return RawConfig(read_config_file(bundled_path), repo_id, "bundled", str(bundled_path))
        matches = bundled_by_short_name(model)
        if len(matches) == 1:
            path = bundled_models()[matches[0]]
            note = f"{model!r} is taken as the bundled {matches[0]} (the one bundled model of that name)"
            return RawConfig(read_config_file(path), matches[0], "bundled", str(path), note)
        if len(matches) > 1:
            shown_matches = ", ".join(matches[:6]) + (f" and {len(matches) - 6} more" if len(matches) > 6 else "")
            raise ConfigNotFoundError(
                f"{_abbreviated(shown)!r} names {len(matches)} bundled models: {shown_matches}; name one"
            )
    if not is_repo_id(model):
        raise ConfigNotFoundError(
            f"{_abbreviated(shown)!r} is neither an existing path, a bundled model, nor a Hub id like org/name; "
            + suggestion(model)
        )
    if "/" not in model and revision is None and offline():
        raise ConfigNotFoundError(
            f"{model!r} is not a bundled model (HF_HUB_OFFLINE is set, so the Hub was not asked); " + suggestion(model)
        )
    from .hub import download_config

    try:
        downloaded = download_config(model, revision=revision, token=token)
    except FfncalcError as error:
        if "/" not in model:  # a short name people type for a model, not an old Hub id: say so first
            raise ConfigNotFoundError(
                f"{model!r} is not a bundled model, and the Hub did not give it either ({error}); Hub ids are "
                f"org/name; {suggestion(model)}"
            ) from None
        near = closest_bundled(model)
        if near and isinstance(error, HubError):
            raise type(error)(f"{error}; {suggestion(model)}") from None
        raise
    label = model if revision is None else f"{model}@{revision}"
    return RawConfig(read_config_file(downloaded), label, "hub", str(downloaded))


def offline() -> bool:
    """huggingface_hub's offline switch, read as it reads it (1, ON, YES, TRUE), without importing it."""
    value = os.environ.get("HF_HUB_OFFLINE") or os.environ.get("TRANSFORMERS_OFFLINE") or ""
    return value.upper() in ("1", "ON", "YES", "TRUE")


def local_path(model: str) -> Path:
    """MODEL as a path, ~ and ~user expanded; an unknown user's ~ is an error, not a crash."""
    try:
        return Path(model).expanduser()
    except RuntimeError:  # Path.expanduser: "Could not determine home directory"
        raise ConfigNotFoundError(
            f"{display_path(model)}: no such user's home folder; write the path in full"
        ) from None


def _exists(path: Path, shown: str) -> tuple[bool, bool]:
    """(is a folder, is a regular file); a name the file system cannot hold is an error that says so."""
    try:
        is_dir, is_file = path.is_dir(), path.is_file()
        if not (is_dir or is_file) and os.path.lexists(path) and path.exists():
            raise ConfigNotFoundError(f"{_abbreviated(shown)}: not a regular file or folder (a pipe or a device?)")
        return is_dir, is_file
    except OSError as error:
        if error.errno == errno.ENAMETOOLONG:
            raise ConfigNotFoundError(f"{_abbreviated(shown)}: name too long for the file system") from None
        raise ConfigNotFoundError(f"{_abbreviated(shown)}: cannot read: {error.strerror or error}") from None


def _abbreviated(text: str, limit: int = 120) -> str:
    """TEXT cut to LIMIT characters for an error line (a name of thousands of characters is not repeated whole)."""
    return text if len(text) <= limit else f"{text[:limit]}(+{len(text) - limit:,} characters)"


def looks_like_path(model: str) -> bool:
    return model.endswith(".json") or model.startswith((".", "/", "~")) or model.count("/") > 1 or "\\" in model


def read_config_file(path: Path) -> dict[str, Any]:
    """Read and parse a config.json: at most MAX_CONFIG_BYTES, UTF-8, strict JSON, an object at the top."""
    try:
        size = path.stat().st_size
        if size > MAX_CONFIG_BYTES:
            raise InvalidConfigError(
                f"{display_path(path)}: {size:,} bytes is too large for a config.json (limit {MAX_CONFIG_BYTES:,}); is it the right file?"
            )
        with path.open("rb") as handle:
            content = handle.read(MAX_CONFIG_BYTES + 1)
    except OSError as error:
        raise ConfigNotFoundError(f"{display_path(path)}: cannot read: {error.strerror or error}") from None
    if len(content) > MAX_CONFIG_BYTES:
        raise InvalidConfigError(f"{display_path(path)}: larger than {MAX_CONFIG_BYTES:,} bytes; is it the right file?")
    return parse_config_text(content, display_path(path))


def parse_config_text(content: bytes, label: str) -> dict[str, Any]:
    """bytes → dict, refusing non-UTF-8, nesting deeper than MAX_JSON_DEPTH, and non-objects.

    NaN and Infinity are read (Python's json does; real configs carry them in fields ffncalc
    ignores, e.g. Nemotron-H's time_step_limit) and then refused by the schema wherever a size
    belongs, with the field's name.
    """
    try:
        text = content.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise InvalidConfigError(f"{label}: not UTF-8 text (byte {error.start}); a config.json is JSON text") from None
    if _nesting_depth(text) > MAX_JSON_DEPTH:
        raise InvalidConfigError(f"{label}: JSON nested deeper than {MAX_JSON_DEPTH} levels; not a model config")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise InvalidConfigError(
            f"{label}: invalid JSON at line {error.lineno}, column {error.colno}: {error.msg}"
        ) from None
    except (ValueError, RecursionError) as error:
        raise InvalidConfigError(f"{label}: not readable as JSON ({error})") from None
    if not isinstance(data, dict):
        raise InvalidConfigError(f"{label}: the JSON is a {type(data).__name__}, not an object of config fields")
    return data


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
