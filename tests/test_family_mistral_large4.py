"""Mistral Large 4 (mistral_large4, its language model mistral_large4_text): multi-head latent attention without a
query latent, rotary positions dropped every no_rope_layer_interval-th layer, DeepSeek-V3.2's lightning indexer with
queries from the hidden state, a dense layer then MoE layers, a Pixtral tower, all saved under Mistral's names.

The totals, components, routed experts and saved tensors are held to transformers 5.24 building the configs on the
meta device by tests/test_transformers_agreement.py (tests/expected/transformers/defaults__mistral_large4.json:
1,051,822,421,536; defaults__mistral_large4_text.json: 1,048,859,911,712; synthetic__mistral_large4.json:
1,601,140). Here the parts are derived by hand from the configs' numbers.
"""

import pytest

from ffncalc import account, flops, load_config
from ffncalc.errors import InvalidConfigError
from ffncalc.tensors import checkpoint_tensors

from .conftest import ROOT

SYNTHETIC = str(ROOT / "tests" / "configs" / "synthetic__mistral_large4.json")


def group(report, index):
    return next(g for g in report.layers if index in g.indices and g.stack == "decoder")


@pytest.fixture
def default(write_config):
    return str(write_config({"model_type": "mistral_large4"}))


def test_default_matches_transformers_total(default):
    # transformers 5.24, MistralLarge4ForConditionalGeneration on the meta device (defaults__mistral_large4.json).
    assert account(default).total_params == 1_051_822_421_536


def test_rope_and_nope_layers_attention_by_hand(default):
    # hidden 6144, 64 heads; q_proj 6144 → 64 × (64 + 64); kv_a 6144 → 512 + 64 (rope) or 512 (nope); kv_b 512 →
    # 64 × (64 + 128) (rope) or 64 × (128 + 128) (nope, the rotary dims join qk_nope); o 64 × 128 → 6144; softmax
    # scaling 2 × 64. The indexer: wq_b 6144 → 32 × 128, wk 6144 → 128, weights_proj 6144 → 32, its scaling 2 × 32.
    hidden, heads = 6144, 64
    indexer = hidden * 32 * 128 + hidden * 128 + hidden * 32 + 2 * 32
    common = hidden * heads * 128 + heads * 128 * hidden + 2 * heads + indexer
    rope = common + hidden * (512 + 64) + 512 * heads * (64 + 128)
    nope = common + hidden * 512 + 512 * heads * (128 + 128)
    report = account(default)
    assert group(report, 1).components.attention == rope
    assert group(report, 3).components.attention == nope  # no_rope_layer_interval 4: layers 3, 7, … 71
    assert group(report, 3).indices == list(range(3, 72, 4))


def test_default_moe_by_hand(default):
    # 71 MoE layers (first_k_dense_replace 1) of 128 experts × 3 × 6144 × 6144, 4 a token, one shared expert.
    report = account(default)
    assert report.moe.routed_expert_params == 71 * 128 * 3 * 6144 * 6144
    assert group(report, 0).components.ffn == 3 * 6144 * 24576


def test_attends_to_top_k_keys_and_every_indexer_scores_them_all(default):
    # 72 layers, each its own indexer (index_topk_freq 1); per attended key 2 · 64 heads · (128 + 128), index_topk
    # 2048 keys; the indexer scores every key with 32 heads of 128 and weighs its heads, 2 · 32.
    n = 32768
    scores = 72 * (2 * 64 * (128 + 128) * min(n, 2048) + (2 * 32 * 128 + 2 * 32) * n)
    assert flops(default, n).per_token.attention_scores == scores


def test_shared_indexer_layers_hold_none_and_score_nothing():
    # index_topk_freq 2, index_skip_topk_offset 2: layer i is full where max(i − 1, 0) % 2 == 0: layers 2 and 4
    # are shared. Its indexer: q_input_norm LayerNorm 2 × 128, wq_b 128 → 4 × 16, wk 128 → 16, k_norm 2 × 16,
    # weights_proj 128 → 4, softmax scaling 2 × 4.
    indexer = 2 * 128 + 128 * 4 * 16 + 128 * 16 + 2 * 16 + 128 * 4 + 2 * 4
    report = account(SYNTHETIC)
    assert group(report, 3).params - group(report, 4).params == indexer
    at_1k, at_2k = (flops(SYNTHETIC, n).per_token.attention_scores for n in (1024, 2048))
    attended = 6 * 2 * 4 * (32 + 32) * 64  # every layer attends to its 64 (index_topk) keys
    per_key = 2 * 4 * 16 + 2 * 4
    assert at_2k - at_1k == 4 * per_key * 1024 and at_1k == attended + 4 * per_key * 1024


def test_checkpoint_keeps_mistral_names():
    names = checkpoint_tensors(load_config(SYNTHETIC).spec)
    assert names["tok_embeddings.weight"] == (1000, 128)
    assert "output.weight" not in names  # tie_word_embeddings true
    assert names["lerope.alpha"] == (4,)  # qk_rope_head_dim / 2
    # no_rope_layer_interval 3: layer 2 has no rotary key, its kv_b gives qk_nope + qk_rope = 32 per head.
    assert names["layers.2.attention.wkv_a_with_mqa.weight"] == (32, 128)
    assert names["layers.2.attention.wkv_b.weight"] == (4 * (32 + 32), 32)
    assert names["layers.1.attention.wkv_a_with_mqa.weight"] == (32 + 8, 128)
    assert names["layers.2.experts.0.w1.weight"] == (48, 128)
    assert names["layers.2.shared_experts.w2.weight"] == (128, 2 * 48)
    assert names["vision_encoder.transformer.layers.0.attention.wq.weight"] == (64, 64)
    # the projector reads two feature layers (vision_feature_layer [-1, -2]): w_in 2 × 64 → 128, biased
    assert names["vision_language_adapter.w_in.weight"] == (128, 2 * 64)
    assert names["patch_merger.merging_layer.weight"] == (64, 64 * 4)


def test_shared_latent_caches_are_refused(write_config):
    config = {"model_type": "mistral_large4_text", "num_hidden_layers": 2, "kv_source_layers": [0, 0]}
    with pytest.raises(InvalidConfigError, match="kv_source_layers"):
        account(str(write_config(config)))


def test_default_is_the_published_1t_a52b(default):
    """transformers' docstring names the default's checkpoint mistralai/Mistral-Large-4-1T-A52B: about 1 T
    parameters, 52 B active a token without the token table (204,800 × 6,144, looked up, not multiplied)."""
    report = account(default)
    assert round(report.total_params / 1e12) == 1
    assert round((report.active_params - 204_800 * 6144) / 1e9) == 52
