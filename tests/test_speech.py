"""Speech encoders that read fixed windows (Whisper's 30 s): what a clip costs (flops --audio), and the fixed
encoder length a decoder token's cross-attention reads (flops per token, prefill, memory).

Every figure is derived by hand here from the config's numbers; the per-window encoder figures also agree with
torch's FlopCounterMode over transformers 5.24's WhisperEncoder (eager attention), as cited where used.
"""

import pytest

from ffncalc.api import flops, memory

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"
WHISPER = str(CONFIGS / "synthetic__whisper.json")


def whisper_tiny_window() -> dict[str, int]:
    """One 30-second window through WhisperConfig()'s encoder (whisper-tiny's shape): 80 mel bins, d 384, 4 layers
    of 6 heads (head_dim 64) and FFN 1,536; 3,000 frames, 1,500 positions; 4 decoder layers' cross-attention."""
    d, mel, layers, heads, ffn, frames, positions = 384, 80, 4, 6, 1536, 3000, 1500
    return {
        # conv1 (mel → d, 3 taps) at every frame; conv2 (d → d, 3 taps, stride 2) at every position
        "front_end": 2 * (d * mel * 3) * frames + 2 * (d * d * 3) * positions,
        "attention_projections": layers * 2 * (4 * d * d) * positions,
        "attention_scores": layers * 2 * heads * (64 + 64) * positions * positions,
        "ffn": layers * 2 * (2 * d * ffn) * positions,
        "cross_attention_kv": 4 * 2 * (2 * d * d) * positions,  # each decoder layer's k_proj and v_proj
    }


def test_a_whisper_window_by_hand_matches_flopcountermode():
    window = whisper_tiny_window()
    # torch 2.13 FlopCounterMode over WhisperEncoder(WhisperConfig()) on input_features [1, 80, 3000], eager
    # attention: 36,937,728,000; each decoder layer's encoder_attn k_proj and v_proj over its output: 3,538,944,000
    assert window["front_end"] + window["attention_projections"] + window["attention_scores"] + window["ffn"] == (
        36_937_728_000
    )
    assert window["cross_attention_kv"] == 3_538_944_000


def test_a_45_second_clip_is_two_whisper_windows(write_config):
    clip = flops(str(write_config({"model_type": "whisper"})), audio="45").audio
    window = whisper_tiny_window()
    assert (clip.windows, clip.window_seconds, clip.frames, clip.encoder_positions) == (2, 30, 6000, 3000)
    assert clip.audio_tokens is None  # the decoder reads the positions by cross-attention
    for part, value in window.items():
        assert getattr(clip, part) == 2 * value, part
    assert clip.projector == 0
    assert clip.total == 2 * sum(window.values()) == 2 * (36_937_728_000 + 3_538_944_000)


@pytest.mark.parametrize(("seconds", "windows"), [("0.01", 1), ("30", 1), ("30.001", 2), ("90", 3), ("3600", 120)])
def test_a_clip_is_read_as_whole_windows_the_last_padded(write_config, seconds, windows):
    # WhisperFeatureExtractor pads every input to a whole 30-second window: ⌈seconds / 30⌉ of them
    assert flops(str(write_config({"model_type": "whisper"})), audio=seconds).audio.windows == windows


def test_a_synthetic_whisper_window_is_its_max_source_positions_twice_in_frames():
    # max_source_positions 50: 100 frames a window, which at 100 frames a second is 1 s; 2.5 s is 3 windows.
    # d 64, 16 mel bins, 2 encoder layers of 4 heads (head_dim 16), FFN 96; 3 decoder layers.
    clip = flops(WHISPER, audio="2.5").audio
    assert (clip.window_seconds, clip.windows, clip.frames, clip.encoder_positions) == (1, 3, 300, 150)
    assert clip.front_end == 3 * (2 * 64 * 16 * 3 * 100 + 2 * 64 * 64 * 3 * 50)
    assert clip.attention_scores == 3 * 2 * 2 * 4 * (16 + 16) * 50 * 50
    assert clip.cross_attention_kv == 3 * 3 * 2 * (2 * 64 * 64) * 50
    # torch 2.13 FlopCounterMode over this config's WhisperEncoder on [1, 16, 100], eager attention: 8,857,600
    # per window; the three decoder layers' cross k_proj and v_proj: 2,457,600
    assert clip.total == 3 * (8_857_600 + 2_457_600)


def test_a_decoder_tokens_cross_attention_reads_the_fixed_encoder_length_at_any_context():
    # per key 2 · heads · (qk + v) = 2 · 2 · (32 + 32) = 256 in each of 3 decoder layers (d 64, 2 heads):
    # self-attention reads the context's keys, cross-attention always max_source_positions (50)
    for context in (10, 40):
        per_token = flops(WHISPER, context=context).per_token
        assert per_token.attention_scores == 3 * 256 * context + 3 * 256 * 50


def test_whisper_prefill_runs_the_encoder_over_one_window():
    # the decoder over 10 target tokens (causal), plus one window: the encoder's 8,857,600 FLOPs (FlopCounterMode,
    # above) and the cross-attention keys and values, 2,457,600
    prefill = flops(WHISPER, context=10).prefill
    d, ffn, vocab, layers = 64, 80, 1000, 3
    fixed = layers * 2 * (4 * d * d + 2 * d * d + 2 * d * ffn) + 2 * vocab * d  # self q k v o, cross q o, FFN, head
    scores = layers * 256 * (10 * 11 // 2) + layers * 256 * 10 * 50  # causal self-attention, cross over 50
    assert prefill.total == 10 * fixed + scores + 8_857_600 + 2_457_600


def test_whisper_memory_caches_cross_attention_for_the_fixed_encoder_length():
    # context 40 (max_target_positions, the default's cap), 3 decoder layers, BF16: self-attention keys and values
    # 2 · 64 per token for 40 tokens; cross-attention's 2 · 64 for max_source_positions (50) positions, whatever
    # the context; one more token grows only the self-attention cache
    cache = memory(WHISPER).kv_cache
    assert cache.context == 40
    assert cache.bytes == 3 * (2 * 64 * 40) * 2 + 3 * (2 * 64 * 50) * 2
    assert cache.bytes_per_token == 3 * 2 * 64 * 2
    cross = next(layer for layer in cache.layers if layer.kind.startswith("cross"))
    assert (cross.kind, cross.tokens) == ("cross-attention (encoder output, 50 positions)", 50)


def test_whisper_causal_lm_has_no_audio_rule(ffncalc):
    run = ffncalc("flops", str(CONFIGS / "synthetic__whisper_causal_lm.json"), "--audio", "30")
    assert run.exit_code != 0
    assert run.stderr.startswith("Error: ") and run.stderr.count("\n") == 1
    assert "--audio needs a speech encoder that reads fixed windows" in run.stderr


@pytest.mark.parametrize("value", ["abc", "0", "-3", "nan", "1e9", "30s", ""])
def test_a_bad_clip_length_is_refused_in_one_line(ffncalc, value):
    run = ffncalc("flops", WHISPER, "--audio", value)
    assert run.exit_code != 0
    assert run.stdout == ""
    assert run.stderr.startswith("Error: --audio") and run.stderr.count("\n") == 1


@pytest.mark.parametrize("width", [80, 120])
def test_the_audio_table_reads_whole_at_the_terminals_width(ffncalc, monkeypatch, width):
    monkeypatch.setenv("COLUMNS", str(width))
    run = ffncalc("flops", WHISPER, "--audio", "2.5")
    assert run.exit_code == 0
    assert all(len(line) <= width for line in run.stdout.splitlines())
    lines = run.stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("A 2.5 s clip: 3 windows of 1 s"))
    table = "\n".join(lines[start:])
    for row in ("Convolutions", "Attention projections", "Attention scores", "FFN", "Cross-attention K, V"):
        assert row in table
    assert " Total " in table and "33,945,600" in table  # 3 · (8,857,600 + 2,457,600)


def test_audio_json_states_the_window_convention(ffncalc):
    run = ffncalc("flops", WHISPER, "--audio", "45", "--json")
    assert run.exit_code == 0
    report = run.json()
    assert report["audio"]["windows"] == 45 and report["audio"]["seconds"] == 45
    assert any(
        convention.startswith("--audio s: the encoder reads ⌈s / 1⌉ windows") for convention in report["conventions"]
    )
