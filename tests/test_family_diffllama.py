"""DiffLlama: Llama's projections, norms and MLP, the attention run twice over the same queries and keys (each call
over one half of the value heads) and four learned λ vectors a layer.

The totals, components and saved tensors are held to transformers 5.24 building the configs on the meta device by
tests/test_transformers_agreement.py (tests/expected/transformers/defaults__diffllama.json: 1,204,885,504;
synthetic__diffllama.json: 115,712), and a forward pass of synthetic__diffllama to FlopCounterMode by
tests/test_flops.py (tests/expected/flop_counter.json). Here the parts are derived by hand from the configs' numbers.
"""

import pytest

from ffncalc import account, flops, memory
from ffncalc.errors import InvalidConfigError

from .conftest import ROOT

SYNTHETIC = str(ROOT / "tests" / "configs" / "synthetic__diffllama.json")


@pytest.fixture
def default(write_config):
    return str(write_config({"model_type": "diffllama"}))


def test_default_matches_transformers_by_hand(default):
    # DiffLlamaConfig(): hidden 2,048, 32 heads of 64 (num_key_value_heads None: 32), 16 layers, gated MLP of 8,192,
    # vocabulary 32,000 untied. A layer: q, k, v, o 4 · 2,048², the λ vectors 4 · 64 (the groupnorm has no weight),
    # MLP 3 · 2,048 · 8,192, two RMSNorms 2 · 2,048; the final norm 2,048; the token table and the head 2 · 32,000 ·
    # 2,048. transformers 5.24 on meta: 1,204,885,504.
    hidden = 2048
    layer = 4 * hidden * hidden + 4 * 64 + 3 * hidden * 8192 + 2 * hidden
    report = account(default)
    assert report.total_params == 16 * layer + hidden + 2 * 32000 * hidden == 1_204_885_504


def test_lambdas_are_attention_parameters():
    # synthetic: head_dim 24, attention_bias; q 64 → 4 · 24 and o back, k and v 64 → 2 · 24, each biased, λ 4 · 24
    report = account(SYNTHETIC)
    attention = 64 * 96 + 96 + 2 * (64 * 48 + 48) + 96 * 64 + 64 + 4 * 24
    assert report.layers[0].components.attention == attention


def test_scores_and_values_cost_twice_a_llama_attention():
    # per key: two calls, each 2 · 4 heads · 24 for QKᵀ and 2 · 4 · 24 for AV (each call's values one head_dim wide)
    per_key = 2 * (2 * 4 * 24 + 2 * 4 * 24)
    at_1k, at_2k = (flops(SYNTHETIC, n).per_token.attention_scores for n in (1024, 2048))
    assert at_1k == 2 * per_key * 1024 and at_2k - at_1k == 2 * per_key * 1024


def test_prefill_agrees_with_flop_counter_mode():
    # FlopCounterMode, 16 tokens (tests/expected/flop_counter.json): attention 1,572,864 = 16 tokens · 2 layers ·
    # (2 · (64 · 96 + 2 · 64 · 48 + 96 · 64) projections + 16 keys · 768 per key)
    report = flops(SYNTHETIC, 16, causal=False).prefill
    assert report.attention_projections + report.attention_scores == 16 * 2 * (2 * 18432 + 16 * 768) == 1_572_864


def test_cache_holds_each_key_and_value_once():
    # both calls read the same cache: per token 2 layers · 2 KV heads · (24 + 24), BF16
    assert memory(SYNTHETIC, context=1).kv_cache.bytes == 2 * 2 * 2 * (24 + 24)


def test_eager_training_stores_both_calls_scores():
    # each of the two calls writes its own softmax, mask and dropped-out probabilities, 5 · a · s · k bytes (Korthikanti
    # et al.'s eager term), where flash keeps each call's log-sum-exp, 4 · a · s: the difference doubles with the calls.
    # synthetic: 2 layers, 4 heads, s = 64, b = 1
    s, a = 64, 4
    eager = memory(SYNTHETIC, context=s, train=True, attention="eager").training.activations
    flash = memory(SYNTHETIC, context=s, train=True).training.activations
    assert eager - flash == 2 * 2 * (5 * a * s * s - 4 * a * s)


def test_odd_kv_heads_are_refused(write_config):
    # DiffLlamaAttention splits the value heads in two halves: transformers refuses an odd num_key_value_heads
    config = {"model_type": "diffllama", "num_attention_heads": 6, "num_key_value_heads": 3, "hidden_size": 384}
    with pytest.raises(InvalidConfigError, match="num_key_value_heads"):
        account(str(write_config(config)))
