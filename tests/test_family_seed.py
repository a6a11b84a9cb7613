"""ByteDance Seed's Seed-OSS: q/k/v and o carry separate bias switches.

Every expected figure is derived by hand from the config's numbers.
"""

from ffncalc import account

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"


def test_seed_oss_biases_q_k_v_by_default_and_o_only_when_told(write_config):
    # 8 heads of 16 over H 64, 2 KV heads: q 64 → 128, k and v 64 → 32, o 128 → 64.
    config = {
        "model_type": "seed_oss",
        "vocab_size": 100,
        "hidden_size": 64,
        "intermediate_size": 96,
        "num_hidden_layers": 1,
        "num_attention_heads": 8,
        "num_key_value_heads": 2,
        "head_dim": 16,
    }
    parts = account(str(write_config(config))).layers[0].parts
    assert parts["attention.q"] == 64 * 128 + 128 and parts["attention.k"] == 64 * 32 + 32
    assert parts["attention.o"] == 128 * 64  # attention_out_bias defaults to false
    synthetic = account(str(CONFIGS / "synthetic__seed_oss.json")).layers[0].parts
    assert synthetic["attention.o"] == 128 * 64 + 64
    assert synthetic["ffn.down"] == 96 * 64 + 64  # mlp_bias


def test_seed_oss_head_dim_defaults_to_128(write_config):
    config = {
        "model_type": "seed_oss",
        "vocab_size": 100,
        "hidden_size": 64,
        "intermediate_size": 96,
        "num_hidden_layers": 1,
        "num_attention_heads": 2,
        "num_key_value_heads": 1,
    }
    assert account(str(write_config(config))).layers[0].parts["attention.q"] == 64 * 2 * 128 + 2 * 128
