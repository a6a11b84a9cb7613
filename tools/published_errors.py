"""The expected figures against published measurements from sources other than aiconfigurator.

    python tools/published_errors.py          # every row: measured, ceiling, expected, error; then the summary

Data: data/measurements/published_serving.csv (see its README): batch-1 decode and lone-prompt prefill from gpt-fast,
TensorRT-LLM's own tables and llama.cpp's scoreboards, on A100, H100, L40S, consumer cards and Macs. No row of it is
used by tools/fit_expected.py: this is the out-of-source error, measured after the fit. Each row is predicted as
`ffncalc speed` answers it with no --engine (the typical profile): a decode rate by the expected decode step at the
row's mean cache, a prefill by the expected prefill of its prompt, a static batch's output rate by the expected request
(--output) at that batch. Errors are on times (a rate's reciprocal): |expected − measured| ÷ measured.
"""

from __future__ import annotations

import csv
import statistics
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data" / "measurements" / "published_serving.csv"
WITHIN = 0.35


def rows() -> list[dict[str, str]]:
    with DATA.open(newline="") as handle:
        return list(csv.DictReader(handle))


def measured_seconds(row: dict[str, str]) -> float:
    """The row's measurement as a time: seconds per decode step, per prefill, or per output token of the batch."""
    value = float(row["value"])
    figure = row["figure"]
    if figure == "decode_tokens_per_second":
        return int(row["batch"]) / value
    if figure == "prefill_tokens_per_second":
        return int(row["prompt_tokens"]) / value
    if figure == "ttft_ms":
        return value / 1000
    if figure == "output_tokens_per_second":
        gpus = int(row["tensor_parallel"]) if row["unit"] == "tokens/s per GPU" else 1
        return 1 / (value * gpus)
    raise ValueError(f"unknown figure {figure!r}")


def predicted(row: dict[str, str], engine: str | None = None) -> tuple[float, float]:
    """(ceiling, expected) seconds for the row, as measured_seconds states its measurement."""
    from ffncalc.api import speed

    figure = row["figure"]
    options = dict(
        batches=row["batch"],
        tensor_parallel=int(row["tensor_parallel"]),
        dtype=row["dtype"] if row["dtype"] != "bf16" else None,
        kv_dtype=row["kv_dtype"] or None,
        engine=engine,
    )
    if figure == "output_tokens_per_second":
        report = speed(
            row["model"], row["accelerator"], context=int(row["prompt_tokens"]), prompt=int(row["prompt_tokens"]),
            output=int(row["output_tokens"]), **options,
        ).reports[0]  # fmt: skip
        return 1 / report.request.tokens_per_second, 1 / report.request.expected_tokens_per_second
    context = int(row["context_tokens"])
    prompt = max(int(row["prompt_tokens"]), 1)
    report = speed(row["model"], row["accelerator"], context=context, prompt=prompt, **options).reports[0]
    if figure == "decode_tokens_per_second":
        return report.decode.seconds_per_step, report.decode.expected_seconds_per_step
    return report.prefill.seconds, report.prefill.expected_seconds


def evaluate(
    selected: list[dict[str, str]] | None = None, engine: str | None = None
) -> list[tuple[dict, float, float, float]]:
    """(row, measured, ceiling, expected) for every row."""
    out = []
    for row in selected if selected is not None else rows():
        out.append((row, measured_seconds(row), *predicted(row, engine)))
    return out


def is_decode(row: dict[str, str]) -> bool:
    return row["figure"] in ("decode_tokens_per_second", "output_tokens_per_second")


def summary(results: list[tuple[dict, float, float, float]]) -> dict[str, float]:
    """Median |error| and the share within ±35 %, over all rows, decode rows and prefill rows."""
    out: dict[str, float] = {}
    for name, keep in (("all", lambda r: True), ("decode", is_decode), ("prefill", lambda r: not is_decode(r))):
        errors = [abs(expected - measured) / measured for row, measured, _, expected in results if keep(row)]
        out[f"{name}_rows"] = len(errors)
        out[f"{name}_median_error"] = statistics.median(errors)
        out[f"{name}_within_35"] = sum(error <= WITHIN for error in errors) / len(errors)
    out["beats_ceiling"] = sum(measured < ceiling * (1 - 1e-9) for _, measured, ceiling, _ in results)
    return out


def is_validation(row: dict[str, str]) -> bool:
    """The half of the rows used to choose between model forms (id number ≡ 1 or 2 mod 4: both figures of every
    source); the other half was looked at only after the choice."""
    return int(row["id"][1:]) % 4 in (1, 2)


def stated() -> dict:
    """What expected_profiles.json states: the summary over every row, the validation half and the other half."""
    results = evaluate()
    return {
        "file": str(DATA.relative_to(ROOT)),
        "rows": len(results),
        "profile": "typical (no --engine)",
        "all": summary(results),
        "validation_half": summary([r for r in results if is_validation(r[0])]),
        "other_half": summary([r for r in results if not is_validation(r[0])]),
    }


def main() -> None:
    results = evaluate()
    print(
        f"{'id':5} {'model':26} {'chip':10} tp {'dtype':5} {'figure':26} {'measured':>9} {'ceiling':>9} {'expected':>9} error"
    )
    for row, measured, ceiling, expected in results:
        print(
            f"{row['id']:5} {row['model'][-26:]:26} {row['accelerator'][:10]:10} {row['tensor_parallel']:>2} "
            f"{row['dtype']:5} {row['figure'][:26]:26} {measured * 1e3:9.3f} {ceiling * 1e3:9.3f} {expected * 1e3:9.3f} "
            f"{(expected - measured) / measured:+.0%}"
        )
    for key, value in summary(results).items():
        print(f"{key:24} {value:.3f}" if isinstance(value, float) else f"{key:24} {value}")


if __name__ == "__main__":
    main()
