"""The Hugging Face Hub, through huggingface_hub: a config.json, and safetensors headers for ``verify``.

huggingface_hub is imported here only, and only when the Hub is actually asked: its download
machinery is slow to import, and a bundled or local config never needs it. Its cache, HF_TOKEN
and HF_HUB_OFFLINE apply as they do everywhere else; its failures become one-line ffncalc errors
(``explain_hub_failure``: one table from failure to message).

huggingface_hub retries a failed request five times with a back-off of 1 + 2 + 4 + 8 + 8 seconds. An
attempt here is bounded instead: it stops at the first sign that the network is down (a name that does
not resolve, a refused connection), and after 10 seconds in all when the Hub answers with errors or not
at all (at least HF_HUB_ETAG_TIMEOUT + 2, so raising huggingface_hub's own timeout buys time;
FFNCALC_HUB_DEADLINE sets it outright). Each retry is reported to ``reporter``, which the command line
shows as a status line on a terminal.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from .errors import CheckpointError, ConfigNotFoundError, FfncalcError, HubError

T = TypeVar("T")
Reporter = Callable[[str], None]

#: Where progress goes (the command line sets a status line; the library stays silent).
reporter: Reporter | None = None
DEFAULT_DEADLINE = 10.0


def report(message: str) -> None:
    if reporter is not None:
        reporter(message)


# huggingface_hub reads these when it is imported, and fails on a bad value with a traceback of its own.
WHOLE_SECONDS = ("HF_HUB_ETAG_TIMEOUT", "HF_HUB_DOWNLOAD_TIMEOUT")


def check_environment() -> None:
    """Refuse, with one line naming it, an environment variable huggingface_hub would choke on."""
    for name in WHOLE_SECONDS:
        text = os.environ.get(name)
        if text is not None and not (text.strip().isdigit() and 0 < int(text) <= 3600):
            raise HubError(f"{name} must be a whole number of seconds from 1 to 3600, e.g. 10 (got {text!r})")
    endpoint = os.environ.get("HF_ENDPOINT")
    if endpoint is not None:
        check_endpoint(endpoint)
    home = os.environ.get("HF_HOME")
    if home is not None and os.path.exists(home) and not os.path.isdir(home):
        raise HubError(f"HF_HOME ({home}) is a file; point it at a folder for huggingface_hub's cache")


def check_endpoint(endpoint: str) -> None:
    """HF_ENDPOINT as huggingface_hub 2.4 reads it when imported (constants.py: urlsplit(ENDPOINT).hostname, which
    raises ValueError on a bracket left open), then as its HTTP client does (a port of 0 to 65535): anything else
    would fail inside huggingface_hub, after its import has printed to stdout."""
    problem = None
    if not re.match(r"^https?://[^\s/?#]+[^\s]*$", endpoint):
        problem = "must be an http(s) URL"
    else:
        from urllib.parse import urlsplit

        try:
            parts = urlsplit(endpoint.rstrip("/"))
            parts.port  # noqa: B018 - reading it checks it (ValueError: not a number, or out of 0-65535)
            if not parts.hostname:
                problem = "names no host"
        except ValueError as error:
            problem = f"is not a usable URL ({' '.join(str(error).split())})"
    if problem:
        raise HubError(f"HF_ENDPOINT {problem}, e.g. https://huggingface.co (got {endpoint!r})")


def deadline() -> float:
    """Seconds an attempt may take in all: FFNCALC_HUB_DEADLINE, else max(10, HF_HUB_ETAG_TIMEOUT + 2)."""
    text = os.environ.get("FFNCALC_HUB_DEADLINE")
    if text is not None:
        try:
            value = float(text)
        except ValueError:
            value = -1.0
        if not 0 < value <= 3600:
            raise HubError(f"FFNCALC_HUB_DEADLINE must be a number of seconds above 0 and at most 3600 (got {text!r})")
        return value
    etag = os.environ.get("HF_HUB_ETAG_TIMEOUT")
    return max(DEFAULT_DEADLINE, int(etag) + 2 if etag else 0)


class _Attempt:
    """What the current attempt has seen: the network down (a connection that could not be made, by exception type)
    and the last HTTP status the Hub answered with that huggingface_hub retries (429 and 5xx). huggingface_hub's client reports both to it (``_client``)."""

    def __init__(self) -> None:
        self.unreachable = threading.Event()
        self.status = ""


_attempt = _Attempt()


class _RetryReport(logging.Handler):
    """huggingface_hub's retry warnings, passed to the status line (for display only: nothing is decided on them)."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)

    def emit(self, record: logging.LogRecord) -> None:
        report(record.getMessage().strip())


def bounded(call: Callable[[], T], what: str, repo_id: str, revision: str | None, token: str | None) -> T:
    """Run a huggingface_hub CALL in a worker thread, and stop waiting when the network is down or time runs out."""
    limit = deadline()
    from huggingface_hub.utils import logging as hub_logging

    global _attempt
    hub_logging.set_verbosity_warning()
    logger = hub_logging.get_logger("huggingface_hub")
    watch = _attempt = _Attempt()
    # Its warnings are ours to report, not to print: its own handlers step aside while it works.
    handlers, logger.handlers = logger.handlers, [_RetryReport()]
    propagate, logger.propagate = logger.propagate, False
    outcome: dict[str, Any] = {}
    done = threading.Event()

    def work() -> None:
        try:
            outcome["value"] = call()
        except BaseException as error:
            outcome["error"] = error
        finally:
            done.set()

    report(what)
    threading.Thread(target=work, daemon=True).start()
    try:
        waited = 0.0
        while not done.wait(0.05):
            waited += 0.05
            if watch.unreachable.is_set():
                raise unreachable_error(repo_id, revision)
            if waited >= limit:
                what = f"kept answering HTTP {watch.status}" if watch.status else "did not answer"
                raise HubError(
                    f"{_where(repo_id, revision)}: the Hub ({_endpoint()}) {what} for {limit:g} s; "
                    "try again later, or allow more time with FFNCALC_HUB_DEADLINE"
                )
    finally:
        if done.is_set():  # an abandoned attempt may still retry: keep it quiet until the process ends
            logger.handlers, logger.propagate = handlers, propagate
    if "error" in outcome:
        error = outcome["error"]
        if isinstance(error, FfncalcError):
            raise error
        raise explain_hub_failure(error, repo_id, revision, token) from None
    return outcome["value"]


def check_request(revision: str | None, token: str | None) -> None:
    """Refuse a `revision` or token that cannot be sent as they are (huggingface_hub would fail on them obscurely)."""
    if revision is not None and not SAFE_REVISION.fullmatch(revision):
        raise HubError(
            f"`revision` {revision!r}: use a branch, a tag or a commit hash (letters, digits, . _ - /, no '..')"
        )
    if revision is not None and ".." in revision:
        raise HubError(f"`revision` {revision!r}: '..' cannot be part of a revision")
    for where, value in (("`token`", token), ("HF_TOKEN", os.environ.get("HF_TOKEN"))):
        if value is None:
            continue
        if not value.strip():
            raise HubError(f"{where} is empty; pass a Hub access token (hf_…) or leave it out")
        if any(char.isspace() or not char.isprintable() for char in value.strip()) or not value.isascii():
            raise HubError(
                f"{where} holds spaces, line breaks or non-ASCII characters; a Hub token is one ASCII word (hf_…)"
            )


SAFE_REVISION = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/-]{0,199}")
# What huggingface_hub turns into file names in its cache (snapshots/<commit>/, blobs/<etag>): a commit is 40 hex
# digits, an ETag a hash. Anything else from the server (a "../" in a header) would be written outside the cache.
SAFE_COMMIT = re.compile(r"[0-9a-f]{40}")
SAFE_ETAG = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,127}")


def guard_cache() -> None:
    """From now on, huggingface_hub's requests go through ffncalc's client (its public ``set_client_factory``),
    which refuses a server's answer that would name a cache file outside the cache, and notes a network that is down.

    hf_hub_download names cache files after the X-Repo-Commit and ETag headers without checking them
    (huggingface_hub 2.4); a mirror or an HF_ENDPOINT that answers with "../" in one would make it write
    anywhere. The headers are checked as each answer arrives, before anything is written. Installed once per
    process (an abandoned attempt may still be running in its thread), it only ever refuses such answers.
    """
    global _guarded
    if _guarded:
        return
    from huggingface_hub import set_client_factory

    set_client_factory(_client)
    _guarded = True


_guarded = False


def _client() -> Any:
    """huggingface_hub's HTTP client as its default factory makes it (redirects followed, no overall timeout: it sets
    its own per call), with ffncalc's checks: offline mode honoured, answers checked, a failed connection noted."""
    import httpx2
    from huggingface_hub import constants
    from huggingface_hub.errors import OfflineModeIsEnabled

    def offline(request: Any) -> None:
        if constants.HF_HUB_OFFLINE:  # what huggingface_hub's own client does first
            raise OfflineModeIsEnabled(f"Cannot reach {request.url}: offline mode is enabled (HF_HUB_OFFLINE)")

    def checked(response: Any) -> None:
        # The commit names a folder even in a "not found" answer (huggingface_hub's .no_exist marker); an ETag names
        # a blob only in an answer that delivers one.
        _check_header("X-Repo-Commit", response.headers.get("X-Repo-Commit"), SAFE_COMMIT)
        if response.status_code >= 400:
            if response.status_code == 429 or response.status_code >= 500:  # what huggingface_hub retries
                _attempt.status = str(response.status_code)
            return
        for name in ("X-Linked-Etag", "ETag"):
            _check_header(name, _etag(response.headers.get(name)), SAFE_ETAG)

    class Watched(httpx2.BaseTransport):
        """A transport that notes, by exception type, a connection that could not be made (the network is down)."""

        def __init__(self) -> None:
            self.inner = httpx2.HTTPTransport()

        def handle_request(self, request: Any) -> Any:
            try:
                return self.inner.handle_request(request)
            except httpx2.ConnectError:
                _attempt.unreachable.set()
                raise

        def close(self) -> None:
            self.inner.close()

    return httpx2.Client(
        event_hooks={"request": [offline], "response": [checked]},
        follow_redirects=True,
        timeout=None,
        transport=Watched(),
    )


def _etag(value: str | None) -> str | None:
    """An ETag as huggingface_hub names files after it: without a weak W/ prefix and quotes."""
    return None if value is None else value.removeprefix("W/").strip('"')


def _check_header(name: str, value: str | None, pattern: re.Pattern[str]) -> None:
    if value is not None and not pattern.fullmatch(value):
        raise HubError(
            f"the Hub ({_endpoint()}) answered with an unsafe {name} header {value[:60]!r}; "
            "nothing was written: check HF_ENDPOINT, or the mirror it points to"
        )


def download_config(repo_id: str, revision: str | None, token: str | None) -> Path:
    """Fetch config.json alone with huggingface_hub (its cache, token and offline mode), within the deadline."""
    check_environment()
    check_request(revision, token)
    from huggingface_hub import hf_hub_download

    from . import __version__

    guard_cache()

    def fetch() -> Path:
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

    return bounded(
        fetch, f"Fetching config.json of {_where(repo_id, revision)} from the Hub…", repo_id, revision, token
    )


def safetensors_metadata(repo_id: str, revision: str | None, token: str | None):
    """Every safetensors header of a Hub repo, read with range requests (huggingface_hub's get_safetensors_metadata)."""
    check_environment()
    check_request(revision, token)
    from huggingface_hub import HfApi

    def fetch():
        try:
            return HfApi().get_safetensors_metadata(repo_id, revision=revision, token=token)
        except ValueError as error:  # json.JSONDecodeError included: an index that is not JSON
            if "json" not in type(error).__name__.lower() and not isinstance(error, UnicodeDecodeError):
                raise
            raise CheckpointError(
                f"{repo_id}: model.safetensors.index.json is not JSON ({_clip(str(error))})"
            ) from None
        except (AttributeError, TypeError, KeyError) as error:
            # huggingface_hub's parser stumbled on an entry of unexpected type: in the index (JSON, but not
            # {"weight_map": {...}}) or in a shard's header (an entry that is not {"dtype", "shape", "data_offsets"}).
            # Which one its exception does not say, so the message names both; a local copy is checked entry by entry.
            raise CheckpointError(
                f"{repo_id}: a safetensors header (or model.safetensors.index.json) is not laid out as the format says "
                f"({type(error).__name__}: {_clip(str(error))}); `ffncalc verify` on a downloaded copy names the entry"
            ) from None

    return bounded(
        fetch, f"Reading the safetensors headers of {_where(repo_id, revision)} from the Hub…", repo_id, revision, token
    )


def unreachable_error(repo_id: str, revision: str | None) -> HubError:
    """The network is down: say so, and how to work offline (the caller adds which bundled configs are close)."""
    from huggingface_hub import constants

    return HubError(
        f"{_where(repo_id, revision)}: cannot reach the Hub ({constants.ENDPOINT}); work offline with "
        "HF_HUB_OFFLINE=1 (cached configs) or a local config.json"
    )


def _endpoint() -> str:
    from huggingface_hub import constants

    return constants.ENDPOINT


def _where(repo_id: str, revision: str | None) -> str:
    return repo_id if revision is None else f"{repo_id}@{revision}"


def _clip(text: str, limit: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _saved_token() -> str | None:
    """The token huggingface_hub would send: HF_TOKEN or the stored login."""
    from huggingface_hub import get_token

    return get_token()


def explain_hub_failure(error: BaseException, repo_id: str, revision: str | None, token: str | None) -> Exception:
    """The one-line ffncalc error for a huggingface_hub failure: what happened and what to do."""
    from huggingface_hub import constants
    from huggingface_hub import errors as hub_errors

    where = _where(repo_id, revision)
    # Most specific first: GatedRepoError is a RepositoryNotFoundError, which is an HfHubHTTPError.
    table: list[tuple[type[BaseException] | tuple[type[BaseException], ...], Callable[[], Exception]]] = [
        (hub_errors.GatedRepoError, lambda: _gated(repo_id, token)),
        (
            hub_errors.RevisionNotFoundError,
            lambda: ConfigNotFoundError(f"{repo_id} has no revision {revision!r}; check `revision`"),
        ),
        (
            hub_errors.RepositoryNotFoundError,
            lambda: ConfigNotFoundError(
                f"no model {repo_id!r} on the Hub: "
                + (
                    "check the id, or the token's access"
                    if token
                    else "check the id, or pass `token` / set HF_TOKEN if it is private"
                )
            ),
        ),
        (hub_errors.RemoteEntryNotFoundError, lambda: _missing_file(error, where)),
        (
            hub_errors.NotASafetensorsRepoError,
            lambda: ConfigNotFoundError(
                f"{repo_id} has neither model.safetensors nor model.safetensors.index.json; verify reads safetensors headers"
            ),
        ),
        (
            hub_errors.SafetensorsParsingError,
            lambda: CheckpointError(f"{repo_id}: a safetensors header could not be parsed ({_clip(str(error))})"),
        ),
        (hub_errors.LocalEntryNotFoundError, lambda: _not_cached(error, repo_id, revision, token)),
        (hub_errors.HfHubHTTPError, lambda: _http(error, where)),
    ]
    for kinds, message in table:
        if isinstance(error, kinds):
            return message()
    import httpx2  # huggingface_hub's HTTP client, whose failures reach us as they are

    if isinstance(error, httpx2.TooManyRedirects):
        return HubError(
            f"{where}: the Hub ({constants.ENDPOINT}) redirects in a loop; check HF_ENDPOINT, or try again later"
        )
    if isinstance(error, (httpx2.TimeoutException, TimeoutError)):
        return HubError(
            f"{where}: the Hub ({constants.ENDPOINT}) did not answer in time; try again, or check HF_ENDPOINT"
        )
    if isinstance(error, (httpx2.TransportError, OSError)):
        return unreachable_error(repo_id, revision)
    if isinstance(error, (ValueError, TypeError)):  # huggingface_hub validating an id, a revision or an endpoint
        return HubError(f"{where}: {_clip(str(error))}")
    return error if isinstance(error, Exception) else HubError(f"{where}: {error!r}")


def _missing_file(error: BaseException, where: str) -> Exception:
    """config.json missing: not a transformers model; a shard the index names missing: an incomplete upload."""
    response = getattr(error, "response", None)
    url = str(getattr(getattr(response, "request", None), "url", "") or getattr(response, "url", ""))
    filename = (
        url.split("/resolve/", 1)[1].split("/", 1)[1].split("?")[0] if "/resolve/" in url and url.count("/") else ""
    )
    if filename in ("", "config.json"):
        return ConfigNotFoundError(f"{where} has no config.json; is it a transformers model?")
    return CheckpointError(
        f"{where}: {filename} is missing, though the checkpoint's index names it; the upload is incomplete"
    )


def _gated(repo_id: str, token: str | None) -> HubError:
    if token or _saved_token():
        return HubError(
            f"{repo_id} is gated and the token has no access: accept its terms on the Hub with that account, "
            "or use another token (`token` / HF_TOKEN)"
        )
    return HubError(
        f"{repo_id} is gated: accept its terms on the Hub, then log in (`hf auth login`), set HF_TOKEN or pass `token`"
    )


def _not_cached(error: BaseException, repo_id: str, revision: str | None, token: str | None) -> Exception:
    from huggingface_hub import constants
    from huggingface_hub import errors as hub_errors

    where = _where(repo_id, revision)
    if constants.HF_HUB_OFFLINE:
        return HubError(
            f"{where}: config.json is not in the local cache and HF_HUB_OFFLINE is set; go online once, or unset HF_HUB_OFFLINE"
        )
    # The Hub failed and the cache had nothing: the cause says how the Hub failed.
    cause = error.__cause__ or error.__context__
    if isinstance(cause, Exception) and not isinstance(cause, hub_errors.LocalEntryNotFoundError):
        return explain_hub_failure(cause, repo_id, revision, token)
    return HubError(
        f"{where}: the Hub could not be reached and config.json is not cached; check the connection or HF_ENDPOINT"
    )


def _http(error: BaseException, where: str) -> HubError:
    status = getattr(getattr(error, "response", None), "status_code", None)
    if status in (401, 403):
        return HubError(f"{where}: the Hub refused access ({status}); log in, set HF_TOKEN or pass `token`")
    return HubError(f"{where}: the Hub answered HTTP {status or 'error'}; try again later")


def hub_gguf(repo_id: str, filename: str, revision: str | None, token: str | None) -> Any:
    """A GGUF's header (or a split set's headers) in a Hub repo, read with range requests: only the bytes the header
    takes (gguf_source caps them at 64 MiB), never the weights. A copy in huggingface_hub's cache is read instead."""
    from .gguf_source import ByteSource, read_gguf, read_local_gguf, split_names

    check_environment()
    check_request(revision, token)
    from huggingface_hub import hf_hub_url, try_to_load_from_cache
    from huggingface_hub.errors import EntryNotFoundError
    from huggingface_hub.utils import build_hf_headers, get_session, hf_raise_for_status

    from . import __version__

    cached = try_to_load_from_cache(repo_id, filename, revision=revision)
    if isinstance(cached, str) and split_names(filename) is None:
        return read_local_gguf(Path(cached))
    from huggingface_hub import constants

    if constants.HF_HUB_OFFLINE:
        raise HubError(
            f"{_where(repo_id, revision)}/{filename}: not in the local cache and HF_HUB_OFFLINE is set; download it, "
            "or pass the local path of the .gguf"
        )
    guard_cache()
    headers = build_hf_headers(token=token, library_name="ffncalc", library_version=__version__)

    def source(name: str) -> ByteSource:
        url = hf_hub_url(repo_id, name, revision=revision)

        def read(offset: int, count: int) -> bytes:
            ranged = {**headers, "Range": f"bytes={offset}-{offset + count - 1}"}
            with get_session().stream("GET", url, headers=ranged) as response:
                if response.status_code == 416:  # asked past the end of the file
                    return b""
                try:
                    hf_raise_for_status(response)
                except EntryNotFoundError:
                    raise ConfigNotFoundError(
                        f"{_where(repo_id, revision)} has no file {name!r}; check `file` (the repo's file list on the Hub)"
                    ) from None
                skip = offset if response.status_code == 200 else 0  # a server that ignores Range: read up to it
                data = bytearray()
                for chunk in response.iter_bytes():
                    data += chunk
                    if len(data) >= skip + count:
                        break
                return bytes(data[skip : skip + count])

        return ByteSource(f"{_where(repo_id, revision)}/{name}", read, None)

    names = split_names(filename) or [filename]

    def fetch() -> Any:
        return read_gguf([(name, source(name)) for name in names], f"{_where(repo_id, revision)}/{names[0]}")

    return bounded(
        fetch,
        f"Reading the GGUF header of {_where(repo_id, revision)}/{filename} from the Hub…",
        repo_id,
        revision,
        token,
    )
