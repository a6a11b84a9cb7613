"""GLM-GA (glmga): GLM-4.6V's configuration under a model_type of its own, built by GLM-4.6V's classes.

transformers 5.24 builds the same model from either model_type (tests/expected/transformers/synthetic__glmga.json and
synthetic__glm46v.json: 259,680; defaults__glmga.json and defaults__glm46v.json: 10,292,777,472); the figures are
derived by hand in tests/test_family_glm46v.py.
"""

from ffncalc import account
from ffncalc.api import flops

from .conftest import ROOT

GLMGA = str(ROOT / "tests" / "configs" / "synthetic__glmga.json")
GLM46V = str(ROOT / "tests" / "configs" / "synthetic__glm46v.json")


def test_glmga_counts_as_glm46v_does_by_hand():
    # one GLM-4.5V language model of 2 MoE layers, untied (the wrapper's flag), one tower block, the merger
    attention = (64 * 64 + 64) + 2 * (64 * 16 + 16) + 64 * 64
    ffn = 3 * (3 * 64 * 16) + 3 * 64 * 32 + 3 * 64
    report = account(GLMGA)
    assert report.language_model_params == 2 * (attention + ffn + 2 * 64) + 64 + 2 * 1000 * 64
    glm46v = account(GLM46V)
    assert (report.total_params, report.components) == (glm46v.total_params, glm46v.components)


def test_one_image_through_glmga_is_read_by_glm46vs_image_rule():
    # smart_resize to multiples of 42: 1000 × 700 → 1008 × 714, 3,672 patches, 408 tokens (test_family_glm46v.py)
    image = flops(GLMGA, image="1000x700").image
    assert (image.patches, image.image_tokens) == (3672, 408)


def test_glmgas_default_config_by_transformers_count(write_config):
    assert account(str(write_config({"model_type": "glmga"}))).total_params == 10292777472
