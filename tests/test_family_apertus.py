"""The Swiss AI Initiative's Apertus: a plain MLP whose xIELU activation learns two scalars per layer.

Every expected figure is derived by hand from the config's numbers.
"""

from ffncalc import account, verify

from .checkpoints import write_checkpoint
from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"


def test_apertus_layer_by_hand():
    # q and o 64 × 4 · 32 with biases, k and v 64 × 2 · 32 with biases, q/k RMSNorms per head (32 each);
    # up 64 → 192 and down 192 → 64 (no gate, no bias); xIELU's alpha_p and alpha_n; two RMSNorms of 64.
    attention = 2 * 64 * 128 + 128 + 64 + 2 * (64 * 64 + 64)
    layer = attention + 2 * 32 + 2 * 64 * 192 + 2 + 2 * 64
    report = account(str(CONFIGS / "synthetic__apertus.json"))
    assert report.layers[0].params == layer
    assert report.layers[0].parts["ffn.activation"] == 2
    assert report.total_params == 3 * layer + 2 * 320 * 64 + 64


def test_apertus_xielu_buffers_are_saved_and_other_activations_learn_nothing():
    (buffers,) = account(str(CONFIGS / "synthetic__apertus.json")).checkpoint_extras
    assert buffers.elements == 3 * 2  # beta and eps, one scalar each, in each of 3 layers
    relu2 = account(str(CONFIGS / "synthetic__apertus_relu2.json"))
    assert "ffn.activation" not in relu2.layers[0].parts and relu2.checkpoint_extras == []


def test_apertus_checkpoint_as_transformers_saves_it_verifies(tmp_path):
    config = {
        "model_type": "apertus",
        "vocab_size": 100,
        "hidden_size": 32,
        "intermediate_size": 40,
        "num_hidden_layers": 1,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "torch_dtype": "bfloat16",
    }
    layer = "model.layers.0."
    shapes = {
        "model.embed_tokens.weight": [100, 32],
        "lm_head.weight": [100, 32],
        "model.norm.weight": [32],
        layer + "attention_layernorm.weight": [32],
        layer + "feedforward_layernorm.weight": [32],
        layer + "self_attn.q_proj.weight": [32, 32],
        layer + "self_attn.k_proj.weight": [16, 32],
        layer + "self_attn.v_proj.weight": [16, 32],
        layer + "self_attn.o_proj.weight": [32, 32],
        layer + "self_attn.q_norm.weight": [8],
        layer + "self_attn.k_norm.weight": [8],
        layer + "mlp.up_proj.weight": [40, 32],
        layer + "mlp.down_proj.weight": [32, 40],
        layer + "mlp.act_fn.alpha_p": [1],
        layer + "mlp.act_fn.alpha_n": [1],
        layer + "mlp.act_fn.beta": [],
        layer + "mlp.act_fn.eps": [],
    }
    report = verify(str(write_checkpoint(tmp_path / "apertus", config, {n: ("BF16", s) for n, s in shapes.items()})))
    assert report.ok, [t for t in report.tensors if t.verdict != "parameter"]
    assert [extra.kind for extra in report.extras] == ["xIELU beta and eps buffers"]
