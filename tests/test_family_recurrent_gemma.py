"""RecurrentGemma (Griffin): RG-LRU recurrent blocks and local attention in turn, each followed by a GeGLU MLP.

Every expected figure is derived by hand from the config's numbers (tests/configs/synthetic__recurrent_gemma.json:
hidden 64, 5 layers with block_types recurrent, attention (so R A R A R); lru_width 80 in 4 gate blocks of 20, conv
of 3; attention of 4 heads of 16 over 1 KV head within 32 tokens, attention_bias; intermediate_size 96, so an MLP
of 48; untied, vocabulary 1000).
"""

from ffncalc import account, crossover, flops
from ffncalc.api import memory

from .conftest import ROOT

GRIFFIN = ROOT / "tests" / "configs" / "synthetic__recurrent_gemma.json"
GATES = 2 * 4 * 20 * 20  # the input and recurrence gates: 4 blocks of 20 × 20 each


def test_recurrent_gemma_by_hand():
    # recurrent block: linear_y, linear_x (64 → 80), linear_out (80 → 64), all biased; conv 80 × 3 + bias; the two
    # block-diagonal gates and their biases; the decay Λ (recurrent_param, 80)
    recurrent = 2 * (64 * 80 + 80) + (80 * 64 + 64) + (80 * 3 + 80) + GATES + 2 * 4 * 20 + 80
    attention = (64 * 64 + 64) + 2 * (64 * 16 + 16) + (64 * 64 + 64)  # o always biased
    mlp = 2 * (64 * 48 + 48) + (48 * 64 + 64)  # intermediate_size // 2, biased
    total = 3 * recurrent + 2 * attention + 5 * (mlp + 2 * 64) + 2 * 1000 * 64 + 64
    assert account(str(GRIFFIN)).total_params == total == 254_416


def test_rg_lru_costs_its_projections_gates_and_eight_flops_per_state_element():
    report = flops(str(GRIFFIN), 1000).per_token
    # linear_x, linear_y, linear_out and the block-diagonal gates: 2 FLOPs per weight, in 3 recurrent layers
    assert report.mixer == 3 * 2 * (2 * 64 * 80 + 80 * 64 + GATES)
    # the recurrence over 80 channels: −8·r·softplus(Λ) (2), a² (1), 1 − a² (1), i·x (1), ·√ (1), a·h (1), + (1);
    # and the conv 2 · 80 · 3
    assert report.mixer_state == 3 * (8 * 80 + 2 * 80 * 3)


def test_local_attention_reads_at_most_its_window():
    # 2 attention layers, 2 · 4 heads · (16 + 16) FLOPs per key, at most 32 keys
    assert flops(str(GRIFFIN), 20).per_token.attention_scores == 2 * 2 * 4 * 32 * 20
    assert flops(str(GRIFFIN), 5000).per_token.attention_scores == 2 * 2 * 4 * 32 * 32
    report = crossover(str(GRIFFIN), "8k")
    assert report.crossover_context is None and "window of at most 32" in report.never_reason


def test_memory_is_a_window_of_keys_and_a_fixed_recurrent_state():
    # attention: 1 KV head × (16 + 16) for 32 tokens; recurrence: the 80-wide state and the conv's last 2 inputs
    cache = memory(str(GRIFFIN), 5000).kv_cache  # bfloat16
    assert cache.bytes == (2 * 32 * 32 + 3 * (80 + 80 * 2)) * 2
    assert cache.bytes_per_token == 0
