"""The Hugging Face Hub, through huggingface_hub: a config.json, and safetensors headers for ``verify``.

huggingface_hub is imported here only, and only when the Hub is actually asked: its download
machinery is slow to import, and a bundled or local config never needs it. Its cache, HF_TOKEN
and HF_HUB_OFFLINE apply as they do everywhere else; its failures become one-line ffncalc errors.
"""

from __future__ import annotations

from pathlib import Path

from .errors import CheckpointError, ConfigNotFoundError, HubError

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


def safetensors_metadata(repo_id: str, revision: str | None, token: str | None):
    """Every safetensors header of a Hub repo, read with range requests (huggingface_hub's get_safetensors_metadata)."""
    from huggingface_hub import HfApi
    from huggingface_hub import errors as hub_errors
    from huggingface_hub.utils import logging as hub_logging

    hub_logging.set_verbosity_error()
    try:
        return HfApi().get_safetensors_metadata(repo_id, revision=revision, token=token)
    except hub_errors.NotASafetensorsRepoError:
        raise ConfigNotFoundError(
            f"{repo_id} has neither model.safetensors nor model.safetensors.index.json; verify reads safetensors headers"
        ) from None
    except hub_errors.SafetensorsParsingError as error:
        raise CheckpointError(f"{repo_id}: a safetensors header could not be parsed ({error})") from None
    except Exception as error:  # noqa: BLE001 - translated like every Hub failure
        raise explain_hub_failure(error, repo_id, revision, token) from None
