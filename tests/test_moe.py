"""Mixture-of-experts totals and the parameters active per token.

Active = total − the routed experts a token skips. The routed experts' parameters come from
transformers on the meta device (routed_expert_params, tools/meta_count.py); experts and
experts per token are read from the config here, so the expected values do not use ffncalc.
"""

import json

import pytest

from ffncalc import account

from .agreement import built
from .conftest import BUNDLED

BUILT = built()

# model_type: where its config keeps (the routed experts, the experts per token), as dotted keys.
EXPERT_FIELDS = {
    "mixtral": ("num_local_experts", "num_experts_per_tok"),
    "phimoe": ("num_local_experts", "num_experts_per_tok"),
    "granitemoe": ("num_local_experts", "num_experts_per_tok"),
    "gpt_oss": ("num_local_experts", "num_experts_per_tok"),
    "qwen2_moe": ("num_experts", "num_experts_per_tok"),
    "qwen3_moe": ("num_experts", "num_experts_per_tok"),
    "qwen3_next": ("num_experts", "num_experts_per_tok"),
    "deepseek_v3": ("n_routed_experts", "num_experts_per_tok"),
    "deepseek_v4": ("n_routed_experts", "num_experts_per_tok"),
    "kimi_k2": ("n_routed_experts", "num_experts_per_tok"),
    "ernie4_5_moe": ("moe_num_experts", "moe_k"),
    "dbrx": ("ffn_config.moe_num_experts", "ffn_config.moe_top_k"),
    "llama4": ("text_config.num_local_experts", "text_config.num_experts_per_tok"),
    "bailing_moe": ("num_experts", "num_experts_per_tok"),
    "qwen3_5_moe": ("text_config.num_experts", "text_config.num_experts_per_tok"),
    "qwen3_vl_moe": ("text_config.num_experts", "text_config.num_experts_per_tok"),
    "glm4_moe": ("n_routed_experts", "num_experts_per_tok"),
    "glm_moe_dsa": ("n_routed_experts", "num_experts_per_tok"),
    "minimax_m2": ("num_local_experts", "num_experts_per_tok"),
    "gemma4": ("text_config.num_experts", "text_config.top_k_experts"),
    "jamba": ("num_experts", "num_experts_per_tok"),
}


def config_of(model):
    return json.loads((BUNDLED / (model.replace("/", "__", 1) + ".json")).read_text())


def dotted(config, key):
    for part in key.split("."):
        config = config[part]
    return config


MOE_MODELS = sorted(
    path.stem.replace("__", "/", 1)
    for path in BUNDLED.glob("*.json")
    if json.loads(path.read_text())["model_type"] in EXPERT_FIELDS
)


def test_every_bundled_moe_model_is_checked():
    moe = {model for model in (p.stem.replace("__", "/", 1) for p in BUNDLED.glob("*.json")) if account(model).moe}
    assert moe == set(MOE_MODELS)


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


@pytest.mark.parametrize("model", [m for m in MOE_MODELS if "total_params" in BUILT.get(m.replace("/", "__", 1), {})])
def test_active_count_is_transformers_total_less_the_routed_experts_a_token_skips(model):
    # Active = all parameters − (E − k)/E of the routed experts: E and k from the config, the routed
    # experts' parameters and the total from transformers' modules (tools/meta_count.py).
    config = config_of(model)
    experts_field, per_token_field = EXPERT_FIELDS[config["model_type"]]
    experts, per_token = dotted(config, experts_field), dotted(config, per_token_field)
    expected = BUILT[model.replace("/", "__", 1)]
    towers = sum(expected["components"].get(name, 0) for name in ("vision", "projector"))
    skipped = expected["routed_expert_params"] // experts * (experts - per_token)
    assert account(model).active_params == expected["total_params"] - towers - skipped


def test_active_without_embedding_keeps_a_tied_table_because_it_is_the_head(write_config):
    # qwen3_moe with tied embeddings: the table is the output head too, so it stays active.
    config = {
        "model_type": "qwen3_moe",
        "vocab_size": 1000,
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "head_dim": 16,
        "num_experts": 4,
        "num_experts_per_tok": 2,
        "moe_intermediate_size": 32,
        "tie_word_embeddings": True,
    }
    report = account(str(write_config(config)))
    assert report.active_params_without_embedding == report.active_params
