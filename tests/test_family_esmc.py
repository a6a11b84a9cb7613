"""ESMC: Llama's layers with LayerNorms, queries and keys normalised across heads, and ESM's masked-LM head.

Totals, components and tensors are held to transformers 5.24 by tests/test_transformers_agreement.py, and a forward
pass's FLOPs to FlopCounterMode by tests/test_flops.py; here each expected figure is derived by hand.
"""

import pytest

from ffncalc import account
from ffncalc.errors import InvalidConfigError

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"


def test_esmc_defaults_by_hand(write_config):
    # EsmcConfig(), EsmcForMaskedLM: vocabulary 64, H 2,560, 80 layers of q/k/v/o H² each (40 heads of 64, no biases),
    # q_norm and k_norm H each (no bias), a gated MLP 3 · H · 6,912, two biased LayerNorms 2 · H each; the final
    # LayerNorm H (no bias); the head: dense H² + H, layer_norm 2 · H, decoder 64 · H + 64.
    hidden, ffn, vocab = 2560, 6912, 64
    layer = 4 * hidden * hidden + 2 * hidden + 3 * hidden * ffn + 2 * 2 * hidden
    head = hidden * hidden + hidden + 2 * hidden + vocab * hidden + vocab
    total = vocab * hidden + 80 * layer + hidden + head
    assert total == 6_352_005_184
    assert account(str(write_config({"model_type": "esmc"}))).total_params == total


def test_esmc_ties_nothing_whatever_tie_word_embeddings_says():
    # synthetic__esmc says tie_word_embeddings; EsmcForMaskedLM has no _tied_weights_keys: the decoder 64 · 64 + 64
    # and the dense 64 · 64 + 64 are the head's own
    report = account(str(CONFIGS / "synthetic__esmc.json"))
    assert report.components.lm_head == 2 * (64 * 64 + 64)


def test_queries_and_keys_are_normalised_across_heads():
    # q_norm and k_norm: LayerNorms of hidden_size (64), no bias
    (layer,) = account(str(CONFIGS / "synthetic__esmc.json")).layers  # both layers alike
    assert layer.parts["norm.q_norm"] == layer.parts["norm.k_norm"] == 64


def test_esmc_refuses_grouped_query_attention(write_config):
    with pytest.raises(InvalidConfigError, match="num_key_value_heads"):
        account(str(write_config({"model_type": "esmc", "num_key_value_heads": 8})))
