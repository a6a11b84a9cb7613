"""Which of transformers' model_types ffncalc counts, task by task, and why the others are not counted.

The tasks are transformers' own auto mappings (causal LM, image-text-to-text, masked LM, seq2seq LM, speech
seq2seq), listed in transformers_tasks.json by tools/transformers_tasks.py. A model_type in several mappings
(BERT is a causal LM and a masked LM) counts in each.
"""

from __future__ import annotations

import json
from pathlib import Path

from .results import Result

TASK_TITLES = {
    "text": "Text (causal language models)",
    "vision-language": "Vision-language (image-text-to-text)",
    "encoder": "Encoders (masked language models)",
    "encoder-decoder": "Encoder-decoders (seq2seq language models)",
    "speech": "Speech (speech-to-text)",
}

# Why a model_type of transformers' mappings is known but not counted, where there is more to say than "not yet".
NOT_COUNTED_REASONS: dict[str, str] = {
    "mllama": "its cross-attention layers attend to an image's tokens (as many as its tiles make, not the context), "
    "and its token table has 8 rows more than its head; ffncalc's spec expresses neither yet",
    "jetmoe": "it routes attention heads to experts (each expert its own q and o, with a router), which ffncalc's "
    "spec cannot express yet",
    "longt5": "its encoder's transient-global attention also attends to one summary token per global_block_size "
    "tokens, computed from the sequence, which ffncalc's spec cannot express yet",
    "ernie4_5_vl_moe": "each MoE layer holds two routed expert sets of different widths, one run by text tokens and "
    "one by image tokens; ffncalc's spec has one set a layer, so a text token's active parameters cannot be stated yet",
    "diffllama": "its differential attention runs two attention calls per layer that share q and k, each over one "
    "half of the value heads, and subtracts them: the scores are computed twice and each head mixes two value halves, "
    "which ffncalc's spec cannot express yet",
    "mistral_large4": "its language model lets layers reuse another layer's keys and values (kv_sharing_modes), drops "
    "rotary positions in some layers and adds an indexer with a learned softmax scaling; no adapter reads it yet",
}
NOT_YET = "not counted yet"


class NotCounted(Result):
    model_type: str
    reason: str


class TaskCoverage(Result):
    """One task: transformers' model_types for it, those ffncalc counts, and the rest with the reason."""

    task: str
    title: str
    mapping: str  # transformers' auto mapping the task's model_types come from
    transformers_model_types: int
    counted: list[str]
    not_counted: list[NotCounted]


class FamilyCoverage(Result):
    """`ffncalc models --families --json`: every family with its model_types, and the coverage of each task."""

    transformers: str  # the version and module the tasks' lists come from
    families: dict[str, list[str]]
    tasks: list[TaskCoverage]
    outside_tasks: list[str]  # model_types ffncalc counts that none of the mappings names (ffncalc's own presets …)


def task_coverage(families: dict[str, list[str]]) -> FamilyCoverage:
    """Each task's model_types split into counted (a family reads it) and not, from transformers_tasks.json."""
    listed = json.loads((Path(__file__).parent / "transformers_tasks.json").read_text(encoding="utf-8"))
    supported = {model_type for model_types in families.values() for model_type in model_types}
    tasks, named = [], set()
    for task, entry in listed["tasks"].items():
        model_types = entry["model_types"]
        named |= set(model_types)
        tasks.append(
            TaskCoverage(
                task=task,
                title=TASK_TITLES.get(task, task),
                mapping=entry["mapping"],
                transformers_model_types=len(model_types),
                counted=[model_type for model_type in model_types if model_type in supported],
                not_counted=[
                    NotCounted(model_type=model_type, reason=NOT_COUNTED_REASONS.get(model_type, NOT_YET))
                    for model_type in model_types
                    if model_type not in supported
                ],
            )
        )
    return FamilyCoverage(
        transformers=listed["source"].split(",")[0],
        families=families,
        tasks=tasks,
        outside_tasks=sorted(supported - named),
    )
