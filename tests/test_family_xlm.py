"""XLM (xlm) and FlauBERT (flaubert): an encoder keeping each kind of sublayer in a list of its own.

Totals, components and tensors are held to transformers 5.24 by tests/test_transformers_agreement.py (the synthetic
configs and the defaults); here each expected figure is derived by hand from the config's numbers.
"""

import pytest

from ffncalc import account
from ffncalc.api import load_config
from ffncalc.errors import InvalidConfigError
from ffncalc.tensors import checkpoint_tensors

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"


def layer(d: int) -> int:
    """q_lin, k_lin, v_lin, out_lin d² + d each; lin1 d → 4d and lin2 back, biased; two LayerNorms 2d each."""
    return 4 * (d * d + d) + 2 * d * 4 * d + 4 * d + d + 2 * 2 * d


@pytest.mark.parametrize("model_type", ["xlm", "flaubert"])
def test_xlm_and_flaubert_defaults_by_hand(write_config, model_type):
    # XLMConfig() and FlaubertConfig(): vocabulary 30,145, emb_dim 2,048, 12 layers, 512 positions, one language
    # (no language table), layer_norm_emb; the LM head pred_layer.proj tied to the word table, its bias 30,145.
    d = 2048
    total = 30145 * d + 512 * d + 2 * d + 12 * layer(d) + 30145
    assert total == 667_119_041  # transformers 5.24 builds XLMWithLMHeadModel() and FlaubertWithLMHeadModel() so
    assert account(str(write_config({"model_type": model_type}))).total_params == total


def test_xlm_keeps_each_kind_of_sublayer_in_a_list_of_its_own():
    tensors = checkpoint_tensors(load_config(str(CONFIGS / "synthetic__xlm.json")).spec)
    assert tensors["transformer.attentions.2.q_lin.weight"] == (64, 64)
    assert tensors["transformer.ffns.0.lin1.weight"] == (256, 64)
    assert tensors["transformer.layer_norm2.1.bias"] == (64,)
    assert tensors["transformer.lang_embeddings.weight"] == (3, 64)  # n_langs 3
    assert tensors["pred_layer.proj.bias"] == (1000,)
    assert "pred_layer.proj.weight" not in tensors  # tied to transformer.embeddings


def test_the_bare_xlm_model_keeps_its_sublayers_at_the_top():
    # XLMModel: no prefix; n_langs 4 but use_lang_emb false: no language table
    tensors = checkpoint_tensors(load_config(str(CONFIGS / "synthetic__xlm_model.json")).spec)
    assert tensors["attentions.1.out_lin.weight"] == (48, 48)
    assert "lang_embeddings.weight" not in tensors


def test_a_causal_xlm_is_counted_as_a_decoder():
    # causal true: each token attends to the keys before it and XLMWithLMHeadModel generates with a cache
    spec = load_config(str(CONFIGS / "synthetic__xlm_sequence_classification_causal.json")).spec
    assert {layer.stack for layer in spec.layers} == {"decoder"}


def test_xlm_sequence_summary_is_num_labels_wide():
    report = account(str(CONFIGS / "synthetic__xlm_sequence_classification_causal.json"))
    assert report.outside_layers["other.sequence_summary.summary"] == 64 * 4 + 4


def test_xlm_adaptive_softmax_is_refused(write_config):
    with pytest.raises(InvalidConfigError, match="asm true: the adaptive softmax head"):
        account(str(write_config({"model_type": "xlm", "asm": True})))
