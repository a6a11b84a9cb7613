"""The command line: one thin command per question; errors handled once, in ``main``."""

from __future__ import annotations

import os
import sys
from typing import Annotated, Optional

import typer

from . import __version__
from .api import account, list_bundled
from .errors import FfncalcError
from .render import make_console, models_table, params_tables, print_json

app = typer.Typer(
    name="ffncalc",
    help="Where a transformer's parameters and compute go, exactly, from its config.json.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

# --- options shared by the commands ---------------------------------------------------------

ModelArg = Annotated[
    str,
    typer.Argument(
        metavar="MODEL",
        help="A config.json, a folder holding one, a bundled model or a Hub id, e.g. meta-llama/Llama-3.1-8B.",
        show_default=False,
    ),
]
RevisionOpt = Annotated[
    Optional[str],
    typer.Option("--revision", help="Hub branch, tag or commit, e.g. main; fetches from the Hub even for bundled ids."),
]
TokenOpt = Annotated[
    Optional[str],
    typer.Option("--token", help="Hub token for gated or private repos (default: HF_TOKEN or your saved login)."),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print one JSON document (exact integers) instead of tables.")]


def _version(value: bool) -> None:
    if value:
        print(f"ffncalc {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version and exit.")
    ] = False,
) -> None:
    """Where a transformer's parameters and compute go, exactly, from its config.json."""


# --- commands -------------------------------------------------------------------------------


@app.command()
def params(model: ModelArg, revision: RevisionOpt = None, token: TokenOpt = None, json: JsonOpt = False) -> None:
    """Every parameter of MODEL: FFN, attention, embeddings, head and norms; per layer; MoE total vs active."""
    report = account(model, revision=revision, token=token)
    if json:
        print_json(report)
    else:
        make_console().print(params_tables(report))


@app.command()
def models(json: JsonOpt = False) -> None:
    """List the bundled configs (usable offline by their Hub id) with their totals."""
    rows = list_bundled()
    if json:
        print_json(rows)
    else:
        make_console().print(models_table(rows))


# --- entry point ----------------------------------------------------------------------------


def main() -> None:
    """Run the app; any error becomes one `Error:` line on stderr and a non-zero exit (FFNCALC_DEBUG=1: traceback)."""
    try:
        app()
    except Exception as error:  # noqa: BLE001 - even a bug must not print a traceback at users
        if os.environ.get("FFNCALC_DEBUG"):
            raise
        if isinstance(error, FfncalcError):
            message, exit_code = str(error), error.exit_code
        else:
            message, exit_code = f"internal error: {type(error).__name__}: {error} (FFNCALC_DEBUG=1 shows a traceback)", 70
        sys.stderr.write(f"Error: {' '.join(message.split())}\n")
        sys.exit(exit_code)
