"""--svg and --html: paths checked before anything is computed, pictures written whole or not at all, at a width
where no table splits, drawn so that SVG renderers outside browsers place every number as browsers do."""

from __future__ import annotations

import errno
import os
import re

import pytest

from ffncalc.render import pictures

from .conftest import run_main

LLAMA = "meta-llama/Llama-3.1-8B"


def refused(*args: str) -> str:
    run = run_main("params", LLAMA, *args)
    assert run.exit_code == 2
    assert run.stdout == ""
    assert len(run.stderr.splitlines()) == 1
    return run.stderr


def test_a_fifo_is_refused_before_anything_is_opened(tmp_path):
    fifo = tmp_path / "out.svg"
    os.mkfifo(fifo)
    assert "not a regular file" in refused("--svg", str(fifo))  # opening it would block for ever


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("out.png", "--svg writes SVG; name the file .svg"),
        ("-", "--svg needs a file name"),
        ("", "--svg needs a file name"),
        ("missing/out.svg", "does not exist"),
        ("a" * 300 + ".svg", "longer than a file system allows"),
    ],
)
def test_a_path_that_cannot_take_the_picture_is_one_error_line(tmp_path, monkeypatch, name, message):
    monkeypatch.chdir(tmp_path)
    assert message in refused("--svg", name)
    assert os.listdir(tmp_path) == []


def test_a_folder_a_dangling_link_and_a_path_under_a_file_are_refused(tmp_path):
    (tmp_path / "dir.svg").mkdir()
    (tmp_path / "dangling.svg").symlink_to(tmp_path / "nothing")
    (tmp_path / "file").write_text("")
    assert "not a regular file" in refused("--svg", str(tmp_path / "dir.svg"))
    assert "a link to nothing" in refused("--svg", str(tmp_path / "dangling.svg"))
    assert "does not exist" in refused("--svg", str(tmp_path / "file" / "out.svg"))


def test_json_with_a_picture_is_refused(tmp_path):
    assert refused("--json", "--svg", str(tmp_path / "out.svg")) == (
        "Error: --svg and --html draw the tables; --json prints none: choose one\n"
    )
    assert not (tmp_path / "out.svg").exists()


def test_one_path_for_both_pictures_is_refused(tmp_path):
    (tmp_path / "out.html").write_text("")
    (tmp_path / "out.svg").symlink_to(tmp_path / "out.html")
    # the suffix names the format; a link named .svg to the HTML file would still be one file for two pictures
    stderr = refused("--svg", str(tmp_path / "out.svg"), "--html", str(tmp_path / "out.html"))
    assert stderr.startswith("Error: --svg and --html name the same file")


def test_a_full_disk_exits_74_prints_nothing_and_leaves_no_file(tmp_path, monkeypatch):
    real_fdopen = os.fdopen

    class Full:
        def __init__(self, handle):
            self.file = real_fdopen(handle, "w", encoding="utf-8")

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.file.close()

        def write(self, text):
            raise OSError(errno.ENOSPC, "No space left on device")

    calls = []

    def fdopen(handle, *args, **kwargs):
        calls.append(handle)
        # the SVG is written, then the HTML finds the disk full
        return real_fdopen(handle, *args, **kwargs) if len(calls) == 1 else Full(handle)

    monkeypatch.setattr(pictures.os, "fdopen", fdopen)
    run = run_main("params", LLAMA, "--svg", str(tmp_path / "a.svg"), "--html", str(tmp_path / "a.html"))
    assert run.exit_code == 74
    assert run.stdout == ""
    assert run.stderr == "Error: cannot write the picture: No space left on device; nothing was written\n"
    assert os.listdir(tmp_path) == []


def test_both_pictures_are_written_with_the_models_title(tmp_path):
    run = run_main("params", LLAMA, "--svg", str(tmp_path / "a.svg"), "--html", str(tmp_path / "a.html"))
    assert run.exit_code == 0
    svg = (tmp_path / "a.svg").read_text()
    assert f"ffncalc&#160;—&#160;{LLAMA}" in svg and ">Rich<" not in svg
    assert "8,030,261,248" in (tmp_path / "a.html").read_text()


def test_the_default_picture_width_keeps_the_flops_table_whole(tmp_path):
    # At 80 columns flops splits its prefill share into a second table; the picture is as wide as the table.
    run_main("flops", LLAMA, "--svg", str(tmp_path / "a.svg"))
    svg = (tmp_path / "a.svg").read_text()
    assert "split&#160;in" not in svg and "Prefill" in svg


def test_width_sets_the_pictures_width(tmp_path):
    def picture_width(columns: int) -> float:
        run_main("params", LLAMA, "--svg", str(tmp_path / f"{columns}.svg"), "--width", str(columns))
        view_box = re.search(r'viewBox="0 0 ([\d.]+)', (tmp_path / f"{columns}.svg").read_text())
        assert view_box is not None
        return float(view_box[1])

    # rich draws a cell 0.61 × 20 px = 12.2 px wide: 20 more columns are 244 px more.
    assert picture_width(120) - picture_width(100) == pytest.approx(244)


def test_no_text_run_starts_or_ends_with_padding_spaces(tmp_path):
    run_main("params", LLAMA, "--svg", str(tmp_path / "a.svg"))
    runs = re.findall(r"<text [^>]*>(.*?)</text>", (tmp_path / "a.svg").read_text())
    assert runs
    assert not [text for text in runs if text.startswith("&#160;") or text.endswith("&#160;")]


def test_a_right_aligned_number_is_moved_by_its_padding():
    # rich pads "266,240" to 12 cells with 5 leading spaces and 1 trailing: the run moves 5 cells (5 × 12.2 px)
    # right and loses 6 cells of length.
    run = '<text class="r2" x="329.4" y="239.6" textLength="183" clip-path="url(#l)">'
    padded = run + "&#160;" * 5 + "266,240&#160;</text>"
    assert pictures.portable_svg(padded) == (
        '<text class="r2" x="390.4" y="239.6" textLength="109.8" clip-path="url(#l)">266,240</text>'
    )
