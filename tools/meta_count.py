"""Independent expected values: build each config with transformers on torch's meta device and count.

This is a side script, not a dependency of ffncalc or of its tests. It needs torch and
transformers (no weights are downloaded, no memory is allocated: the meta device only
records shapes):

    python -m venv /tmp/side && /tmp/side/bin/pip install torch==2.13.0 transformers==5.23.0
    /tmp/side/bin/python tools/meta_count.py ../shared/configs/*.json fixtures/configs/*.json \
        > tests/expected/transformers_counts.json

For every config it records the unique parameters (`model.parameters()` counts a tied weight
once), the persistent buffers that a checkpoint would also store, the parameters summed by
component (grouped by module name, see `component_of`), and for MoE models the elements of
the routed experts, so that the tests can derive the active count without ffncalc.
"""

from __future__ import annotations

import json
import re
import sys
import warnings
from pathlib import Path

import torch
import transformers
from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForPreTraining, AutoModelForSeq2SeqLM

# Encoders and encoder-decoders have no causal LM: build the class their checkpoints hold.
MODEL_CLASS = {"t5": AutoModelForSeq2SeqLM, "mt5": AutoModelForSeq2SeqLM, "bert": AutoModelForPreTraining}

# Custom-code model types whose config declares an architecture that transformers ships.
MODEL_TYPE_STAND_INS = {"kimi_k2": "deepseek_v3", "mimo": "qwen2"}  # mimo: Qwen2's layers (its MTP layers are not modules)
# Multimodal wrappers: count the language model only, as ffncalc does.
TEXT_MODEL_TYPES = {"gemma3": "gemma3_text", "mistral3": "mistral", "llama4": "llama4_text"}

ROUTED_EXPERTS = re.compile(r"\.mlp\.experts\.|\.block_sparse_moe\.experts\.|\.mlp\.experts$|\.experts\.(gate_up_proj|down_proj)")


def component_of(name: str) -> str:
    """Map a parameter name to an ffncalc component by the modules that hold it."""
    modules = name.split(".")[:-1]
    last = modules[-1] if modules else ""
    if "norm" in last.lower() or last in ("ln_1", "ln_2", "ln_f", "ln_attn", "ln_mlp"):
        return "norm"
    if re.search(r"^(lm_head|embed_out)\.|(^|\.)cls\.predictions\.", name):
        return "lm_head"
    if re.search(r"(embed_tokens|(^|\.)embeddings|\.wte|\.wpe|word_embeddings|embed_positions|embed_in|position_embeddings|token_type_embeddings|^shared)\.", name):
        return "embedding"
    if re.search(r"\.(EncDecAttention|crossattention|encoder_attn)\.", name):
        return "cross_attention"
    if re.search(r"\.mixer\.(up_proj|down_proj|experts|gate|shared_experts)", name):
        return "ffn"  # Nemotron-H names every block's module "mixer", MLPs included
    if re.search(r"\.mixer\.(q_proj|k_proj|v_proj|o_proj)", name):
        return "attention"
    if re.search(r"\.(mixer|linear_attn)\.", name):
        return "mixer"
    if re.search(r"\.(self_attn|attn|attention|self_attention|SelfAttention)\.", name):
        return "attention"
    if re.search(r"\.(mlp|block_sparse_moe|feed_forward|ffn|fc1|fc2|DenseReluDense|intermediate|output\.dense)\.", name):
        return "ffn"
    return "other"


def load_config(path: Path):
    raw = json.loads(path.read_text())
    model_type = raw.get("model_type")
    if model_type in TEXT_MODEL_TYPES and isinstance(raw.get("text_config"), dict):
        text = dict(raw["text_config"])
        model_type = text.pop("model_type", TEXT_MODEL_TYPES[model_type])
        raw = text
    model_type = MODEL_TYPE_STAND_INS.get(model_type, model_type)
    fields = {k: v for k, v in raw.items() if k not in ("model_type", "auto_map", "quantization_config")}
    return AutoConfig.for_model(model_type, **fields)


def count(path: Path) -> dict:
    config = load_config(path)
    with torch.device("meta"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = MODEL_CLASS.get(config.model_type, AutoModelForCausalLM).from_config(config)
    by_component: dict[str, int] = {}
    routed_expert_params = 0
    total = 0
    for name, parameter in model.named_parameters():  # tied parameters appear once
        n = parameter.numel()
        total += n
        component = component_of(name)
        by_component[component] = by_component.get(component, 0) + n
        if component == "ffn" and ROUTED_EXPERTS.search(name) and "shared" not in name:
            routed_expert_params += n
    parameter_names = {name for name, _ in model.named_parameters(remove_duplicate=False)}
    persistent_buffers = {
        name: buffer.numel()
        for name, buffer in model.named_buffers()
        if name in model.state_dict() and name not in parameter_names
    }
    return {
        "model_type": config.model_type,
        "total_params": total,
        "components": dict(sorted(by_component.items())),
        "routed_expert_params": routed_expert_params,
        "persistent_buffers": sum(persistent_buffers.values()),
    }


def main(paths: list[str]) -> None:
    results = {}
    for arg in paths:
        path = Path(arg)
        try:
            results[path.stem] = count(path)
        except Exception as error:  # noqa: BLE001 - record and go on: one family transformers lacks is no reason to stop
            results[path.stem] = {"error": f"{type(error).__name__}: {error}"[:300]}
        print(path.stem, results[path.stem].get("total_params", results[path.stem].get("error")), file=sys.stderr)
    document = {
        "generated_by": "tools/meta_count.py",
        "transformers_version": transformers.__version__,
        "torch_version": torch.__version__,
        "counts": dict(sorted(results.items())),
    }
    json.dump(document, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main(sys.argv[1:])
