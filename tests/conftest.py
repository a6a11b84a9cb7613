"""Shared test helpers: run the CLI in-process through `main` (its real error handling), and paths."""

from __future__ import annotations

import atexit
import json
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

# The catalog cache (ffncalc/catalog.py) of this test run: its own folder, never the user's, removed when the
# process ends (each xdist worker makes its own).
os.environ["FFNCALC_CACHE_DIR"] = tempfile.mkdtemp(prefix="ffncalc-test-cache-")

from ffncalc.cli import main

atexit.register(shutil.rmtree, os.environ["FFNCALC_CACHE_DIR"], ignore_errors=True)

ROOT = Path(__file__).resolve().parent.parent
BUNDLED = ROOT / "fixtures" / "configs"
EXPECTED = Path(__file__).resolve().parent / "expected"


# pytest keeps each test module's rewritten assertions as bytecode beside it and reads it on the next run, unless
# bytecode is not to be written (PYTHONDONTWRITEBYTECODE, set on this machine and its CI): then every worker of
# every run rewrites all ~270 modules again, about 10 s of a run's collection. The suite's own modules may be cached.
sys.dont_write_bytecode = False


def pytest_configure(config):
    """Compile the package's bytecode once, before the workers start: the suite runs ffncalc in hundreds of
    subprocesses, and where PYTHONDONTWRITEBYTECODE is set (as on this machine and its CI) each would compile the
    whole package again (a clean clone's suite took 130 s instead of 70). pip compiles an installed wheel the same."""
    if not hasattr(config, "workerinput"):  # the controlling process, not each xdist worker
        import compileall

        compileall.compile_dir(ROOT / "ffncalc", quiet=1)


@dataclass
class Run:
    exit_code: int
    stdout: str
    stderr: str

    def json(self):
        return json.loads(self.stdout)


def run_main(*args: str) -> Run:
    """Run `ffncalc ARGS…` through main in-process, capturing its output (usable inside hypothesis tests)."""
    import contextlib
    import io
    import os

    stdout, stderr = io.StringIO(), io.StringIO()
    saved_argv, saved_debug = sys.argv, os.environ.pop("FFNCALC_DEBUG", None)
    sys.argv = ["ffncalc", *args]
    try:
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            try:
                main()
                exit_code = 0
            except SystemExit as exit:
                exit_code = exit.code if isinstance(exit.code, int) else (0 if exit.code is None else 1)
    finally:
        sys.argv = saved_argv
        if saved_debug is not None:
            os.environ["FFNCALC_DEBUG"] = saved_debug
    return Run(exit_code, stdout.getvalue(), stderr.getvalue())


@pytest.fixture
def ffncalc(capsys, monkeypatch):
    """Run `ffncalc ARGS…` as a user would (through main), at a fixed width, without colour."""
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.delenv("FFNCALC_DEBUG", raising=False)

    def run(*args: str) -> Run:
        monkeypatch.setattr(sys, "argv", ["ffncalc", *args])
        try:
            main()
            exit_code = 0
        except SystemExit as exit:
            exit_code = exit.code if isinstance(exit.code, int) else (0 if exit.code is None else 1)
        captured = capsys.readouterr()
        return Run(exit_code, captured.out, captured.err)

    return run


@pytest.fixture
def write_config(tmp_path):
    """Write a config dict (or raw text/bytes) to tmp_path/<name>/config.json and return the file's path."""

    def write(content, name: str = "model") -> Path:
        folder = tmp_path / name
        folder.mkdir(exist_ok=True)
        path = folder / "config.json"
        if isinstance(content, bytes):
            path.write_bytes(content)
        elif isinstance(content, str):
            path.write_text(content)
        else:
            path.write_text(json.dumps(content))
        return path

    return write


def tiny_llama(**overrides) -> dict:
    """A small, valid Llama config: hidden 64, FFN 128, 2 layers, 4 heads, vocab 1000."""
    config = {
        "model_type": "llama",
        "vocab_size": 1000,
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
    }
    config.update(overrides)
    return config
