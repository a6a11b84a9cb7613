"""MosaicML's MPT as transformers builds it: ALiBi, fused Wqkv, no biases, an MLP four times d_model wide.

Every expected figure is derived by hand from the config's numbers.
"""

from ffncalc import account, flops

from .conftest import ROOT

MPT = str(ROOT / "tests" / "configs" / "synthetic__mpt.json")


def test_mpt_builds_a_4x_mlp_without_biases_whatever_the_config_asks():
    # d_model 64, 3 layers, untied, vocabulary 1,000. The config asks for expansion_ratio 2, biases and multi-query
    # attention; transformers builds Wqkv 64 · 192, out_proj 64 · 64, up_proj 64 · 256, down_proj 256 · 64, and
    # weight-only LayerNorms (64 each), whatever it asks.
    layer = 64 * 192 + 64 * 64 + 2 * 64 * 256 + 2 * 64
    report = account(MPT)
    assert report.total_params == 3 * layer + 2 * 1000 * 64 + 64
    assert "expansion_ratio 2" in report.notes[0] and "attn_type 'multiquery_attention'" in report.notes[0]


def test_mpt_has_no_position_table():
    assert set(account(MPT).outside_layers) == {"embedding.embed_tokens", "norm.final_norm", "lm_head.lm_head"}


def test_mpt_7b_defaults(write_config):
    # the mpt-7b architecture: d_model 4,096, 32 layers of 32 heads, vocabulary 50,432, tied: 12 · d² a layer.
    config = {"model_type": "mpt", "d_model": 4096, "n_heads": 32, "n_layers": 32, "vocab_size": 50432}
    hidden = 4096
    total = 32 * (12 * hidden * hidden + 2 * hidden) + 50432 * hidden + hidden
    assert account(str(write_config(config))).total_params == total == 6_649_286_656  # "6.7B" on mpt-7b's model card


def test_mpt_alibi_costs_no_more_per_key_than_plain_attention():
    # 2 · 4 heads · (16 + 16) FLOPs per key and layer: the ALiBi bias is added, not multiplied.
    assert flops(MPT, 100).per_token.attention_scores == 3 * 2 * 4 * 32 * 100
