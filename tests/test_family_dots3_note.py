"""dots3 Note (dots3_note): the dots3 Note language model with an MoE vision encoder and an audio encoder, its text
keys at the config's top level as the published checkpoints write them.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/defaults__dots3_note.json: 287,309,195,008; synthetic__dots3_note.json: 180,568).
"""

import pytest

from ffncalc import account
from ffncalc.errors import InvalidConfigError

from .conftest import ROOT

SYNTHETIC = str(ROOT / "tests" / "configs" / "synthetic__dots3_note.json")


def test_the_default_dots3_note_towers_by_hand(write_config):
    # Dots3NoteVisionConfig: 42 blocks of 1536 (qkv and proj without bias, q/k RMSNorms over 64, two RMSNorms); 25
    # with a SwiGLU of 4224, then MoE blocks of 4, 8, …, 64 and 64 experts of 2112 (one router row each, 1536 wide)
    attention = 1536 * 3 * 1536 + 1536 * 1536 + 2 * 64 + 2 * 1536
    experts = sum(range(4, 65, 4)) + 64
    blocks = 42 * attention + 25 * 3 * 1536 * 4224 + experts * (3 * 1536 * 2112 + 1536)
    # the patch convolution (3 · 14² → 1536, biased) and its RMSNorm, post_trunk_norm, the merger (a LayerNorm,
    # 6144 → 6144 → 5120, biased)
    merger = 2 * 1536 + (6144 * 6144 + 6144) + (6144 * 5120 + 5120)
    vision = blocks + (3 * 14 * 14 * 1536 + 1536) + 1536 + 1536 + merger
    # Dots3NoteAudioConfig: three biased 3 × 3 convolutions of 480 channels, conv_out 480 · 16 → 1280, 32 layers of
    # 1280 (q, v, out_proj biased, k not; a biased SwiGLU of 5120 fused; two RMSNorms), a final RMSNorm, the adapter
    stem = (1 * 480 * 9 + 480) + 2 * (480 * 480 * 9 + 480) + 480 * 16 * 1280
    layer = 3 * (1280 * 1280 + 1280) + 1280 * 1280 + (1280 * 10240 + 10240) + (5120 * 1280 + 1280) + 2 * 1280
    audio = stem + 32 * layer + 1280 + 2 * 1280 + (1280 * 5120 + 5120) + (5120 * 5120 + 5120)
    report = account(str(write_config({"model_type": "dots3_note"})))
    assert (report.components.vision, report.components.audio) == (vision, audio)
    assert report.total_params == 287_309_195_008


def test_dots3_notes_pyramid_of_vision_experts_by_hand():
    # pyramid_num_routed [-1, 4, 2]: block 0 a SwiGLU of 48, block 1 four experts of 24, block 2 two (a patch draws
    # min(capacity_factor 3, its experts)); each block's attention (qkv, proj, q/k norms over 16) and two RMSNorms
    shared = 32 * 96 + 32 * 32 + 2 * 16 + 2 * 32
    blocks = 3 * shared + 3 * 32 * 48 + (4 * 3 * 32 * 24 + 4 * 32) + (2 * 3 * 32 * 24 + 2 * 32)
    merger = 2 * 32 + (128 * 128 + 128) + (128 * 64 + 64)
    vision = blocks + (3 * 16 * 32 + 32) + 32 + 32 + merger
    assert account(SYNTHETIC).components.vision == vision == 57_664


def test_dots3_notes_audio_encoder_reads_its_whisper_config_by_hand():
    # whisper_config: 2 layers of 32, 2 heads, an FFN of 48, 20 mel bins (conv_out reads 8 channels · ⌈20 / 8⌉)
    stem = (9 * 8 + 8) + 2 * (8 * 8 * 9 + 8) + 8 * 3 * 32
    layer = 3 * (32 * 32 + 32) + 32 * 32 + (32 * 96 + 96) + (48 * 32 + 32) + 2 * 32
    adapter = 2 * 32 + (32 * 64 + 64) + (64 * 64 + 64)
    assert account(SYNTHETIC).components.audio == stem + 2 * layer + 32 + adapter == 26_368


def test_dots3_notes_flat_language_model_by_hand():
    # the top-level keys: 3 layers of 64 with MLA (q and kv latents of 16, 4 heads of 8 + 8, v 8), a per-head output
    # gate, the lightning indexer (2 heads of 16); layer 0 dense (96), layers 1-2 four experts of 16 and a shared one;
    # tied as the top level's tie_word_embeddings says
    attention = 64 * 16 + 16 * 64 + 64 * 24 + 16 * 64 + 32 * 64 + 64 * 4 + (16 * 32 + 64 * 16 + 64 * 2)
    norms = 16 + 16 + 8 + 2 * 16 + 2 * 64
    ffn = 3 * 64 * 96 + 2 * (4 * 64 + 4 * 3 * 64 * 16 + 3 * 64 * 16)
    report = account(SYNTHETIC)
    assert (report.components.attention, report.components.lm_head) == (3 * attention, 0)
    assert report.components.language_model == 3 * attention + 3 * norms + 64 + ffn + 320 * 64
    assert report.total_params == report.components.language_model + 57_664 + 26_368 == 180_568


def test_the_vision_experts_stay_out_of_a_text_tokens_active_parameters():
    # the routed experts a text token may use are the language model's: 2 layers × 4 experts × 3 · 64 · 16
    assert account(SYNTHETIC).moe.routed_expert_params == 2 * 4 * 3 * 64 * 16


def test_a_dots3_note_vision_encoder_longer_than_its_pyramid_is_refused(write_config):
    # the default pyramid has 42 entries; transformers cannot lay out a 43rd block
    config = {"model_type": "dots3_note", "vision_config": {"num_hidden_layers": 43}}
    with pytest.raises(InvalidConfigError, match="pyramid_num_routed"):
        account(str(write_config(config)))
