"""Aria: a Llama-style MoE language model (every layer: a router, stacked SiLU experts, fused shared experts) and the
wrapper whose projector reads an Idefics3 tower's patches through learned queries and cross-attention.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/synthetic__aria.json: 299,360; synthetic__aria_text.json: 147,776;
defaults__aria.json: 18,701,885,824; defaults__aria_text.json: 18,517,069,824).
"""

import pytest

from ffncalc import account
from ffncalc.api import flops
from ffncalc.errors import UsageError

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"
ARIA = str(CONFIGS / "synthetic__aria.json")
ARIA_TEXT = str(CONFIGS / "synthetic__aria_text.json")

# 64 wide, 4 experts of 24 (3 · 64 · 24 each), a router of 4 rows
ROUTER, EXPERT = 4 * 64, 3 * 64 * 24


def test_aria_texts_layers_hold_a_router_stacked_experts_and_shared_experts_fused_into_one_mlp():
    report = account(ARIA_TEXT)
    # head_dim 24 makes q 96 wide: q, k and v (2 kv heads), o; one shared expert of intermediate_size
    attention = 64 * 96 + 2 * 64 * 48 + 96 * 64
    assert report.components.attention == 2 * attention
    assert report.components.ffn == 2 * (ROUTER + 4 * EXPERT + EXPERT)
    assert report.moe.routed_expert_params == 2 * 4 * EXPERT
    assert report.total_params == 2 * attention + 2 * (ROUTER + 5 * EXPERT) + 2 * 2 * 64 + 64 + 1000 * 64  # tied


def test_a_token_runs_the_router_two_experts_and_the_shared_ones():
    assert flops(ARIA_TEXT, 1).per_token.ffn == 2 * 2 * (ROUTER + 2 * EXPERT + EXPERT)


def test_the_wrappers_shared_experts_are_two_fused_into_one_mlp_twice_as_wide():
    # moe_num_shared_experts 2: one gated MLP 2 · 24 = 48 wide
    assert account(ARIA).components.ffn == 2 * (ROUTER + 4 * EXPERT + 3 * 64 * 48)


def test_arias_projector_holds_queries_cross_attention_and_an_mlp_by_hand():
    vision, text = 48, 64
    queries = 12 * vision  # max of projector_patch_to_query_dict's values (8, 12)
    cross = 3 * vision * vision + (3 * vision * vision + 3 * vision) + 2 * (vision * vision + vision) + 2 * 2 * vision
    mlp = vision * text + text * text  # linear_in, linear_out: no biases
    assert account(ARIA).components.projector == queries + cross + 2 * vision + mlp


def test_arias_image_flops_are_refused_by_name():
    with pytest.raises(UsageError, match="`image` needs a vision transformer tower"):
        flops(ARIA, image="980x980")
