"""MVP (mvp): BART's layout with its own vocabulary and two-label classifiers; its layer-wise prompts are refused.

Totals, components and tensors are held to transformers 5.24 by tests/test_transformers_agreement.py (the synthetic
configs and the defaults); here each expected figure is derived by hand from the config's numbers.
"""

import pytest

from ffncalc import account
from ffncalc.errors import InvalidConfigError

from .conftest import ROOT
from .test_family_bart_more import decoder_layer, encoder_layer

CONFIGS = ROOT / "tests" / "configs"


def test_mvp_defaults_by_hand(write_config):
    # MvpConfig(): vocabulary 50,267, d 1,024, 12 + 12 layers of FFN 4,096; per stack a learned position table of
    # 1,024 + 2 rows (fairseq's offset) and layernorm_embedding (2d); the head tied to the shared table.
    d = 1024
    total = 50267 * d + 12 * encoder_layer(d, 4096) + 12 * decoder_layer(d, 4096) + 2 * (1026 * d + 2 * d)
    assert total == 406_293_504  # transformers 5.24 builds MvpForConditionalGeneration() with as many
    assert account(str(write_config({"model_type": "mvp"}))).total_params == total


def test_mvp_sequence_classifier_is_two_labels_wide_by_default():
    # MvpConfig sets no num_labels: PreTrainedConfig's 2. classification_head: dense 64² + 64, out_proj 64 · 2 + 2.
    report = account(str(CONFIGS / "synthetic__mvp_sequence_classification.json"))
    assert report.outside_layers["other.classification_head.out_proj"] == 64 * 2 + 2


def test_mvp_prompts_are_refused_in_the_seq2seq_model(write_config):
    config = {"model_type": "mvp", "use_prompt": True}
    with pytest.raises(InvalidConfigError, match="use_prompt true: MVP's layer-wise prompts"):
        account(str(write_config(config)))


def test_mvp_causal_lm_builds_no_prompts_whatever_use_prompt_says():
    # MvpForCausalLM's decoder is MvpDecoder(config) with use_prompt left False: 3 decoder layers, d 64, FFN 80, the
    # decoder's table 1,000 × 64 (the head tied to it), its positions 102 × 64 and layernorm_embedding.
    d = 64
    total = 1000 * d + 3 * decoder_layer(d, 80) + 102 * d + 2 * d
    assert total == 202_800  # transformers 5.24 builds the synthetic config with as many
    assert account(str(CONFIGS / "synthetic__mvp_causal_lm_prompts.json")).total_params == total
