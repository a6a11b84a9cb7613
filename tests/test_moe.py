"""Mixture-of-experts totals and the parameters active per token.

Active = total − the routed experts a token skips. The routed experts' parameters come from
transformers on the meta device (routed_expert_params, tools/meta_count.py); experts and
experts per token are read from the config here, so the expected values do not use ffncalc.
"""

import json

import pytest

from ffncalc import account

from .conftest import BUNDLED, EXPECTED

TRANSFORMERS = json.loads((EXPECTED / "transformers_counts.json").read_text())["counts"]

EXPERT_FIELDS = {  # model_type: (experts, experts per token)
    "mixtral": ("num_local_experts", "num_experts_per_tok"),
    "qwen3_moe": ("num_experts", "num_experts_per_tok"),
    "deepseek_v3": ("n_routed_experts", "num_experts_per_tok"),
    "kimi_k2": ("n_routed_experts", "num_experts_per_tok"),
    "gpt_oss": ("num_local_experts", "num_experts_per_tok"),
}
MOE_MODELS = sorted(
    path.stem.replace("__", "/", 1)
    for path in BUNDLED.glob("*.json")
    if json.loads(path.read_text())["model_type"] in EXPERT_FIELDS
)


def test_mixtral_8x7b_active_count_is_the_issues_figure():
    # 32 layers × (attention 41,943,040 + 2 of 8 experts × 3·4096·14336 + router 4096·8 + norms 2·4096)
    # + embeddings and head 2 × 32000 × 4096 + final norm 4096.
    by_hand = 32 * (41_943_040 + 2 * 3 * 4096 * 14336 + 4096 * 8 + 2 * 4096) + 2 * 32000 * 4096 + 4096
    report = account("mistralai/Mixtral-8x7B-v0.1")
    assert by_hand == 12_879_925_248
    assert report.active_params == by_hand
    assert report.total_params == 46_702_792_704
    assert report.active_params_without_embedding == by_hand - 32000 * 4096


def test_deepseek_v3_expert_and_active_layer_match_the_brief():
    report = account("deepseek-ai/DeepSeek-V3")
    assert report.moe.expert_params == 3 * 7168 * 2048 == 44_040_192
    dense, sparse = report.layers
    assert dense.indices == [0, 1, 2] and sparse.indices == list(range(3, 61))
    # 8 routed + 1 shared expert per token = one dense layer's 3 × 7168 × 18432 = 396,361,728.
    active_experts = sparse.parts["ffn.routed_experts"] // 256 * 8 + sparse.parts["ffn.shared_experts"]
    assert active_experts == 396_361_728 == dense.components.ffn
    # all experts of one MoE layer: 257 × 44,040,192, plus the router 256 × 7168.
    assert sparse.components.ffn == 257 * 44_040_192 + 256 * 7168


@pytest.mark.parametrize("model", MOE_MODELS)
def test_active_count_matches_transformers_routed_experts(model):
    config = json.loads((BUNDLED / (model.replace("/", "__", 1) + ".json")).read_text())
    experts_field, per_token_field = EXPERT_FIELDS[config["model_type"]]
    experts, per_token = config[experts_field], config[per_token_field]
    expected = TRANSFORMERS[model.replace("/", "__", 1)]
    skipped = expected["routed_expert_params"] // experts * (experts - per_token)
    report = account(model)
    assert report.moe.routed_expert_params == expected["routed_expert_params"]
    assert report.active_params == expected["total_params"] - skipped


def test_active_without_embedding_keeps_a_tied_table_because_it_is_the_head(write_config):
    # qwen3_moe with tied embeddings: the table is the output head too, so it stays active.
    config = {
        "model_type": "qwen3_moe", "vocab_size": 1000, "hidden_size": 64, "intermediate_size": 128,
        "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 16,
        "num_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 32, "tie_word_embeddings": True,
    }
    report = account(str(write_config(config)))
    assert report.active_params_without_embedding == report.active_params
