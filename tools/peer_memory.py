"""What accelerate's `estimate-memory` reports for a config, for the README's side-by-side with `ffncalc memory`.

A side script (transformers, torch and accelerate in a side venv; no weights, no network):

    /tmp/side/bin/pip install accelerate
    /tmp/side/bin/python tools/peer_memory.py fixtures/configs/google-t5__t5-small.json …

`accelerate estimate-memory` needs a Hub id; this runs what it runs once it has the config: the model
built under init_empty_weights, then calculate_maximum_sizes (bytes in float32; its float16 column is
half, its training column 4 ×, "Adam").
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import torch
from accelerate import init_empty_weights
from accelerate.utils import calculate_maximum_sizes

sys.path.insert(0, str(Path(__file__).parent))
from meta_count import load_config, model_class


def main() -> None:
    warnings.filterwarnings("ignore")
    for path in sys.argv[1:]:
        raw = json.loads(Path(path).read_text())
        config = load_config(raw)
        with init_empty_weights():  # in float32, as estimate-memory builds it
            model = model_class(config, raw)._from_config(config, dtype=torch.float32)
        total, largest = calculate_maximum_sizes(model)
        print(
            json.dumps(
                {
                    "config": Path(path).name,
                    "float32_bytes": total,
                    "float16_bytes": total // 2,
                    "largest_layer_bytes": largest[0],
                }
            )
        )


if __name__ == "__main__":
    main()
