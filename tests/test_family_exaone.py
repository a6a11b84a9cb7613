"""LG AI Research's EXAONE 3 (exaone), EXAONE 4.0 and K-EXAONE (exaone_moe).

Every expected figure is derived by hand from the config's numbers.
"""

import json

import pytest

from ffncalc import account, flops
from ffncalc.api import load_config
from ffncalc.errors import InvalidConfigError
from ffncalc.tensors import checkpoint_tensors

from .conftest import BUNDLED, ROOT

CONFIGS = ROOT / "tests" / "configs"
EXAONE = "LGAI-EXAONE/EXAONE-4.0-32B"


def test_exaone_3_default_model_by_hand(write_config):
    # ExaoneConfig(): H 4,096, FFN 14,336, 32 layers of 32 query and 8 KV heads of 128, vocabulary 102,400,
    # untied. A layer: q and out 4,096², k and v 4,096 × 1,024, SwiGLU 3 · H · I, two RMSNorms; outside:
    # embedding and head V · H, the final RMSNorm.
    hidden, ffn, vocab = 4096, 14336, 102400
    layer = 2 * hidden * hidden + 2 * hidden * 1024 + 3 * hidden * ffn + 2 * hidden
    report = account(str(write_config({"model_type": "exaone"})))
    assert report.total_params == 32 * layer + 2 * vocab * hidden + hidden == 7_818_448_896


def test_exaone_3_reads_num_layers_and_keeps_its_checkpoint_names():
    # num_layers 2 (the attribute_map's name for num_hidden_layers); the tensors are saved under the remote code's
    # names, which transformers 5.24 maps to Llama's on load (conversion_mapping.py, "exaone").
    model = load_config(str(CONFIGS / "synthetic__exaone.json"))
    stored = checkpoint_tensors(model.spec)
    assert "transformer.h.1.attn.attention.out_proj.weight" in stored
    assert {"transformer.wte.weight", "transformer.ln_f.weight", "transformer.h.0.mlp.c_fc_0.weight"} <= set(stored)
    assert not any(name.startswith("model.") for name in stored)


def test_exaone_4_32b_by_hand():
    # H 5,120, FFN 27,392, 64 layers of 40 query and 8 KV heads of 128, vocabulary 102,400, untied. A layer:
    # q and o 5,120², k and v 5,120 × 1,024, RMSNorms on each query and key head (128 each), SwiGLU 3 · H · I,
    # two RMSNorms after the sublayers. Outside: embedding and head V · H, the final RMSNorm.
    hidden, ffn, vocab = 5120, 27392, 102400
    layer = 2 * hidden * hidden + 2 * hidden * 1024 + 2 * 128 + 3 * hidden * ffn + 2 * hidden
    assert account(EXAONE).total_params == 64 * layer + 2 * vocab * hidden + hidden == 32_003_216_384


def test_exaone_4_attention_scores_at_32k_read_the_window_in_three_layers_of_four():
    # layer_types LLLG × 16: 48 sliding layers read 4,096 keys, 16 full ones 32,768; 2 · 40 · (128 + 128) per key.
    per_key = 2 * 40 * 256
    assert flops(EXAONE, "32k").per_token.attention_scores == per_key * (48 * 4096 + 16 * 32768)


def test_exaone_4_pattern_string_without_layer_types_is_refused_as_transformers_refuses(write_config):
    # sliding_window_pattern "LLLG": transformers builds default layer_types with (i + 1) % pattern, which a
    # string cannot do; EXAONE 4.0's config works because it lists layer_types.
    config = json.loads((BUNDLED / "LGAI-EXAONE__EXAONE-4.0-32B.json").read_text())
    del config["layer_types"]
    with pytest.raises(InvalidConfigError, match="layer_types: required"):
        account(str(write_config(config)))


def test_exaone_moe_layer_by_hand():
    # 4 layers, layer 0 dense (FFN 96), layers 1–3 MoE: router 64 × 8, 8 experts of 3 · 64 · 16, a shared MLP
    # of 2 × 16; attention q and o 64 × 4 · 32, k and v 64 × 2 · 32, q/k norms 32 each; two RMSNorms of 64.
    attention = 2 * 64 * 128 + 2 * 64 * 64 + 2 * 32
    moe = 64 * 8 + 8 * 3 * 64 * 16 + 3 * 64 * 32
    layers = {tuple(group.indices): group for group in account(str(CONFIGS / "synthetic__exaone_moe.json")).layers}
    assert layers[(0,)].params == attention + 3 * 64 * 96 + 2 * 64
    assert layers[(1, 3)].params == attention + moe + 2 * 64
    assert layers[(2,)].window == 128 and layers[(1, 3)].window is None  # sliding_window_pattern 2


def test_exaone_moe_active_parameters_and_its_saved_router_bias():
    report = account(str(CONFIGS / "synthetic__exaone_moe.json"))
    assert report.total_params - report.active_params == 3 * (8 - 2) * 3 * 64 * 16  # 2 of 8 experts a token
    (bias,) = report.checkpoint_extras
    assert bias.name == "router e_score_correction_bias" and bias.elements == 3 * 8
