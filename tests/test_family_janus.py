"""Janus: a Llama language model that reads images through a SigLIP-like tower and an aligner, and generates them as
tokens of a VQ-VAE (encoder, codebook, decoder) through its generation embeddings, aligner and head.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/synthetic__janus.json: 913,679; defaults__janus.json: 7,031,324,299).
"""

from ffncalc import account
from ffncalc.api import flops

from .conftest import ROOT

CONFIG = str(ROOT / "tests" / "configs" / "synthetic__janus.json")


def conv(c_in: int, c_out: int, kernel: int) -> int:
    return c_in * c_out * kernel * kernel + c_out


def resnet(c_in: int, c_out: int) -> int:
    """Two GroupNorms (weight and bias), two 3 × 3 convolutions, a 1 × 1 shortcut where the channels change."""
    return (
        2 * c_in
        + conv(c_in, c_out, 3)
        + 2 * c_out
        + conv(c_out, c_out, 3)
        + (conv(c_in, c_out, 1) if c_in != c_out else 0)
    )


ATTN_64 = 2 * 64 + 4 * conv(64, 64, 1)  # a GroupNorm and 1 × 1 q, k, v, proj_out
MID_64 = 2 * resnet(64, 64) + ATTN_64

# The tower: a 16 × 16 patch convolution 3 → 32 with bias, (64 / 16)² = 16 positions, 2 layers (q, k, v 32 → 32 without
# bias, projection_layer biased, q_norm and k_norm LayerNorms over 32, fc1 32 → int(32 · 2.5) = 80 and fc2, biased; two
# LayerNorms) and post_layernorm
TOWER = (
    conv(3, 32, 16)
    + 16 * 32
    + 2 * (3 * 32 * 32 + (32 * 32 + 32) + 2 * 64 + (32 * 80 + 80) + (80 * 32 + 32) + 2 * 64)
    + 64
)
# The VQ-VAE: base 32, channel_multiplier [1, 2], one block a level, latent 32, codebook 100 × 8
ENCODER = (
    conv(3, 32, 3)
    + resnet(32, 32) + conv(32, 32, 3)  # level 0 and its downsample
    + resnet(32, 64) + ATTN_64  # level 1 (the last: an attention block after its block)
    + MID_64 + 2 * 64 + conv(64, 32, 3)  # middle, norm_out, conv_out to latent_channels
)  # fmt: skip
DECODER = (
    conv(32, 64, 3) + MID_64
    + 2 * resnet(64, 64) + 2 * ATTN_64 + conv(64, 64, 3)  # up.0: the last level, num_res_blocks + 1 blocks, upsample
    + resnet(64, 32) + resnet(32, 32)  # up.1: the first level
    + 2 * 32 + conv(32, 3, 3)
)  # fmt: skip
VQ = ENCODER + 100 * 8 + conv(32, 8, 1) + conv(8, 32, 1) + DECODER


def test_janus_counts_its_tower_and_its_vq_vae_as_vision_by_hand():
    assert account(CONFIG).components.vision == TOWER + VQ == 784331


def test_januss_aligner_runs_depth_linears_by_hand():
    # depth 3: fc1 32 → 64, then two hidden_layers 64 → 64, all biased
    assert account(CONFIG).components.projector == (32 * 64 + 64) + 2 * (64 * 64 + 64)


def test_januss_image_generation_modules_by_hand():
    # generation_embeddings 100 × 8; generation_aligner fc1 8 → 64 and one hidden layer; generation_head proj_out
    # 64 → 64 and vision_head 64 → 100; all biased
    expected = 100 * 8 + (8 * 64 + 64) + (64 * 64 + 64) + (64 * 64 + 64) + (64 * 100 + 100)
    assert account(CONFIG).components.other == expected == 16196


def test_januss_default_config_by_transformers_count(write_config):
    # Llama's defaults (32 layers of 4096, MLP 11008, 32,000 tokens, tied), the tower, its aligner, the VQ-VAE and the
    # generation modules of Janus's defaults: transformers 5.24's count on the meta device
    assert account(str(write_config({"model_type": "janus"}))).total_params == 7031324299


def test_one_image_through_januss_tower_leaves_the_vq_vae_out_by_hand():
    # resized to 64 × 64: 16 patches, 16 tokens; the VQ-VAE and the generation modules do not run
    image = flops(CONFIG, image="640x480").image
    assert (image.patches, image.image_tokens) == (16, 16)
    assert image.patch_embedding == 2 * (3 * 16 * 16 * 32) * 16
    assert image.ffn == 2 * 2 * (2 * 32 * 80) * 16
    assert image.projector == 2 * (32 * 64 + 2 * 64 * 64) * 16
