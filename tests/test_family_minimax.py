"""MiniMax: MiniMax-01's lightning attention interleaved with softmax attention, and MiniMax-M2.

Every expected figure is derived by hand from the config's numbers (tests/configs/synthetic__minimax.json:
hidden 128, 8 heads (2 kv) of 24, 4 experts of 96 (2 per token), block_size 16, layers linear, full, linear,
linear; sliding_window 512).
"""

from ffncalc import account, flops, load_config

from .conftest import BUNDLED, ROOT

MINIMAX = str(ROOT / "tests" / "configs" / "synthetic__minimax.json")
DEFAULT_LAYERS = str(ROOT / "tests" / "configs" / "synthetic__minimax_default_layers.json")
M2_7 = str(BUNDLED / "MiniMaxAI__MiniMax-M2.7.json")
HIDDEN, INNER = 128, 8 * 24
MOE_AND_NORMS = HIDDEN * 4 + 4 * 3 * HIDDEN * 96 + 2 * HIDDEN


def group(report, index):
    return next(g for g in report.layers if index in g.indices)


def test_lightning_attention_layer_by_hand():
    # qkv_proj H → 3 · heads · head_dim, output_gate H → heads · head_dim, out_proj back, an RMSNorm over heads · head_dim.
    lightning = HIDDEN * 3 * INNER + HIDDEN * INNER + INNER * HIDDEN + INNER
    assert group(account(MINIMAX), 0).params == lightning + MOE_AND_NORMS


def test_default_layer_types_alternate_softmax_and_lightning():
    # (i + 1) odd: full attention; even: linear.
    report = account(DEFAULT_LAYERS)
    kinds = {index: g.attention_kind for g in report.layers for index in g.indices}
    assert kinds == {0: "mha", 1: "lightning_attention", 2: "mha"}


def test_lightning_state_update_is_five_flops_per_state_element():
    # Each linear layer keeps a 24 × 24 state per head: decay, outer product and its sum, readout q·S.
    per_layer = 5 * 8 * 24 * 24
    for n in (1024, 65536):
        assert flops(MINIMAX, n).per_token.mixer_state == 3 * per_layer


def test_only_the_softmax_layer_grows_with_context_within_its_window():
    # One full layer: 2 · 8 heads · (24 + 24) per key, at most sliding_window (512) keys.
    per_key = 2 * 8 * (24 + 24)
    assert flops(MINIMAX, 256).per_token.attention_scores == per_key * 256
    assert flops(MINIMAX, 4096).per_token.attention_scores == per_key * 512


def test_lightning_layers_store_their_decay_buffers():
    # slope_rate [8, 1, 1], query and key decay [8, 16, 1], diagonal decay [1, 8, 16, 16], in 3 layers.
    extra = next(e for e in account(MINIMAX).checkpoint_extras if e.name == "lightning attention decay buffers")
    assert extra.elements == 3 * (8 + 2 * 8 * 16 + 8 * 16 * 16)


def test_minimax_m2_norms_span_all_heads_and_routes_with_a_correction_bias():
    # 48 heads (8 kv) of 128 over hidden 3072: q_norm 48 · 128, k_norm 8 · 128; 256 experts of 1536.
    hidden = 3072
    layer = group(account(M2_7), 0)
    attention = hidden * 48 * 128 + 2 * hidden * 8 * 128 + 48 * 128 * hidden
    assert layer.components.attention == attention
    assert layer.parts["norm.q_norm"] == 48 * 128 and layer.parts["norm.k_norm"] == 8 * 128
    assert layer.params - layer.active_params == (256 - 8) * 3 * hidden * 1536
    spec = load_config(M2_7).spec
    bias = next(e for e in spec.checkpoint_extras if e.name == "router e_score_correction_bias")
    assert bias.buffer and len(bias.per_layer) == 62
