"""GLM: GLM-4 (fused gate_up_proj, four norms a layer), GLM-4.5 (GQA beside DeepSeek's MoE), GLM-4.7-Flash
(MLA) and GLM-5 (DeepSeek-V3.2's sparse attention, layers sharing their indexer's picks).

Every expected figure is derived by hand from the config's numbers.
"""

import pytest

from ffncalc import account, flops, load_config
from ffncalc.errors import InvalidConfigError
from ffncalc.tensors import checkpoint_tensors

from .conftest import BUNDLED, ROOT

CONFIGS = ROOT / "tests" / "configs"
GLM4_32B = str(BUNDLED / "zai-org__GLM-4-32B-0414.json")
GLM4_5 = str(BUNDLED / "zai-org__GLM-4.5.json")
GLM5_1 = str(BUNDLED / "zai-org__GLM-5.1.json")
SHARED_INDEXER = str(CONFIGS / "synthetic__glm_moe_dsa_shared_indexer.json")


def group(report, index):
    return next(g for g in report.layers if index in g.indices)


def test_glm4_layer_has_four_norms_and_a_fused_gate_up_proj():
    # hidden 6144, MLP 23040; 48 heads (2 kv) of 128, no attention bias; four RMSNorms of 6144.
    hidden, width = 6144, 23040
    attention = hidden * 48 * 128 + 2 * hidden * 2 * 128 + 48 * 128 * hidden
    assert group(account(GLM4_32B), 0).params == attention + 3 * hidden * width + 4 * hidden
    names = checkpoint_tensors(load_config(GLM4_32B).spec)
    assert names["model.layers.0.mlp.gate_up_proj.weight"] == (2 * width, hidden)
    assert "model.layers.0.post_mlp_layernorm.weight" in names


def test_glm4_5_published_counts_leave_out_the_tables_and_count_the_mtp_layer():
    """Z.ai: 355 B total, 32 B active (rounded). transformers builds 92 layers; the checkpoint holds a 93rd,
    the multi-token-prediction layer (num_nextn_predict_layers = 1). The published figures match when the
    embedding table and the output head (151552 × 5120 each) are left out and the MTP layer is counted in
    the total: an MoE layer, eh_proj 2H → H and three RMSNorms (enorm, hnorm, shared_head.norm)."""
    hidden, vocab = 5120, 151552
    report = account(GLM4_5)
    tables = 2 * vocab * hidden
    mtp_layer = group(report, 3).params + 2 * hidden * hidden + 3 * hidden
    assert round((report.total_params - tables + mtp_layer) / 1e9) == 355
    assert round((report.active_params - tables) / 1e9) == 32


def test_glm4_5_attention_has_qkv_biases_and_per_head_norms():
    # 96 heads (8 kv) of 128 over hidden 5120, q/k/v biases (attention_bias), o none; q/k RMSNorms of 128.
    hidden = 5120
    attention = (hidden * 96 * 128 + 96 * 128) + 2 * (hidden * 8 * 128 + 8 * 128) + 96 * 128 * hidden + 2 * 128
    assert group(account(GLM4_5), 0).components.attention + 2 * 128 == attention


def test_glm5_indexer_parameters_by_hand():
    # wq_b: q_lora 2048 → 32 heads × 128; wk: 6144 → 128 and its LayerNorm (weight, bias); weights_proj 6144 → 32.
    indexer = 2048 * 32 * 128 + 6144 * 128 + 2 * 128 + 6144 * 32
    parts = group(account(GLM5_1), 3).parts
    assert parts["attention.indexer"] + parts["norm.indexer_k_norm"] == indexer


def test_glm5_attends_to_top_k_keys_and_its_indexer_scores_them_all():
    # 78 layers; per attended key 2 · 64 heads · (256 + 256); index_topk 2048 keys attended; the indexer
    # scores every key with 32 heads of 128 and sums the heads' scores with per-token weights (weights @ scores in
    # modeling_glm_moe_dsa.py, 2 · 32 per key: the 5,111,808 FLOPs per token at 1,024 that FlopCounterMode counts).
    n = 32768
    scores = 78 * (2 * 64 * (256 + 256) * min(n, 2048) + (2 * 32 * 128 + 2 * 32) * n)
    assert flops(GLM5_1, n).per_token.attention_scores == scores


def test_glm5_shared_layers_reuse_the_previous_indexer_and_hold_none():
    # index_topk_freq 2, index_skip_topk_offset 2: layer i is full where max(i − 1, 0) % 2 == 0, so layers
    # 2 and 4 are shared. The indexer: wq_b 64 → 4 × 16, wk 128 → 16, LayerNorm 2 × 16, weights_proj 128 → 4.
    indexer = 64 * 4 * 16 + 128 * 16 + 2 * 16 + 128 * 4
    report = account(SHARED_INDEXER)
    assert group(report, 1).params - group(report, 2).params == indexer
    assert group(report, 2).indices == [2, 4]
    # Only the four full layers score keys: 2 · 4 heads · 16 per key each, and weigh the 4 heads' scores, 2 · 4.
    at_1k, at_2k = (flops(SHARED_INDEXER, n).per_token.attention_scores for n in (1024, 2048))
    attended = 6 * 2 * 4 * (32 + 32) * 64  # every layer attends to its 64 (index_topk) keys
    per_key = 2 * 4 * 16 + 2 * 4
    assert at_2k - at_1k == 4 * per_key * 1024 and at_1k == attended + 4 * per_key * 1024


def test_glm4_moe_lite_reads_head_dim_as_the_rope_width(write_config):
    # attribute_map: head_dim is qk_rope_head_dim. q_b: q_lora 64 → 4 heads × (24 + 8).
    names = checkpoint_tensors(load_config(str(CONFIGS / "synthetic__glm4_moe_lite.json")).spec)
    assert names["model.layers.0.self_attn.q_b_proj.weight"] == (4 * (24 + 8), 64)


def test_glm5_odd_rope_width_is_refused_as_transformers_refuses(write_config):
    with pytest.raises(InvalidConfigError, match="qk_rope_head_dim"):
        account(str(write_config({"model_type": "glm_moe_dsa", "qk_rope_head_dim": 7, "num_hidden_layers": 1})))
