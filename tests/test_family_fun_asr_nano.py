"""Fun-ASR-Nano: a SAN-M encoder, a projector with attention layers of its own, Qwen3.

Totals, components and tensors are held to transformers 5.24 by tests/test_transformers_agreement.py (the synthetic
config and the defaults); here each expected figure is derived by hand from the config's numbers.
"""

import pytest

from ffncalc import account
from ffncalc.api import load_config
from ffncalc.errors import InvalidConfigError
from ffncalc.tensors import checkpoint_tensors

from .conftest import ROOT

FUN_ASR_NANO = str(ROOT / "tests" / "configs" / "synthetic__fun_asr_nano.json")


def test_fun_asr_nano_defaults_by_hand(write_config):
    # FunAsrNanoEncoderConfig(): 70 layers of 512 (4 heads, MLP 2,048, everything biased, an FSMN of 11 taps); the
    # first reads 80 · 7 = 560 stacked values; layers 49 and 69 add a final LayerNorm
    d, ffn = 512, 2048
    mlp = (d * ffn + ffn) + (ffn * d + d) + d * 11
    first = 3 * (560 * d + d) + (d * d + d) + mlp + 2 * 560 + 2 * d
    other = 4 * (d * d + d) + mlp + 2 * 2 * d
    encoder = first + 69 * other + 2 * 2 * d
    # the projector: linear_1 512 → 2,048, linear_2 2,048 → 1,024, two layers of 1,024 (MLP 256), all biased
    layer = 4 * (1024 * 1024 + 1024) + (1024 * 256 + 256) + (256 * 1024 + 1024) + 2 * 2 * 1024
    projector = (512 * 2048 + 2048) + (2048 * 1024 + 1024) + 2 * layer
    # Fun-ASR-Nano's Qwen3 (vocabulary 151,936, hidden 1,024, 28 layers of 16 heads of 128, 8 key-value heads, MLP
    # 3,072), tied
    text_layer = 1024 * 2048 + 2 * 1024 * 1024 + 2048 * 1024 + 3 * 1024 * 3072 + 2 * 1024 + 2 * 128
    text = 151936 * 1024 + 28 * text_layer + 1024
    assert encoder + projector + text == 829_791_840  # transformers 5.24 builds FunAsrNanoForConditionalGeneration()
    report = account(str(write_config({"model_type": "fun_asr_nano"})))
    assert (report.total_params, report.components.audio, report.components.projector) == (
        encoder + projector + text,
        encoder,
        projector,
    )


def test_fun_asr_nano_first_layer_reads_the_stacked_frames():
    # 8 mel bins · 3 stacked frames = 24 into hidden 32; 4 layers, 1 for timestamps: final LayerNorms in layers 2, 3
    tensors = checkpoint_tensors(load_config(FUN_ASR_NANO).spec)
    assert tensors["model.audio_tower.layers.0.self_attn.q_proj.weight"] == (32, 24)
    assert tensors["model.audio_tower.layers.0.input_layernorm.weight"] == (24,)
    assert tensors["model.audio_tower.layers.1.self_attn.fsmn.conv.weight"] == (32, 1, 5)
    assert "model.audio_tower.layers.1.final_layernorm.weight" not in tensors
    assert tensors["model.audio_tower.layers.2.final_layernorm.weight"] == (32,)


def test_fun_asr_nano_refuses_an_adaptor_narrower_than_the_language_model(write_config):
    with pytest.raises(InvalidConfigError, match=r"adaptor_config\.hidden_size: 64 must be text_config\.hidden_size"):
        account(str(write_config({"model_type": "fun_asr_nano", "adaptor_config": {"hidden_size": 64}})))
