"""Nemotron 3.5 Transcribe (nemo_speechlm): a speech recognition encoder, a diarization model, a word timestamp
encoder and head, a projector and Nemotron-H, saved in NeMo's layout.

Totals, components and tensors are held to transformers 5.24 by tests/test_transformers_agreement.py (the synthetic
config and the defaults); here the audio side and the projector are derived by hand from the config's numbers.
"""

import pytest

from ffncalc import account
from ffncalc.api import load_config
from ffncalc.errors import InvalidConfigError
from ffncalc.tensors import checkpoint_tensors

from .conftest import ROOT

NEMO = str(ROOT / "tests" / "configs" / "synthetic__nemo_speechlm.json")


def encoder_layers(d: int, inner: int, layers: int, heads: int, kv: int, qk_norm: bool) -> int:
    """w_qkv d → (2 · heads + kv) · head_dim (v has as many heads as q), out_proj with bias, q_norm and k_norm
    LayerNorms of head_dim, ffn.net.0 and .3 with biases, norm1 and norm2."""
    head = d // heads
    layer = d * (2 * heads + kv) * head + (heads * head * d + d) + (4 * head if qk_norm else 0)
    return layers * (layer + (d * inner + inner) + (inner * d + d) + 4 * d)


def encoder(d: int, inner: int, layers: int, heads: int, kv: int, qk_norm: bool, mel: int, stacked: int) -> int:
    """pre_encode.proj (stacked mel frames → d, no bias), embed_norm, the layers, final_norm."""
    return stacked * mel * d + 2 * d + encoder_layers(d, inner, layers, heads, kv, qk_norm) + 2 * d


def diarization_head(audio: int, hidden: int, speakers: int, stacked: int) -> int:
    """encoder_proj, subpixel_upsample (3 taps, hidden → hidden · stacked), first_hidden_to_hidden,
    single_hidden_to_spks, all biased, and learnable_sil_emb."""
    return (
        (audio * hidden + hidden)
        + (hidden * stacked * hidden * 3 + hidden * stacked)
        + (hidden * hidden + hidden)
        + (hidden * speakers + speakers)
        + audio
    )


def word_timestamps(d: int, inner: int, layers: int, heads: int, vocab: int, factor: int) -> int:
    """upsample (d → d over factor taps, biased), embed_norm, the layers (with q_norm, k_norm), final_norm, and the
    1-tap head to vocab with bias."""
    return (d * d * factor + d) + 4 * d + encoder_layers(d, inner, layers, heads, heads, True) + (vocab * d + vocab)


def test_nemo_speechlm_defaults_by_hand(write_config):
    # Nemotron3_5TranscribeConfig(): the recognition encoder 32 layers of 1,280 (10 heads, FFN 5,120, 8 × 128 mel
    # frames stacked), the diarization encoder 31 layers of 512 (8 heads, FFN 2,048) and its head (192 wide, 8
    # speakers), asr_norm and diar_norm, the word timestamp encoder (2 layers of 1,280, 16 heads, FFN 640, upsampling 2)
    # and head (23,863 classes), the projector 1,280 → 2,688; the rest is the released Nemotron-H language model.
    audio = (
        encoder(1280, 5120, 32, 10, 10, True, 128, 8)
        + encoder(512, 2048, 31, 8, 8, False, 128, 8)
        + diarization_head(512, 192, 8, 8)
        + 2 * 1280
        + 2 * 8
        + word_timestamps(1280, 640, 2, 16, 23863, 2)
    )
    projector = 1280 * 2688 + 2688
    report = account(str(write_config({"model_type": "nemo_speechlm"})))
    # transformers 5.24 builds Nemotron3_5TranscribeForConditionalGeneration() with 32,361,750,159 parameters
    assert (report.total_params, report.components.audio, report.components.projector) == (
        32_361_750_159,
        audio,
        projector,
    )


def test_nemo_speechlm_synthetic_audio_side_by_hand():
    # recognition encoder 48 wide (4 heads over 2 KV heads: w_qkv rows (2 · 4 + 2) · 12), 4 × 10 mel frames stacked;
    # diarization encoder 32 wide (2 heads) and a head of 24 for 3 speakers; word timestamps 48 wide, 3 heads, 30
    # classes, upsampling 3
    audio = (
        encoder(48, 72, 2, 4, 2, True, 10, 4)
        + encoder(32, 40, 2, 2, 2, False, 10, 4)
        + diarization_head(32, 24, 3, 4)
        + 2 * 48
        + 2 * 3
        + word_timestamps(48, 56, 1, 3, 30, 3)
    )
    report = account(NEMO)
    assert (report.components.audio, report.components.projector) == (audio, 48 * 64 + 64)


def test_nemo_speechlm_is_saved_in_nemos_layout():
    tensors = checkpoint_tensors(load_config(NEMO).spec)
    assert tensors["perception.encoder.asr_encoder.layers.1.attn.w_qkv.weight"] == ((2 * 4 + 2) * 12, 48)
    assert tensors["perception.encoder.diarization_model.sortformer_modules.subpixel_upsample.weight"] == (96, 24, 3)
    assert tensors["ctc_timestamp.decoder.decoder_layers.0.weight"] == (30, 48, 1)
    assert tensors["llm.model.layers.0.mixer._fp32_params.A_log"] == (8,)
    assert tensors["llm.model.embed_tokens.weight"] == (500, 64)
    assert tensors["llm.lm_head.weight"] == (500, 64)  # never tied, whatever text_config says


def test_nemo_speechlm_refuses_encoders_at_different_frame_rates(write_config):
    config = {"model_type": "nemo_speechlm", "audio_config": {"asr_config": {"subsampling_factor": 4}}}
    with pytest.raises(InvalidConfigError, match="subsampling_factor"):
        account(str(write_config(config)))
