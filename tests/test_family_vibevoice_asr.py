"""VibeVoice-ASR: two convolutional tokenizer encoders (acoustic, semantic), a two-path projector, Qwen2.

Totals, components and tensors are held to transformers 5.24 by tests/test_transformers_agreement.py (the synthetic
config and the defaults); here each expected figure is derived by hand from the config's numbers.
"""

from ffncalc import account
from ffncalc.api import load_config
from ffncalc.tensors import checkpoint_tensors

from .conftest import ROOT

VIBEVOICE_ASR = str(ROOT / "tests" / "configs" / "synthetic__vibevoice_asr.json")


def tokenizer_encoder(channels: int, hidden: int, kernel: int, filters: int, ratios: list[int], depths: list[int],
                      expansion: int) -> int:  # fmt: skip
    """A stem convolution (channels → filters, kernel taps), a stage per ratio r (a convolution of 2 · r taps doubling
    the channels), depths[...] ConvNeXt blocks after each (two RMSNorms, a depthwise convolution with bias, two layer
    scales, linear1 and linear2 of expansion · width with biases), a head convolution to hidden; every convolution
    biased."""

    def blocks(width: int, depth: int) -> int:
        wide = expansion * width
        return depth * (
            2 * width + (width * kernel + width) + 2 * width + (width * wide + wide) + (wide * width + width)
        )

    total = (filters * channels * kernel + filters) + blocks(filters, depths[0])
    for stage, ratio in enumerate(ratios):
        before, after = filters * 2**stage, filters * 2 ** (stage + 1)
        total += (after * before * 2 * ratio + after) + blocks(after, depths[stage + 1])
    last = filters * 2 ** len(ratios)
    return total + hidden * last * kernel + hidden


def test_vibevoice_asr_defaults_by_hand(write_config):
    # VibeVoiceAsrConfig(): the acoustic encoder 64 wide and the semantic one 128 wide (both 32 filters, ratios 2, 2,
    # 4, 5, 5, 8, depths 3, 3, 3, 3, 3, 3, 8, 7 taps, expansion 4); each path's projector (→ 3,584, an RMSNorm,
    # 3,584 → 3,584, biased); Qwen2Config()'s language model (as Audio Flamingo 3's), its own head
    ratios, depths = [2, 2, 4, 5, 5, 8], [3, 3, 3, 3, 3, 3, 8]
    audio = tokenizer_encoder(1, 64, 7, 32, ratios, depths, 4) + tokenizer_encoder(1, 128, 7, 32, ratios, depths, 4)
    d = 4096
    projector = sum((width * d + d) + d + (d * d + d) for width in (64, 128))
    text = 2 * 151936 * d + 32 * (3 * (d * d + d) + d * d + 3 * d * 22016 + 2 * d) + d
    assert audio + projector + text == 12_772_521_344  # transformers 5.24 builds VibeVoiceAsrForConditionalGeneration()
    report = account(str(write_config({"model_type": "vibevoice_asr"})))
    assert (report.total_params, report.components.audio, report.components.projector) == (
        audio + projector + text,
        audio,
        projector,
    )


def test_vibevoice_asr_keeps_both_tokenizers_in_transformers_4s_layout():
    # acoustic: 4 filters, ratios 2, 3 (8 then 16 channels), head 16 ← 16 over 5 taps; semantic: 6 filters, ratio 4 (12 channels), head 24 ← 12 over 3 taps
    spec = load_config(VIBEVOICE_ASR).spec
    tensors = checkpoint_tensors(spec)
    assert tensors["acoustic_tokenizer_encoder.conv_layers.1.conv.conv.weight"] == (16, 8, 2 * 3)
    assert tensors["acoustic_tokenizer_encoder.conv_layers.0.stage.1.mixer.conv.weight"] == (8, 1, 5)
    assert tensors["semantic_tokenizer_encoder.head.conv.weight"] == (24, 12, 3)
    assert tensors["multi_modal_projector.semantic_linear_1.weight"] == (48, 24)
    assert account(VIBEVOICE_ASR).components.audio == tokenizer_encoder(1, 16, 5, 4, [2, 3], [1, 2, 1], 2) + (
        tokenizer_encoder(1, 24, 3, 6, [4], [1, 1], 4)
    )
    assert spec.audio is None  # clips of any length, stages at several rates: no rule
