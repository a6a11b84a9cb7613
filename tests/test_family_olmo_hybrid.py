"""OLMo Hybrid: Gated DeltaNet layers among OLMo-3's attention layers.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/defaults__olmo_hybrid.json, synthetic__olmo_hybrid.json).
"""

import pytest

from ffncalc import account
from ffncalc.api import load_config
from ffncalc.errors import InvalidConfigError
from ffncalc.tensors import checkpoint_tensors

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"


def test_olmo_hybrid_default_model_by_hand(write_config):
    # OlmoHybridConfig(): H 3,840, FFN 11,008, 32 layers (every fourth full attention: 8; the other 24 linear),
    # 30 heads of 128, vocabulary 100,352, untied.
    # Attention layer: q, k, v, o H² each, q/k norms of H, SwiGLU 3 · H · I, two norms.
    # Linear layer: key heads 30 × int(0.75 · 3,840 / 30) = 96 (key 2,880), value heads 30 × 192 (value 5,760):
    # q, k H × 2,880, v and g H × 5,760, a and b H × 30, o 5,760 × H, convolutions of 4 taps over 2,880 + 2,880 +
    # 5,760 channels, A_log and dt_bias 30 each, the gated norm 192; SwiGLU and two norms.
    hidden, ffn = 3840, 11008
    attention_layer = 4 * hidden * hidden + 2 * hidden + 3 * hidden * ffn + 2 * hidden
    mixer = 2 * hidden * 2880 + 2 * hidden * 5760 + 2 * hidden * 30 + 5760 * hidden + 4 * 11520 + 60 + 192
    linear_layer = mixer + 3 * hidden * ffn + 2 * hidden
    total = 8 * attention_layer + 24 * linear_layer + 2 * 100352 * hidden + hidden
    assert account(str(write_config({"model_type": "olmo_hybrid"}))).total_params == total == 7_430_870_688


def test_olmo_hybrid_keeps_q_k_and_v_convolutions_at_their_own_widths():
    # 2 key heads of 16 (32 channels for q and for k), 4 value heads of 32 (128 channels for v), 3 taps.
    stored = checkpoint_tensors(load_config(str(CONFIGS / "synthetic__olmo_hybrid.json")).spec)
    conv = "model.layers.0.linear_attn.{}_conv1d.weight"
    assert [stored[conv.format(part)] for part in "qkv"] == [(32, 1, 3), (32, 1, 3), (128, 1, 3)]


def test_olmo_hybrid_norm_names_follow_its_checkpoints():
    # linear layers: attention_layer_norm, feedforward_layer_norm; attention layers: feedforward_layer_norm after
    # attention and post_feedforward_layernorm (transformers renames them on load).
    stored = checkpoint_tensors(load_config(str(CONFIGS / "synthetic__olmo_hybrid.json")).spec)
    layer = {n.split(".", 3)[3] for n in stored if n.startswith("model.layers.1.") and "norm" in n}
    assert layer == {"feedforward_layer_norm.weight", "post_feedforward_layernorm.weight"} | {
        "self_attn.q_norm.weight",
        "self_attn.k_norm.weight",
    }
    assert "model.layers.0.attention_layer_norm.weight" in stored


@pytest.mark.parametrize("kind", ["linear_attention", "full_attention"])
def test_olmo_hybrid_with_one_kind_of_layer_is_refused_as_transformers_refuses(write_config, kind):
    config = {"model_type": "olmo_hybrid", "num_hidden_layers": 2, "layer_types": [kind, kind]}
    with pytest.raises(InvalidConfigError, match="layer_types: OLMo Hybrid needs at least one"):
        account(str(write_config(config)))
