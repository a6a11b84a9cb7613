"""Regenerate the docs that come from the tool itself (tests fail when they drift):

- docs/cli-reference.md: the --help of ffncalc and of every command, at 80 columns;
- README.md: every `<!-- output: ffncalc … -->` block, refilled from a real run;
- docs/*.svg: the headline commands' real output, exported by rich's own console.

    python tools/write_docs.py
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent.parent / "docs"
HELP_ENVIRONMENT = {"COLUMNS": "80", "NO_COLOR": "1", "TERM": "dumb"}  # what a pipe or a default terminal gets


def commands() -> list[str]:
    """Every command of the app, in the order --help lists them."""
    from ffncalc.cli import app

    return [command.name or command.callback.__name__.replace("_", "-") for command in app.registered_commands]


def help_text(*args: str) -> str:
    """What `ffncalc ARGS --help` prints at 80 columns, trailing spaces removed."""
    return printed(*args, "--help")


def printed(*args: str) -> str:
    """What `ffncalc ARGS` prints to a pipe at 80 columns, trailing spaces removed: main() run in this process with
    the environment a pipe or a default terminal gives (a process each cost the docs test 30 Python start-ups)."""
    from ffncalc.cli import main

    saved_environment, saved_argv = dict(os.environ), sys.argv
    os.environ.pop("FORCE_COLOR", None)
    os.environ.update(HELP_ENVIRONMENT)
    sys.argv = ["ffncalc", *args]
    stdout, stderr = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            try:
                main()
            except SystemExit as done:
                if done.code not in (0, None):
                    raise RuntimeError(f"ffncalc {' '.join(args)} failed: {stderr.getvalue()}") from None
    finally:
        os.environ.clear()
        os.environ.update(saved_environment)
        sys.argv = saved_argv
    return "\n".join(line.rstrip() for line in stdout.getvalue().splitlines()).strip("\n")


def cli_reference() -> str:
    sections = [
        "# ffncalc command-line reference",
        "",
        "Generated from `--help` by `python tools/write_docs.py`; a test checks it is current.",
        "",
    ]
    for args in [[]] + [[command] for command in commands()]:
        title = " ".join(["ffncalc", *args])
        sections += [f"## `{title}`", "", "```text", help_text(*args), "```", ""]
    return "\n".join(sections)


README_OUTPUT = re.compile(r"<!-- output: (ffncalc[^\n]*) -->\n.*?<!-- end output -->", re.S)


def command_output(command: str) -> str:
    """What `command` prints at 80 columns, trailing spaces removed."""
    return printed(*command.split()[1:])


def readme_with_current_output(readme: str) -> str:
    """Every `<!-- output: ffncalc … -->` block of the README, refilled from a real run."""

    def refill(match: re.Match) -> str:
        command = match[1]
        return (
            f"<!-- output: {command} -->\n```console\n$ {command}\n{command_output(command)}\n```\n<!-- end output -->"
        )

    return README_OUTPUT.sub(refill, readme)


def svg_pictures() -> dict[str, str]:
    """name → SVG of a real run of the renderers the CLI uses, at 100 columns."""
    from rich.console import Console

    from ffncalc.api import account, compare, crossover
    from ffncalc.render.comparison import compare_table
    from ffncalc.render.compute import crossover_chart, crossover_headline, crossover_table
    from ffncalc.render.params import params_tables

    pictures = {}
    runs = {
        "params-llama-3.1-8b": (
            "ffncalc params meta-llama/Llama-3.1-8B",
            lambda: [params_tables(account("meta-llama/Llama-3.1-8B"))],
        ),
        "crossover-128k": (
            "ffncalc crossover --ctx 128k",
            lambda: (lambda r: [crossover_headline(r), crossover_table(r), crossover_chart(r)])(
                crossover("meta-llama/Llama-3.1-8B", "128k")
            ),
        ),
        "compare": ("ffncalc compare", lambda: [compare_table(compare(), 100)]),
    }
    for name, (title, renderables) in runs.items():
        console = Console(record=True, width=100, file=io.StringIO(), force_terminal=True, color_system="truecolor")
        for renderable in renderables():
            console.print(renderable)
        pictures[name] = console.export_svg(title=f"$ {title}")
    return pictures


def main() -> None:
    DOCS.mkdir(exist_ok=True)
    (DOCS / "cli-reference.md").write_text(cli_reference())
    print("wrote docs/cli-reference.md")
    readme = DOCS.parent / "README.md"
    readme.write_text(readme_with_current_output(readme.read_text()))
    print("refilled the command output in README.md")
    for name, svg in svg_pictures().items():
        (DOCS / f"{name}.svg").write_text(svg)
        print(f"wrote docs/{name}.svg")


if __name__ == "__main__":
    main()
