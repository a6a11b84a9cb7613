"""The library speaks in its own terms: a misused option is named by its field; the command line by its flag."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest

import ffncalc
from ffncalc.errors import UsageError

from .conftest import run_main

LLAMA = "meta-llama/Llama-3.1-8B"


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda: ffncalc.memory(LLAMA, zero_stage=5, train=True), "`zero_stage` must be 0, 1, 2 or 3 (got 5)"),
        (lambda: ffncalc.memory(LLAMA, lora_rank=16), "`lora_rank` apply to `train`"),
        (lambda: ffncalc.speed(LLAMA, tensor_parallel=0), "`tensor_parallel` must be a whole number"),
        (lambda: ffncalc.speed(LLAMA, compute_efficiency=2.0), "`compute_efficiency` must be above 0"),
        (lambda: ffncalc.train(LLAMA, mfu=1.5), "`mfu` must be above 0 and at most 1"),
        (lambda: ffncalc.train(LLAMA, pipeline_parallel=0), "`pipeline_parallel`"),
    ],
)
def test_a_misused_library_option_is_named_by_its_field_not_a_flag(call, field):
    with pytest.raises(UsageError) as raised:
        call()
    assert field in str(raised.value)
    assert "--" not in str(raised.value)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("memory", LLAMA, "--train", "--zero", "5"), "Error: --zero must be 0, 1, 2 or 3 (got 5)"),
        (("speed", LLAMA, "--compute-efficiency", "2"), "Error: --compute-efficiency must be above 0"),
        (("train", LLAMA, "--mfu", "1.5"), "Error: --mfu must be above 0 and at most 1"),
    ],
)
def test_the_command_line_names_the_same_error_by_its_flag(args, message):
    run = run_main(*args)
    assert run.exit_code == 2 and run.stderr.startswith(message)


# --- the library's text names fields; only the command line and its renderers spell options -----------------------

FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]+")
PACKAGE = Path(ffncalc.__file__).parent


def library_strings():
    """(module, line, text) for every string constant of the package outside the command line (cli/) and the
    renderers (render/): messages, notes, conventions and docstrings alike."""
    for path in sorted(PACKAGE.rglob("*.py")):
        module = path.relative_to(PACKAGE).as_posix()
        if module.startswith(("cli/", "render/")):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                yield module, node.lineno, node.value


def test_no_option_is_spelled_as_a_flag_outside_the_command_line_and_its_renderers():
    spelled = [f"{module}:{line} {FLAG.findall(text)}" for module, line, text in library_strings() if FLAG.search(text)]
    assert spelled == []


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda: ffncalc.flops(LLAMA, image="0x0"), "`image`"),
        (lambda: ffncalc.derive_dim(), "`dim`"),
        (lambda: ffncalc.speed(LLAMA, accelerators=","), "`accelerators`"),
        (lambda: ffncalc.speed(LLAMA, batches="0"), "`batches`"),
        (lambda: ffncalc.memory(LLAMA, engine="vllm@"), "`engine`"),
        (lambda: ffncalc.memory(LLAMA, dtype="int3"), "`dtype`"),
        (lambda: ffncalc.train(LLAMA, compute_dtype="fp3"), "`compute_dtype`"),
        (lambda: ffncalc.list_bundled(family="no-such-family"), "`family`"),
        (lambda: ffncalc.load_config(LLAMA, overrides=("no_such_field=1",)), "`sets`"),
    ],
)
def test_every_library_function_names_a_misused_argument_by_its_field(call, field):
    with pytest.raises(UsageError) as raised:
        call()
    assert field in str(raised.value) and not FLAG.search(str(raised.value))


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("speed", LLAMA, "--gpu", ","), "Error: --gpu names none"),
        (("speed", LLAMA, "--batch", "0"), "Error: --batch takes whole numbers"),
        (("memory", LLAMA, "--engine", "vllm@"), "Error: --engine 'vllm@'"),
        (("params", LLAMA, "--set", "no_such_field=1"), "Error: --set no_such_field: no_such_field is not a field"),
        (("models", "--family", "no-such-family"), "Error: --family 'no-such-family'"),
    ],
)
def test_the_command_line_writes_each_field_as_its_option(args, message):
    run = run_main(*args)
    assert run.exit_code != 0 and run.stderr.startswith(message), run.stderr


def test_a_note_the_library_writes_with_a_field_is_read_on_the_command_line_with_its_option():
    # the library's note names the field; the same note printed by `memory` names the option
    assert any(note.startswith("`dtype` int4:") for note in ffncalc.memory(LLAMA, dtype="int4").notes)
    run = run_main("memory", LLAMA, "--dtype", "int4", "--json")
    assert any(note.startswith("--dtype int4:") for note in json.loads(run.stdout)["notes"])


@pytest.mark.parametrize("command", ["memory", "speed", "train"])
def test_every_option_of_the_wrong_type_is_refused_naming_its_field(command):
    # A list is no option's type: each field refuses it with its own name, before any model is read.
    import ffncalc
    from ffncalc.engine.memory import MemoryOptions
    from ffncalc.engine.speed import SpeedOptions
    from ffncalc.engine.train import TrainOptions
    from ffncalc.errors import UsageError

    options = {"memory": MemoryOptions, "speed": SpeedOptions, "train": TrainOptions}[command]
    for field in options._fields:
        with pytest.raises(UsageError, match=f"^`{field}` must be "):
            getattr(ffncalc, command)("no/such-model", **{field: [1]})


@pytest.mark.parametrize("function", ["flops", "crossover", "derive_dim", "compare", "verify"])
def test_every_argument_of_the_wrong_type_is_refused_naming_it(function):
    import inspect

    import ffncalc
    from ffncalc.errors import UsageError

    door = getattr(ffncalc, function)
    parameters = inspect.signature(door).parameters
    for name, parameter in parameters.items():
        if parameter.annotation is inspect.Parameter.empty or name == "live":
            continue
        given = (
            {"model": "no/such-model"}
            if "model" in parameters and parameters["model"].default is parameter.empty
            else {}
        )
        with pytest.raises(UsageError, match=f"^`{name}` must be "):
            door(**{**given, name: [1.5]})
