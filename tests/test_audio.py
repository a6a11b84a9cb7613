"""Audio towers: Gemma 4's and Gemma 3n's Conformers, counted per block and by name under "audio", their embedders
under "projector"; what an audio clip costs is not counted.

Figures: transformers 5.24 building each config on the meta device (tools/meta_count.py), and hand derivations here.
"""

import json

from ffncalc import account
from ffncalc.api import flops, load_config

from .agreement import stored_tensors
from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"
GEMMA4_AUDIO = str(CONFIGS / "synthetic__gemma4_audio.json")


def conformer_block(hidden: int, heads: int, kernel: int) -> int:
    """One Conformer block's parameters, written out: two FFNs (hidden → 4 · hidden → hidden), q, k, v
    (hidden → heads · head_dim), the output (hidden → hidden), the relative-position projection
    (hidden → heads · head_dim), a scale per head dimension, the light convolution (hidden → 2 · hidden, a depthwise
    kernel, hidden → hidden) and nine RMSNorms of hidden (two per FFN, two around attention, two in the light
    convolution, one at the end); no biases."""
    head_dim = hidden // heads
    ffns = 2 * (hidden * 4 * hidden + 4 * hidden * hidden)
    attention = 3 * hidden * heads * head_dim + hidden * hidden + hidden * heads * head_dim + head_dim
    light_conv = hidden * 2 * hidden + hidden * kernel + hidden * hidden
    return ffns + attention + light_conv + 9 * hidden


def test_gemma_4_audio_tower_by_hand_to_transformers_total():
    # transformers 5.24 builds this Gemma4ForConditionalGeneration with 384,016 parameters
    report = account(GEMMA4_AUDIO)
    assert report.total_params == 384_016
    # hidden 32, 4 heads, kernel 3, 2 blocks; subsampling: 3 × 3 convolutions 1 → 16 → 8 channels, each with a
    # LayerNorm weight, input_proj_linear (16 // 4 · 8 → 32), output_proj (32 → 48, with bias)
    subsampling = 16 * 9 + 16 + 8 * 16 * 9 + 8 + (16 // 4 * 8) * 32
    assert report.components.audio == 2 * conformer_block(32, 4, 3) + subsampling + (32 * 48 + 48)
    # the embedder: one projection from output_proj_dims (48) into the text hidden (64)
    assert report.components.projector == 48 * 64
    # the text model is synthetic__gemma4's (327,080 parameters as transformers builds it alone)
    assert report.language_model_params == 327_080


def test_gemma_4_clippable_linears_save_four_bounds_each():
    # use_clipped_linears (default true): q, k, v, post, four FFN linears and two light-convolution linears per
    # block, each with input_min, input_max, output_min and output_max
    spec = load_config(GEMMA4_AUDIO).spec
    bounds = [name for name in stored_tensors(spec) if name.endswith(("_min", "_max"))]
    assert len(bounds) == 2 * 10 * 4
    assert "model.audio_tower.layers.1.lconv1d.linear_start.output_max" in bounds


def test_gemma_3n_default_audio_tower_by_hand():
    # Gemma3nAudioConfig's defaults: hidden 1536, 8 heads, kernel 5, 12 blocks; subsampling convolutions 3 × 3,
    # stride 2, 1 → 128 → 32 channels, each with a norm weight; 128 mel bins become (128 + 2 − 3) // 2 + 1 = 64,
    # then 32: input_proj_linear reads 32 channels × 32 bins. transformers 5.24 builds 681,348,640 parameters.
    report = account(str(CONFIGS / "synthetic__gemma3n.json"))
    subsampling = 128 * 9 + 128 + 32 * 128 * 9 + 32 + 32 * 32 * 1536
    assert report.components.audio == 12 * conformer_block(1536, 8, 5) + subsampling == 681_348_640


def test_gemma_3n_audio_reads_the_bins_its_kernels_and_strides_leave():
    # kernels (time × frequency) 3 × 5 then 5 × 3, strides 2 × 3 then 1 × 2, 40 mel bins padded by 1 on each side:
    # (40 + 2 − 5) // 3 + 1 = 13, then (13 + 2 − 3) // 2 + 1 = 7 bins × 6 channels into input_proj_linear
    spec = load_config(str(CONFIGS / "synthetic__gemma3n_towers.json")).spec
    names = stored_tensors(spec)
    assert names["model.audio_tower.subsample_conv_projection.conv_0.conv.weight"] == (12, 1, 3, 5)
    assert names["model.audio_tower.subsample_conv_projection.conv_1.conv.weight"] == (6, 12, 5, 3)
    assert names["model.audio_tower.subsample_conv_projection.input_proj_linear.weight"] == (48, 7 * 6)
    # 5 heads of 48 // 5 = 9: q, k, v and the relative positions are 45 wide, the output 48 × 48
    assert names["model.audio_tower.conformer.0.attention.attn.q_proj.weight"] == (45, 48)
    assert names["model.audio_tower.conformer.0.attention.post.weight"] == (48, 48)
    assert account(str(CONFIGS / "synthetic__gemma3n_towers.json")).components.audio == 113_904  # transformers 5.24


def test_a_text_token_does_not_run_the_audio_tower_and_audio_flops_are_not_counted():
    with_audio, text_only = (
        flops(GEMMA4_AUDIO, context=1024),
        flops(str(CONFIGS / "synthetic__gemma4.json"), context=1024),
    )
    assert with_audio.per_token == text_only.per_token
    assert with_audio.prefill == text_only.prefill
    assert any("audio FLOPs are not counted" in note for note in account(GEMMA4_AUDIO).notes)


def test_gemma_4_without_audio_config_has_no_audio_tower_and_an_empty_one_is_the_default(write_config):
    config = json.loads((CONFIGS / "synthetic__gemma4.json").read_text())
    report = account(str(write_config(config, "none")))
    assert report.components.audio == 0
    assert any("this config has no vision or audio tower" in note for note in report.notes)
    # audio_config {}: Gemma4AudioConfig's defaults, hidden 1024, 8 heads, kernel 5, 12 blocks, channels 128 → 32,
    # output_proj 1024 → 1536; transformers 5.24 builds 305,249,992 parameters in all
    report = account(str(CONFIGS / "synthetic__gemma4_default_audio.json"))
    subsampling = 128 * 9 + 128 + 32 * 128 * 9 + 32 + (128 // 4 * 32) * 1024
    assert report.components.audio == 12 * conformer_block(1024, 8, 5) + subsampling + (1024 * 1536 + 1536)
    assert report.total_params == 305_249_992
    defaults = {d.field: d.value for d in report.defaults_used}
    assert defaults["audio_config.hidden_size"] == 1024
