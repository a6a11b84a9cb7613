"""Each command's --json has one top-level shape whatever it is asked: one GPU or many, a layout or a plan, an
engine or a solve (the keys its schema in schemas/ lists; absent figures are null, never missing)."""

from __future__ import annotations

import json

import pytest

from .conftest import ROOT, run_main

LLAMA = "meta-llama/Llama-3.1-8B"


def keys(*args: str) -> list[str]:
    run = run_main(*args, "--json")
    assert run.exit_code == 0, run.stderr
    return sorted(json.loads(run.stdout))


def schema_keys(command: str) -> list[str]:
    return sorted(json.loads((ROOT / "schemas" / f"{command}.schema.json").read_text())["properties"])


@pytest.mark.parametrize(
    "asked",
    [
        (),
        ("--gpus", "8", "--tp", "8"),
        ("--train", "--gpus", "8", "--zero", "3"),
        ("--train", "--gpus", "64", "--tp", "8", "--pp", "2"),
        ("--engine", "vllm", "--gpu", "a100"),
        ("--solve", "ctx", "--gpu", "l4"),
    ],
)
def test_memory_json_has_one_top_level_shape(asked):
    assert keys("memory", LLAMA, *asked) == schema_keys("memory")


@pytest.mark.parametrize(
    "asked",
    [
        (),
        ("--gpus", "64", "--tp", "8"),
        ("--gpus", "64", "--plan", "--global-batch", "512"),
        ("--compute", "1e23"),
        ("--measured-tokens-per-second", "1e5", "--gpus", "8"),
    ],
)
def test_train_json_has_one_top_level_shape(asked):
    assert keys("train", LLAMA, *asked) == schema_keys("train")


@pytest.mark.parametrize("asked", [(), ("--gpu", "h100,a100", "--batch", "1,8"), ("--tp", "2", "--output", "64")])
def test_speed_json_has_one_top_level_shape(asked):
    assert keys("speed", LLAMA, *asked) == schema_keys("speed")
