"""AllenAI's OLMo lineage: OLMo-3's sliding windows, OLMoE's and FlexOlmo's q/k norms and experts.

Every expected figure is derived by hand from the config's numbers.
"""

from ffncalc import account, crossover, flops

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"
OLMO3 = "allenai/Olmo-3-7B-Instruct"


def test_olmo3_7b_by_hand():
    # H 4,096, FFN 11,008, 32 layers of 32 heads of 128 (no GQA), vocabulary 100,278, untied.
    # A layer: q, k, v, o 4,096² each; q and k RMSNorms across all heads (4,096 each); SwiGLU 3 · H · I;
    # two RMSNorms after the sublayers. Outside: embedding and head V · H each, the final RMSNorm.
    hidden, ffn, vocab = 4096, 11008, 100278
    layer = 4 * hidden * hidden + 2 * hidden + 3 * hidden * ffn + 2 * hidden
    assert account(OLMO3).total_params == 32 * layer + 2 * vocab * hidden + hidden == 7_298_011_136


def test_olmo3_every_fourth_layer_attends_to_the_whole_context():
    sliding, full = account(OLMO3).layers
    assert sliding.window == 4096 and full.window is None
    assert full.indices == [3, 7, 11, 15, 19, 23, 27, 31]
    assert len(sliding.indices) == 24


def test_olmo3_attention_scores_at_32k_read_4096_keys_in_sliding_layers():
    # 2 · 32 heads · (128 + 128) FLOPs per key; 24 sliding layers read 4,096 keys, 8 full layers 32,768.
    per_key = 2 * 32 * (128 + 128)
    assert flops(OLMO3, "32k").per_token.attention_scores == per_key * (24 * 4096 + 8 * 32768)


def test_olmo3_crossover_counts_the_full_layers_past_the_window():
    # FFN 32 · 2 · 3 · H · I per token; past 4,096 only the 8 full layers grow: 8 · 16,384 per key.
    ffn = 32 * 2 * 3 * 4096 * 11008
    sliding_cost = 24 * 2 * 32 * 256 * 4096
    report = crossover(OLMO3)
    assert report.ffn == ffn
    assert report.crossover_context_ceil == -(-(ffn - sliding_cost) // (8 * 2 * 32 * 256))


def test_olmoe_query_norm_spans_hidden_size_and_key_norm_the_kv_heads():
    # hidden 64 over 4 heads: head width 16; 2 KV heads: the key norm spans 2 · 16 = 32.
    (layer,) = account(str(CONFIGS / "synthetic__olmoe.json")).layers
    assert layer.parts["norm.q_norm"] == 64
    assert layer.parts["norm.k_norm"] == 32


def test_olmoe_active_parameters_use_two_of_four_experts():
    # Each expert: gate, up and down of 64 × 32; 2 layers; a token uses 2 of the 4.
    report = account(str(CONFIGS / "synthetic__olmoe.json"))
    expert = 3 * 64 * 32
    assert report.moe.routed_expert_params == 2 * 4 * expert
    assert report.total_params - report.active_params == 2 * 2 * expert


def test_flex_olmo_norms_follow_head_dim_and_come_after_the_sublayers():
    # head_dim 32 (not 64 / 4): q norm 4 · 32, k norm 2 · 32; no input_layernorm.
    (layer,) = account(str(CONFIGS / "synthetic__flex_olmo.json")).layers
    assert layer.parts["norm.q_norm"] == 128 and layer.parts["norm.k_norm"] == 64
    assert {"norm.post_attention_layernorm", "norm.post_feedforward_layernorm"} <= set(layer.parts)
    assert "norm.input_layernorm" not in layer.parts
