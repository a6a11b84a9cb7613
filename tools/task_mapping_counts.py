"""Write tests/expected/task_mappings.json: for each task's mapping, what its Auto class builds from each
model_type's default config (AutoConfig.for_model), on torch's meta device: the class and its parameter count.

A side script, run in a side venv with torch and transformers (as tools/meta_count.py):

    /work/tfvenv/bin/python tools/task_mapping_counts.py

tests/expected/transformers/ holds one class per default config (its architectures, else the first mapping that
has the model_type); this file holds the class of every task, so `params` of a config that names the masked-LM,
seq2seq, speech or image-text class is held to transformers too. A build that fails, or takes over 60 s, is
recorded as the exception's type.
"""

from __future__ import annotations

import json
import signal
import warnings
from pathlib import Path

import torch
import transformers
from transformers import (
    AutoConfig,
    AutoModelForCausalLM,
    AutoModelForImageTextToText,
    AutoModelForMaskedLM,
    AutoModelForSeq2SeqLM,
    AutoModelForSpeechSeq2Seq,
)

ROOT = Path(__file__).resolve().parent.parent
AUTO_CLASSES = {
    "text": AutoModelForCausalLM,
    "vision-language": AutoModelForImageTextToText,
    "encoder": AutoModelForMaskedLM,
    "encoder-decoder": AutoModelForSeq2SeqLM,
    "speech": AutoModelForSpeechSeq2Seq,
}


class TookTooLong(Exception):
    pass


def stop(*_: object) -> None:
    raise TookTooLong


def main() -> None:
    warnings.simplefilter("ignore")
    signal.signal(signal.SIGALRM, stop)
    tasks = json.loads((ROOT / "ffncalc" / "transformers_tasks.json").read_text())["tasks"]
    built: dict[str, dict[str, object]] = {}
    for task, auto in AUTO_CLASSES.items():
        built[task] = {}
        for model_type in tasks[task]["model_types"]:
            signal.alarm(60)
            try:
                config = AutoConfig.for_model(model_type)
                with torch.device("meta"):
                    model = auto.from_config(config)
                built[task][model_type] = {
                    "class": type(model).__name__,
                    "total_params": sum(parameter.numel() for parameter in model.parameters()),
                }
            except BaseException as error:  # a model transformers cannot build from its defaults
                built[task][model_type] = {"error": type(error).__name__}
            finally:
                signal.alarm(0)
    document = {
        "source": f"transformers {transformers.__version__}, torch {torch.__version__}: each task's Auto class "
        "(from_config of AutoConfig.for_model) on the meta device, written by tools/task_mapping_counts.py",
        "tasks": built,
    }
    path = ROOT / "tests" / "expected" / "task_mappings.json"
    path.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
