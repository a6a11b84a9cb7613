"""A multimodal model_type in transformers' causal-LM mapping is counted as the class that mapping builds.

AutoModelForCausalLM builds, for some wrappers, the whole model (Gemma 3's ForConditionalGeneration) and for others
the language model alone (Llama4ForCausalLM, Dots3NoteForCausalLM, Qwen3_5ForCausalLM). Each expected total is
transformers 5.24 building AutoModelForCausalLM.from_config(AutoConfig.for_model(model_type)) on the meta device
(torch 2.13.0), with the class it built; ffncalc counts a config that names that class in architectures.
"""

import pytest

from ffncalc import account
from ffncalc.loading import loaded_from
from ffncalc.source import RawConfig

BUILT_BY_AUTOMODELFORCAUSALLM = {
    "dots3_note": ("Dots3NoteForCausalLM", 279_551_718_016),
    "gemma3": ("Gemma3ForConditionalGeneration", 2_723_312_896),
    "gemma4": ("Gemma4ForConditionalGeneration", 5_077_177_856),
    "gemma4_unified": ("Gemma4UnifiedForConditionalGeneration", 3_010_758_400),
    "got_ocr2": ("GotOcr2ForConditionalGeneration", 560_528_640),
    "llama4": ("Llama4ForCausalLM", 107_769_861_120),
    "qwen3_5": ("Qwen3_5ForCausalLM", 8_953_803_264),
    "qwen3_5_moe": ("Qwen3_5MoeForCausalLM", 34_660_610_688),
}


@pytest.mark.parametrize("model_type", sorted(BUILT_BY_AUTOMODELFORCAUSALLM))
def test_a_wrapper_named_as_its_causal_lm_class_counts_what_that_class_holds(model_type):
    model_class, total = BUILT_BY_AUTOMODELFORCAUSALLM[model_type]
    config = {"model_type": model_type, "architectures": [model_class]}
    report = account(loaded_from(RawConfig(data=config, name=model_type, source="file", location="config.json")))
    assert (report.model_class, report.total_params) == (model_class, total)
