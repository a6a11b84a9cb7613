"""Fuyu: a Persimmon decoder that reads each image patch as a token, projected by one linear (vision_embed_tokens).

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/synthetic__fuyu.json: 206,208; defaults__fuyu.json: 9,408,238,592).
"""

from ffncalc import account

from .conftest import ROOT

FUYU = str(ROOT / "tests" / "configs" / "synthetic__fuyu.json")


def test_fuyu_reads_a_flat_configs_top_level_keys_as_its_persimmon():
    # FuyuConfig.__post_init__ moves hidden_size, layers, heads … into text_config: hidden 64, 2 layers of 4 heads of
    # 16, fused biased qkv and dense, LayerNorms (with biases) before attention and MLP and on each q and k head, a
    # biased relu² MLP 96 wide, vocabulary 1,000, untied (the wrapper's default)
    attention = (64 * 192 + 192) + (64 * 64 + 64)
    norms = 2 * 2 * 64 + 2 * 2 * 16
    mlp = (64 * 96 + 96) + (96 * 64 + 64)
    report = account(FUYU)
    assert report.language_model_params == 2 * (attention + norms + mlp) + 2 * 64 + 2 * 1000 * 64


def test_fuyus_vision_side_is_one_linear_over_a_patchs_pixels():
    # vision_embed_tokens: 10 × 10 patches of 3 channels (300 pixels) → 64, with a bias; no tower, no projector
    report = account(FUYU)
    assert report.components.vision == 300 * 64 + 64
    assert report.components.projector == 0
