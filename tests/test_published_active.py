"""Active parameters are labelled by what they include, and a published active figure says which one it matches.

The published figures and their sources are in ffncalc/published.py; the exact counts below are derived by hand
from each config (fixtures/configs)."""

from __future__ import annotations

import pytest

from ffncalc.api import account
from ffncalc.published import PublishedActive

from .conftest import run_main

# Qwen3-30B-A3B: 151,936 × 2,048 input table; active per token 3,353,032,704: the total, 30,532,122,624
# (transformers' count, tests/expected/transformers/Qwen__Qwen3-30B-A3B.json), less 120 of its 128 experts of
# 3 × 2,048 × 768 in each of 48 layers.
QWEN3_30B_ACTIVE = 30_532_122_624 - 48 * 120 * 3 * 2048 * 768


def test_qwen3_30b_a3b_card_matches_the_figure_with_the_input_table():
    report = account("Qwen/Qwen3-30B-A3B")
    assert report.active_params == QWEN3_30B_ACTIVE == 3_353_032_704
    assert report.active_params_without_embedding == QWEN3_30B_ACTIVE - 151_936 * 2048
    assert report.published_active == "3.3B"
    assert report.published_active_matches == "the figure with the input table"


def test_gpt_oss_card_matches_the_figure_without_the_input_table():
    # gpt-oss-120b's card: 5.1B active; its input table is 201,088 × 2,880 = 579,133,440, which the card leaves out.
    report = account("openai/gpt-oss-120b")
    assert report.active_params - report.active_params_without_embedding == 201_088 * 2880
    assert report.published_active_matches == "the figure without the input table"


def test_mixtral_announcement_matches_the_figure_with_the_input_table():
    # Mixtral-8x7B: 12,879,925,248 active with its 32,000 × 4,096 table (12.9B), 12,748,853,248 without (12.7B).
    assert account("mistralai/Mixtral-8x7B-v0.1").published_active_matches == "the figure with the input table"


@pytest.mark.parametrize(
    ("billions", "count", "matches"),
    [
        ("3.3", 3_353_032_704, True),
        ("3.3", 3_041_867_776, False),
        ("12.9", 12_879_925_248, True),
        ("37", 36_625_603_584, True),
    ],
)
def test_a_published_figure_is_a_count_rounded_or_cut_to_its_digits(billions, count, matches):
    assert PublishedActive(billions, "a card").rounds(count) is matches


def test_the_table_names_what_each_active_figure_includes():
    lines = [" ".join(line.split()) for line in run_main("params", "Qwen/Qwen3-30B-A3B").stdout.splitlines()]
    assert "Active per token, input table included 3,353,032,704 11.0%" in lines
    assert "Active per token, input table left out 3,041,867,776 10.0%" in lines
    assert not any("as cards quote" in line for line in lines)
