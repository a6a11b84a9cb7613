"""Independent FLOP counts: torch's FlopCounterMode on a forward pass of the real model on the meta device.

A side script like tools/meta_count.py (needs torch and transformers; no weights):

    /tmp/side/bin/python tools/flop_count.py 512 fixtures/configs/meta-llama__Llama-3.1-8B.json ... \
        > tests/expected/flop_counter.json

For each config it builds the causal LM (a masked LM for a model_type with none: EuroBERT) with eager attention
on the meta device, runs one
forward of N tokens (batch 1) under FlopCounterMode and records the FLOPs of every matmul,
grouped by the module that ran it (self_attn, mlp, lm_head). Eager attention computes the full
N × N score matrix (masked entries included) and no windowing, so the total is
N × ffncalc's per-token FLOPs at context N with non-causal scores, for N within every window.
Dense models only: MoE routing needs real values, which the meta device does not have.
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import torch
import transformers
from torch.utils.flop_counter import FlopCounterMode
from transformers.models.auto.modeling_auto import MODEL_FOR_CAUSAL_LM_MAPPING_NAMES

sys.path.insert(0, str(Path(__file__).parent))
from meta_count import load_config


def count(path: Path, tokens: int) -> dict:
    config = load_config(json.loads(path.read_text()))
    config._attn_implementation = "eager"
    with torch.device("meta"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        causal = config.model_type in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES
        auto = transformers.AutoModelForCausalLM if causal else transformers.AutoModelForMaskedLM
        model = auto.from_config(config, attn_implementation="eager")
    model.eval()
    input_ids = torch.zeros((1, tokens), dtype=torch.long, device="meta")
    # A causal LM gets an explicit all-ones mask: without one, transformers inspects position ids for packed
    # sequences, which needs values the meta device does not have. A masked LM gets none: transformers would read an
    # all-ones mask's values to skip it; without one it attends to every key, as the mask says.
    attention_mask = torch.ones((1, tokens), dtype=torch.long, device="meta") if causal else None
    counter = FlopCounterMode(display=False, depth=None)
    with counter, torch.no_grad():
        model(input_ids=input_ids, attention_mask=attention_mask, **({"use_cache": False} if causal else {}))
    per_module = counter.get_flop_counts()
    groups = {"attention": 0, "mlp": 0, "lm_head": 0}
    for name, by_op in per_module.items():
        parts = name.split(".")
        if len(parts) < 2 or name.count(".") > 4:
            continue
        flops = sum(by_op.values())
        if parts[-1] in ("self_attn", "attn") and parts[-2].isdigit():
            groups["attention"] += flops
        elif parts[-1] == "mlp" and parts[-2].isdigit():
            groups["mlp"] += flops
        elif parts[-1] == "lm_head":
            groups["lm_head"] += flops
    return {"tokens": tokens, "total": counter.get_total_flops(), **groups}


def main(tokens: int, paths: list[str]) -> None:
    results = {}
    for arg in paths:
        path = Path(arg)
        try:
            results[path.stem] = count(path, tokens)
        except Exception as error:
            results[path.stem] = {"error": f"{type(error).__name__}: {error}"[:300]}
        print(path.stem, results[path.stem], file=sys.stderr)
    json.dump(
        {
            "generated_by": "tools/flop_count.py",
            "transformers_version": transformers.__version__,
            "torch_version": torch.__version__,
            "counts": results,
        },
        sys.stdout,
        indent=1,
    )
    print()


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2:])
