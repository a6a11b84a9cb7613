"""VibeVoice: Qwen2 with VibeVoice-ASR's tokenizer encoders, the acoustic tokenizer's decoder, two connectors and a
diffusion head.

Totals, components and tensors are held to transformers 5.24 by tests/test_transformers_agreement.py (the synthetic
config and the defaults); here each expected figure is derived by hand from the config's numbers.
"""

from ffncalc import account
from ffncalc.api import load_config
from ffncalc.tensors import checkpoint_tensors

from .conftest import ROOT
from .test_family_vibevoice_asr import tokenizer_encoder

VIBEVOICE = str(ROOT / "tests" / "configs" / "synthetic__vibevoice.json")


def convnext_blocks(width: int, depth: int, kernel: int, expansion: int) -> int:
    """Two RMSNorms, a depthwise convolution with bias, two layer scales, linear1 and linear2 with biases."""
    wide = expansion * width
    return depth * (2 * width + (width * kernel + width) + 2 * width + (width * wide + wide) + (wide * width + width))


def tokenizer_decoder(channels: int, hidden: int, kernel: int, filters: int, ratios: list[int], depths: list[int],
                      expansion: int) -> int:  # fmt: skip
    """The encoder's mirror, depths and ratios reversed (D = len(depths)): a stem convolution hidden → F · 2^(D−1),
    per stage s a transposed convolution F · 2^(D−1−s) → F · 2^(D−2−s) of 2 · r taps, blocks after each, a head
    convolution F → channels; every convolution biased."""
    depths, last = list(reversed(depths)), len(depths) - 1
    wide = filters * 2**last
    total = wide * hidden * kernel + wide + convnext_blocks(wide, depths[0], kernel, expansion)
    for stage, ratio in enumerate(reversed(ratios)):
        before, after = filters * 2 ** (last - stage), filters * 2 ** (last - 1 - stage)
        total += before * after * 2 * ratio + after + convnext_blocks(after, depths[stage + 1], kernel, expansion)
    return total + channels * filters * kernel + channels


def connector(width: int, d: int) -> int:
    """linear_1 width → d with bias, an RMSNorm, linear_2 d → d with bias."""
    return (width * d + d) + d + (d * d + d)


def diffusion_head(d: int, latent: int, layers: int, inner: int, frequencies: int, mlp_bias: bool) -> int:
    """noisy_images_proj, cond_proj, timestep_proj's fc1 and fc2; per layer a gated MLP, an RMSNorm and linear d → 3d;
    the final layer's linear_1 d → 2d and linear_2 d → latent; the two latent scalars."""
    layer = 3 * d * inner + (2 * inner + d if mlp_bias else 0) + d + d * 3 * d
    return latent * d + d * d + frequencies * d + d * d + layers * layer + d * 2 * d + d * latent + 2


def test_vibevoice_defaults_by_hand(write_config):
    # VibeVoiceConfig(): the acoustic tokenizer 64 wide (encoder and decoder: 32 filters, ratios 2, 2, 4, 5, 5, 8,
    # depths 3, 3, 3, 3, 3, 3, 8, 7 taps, expansion 4), the semantic encoder 128 wide, Qwen2Config()'s language model
    # with its own head, both connectors to 4,096, the diffusion head (4 layers of 4,608, 256 frequencies).
    ratios, depths = [2, 2, 4, 5, 5, 8], [3, 3, 3, 3, 3, 3, 8]
    audio = (
        tokenizer_encoder(1, 64, 7, 32, ratios, depths, 4)
        + tokenizer_decoder(1, 64, 7, 32, ratios, depths, 4)
        + tokenizer_encoder(1, 128, 7, 32, ratios, depths, 4)
    )
    d = 4096
    text = 2 * 151936 * d + 32 * (3 * (d * d + d) + d * d + 3 * d * 22016 + 2 * d) + d
    projector = connector(64, d) + connector(128, d)
    other = diffusion_head(d, 64, 4, 4608, 256, False)
    total = audio + text + projector + other
    assert total == 13_612_734_435  # transformers 5.24 builds VibeVoiceForConditionalGeneration()
    report = account(str(write_config({"model_type": "vibevoice"})))
    components = report.components
    assert (report.total_params, components.audio, components.projector, components.other) == (
        total,
        audio,
        projector,
        other,
    )


def test_vibevoice_decoder_mirrors_the_encoder():
    # depths 1, 2, 3 and ratios 2, 3 over 4 filters: the decoder's stem 16 ← 16 (hidden) with 3 blocks, then 16 → 8
    # over 2 · 3 taps (2 blocks) and 8 → 4 over 2 · 2 taps (1 block), the head 1 ← 4 over 5 taps
    tensors = checkpoint_tensors(load_config(VIBEVOICE).spec)
    assert tensors["model.audio_tower.decoder.stem.conv.conv.weight"] == (16, 16, 5)
    assert "model.audio_tower.decoder.stem.stage.2.norm.weight" in tensors
    assert tensors["model.audio_tower.decoder.conv_layers.0.convtr.convtr.weight"] == (16, 8, 6)
    assert tensors["model.audio_tower.decoder.conv_layers.1.convtr.convtr.weight"] == (8, 4, 4)
    assert tensors["model.audio_tower.decoder.head.conv.weight"] == (1, 4, 5)
    assert account(VIBEVOICE).components.audio == (
        tokenizer_encoder(1, 16, 5, 4, [2, 3], [1, 2, 3], 2)
        + tokenizer_decoder(1, 16, 5, 4, [2, 3], [1, 2, 3], 2)
        + tokenizer_encoder(1, 24, 3, 6, [4], [1, 1], 4)
    )


def test_vibevoice_diffusion_head_takes_its_widths_from_the_text_model_and_the_latents():
    # diffusion_head_config says hidden 7 and latent 3; VibeVoiceConfig sets 48 (Qwen2's) and 16 (the tokenizer's)
    tensors = checkpoint_tensors(load_config(VIBEVOICE).spec)
    assert tensors["model.diffusion_head.noisy_images_proj.weight"] == (48, 16)
    assert tensors["model.diffusion_head.final_layer.linear_2.weight"] == (16, 48)
    assert tensors["model.diffusion_head.layers.1.ffn.up_proj.bias"] == (40,)
    assert account(VIBEVOICE).components.other == diffusion_head(48, 16, 2, 40, 32, True)


def test_vibevoice_ties_its_head_as_text_config_says():
    # text_config's tie_word_embeddings true: no lm_head of its own
    report = account(VIBEVOICE)
    assert (report.components.embedding, report.components.lm_head) == (500 * 48, 0)
