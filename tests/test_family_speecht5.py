"""SpeechT5 as SpeechT5ForSpeechToText: a Wav2Vec2-style speech prenet, an encoder whose scores also read each key's
distance embedding, and a text decoder.

Totals, components and tensors are held to transformers 5.24 by tests/test_transformers_agreement.py (the synthetic
config and the defaults); here each expected figure is derived by hand from the config's numbers.
"""

from ffncalc import account
from ffncalc.api import load_config
from ffncalc.compute import score_flops_per_key
from ffncalc.tensors import attention_tensors, checkpoint_tensors, ffn_tensors

from .conftest import ROOT

SPEECHT5 = str(ROOT / "tests" / "configs" / "synthetic__speecht5.json")


def layer(d: int, ffn: int, attentions: int, norms: int) -> int:
    """Each attention's q, k, v, out_proj d² + d; intermediate_dense and output_dense with biases; LayerNorms 2d."""
    return attentions * 4 * (d * d + d) + (d * ffn + ffn) + (ffn * d + d) + norms * 2 * d


def test_speecht5_defaults_by_hand(write_config):
    # SpeechT5Config(): seven 512-wide convolutions over raw samples (taps 10, 3, 3, 3, 3, 2, 2; no biases; a
    # GroupNorm of 512 after the first), feature_projection (LayerNorm 512, 512 → 768), masked_spec_embed (768,
    # mask_time_prob 0.05), pos_conv_embed (128 taps in 16 groups: g [1, 1, 128], v [768, 48, 128], bias); the
    # encoder's LayerNorm and pe_k (320 × 64); 12 encoder layers and 6 decoder layers of 768 (FFN 3,072); an 81-row
    # table, the head tied to it.
    taps = [10, 3, 3, 3, 3, 2, 2]
    prenet = 512 * 1 * 10 + 2 * 512 + sum(512 * 512 * k for k in taps[1:])
    prenet += 2 * 512 + (512 * 768 + 768) + 768 + (128 + 768 * 48 * 128 + 768)
    d = 768
    total = prenet + 2 * d + 320 * 64 + 12 * layer(d, 3072, 1, 2) + 6 * layer(d, 3072, 2, 3) + 81 * d
    assert total == 151_165_056  # transformers 5.24 builds SpeechT5ForSpeechToText()
    assert account(str(write_config({"model_type": "speecht5"}))).total_params == total


def test_speecht5_synthetic_by_hand():
    # feat_extract_norm "layer": a LayerNorm after each of the 16-, 24- and 32-wide convolutions (biased, taps 10, 3,
    # 2); no masked_spec_embed (mask_time_prob 0); 16 taps in 4 groups; pe_k 40 × 12; untied: a 90-row table and head
    prenet = (16 * 10 + 16 + 2 * 16) + (24 * 16 * 3 + 24 + 2 * 24) + (32 * 24 * 2 + 32 + 2 * 32)
    prenet += 2 * 32 + (32 * 48 + 48) + (16 + 48 * 12 * 16 + 48)
    d = 48
    total = prenet + 2 * d + 40 * 12 + 2 * layer(d, 72, 1, 2) + 3 * layer(d, 64, 2, 3) + 2 * 90 * d
    report = account(SPEECHT5)
    assert (report.total_params, report.components.lm_head) == (total, 90 * d)


def test_speecht5_keeps_the_weight_normed_position_convolution_as_its_two_parts():
    tensors = checkpoint_tensors(load_config(SPEECHT5).spec)
    prenet = "speecht5.encoder.prenet."
    assert tensors[prenet + "pos_conv_embed.conv.parametrizations.weight.original0"] == (1, 1, 16)
    assert tensors[prenet + "pos_conv_embed.conv.parametrizations.weight.original1"] == (48, 12, 16)
    assert tensors[prenet + "feature_encoder.conv_layers.2.layer_norm.weight"] == (32,)
    assert tensors["speecht5.encoder.wrapped_encoder.embed_positions.pe_k.weight"] == (40, 12)
    assert tensors["text_decoder_postnet.lm_head.weight"] == (90, 48)


def test_speecht5_encoder_scores_also_read_each_keys_distance():
    # encoder: 4 heads of 12, each key 2 · 4 · (12 + 12) for q · k and the values, plus 2 · 4 · 12 for the query
    # against the key's distance embedding; decoder: 3 heads of 16, 2 · 3 · (16 + 16)
    layers = load_config(SPEECHT5).spec.layers
    encoder = next(layer for layer in layers if layer.stack == "encoder")
    decoder = next(layer for layer in layers if layer.stack == "decoder")
    assert score_flops_per_key(encoder.attention) == 2 * 4 * (12 + 12) + 2 * 4 * 12
    assert score_flops_per_key(decoder.attention) == 2 * 3 * (16 + 16)
    assert score_flops_per_key(decoder.cross_attention) == 2 * 3 * (16 + 16)


def test_speecht5_encoder_forward_matches_flop_counter_mode():
    # torch 2.13's FlopCounterMode over SpeechT5Encoder (transformers 5.24, eager attention) of the synthetic config,
    # 37 positions: 3,175,488 FLOPs (its q, k, v, out_proj, FFN and both score products; measured in the side venv,
    # /work/tfvenv: SpeechT5Encoder(config)(hidden_states=torch.randn(1, 37, 48)) under FlopCounterMode)
    n = 37
    flops = 0
    for layer in (layer for layer in load_config(SPEECHT5).spec.layers if layer.stack == "encoder"):
        weights = sum(t.shape[0] * t.shape[1] for t in attention_tensors(layer.attention) + ffn_tensors(layer.ffn)
                      if t.name.endswith("weight"))  # fmt: skip
        flops += 2 * weights * n + score_flops_per_key(layer.attention) * n * n
    assert flops == 3_175_488
