"""Phi-4-multimodal: a Phi-3-style language model, a SigLIP image tower and a Conformer speech encoder in one flat
config, the towers and their projections under model.embed_tokens_extend.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/defaults__phi4_multimodal.json: 5,308,268,992; synthetic__phi4_multimodal.json: 181,296).
"""

from ffncalc import account

from .conftest import ROOT

SYNTHETIC = str(ROOT / "tests" / "configs" / "synthetic__phi4_multimodal.json")


def conformer_block(hidden: int, inner: int, ext: int, depthwise: int, separable: int, kernel: int) -> int:
    """One Conformer block: two FFNs (a LayerNorm, gate_up → 2 · INNER, down), biased q, k, v, o, the convolution
    module (a LayerNorm, the GLU's 1 × 1 convolution → 2 · EXT and its b1, b2, a depthwise convolution of DEPTHWISE
    channels and KERNEL taps, a 1 × 1 one → SEPARABLE, ext_pw_conv_1d → EXT, all biased) and two LayerNorms."""
    ffn = 2 * hidden + (hidden * 2 * inner + 2 * inner) + (inner * hidden + hidden)
    attention = 4 * (hidden * hidden + hidden)
    conv = (
        2 * hidden + (2 * ext * hidden + 2 * ext) + 2 * ext
        + (depthwise * kernel + depthwise) + (separable * depthwise + separable) + (ext * hidden + ext)
    )  # fmt: skip
    return 2 * ffn + attention + conv + 2 * 2 * hidden


def test_the_default_phi4_multimodal_by_hand(write_config):
    # the language model: 32 Phi-3 layers of 3072 (qkv_proj 3072 → 32 · 96 + 2 · 8 · 96, o_proj; gate_up_proj →
    # 2 · 8192, down_proj; two RMSNorms), a final norm, a 200,064 × 3072 table and an untied head
    text = 32 * (3072 * 4608 + 3072 * 3072 + 3072 * 16384 + 8192 * 3072 + 2 * 3072) + 3072 + 2 * 200064 * 3072
    # SigLIP at 448 px in patches of 14 (1,024 positions), 27 layers of 1152 (FFN 4304), post_layernorm and the
    # attention-pooling head (probe, in_proj, out_proj, a LayerNorm, an MLP)
    layer = 4 * (1152 * 1152 + 1152) + (1152 * 4304 + 4304) + (4304 * 1152 + 1152) + 4 * 1152
    head = (
        1152
        + (3 * 1152 * 1152 + 3 * 1152)
        + (1152 * 1152 + 1152)
        + 2 * 1152
        + (1152 * 4304 + 4304)
        + (4304 * 1152 + 1152)
    )
    vision = 27 * layer + (3 * 14 * 14 * 1152 + 1152) + 1024 * 1152 + 2 * 1152 + head
    # the Conformer: NeMo's subsampling (3 × 3 from 1 channel to 1024, then a depthwise 3 × 3 and a 1 × 1 twice;
    # out from 1024 · 10 mel bins), a table of 2 · 1000 buckets × 16 heads, 24 blocks of 1024
    subsampling = (9 * 1024 + 1024) + 2 * ((9 * 1024 + 1024) + (1024 * 1024 + 1024)) + (10240 * 1024 + 1024)
    audio = subsampling + 2000 * 16 + 24 * conformer_block(1024, 1536, 1024, 1024, 1024, 3)
    # the image projections (1152 → 3072 → 3072) and separators, the two speech projection pairs (1024 → 3072 → 3072)
    projector = (
        (1152 * 3072 + 3072) + (3072 * 3072 + 3072) + 2 * 1152 + 2 * ((1024 * 3072 + 3072) + (3072 * 3072 + 3072))
    )
    report = account(str(write_config({"model_type": "phi4_multimodal"})))
    assert (report.components.vision, report.components.audio, report.components.projector) == (
        vision,
        audio,
        projector,
    )
    assert report.total_params == text + vision + audio + projector == 5_308_268_992


def test_phi4_multimodal_reads_its_language_model_from_its_own_keys_and_ties_as_they_say():
    # 2 layers of 64, 4 heads of 16 and 2 KV heads, a SwiGLU of 96; tie_word_embeddings true: no head of its own
    report = account(SYNTHETIC)
    layer = 64 * (64 + 2 * 32) + 64 * 64 + 64 * 2 * 96 + 96 * 64 + 2 * 64
    assert report.components.lm_head == 0
    assert report.components.language_model == 2 * layer + 64 + 320 * 64


def test_phi4_multimodals_conformer_by_hand():
    # time_reduction 4: two halvings of 20 mel bins (10, 5), so one depthwise and 1 × 1 pair after the first
    # convolution, out from 8 · 5; bias_max_distance 10: 20 buckets × 2 heads; depthwise_multiplier 2 doubles the
    # depthwise channels (64)
    subsampling = (9 * 8 + 8) + (9 * 8 + 8) + (8 * 8 + 8) + (40 * 32 + 32)
    audio = subsampling + 20 * 2 + 2 * conformer_block(32, 40, 24, 64, 16, 5)
    assert account(SYNTHETIC).components.audio == audio == 34_176


def test_phi4_multimodals_speech_projections_read_downsample_rate_frames_side_by_side():
    # downsample_rate 2: each pair reads 2 · 32; the image side projects 32 → 64 → 64 and its two separators
    image = (32 * 64 + 64) + (64 * 64 + 64) + 2 * 32
    speech = 2 * ((64 * 64 + 64) + (64 * 64 + 64))
    assert account(SYNTHETIC).components.projector == image + speech
