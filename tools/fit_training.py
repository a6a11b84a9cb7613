"""Fit layouts.COMPUTE_EFFICIENCY (the share of the dense peak a layout's matmuls reach, one coefficient for bf16 and
one for fp8) on the rows of data/measurements/training_layouts.csv marked `fit`, and report the error on the rows
marked `held_out`. Run: .venv/bin/python tools/fit_training.py

Each row's layout is evaluated as `ffncalc train` would (layouts.evaluate: the busiest stage's compute at the
efficiency, the bubble, exposed communication); sequence parallelism on whenever tp ≥ 2, as Megatron-Bridge's recipes
set it. Tokens/s rows compare expected tokens/s per GPU; MFU rows (Llama 3) compare expected MFU. The coefficient
minimises the median |log(expected ÷ measured)| of its dtype's fit rows (a grid of 0.005).
"""

from __future__ import annotations

import csv
import math
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ffncalc.accelerators import accelerator  # noqa: E402
from ffncalc.api import loaded_model as _load  # noqa: E402
from ffncalc.compute import count_flops  # noqa: E402
from ffncalc.layouts import COMPUTE_EFFICIENCY, ROUTED_EXPERT_RATIO, ParallelLayout, evaluate  # noqa: E402

DATA = ROOT / "data" / "measurements" / "training_layouts.csv"
DTYPE = {"bf16": "bf16", "fp8": "fp8", "mxfp8": "fp8"}


def rows() -> list[dict[str, str]]:
    with DATA.open() as handle:
        return list(csv.DictReader(line for line in handle if not line.startswith("#")))


_MODELS: dict[str, object] = {}


def predict(row: dict[str, str], efficiency: float | None, passes: float | None = None) -> float:
    """Expected tokens/s per GPU, or expected MFU for an MFU row, at EFFICIENCY (None: the fitted one)."""
    loaded = _MODELS.get(row["model"]) or _MODELS.setdefault(row["model"], _load(row["model"]))
    seq = int(row["seq"])
    n = {k: int(row[k]) for k in ("gpus", "tp", "pp", "cp", "vpp", "ep", "micro_batch", "global_batch", "zero")}
    layout = ParallelLayout(
        tp=n["tp"], pp=n["pp"], cp=n["cp"], ep=n["ep"], dp=n["gpus"] // (n["tp"] * n["pp"] * n["cp"]), vpp=n["vpp"],
        micro_batch=n["micro_batch"], global_batch=n["global_batch"], sequence_parallel=n["tp"] > 1,
        zero_stage=n["zero"],
    ).checked(loaded.spec, seq)  # type: ignore[attr-defined]  # fmt: skip
    flops = count_flops(loaded.spec, seq, loaded.info)  # type: ignore[attr-defined]
    forward = flops.prefill
    report = evaluate(
        loaded.spec, layout, seq, accelerator(row["system"]), DTYPE[row["precision"]],  # type: ignore[attr-defined]
        flops.training, flops.training, 3 * forward.lm_head, 3 * forward.attention_scores, efficiency, passes,
    )  # fmt: skip
    if row["measured_kind"] == "mfu":
        return report.expected_mfu
    return report.expected_tokens_per_second_per_gpu


def error(row: dict[str, str], efficiency: float | None, passes: float | None = None) -> float:
    return predict(row, efficiency, passes) / float(row["measured"]) - 1


def loss(rows_: list[dict[str, str]], efficiency: dict[str, float], passes: float) -> float:
    return statistics.median(abs(math.log1p(error(row, efficiency[DTYPE[row["precision"]]], passes))) for row in rows_)


def fit(data: list[dict[str, str]]) -> tuple[dict[str, float], float]:
    """Each dtype's efficiency on its dense fit rows (the ratio plays no part there; grid 0.005), then the routed
    experts' ratio on the MoE fit rows of both dtypes (grid 0.01)."""
    train = [row for row in data if row["split"] == "fit"]
    efficiency, ratio = dict(COMPUTE_EFFICIENCY), ROUTED_EXPERT_RATIO
    grid = [round(0.2 + 0.005 * i, 3) for i in range(141)]
    for dtype in ("bf16", "fp8"):
        mine = [row for row in train if DTYPE[row["precision"]] == dtype and not moe(row)]
        efficiency[dtype] = min(grid, key=lambda e: loss(mine, efficiency | {dtype: e}, ratio))
    experts = [row for row in train if moe(row)]
    ratio = min((round(0.2 + 0.01 * i, 2) for i in range(81)), key=lambda r: loss(experts, efficiency, r))
    return efficiency, ratio


def moe(row: dict[str, str]) -> bool:
    from ffncalc.spec import MoeFfn

    loaded = _MODELS.get(row["model"]) or _MODELS.setdefault(row["model"], _load(row["model"]))
    return any(isinstance(layer.ffn, MoeFfn) for layer in loaded.spec.layers)  # type: ignore[attr-defined]


def main() -> None:
    data = rows()
    fitted, passes = fit(data)
    print(
        f"fitted: {fitted}, routed-expert ratio {passes}  (in ffncalc/layouts.py: {COMPUTE_EFFICIENCY}, {ROUTED_EXPERT_RATIO})"
    )
    for split in ("fit", "held_out"):
        errors = []
        print(f"\n{split}:")
        for row in (r for r in data if r["split"] == split):
            e = error(row, fitted[DTYPE[row["precision"]]], passes)
            errors.append(abs(e))
            expected = predict(row, fitted[DTYPE[row["precision"]]], passes)
            print(
                f"  {row['source'][:5]} {row['release']:8} {row['system']:5} {row['model'][-22:]:22} {row['precision']:5} "
                f"tp{row['tp']} pp{row['pp']} cp{row['cp']} vpp{row['vpp']} ep{row['ep']} mb{row['micro_batch']}: "
                f"measured {float(row['measured']):g}, expected {expected:.4g} ({e:+.1%})"
            )
        print(f"  median |error| {statistics.median(errors):.1%}, largest {max(errors):.1%}, rows {len(errors)}")


if __name__ == "__main__":
    main()
