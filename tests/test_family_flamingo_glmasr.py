"""Audio Flamingo 3, Music Flamingo and GLM-ASR: Whisper-style encoders as audio towers, two-linear projectors and
a language model; what a clip costs them (flops --audio).

Totals, components and tensors are held to transformers 5.24 by tests/test_transformers_agreement.py (the synthetic
configs and the defaults); here each expected figure is derived by hand from the config's numbers, and the synthetic
clips' FLOPs agree with torch 2.13's FlopCounterMode over transformers 5.24's get_audio_features (eager attention), as
cited.
"""

from ffncalc import account, flops
from ffncalc.api import load_config
from ffncalc.tensors import checkpoint_tensors

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"
AUDIOFLAMINGO3 = str(CONFIGS / "synthetic__audioflamingo3.json")
MUSICFLAMINGO = str(CONFIGS / "synthetic__musicflamingo.json")
GLMASR = str(CONFIGS / "synthetic__glmasr.json")


def whisper_encoder(d: int, ffn: int, layers: int, mel: int, positions: int) -> int:
    """Whisper's encoder: per layer q, v, out_proj with biases and k_proj without, fc1 and fc2 with biases, two
    LayerNorms; conv1 (mel → d, 3 taps) and conv2 (d → d, 3 taps) with biases, a table of positions, a LayerNorm."""
    layer = 4 * d * d + 3 * d + 2 * d * ffn + ffn + d + 2 * 2 * d
    return layers * layer + (d * mel * 3 + d) + (d * d * 3 + d) + positions * d + 2 * d


def qwen2_default_text() -> int:
    """Qwen2Config(): vocabulary 151,936, hidden 4,096, 32 layers of 32 heads (as many key-value heads), q, k, v
    biased, MLP 22,016, its own head."""
    d = 4096
    layer = 3 * (d * d + d) + d * d + 3 * d * 22016 + 2 * d
    return 2 * 151936 * d + 32 * layer + d


def test_audioflamingo3_defaults_by_hand(write_config):
    # AudioFlamingo3Config(): Whisper's encoder (32 × 1,280, FFN 5,120, 1,500 positions), the projector linear_1
    # 1,280 → 4,096 and linear_2 4,096 → 4,096 with biases, Qwen2Config()'s language model with its own head
    encoder = whisper_encoder(1280, 5120, 32, 128, 1500)
    projector = (1280 * 4096 + 4096) + (4096 * 4096 + 4096)
    assert encoder + projector + qwen2_default_text() == 12_708_843_520  # transformers 5.24 builds as many
    report = account(str(write_config({"model_type": "audioflamingo3"})))
    assert report.total_params == encoder + projector + qwen2_default_text()
    assert (report.components.audio, report.components.projector) == (encoder, projector)


def test_musicflamingo_reads_a_musicflamingo_encoder_as_audioflamingo3s():
    # projector_bias false: linear_1 64 → 48 and linear_2 48 → 48 without biases; the rotary time embedding saves nothing
    tensors = checkpoint_tensors(load_config(MUSICFLAMINGO).spec)
    assert tensors["multi_modal_projector.linear_1.weight"] == (48, 64)
    assert "multi_modal_projector.linear_1.bias" not in tensors
    assert tensors["audio_tower.embed_positions.weight"] == (50, 64)
    assert account(MUSICFLAMINGO).components.projector == 64 * 48 + 48 * 48


def test_an_audioflamingo3_window_matches_flopcountermode():
    # 100 frames → 50 positions pooled to 25 tokens; torch 2.13 FlopCounterMode over
    # AudioFlamingo3ForConditionalGeneration.get_audio_features on [1, 16, 100]: 9,126,400, its output 25 × 48
    clip = flops(AUDIOFLAMINGO3, audio="1").audio
    assert (clip.encoder_positions, clip.audio_tokens, clip.total) == (50, 25, 9_126_400)
    assert clip.projector == 2 * (64 * 48 + 48 * 48) * 25


def test_glmasr_defaults_by_hand(write_config):
    # GlmAsrConfig(): the encoder 32 layers of 1,280 (20 heads, as many key-value heads; q, v, o biased, k not; fc1,
    # fc2 biased; two LayerNorms), conv1 128 → 1,280 and conv2 1,280 → 1,280 of 3 taps, a final LayerNorm, no position
    # table; the projector 5,120 → 4,096 → 2,048 with biases; GLM-ASR-Nano's Llama (vocabulary 59,264, hidden 2,048,
    # 28 layers of 16 heads of 128 and 4 key-value heads, MLP 6,144), tied
    d, ffn = 1280, 5120
    layer = 4 * d * d + 3 * d + 2 * d * ffn + ffn + d + 2 * 2 * d
    encoder = 32 * layer + (d * 128 * 3 + d) + (d * d * 3 + d) + 2 * d
    projector = (5120 * 4096 + 4096) + (4096 * 2048 + 2048)
    text_layer = 2048 * 2048 + 2 * 2048 * 512 + 2048 * 2048 + 3 * 2048 * 6144 + 2 * 2048
    text = 59264 * 2048 + 28 * text_layer + 2048
    assert encoder + projector + text == 2_136_470_528  # transformers 5.24 builds GlmAsrForConditionalGeneration()
    report = account(str(write_config({"model_type": "glmasr"})))
    assert report.total_params == encoder + projector + text
    assert (report.components.audio, report.components.projector, report.components.lm_head) == (encoder, projector, 0)


def test_glmasr_encoder_groups_its_key_value_heads():
    # hidden 64 over 4 heads of 16, 2 key-value heads: k_proj 64 → 32 without bias, v_proj 64 → 32 with
    tensors = checkpoint_tensors(load_config(GLMASR).spec)
    assert tensors["audio_tower.layers.0.self_attn.k_proj.weight"] == (32, 64)
    assert "audio_tower.layers.0.self_attn.k_proj.bias" not in tensors
    assert tensors["audio_tower.layers.0.self_attn.v_proj.bias"] == (32,)
    assert tensors["multi_modal_projector.linear_1.weight"] == (96, 256)


def test_a_glmasr_clip_is_windows_of_30_seconds_regrouped_four_positions_a_token():
    # 3,000 frames → 1,500 positions of 64 → 375 rows of 256; torch 2.13 FlopCounterMode over
    # GlmAsrForConditionalGeneration.get_audio_features on [1, 16, 3000]: 1,499,520,000, its output 375 × 48
    clip = flops(GLMASR, audio="30").audio
    assert (clip.frames, clip.encoder_positions, clip.audio_tokens, clip.total) == (3000, 1500, 375, 1_499_520_000)
    assert clip.attention_scores == 2 * 2 * 4 * (16 + 16) * 1500 * 1500


OMNIASR = str(CONFIGS / "synthetic__omniasr.json")


def test_omniasr_defaults_by_hand(write_config):
    # OmniASRAudioConfig(): seven convolutions over the waveform (1 → 512 with 10 taps, then 512 → 512 with 3, 3, 3, 3,
    # 2, 2 taps, biased, each with a LayerNorm of 512), a LayerNorm and projection 512 → 1,024, a positional
    # convolution of 128 taps in 16 groups, 24 layers of 1,024 (FFN 4,096, everything biased), a final LayerNorm
    convs = (512 * 10 + 512 + 2 * 512) + 4 * (512 * 512 * 3 + 512 + 2 * 512) + 2 * (512 * 512 * 2 + 512 + 2 * 512)
    layer = 4 * (1024 * 1024 + 1024) + (1024 * 4096 + 4096) + (4096 * 1024 + 1024) + 2 * 2 * 1024
    encoder = convs + 2 * 512 + (512 * 1024 + 1024) + (1024 * 64 * 128 + 1024) + 24 * layer + 2 * 1024
    # the projector 1,024 → 4,096 biased; omniASR-LLM's Llama (vocabulary 11,984, hidden 4,096, 12 layers of 8
    # heads, MLP 2,816), its head its own
    text = 2 * 11984 * 4096 + 12 * (4 * 4096 * 4096 + 3 * 4096 * 2816 + 2 * 4096) + 4096
    assert encoder + (1024 * 4096 + 4096) + text == 1_638_453_760  # transformers 5.24 builds as many
    report = account(str(write_config({"model_type": "omniasr"})))
    assert (report.total_params, report.components.audio) == (encoder + 1024 * 4096 + 4096 + text, encoder)


def test_omniasr_stores_its_feature_convolutions_in_transformers_5s_layout():
    # conv_dim [16, 24, 32], kernels [10, 3, 2], no conv bias; 4 groups of 16 channels for the positions' 8 taps
    tensors = checkpoint_tensors(load_config(OMNIASR).spec)
    assert tensors["model.audio_tower.subsampling.conv_layers.0.conv.weight"] == (16, 1, 10)
    assert tensors["model.audio_tower.subsampling.conv_layers.2.conv.weight"] == (32, 24, 2)
    assert "model.audio_tower.subsampling.conv_layers.0.conv.bias" not in tensors
    assert tensors["model.audio_tower.encode_positions.conv.weight"] == (64, 16, 8)
    assert load_config(OMNIASR).spec.audio is None  # clips of any length, convolutions at several rates: no rule
