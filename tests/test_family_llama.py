"""Llama's direct descendants added with the Llama-shaped flagships: SmolLM3 and Granite-MoE-Shared.

Every expected figure is derived by hand from the config's numbers.
"""

from ffncalc import account

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"


def test_smollm3_slides_only_on_its_layers_without_rope_when_told(write_config):
    # no_rope_layers [1, 0, 1, 0]: layers 1 and 3 have no RoPE; with use_sliding_window they slide within 128.
    full, sliding = account(str(CONFIGS / "synthetic__smollm3.json")).layers
    assert full.indices == [0, 2] and full.window is None
    assert sliding.indices == [1, 3] and sliding.window == 128
    config = {
        "model_type": "smollm3",
        "hidden_size": 64,
        "num_attention_heads": 4,
        "num_key_value_heads": 4,
        "num_hidden_layers": 4,
        "sliding_window": 128,
    }
    (group,) = account(str(write_config(config))).layers  # use_sliding_window defaults to false
    assert group.window is None


def test_smollm3_ties_its_embeddings_by_default(write_config):
    config = {
        "model_type": "smollm3",
        "vocab_size": 1000,
        "hidden_size": 64,
        "num_attention_heads": 4,
        "num_key_value_heads": 4,
        "num_hidden_layers": 1,
        "pad_token_id": 0,
    }
    report = account(str(write_config(config)))
    assert report.tie_word_embeddings and report.components.lm_head == 0
    assert report.components.embedding == 1000 * 64


def test_granitemoeshared_shared_mlp_by_hand():
    # H 64, shared_intermediate_size 80: input_linear holds gate and up (2 · 80 × 64), output_linear 64 × 80;
    # it runs for every token beside 2 of the 4 experts (gate, up, down of 64 × 32 each).
    report = account(str(CONFIGS / "synthetic__granitemoeshared.json"))
    shared = 2 * 80 * 64 + 80 * 64
    expert = 3 * 64 * 32
    assert report.moe.shared_expert_params == 2 * shared
    assert report.total_params - report.active_params == 2 * 2 * expert
