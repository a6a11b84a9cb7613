"""JetMoE: a mixture of attention heads (each expert its own q and o, over the keys and values of one shared kv_proj)
and a mixture of MLP experts, both routed top-k.

The totals, components, routed experts and saved tensors are held to transformers 5.24 building the configs on the
meta device by tests/test_transformers_agreement.py (tests/expected/transformers/defaults__jetmoe.json:
4,293,888,000; synthetic__jetmoe.json: 177,728), and a forward pass of synthetic__jetmoe to FlopCounterMode by
tests/test_flops.py (tools/flop_count.py --cpu: built on the CPU with random weights, so that its routers run).
Here the parts are derived by hand from the configs' numbers.
"""

import pytest

from ffncalc import account, flops, load_config, memory
from ffncalc.api import speed
from ffncalc.errors import InvalidConfigError
from ffncalc.tensors import checkpoint_tensors

from .conftest import ROOT

SYNTHETIC = str(ROOT / "tests" / "configs" / "synthetic__jetmoe.json")


@pytest.fixture
def default(write_config):
    return str(write_config({"model_type": "jetmoe"}))


def test_default_by_hand(default):
    # JetMoeConfig(): hidden 2,048, 12 layers, 16 KV heads of kv_channels 128 (2,048 wide), 8 experts, 2 a token,
    # MLP experts of 5,632, vocabulary 32,000 tied. A layer's attention: kv_proj 2,048 → 2 · 2,048, each expert's q
    # 2,048 → 2,048 and o back (8 · 2 · 2,048²), the router 2,048 → 8, a bias 2,048; its MLP: the router 2,048 → 8, 8
    # experts of 3 · 2,048 · 5,632, a bias 2,048; two RMSNorms. transformers 5.24 on meta: 4,293,888,000.
    h = 2048
    attention = h * 2 * h + 8 * 2 * h * h + h * 8 + h
    mlp = h * 8 + 8 * 3 * h * 5632 + h
    report = account(default)
    assert report.total_params == 12 * (attention + mlp + 2 * h) + h + 32000 * h == 4_293_888_000
    assert report.moe.routed_expert_params == 12 * 8 * 3 * h * 5632


def test_a_token_runs_two_attention_experts_of_eight(default):
    # active: each layer's q and o experts 2 of 8 (2 · 2 · 2,048²), its MLP experts 2 of 8, the rest whole
    h = 2048
    attention = h * 2 * h + 2 * 2 * h * h + h * 8 + h
    mlp = h * 8 + 2 * 3 * h * 5632 + h
    report = account(default)
    assert report.active_params == 12 * (attention + mlp + 2 * h) + h + 32000 * h == 1_198_491_648


def test_attends_with_the_heads_of_the_experts_picked():
    # synthetic: 2 KV heads of 24 and 2 experts a token: 4 query heads a token, each key 2 · 4 · (24 + 24) FLOPs a layer
    at_1k, at_2k = (flops(SYNTHETIC, n).per_token.attention_scores for n in (1024, 2048))
    assert at_2k - at_1k == 2 * (2 * 4 * 48) * 1024


def test_prefill_agrees_with_flop_counter_mode():
    # FlopCounterMode on the CPU, 16 tokens (tests/expected/flop_counter.json): per token and layer the attention's
    # kv_proj 64 · 96, two experts' q 64 · 48 and o 48 · 64, the router 64 · 4 (2 · 18,688 FLOPs), 16 keys of 384; the
    # MLP's router 64 · 4 and two experts of 3 · 64 · 48 (2 · 18,688); the head 2 · 64 · 320. Total 3,244,032.
    report = flops(SYNTHETIC, 16, causal=False).prefill
    assert report.attention_projections + report.attention_scores == 16 * 2 * (2 * 18688 + 16 * 384) == 1_392_640
    assert report.ffn == 16 * 2 * 2 * 18688
    assert report.total == 1_392_640 + 1_196_032 + 16 * 2 * 64 * 320 == 3_244_032


def test_cache_holds_the_shared_keys_and_values_once():
    # per token 2 layers · 2 KV heads · (24 + 24), BF16: the experts' heads read the same cache
    assert memory(SYNTHETIC, context=1).kv_cache.bytes == 2 * 2 * 2 * (24 + 24)


def test_checkpoint_stacks_the_attention_experts():
    names = checkpoint_tensors(load_config(SYNTHETIC).spec)
    assert names["model.layers.0.self_attention.experts.input_linear.weight"] == (4, 48, 64)
    assert names["model.layers.0.self_attention.experts.output_linear.weight"] == (4, 64, 48)
    assert names["model.layers.0.self_attention.kv_proj.weight"] == (96, 64)
    assert names["model.layers.0.mlp.input_linear.weight"] == (4, 96, 64)


def test_a_decode_step_reads_the_attention_experts_it_runs(default):
    # batch 1, BF16: each layer's kv_proj 2,048 · 4,096, the router 2,048 · 8 and bias 2,048, and 2 of the 8 experts'
    # q and o (2 · 2 · 2,048²), 2 bytes each; the activations in and out, 2 · 2,048 · 2 bytes (roofline.CONVENTIONS). Not
    # all 8 experts' q and o, which the checkpoint stores: a token runs 2.
    h = 2048
    shared = h * 2 * h + h * 8 + h
    (one,) = speed(default, "h100", context="4k", prompt="4k", batches="1").reports
    (row,) = [c for c in one.decode.components if c.name == "attention_projections"]
    assert row.bytes == 12 * (2 * (shared + 2 * 2 * h * h) + 2 * h * 2) == 604_520_448


def test_more_experts_a_token_than_experts_is_refused(write_config):
    config = {"model_type": "jetmoe", "num_local_experts": 2, "num_experts_per_tok": 3}
    with pytest.raises(InvalidConfigError, match="num_experts_per_tok"):
        account(str(write_config(config)))


def test_heads_are_set_as_transformers_sets_them(write_config):
    # JetMoeConfig.__post_init__ overwrites num_attention_heads with num_key_value_heads × num_experts_per_tok
    config = {"model_type": "jetmoe", "num_attention_heads": 7}
    assert account(str(write_config(config))).total_params == 4_293_888_000
