"""Write ffncalc/transformers_tasks.json: the model_types of transformers' auto mappings, one list per task.

A side script, run in a side venv with transformers (as tools/meta_count.py):

    /tmp/side/bin/python tools/transformers_tasks.py

`ffncalc models --families` reads the file to say how many of transformers' model_types each task covers and which
are known but not counted.
"""

from __future__ import annotations

import json
from pathlib import Path

import transformers
from transformers.models.auto import modeling_auto

TASKS = {
    "text": "MODEL_FOR_CAUSAL_LM_MAPPING_NAMES",
    "vision-language": "MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES",
    "encoder": "MODEL_FOR_MASKED_LM_MAPPING_NAMES",
    "encoder-decoder": "MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES",
    "speech": "MODEL_FOR_SPEECH_SEQ_2_SEQ_MAPPING_NAMES",
}

written = {
    "source": f"transformers {transformers.__version__}, transformers.models.auto.modeling_auto: the model_types of "
    "each mapping named below (written by tools/transformers_tasks.py in a side venv)",
    "tasks": {
        task: {"mapping": name, "model_types": sorted(getattr(modeling_auto, name))} for task, name in TASKS.items()
    },
}
path = Path(__file__).resolve().parent.parent / "ffncalc" / "transformers_tasks.json"
path.write_text(json.dumps(written, indent=1), encoding="utf-8")
print(f"wrote {path}")
