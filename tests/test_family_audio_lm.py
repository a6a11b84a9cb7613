"""Audio-language models (Voxtral, Qwen2-Audio): Whisper's encoder as an audio tower, a projector, a language model;
what a clip costs them (flops --audio).

Totals, components and tensors are held to transformers 5.24 by tests/test_transformers_agreement.py (the synthetic
configs and the defaults); here each expected figure is derived by hand from the config's numbers, and the synthetic
clips' FLOPs agree with torch 2.13's FlopCounterMode over transformers 5.24's modules (eager attention), as cited.
"""

from ffncalc import account, flops
from ffncalc.api import load_config
from ffncalc.tensors import checkpoint_tensors

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"
VOXTRAL = str(CONFIGS / "synthetic__voxtral.json")
QWEN2_AUDIO = str(CONFIGS / "synthetic__qwen2_audio.json")


def whisper_encoder(d: int, ffn: int, layers: int, mel: int, positions: int) -> int:
    """Whisper's encoder: per layer q, v, out_proj with biases and k_proj without, fc1 and fc2 with biases, two
    LayerNorms; conv1 (mel → d, 3 taps) and conv2 (d → d, 3 taps) with biases, a table of positions, a LayerNorm."""
    layer = 4 * d * d + 3 * d + 2 * d * ffn + ffn + d + 2 * 2 * d
    return layers * layer + (d * mel * 3 + d) + (d * d * 3 + d) + positions * d + 2 * d


def test_voxtral_defaults_by_hand(write_config):
    # VoxtralConfig(): the encoder 32 × d 1,280, FFN 5,120, 128 mel bins, 1,500 positions; the projector reads rows
    # of 5,120 (linear_1 5,120 → 3,072, linear_2 3,072 → 3,072, no biases); Voxtral-Mini's Llama: vocabulary
    # 131,072, hidden 3,072, 30 layers of 32 heads of 128 and 8 key-value heads, MLP 8,192; lm_head its own
    text_layer = 3072 * 4096 + 2 * 3072 * 1024 + 4096 * 3072 + 3 * 3072 * 8192 + 2 * 3072
    text = 2 * 131072 * 3072 + 30 * text_layer + 3072
    total = whisper_encoder(1280, 5120, 32, 128, 1500) + (5120 * 3072 + 3072 * 3072) + text
    assert total == 4_676_271_104  # transformers 5.24 builds VoxtralForConditionalGeneration() with as many
    report = account(str(write_config({"model_type": "voxtral"})))
    assert report.total_params == total
    assert report.components.audio == whisper_encoder(1280, 5120, 32, 128, 1500)
    assert report.components.projector == 5120 * 3072 + 3072 * 3072


def test_voxtral_reads_a_given_text_config_over_its_defaults():
    # text_config gives 8 heads and no model_type: Llama with Voxtral's head_dim 128 and 8 key-value heads
    tensors = checkpoint_tensors(load_config(str(CONFIGS / "synthetic__voxtral_merged_text.json")).spec)
    assert tensors["language_model.model.layers.0.self_attn.q_proj.weight"] == (8 * 128, 64)
    assert tensors["language_model.model.layers.0.self_attn.k_proj.weight"] == (8 * 128, 64)
    assert tensors["language_model.lm_head.weight"] == (500, 64)


def test_a_45_second_clip_through_voxtral_is_two_windows_of_375_tokens(write_config):
    # 2 windows of 3,000 frames; 1,500 positions of 1,280 regrouped into 375 rows of 5,120 for the projector
    clip = flops(str(write_config({"model_type": "voxtral"})), audio="45").audio
    d, ffn, layers, heads = 1280, 5120, 32, 20
    assert (clip.windows, clip.frames, clip.encoder_positions, clip.audio_tokens) == (2, 6000, 3000, 750)
    assert clip.front_end == 2 * (2 * d * 128 * 3 * 3000 + 2 * d * d * 3 * 1500)
    assert clip.attention_projections == 2 * layers * 2 * 4 * d * d * 1500
    assert clip.attention_scores == 2 * layers * 2 * heads * (64 + 64) * 1500 * 1500
    assert clip.ffn == 2 * layers * 2 * 2 * d * ffn * 1500
    assert clip.projector == 2 * 2 * (5120 * 3072 + 3072 * 3072) * 375
    assert clip.cross_attention_kv == 0


def test_a_synthetic_voxtral_window_matches_flopcountermode():
    # 50 positions a window (1 s); torch 2.13 FlopCounterMode over VoxtralModel.get_audio_features on [1, 16, 100]:
    # 10,099,200 FLOPs for the encoder and projector, its output 25 tokens of 48
    clip = flops(VOXTRAL, audio="1").audio
    assert (clip.audio_tokens, clip.total) == (25, 10_099_200)


def test_qwen2_audio_defaults_by_hand(write_config):
    # Qwen2AudioConfig(): the encoder as Voxtral's; the projector one linear 1,280 → 4,096 with bias; Qwen2Config()'s
    # language model: vocabulary 151,936, hidden 4,096, 32 layers of 32 heads, q, k, v biased, MLP 22,016; lm_head
    # its own
    d = 4096
    text_layer = 3 * (d * d + d) + d * d + 3 * d * 22016 + 2 * d
    text = 2 * 151936 * d + 32 * text_layer + d
    total = whisper_encoder(1280, 5120, 32, 128, 1500) + (1280 * d + d) + text
    assert total == 12_692_062_208  # transformers 5.24 builds Qwen2AudioForConditionalGeneration() with as many
    assert account(str(write_config({"model_type": "qwen2_audio"}))).total_params == total


def test_qwen2_audio_head_is_its_own_though_the_config_says_tie():
    # Qwen2AudioForConditionalGeneration declares no tied weights: tie_word_embeddings true ties nothing
    tensors = checkpoint_tensors(load_config(QWEN2_AUDIO).spec)
    assert tensors["language_model.lm_head.weight"] == (1000, 48)
    assert account(QWEN2_AUDIO).components.lm_head == 1000 * 48


def test_qwen2_audio_pools_two_positions_into_each_token():
    # 50 positions pooled to 25 tokens, each through the projector (64 → 48); torch 2.13 FlopCounterMode over the
    # audio tower and projector on [1, 16, 100]: 9,011,200
    clip = flops(QWEN2_AUDIO, audio="1").audio
    assert (clip.encoder_positions, clip.audio_tokens) == (50, 25)
    assert clip.projector == 2 * 64 * 48 * 25
    assert clip.total == 9_011_200


def test_a_text_token_runs_the_language_model_only():
    # 2 Qwen2 layers of hidden 48 (4 heads of 12, 2 key-value heads, q, k, v biased), MLP 80, head 1,000 × 48
    per_token = flops(QWEN2_AUDIO, 8).per_token
    assert per_token.attention_projections == 2 * 2 * (48 * 48 + 2 * 48 * 24 + 48 * 48)
    assert per_token.ffn == 2 * 2 * 3 * 48 * 80
    assert per_token.lm_head == 2 * 1000 * 48


QWEN3_ASR = str(CONFIGS / "synthetic__qwen3_asr.json")


def qwen3_asr_encoder(d: int, ffn: int, layers: int, mel: int, channels: int) -> int:
    """Qwen3ASREncoder: per layer q, k, v, out_proj all with biases, fc1 and fc2 with biases, two LayerNorms; three
    3 × 3 convolutions with biases (1 → channels → channels → channels), each halving the mel bins (f ← (f + 1) // 2),
    conv_out (channels · bins left → d, no bias), ln_post; sinusoidal positions are an unsaved buffer."""
    layer = 4 * d * d + 4 * d + 2 * d * ffn + ffn + d + 2 * 2 * d
    bins = ((mel + 1) // 2 + 1) // 2
    bins = (bins + 1) // 2
    convs = (channels * 9 + channels) + 2 * (channels * channels * 9 + channels)
    return layers * layer + convs + channels * bins * d + 2 * d


def test_qwen3_asr_defaults_by_hand(write_config):
    # Qwen3ASRConfig(): the encoder 24 × d 1,024, FFN 4,096, 128 mel bins (16 left), 480 channels; the projector
    # linear_1 1,024 → 1,024 and linear_2 1,024 → output_dim 3,584, with biases; Qwen3-ASR-1.7B's Qwen3: vocabulary
    # 151,936, hidden 2,048, 28 layers of 16 heads of 128, 8 key-value heads, q/k norms of 128, MLP 6,144; tied
    text_layer = 2048 * 2048 + 2 * 2048 * 1024 + 2048 * 2048 + 3 * 2048 * 6144 + 2 * 2048 + 2 * 128
    text = 151936 * 2048 + 28 * text_layer + 2048
    encoder = qwen3_asr_encoder(1024, 4096, 24, 128, 480)
    projector = (1024 * 1024 + 1024) + (1024 * 3584 + 3584)
    assert encoder + projector + text == 2_039_626_880  # transformers 5.24 builds Qwen3ASRForConditionalGeneration()
    report = account(str(write_config({"model_type": "qwen3_asr"})))
    assert report.total_params == encoder + projector + text
    assert report.components.audio == encoder
    assert report.components.projector == projector
    assert report.components.lm_head == 0


def test_qwen3_asr_stores_its_modules_in_transformers_5s_layout():
    # d_model 64 over 20 mel bins: 10, 5, then 3 left after the convolutions of 8 channels; output_dim 48
    tensors = checkpoint_tensors(load_config(QWEN3_ASR).spec)
    assert tensors["model.audio_tower.conv2d1.weight"] == (8, 1, 3, 3)
    assert tensors["model.audio_tower.conv_out.weight"] == (64, 8 * 3)
    assert tensors["model.audio_tower.layers.1.self_attn.k_proj.bias"] == (64,)
    assert tensors["model.multi_modal_projector.linear_2.weight"] == (48, 64)
    assert tensors["model.language_model.layers.0.self_attn.q_norm.weight"] == (16,)
    assert "lm_head.weight" not in tensors  # tied to model.language_model.embed_tokens


def test_qwen3_asr_has_no_fixed_window_rule_for_a_clip():
    # its encoder attends within windows of n_window_infer frames whose last may be short: no --audio
    assert load_config(QWEN3_ASR).spec.audio is None


VOXTRAL_REALTIME = str(CONFIGS / "synthetic__voxtral_realtime.json")


def voxtral_realtime_encoder(d: int, heads: int, head_dim: int, ffn: int, layers: int, mel: int) -> int:
    """VoxtralRealtimeEncoder: per layer q (bias), k (none), v (bias) d → heads · head_dim, o_proj back (bias), a gated
    MLP with only down_proj biased, two RMSNorms; embedder.conv1 (mel → d, 3 taps) and conv2 (d → d, 3 taps) with
    biases; a final RMSNorm; rotary positions, no table."""
    width = heads * head_dim
    layer = 4 * d * width + 2 * width + d + 3 * d * ffn + d + 2 * d
    return layers * layer + (d * mel * 3 + d) + (d * d * 3 + d) + d


def test_voxtral_realtime_defaults_by_hand(write_config):
    # VoxtralRealtimeConfig(): the encoder 32 × d 1,280, 32 heads of 64, FFN 5,120, 128 mel bins; the projector
    # reads downsample_factor 4 positions as a row (linear_1 5,120 → 3,072, linear_2 3,072 → 3,072, no biases);
    # Voxtral-Mini-4B-Realtime's text model: vocabulary 131,072, hidden 3,072, 26 layers of 32 heads of 128 and 8
    # key-value heads, MLP 9,216, and ada_rms_norm (3,072 → 32 → 3,072) in each layer; tied
    ada = 2 * 32 * 3072
    text_layer = 3072 * 4096 + 2 * 3072 * 1024 + 4096 * 3072 + 3 * 3072 * 9216 + 2 * 3072 + ada
    text = 131072 * 3072 + 26 * text_layer + 3072
    encoder = voxtral_realtime_encoder(1280, 32, 64, 5120, 32, 128)
    projector = 5120 * 3072 + 3072 * 3072
    assert (
        encoder + projector + text == 4_429_679_360
    )  # transformers 5.24 builds VoxtralRealtimeForConditionalGeneration()
    report = account(str(write_config({"model_type": "voxtral_realtime"})))
    assert report.total_params == encoder + projector + text
    assert report.components.audio == encoder
    assert report.components.projector == projector
    assert report.components.other == 26 * ada  # transformers' record files ada_rms_norm's linears under other


def test_voxtral_realtime_saves_transformers_4s_layout():
    # conversion mapping "voxtral_realtime" → "qwen2_audio": save_pretrained writes Voxtral's layout
    tensors = checkpoint_tensors(load_config(VOXTRAL_REALTIME).spec)
    assert tensors["audio_tower.embedder.conv2.weight"] == (64, 64, 3)
    assert tensors["audio_tower.layers.0.self_attn.q_proj.weight"] == (4 * 24, 64)
    assert tensors["audio_tower.layers.0.mlp.down_proj.bias"] == (64,)
    assert "audio_tower.layers.0.self_attn.k_proj.bias" not in tensors
    assert tensors["multi_modal_projector.linear_1.weight"] == (48, 2 * 64)
    assert tensors["language_model.model.layers.1.ada_rms_norm.linear1.weight"] == (32, 48)
    assert "language_model.lm_head.weight" not in tensors  # tied


def test_voxtral_realtime_ada_rms_norm_costs_a_token_nothing():
    # ada_rms_norm reads the time embedding once per forward; a token at context 1 costs 2 · (q 48·64 + k 48·32 +
    # v 48·32 + o 64·48) · 2 layers, scores 2 · 2 · 4 heads · (16 + 16), the MLP 2 · 3 · 48 · 80 · 2, the head 2 · 48,000
    per_token = flops(VOXTRAL_REALTIME, context=1).per_token
    projections, scores = 2 * (48 * 64 + 2 * 48 * 32 + 64 * 48) * 2, 2 * 2 * 4 * (16 + 16)
    mlp, head = 2 * 3 * 48 * 80 * 2, 2 * 48 * 1000
    assert (per_token.attention_projections, per_token.ffn, per_token.other) == (projections, mlp, 0)
    assert per_token.total == projections + scores + mlp + head


def test_voxtral_realtime_streams_so_has_no_fixed_window_rule():
    assert load_config(VOXTRAL_REALTIME).spec.audio is None
