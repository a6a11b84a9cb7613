"""Cohere ASR: Parakeet's FastConformer encoder, a proj to the decoder's width, and a Transformer decoder with
cross-attention and a learned position table, saved under NeMo's names.

Totals, components, tensors and persistent buffers are held to transformers 5.24 by
tests/test_transformers_agreement.py (the synthetic config and the defaults); here each expected figure is derived by
hand from the config's numbers.
"""

from ffncalc import account
from ffncalc.api import load_config
from ffncalc.footprint import kv_cache
from ffncalc.tensors import checkpoint_tensors

from .conftest import ROOT

COHERE_ASR = str(ROOT / "tests" / "configs" / "synthetic__cohere_asr.json")


def fastconformer_block(d: int, heads: int, ffn: int, kernel: int) -> int:
    """Two FFNs (linear1, linear2, biased); attention (q, k, v, o biased, linear_pos unbiased, pos_bias_u and
    pos_bias_v of heads · head_dim); the convolution module (pointwise d → 2d, depthwise of kernel taps, pointwise
    d → d, all biased; a BatchNorm of d); five LayerNorms."""
    feed_forward = (d * ffn + ffn) + (ffn * d + d)
    attention = 4 * (d * d + d) + d * d + 2 * d
    conv = (d * 2 * d + 2 * d) + (d * kernel + d) + (d * d + d) + 2 * d
    return 2 * feed_forward + attention + conv + 5 * 2 * d


def test_cohere_asr_defaults_by_hand(write_config):
    # CohereAsrConfig(): its encoder defaults (48 blocks of 1,280, 8 heads, FFN 5,120, 9 taps; subsampling by 8: a
    # 3 × 3 convolution 1 → 256, then twice a depthwise 3 × 3 and a 1 × 1 of 256, all biased; a linear 256 · 128 / 8
    # → 1,280); proj 1,280 → 1,024 (biased); the decoder (vocabulary 16,384, 1,024 learned positions, 8 layers of
    # 1,024, 8 heads of 128, MLP 4,096, everything biased, three LayerNorms each; embedding_layernorm, a final norm);
    # proj_out untied (tie_word_embeddings false), with a bias
    subsampling = (256 * 9 + 256) + 2 * ((256 * 9 + 256) + (256 * 256 + 256)) + (256 * 16 * 1280 + 1280)
    encoder = 48 * fastconformer_block(1280, 8, 5120, 9) + subsampling
    decoder_layer = 2 * 4 * (1024 * 1024 + 1024) + (1024 * 4096 + 4096) + (4096 * 1024 + 1024) + 3 * 2 * 1024
    embeddings = 16384 * 1024 + 1024 * 1024 + 2 * 1024
    decoder = embeddings + (1280 * 1024 + 1024) + 8 * decoder_layer + 2 * 1024 + (16384 * 1024 + 16384)
    assert (
        encoder + decoder == 2_065_647_872
    )  # transformers 5.24 builds CohereAsrForConditionalGeneration() with as many
    assert account(str(write_config({"model_type": "cohere_asr"}))).total_params == encoder + decoder


def test_cohere_asr_stores_nemos_names():
    # conversion_mapping.py's "cohere_asr" renamings reverted: subsampling by 4 keeps pre_encode.conv.0, .2 and .3 and
    # pre_encode.out (8 channels · 20 // 4 mel bins → 40); proj (40 → 48) is encoder_decoder_proj; 64 learned
    # positions of 48; proj_out is log_softmax.mlp.layer0, untied
    tensors = checkpoint_tensors(load_config(COHERE_ASR).spec)
    assert tensors["model.encoder.pre_encode.conv.3.weight"] == (8, 8, 1, 1)
    assert tensors["model.encoder.pre_encode.out.weight"] == (40, 8 * 5)
    assert tensors["model.encoder.layers.1.self_attn.linear_pos.weight"] == (40, 40)
    assert tensors["model.encoder.layers.1.self_attn.pos_bias_u"] == (4, 10)
    assert tensors["model.encoder.layers.1.conv.batch_norm.weight"] == (40,)
    assert tensors["model.encoder_decoder_proj.weight"] == (48, 40)
    assert tensors["model.transf_decoder._embedding.position_embedding.pos_enc"] == (64, 48)
    assert tensors["model.transf_decoder._decoder.layers.1.second_sub_layer.key_net.weight"] == (2 * 16, 48)
    assert tensors["log_softmax.mlp.layer0.weight"] == (500, 48)
    assert tensors["log_softmax.mlp.layer0.bias"] == (500,)


def test_cohere_asr_caches_self_and_cross_attention_keys_and_values():
    # 2 decoder layers, 2 key-value heads of 16, at context 100 (the encoder's positions taken as the context):
    # self-attention and cross-attention each 2 (k, v) · 2 · 16 · 100 values, at 2 bytes
    spec = load_config(COHERE_ASR).spec
    assert kv_cache(spec, 100, 1, "BF16").bytes == 2 * (2 * 2 * 16 * 100 + 2 * 2 * 16 * 100) * 2
