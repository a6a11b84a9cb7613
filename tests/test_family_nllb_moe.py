"""NLLB-MoE (nllb-moe): M2M-100's pre-LN encoder-decoder with a top-2 mixture of experts in every few layers.

Totals, components, routed experts and tensors are held to transformers 5.24 by tests/test_transformers_agreement.py
(the synthetic configs and the defaults); here each expected figure is derived by hand from the config's numbers.
"""

from ffncalc import account, flops, memory
from ffncalc.api import load_config
from ffncalc.tensors import checkpoint_tensors

from .conftest import ROOT

SYNTHETIC = str(ROOT / "tests" / "configs" / "synthetic__nllb_moe.json")


def mlp(d: int, ffn: int) -> int:
    """fc1 d · F + F, fc2 F · d + d."""
    return 2 * d * ffn + ffn + d


def test_nllb_moe_defaults_by_hand(write_config):
    # NllbMoeConfig(): vocabulary 128,112, d 1,024, 12 + 12 layers of FFN 4,096; layers 4, 8 and 12 of each stack
    # (sparse_step 4) hold a router 1,024 → 128 without bias and 128 experts; attention q, k, v, out_proj with biases,
    # the decoder's twice; 2 LayerNorms a layer (3 in the decoder) and one at the end of each stack; no position
    # parameters (a sinusoidal buffer); the head tied to the shared table.
    d, ffn, experts = 1024, 4096, 128
    attention = 4 * (d * d + d)
    dense = mlp(d, ffn)
    sparse = experts * mlp(d, ffn) + d * experts
    encoder = 12 * (attention + 2 * 2 * d) + 9 * dense + 3 * sparse
    decoder = 12 * (2 * attention + 3 * 2 * d) + 9 * dense + 3 * sparse
    total = 128112 * d + encoder + decoder + 2 * 2 * d
    assert total == 6_880_712_704  # transformers 5.24 builds NllbMoeForConditionalGeneration() with as many
    report = account(str(write_config({"model_type": "nllb-moe"})))
    assert report.total_params == total
    # each token through 2 of the 128 experts of each of the 6 sparse layers
    assert report.active_params == total - 6 * (experts - 2) * mlp(d, ffn)


def test_nllb_moe_sparse_layers_follow_the_sparse_step():
    # 4 encoder layers with step 2: layers 1 and 3 (the 2nd and 4th) are sparse; 3 decoder layers with step 3: layer 2
    tensors = checkpoint_tensors(load_config(SYNTHETIC).spec)
    sparse = sorted(name.split(".ffn.")[0] for name in tensors if name.endswith("ffn.router.classifier.weight"))
    assert sparse == ["model.decoder.layers.2", "model.encoder.layers.1", "model.encoder.layers.3"]
    assert tensors["model.encoder.layers.1.ffn.router.classifier.bias"] == (4,)  # router_bias
    assert tensors["model.encoder.layers.0.ffn.fc1.weight"] == (96, 64)
    assert tensors["model.decoder.layers.2.ffn.experts.expert_3.fc2.weight"] == (64, 80)


def test_nllb_moe_active_parameters_take_two_experts_a_layer():
    # d 64, 4 experts; encoder experts fc1 64 → 96 and fc2 (12,448 with biases), decoder 64 → 80 (10,384): two of
    # four are skipped in the 2 sparse encoder layers and the 1 sparse decoder layer.
    report = account(SYNTHETIC)
    assert report.total_params == 420_396  # transformers 5.24 builds the synthetic config with as many
    assert report.active_params == 420_396 - 2 * 2 * mlp(64, 96) - 2 * mlp(64, 80)


def test_nllb_moe_token_runs_two_experts_in_a_sparse_decoder_layer():
    # 2 dense decoder layers (fc1, fc2: 2 · 2 · 64 · 80 each), the sparse one: two experts and the router 64 → 4
    per_token = flops(SYNTHETIC, 16).per_token
    assert per_token.ffn == 2 * (2 * 2 * 64 * 80) + 2 * (2 * 2 * 64 * 80) + 2 * 64 * 4


def test_nllb_moe_cache_holds_self_and_cross_attention_keys_and_values():
    cache = memory(SYNTHETIC, 40, dtype="bf16").kv_cache
    assert cache.bytes == 2 * 3 * (2 * 64 * 40) * 2  # self and cross, 3 layers, k and v of 64, 40 positions, BF16
