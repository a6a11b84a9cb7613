"""Whisper: a speech encoder (two convolutions over log-mel frames, pre-LN layers) and a text decoder.

Totals, components and tensors are held to transformers 5.24 by tests/test_transformers_agreement.py (the synthetic
configs and the defaults); here each expected figure is derived by hand from the config's numbers.
"""

from ffncalc import account
from ffncalc.api import load_config
from ffncalc.tensors import checkpoint_tensors

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"


def attention(d: int) -> int:
    """q, k, v, out_proj d² each; biases on q, v and out_proj (k_proj has none)."""
    return 4 * d * d + 3 * d


def test_whisper_defaults_by_hand(write_config):
    # WhisperConfig() (whisper-tiny's shape): vocabulary 51,865, d 384, 80 mel bins, 4 + 4 layers of FFN 1,536;
    # conv1 d · 80 · 3 + d, conv2 d · d · 3 + d; positions 1,500 (encoder) and 448 (decoder); two final LayerNorms;
    # proj_out tied to the token table.
    d, ffn = 384, 1536
    encoder = attention(d) + 2 * d * ffn + ffn + d + 2 * 2 * d
    decoder = 2 * attention(d) + 2 * d * ffn + ffn + d + 3 * 2 * d
    convs = d * 80 * 3 + d + d * d * 3 + d
    total = 51865 * d + 4 * encoder + 4 * decoder + convs + (1500 + 448) * d + 2 * 2 * d
    assert total == 37_760_640
    assert account(str(write_config({"model_type": "whisper"}))).total_params == total


def test_whisper_key_projections_have_no_bias():
    tensors = checkpoint_tensors(load_config(str(CONFIGS / "synthetic__whisper.json")).spec)
    assert "model.encoder.layers.0.self_attn.k_proj.bias" not in tensors
    assert "model.decoder.layers.0.encoder_attn.k_proj.bias" not in tensors
    assert tensors["model.decoder.layers.0.encoder_attn.q_proj.bias"] == (64,)
    assert tensors["model.encoder.conv1.weight"] == (64, 16, 3)
    assert tensors["model.encoder.conv2.weight"] == (64, 64, 3)


def test_whisper_untied_head_is_proj_out():
    # tie_word_embeddings false: proj_out 1,000 × 64 beside the decoder's token table
    report = account(str(CONFIGS / "synthetic__whisper_untied.json"))
    assert report.components.lm_head == 1000 * 64


def test_whisper_causal_lm_is_the_decoder_alone():
    tensors = checkpoint_tensors(load_config(str(CONFIGS / "synthetic__whisper_causal_lm.json")).spec)
    assert not any(name.startswith("model.encoder.") for name in tensors)
    assert tensors["model.decoder.layers.2.encoder_attn.k_proj.weight"] == (64, 64)


def test_num_key_value_heads_is_the_encoders_heads_as_whisperconfig_maps_it(write_config):
    # transformers 5.24 WhisperConfig.attribute_map: num_key_value_heads → encoder_attention_heads
    by_alias = account(str(write_config({"model_type": "whisper", "d_model": 12, "num_key_value_heads": 4}, "alias")))
    by_name = account(str(write_config({"model_type": "whisper", "d_model": 12, "encoder_attention_heads": 4}, "name")))
    assert by_alias.total_params == by_name.total_params
