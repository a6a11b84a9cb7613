"""SeamlessM4T (v1 and v2) as their text-to-text classes: M2M-100's pre-LN encoder-decoder under their own names.

Totals, components and tensors are held to transformers 5.24 by tests/test_transformers_agreement.py (the synthetic
configs and the defaults); here each expected figure is derived by hand from the config's numbers.
"""

import pytest

from ffncalc import account
from ffncalc.api import load_config
from ffncalc.tensors import checkpoint_tensors

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"


def encoder_layer(d: int, ffn: int) -> int:
    """q, k, v, out_proj d² + d each; fc1 d · F + F, fc2 F · d + d; two LayerNorms 2d each."""
    return 4 * (d * d + d) + d * ffn + ffn + ffn * d + d + 2 * 2 * d


def decoder_layer(d: int, ffn: int) -> int:
    """The encoder's layer, cross_attention's four projections and a third LayerNorm."""
    return encoder_layer(d, ffn) + 4 * (d * d + d) + 2 * d


@pytest.mark.parametrize("model_type", ["seamless_m4t", "seamless_m4t_v2"])
def test_seamless_m4t_text_to_text_defaults_by_hand(write_config, model_type):
    # SeamlessM4T(v2)Config(): vocabulary 256,102, hidden 1,024, 24 + 24 layers of FFN 8,192, a final LayerNorm per
    # stack; the head tied to shared; sinusoidal positions are buffers. transformers 5.24 builds 1,370,531,840.
    d = 1024
    total = 256102 * d + 24 * encoder_layer(d, 8192) + 24 * decoder_layer(d, 8192) + 2 * 2 * d
    assert total == 1_370_531_840
    assert account(str(write_config({"model_type": model_type}))).total_params == total


def test_seamless_m4t_num_hidden_layers_and_heads_are_the_decoders():
    # synthetic v2: num_hidden_layers 2 and num_attention_heads 3 are the decoder's (attribute_map); encoder 1 layer;
    # untied: shared, text_encoder.embed_tokens, text_decoder.embed_tokens and lm_head, 900 × 48 each.
    config = load_config(str(CONFIGS / "synthetic__seamless_m4t_v2_untied.json")).config
    assert (config.decoder_layers, config.decoder_attention_heads, config.encoder_layers) == (2, 3, 1)
    report = account(str(CONFIGS / "synthetic__seamless_m4t_v2_untied.json"))
    assert (report.components.embedding, report.components.lm_head) == (3 * 900 * 48, 900 * 48)
    assert report.total_params == 4 * 900 * 48 + encoder_layer(48, 72) + 2 * decoder_layer(48, 56) + 2 * 2 * 48


def test_seamless_m4t_keeps_its_text_model_at_the_top_under_its_own_names():
    # hidden 64, decoder FFN 80
    tensors = checkpoint_tensors(load_config(str(CONFIGS / "synthetic__seamless_m4t.json")).spec)
    assert tensors["text_decoder.layers.2.cross_attention.out_proj.weight"] == (64, 64)
    assert tensors["text_decoder.layers.0.ffn.fc1.weight"] == (80, 64)
    assert tensors["text_encoder.layers.1.ffn_layer_norm.bias"] == (64,)
    assert tensors["text_decoder.layers.0.cross_attention_layer_norm.weight"] == (64,)
    assert tensors["shared.weight"] == (1000, 64)
    assert not any(name.startswith("model.") or "embed_positions" in name for name in tensors)


def test_seamless_m4t_says_its_full_model_is_counted_as_the_text_model(write_config):
    model = load_config(str(write_config({"model_type": "seamless_m4t", "architectures": ["SeamlessM4TModel"]})))
    assert model.config.model_class() == "SeamlessM4TForTextToText"
    assert model.config.notes()[-1].startswith("SeamlessM4TModel is not counted: it also builds the speech encoder")


def test_seamless_m4t_says_its_speech_to_text_class_reads_speech_through_an_encoder_not_laid_out(write_config):
    config = {"model_type": "seamless_m4t_v2", "architectures": ["SeamlessM4Tv2ForSpeechToText"]}
    model = load_config(str(write_config(config)))
    assert model.config.model_class() == "SeamlessM4Tv2ForTextToText"
    assert model.config.notes()[-1].startswith(
        "SeamlessM4Tv2ForSpeechToText is not counted: it reads speech through a Conformer speech encoder"
    )
