"""stdout and stderr as the command line writes them.

- A stream whose encoding cannot hold the tables' characters (``PYTHONIOENCODING=ascii``, an old
  terminal) gets ASCII stand-ins (— as -, × as x, … as ...) instead of an encoding error.
- A failed write (a full disk, a reader that closed the pipe) becomes one ``OutputError``, which the
  CLI reports in one line, or not at all for a closed pipe, as ``head`` users expect.
"""

from __future__ import annotations

import codecs
import os
import sys
from typing import Any, TextIO

from .errors import FfncalcError

ASCII_ERRORS = "ffncalc-ascii"

# The non-ASCII characters ffncalc's own text uses, spelled in ASCII; anything else (a model's name) becomes "?".
ASCII_STAND_INS = {
    "—": "-", "–": "-", "−": "-", "─": "-", "━": "=", "│": "|", "┊": ":", "└": "`-",
    "…": "...", "·": "*", "•": "*", "×": "x", "→": "->", "≈": "~", "≥": ">=", "≤": "<=",
    "²": "^2", "³": "^3", "⁰": "^0", "⁹": "^9", "₂": "2", "ᵀ": "^T", "Σ": "sum", "Π": "prod",
    "α": "alpha", "β": "beta", "λ": "lambda", "Ψ": "psi", "∈": "in", "§": "S",
}  # fmt: skip


class OutputError(FfncalcError):
    """stdout could not take the output (a full disk, a closed pipe)."""

    exit_code = 74  # EX_IOERR

    def __init__(self, error: OSError) -> None:
        super().__init__(f"cannot write the output: {error.strerror or error}")
        self.closed_pipe = isinstance(error, BrokenPipeError)


def _ascii_stand_in(error: UnicodeError) -> tuple[str, int]:
    if not isinstance(error, UnicodeEncodeError):
        raise error
    text = error.object[error.start : error.end]
    return "".join(ASCII_STAND_INS.get(char, "?") for char in text), error.end


codecs.register_error(ASCII_ERRORS, _ascii_stand_in)


def can_encode(stream: Any, text: str = "—×…─") -> bool:
    """Whether STREAM's encoding holds TEXT (a stream without one is taken to be UTF-8)."""
    encoding = getattr(stream, "encoding", None) or "utf-8"
    try:
        text.encode(encoding)
    except (UnicodeEncodeError, LookupError):
        return False
    return True


class GuardedOutput:
    """A text stream whose write failures raise OutputError; everything else is the wrapped stream's."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except OSError as error:
            raise OutputError(error) from None

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError as error:
            raise OutputError(error) from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def prepare() -> None:
    """ASCII stand-ins on streams that need them; stdout's write failures as OutputError."""
    for stream in (sys.stdout, sys.stderr):
        if not can_encode(stream) and hasattr(stream, "reconfigure"):
            stream.reconfigure(errors=ASCII_ERRORS)
    if not isinstance(sys.stdout, GuardedOutput):
        sys.stdout = GuardedOutput(sys.stdout)


def silence_stdout() -> None:
    """Point stdout at /dev/null so that the interpreter's last flush cannot fail again after the error is told."""
    try:
        descriptor = os.open(os.devnull, os.O_WRONLY)
        os.dup2(descriptor, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # not a real file (a test's StringIO): nothing to flush later
        pass
