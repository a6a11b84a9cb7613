"""DeepSeek-V3.2: V3's MLA and MoE with a lightning indexer choosing the keys each layer attends to; DeepSeek-V4
(below): shared-key-value attention over a window and compressed keys, hyper-connections, hash-routed MoE.

Every expected figure is derived by hand from the config's numbers (tests/configs/synthetic__deepseek_v32.json:
hidden 128, 4 layers, 8 heads, q_lora 64, kv_lora 32, qk 16 + 8, v 16, 8 experts of 48, 2 per token, 1 shared;
the indexer 4 heads of 32, top 64 keys).
"""

import json

import pytest

from ffncalc import account, crossover, flops
from ffncalc.api import load_config, memory
from ffncalc.errors import InvalidConfigError
from ffncalc.tensors import checkpoint_tensors

from .conftest import BUNDLED, ROOT

V32 = ROOT / "tests" / "configs" / "synthetic__deepseek_v32.json"


def config(**overrides):
    return {**json.loads(V32.read_text()), **overrides}


def group(report, index):
    return next(g for g in report.layers if index in g.indices)


def test_v32_every_layer_has_an_indexer():
    # wq_b: q_lora 64 → 4 × 32; wk: 128 → 32 and its LayerNorm (weight and bias); weights_proj: 128 → 4.
    indexer = 64 * 4 * 32 + 128 * 32 + 2 * 32 + 128 * 4
    for layer in account(str(V32)).layers:
        assert layer.parts["attention.indexer"] + layer.parts["norm.indexer_k_norm"] == indexer


def test_v32_attends_to_top_k_keys_and_scores_every_key():
    # Per attended key 2 · 8 heads · ((16 + 8) + 16), at most 64 keys; the indexer 2 · 4 · 32 per key, all n,
    # and its weighted sum of the 4 heads' scores (weights @ scores in modeling_deepseek_v32.py) 2 · 4 per key.
    for n in (32, 4096):
        expected = 4 * (2 * 8 * (24 + 16) * min(n, 64) + (2 * 4 * 32 + 2 * 4) * n)
        assert flops(str(V32), n).per_token.attention_scores == expected


def test_v32_mlp_layer_types_decide_which_layers_are_moe(write_config):
    report = account(str(write_config(config(mlp_layer_types=["sparse", "dense", "sparse", "dense"]))))
    assert [g.ffn_kind for g in sorted(report.layers, key=lambda g: g.indices[0])] == ["moe", "dense"]
    assert group(report, 0).indices == [0, 2]


def test_v32_mlp_layer_types_must_list_every_layer(write_config):
    with pytest.raises(InvalidConfigError, match="mlp_layer_types"):
        account(str(write_config(config(mlp_layer_types=["dense", "sparse"]))))


def test_v32_checkpoint_mtp_layers_come_from_a_key_transformers_does_not_read(write_config):
    with_mtp = account(str(V32))
    without = account(str(write_config({k: v for k, v in config().items() if k != "num_nextn_predict_layers"})))
    assert with_mtp.total_params == without.total_params
    names = {extra.name for extra in with_mtp.checkpoint_extras} - {extra.name for extra in without.checkpoint_extras}
    assert names == {"multi-token-prediction layers"}


# --- DeepSeek-V4 ---------------------------------------------------------------------------------
# The published V4-Pro config (fixtures/configs/deepseek-ai__DeepSeek-V4-Pro.json): hidden 7168, 61 layers, 128
# heads of 512 through one key-value head, q_lora 1536, o_groups 16 of o_lora 1024, window 128, 384 experts of 3072
# (6 per token) and one shared MLP, the indexer 64 heads of 128 picking 1024, hc_mult 4; compress_ratios make
# layers 0, 1 and the odd ones HCA (31 layers, rate 128), the even ones from 2 on CSA (30 layers, rate 4).
# The synthetic one (tests/configs/synthetic__deepseek_v4.json): hidden 64, 4 heads of 32, window 16, CSA rate 4
# with the indexer's top 8 (2 heads of 16), HCA rate 16; layers sliding, CSA, HCA, CSA, HCA, sliding.

V4_PRO = str(BUNDLED / "deepseek-ai__DeepSeek-V4-Pro.json")
V4 = ROOT / "tests" / "configs" / "synthetic__deepseek_v4.json"
V4_LEGACY = ROOT / "tests" / "configs" / "synthetic__deepseek_v4_legacy.json"
CSA, HCA, SLIDING = "compressed_sparse_attention", "heavily_compressed_attention", "sliding_attention"


def v4_config(**overrides):
    return {**json.loads(V4.read_text()), **overrides}


def test_v4_pro_csa_layer_holds_its_compressor_indexer_and_hyper_connections_by_hand():
    hidden, heads, head_dim, q_lora, hc = 7168, 128, 512, 1536, 4
    attention = (
        hidden * q_lora
        + q_lora * heads * head_dim  # wq_a, wq_b
        + hidden * head_dim  # wkv: one head, keys and values alike
        + (16 * 1024) * (heads * head_dim // 16)
        + (16 * 1024) * hidden  # wo_a (block-diagonal), wo_b
        + heads  # attn_sink
    )
    compressor = 2 * hidden * (2 * head_dim) + 4 * (2 * head_dim) + head_dim  # wkv, wgate, ape [4, 1024], norm
    indexer = q_lora * 64 * 128 + hidden * 64 + 2 * hidden * 256 + 4 * 256 + 128  # wq_b, weights_proj, its compressor
    norms = q_lora + head_dim + 2 * hidden  # q_norm, attn.norm, attn_norm, ffn_norm
    moe = hidden * 384 + 384 * 3 * hidden * 3072 + 3 * hidden * 3072  # router, experts, shared MLP
    hyper = 2 * ((2 + hc) * hc * hc * hidden + (2 + hc) * hc + 3)  # hc_attn_* and hc_ffn_*: fn, base, scale
    assert group(account(V4_PRO), 2).params == attention + compressor + indexer + norms + moe + hyper == 25_768_646_454


def test_v4_pro_published_counts_round_to_1_6_t_total_and_49_b_active_without_the_table():
    # DeepSeek (restated by an API provider): "1.6T-parameter … 49B active"; the active figure, as model cards
    # quote MoE models, leaves out the input embedding table (129280 × 7168).
    report = account(V4_PRO)
    assert round(report.total_params / 1e11) == 16
    assert round((report.active_params - 129280 * 7168) / 1e9) == 49


@pytest.mark.parametrize(
    ("kind", "context", "keys", "indexer_keys"),
    [
        # CSA: min(n, 16) + min(n // 4, 8) compressed entries; its indexer scores all n // 4.
        (CSA, 12, 12 + 3, 3),
        (CSA, 100, 16 + 8, 25),
        # HCA: min(n, 16) + n // 16 compressed entries, all of them; no indexer.
        (HCA, 12, 12 + 0, 0),
        (HCA, 100, 16 + 6, 0),
        (SLIDING, 100, 16, 0),
    ],
)
def test_v4_attends_to_its_window_and_compressed_entries(write_config, kind, context, keys, indexer_keys):
    # Each key costs 2 · 4 heads · (32 + 32): keys are values, of head_dim; the indexer's 2 · 2 heads · 16, and the
    # weighted sum of its 2 heads' scores, 2 · 2.
    path = write_config(v4_config(layer_types=[kind] * 6))
    per_indexer_key = 2 * 2 * 16 + 2 * 2
    assert flops(str(path), context).per_token.attention_scores == 6 * (
        2 * 4 * 64 * keys + per_indexer_key * indexer_keys
    )


def test_v4_causal_prefill_sees_the_entries_each_token_has_closed(write_config):
    # An HCA layer: token i attends to min(i, 16) keys and i // 16 entries; over 40 tokens Σ min(i, 16) = 136 + 24 · 16
    # and Σ i // 16 = 16 · 1 + 9 · 2 (tokens 16–31 read one, 32–40 two).
    path = write_config(v4_config(layer_types=[HCA] * 6))
    keys = 136 + 24 * 16 + 16 * 1 + 9 * 2
    assert flops(str(path), 40).prefill.attention_scores == 6 * 2 * 4 * 64 * keys


def test_v4_hyper_connections_cost_their_projections_and_the_mixing_of_the_streams():
    # Per layer two connections of fn [(2 + 2) · 2, 2 · 64] and a [2, 2] × [2, 64] mix each; hc_head's fn [2, 128].
    per_layer = 2 * (2 * 8 * 128 + 2 * 2 * 2 * 64)
    assert flops(str(V4), 1).per_token.other == 6 * per_layer + 2 * 2 * 128


def test_v4_kv_cache_holds_the_window_and_the_compressed_entries(write_config):
    # One vector of head_dim 32 per key (keys are values); CSA adds n // 4 entries of 32 and the indexer's of 16,
    # HCA n // 16 entries of 32. BF16: 2 bytes. Two layers of each kind.
    def elements(n):
        window = min(n, 16) * 32
        return 2 * window + 2 * (window + n // 4 * (32 + 16)) + 2 * (window + n // 16 * 32)

    for n in (10, 1000):
        assert memory(str(V4), n, kv_dtype="bf16").kv_cache.bytes == elements(n) * 2
    # Past the window a token adds, on average, 2 · (32 + 16) / 4 + 2 · 32 / 16 elements.
    assert memory(str(V4), 1000, kv_dtype="bf16").kv_cache.bytes_per_token == (24 + 4) * 2


def test_v4_pro_crossover_falls_on_a_compressed_entry():
    # Past 4096 tokens the CSA layers read 128 + 1024 keys and score n // 4 indexer keys, the HCA layers read
    # 128 + n // 128: at n = 128 · a + 4 · b the scores are
    #   262,144 · (30 · 1152 + 31 · (128 + a)) + 30 · 16,512 · (32 · a + b)  (2 · 128 heads · 1024 per key;
    #   the indexer 2 · 64 heads · 128 per key and the weighted sum of its 64 heads' scores, 2 · 64),
    # and the FFN is 61 × (router + 6 experts + the shared MLP): 2 · 7168 · (384 + 7 · 3 · 3072).
    ffn = 61 * 2 * 7168 * (384 + 7 * 3 * 3072)

    def scores(a, b):
        return 262_144 * (30 * 1152 + 31 * (128 + a)) + 30 * 16_512 * (32 * a + b)

    assert scores(1945, 28) < ffn <= scores(1945, 29)  # first reached at 128 · 1945 + 4 · 29
    report = crossover(V4_PRO, "1m")
    assert report.ffn == ffn
    assert report.crossover_context == report.crossover_context_ceil == 128 * 1945 + 4 * 29 == 249_076


def test_v4_hash_layers_store_a_token_to_experts_table_the_others_a_correction_bias():
    extras = {extra.name: extra for extra in load_config(V4_PRO).spec.checkpoint_extras}
    table, bias = extras["hash router tid2eid"], extras["router e_score_correction_bias"]
    assert (table.per_layer, table.tensors[0].shape) == ((0, 1, 2), (129280, 6))
    assert (len(bias.per_layer), bias.tensors[0].shape) == (58, (384,))
    assert table.buffer and bias.buffer


def test_v4_checkpoint_names_are_deepseeks_own():
    names = checkpoint_tensors(load_config(V4_PRO).spec)
    assert names["model.layers.2.attn.wo_a.weight"] == (16 * 1024, 128 * 512 // 16)
    assert names["model.layers.2.attn.indexer.compressor.ape"] == (4, 2 * 128)
    assert names["model.layers.0.hc_attn_fn"] == ((2 + 4) * 4, 4 * 7168)
    assert names["model.hc_head.hc_fn"] == (4, 4 * 7168)
    assert names["head.weight"] == (129280, 7168)


def test_v4_legacy_keys_build_what_the_modern_fields_say(write_config):
    # compress_ratios [0, 4, 128, 4, (0)], compress_rate_csa 8 / _hca 32 and num_hash_layers 1 are folded into
    # layer_types, compress_rates and mlp_layer_types; the extra ratio (the MTP layer's) is dropped.
    legacy = json.loads(V4_LEGACY.read_text())
    modern = {
        k: v
        for k, v in legacy.items()
        if k not in ("compress_ratios", "compress_rate_csa", "compress_rate_hca", "num_hash_layers")
    }
    modern |= {
        "layer_types": [SLIDING, CSA, HCA, CSA],
        "compress_rates": {CSA: 8, HCA: 32},
        "mlp_layer_types": ["hash_moe", "moe", "moe", "moe"],
    }
    path = write_config(modern)
    assert account(str(V4_LEGACY)).total_params == account(str(path)).total_params
    assert flops(str(V4_LEGACY), 300).per_token == flops(str(path), 300).per_token


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"layer_types": [SLIDING] * 5}, "layer_types"),  # transformers: num_hidden_layers must equal len(layer_types)
        ({"compress_ratios": [0, 8, 4, 4, 4, 4], "layer_types": None}, "compress_ratios"),  # KeyError: 8
        ({"mlp_layer_types": ["dense"] * 6}, "mlp_layer_types"),  # entries must be hash_moe or moe
        ({"compress_rates": {CSA: 4}}, "compress_rates"),  # the HCA compressor: KeyError 'heavily_compressed_attention'
    ],
)
def test_v4_refuses_what_transformers_refuses(write_config, change, field):
    config = {k: v for k, v in {**v4_config(), **change}.items() if v is not None}
    with pytest.raises(InvalidConfigError, match=field):
        account(str(write_config(config)))


def test_v4_counts_o_groups_that_do_not_divide_the_heads_with_a_warning():
    # 5 heads of 16 over o_groups 3: transformers builds o_a [3 · 10, 80 // 3] (meta_count: wo_a [30, 26]), but
    # cannot reshape the attention's output into 3 groups.
    report = account(str(V4_LEGACY))
    assert group(report, 0).parts["attention.o_a"] == 30 * (80 // 3)
    assert "o_groups (3)" in " ".join(report.warnings)
