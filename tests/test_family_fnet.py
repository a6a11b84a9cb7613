"""FNet: BERT's embeddings (and a projection after them), post-LN layers whose token mixing is a Fourier transform
without weights, BERT's heads with the pooler in every class.

The totals, components and saved tensors are held to transformers 5.24 building the configs on the meta device by
tests/test_transformers_agreement.py (tests/expected/transformers/defaults__fnet.json: 83,486,722, FNetForPreTraining;
synthetic__fnet.json: 88,128), the masked LM of the default config by tests/expected/task_mappings.json
(83,485,184), and a forward pass of synthetic__fnet to FlopCounterMode by tests/test_flops.py. Here the parts are
derived by hand from the configs' numbers.
"""

import pytest

from ffncalc import account, flops
from ffncalc.errors import InvalidConfigError

from .conftest import ROOT

SYNTHETIC = str(ROOT / "tests" / "configs" / "synthetic__fnet.json")


def test_default_pretraining_model_by_hand(write_config):
    # FNetConfig(): vocabulary 32,000, hidden 768, 12 layers, MLP 3,072, 512 positions, 4 token types, tied.
    # Embeddings: word, position and token-type tables, a LayerNorm, the projection (768² + bias). A layer: the
    # Fourier transform's LayerNorm, up and down with biases, the output LayerNorm. The pooler (768² + bias),
    # cls.predictions' transform (768² + bias) and LayerNorm and its bias (the decoder is the word table), the
    # next-sentence head (768 → 2).
    v, h, i = 32000, 768, 3072
    embeddings = v * h + 512 * h + 4 * h + 2 * h + h * h + h
    layer = 2 * h + h * i + i + i * h + h + 2 * h
    heads = (h * h + h) + (h * h + h + 2 * h + v) + (2 * h + 2)
    report = account(str(write_config({"model_type": "fnet"})))
    assert report.model_class == "FNetForPreTraining"
    assert report.total_params == embeddings + 12 * layer + heads == 83_486_722


def test_masked_lm_has_no_next_sentence_head(write_config):
    # FNetForMaskedLM (the masked-LM mapping's class): the same less cls.seq_relationship (768 · 2 + 2)
    config = {"model_type": "fnet", "architectures": ["FNetForMaskedLM"]}
    assert account(str(write_config(config))).total_params == 83_486_722 - (2 * 768 + 2) == 83_485_184


def test_layers_hold_no_attention():
    report = account(SYNTHETIC)
    assert report.layers[0].components.attention == 0 and report.layers[0].components.mixer == 0
    assert report.layers[0].attention_kind == "fourier"


def test_flops_count_the_matmuls_and_say_the_transform_is_not_counted():
    # 16 tokens: FFN 2 layers · 2 · (64 · 96 + 96 · 64), the embeddings' projection and the head's transform
    # 2 · 64² each, the decoder 2 · 64 · 320; no score grows with the context. FlopCounterMode counted 1,712,128:
    # these and the pooler's 2 · 64² once (tests/test_flops.py), and nothing for torch.fft.fftn.
    report = flops(SYNTHETIC, 16, causal=False)
    prefill = report.prefill
    assert prefill.ffn == 16 * 2 * 2 * 2 * 64 * 96
    assert prefill.other == 16 * 2 * (2 * 64 * 64)
    assert prefill.lm_head == 16 * 2 * 64 * 320
    assert prefill.attention_scores == prefill.attention_projections == 0
    assert prefill.total + 2 * 64 * 64 == 1_712_128
    assert any("FFT" in convention for convention in report.conventions)


def test_dft_matrix_path_is_refused(write_config):
    config = {"model_type": "fnet", "use_tpu_fourier_optimizations": True}
    with pytest.raises(InvalidConfigError, match="use_tpu_fourier_optimizations"):
        account(str(write_config(config)))
