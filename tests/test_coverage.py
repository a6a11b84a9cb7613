"""models --families: the families by task, as transformers 5.24's auto mappings list the tasks' model_types
(ffncalc/transformers_tasks.json, written from transformers by tools/transformers_tasks.py), with how many each
task covers and every model_type known but not counted."""

from __future__ import annotations

import json
from pathlib import Path

from ffncalc.coverage import NOT_COUNTED_FOR_TASK, NOT_YET
from ffncalc.families import supported_model_types

from .conftest import run_main

TASKS = json.loads((Path(__file__).resolve().parent.parent / "ffncalc" / "transformers_tasks.json").read_text())


def test_every_model_type_of_every_task_is_counted_or_listed_as_not_counted():
    coverage = run_main("models", "--families", "--json").json()
    supported = set(supported_model_types())
    for task in coverage["tasks"]:
        listed = TASKS["tasks"][task["task"]]["model_types"]
        not_counted = [item["model_type"] for item in task["not_counted"]]
        assert sorted(task["counted"] + not_counted) == sorted(listed)
        counted_as_another_class = {
            model_type for task_name, model_type in NOT_COUNTED_FOR_TASK if task_name == task["task"]
        }
        assert set(task["counted"]) == (set(listed) & supported) - counted_as_another_class
        assert task["transformers_model_types"] == len(listed)


def test_a_model_type_counted_as_another_class_than_the_tasks_is_listed_with_the_reason():
    speech = next(
        task for task in run_main("models", "--families", "--json").json()["tasks"] if task["task"] == "speech"
    )
    reasons = {item["model_type"]: item["reason"] for item in speech["not_counted"]}
    assert "seamless_m4t" in supported_model_types()  # counted, as SeamlessM4TForTextToText
    assert "seamless_m4t" not in speech["counted"]
    assert reasons["seamless_m4t"].startswith("ffncalc counts its text-to-text class; the speech mapping's")


def test_the_summary_says_how_many_of_each_tasks_model_types_are_counted(monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    lines = [" ".join(line.split()) for line in run_main("models", "--families").stdout.splitlines()]
    causal = TASKS["tasks"]["text"]["model_types"]
    counted = len(set(causal) & set(supported_model_types()))
    share = f"{100 * counted / len(causal):.1f}%"
    assert f"Text (causal language models) {counted} {len(causal)} {share}" in lines


def test_model_types_in_no_mapping_are_said():
    coverage = run_main("models", "--families", "--json").json()
    named = {model_type for task in TASKS["tasks"].values() for model_type in task["model_types"]}
    assert coverage["outside_tasks"] == sorted(set(supported_model_types()) - named)


def test_every_model_type_not_counted_says_why():
    """Issue 28: each of the mappings' model_types is counted or listed with the mechanism that stops it."""
    coverage = run_main("models", "--families", "--json").json()
    without_reason = [
        (task["task"], item["model_type"])
        for task in coverage["tasks"]
        for item in task["not_counted"]
        if item["reason"] == NOT_YET
    ]
    assert without_reason == []


def test_no_counted_model_type_keeps_a_reason_for_not_being_counted():
    # a family added for a model_type makes its old "not counted" reason false; the listing must not keep it
    from ffncalc.coverage import NOT_COUNTED_REASONS

    assert sorted(set(NOT_COUNTED_REASONS) & set(supported_model_types())) == []
