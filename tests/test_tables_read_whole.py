"""Tables that split to fit a terminal keep their meaning: layer lists read as ranges, each split part is headed by
what it shows, a tower's parts have their own table, and no table lists a component a stack does not hold."""

from __future__ import annotations

import json

import pytest

from ffncalc.render import layer_ranges

from .conftest import BUNDLED, run_main


@pytest.mark.parametrize(
    ("indices", "text"),
    [
        ([0, 1, 2, 5, 7, 8], "0–2, 5, 7–8"),
        (list(range(0, 36, 2)), "even 0–34"),  # gpt-oss-120b's sliding-window layers
        (list(range(1, 36, 2)), "odd 1–35"),
        (list(range(5, 54, 6)), "every 6th, 5–53"),
        ([i for i in range(26) if i % 6 != 5], "0–25 but every 6th, 5–23"),  # a 5:1 local:global pattern
        ([3, 7], "3, 7"),
    ],
)
def test_layer_lists_read_as_ranges(indices, text):
    assert layer_ranges(indices) == text


def test_gpt_oss_layers_table_keeps_one_line_per_kind(monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    lines = run_main("params", "openai/gpt-oss-120b").stdout.splitlines()
    assert any(line.startswith(" even 0–34   18   GQA, window 128") for line in lines)
    assert any(line.startswith(" odd 1–35    18   GQA") for line in lines)


def test_a_split_flops_table_names_each_part_by_what_it_shows(monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    out = run_main("flops", "meta-llama/Llama-3.1-8B").stdout
    assert " Token %" in out and " Prefill %" in out
    assert "\n Component                    %\n" not in out


def test_nemotron_h_parts_columns_say_what_each_holds(monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    lines = run_main("params", "nvidia/Nemotron-H-56B-Base-8K").stdout.splitlines()
    heading = lines[lines.index("Parts of one layer") + 2]
    # its hybrid_override_pattern: M a Mamba-2 mixer layer, - an FFN layer, * an attention layer
    pattern = json.loads((BUNDLED / "nvidia__Nemotron-H-56B-Base-8K.json").read_text())["hybrid_override_pattern"]
    counts = [str(pattern.count(kind)) for kind in "M-*"]
    assert counts == ["54", "54", "10"]
    assert heading.split() == ["Part", counts[0], "mixer", counts[1], "FFN", counts[2], "attention"]


def test_a_vision_tower_has_its_own_parts_table_without_empty_blocks(monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    out = run_main("params", "google/gemma-4-26B-A4B-it").stdout
    decoder = out.split("Parts of one decoder layer")[1].split("Parts of one vision layer")[0]
    vision = out.split("Parts of one vision layer")[1].split("Outside the layers")[0]
    assert "Vision tower" not in decoder
    assert " Attention " not in vision and " FFN " not in vision
    assert " Vision tower " in vision
