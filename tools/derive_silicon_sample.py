"""Derive data/measurements/aiconfigurator_silicon_sample.csv from aiconfigurator's silicon_sample.csv.

    python tools/derive_silicon_sample.py PATH/TO/silicon_sample.csv

The source (github ai-dynamo/aiconfigurator, aic-core/src/aiconfigurator_core/systems/silicon_sample.csv,
Apache-2.0) holds measured TTFT and TPOT with the configuration each was measured at. This keeps the rows ffncalc can
describe exactly as one replica — aggregated serving, a model ffncalc bundles a config for, an accelerator in its
table, tensor parallelism within one 8-GPU node and no attention data parallelism — and the columns the fit reads,
values unchanged; data/measurements/README.md says what was dropped and why. Standard library only.
"""

from __future__ import annotations

import csv
import sys
from collections import Counter
from pathlib import Path

OUTPUT = Path(__file__).resolve().parent.parent / "data" / "measurements" / "aiconfigurator_silicon_sample.csv"

# The checkpoint each row names → the bundled config with its architecture. An instruction-tuned or re-quantized
# checkpoint of the same architecture reads the base config: the row's gemm/moe quant modes say how it was stored.
CONFIG_OF_CHECKPOINT = {
    "deepseek-ai/DeepSeek-R1": "deepseek-ai/DeepSeek-R1",
    "nvidia/DeepSeek-R1-NVFP4": "deepseek-ai/DeepSeek-R1",
    "deepseek-ai/DeepSeek-V3": "deepseek-ai/DeepSeek-V3",
    "meta-llama/Llama-3.1-70B": "meta-llama/Llama-3.1-70B",
    "meta-llama/Llama-3.1-8B-Instruct": "meta-llama/Llama-3.1-8B",
    "nvidia/Llama-3.1-8B-Instruct-FP8": "meta-llama/Llama-3.1-8B",
    "Qwen/Qwen3-32B": "Qwen/Qwen3-32B",
    "nvidia/Qwen3-32B-NVFP4": "Qwen/Qwen3-32B",
    "Qwen/Qwen3-235B-A22B-FP8": "Qwen/Qwen3-235B-A22B",
    "Qwen/Qwen3.5-397B-A17B": "Qwen/Qwen3.5-397B-A17B",
    "openai/gpt-oss-120b": "openai/gpt-oss-120b",
}
# aiconfigurator's system names → ffncalc's accelerator names (GB300 has no entry in ffncalc's table).
ACCELERATOR_OF_SYSTEM = {
    "h100_sxm": "h100",
    "h200_sxm": "h200",
    "b200_sxm": "b200",
    "gb200": "gb200",
    "b300_sxm": "b300",
}
MAX_TENSOR_PARALLEL = 8  # one NVLink node: wider replicas in the source are multi-node wide-EP layouts

COLUMNS = (
    "id",
    "backend",
    "backend_version",
    "model_path",
    "system",
    "precision",
    "gemm_quant_mode",
    "moe_quant_mode",
    "isl",
    "osl",
    "batch_size",
    "tp_size",
    "attention_dp_size",
    "moe_tp_size",
    "moe_ep_size",
    "silicon_ttft_ms",
    "silicon_tpot_ms",
    "silicon_data_source",
)


def reason_to_drop(row: dict[str, str]) -> str | None:
    """Why ROW cannot be described as one replica ffncalc counts, or None to keep it."""
    if row["mode"] != "agg":
        return "disaggregated serving (prefill and decode on separate workers)"
    if row["model_path"] not in CONFIG_OF_CHECKPOINT:
        return f"no bundled config: {row['model_path']}"
    if row["system"] not in ACCELERATOR_OF_SYSTEM:
        return f"accelerator not in ffncalc's table: {row['system']}"
    if row["attention_dp_size"] not in ("", "1") or row["moe_ep_size"] == "0":
        return "attention data parallelism (or an unrecorded expert layout)"
    if int(row["tp_size"]) > MAX_TENSOR_PARALLEL:
        return "more than 8 GPUs in one replica (multi-node)"
    return None


def main(source: str) -> None:
    with open(source, newline="") as handle:
        rows = list(csv.DictReader(handle))
    dropped: Counter[str] = Counter()
    kept = []
    for row in rows:
        reason = reason_to_drop(row)
        if reason is None:
            kept.append({column: row[column] for column in COLUMNS})
        else:
            dropped[reason] += 1
    OUTPUT.parent.mkdir(parents=True, exist_ok=True)
    with OUTPUT.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(kept)
    print(f"{len(rows)} rows read, {len(kept)} kept in {OUTPUT.name}")
    for reason, count in dropped.most_common():
        print(f"  dropped {count:5d}: {reason}")


if __name__ == "__main__":
    main(sys.argv[1])
