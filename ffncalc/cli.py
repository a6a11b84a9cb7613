"""The command line: one thin command per question; errors handled once, in ``main``."""

from __future__ import annotations

import os
import sys
from typing import Annotated, Optional

import typer

from enum import Enum

from . import __version__
from .api import account, compare, crossover, derive_dim, flops, list_bundled, verify
from .errors import FfncalcError
from .render import make_console, print_json

# Each command imports its own renderer (ffncalc.render.<command>): start-up is part of the
# product, and a command should not pay for building every other command's tables.

DEFAULT_MODEL = "meta-llama/Llama-3.1-8B"
CHART_MIN_WIDTH = 80

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


class MlaForm(str, Enum):
    plain = "plain"
    absorbed = "absorbed"


class OutputFormat(str, Enum):
    table = "table"
    json = "json"
    csv = "csv"
    markdown = "markdown"


class Measure(str, Enum):
    flops = "flops"
    bytes = "bytes"


MlaOpt = Annotated[
    MlaForm,
    typer.Option(
        "--mla",
        help="MLA attention (DeepSeek): 'plain' as the model is written, or 'absorbed' as inference engines run it "
        "(scores over the kv_lora_rank latent).",
    ),
]


def context_option(default: str) -> object:
    return typer.Option(
        "--ctx",
        help=f"Context length in tokens: 8192, 8k or 1M (k = 1024, so 128k = 131,072). Default {default}.",
        show_default=False,
    )


def warn(result) -> None:
    """Each warning a report carries, as one `Warning:` line on stderr (the data stays on stdout)."""
    for warning in getattr(result, "warnings", ()):
        sys.stderr.write(f"Warning: {warning}\n")


def emit(result, as_json: bool, render) -> None:
    """Print one JSON document, or the tables ``render(result)`` builds; warnings go to stderr."""
    warn(result)
    if as_json:
        print_json(result)
    else:
        make_console().print(render(result))


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
    from .render.params import params_tables

    emit(account(model, revision=revision, token=token), json, params_tables)


@app.command("flops")
def flops_command(
    model: ModelArg,
    ctx: Annotated[str, context_option("8k")] = "8k",
    mla: MlaOpt = MlaForm.plain,
    no_causal: Annotated[
        bool,
        typer.Option(
            "--no-causal",
            help="Prefill: charge every prompt token the full n × n score matrix (torch FlopCounterMode's "
            "convention) instead of the causal triangle.",
        ),
    ] = False,
    revision: RevisionOpt = None,
    token: TokenOpt = None,
    json: JsonOpt = False,
) -> None:
    """FLOPs per generated token at a context, by component; prefill of a prompt that long; training.

    2 FLOPs per multiply-add. Attention scores grow with the context (sliding-window layers stop at their
    window); grouped KV heads (GQA/MQA) save memory, not these FLOPs.
    """
    from .render.compute import flops_table

    emit(flops(model, ctx, mla_form=mla.value, causal=not no_causal, revision=revision, token=token), json, flops_table)


@app.command("crossover")
def crossover_command(
    model: Annotated[
        str,
        typer.Argument(
            metavar="[MODEL]",
            help=f"A config.json, folder, bundled model or Hub id. Default {DEFAULT_MODEL}.",
            show_default=False,
        ),
    ] = DEFAULT_MODEL,
    ctx: Annotated[str, context_option("128k")] = "128k",
    by: Annotated[
        Measure,
        typer.Option(
            "--by",
            help="'flops': attention-score FLOPs vs FFN FLOPs per token; 'bytes': KV-cache bytes vs FFN weight "
            "bytes read per decode step (batch 1).",
        ),
    ] = Measure.flops,
    dtype: Annotated[
        Optional[str],
        typer.Option("--dtype", help="With --by bytes: element type, e.g. bfloat16 (default: the config's torch_dtype)."),
    ] = None,
    mla: MlaOpt = MlaForm.plain,
    plot: Annotated[
        Optional[bool],
        typer.Option("--plot/--no-plot", help="Draw the chart (default: when the terminal is at least 80 columns wide)."),
    ] = None,
    revision: RevisionOpt = None,
    token: TokenOpt = None,
    json: JsonOpt = False,
) -> None:
    """The context at which attention's growing cost overtakes the FFN's fixed cost, and the FFN share by context.

    Contexts from 1k doubling up to --ctx, with the crossover n* as its own row.
    """
    from .render.compute import crossover_chart, crossover_headline, crossover_table

    report = crossover(
        model, ctx, measure=by.value, mla_form=mla.value, dtype=dtype, revision=revision, token=token
    )
    warn(report)
    if json:
        print_json(report)
        return
    console = make_console()
    console.print(crossover_headline(report))
    console.print(crossover_table(report))
    if plot or (plot is None and console.width >= CHART_MIN_WIDTH):
        console.print(crossover_chart(report))


@app.command("derive-dim")
def derive_dim_command(
    dim: Annotated[Optional[int], typer.Option("--dim", help="Model width (hidden_size), e.g. 4096.")] = None,
    mult: Annotated[
        Optional[float], typer.Option("--mult", help="ffn_dim_multiplier, e.g. 1.3 (Llama 3); omit for none (Llama 2).")
    ] = None,
    multiple_of: Annotated[
        int, typer.Option("--multiple-of", help="Round the width up to a multiple of this, e.g. 1024.")
    ] = 256,
    target: Annotated[
        Optional[int],
        typer.Option("--target", help="Solve backwards: which (multiplier, multiple_of) give this width, e.g. 14336."),
    ] = None,
    model: Annotated[
        Optional[str],
        typer.Option("--model", help="Solve backwards for a model's hidden_size and FFN width, e.g. Qwen/Qwen3-8B."),
    ] = None,
    revision: RevisionOpt = None,
    token: TokenOpt = None,
    json: JsonOpt = False,
) -> None:
    """How Llama's intermediate_size comes from hidden_size, ffn_dim_multiplier and multiple_of, step by step.

    4·dim → int(2·h/3) → int(mult·h) → multiple_of·ceil(h/multiple_of), with Meta's float arithmetic.
    """
    from .render.dims import derive_dim_renderables

    report = derive_dim(dim, mult, multiple_of, target=target, model=model, revision=revision, token=token)
    emit(report, json, derive_dim_renderables)


@app.command("compare")
def compare_command(
    models: Annotated[
        Optional[list[str]],
        typer.Argument(
            metavar="[MODEL]...",
            help="Models to compare (default: Llama-2-7B, Llama-3.1-8B, Mistral-7B, Qwen3-8B, Qwen2.5-0.5B, "
            "gemma-2-9b, DeepSeek-V3).",
            show_default=False,
        ),
    ] = None,
    sort: Annotated[
        Optional[str],
        typer.Option("--sort", help="Sort by a column, e.g. ffn_share; prefix - for descending, e.g. -ffn_share."),
    ] = None,
    output: Annotated[
        OutputFormat, typer.Option("--format", help="table, json, csv (raw values) or markdown.")
    ] = OutputFormat.table,
    json: JsonOpt = False,
) -> None:
    """FFN choices side by side: width, width / hidden, gating, FFN parameters per layer, shares, totals."""
    from .render.comparison import compare_csv, compare_markdown, compare_table

    rows = compare(models or None, sort)
    if json or output == OutputFormat.json:
        print_json(rows)
    elif output == OutputFormat.csv:
        compare_csv(rows)
    elif output == OutputFormat.markdown:
        compare_markdown(rows)
    else:
        console = make_console()
        console.print(compare_table(rows, console.width))


@app.command("verify")
def verify_command(model: ModelArg, revision: RevisionOpt = None, token: TokenOpt = None, json: JsonOpt = False) -> None:
    """Check the count against what MODEL's checkpoint stores, reading only safetensors headers.

    A local folder's *.safetensors (or its index), or a Hub repo's, without downloading weights.
    Exit 0 when every difference is explained, 1 otherwise.
    """
    from .render.verification import verify_renderables

    report = verify(model, revision=revision, token=token)
    emit(report, json, verify_renderables)
    if not report.ok:
        raise typer.Exit(1)


@app.command()
def models(json: JsonOpt = False) -> None:
    """List the bundled configs (usable offline by their Hub id) with their totals."""
    from .render.params import models_table

    emit(list_bundled(), json, models_table)


# --- entry point ----------------------------------------------------------------------------


def main() -> None:
    """Run the app; any error becomes one `Error:` line on stderr and a non-zero exit (FFNCALC_DEBUG=1: traceback)."""
    try:
        result = app(standalone_mode=False, prog_name="ffncalc")
    except typer.TyperException as error:  # a usage error: typer would draw a multi-line panel
        message = error.format_message().replace("Value error, ", "").rstrip(".")
        if not message:  # no arguments at all: the help has been printed
            sys.exit(error.exit_code)
        context = getattr(error, "ctx", None)
        help_hint = f"; see '{context.command_path} --help'" if context is not None else ""
        _fail(message + help_hint, error.exit_code)
    except typer.Abort:
        _fail("aborted", 130)
    except Exception as error:  # noqa: BLE001 - even a bug must not print a traceback at users
        if os.environ.get("FFNCALC_DEBUG"):
            raise
        if isinstance(error, FfncalcError):
            _fail(str(error), error.exit_code)
        _fail(f"internal error: {type(error).__name__}: {error} (FFNCALC_DEBUG=1 shows a traceback)", 70)
    sys.exit(result if isinstance(result, int) else 0)


def _fail(message: str, exit_code: int) -> None:
    sys.stderr.write(f"Error: {' '.join(message.split())}\n")
    sys.exit(exit_code)
