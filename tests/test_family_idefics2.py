"""Idefics2: a SigLIP-shaped tower, a connector of a gated MLP and a perceiver resampler, a Mistral language model.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/synthetic__idefics2.json: 325,072; defaults__idefics2.json: 8,061,394,944).
"""

import pytest

from ffncalc import account
from ffncalc.api import flops
from ffncalc.errors import InvalidConfigError, UsageError

from .conftest import ROOT

IDEFICS2 = str(ROOT / "tests" / "configs" / "synthetic__idefics2.json")


def test_idefics2_reads_its_own_tower_whatever_model_type_vision_config_names():
    # vision_config says "idefics2" (the hub's remote-code format); transformers drops it and builds its SigLIP-shaped
    # tower without a head: a biased 14 × 14 convolution, 8 × 8 positions, 2 layers, post_layernorm
    layer = 4 * (48 * 48 + 48) + (48 * 80 + 80) + (80 * 48 + 48) + 2 * 2 * 48
    assert account(IDEFICS2).components.vision == (48 * 3 * 14 * 14 + 48) + 64 * 48 + 2 * layer + 2 * 48


def test_idefics2s_connector_is_a_gated_mlp_and_a_perceiver_by_hand():
    # modality_projection: 48 → 96 (the text intermediate_size) gated → 64; the resampler: 8 latents of 64 and a final
    # RMSNorm; 2 layers of three RMSNorms, q (4 heads of 12), k and v (2 KV heads), o, and a gated MLP 64 → 256 → 64
    mlp = 2 * 48 * 96 + 96 * 64
    layer = 3 * 64 + (64 * 48 + 2 * 64 * 24 + 48 * 64) + 3 * 64 * 256
    assert account(IDEFICS2).components.projector == mlp + (8 * 64 + 64) + 2 * layer


def test_idefics2_ties_by_the_wrappers_flag():
    report = account(IDEFICS2)
    layer = 2 * 64 * 64 + 2 * 64 * 32 + 3 * 64 * 96 + 2 * 64  # Mistral: GQA, SwiGLU, two RMSNorms
    assert report.components.lm_head == 0
    assert report.language_model_params == 2 * layer + 64 + 1000 * 64


def test_idefics2_refuses_more_perceiver_kv_heads_than_heads(write_config):
    # Idefics2PerceiverConfig.validate_architecture raises ValueError
    config = {"model_type": "idefics2", "perceiver_config": {"resampler_n_heads": 2, "num_key_value_heads": 4}}
    with pytest.raises(InvalidConfigError, match="num_key_value_heads"):
        account(str(write_config(config)))


def test_idefics2s_image_flops_are_refused_by_name():
    # the perceiver's latents attend to an image's patches: no image rule, counted by parameter
    with pytest.raises(UsageError, match="`image` needs a vision transformer tower"):
        flops(IDEFICS2, image="640x480")
