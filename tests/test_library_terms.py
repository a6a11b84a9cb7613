"""The library speaks in its own terms: a misused option is named by its field; the command line by its flag."""

from __future__ import annotations

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
