"""GPT-NeoX-Japanese: GPT-NeoX's fused attention and MLP without biases, but one on the last layer's attention output.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/defaults__gpt_neox_japanese.json, synthetic__gpt_neox_japanese*.json) and FlopCounterMode
counts the same FLOPs for synthetic__gpt_neox_japanese (tests/test_flops.py).
"""

from ffncalc import account
from ffncalc.api import load_config
from ffncalc.tensors import checkpoint_tensors

from .conftest import ROOT

SYNTHETIC = str(ROOT / "tests" / "configs" / "synthetic__gpt_neox_japanese.json")


def test_gpt_neox_japanese_default_model_by_hand(write_config):
    # GPTNeoXJapaneseConfig() is abeja/gpt-neox-japanese-2.7b's shape: hidden 2,560, 32 layers, an MLP 4 × 2,560
    # wide, vocabulary 32,000, tied; query_key_value (3h²), dense (h²), the MLP (2 · 4h²), two LayerNorms with biases
    # a layer; one dense_bias of h on the last layer; the final LayerNorm.
    h = 2560
    total = 32 * (4 * h * h + 8 * h * h + 2 * 2 * h) + h + 32000 * h + 2 * h
    assert total == 2_598_837_760
    assert account(str(write_config({"model_type": "gpt_neox_japanese"}))).total_params == total


def test_only_the_last_layer_has_an_attention_output_bias():
    tensors = checkpoint_tensors(load_config(SYNTHETIC).spec)
    assert [name for name in tensors if "bias" in name and "layer_norm" not in name and "layernorm" not in name] == [
        "gpt_neox_japanese.layers.2.attention.dense_bias"
    ]


def test_gpt_neox_japanese_mlp_width_is_a_multiple_of_hidden():
    # intermediate_multiple_size 3 over hidden 64: dense_h_to_4h is 192 × 64
    tensors = checkpoint_tensors(load_config(SYNTHETIC).spec)
    assert tensors["gpt_neox_japanese.layers.0.mlp.dense_h_to_4h.weight"] == (192, 64)
