"""Emu3: a Llama language model and a VQ-VAE (encoder, decoder, codebook) that turns images into its tokens.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/synthetic__emu3.json), and cannot build an Emu3 without vocabulary_map
(defaults__emu3.json records its AttributeError).
FlopCounterMode counts the same text forward (tests/expected/flop_counter.json, synthetic__emu3).
"""

import pytest

from ffncalc import account
from ffncalc.api import load_config
from ffncalc.errors import InvalidConfigError

from .conftest import ROOT

SYNTHETIC = str(ROOT / "tests" / "configs" / "synthetic__emu3.json")
VOCABULARY_MAP = {"<image>": 3, "<|extra_200|>": 4}


def test_emu3_default_model_by_hand(write_config):
    # Emu3TextConfig(): H 4,096, 32 layers (q, o 4,096²; k, v 4,096 × 1,024; SwiGLU 14,336; 2 RMSNorms), vocabulary
    # 184,622, an untied head; the default VQ-VAE holds 270,740,287 (its tower, held to transformers' build below).
    h = 4096
    layer = 2 * h * h + 2 * h * 1024 + 3 * h * 14336 + 2 * h
    text = 32 * layer + 2 * 184622 * h + h
    report = account(str(write_config({"model_type": "emu3", "vocabulary_map": VOCABULARY_MAP})))
    assert report.total_params - report.components.vision == text == 8_492_011_520


def test_emu3_vq_vae_by_hand():
    # synthetic__emu3's VQ-VAE: base 32, levels ×1 and ×2, one ResNet block a level (two in the decoder), attention
    # (64 wide) at level 1, latent 8, embed_dim 4, one temporal step. conv(i, o, k) = o · i · k² + o; gn(c) = 2c.
    def conv(i, o, k):
        return o * i * k * k + o

    def gn(c):
        return 2 * c

    def spatial(c):  # a GroupNorm and two 1 × 1 convolutions from the 4 quantized channels
        return gn(c) + 2 * conv(4, c, 1)

    attention = 4 * (64 * 64 + 64)
    conv3 = 8 * 8 * 27 + 8  # Conv3d 8 → 8, 3 × 3 × 3
    temporal = 2 * gn(8) + 2 * conv3
    encoder = (
        conv(3, 32, 3)
        + gn(32) + conv(32, 32, 3) + gn(32) + conv(32, 32, 3)  # level 0
        + conv(32, 32, 3)  # downsample
        + gn(32) + conv(32, 64, 3) + gn(64) + conv(64, 64, 3) + conv(32, 64, 1) + attention + gn(64)  # level 1
        + 2 * (2 * gn(64) + 2 * conv(64, 64, 3)) + gn(64) + attention  # middle
        + gn(64) + conv(64, 8, 3)  # norm_out, conv_out
        + (8 * 8 * 36 + 8)  # time_conv: Conv3d 4 × 3 × 3
        + temporal
    )  # fmt: skip
    decoder = (
        temporal + conv3  # time_res_stack, time_conv
        + conv(8, 64, 3)
        + 2 * (2 * spatial(64) + 2 * conv(64, 64, 3)) + spatial(64) + attention  # middle
        + 2 * (2 * spatial(64) + 2 * conv(64, 64, 3) + attention + spatial(64))  # level 1: two blocks, attention
        + conv(64, 64, 3)  # upsample
        + spatial(64) + conv(64, 32, 3) + spatial(32) + conv(32, 32, 3) + conv(64, 32, 1)  # level 0, first block
        + 2 * spatial(32) + 2 * conv(32, 32, 3)  # level 0, second block
        + spatial(32) + conv(32, 3, 3)  # norm_out, conv_out
    )  # fmt: skip
    quantizer = 40 * 4 + (4 * 8 * 3 + 4) + (8 * 4 * 3 + 8)  # codebook, quant_conv, post_quant_conv
    assert account(SYNTHETIC).components.vision == encoder + decoder + quantizer == 731_271


def test_emu3_saves_its_batch_norm_statistics():
    # 4 BatchNorm3d of 8 channels (2 in the encoder's, 2 in the decoder's temporal block): running_mean, running_var
    # and num_batches_tracked each: 4 · (8 + 8 + 1) = 68 elements
    saved = [extra for extra in load_config(SYNTHETIC).spec.checkpoint_extras if extra.buffer]
    assert sum(len(extra.tensors) for extra in saved) == 12


def test_emu3_without_vocabulary_map_is_refused_as_transformers_cannot_build_it(write_config):
    with pytest.raises(InvalidConfigError, match="vocabulary_map"):
        account(str(write_config({"model_type": "emu3"})))


def test_emu3_as_its_causal_lm_class_is_the_language_model_alone_without_a_vocabulary_map(write_config):
    # transformers 5.24: AutoModelForCausalLM.from_config(AutoConfig.for_model("emu3")) builds Emu3ForCausalLM from
    # text_config, 8,492,011,520 parameters on the meta device; it reads no vocabulary_map and builds no VQ-VAE
    report = account(str(write_config({"model_type": "emu3", "architectures": ["Emu3ForCausalLM"]})))
    assert (report.total_params, report.components.vision) == (8_492_011_520, 0)
    assert not [d.field for d in report.defaults_used if d.field.startswith("vq_config")]
