"""The command line: one thin command per question; errors handled once, in ``main``.

Each command parses its options, calls the library (``ffncalc.api``) and hands the result to its
renderer (``ffncalc.render.<command>``, imported by the command that needs it: start-up is part of
the product). Data goes to stdout; warnings, progress and errors to stderr.
"""

from __future__ import annotations

import inspect
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from functools import cache, cached_property
from typing import TYPE_CHECKING, Annotated, Any, Literal, TypeVar

import typer

from .. import __version__
from ..errors import FfncalcError, UsageError
from ..values import Value, replace
from .option_help import OPTION_HELP

if TYPE_CHECKING:
    from ..compute import MlaForm as MlaFormName
    from ..engine.memory import MemoryOptions
    from ..engine.speed import SpeedOptions
    from ..engine.train import TrainOptions

DEFAULT_MODEL = "meta-llama/Llama-3.1-8B"


# Help is typer's own: a required argument reads {MODEL} in the usage line and MODEL <str> in its list, typer's
# convention since 0.29; ffncalc touches no private attribute of typer to restyle it.
APP_SETTINGS: dict[str, Any] = dict(
    name="ffncalc",
    help="Where a transformer's parameters, compute and memory go, exactly, from its config.json.",
    invoke_without_command=True,  # `ffncalc` alone prints the help (_root), as --help does
    add_completion=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain help: MODEL, not {MODEL}; no <bool> on flags; no padded lines in a pipe
    context_settings={"help_option_names": ["-h", "--help"]},
)
app = typer.Typer(**APP_SETTINGS)


# --- options shared by the commands ---------------------------------------------------------


def described(*declarations: Any, help_key: str | None = None, **settings: Any) -> Any:
    """typer.Option with its help from option_help.OPTION_HELP, by its flag (or HELP_KEY)."""
    return typer.Option(*declarations, help=OPTION_HELP[help_key or declarations[0]], **settings)


def complete_model(incomplete: str) -> list[str]:
    """Shell completion: the bundled Hub ids and presets that start with what is typed."""
    from ..source import bundled_models, presets

    names = list(bundled_models()) + list(presets())
    return [name for name in names if name.lower().startswith(incomplete.lower())]


MODEL_HELP = "A config.json, a folder holding one, a bundled model or a Hub id, e.g. meta-llama/Llama-3.1-8B."
ModelArg = Annotated[
    str, typer.Argument(metavar="MODEL", help=MODEL_HELP, show_default=False, autocompletion=complete_model)
]
RevisionOpt = Annotated[str | None, described("--revision", metavar="REV")]
TokenOpt = Annotated[str | None, described("--token", metavar="TOKEN")]
FileOpt = Annotated[str | None, described("--file", metavar="FILE.gguf")]
AsOpt = Annotated[str | None, described("--as", metavar="MODEL_TYPE")]
JsonOpt = Annotated[bool, described("--json")]


def _svg_path(path: str | None) -> str | None:
    if path is None:  # typer calls back for an option left out too: nothing to import then
        return None
    from ..render.pictures import check_path

    return check_path("--svg", path)


def _html_path(path: str | None) -> str | None:
    if path is None:
        return None
    from ..render.pictures import check_path

    return check_path("--html", path)


SvgOpt = Annotated[str | None, described("--svg", metavar="FILE", callback=_svg_path)]
HtmlOpt = Annotated[str | None, described("--html", metavar="FILE", callback=_html_path)]
WidthOpt = Annotated[int | None, described("--width", metavar="COLUMNS", min=40, max=400)]


CacheTypeOpt = Annotated[str | None, described("--cache-type", metavar="TYPE")]
SetOpt = Annotated[list[str] | None, described("--set", metavar="KEY=VALUE", show_default=False)]
SweepOpt = Annotated[list[str] | None, described("--sweep", metavar="KEY=VALUES", show_default=False)]
SequenceParallelOpt = Annotated[bool, described("--sequence-parallel")]
# The training layout, declared once for `train` and `memory --train` (layouts.training_layout counts both, with
# the same defaults: --zero 1, no recomputation).
TensorParallelOpt = Annotated[int | None, described("--tp", metavar="N", show_default=False)]
PipelineParallelOpt = Annotated[int, described("--pp", metavar="N", show_default=False)]
# Serving's layout beyond --tp (serving_layout.py), declared once for `memory --engine` and `speed`; --ep for
# `train` and `memory --train` too.
ExpertParallelOpt = Annotated[int, described("--ep", metavar="N", show_default=False)]
DpAttentionOpt = Annotated[bool, described("--dp-attention")]
# What "fits" leaves on each GPU, one option for memory and speed (accelerators.RUNTIME_RESERVE_SOURCE).
RuntimeReserveOpt = Annotated[str | None, described("--runtime-reserve", metavar="SIZE", show_default=False)]
DisaggregateOpt = Annotated[str | None, described("--disaggregate", metavar="P:D", show_default=False)]
ContextParallelOpt = Annotated[int, described("--cp", metavar="N", show_default=False)]
DataParallelOpt = Annotated[int | None, described("--dp", metavar="N", show_default=False)]
VirtualStagesOpt = Annotated[int, described("--vpp", metavar="N", show_default=False)]
MicroBatchOpt = Annotated[int | None, described("--micro-batch", metavar="N", show_default=False)]
GlobalBatchOpt = Annotated[int | None, described("--global-batch", metavar="N", show_default=False)]
AttentionOpt = Annotated[str, described("--attention", metavar="KIND")]
ZeroOpt = Annotated[int | None, described("--zero", metavar="STAGE", show_default=False)]
RecomputeOpt = Annotated[str, described("--recompute", metavar="MODE")]
RecomputeModulesOpt = Annotated[str | None, described("--recompute-modules", metavar="LIST", show_default=False)]


def module_list(text: str | None) -> tuple[str, ...]:
    """--recompute-modules a,b → ("a", "b")."""
    return tuple(part.strip() for part in (text or "").split(",") if part.strip())


ExplainOpt = Annotated[bool, described("--explain")]
BriefOpt = Annotated[bool, described("--brief")]
ChartOpt = Annotated[str | None, described("--chart", metavar="FIGURE")]


def context_option(default: str) -> Any:
    return typer.Option(
        "--ctx",
        metavar="TOKENS",
        help=f"Context length in tokens: 8192, 8k or 1M (k = 1024, so 128k = 131,072). Default {default}.",
        show_default=False,
    )


DEFAULT_CONTEXT_HELP = "8k, or the model's max_position_embeddings if shorter"


# Choices an option takes: typer offers and checks a Literal's words as it does an Enum's.
MlaForm = Literal["plain", "absorbed"]
OutputFormat = Literal["table", "json", "csv", "markdown"]  # json: the same document as --json, kept as an alias
Measure = Literal["flops", "bytes"]
Optimizer = Literal["adamw", "adamw-8bit", "sgd"]


SweepFormatOpt = Annotated[OutputFormat, described("--format")]

MlaOpt = Annotated[MlaForm | None, described("--mla", show_default=False)]


# --- option groups: each declared once, as a typed value; a command names the groups it takes ------------------


class Source(Value):
    """Where MODEL's config comes from, and what is changed in it before counting."""

    sets: tuple[str, ...] = ()  # --set KEY=VALUE, in order
    revision: str | None = None
    token: str | None = None
    as_type: str | None = None  # --as: count with another family's rules
    file: str | None = None  # a GGUF in a Hub repo


class Answer(Value):
    """How a command answers: a sweep, the headline figures alone, or the whole report (as JSON or tables, and
    pictures)."""

    sweeps: tuple[str, ...] = ()
    chart: str | None = None
    output_format: OutputFormat = "table"
    brief: bool = False
    as_json: bool = False
    svg: str | None = None
    html: str | None = None
    width: int | None = None

    @property
    def json_document(self) -> bool:
        """Whether the answer is one JSON document (--json, or --format json)."""
        return self.as_json or self.output_format == "json"


class OptionGroup:
    """The options that set a group's fields (field → the option's annotation and default), declared once; a
    command takes a subset where some do not apply to it (``without``).

    An engine's group names its options class as "module:Class" and its options by a function, so neither is made
    before the command that takes them runs (start-up: typer evaluates only the command run). CONVERT turns an
    option's value into the field's where the two differ (milliseconds into seconds, an enum into its word)."""

    def __init__(
        self,
        value: type[Value] | str,
        options: dict[str, tuple[Any, Any]] | Callable[[], dict[str, tuple[Any, Any]]],
        convert: dict[str, Callable[[Any], Any]] | None = None,
    ) -> None:
        self._value = value
        self._options = options
        self.convert = convert or {}

    @cached_property
    def value(self) -> type[Value]:
        if not isinstance(self._value, str):
            return self._value
        import importlib

        module, name = self._value.split(":")
        found: type[Value] = getattr(importlib.import_module(module, __package__), name)
        return found

    @cached_property
    def options(self) -> dict[str, tuple[Any, Any]]:
        return self._options() if callable(self._options) else self._options

    def flags(self) -> dict[str, str]:
        """Each field's option, as its declaration spells it (--ctx for context)."""
        found = {}
        for field, (annotation, _) in self.options.items():
            info = next(m for m in getattr(annotation, "__metadata__", ()) if isinstance(m, typer.models.OptionInfo))
            declared = info.default if isinstance(info.default, str) else (info.param_decls or ("",))[0]
            found[field] = declared
        return found

    def without(self, *fields: str) -> OptionGroup:
        unknown = set(fields) - self.options.keys()
        if unknown:  # pragma: no cover - a typo in a command's declaration
            raise TypeError(f"{self.value.__name__} has no field {sorted(unknown)}")
        kept = {name: o for name, o in self.options.items() if name not in fields}
        return OptionGroup(self._value, kept, self.convert)

    def only(self, *fields: str) -> OptionGroup:
        return self.without(*(name for name in self.options if name not in fields))

    def make(self, given: dict[str, Any]) -> Value:
        """The group's value from its options' values (lists as tuples: a value is immutable); an option left out
        (None) leaves the field at the value's own default."""
        fields = {}
        for name, value in given.items():
            if value is None:
                continue
            value = self.convert.get(name, lambda same: same)(value)
            fields[name] = tuple(value) if isinstance(value, list) else value
        return self.value(**fields)


SOURCE = OptionGroup(
    Source,
    {
        "sets": (SetOpt, None),
        "revision": (RevisionOpt, None),
        "token": (TokenOpt, None),
        "as_type": (AsOpt, None),
        "file": (FileOpt, None),
    },
)
ANSWER = OptionGroup(
    Answer,
    {
        "sweeps": (SweepOpt, None),
        "chart": (ChartOpt, None),
        "brief": (BriefOpt, False),
        "output_format": (SweepFormatOpt, "table"),
        "as_json": (JsonOpt, False),
        "svg": (SvgOpt, None),
        "html": (HtmlOpt, None),
        "width": (WidthOpt, None),
    },
)
#: The answer of a command that reports without sweeping: its figures, or their headline, as tables or JSON.
REPORT = ANSWER.without("sweeps", "chart", "output_format")
RowsFormatOpt = Annotated[OutputFormat, described("--format", help_key="RowsFormatOpt")]
#: A command whose report is rows (compare): a format for them, no sweep.
ROWS = OptionGroup(Answer, {**REPORT.options, "output_format": (RowsFormatOpt, "table")})


def _milliseconds(value: float) -> float:
    return value / 1000


MEMORY = OptionGroup(
    "..engine.memory:MemoryOptions",
    lambda: memory_options(),
    {"recompute_modules": lambda text: module_list(text)},
)
SPEED = OptionGroup(
    "..engine.speed:SpeedOptions",
    lambda: speed_options(),
    {"measured_tpot": _milliseconds, "measured_ttft": _milliseconds},  # the options take ms, the fields seconds
)
TRAIN = OptionGroup(
    "..engine.train:TrainOptions", lambda: train_options(), {"recompute_modules": lambda text: module_list(text)}
)

C = TypeVar("C", bound=Callable[..., Any])


def options(**groups: OptionGroup) -> Callable[[C], C]:
    """Give a command each group's options in place of its keyword-only parameter of that name, and the group's
    value in that parameter when it runs: the options are declared once, and typer reads them from the command's
    signature as it reads any other."""

    def decorate(command: C) -> C:
        return GroupedCommand(command, groups)  # type: ignore[return-value]

    return decorate


class GroupedCommand:
    """A command whose option groups stand in its signature as their options.

    The signature is made when typer first asks for it: evaluating a command's annotations costs about 2 ms, and a
    run builds only the command it runs (``_click_command``), so the other commands' are never made."""

    def __init__(self, command: Callable[..., Any], groups: dict[str, OptionGroup]) -> None:
        self.command = command
        self.groups = groups
        self.__name__ = command.__name__
        self.__qualname__ = command.__qualname__
        self.__module__ = command.__module__
        self.__doc__ = command.__doc__

    @cached_property
    def __signature__(self) -> inspect.Signature:
        signature = inspect.signature(self.command)  # annotations as written: a group's class is never evaluated
        namespace = self.command.__globals__
        parameters = []
        for parameter in signature.parameters.values():
            group = self.groups.get(parameter.name)
            if group is None:
                annotation = parameter.annotation
                if isinstance(annotation, str):
                    annotation = eval(annotation, namespace)  # this module's own annotations, as typer evaluates them
                parameters.append(parameter.replace(annotation=annotation))
                continue
            parameters += [
                inspect.Parameter(f"{parameter.name}__{field}", inspect.Parameter.KEYWORD_ONLY, default=default,
                                  annotation=annotation)
                for field, (annotation, default) in group.options.items()
            ]  # fmt: skip
        return signature.replace(parameters=parameters)

    @property
    def __annotations__(self) -> dict[str, Any]:  # type: ignore[override]
        return {parameter.name: parameter.annotation for parameter in self.__signature__.parameters.values()}

    def __call__(self, **given: Any) -> Any:
        for name, group in self.groups.items():
            given[name] = group.make({field: given.pop(f"{name}__{field}") for field in group.options})
        return self.command(**given)


# --- each engine's options, field by field -----------------------------------------------------------


def option(
    kind: Any, flag: str, default: Any = None, metavar: str | None = None, help_key: str | None = None
) -> tuple[Any, Any]:
    """One field's option: its type, its flag, its default, its metavar; its help is option_help's."""
    return Annotated[kind, described(flag, metavar=metavar, help_key=help_key)], default


def stored_options() -> dict[str, tuple[Any, Any]]:
    """How the weights and the cache are stored (a what-if): memory's and speed's, one meaning in both."""
    return {
        "dtype": option(str | None, "--dtype", None, "DTYPE"),
        "kv_dtype": option(str | None, "--kv-dtype", None, "DTYPE"),
        "quant_group_size": option(int | None, "--group-size", None, "N"),
        "quantize_head": option(bool, "--quantize-head", False),
    }


def serving_layout_options() -> dict[str, tuple[Any, Any]]:
    """How a served copy spreads beyond tensor parallelism, and the memory its runtime keeps: memory's and speed's."""
    return {
        "expert_parallel": (ExpertParallelOpt, 1),
        "dp_attention": (DpAttentionOpt, False),
        "disaggregate": (DisaggregateOpt, None),
        "runtime_reserve": (RuntimeReserveOpt, None),
    }


def memory_options() -> dict[str, tuple[Any, Any]]:
    """`memory`'s options: each field of MemoryOptions with the option that sets it (made when the command runs)."""
    return {
        "context": (Annotated[str | None, context_option(DEFAULT_CONTEXT_HELP)], None),
        "batch": option(int, "--batch", 1, "N"),
        **stored_options(),
        "gpus": option(int, "--gpus", 1, "N"),
        "tensor_parallel": (TensorParallelOpt, None),
        "sequence_parallel": (SequenceParallelOpt, False),
        "pipeline_parallel": (PipelineParallelOpt, 1),
        "context_parallel": (ContextParallelOpt, 1),
        "data_parallel": (DataParallelOpt, None),
        "virtual_stages": (VirtualStagesOpt, 1),
        "micro_batch": (MicroBatchOpt, None),
        "global_batch": (GlobalBatchOpt, None),
        "gpu_memory": option(str | None, "--gpu-memory", None, "SIZE"),
        "engine": option(str, "--engine", "none", "ENGINE"),
        "gpu": option(str | None, "--gpu", None, "NAME"),
        "kv_budget": option(str | None, "--kv-budget", None, "SIZE"),
        "gpu_memory_utilization": option(float | None, "--gpu-memory-utilization", None, "X"),
        "max_num_batched_tokens": option(int | None, "--max-num-batched-tokens", None, "N"),
        "block_size": option(int | None, "--block-size", None, "N"),
        **serving_layout_options(),
        "solve": option(str | None, "--solve", None, "WHAT"),
        "chunk": option(int, "--chunk", 2048, "TOKENS"),
        "train": option(bool, "--train", False),
        "optimizer": option(Optimizer, "--optimizer", "adamw"),
        "recompute": (RecomputeOpt, "none"),
        "recompute_modules": (RecomputeModulesOpt, None),
        "zero_stage": (ZeroOpt, None),
        "attention": (AttentionOpt, "flash"),
        "lora_rank": option(int | None, "--lora-rank", None, "R"),
    }


def speed_options() -> dict[str, tuple[Any, Any]]:
    """`speed`'s options: each field of SpeedOptions with the option that sets it (made when the command runs)."""
    return {
        "accelerators": option(str, "--gpu", "h100", "NAMES"),
        "context": (Annotated[str | None, context_option(DEFAULT_CONTEXT_HELP)], None),
        "prompt": option(str | None, "--prompt", None, "TOKENS"),
        "batches": option(str, "--batch", "1", "N,…"),
        "tensor_parallel": (TensorParallelOpt, 1),
        "pipeline_parallel": (PipelineParallelOpt, 1),
        **serving_layout_options(),
        **stored_options(),
        "compute_dtype": option(str | None, "--compute-dtype", None, "DTYPE"),
        "compute_efficiency": option(float, "--compute-efficiency", 1.0, "X"),
        "bandwidth_efficiency": option(float, "--bandwidth-efficiency", 1.0, "X"),
        "attention": (AttentionOpt, "flash"),
        "gpu_flops": option(float | None, "--gpu-flops", None, "FLOP/S"),
        "gpu_bandwidth": option(float | None, "--gpu-bandwidth", None, "B/S"),
        "gpu_memory": option(str | None, "--gpu-memory", None, "SIZE", help_key="speed --gpu-memory"),
        "gpu_interconnect": option(float | None, "--gpu-interconnect", None, "B/S"),
        "gpu_name": option(str | None, "--gpu-name", None, "NAME"),
        "engine": option(str | None, "--engine", None, "ENGINE", help_key="speed --engine"),
        "output": option(int | None, "--output", None, "N"),
        "measured_tpot": option(float | None, "--measured-tpot", None, "MS"),
        "measured_ttft": option(float | None, "--measured-ttft", None, "MS"),
        "cache_type": (CacheTypeOpt, None),
        "price": option(float | None, "--price", None, "USD"),
    }


def train_options() -> dict[str, tuple[Any, Any]]:
    """`train`'s options: each field of TrainOptions with the option that sets it (made when the command runs)."""
    return {
        "tokens": option(str | None, "--tokens", None, "N"),
        "seq": option(str, "--seq", "8k", "TOKENS"),
        "gpu": option(str, "--gpu", "h100", "NAME"),
        "gpus": option(int, "--gpus", 1, "N"),
        "compute_dtype": option(str, "--compute-dtype", "bf16", "DTYPE", help_key="train --compute-dtype"),
        "mfu": option(float | None, "--mfu", None, "X"),
        "price": option(float | None, "--price", None, "USD"),
        "days": option(float | None, "--days", None, "D"),
        "recompute": (RecomputeOpt, "none"),
        "recompute_modules": (RecomputeModulesOpt, None),
        "zero_stage": (ZeroOpt, 1),
        "tensor_parallel": (TensorParallelOpt, None),
        "sequence_parallel": (SequenceParallelOpt, False),
        "micro_batch": (MicroBatchOpt, None),
        "global_batch": (GlobalBatchOpt, None),
        "pipeline_parallel": (PipelineParallelOpt, 1),
        "context_parallel": (ContextParallelOpt, 1),
        "expert_parallel": (ExpertParallelOpt, 1),
        "data_parallel": (DataParallelOpt, None),
        "virtual_stages": (VirtualStagesOpt, 1),
        "plan": option(bool, "--plan", False),
        "measured_tokens_per_second": option(float | None, "--measured-tokens-per-second", None, "X"),
        "per_gpu": option(bool, "--per-gpu", False),
        "compute": option(float | None, "--compute", None, "FLOPS"),
    }


# --- printing -----------------------------------------------------------------------------------


def warn(result: Any) -> None:
    """Each warning a report carries, as one `Warning:` line on stderr (the data stays on stdout), naming options
    where the library names its fields."""
    command = _invoked_command(sys.argv[1:])
    for warning in getattr(result, "warnings", ()):
        sys.stderr.write(f"Warning: {' '.join(as_options(warning, command).split())}\n")


def emit(
    result: Any,
    as_json: bool,
    render: Callable[..., Any],
    svg: str | None = None,
    html: str | None = None,
    width: int | None = None,
) -> None:
    """One JSON document, or the tables ``render(result, width)`` builds (also saved as SVG or HTML when asked:
    the pictures are written first, so that a failed write prints nothing)."""
    from ..render import make_console, print_json, show

    refuse(width is not None and not (svg or html), "--width sets the picture's width; add --svg or --html")
    result = in_options(result, _invoked_command(sys.argv[1:]))
    if svg or html:
        from ..render import pictures

        pictures.check_pair(svg, html, as_json)
        drawn = render(result, pictures.MAX_WIDTH)
        columns = width or pictures.natural_width(drawn)
        title = "ffncalc" + (f" — {result.model}" if getattr(result, "model", None) else "")
        pictures.save(render(result, columns), columns, title, svg, html)
    warn(result)
    if as_json:
        print_json(result)
        return
    console = make_console()
    show(console, render(result, console.width))


@contextmanager
def hub_status(as_json: bool) -> Iterator[None]:
    """While a config or header is fetched from the Hub, a status line on a terminal's stderr (none when piped or --json)."""
    from rich.console import Console

    console = Console(stderr=True)
    if as_json or not console.is_terminal:
        yield
        return
    from .. import hub  # only a terminal gets the status line

    status = console.status("")
    shown = False

    def report(message: str) -> None:
        nonlocal shown
        status.update(message)
        if not shown:
            status.start()
            shown = True

    hub.reporter = report
    try:
        yield
    finally:
        hub.reporter = None
        if shown:
            status.stop()


def refuse(condition: bool, message: str) -> None:
    """An option that would be ignored is refused, with one line saying why."""
    if condition:
        raise UsageError(message)


def load_model(model: str, source: Source, as_json: bool) -> Any:
    """MODEL's config found, changed by any --set, validated and turned into a spec (a status line while the Hub is asked).

    A .gguf (or a Hub repo with --file) is read from its header (gguf_models)."""
    from ..loading import load_config
    from ..source import is_gguf

    if is_gguf(model, source.file):
        refuse(
            bool(source.as_type or source.sets),
            "--as and --set apply to config.json models; a GGUF is counted as its header says",
        )
        from ..gguf_models import open_gguf

        with hub_status(as_json):
            return open_gguf(model, source.file, source.revision, source.token)
    with hub_status(as_json):
        return load_config(
            model, revision=source.revision, token=source.token, as_type=source.as_type, overrides=source.sets
        )


def sweep(
    loaded: Any,
    command: str,
    measure: Callable[[Any], dict[str, Any]],
    headlines: tuple[Any, ...],
    answer: Answer,
) -> None:
    """COMMAND's headline figures at each point of the --sweep values, as a table and chart, CSV, Markdown or JSON."""
    from ..overrides import parse_sweep
    from ..render.sweep import sweep_csv, sweep_markdown, sweep_renderables
    from ..sweeps import run_sweep

    rows_only(answer)
    refuse(len(answer.sweeps) > 2, "--sweep: at most two fields (a grid)")
    parsed = tuple(parse_sweep(text) for text in answer.sweeps)
    refuse(len({s.key for s in parsed}) < len(parsed), "--sweep: each field once")
    points = 1
    for swept in parsed:
        points *= len(swept.values)
    most = SWEEP_POINTS.get(command, 10_000)
    refuse(
        points > most,
        f"--sweep: {points:,} points; {command} counts at most {most:,} in one run (seconds, not minutes)",
    )
    report = run_sweep(loaded, parsed, command, measure, headlines, answer.chart)
    if answer.output_format == "csv":
        warn(report)
        sweep_csv(report)
    elif answer.output_format == "markdown":
        warn(report)
        sweep_markdown(report)
    else:
        emit(report, answer.json_document, sweep_renderables, answer.svg, answer.html, answer.width)


def rows_only(answer: Answer) -> None:
    """--format csv or markdown prints rows: neither JSON nor pictures beside them."""
    if answer.output_format in ("csv", "markdown"):
        refuse(answer.as_json, f"--json and --format {answer.output_format} ask for two formats; choose one")
        refuse(
            bool(answer.svg or answer.html),
            f"--format {answer.output_format} prints rows; draw pictures (--svg, --html) without it",
        )


def brief(report: Any, command: str, figures: dict[str, Any], headlines: tuple[Any, ...], as_json: bool) -> None:
    """--brief: the headline figures of REPORT alone (the warnings still on stderr)."""
    from ..render import make_console, print_json, show
    from ..render.brief import brief_renderables

    report = in_options(report, _invoked_command(sys.argv[1:]))
    warn(report)
    if as_json:
        print_json(figures)
        return
    show(make_console(), brief_renderables(report, command, figures, headlines))


# The most points one --sweep counts, by command: each takes well under a second whole. params, flops and crossover
# count some 4,000 configs a second here (bench/run.py); memory, speed and train about 500 (2 ms a point measured on
# a 2-core machine: a 100,000-point memory sweep took 188 s).
SWEEP_POINTS = {"params": 10_000, "flops": 10_000, "crossover": 10_000, "memory": 2_000, "speed": 2_000, "train": 2_000}


def respond(
    loaded: Any,
    command: str,
    report_of: Callable[[Any], Any],
    headline_of: Callable[[Any, Any], dict[str, Any]],
    headlines: tuple[Any, ...],
    render: Callable[..., Any],
    answer: Answer,
    rows: Callable[[Any], None] | None = None,
) -> None:
    """COMMAND's answer for LOADED: at each --sweep point, as --brief headline figures, as csv ROWS (a command that
    writes its report as rows), or the whole report."""
    if answer.sweeps:
        refuse(answer.brief, "--brief and --sweep: a sweep already shows the headline figures")

        def measure(at: Any) -> dict[str, Any]:
            return headline_of(at, report_of(at))

        return sweep(loaded, command, measure, headlines, answer)
    refuse(answer.chart is not None, "--chart applies to --sweep; add --sweep KEY=VALUES")
    if answer.output_format in ("csv", "markdown"):
        refuse(rows is None, f"--format {answer.output_format} applies to --sweep")
        refuse(
            answer.output_format == "markdown",
            f"{command} writes csv rows without --sweep; use --format csv",
        )
        rows_only(answer)
    report = report_of(loaded)
    if answer.brief:
        refuse(bool(answer.svg or answer.html), "--brief prints a few lines; draw pictures without it")
        brief(report, command, headline_of(loaded, report), headlines, answer.as_json)
    elif answer.output_format == "csv" and rows is not None:
        warn(report)
        rows(report)
    else:
        emit(report, answer.json_document, render, answer.svg, answer.html, answer.width)
    if getattr(report, "exit_code", 0):  # the answer is "it does not fit at all": printed, then exit 1
        raise typer.Exit(report.exit_code)


def _version(value: bool) -> None:
    if value:
        print(f"ffncalc {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    context: typer.Context,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Show the version and exit.")
    ] = False,
) -> None:
    """Where a transformer's parameters, compute and memory go, exactly, from its config.json."""
    if context.invoked_subcommand is None:
        print(context.get_help())
        raise typer.Exit()


# --- commands -------------------------------------------------------------------------------


@app.command()
@options(source=SOURCE, answer=ANSWER)
def params(model: ModelArg, *, source: Source, answer: Answer) -> None:
    """Every parameter of MODEL: FFN, attention, embeddings, head and norms; per layer; MoE total vs active."""
    from ..api import account
    from ..headlines import PARAMS_HEADLINES, params_headline
    from ..render.params import params_tables

    loaded = load_model(model, source, answer.as_json)
    count = account
    if getattr(loaded, "gguf", None) is not None:  # a GGUF's report adds its stored bytes
        from ..gguf_models import with_gguf

        count = with_gguf(account)
    headline = lambda _, report: params_headline(report)  # noqa: E731
    respond(loaded, "params", count, headline, PARAMS_HEADLINES, params_tables, answer)


@app.command("flops")
@options(source=SOURCE.without("file"), answer=ANSWER)
def flops_command(
    model: ModelArg,
    ctx: Annotated[str | None, context_option(DEFAULT_CONTEXT_HELP)] = None,
    mla: MlaOpt = None,
    no_causal: Annotated[
        bool,
        typer.Option(
            "--no-causal",
            help="Prefill: charge every prompt token the full n × n score matrix (torch FlopCounterMode's "
            "convention) instead of the causal triangle.",
        ),
    ] = False,
    image: Annotated[
        str | None,
        typer.Option(
            "--image",
            metavar="WxH",
            help="Also what one image of W × H pixels costs the vision tower and projector, e.g. 1024x768 "
            "(multimodal models).",
        ),
    ] = None,
    audio: Annotated[
        str | None,
        typer.Option(
            "--audio",
            metavar="SECONDS",
            help="Also what an audio clip that long costs the speech encoder, e.g. 45 (Whisper reads 30-second "
            "windows).",
        ),
    ] = None,
    *,
    source: Source,
    answer: Answer,
) -> None:
    """FLOPs per generated token at a context, by component; prefill of a prompt that long; training.

    2 FLOPs per multiply-add. Attention scores grow with the context (sliding-window layers stop at their
    window); grouped KV heads (GQA/MQA) save memory, not these FLOPs.
    """
    from ..api import flops
    from ..images import parse_image_size
    from ..speech import parse_audio_seconds
    from ..units import parse_context

    form: MlaFormName = mla or "plain"
    if ctx is not None:
        parse_context(ctx)  # a bad --ctx or --image is refused before any download
    if image is not None:
        parse_image_size(image)
    if audio is not None:
        parse_audio_seconds(audio)
    from ..headlines import FLOPS_HEADLINES, flops_headline
    from ..render.compute import flops_table

    loaded = load_model(model, source, answer.as_json)
    refuse(image is not None and bool(answer.sweeps), "--image and --sweep: sweep without --image")
    refuse(audio is not None and bool(answer.sweeps), "--audio and --sweep: sweep without --audio")
    report_of = lambda at: flops(at, ctx, mla_form=form, causal=not no_causal, image=image, audio=audio)  # noqa: E731
    headline = lambda _, report: flops_headline(report)  # noqa: E731
    respond(loaded, "flops", report_of, headline, FLOPS_HEADLINES, flops_table, answer)


@app.command("crossover")
@options(source=SOURCE.without("file"), answer=ANSWER)
def crossover_command(
    model: Annotated[
        str,
        typer.Argument(
            metavar="MODEL",
            help=f"{MODEL_HELP} Default {DEFAULT_MODEL}.",
            show_default=False,
            autocompletion=complete_model,
        ),
    ] = DEFAULT_MODEL,
    ctx: Annotated[str | None, context_option("128k")] = None,
    by: Annotated[
        Measure,
        typer.Option(
            "--by",
            help="'flops': attention-score FLOPs vs FFN FLOPs per token; 'bytes': KV-cache bytes vs FFN weight "
            "bytes read per decode step (batch 1).",
        ),
    ] = "flops",
    dtype: Annotated[
        str | None,
        typer.Option(
            "--dtype",
            metavar="DTYPE",
            help="With --by bytes: element type, e.g. bf16 or fp8 (as --kv-dtype elsewhere) (default: the config's dtype).",
        ),
    ] = None,
    mla: MlaOpt = None,
    plot: Annotated[
        bool | None,
        typer.Option(
            "--plot/--no-plot", help="Draw the chart (default: when the terminal is at least 80 columns wide)."
        ),
    ] = None,
    *,
    source: Source,
    answer: Answer,
) -> None:
    """The context at which attention's growing cost overtakes the FFN's fixed cost, and the FFN share by context.

    Contexts from 1k doubling up to --ctx, with the crossover n* as its own row.
    """
    from ..api import crossover, kv_bytes_per_token
    from ..units import parse_context

    refuse(dtype is not None and by != "bytes", "--dtype applies to --by bytes; add --by bytes, or leave --dtype out")
    refuse(
        mla is not None and by == "bytes",
        "--mla applies to --by flops: the KV cache of MLA is its latent either way",
    )
    if ctx is not None:
        parse_context(ctx)
    form: MlaFormName = mla or "plain"
    from ..headlines import CROSSOVER_HEADLINES, crossover_headline
    from ..render.compute import crossover_renderables

    loaded = load_model(model, source, answer.as_json)
    report_of = lambda at: crossover(at, ctx, measure=by, mla_form=form, dtype=dtype)  # noqa: E731
    headline = lambda at, report: crossover_headline(report, kv_bytes_per_token(at, dtype))  # noqa: E731
    render = lambda report, columns: crossover_renderables(report, columns, plot)  # noqa: E731
    respond(loaded, "crossover", report_of, headline, CROSSOVER_HEADLINES, render, answer)


@app.command()
@options(options=MEMORY, source=SOURCE, answer=ANSWER)
def memory(
    model: ModelArg,
    explain: ExplainOpt = False,
    gpu_layers: Annotated[
        int | None,
        typer.Option(
            "--gpu-layers",
            metavar="N",
            help="A GGUF under llama.cpp: -ngl N, the layers offloaded to the GPU (default: all, or with --gpu the "
            "most that fit).",
        ),
    ] = None,
    cache_type: CacheTypeOpt = None,
    *,
    options: MemoryOptions,
    source: Source,
    answer: Answer,
) -> None:
    """Will MODEL fit: weights by dtype and quantization, KV cache by context and batch, training states.

    Exact bytes from the config: the checkpoint's own dtype and quantization unless --dtype asks "what if";
    sliding windows, MLA latents and a hybrid's constant state as the model keeps them.
    """
    from ..api import memory as count_memory

    options = options.checked()
    from ..headlines import MEMORY_HEADLINES, memory_headline
    from ..render.memory import memory_tables

    loaded = load_model(model, source, answer.as_json)
    report_of = lambda at: count_memory(at, options=options)  # noqa: E731
    if getattr(loaded, "gguf", None) is not None:  # a GGUF: llama.cpp's own answer (gguf_models)
        from ..gguf_models import llamacpp_report

        ignored = [
            flag
            for flag, given in (
                ("--train", options.train), ("--engine", options.engine != "none"), ("--solve", options.solve is not None),
                ("--gpus", options.gpus != 1), ("--tp", options.tensor_parallel is not None),
                ("--dtype", options.dtype is not None), ("--kv-dtype", options.kv_dtype is not None),
                ("--batch", options.batch != 1), ("--kv-budget", options.kv_budget is not None),
            )
            if given
        ]  # fmt: skip
        refuse(
            bool(ignored),
            f"{', '.join(ignored)} {'does' if len(ignored) == 1 else 'do'} not apply to a GGUF, whose memory is "
            "llama.cpp's: give --ctx (its -c), --gpu-layers, --cache-type and --gpu",
        )
        report_of = lambda at: llamacpp_report(at, count_memory(at, options=options), options, gpu_layers, cache_type)  # noqa: E731
    else:
        refuse(gpu_layers is not None or cache_type is not None, "--gpu-layers and --cache-type apply to a GGUF")
    headline = lambda _, report: memory_headline(report)  # noqa: E731
    render = lambda report, columns: memory_tables(report, columns, explain)  # noqa: E731
    respond(loaded, "memory", report_of, headline, MEMORY_HEADLINES, render, answer)


@app.command("config")
@options(source=SOURCE.without("file"))
def config_command(model: ModelArg, *, source: Source) -> None:
    """The config ffncalc counts for MODEL, as JSON: the file as read, every default taken written in, --set applied.

    Save it, edit it and pass the file back as MODEL: it counts the same as the original.
    """
    from ..api import export_config
    from ..render import print_json

    loaded = load_model(model, source, True)
    warn(loaded.info)
    print_json(export_config(loaded))


@app.command("derive-dim")
@options(source=SOURCE.without("file"), answer=REPORT)
def derive_dim_command(
    dim: Annotated[int | None, typer.Option("--dim", metavar="N", help="Model width (hidden_size), e.g. 4096.")] = None,
    mult: Annotated[
        float | None,
        typer.Option("--mult", metavar="X", help="ffn_dim_multiplier, e.g. 1.3 (Llama 3); omit for none (Llama 2)."),
    ] = None,
    multiple_of: Annotated[
        int, typer.Option("--multiple-of", metavar="N", help="Round the width up to a multiple of this, e.g. 1024.")
    ] = 256,
    target: Annotated[
        int | None,
        typer.Option(
            "--target",
            metavar="N",
            help="Solve backwards: which (multiplier, multiple_of) give this width, e.g. 14336.",
        ),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            metavar="MODEL",
            help="Solve backwards for a model's hidden_size and FFN width, e.g. Qwen/Qwen3-8B.",
            autocompletion=complete_model,
        ),
    ] = None,
    *,
    source: Source,
    answer: Answer,
) -> None:
    """How Llama's intermediate_size comes from hidden_size, ffn_dim_multiplier and multiple_of, step by step.

    4·dim → int(2·h/3) → int(mult·h) → multiple_of·ceil(h/multiple_of), with Meta's float arithmetic.
    """
    from ..api import derive_dim
    from ..headlines import DERIVE_DIM_HEADLINES, derive_dim_headline
    from ..render.ffn_width import derive_dim_renderables

    refuse(bool(source.sets) and model is None, "--set applies to --model; name the model to change")
    refuse(
        model is not None and (dim is not None or target is not None), "give either --model or --dim/--target, not both"
    )
    loaded = load_model(model, source, answer.as_json) if model is not None else None
    report_of = lambda at: derive_dim(dim, mult, multiple_of, target=target, model=at)  # noqa: E731
    headline = lambda _, report: derive_dim_headline(report)  # noqa: E731
    respond(loaded, "derive-dim", report_of, headline, DERIVE_DIM_HEADLINES, derive_dim_renderables, answer)


@app.command("compare")
@options(source=SOURCE.only("sets", "revision", "token"), answer=ROWS)
def compare_command(
    models: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="MODEL",
            help="Models to compare (default: Llama-2-7B, Llama-3.1-8B, Mistral-7B, Qwen3-8B, Qwen2.5-0.5B, "
            "gemma-2-9b, DeepSeek-V3); MODEL:KEY=VALUE is a variant, e.g. meta-llama/Llama-3.1-8B:intermediate_size=16384.",
            show_default=False,
            autocompletion=complete_model,
        ),
    ] = None,
    sort: Annotated[
        str | None,
        typer.Option(
            "--sort",
            metavar="COLUMN",
            help="Sort by a column, as headed or named in --json, e.g. active or ffn_share; prefix - for "
            "descending, e.g. -active.",
        ),
    ] = None,
    *,
    source: Source,
    answer: Answer,
) -> None:
    """FFN choices side by side: width, width / hidden, gating, FFN parameters per layer, shares, totals."""
    from ..api import compare
    from ..render import print_json
    from ..render.comparison import compare_csv, compare_markdown, compare_table

    rows_only(answer)
    refuse(
        bool(answer.svg or answer.html) and answer.json_document,
        "--svg and --html draw the tables; --json prints none: choose one",
    )
    with hub_status(answer.as_json):
        comparison = compare(models or None, sort, revision=source.revision, token=source.token, overrides=source.sets)
    rows = comparison.rows
    warn(comparison)
    if answer.brief:
        from ..render.comparison import compare_brief

        refuse(
            answer.output_format != "table" or answer.as_json,
            "--brief prints a few lines; leave out --format and --json",
        )
        emit(rows, False, compare_brief, answer.svg, answer.html, answer.width)
    elif answer.json_document:
        print_json(rows)
    elif answer.output_format == "csv":
        compare_csv(rows)
    elif answer.output_format == "markdown":
        compare_markdown(rows)
    else:
        emit(rows, False, compare_table, answer.svg, answer.html, answer.width)


@app.command("verify")
@options(source=SOURCE.without("sets"), answer=REPORT)
def verify_command(model: ModelArg, *, source: Source, answer: Answer) -> None:
    """Check every tensor MODEL's checkpoint stores against the model, by name and shape, from headers only.

    A local folder (the files its model.safetensors.index.json names, else model.safetensors) or a Hub
    repo, without downloading weights; or a GGUF (a local .gguf, or a Hub repo with --file), its tensors under
    llama.cpp's names. Exit 0 when every tensor is a parameter or explained, 1 otherwise.
    """
    from ..api import verify
    from ..headlines import VERIFY_HEADLINES, verify_headline
    from ..render.verification import verify_renderables

    def report_of(_: None) -> Any:
        with hub_status(answer.as_json):
            return verify(model, revision=source.revision, token=source.token, as_type=source.as_type, file=source.file)

    headline = lambda _, report: verify_headline(report)  # noqa: E731
    respond(None, "verify", report_of, headline, VERIFY_HEADLINES, verify_renderables, answer)


@app.command()
@options(answer=REPORT)
def models(
    query: Annotated[
        str | None,
        typer.Argument(
            metavar="QUERY",
            help="Only the models whose name, family or model_type holds this text, e.g. qwen3 or llama.",
            show_default=False,
        ),
    ] = None,
    family: Annotated[
        str | None,
        typer.Option("--family", metavar="FAMILY", help="Only this family or model_type, e.g. Qwen3 or qwen3_moe."),
    ] = None,
    families: Annotated[
        bool, typer.Option("--families", help="List the supported families and their model_types instead.")
    ] = False,
    *,
    answer: Answer,
) -> None:
    """List the bundled configs (usable offline by their Hub id) with their totals, or the supported families."""
    from ..api import family_coverage, list_bundled
    from ..render.params import families_table, models_table

    if families:
        refuse(query is not None or family is not None, "--families lists every family; leave out QUERY and --family")
        emit(family_coverage(), answer.as_json, families_table, answer.svg, answer.html, answer.width)
    else:
        from ..render.params import models_brief

        render = models_brief if answer.brief else models_table
        emit(list_bundled(query=query, family=family), answer.as_json, render, answer.svg, answer.html, answer.width)


@app.command("speed")
@options(options=SPEED, source=SOURCE, answer=ANSWER)
def speed_command(
    model: ModelArg,
    explain: ExplainOpt = False,
    *,
    options: SpeedOptions,
    source: Source,
    answer: Answer,
) -> None:
    """How fast MODEL runs on an accelerator: decode TPOT and tokens/s by batch, prefill TTFT, what bounds each.

    Roofline ceilings from the exact FLOPs and bytes of flops and memory: each operator takes max(FLOPs / peak,
    bytes / bandwidth). Not a measurement; --compute-efficiency and --bandwidth-efficiency scale the peaks. Beside
    each ceiling, ≈ the expected time: the same FLOPs and bytes × coefficients fitted on measured serving runs
    (--engine picks the profile), with the range it held to on models left out of the fit.
    """
    from ..api import speed
    from ..render.speed import speed_renderables

    options = options.checked()
    from ..engine.speed import batches_of
    from ..headlines import SPEED_HEADLINES, speed_headline
    from ..render.speed import speed_csv

    refuse(
        bool(answer.sweeps) and (len(options.chips()) > 1 or len(batches_of(options.batches)) > 1),
        "--sweep counts one accelerator at one batch; give one --gpu and --batch",
    )

    def headline(_: Any, run: Any) -> dict[str, Any]:
        refuse(len(run.reports) > 1, "--brief shows one accelerator at one batch; give one --gpu and --batch")
        return speed_headline(run.reports[0])

    loaded = load_model(model, source, answer.as_json)
    report_of = lambda at: speed(at, options=options)  # noqa: E731
    render = lambda run, columns: speed_renderables(run, columns, explain)  # noqa: E731
    respond(loaded, "speed", report_of, headline, SPEED_HEADLINES, render, answer, rows=speed_csv)


@app.command("train")
@options(options=TRAIN, source=SOURCE.without("file"), answer=ANSWER)
def train_command(model: ModelArg, *, options: TrainOptions, source: Source, answer: Answer) -> None:
    """What training MODEL on --tokens costs: FLOPs, GPU-hours, days and cost at an assumed MFU; the MFU of a
    measured run as Megatron-LM, torchtitan, PaLM and nanoGPT count it; the compute-optimal size; memory per GPU.
    """
    from ..api import train

    options = options.checked()
    from ..headlines import TRAIN_HEADLINES, train_headline
    from ..render.training import train_renderables

    loaded = load_model(model, source, answer.as_json)
    report_of = lambda at: train(at, options)  # noqa: E731
    headline = lambda _, report: train_headline(report)  # noqa: E731
    respond(loaded, "train", report_of, headline, TRAIN_HEADLINES, train_renderables, answer)


# --- entry point ----------------------------------------------------------------------------


def main() -> None:
    """Run the app; any error becomes one `Error:` line on stderr and a non-zero exit (FFNCALC_DEBUG=1: traceback)."""
    from ..streams import OutputError, prepare, silence_stdout

    # ffncalc reads headers and small files: huggingface_hub's progress bars would only clutter stderr.
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    # pydantic looks for plugins among every installed package when a model class is first used; ffncalc's
    # models are internal and want none.
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "1")
    prepare()
    try:
        result = _click_command(_invoked_command(sys.argv[1:]))(standalone_mode=False, prog_name="ffncalc")
        sys.stdout.flush()  # a full disk or a closed pipe shows here, not in the interpreter's last flush
    except OutputError as error:
        silence_stdout()
        if error.closed_pipe:  # the reader has what it wanted (| head): end quietly
            sys.exit(0)
        _fail(str(error), error.exit_code)
    except typer.TyperException as error:  # a usage error: typer would draw a multi-line panel
        message = error.format_message().replace("Value error, ", "").rstrip(".")
        if not message:  # no arguments at all: the help has been printed
            sys.exit(error.exit_code)
        context = getattr(error, "ctx", None)
        help_hint = f"; see '{context.command_path} --help'" if context is not None else ""
        _fail(message + help_hint, error.exit_code)
    except typer.Abort:
        _fail("aborted", 130)
    except Exception as error:
        if os.environ.get("FFNCALC_DEBUG"):
            raise
        if isinstance(error, FfncalcError):  # the library names its fields; the command line has options
            _fail(as_options(str(error), _invoked_command(sys.argv[1:])), error.exit_code)
        _fail(f"internal error: {type(error).__name__}: {error} (FFNCALC_DEBUG=1 shows a traceback)", 70)
    sys.exit(result if isinstance(result, int) else 0)


def _command_name(info: Any) -> str:
    """A registered command's name, as typer derives it from the function when the decorator names none."""
    return info.name or info.callback.__name__.lower().replace("_", "-")


def _invoked_command(arguments: list[str]) -> str | None:
    """The command the arguments run (`ffncalc params …`); None for the app itself (help, --version, completion)."""
    first = next((argument for argument in arguments if not argument.startswith("-")), None)
    known = {_command_name(info) for info in app.registered_commands}
    return first if first in known and not any(key.endswith("_COMPLETE") for key in os.environ) else None


@cache
def _click_command(name: str | None = None) -> Any:
    """The click group typer makes of the app, made once a process per command (the tests run thousands in one).

    Making it reads every command's parameters (typer 0.29 evaluates each annotation and builds each option), about
    10 ms for the twelve; a run of one command (NAME) gets a group holding that command alone, the same command
    with the same root options, so its parsing, help and errors are those of the whole app."""
    if name is None:
        return typer.main.get_command(app)
    alone = typer.Typer(**APP_SETTINGS)
    alone.registered_callback = app.registered_callback
    alone.registered_commands = [info for info in app.registered_commands if _command_name(info) == name]
    return typer.main.get_command(alone)


def run() -> None:
    """The console script: main(), then end the process without the interpreter's teardown.

    Tearing down typer, rich and pydantic's modules takes about 30 ms, longer than counting a model;
    nothing ffncalc leaves open needs it (output is flushed here, files are closed where written),
    so the process ends at once, as mypy's does. main() itself exits normally: tests call it in-process.
    """
    try:
        main()
        code = 0
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
        if isinstance(done.code, str):
            sys.stderr.write(done.code + "\n")
    for stream in (sys.stdout, sys.stderr):
        with suppress(OSError, ValueError):  # a closed pipe or a closed stream: nothing more can be written
            stream.flush()
    os._exit(code)


# The library names what it was given by its fields, in backticks (errors.UsageError); here each becomes the option
# that sets it, command by command, as the command's option groups declare it (one declaration per option, the
# field beside its flag). A field no group declares is written as its option's usual spelling, --field-name.

#: The option groups of each command whose options are an engine's (the others' fields are their flags' names).
GROUPS_OF = {"memory": (MEMORY,), "speed": (SPEED,), "train": (TRAIN,)}

#: Fields whose option is not spelled --field-name, beyond what the groups declare.
FLAG_OF = {
    "as_type": "--as",
    "sets": "--set",
    "sweeps": "--sweep",
    "as_json": "--json",
    "output_format": "--format",
    "multiplier": "--mult",
    "list_families": "`ffncalc models --families`",  # the library's listing of families is this command
}

#: Arguments of the library's functions that commands take as options of the same name.
LIBRARY_ARGUMENTS = frozenset(
    {"model", "dim", "target", "multiplier", "multiple_of", "family", "gpu_layers", "sort", "image", "audio"}
)


@cache
def option_of(command: str | None) -> dict[str, str]:
    """COMMAND's option for each field its groups declare (the source's and the answer's, and its engine's)."""
    table = {**FLAG_OF, **SOURCE.flags(), **ANSWER.flags()}
    for group in GROUPS_OF.get(command or "", ()):
        table.update(group.flags())
    return table


@cache
def option_fields() -> frozenset[str]:
    """Every field of the library's options a command sets: only these, in backticks, are written as options (a
    backticked config field, `layer_types`, stays a field)."""
    values: list[type[Value]] = [group.value for groups in GROUPS_OF.values() for group in groups]
    values += [Source, Answer]
    fields = {field for value in values for field in value._fields}
    return frozenset({*fields, *FLAG_OF, *LIBRARY_ARGUMENTS})


def as_options(message: str, command: str | None) -> str:
    """MESSAGE with each `field` the library named written as COMMAND's option for it."""
    import re

    table = option_of(command)
    known = option_fields()

    def option(match: re.Match[str]) -> str:
        field = match[1]
        return table.get(field, "--" + field.replace("_", "-")) if field in known else match[0]

    return re.sub(r"`([a-z][a-z0-9_]*)`", option, message)


def in_options(result: Any, command: str | None) -> Any:
    """RESULT with every text in it (notes, warnings, reasons) saying COMMAND's options where the library names its
    fields; the library's own results keep the fields' names."""
    if isinstance(result, str):
        return as_options(result, command) if "`" in result else result
    if isinstance(result, Value):
        changes = {}
        for name in type(result)._fields:
            value = getattr(result, name)
            mapped = in_options(value, command)
            if mapped is not value:
                changes[name] = mapped
        return replace(result, **changes) if changes else result
    if isinstance(result, (list, tuple)):
        items = [in_options(item, command) for item in result]
        if any(new is not old for new, old in zip(items, result)):
            return type(result)(items)
        return result
    if isinstance(result, dict):
        pairs = {key: in_options(value, command) for key, value in result.items()}
        return pairs if any(pairs[key] is not value for key, value in result.items()) else result
    return result


def _fail(message: str, exit_code: int) -> None:
    sys.stderr.write(f"Error: {' '.join(message.split())}\n")
    sys.exit(exit_code)
