"""MOSS-Transcribe-Diarize: Whisper's encoder, a projector over merged positions, Qwen3.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/defaults__moss_transcribe_diarize.json, synthetic__moss_transcribe_diarize.json).
FlopCounterMode counts the same text forward (tests/expected/flop_counter.json, synthetic__moss_transcribe_diarize).
"""

from ffncalc import account
from ffncalc.api import load_config

from .conftest import ROOT

SYNTHETIC = str(ROOT / "tests" / "configs" / "synthetic__moss_transcribe_diarize.json")


def test_moss_default_model_by_hand(write_config):
    # Audio: 24 layers of d 1,024 (q, v, out_proj biased, k not; fc1, fc2 1,024 ↔ 4,096 biased; 2 LayerNorms),
    # conv1 80 → 1,024 and conv2 1,024 → 1,024 (3 taps, biased), 1,500 positions, a final LayerNorm.
    d = 1024
    audio_layer = 4 * d * d + 3 * d + 2 * d * 4096 + 4096 + d + 2 * 2 * d
    audio = 24 * audio_layer + (80 * 3 * d + d) + (3 * d * d + d) + 1500 * d + 2 * d
    # Projector: 4 · 1,024 → 1,024 and 1,024 → 1,024 with biases, a LayerNorm with bias.
    projector = 4 * d * d + d + d * d + d + 2 * d
    # Qwen3: vocabulary 151,936 tied, 28 layers of 16 heads of 128 (8 KV heads), SwiGLU 3,072, q and k norms of 128.
    text_layer = 2 * d * 2048 + 2 * d * 1024 + 3 * d * 3072 + 2 * d + 2 * 128
    text = 28 * text_layer + 151936 * d + d
    report = account(str(write_config({"model_type": "moss_transcribe_diarize"})))
    assert (report.components.audio, report.components.projector) == (audio, projector)
    assert report.total_params == audio + projector + text == 908_513_280


def test_moss_projector_reads_merged_positions_without_biases():
    # audio_merge_size 3 over an audio width of 48: linear_1 144 → 64, linear_2 64 → 64, no biases; the LayerNorm 2 · 64
    assert account(SYNTHETIC).components.projector == 144 * 64 + 64 * 64 + 2 * 64


def test_moss_window_becomes_its_positions_over_the_merge():
    # 30 encoder positions in groups of 3: 10 tokens a window
    audio = load_config(SYNTHETIC).spec.audio
    assert (audio.positions, audio.tokens) == (30, 10)
