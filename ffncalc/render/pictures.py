"""Pictures of the tables: --svg and --html, drawn as rich draws them, written whole or not at all.

Paths are checked when the options are read, before anything is computed: a pipe, a device or a folder would
block or fail only after the tables were printed. Both files are written to temporary names beside their targets
and renamed into place only when every one is complete, so a failed HTML write leaves no SVG behind.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import tempfile
from pathlib import Path

from rich.console import Console

from ..errors import FfncalcError, UsageError

SUFFIXES = {"--svg": (".svg",), "--html": (".html", ".htm")}
MIN_WIDTH, MAX_WIDTH = 40, 400
NATURAL_CEILING = 240  # a picture's default width: wide enough that no table splits, at most this
CHAR_WIDTH = 0.61  # rich's export_svg: a cell is 0.61 × the font size wide


class PictureWriteError(FfncalcError):
    """A picture could not be written (a full disk): nothing was left behind."""

    exit_code = 74  # EX_IOERR, as for stdout


def check_path(option: str, path: str) -> str:
    """PATH as --svg/--html takes it: a new or regular file whose folder exists, named for what is written."""
    if path in ("", "-"):
        raise UsageError(
            f"{option} needs a file name, e.g. {option} out{SUFFIXES[option][0]} (pictures go to a file, not stdout)"
        )
    if not path.lower().endswith(SUFFIXES[option]):
        raise UsageError(
            f"{option} {path!r}: {option} writes {option[2:].upper()}; name the file {SUFFIXES[option][0]}"
        )
    target = Path(path)
    try:
        if len(os.fsencode(target.name)) > 255:
            raise UsageError(f"{option} {path[:60]!r}…: the file name is longer than a file system allows")
        if os.path.lexists(target):
            info = os.stat(target)  # follows a link: a dangling one fails here
            if not stat.S_ISREG(info.st_mode):
                raise UsageError(f"{option} {path!r}: not a regular file (a folder, a pipe or a device); name a file")
        folder = target.parent if str(target.parent) else Path(".")
        if not folder.is_dir():
            raise UsageError(f"{option} {path!r}: the folder {str(folder)!r} does not exist")
        if not os.access(folder, os.W_OK):
            raise UsageError(f"{option} {path!r}: the folder {str(folder)!r} cannot be written")
    except FileNotFoundError:
        raise UsageError(f"{option} {path!r}: a link to nothing; name a file") from None
    except OSError as error:
        raise UsageError(f"{option} {path!r}: {error.strerror or error}") from None
    return path


def check_pair(svg: str | None, html: str | None, as_json: bool) -> None:
    """Refuse pictures with --json (JSON has no picture) and one path for both pictures (one would overwrite the other)."""
    if as_json and (svg or html):
        raise UsageError("--svg and --html draw the tables; --json prints none: choose one")
    if svg and html and os.path.realpath(svg) == os.path.realpath(html):
        raise UsageError(f"--svg and --html name the same file {svg!r}; give each its own")


def natural_width(renderable: object) -> int:
    """The width at which no table of RENDERABLE splits: its widest table (drawn at MAX_WIDTH), at least 80."""
    from .layout import GridTable

    widest = 80
    stack = [renderable]
    while stack:
        item = stack.pop()
        if isinstance(item, GridTable):
            widest = max(widest, item.width)
        stack.extend(getattr(item, "renderables", ()) or ())
    return min(widest, NATURAL_CEILING)


def save(renderable: object, width: int, title: str, svg: str | None, html: str | None) -> None:
    """Write RENDERABLE at WIDTH columns as an SVG picture and/or an HTML page, both or neither."""
    recorder = Console(record=True, width=width, file=open(os.devnull, "w"), force_terminal=True)  # noqa: SIM115
    recorder.print(renderable)
    documents = []
    if svg is not None:
        documents.append((svg, portable_svg(recorder.export_svg(title=title, clear=False))))
    if html is not None:
        documents.append((html, recorder.export_html(clear=False)))
    written: list[tuple[str, str]] = []
    try:
        for path, text in documents:
            folder = os.path.dirname(os.path.abspath(path))
            handle, temporary = tempfile.mkstemp(prefix=".ffncalc-", suffix=".tmp", dir=folder)
            written.append((temporary, path))
            with os.fdopen(handle, "w", encoding="utf-8") as file:
                file.write(text)
        for temporary, path in written:
            os.replace(temporary, path)
    except OSError as error:
        for temporary, _ in written:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
        raise PictureWriteError(f"cannot write the picture: {error.strerror or error}; nothing was written") from None


_TEXT = re.compile(
    r'(<text [^>]*?x=")([\d.]+)("[^>]*?textLength=")([\d.]+)("[^>]*>)((?:&#160;)*)(.*?)((?:&#160;)*)(</text>)'
)


def portable_svg(svg: str, font_size: float = 20) -> str:
    """rich's SVG with each text run's leading and trailing spaces turned into its position and length.

    rich pads cells with no-break spaces inside each run; SVG renderers outside browsers (rsvg-convert) drop a
    run's leading spaces, pushing right-aligned numbers and indented rows left. Moving the run by the spaces'
    width instead draws the same picture everywhere."""
    cell = CHAR_WIDTH * font_size
    space = "&#160;"

    def moved(match: re.Match[str]) -> str:
        lead, body, trail = len(match[6]) // len(space), match[7], len(match[8]) // len(space)
        if not body:  # only spaces: the background rectangle, drawn apart, is all there is
            return ""
        x = float(match[2]) + lead * cell
        length = float(match[4]) - (lead + trail) * cell
        return f"{match[1]}{x:g}{match[3]}{length:g}{match[5]}{body}{match[9]}"

    return _TEXT.sub(moved, svg)
