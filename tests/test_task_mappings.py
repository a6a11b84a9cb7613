"""A config naming the class a task's mapping builds is counted as that class: for each task (causal LM,
image-text-to-text, masked LM, seq2seq, speech seq2seq), every model_type ffncalc counts for it, named as the class
the task's Auto class builds from transformers' default config.

The expected class and total are transformers 5.24 building AutoModelFor<task>.from_config(AutoConfig.for_model(…))
on the meta device (tools/task_mapping_counts.py → tests/expected/task_mappings.json). Some wrappers' causal-LM class
is the whole model (Gemma 3), others' the language model alone (Llama4ForCausalLM, Dots3NoteForCausalLM). One test a
task: the model_types are many and each check is cheap; the message names every one that disagrees.
"""

import json

import pytest

from ffncalc import account
from ffncalc.coverage import NOT_COUNTED_FOR_TASK
from ffncalc.errors import FfncalcError
from ffncalc.families import supported_model_types
from ffncalc.loading import loaded_from
from ffncalc.source import RawConfig

from .conftest import EXPECTED

BUILT = json.loads((EXPECTED / "task_mappings.json").read_text())["tasks"]
COUNTED = set(supported_model_types())

# transformers 5.24 allocates gate_up_proj rows for LongCat-Flash's zero experts too (LongcatFlashExperts: routed +
# zero experts), which never run: ffncalc lists them as stored tensors, not as parameters (LongCat-Flash is
# published as 560B). The default model's difference by hand: 28 layers × 256 zero experts × (2 · 2048) × 6144.
NEVER_RUN = {("text", "longcat_flash"): 28 * 256 * 2 * 2048 * 6144}


def counted_for(task: str) -> dict[str, dict]:
    """The task's model_types that ffncalc counts for it and transformers builds from their defaults."""
    return {
        model_type: record
        for model_type, record in BUILT[task].items()
        if model_type in COUNTED and (task, model_type) not in NOT_COUNTED_FOR_TASK and "error" not in record
    }


def test_the_record_holds_every_task_and_most_of_each_tasks_model_types():
    assert set(BUILT) == {"text", "vision-language", "encoder", "encoder-decoder", "speech"}
    assert all(len(counted_for(task)) >= len(BUILT[task]) // 2 for task in BUILT)


@pytest.mark.parametrize("task", sorted(BUILT))
def test_a_config_naming_the_tasks_class_counts_what_transformers_builds(task):
    disagreements = []
    for model_type, record in sorted(counted_for(task).items()):
        config = {"model_type": model_type, "architectures": [record["class"]]}
        try:
            report = account(loaded_from(RawConfig(data=config, name=model_type, source="file", location="x.json")))
        except FfncalcError as error:
            disagreements.append(f"{model_type}: refused ({error}), transformers builds {record['class']}")
            continue
        expected = record["total_params"] - NEVER_RUN.get((task, model_type), 0)
        if (report.model_class, report.total_params) != (record["class"], expected):
            disagreements.append(
                f"{model_type}: {report.model_class} {report.total_params:,} != {record['class']} {expected:,}"
            )
    assert not disagreements, "\n".join(disagreements)
