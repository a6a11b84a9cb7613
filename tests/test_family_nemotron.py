"""NVIDIA's dense Nemotron (Nemotron-4, Minitron): LayerNorm1P with biases and a squared-ReLU MLP.

Every expected figure is derived by hand from the config's numbers.
"""

import pytest

from ffncalc import account
from ffncalc.errors import InvalidConfigError

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"


def test_nemotron_layer_by_hand():
    # q and o 64 × 4 · 24 with biases, k and v 64 × 2 · 24 with biases; up 64 → 256 and down with biases;
    # two LayerNorm1P of weight and bias (2 · 64 each). Outside: embedding and head 320 × 64, the final LayerNorm1P.
    attention = 2 * 64 * 96 + 96 + 64 + 2 * (64 * 48 + 48)
    layer = attention + (64 * 256 + 256) + (256 * 64 + 64) + 2 * 2 * 64
    report = account(str(CONFIGS / "synthetic__nemotron.json"))
    assert report.layers[0].params == layer
    assert report.total_params == 2 * layer + 2 * 320 * 64 + 2 * 64


def test_nemotron_without_num_key_value_heads_is_refused_as_transformers_refuses(write_config):
    # NemotronConfig leaves num_key_value_heads None, and the attention divides the heads by it.
    with pytest.raises(InvalidConfigError, match="num_key_value_heads: required"):
        account(str(write_config({"model_type": "nemotron", "hidden_size": 64, "num_attention_heads": 4})))


# --- Nemotron-H: every block pattern, through every command ----------------------------------------

NEMOTRON_H = {
    "model_type": "nemotron_h", "vocab_size": 1000, "hidden_size": 64, "num_attention_heads": 4, "num_key_value_heads": 2,
    "head_dim": 16, "intermediate_size": 96, "ssm_state_size": 16, "mamba_num_heads": 8, "mamba_head_dim": 16,
    "n_groups": 2, "n_routed_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 32,
    "moe_shared_expert_intermediate_size": 32,
}  # fmt: skip


@pytest.mark.parametrize("pattern", ["*", "M", "-", "E", "ME", "M-", "*E", "M*-E", "MMM*"])
def test_every_block_pattern_answers_every_command(pattern, write_config):
    # M Mamba-2, * attention, - MLP, E MoE: with no attention layer, attention never overtakes the FFN
    from .conftest import run_main

    path = str(write_config({**NEMOTRON_H, "hybrid_override_pattern": pattern}))
    for args in (
        ["params", path],
        ["flops", path, "--ctx", "4k"],
        ["crossover", path, "--plot"],
        ["crossover", path, "--by", "bytes", "--dtype", "bf16"],
        ["memory", path, "--train", "--gpus", "2"],
        ["compare", path],
        ["derive-dim", "--model", path],
    ):
        run = run_main(*args, "--json") if args[0] not in ("crossover",) or "--plot" not in args else run_main(*args)
        assert run.exit_code == 0, (args, run.stderr)
        assert "Error" not in run.stderr
    report = run_main("crossover", path, "--json").json()
    if "*" not in pattern:
        assert report["crossover_context"] is None and report["never_reason"]
    else:
        assert report["crossover_context"] is not None or report["never_reason"]


def test_nemotron_h_keeps_its_own_head_although_tie_word_embeddings_says_true(write_config):
    # NemotronHForCausalLM._tied_weights_keys is {} (transformers 5.24): a 320 × 64 head of its own beside the table,
    # one ReLU² MLP 64 → 96 → 64 and its norm, the final norm_f; transformers builds 53,376 from this config
    config = {
        "model_type": "nemotron_h", "tie_word_embeddings": True, "layers_block_type": ["mlp"],
        "hidden_size": 64, "vocab_size": 320, "intermediate_size": 96,
    }  # fmt: skip
    report = account(str(write_config(config)))
    assert report.components.lm_head == 320 * 64
    assert report.total_params == 2 * 320 * 64 + 2 * 64 * 96 + 64 + 64 == 53_376
