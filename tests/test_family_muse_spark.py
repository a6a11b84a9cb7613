"""Muse Spark: Muse Glimmer's wrapper and tower around an MoE language model (latent experts, residual gates), with
a convolutional audio tower over the raw waveform; never tied.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/defaults__muse_spark.json: 822,036,513,792; synthetic__muse_spark.json: 227,420).
"""

from ffncalc import account

from .conftest import ROOT

SYNTHETIC = str(ROOT / "tests" / "configs" / "synthetic__muse_spark.json")


def audio_stage(channels: int, patch: int, width: int, depth: int, kernel: int, inner: int) -> int:
    """One stage of MuseSparkAudioModel: a biased linear over PATCH positions of CHANNELS and its RMSNorm, then DEPTH
    blocks (a biased depthwise convolution of KERNEL taps, an RMSNorm, a biased FFN WIDTH → INNER → WIDTH)."""
    block = (width * kernel + width) + width + (width * inner + inner) + (inner * width + width)
    return (channels * patch * width + width) + width + depth * block


def test_the_default_muse_spark_by_hand(write_config):
    # MuseSparkTextConfig: 62 sparse layers of 8192; q, o and the output gate 8192 square, k and v 8192 → 16 · 64;
    # 256 stacked experts of 4096 (SwiGLU at moe_hidden_size 4096), the router 8192 → 256, pre_expert_proj and
    # post_expert_proj 8192 ↔ 4096; three weighted RMSNorms, pre_expert_norm and post_expert_norm (4096), two
    # residual gates (8192) a layer; a final norm, a 202,048 × 8192 table and a head of its own
    attention = 3 * 8192 * 8192 + 2 * 8192 * 1024
    moe = 256 * 3 * 4096 * 4096 + 256 * 8192 + 2 * 8192 * 4096
    layer = attention + moe + 3 * 8192 + 2 * 4096 + 2 * 8192
    text = 62 * layer + 8192 + 2 * 202048 * 8192
    # Muse Glimmer's default tower (1,852,639,744, as tests/test_family_muse_glimmer.py derives it)
    vision = 1_852_639_744
    projector = 6144 * 4096 + 4096 * 4096 + 4096 * 8192
    # the audio tower: four stages (patches of 16, 6, 5, 4 into 256, 512, 1024, 2048; two blocks each, kernel 7,
    # FFNs 4× wide), a final RMSNorm, proj 2048 → 8192 (biased) and its RMSNorm
    audio = (
        audio_stage(1, 16, 256, 2, 7, 1024)
        + audio_stage(256, 6, 512, 2, 7, 2048)
        + audio_stage(512, 5, 1024, 2, 7, 4096)
        + audio_stage(1024, 4, 2048, 2, 7, 8192)
        + 2048 + (2048 * 8192 + 8192) + 8192
    )  # fmt: skip
    report = account(str(write_config({"model_type": "muse_spark"})))
    assert (report.components.audio, report.components.projector) == (audio, projector)
    assert report.total_params == text + vision + projector + audio == 822_036_513_792


def test_muse_spark_never_ties_its_head():
    # the synthetic config's top-level tie_word_embeddings true: MuseSparkForConditionalGeneration ties nothing
    assert account(SYNTHETIC).components.lm_head == 320 * 64


def test_muse_sparks_dense_and_latent_moe_layers_by_hand():
    report = account(SYNTHETIC)
    # layer 0 dense (SwiGLU 64 → 96); layers 1 and 2: 4 experts of 40 at 32 wide, the router 64 → 4, the latent
    # projections 64 ↔ 32
    assert report.components.ffn == 3 * 64 * 96 + 2 * (4 * 3 * 32 * 40 + 64 * 4 + 2 * 64 * 32)
    # three weighted RMSNorms a layer, the two expert norms of the sparse layers, the final norm; two residual gates
    assert (report.components.norm, report.components.other) == (3 * 3 * 64 + 2 * 2 * 32 + 64, 3 * 2 * 64)


def test_muse_sparks_audio_tower_by_hand():
    # stages of 8, 16, 24 over patches of 4, 2, 2, with 1, 0 and 2 blocks (kernel 3, FFNs int(1.5 · width) wide)
    stages = audio_stage(1, 4, 8, 1, 3, 12) + audio_stage(8, 2, 16, 0, 3, 24) + audio_stage(16, 2, 24, 2, 3, 36)
    assert account(SYNTHETIC).components.audio == stages + 24 + (24 * 64 + 64) + 64 == 6908
