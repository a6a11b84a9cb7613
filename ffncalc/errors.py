"""ffncalc's errors: each carries a one-line message that names the problem and the fix.

The CLI prints ``Error: <message>`` for any of them and exits with ``exit_code``; the
library raises them as they are. Foreign exceptions (pydantic's, huggingface_hub's) are
translated into these where they are caught, so callers see one hierarchy.
"""

from __future__ import annotations


class FfncalcError(Exception):
    """Base class: ``str(error)`` is the whole one-line message."""

    exit_code = 1


class ConfigNotFoundError(FfncalcError):
    """No config.json where the user pointed (path, folder, bundled name or Hub repo)."""

    exit_code = 2


class InvalidConfigError(FfncalcError):
    """The config exists but is not a readable, sane model configuration."""

    exit_code = 3


class UnsupportedModelError(FfncalcError):
    """A valid config of a model_type that ffncalc has no adapter for."""

    exit_code = 4


class HubError(FfncalcError):
    """The Hub could not give us the config: gated, offline, server error, unreachable."""

    exit_code = 5


class CheckpointError(FfncalcError):
    """A checkpoint's files are unreadable as safetensors: a header that breaks the format's rules."""

    exit_code = 6


class UsageError(FfncalcError):
    """A value that makes no sense (a context of -1, a multiplier of 0).

    The library names what it was given by its own field, in backticks (`zero_stage must be 0, 1, 2 or 3`); the
    command line writes each such field as the option that sets it (``cli.option_of``, from the options each command declares), so one message serves both."""

    exit_code = 2
