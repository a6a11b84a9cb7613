"""InternLM3: Llama's layer with InternLM3's defaults and bias switches.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/defaults__internlm3.json, synthetic__internlm3.json).
"""

import pytest

from ffncalc import account
from ffncalc.errors import InvalidConfigError


def test_internlm3_default_model_by_hand(write_config):
    # InternLM3Config(): H 4,096, FFN 10,240, 48 layers of 32 query and 2 KV heads of 128, vocabulary 128,512,
    # untied. A layer: q and o 4,096², k and v 4,096 × 256, SwiGLU 3 · H · I, two RMSNorms; outside: embedding
    # and head V · H, the final RMSNorm.
    hidden, ffn, vocab = 4096, 10240, 128512
    layer = 2 * hidden * hidden + 2 * hidden * 256 + 3 * hidden * ffn + 2 * hidden
    report = account(str(write_config({"model_type": "internlm3"})))
    assert report.total_params == 48 * layer + 2 * vocab * hidden + hidden == 8_804_241_408


def test_internlm3_qkv_bias_and_bias_switch_the_attention_and_mlp_biases(write_config):
    # hidden 64, 4 heads and 2 KV heads of 24: q and o biases 96 and 64, k and v 48 each; MLP biases 96, 96, 64.
    small = {"model_type": "internlm3", "vocab_size": 320, "hidden_size": 64, "intermediate_size": 96}
    small |= {"num_hidden_layers": 1, "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 24}
    plain = account(str(write_config(small, "plain"))).total_params
    biased = account(str(write_config(small | {"qkv_bias": True, "bias": True}, "biased"))).total_params
    assert biased - plain == (96 + 48 + 48 + 64) + (96 + 96 + 64)


def test_internlm3_unequal_bias_switches_are_refused_as_transformers_refuses(write_config):
    with pytest.raises(InvalidConfigError, match=r"qkv_bias .* must equal bias"):
        account(str(write_config({"model_type": "internlm3", "qkv_bias": True, "bias": False})))
