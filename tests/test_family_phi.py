"""Microsoft's first Phi models (model_type phi): phi-1, phi-1.5, phi-2.

Every expected figure is derived by hand from the config's numbers, or is a published count.
"""

from ffncalc import account, flops

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"
PHI_1 = "microsoft/phi-1"


def phi_layer(hidden: int, ffn: int) -> int:
    """q, k, v, dense: H² + H each; fc1 H · I + I; fc2 I · H + H; one LayerNorm (2H) before both."""
    return 4 * (hidden * hidden + hidden) + hidden * ffn + ffn + ffn * hidden + hidden + 2 * hidden


def test_phi_1_by_hand():
    # H 2,048, 24 layers, FFN 8,192, vocabulary 51,200; an untied head with a bias; a final LayerNorm.
    hidden, ffn, vocab = 2048, 8192, 51200
    total = 24 * phi_layer(hidden, ffn) + vocab * hidden + vocab * hidden + vocab + 2 * hidden
    assert account(PHI_1).total_params == total == 1_418_270_720


def test_phi_2_is_its_published_count(write_config):
    # phi-2's architecture: H 2,560, 32 layers of 32 heads, FFN 10,240, vocabulary 51,200, partial rotary 0.4, untied.
    config = {
        "model_type": "phi",
        "architectures": ["PhiForCausalLM"],
        "hidden_size": 2560,
        "intermediate_size": 10240,
        "num_attention_heads": 32,
        "num_hidden_layers": 32,
        "vocab_size": 51200,
        "partial_rotary_factor": 0.4,
        "max_position_embeddings": 2048,
        "tie_word_embeddings": False,
    }
    hidden, ffn, vocab = 2560, 10240, 51200
    total = 32 * phi_layer(hidden, ffn) + 2 * vocab * hidden + vocab + 2 * hidden
    # microsoft/phi-2, a third-party table of model.num_parameters() (tests/reference/ground_truth.json)
    assert total == 2_779_683_840
    assert account(str(write_config(config))).total_params == total


def test_phi_attention_and_mlp_share_one_layernorm():
    (layer,) = account(PHI_1).layers
    assert [part for part in layer.parts if part.startswith("norm.")] == ["norm.input_layernorm"]


def test_phi_qk_layernorm_is_as_wide_as_hidden_over_heads_whatever_head_dim_says():
    # hidden 64 over 4 heads: LayerNorms of 16 (weight and bias) over each head, while a head_dim of 8 narrows q to 32.
    (layer,) = account(str(CONFIGS / "synthetic__phi_qk_layernorm.json")).layers
    assert layer.parts["norm.q_norm"] == layer.parts["norm.k_norm"] == 16 + 16
    assert layer.parts["attention.q"] == 64 * 32 + 32


def test_phi_1_flops_per_token_at_2k():
    # matmuls: 24 layers · 2 · (4 · H² + 2 · H · I) and the head 2 · V · H; scores 2 · 32 heads · (64 + 64) per key.
    hidden, ffn, vocab = 2048, 8192, 51200
    matmuls = 24 * 2 * (4 * hidden * hidden + 2 * hidden * ffn) + 2 * vocab * hidden
    assert flops(PHI_1, 2048).per_token.total == matmuls + 24 * 2 * 32 * 128 * 2048
