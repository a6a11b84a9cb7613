"""Each command's headline figures: what a sweep row and `brief` show, declared once per command.

A headline function takes the command's report and returns its figures by JSON name; the HEADLINES tuples say
how each is headed and in what unit.
"""

from __future__ import annotations

from typing import Any

from .values import Value

Figure = bool | int | float | str | None


class Headline(Value):
    """One figure a sweep reports: its JSON name, its heading, and its unit ("" for a count or a ratio)."""

    name: str
    heading: str
    unit: str = ""


def params_headline(report: Any) -> dict[str, Figure]:
    """params: total, active per token (MoE; the total otherwise), FFN parameters and their share."""
    total = report.total_params
    return {
        "total_params": total,
        "active_params": report.active_params if report.active_params is not None else total,
        "ffn_params": report.components.ffn,
        "ffn_share": report.components.ffn / total if total else None,
    }


PARAMS_HEADLINES = (
    Headline("total_params", "Total"),
    Headline("active_params", "Active"),
    Headline("ffn_params", "FFN"),
    Headline("ffn_share", "FFN share"),
)


def flops_headline(report: Any) -> dict[str, Figure]:
    """flops: FLOPs per generated token at the context, the FFN's share of them, and the prefill of that context."""
    per_token = report.per_token
    return {
        "flops_per_token": per_token.total,
        "ffn_share": per_token.ffn / per_token.total if per_token.total else None,
        "prefill_flops": report.prefill.total,
    }


FLOPS_HEADLINES = (
    Headline("flops_per_token", "FLOPs/token", "FLOPs"),
    Headline("ffn_share", "FFN share"),
    Headline("prefill_flops", "Prefill", "FLOPs"),
)


def crossover_headline(report: Any, kv_bytes_per_token: int) -> dict[str, Figure]:
    """crossover: the first whole context where attention's cost reaches the FFN's (n*), and KV bytes per token."""
    return {"crossover_context": report.crossover_context_ceil, "kv_bytes_per_token": kv_bytes_per_token}


CROSSOVER_HEADLINES = (
    Headline("crossover_context", "n*", "tokens"),
    Headline("kv_bytes_per_token", "KV/token", "bytes"),
)


def memory_headline(report: Any) -> dict[str, Figure]:
    """memory: weights, KV cache at the context and batch, the inference total, per GPU; with `train` the training
    figure per GPU; what the question needs per GPU and whether the accelerator asked about holds it (the full
    output's answer); with `engine`, its KV capacity and maximum concurrency, and with `disaggregate` the
    requests the decode pool holds (None without them)."""
    asked = next((row for row in report.accelerators if row.name == report.asked), None)
    cache = getattr(report, "llamacpp", None)
    if cache is not None:  # a GGUF: llama.cpp's cache, and whether the layers asked (or solved) fit the GPU asked
        return {
            "weights_bytes": report.weights.bytes,
            "kv_cache_bytes": cache.kv_cache,
            "total_inference_bytes": report.total_inference,
            "per_gpu_inference_bytes": report.per_gpu_inference,
            "training_per_gpu_bytes": None,
            "fits": cache.fits,
            "kv_capacity_tokens": None,
            "max_concurrency": None,
            "decode_pool_requests": None,
            "gpu_layers": cache.gpu_layers,
        }
    split = report.engine.disaggregation if report.engine is not None else None
    return {
        "weights_bytes": report.weights.bytes,
        "kv_cache_bytes": report.kv_cache.bytes,
        "total_inference_bytes": report.total_inference,
        "per_gpu_inference_bytes": report.per_gpu_inference,
        "training_per_gpu_bytes": report.training.per_gpu if report.training is not None else None,
        "fits": asked.fits_on_one if asked is not None else None,
        "kv_capacity_tokens": report.engine.kv_capacity_tokens if report.engine is not None else None,
        "max_concurrency": report.engine.max_concurrency if report.engine is not None else None,
        "decode_pool_requests": split.decode_requests if split is not None else None,
        "gpu_layers": None,
    }


MEMORY_HEADLINES = (
    Headline("weights_bytes", "Weights", "bytes"),
    Headline("kv_cache_bytes", "KV cache", "bytes"),
    Headline("total_inference_bytes", "Total", "bytes"),
    Headline("per_gpu_inference_bytes", "Per GPU", "bytes"),
    Headline("training_per_gpu_bytes", "Training per GPU", "bytes"),
    Headline("fits", "Fits the GPU asked"),
    Headline("kv_capacity_tokens", "KV tokens (engine)", "tokens"),
    Headline("max_concurrency", "Concurrency (engine)"),
    Headline("decode_pool_requests", "Decode pool holds (requests)"),
    Headline("gpu_layers", "GPU layers (-ngl, llama.cpp)"),
)


def speed_headline(report: Any) -> dict[str, Figure]:
    """speed: decode time per token (TPOT) and tokens/s of the batch, time to first token; roofline ceilings, and
    the expected TPOT and TTFT of the fitted engine profile."""
    return {
        "seconds_per_step": report.decode.seconds_per_step,
        "tokens_per_second": report.decode.tokens_per_second,
        "ttft_seconds": report.prefill.seconds,
        "expected_seconds_per_step": report.decode.expected_seconds_per_step,
        "expected_ttft_seconds": report.prefill.expected_seconds,
        "memory_needed_bytes": report.memory_needed,
        "fits": report.fits,
    }


SPEED_HEADLINES = (
    Headline("tokens_per_second", "Tokens/s (ceiling)"),
    Headline("seconds_per_step", "TPOT (s, ceiling)"),
    Headline("ttft_seconds", "TTFT (s, ceiling)"),
    Headline("expected_seconds_per_step", "≈ TPOT (s, expected)"),
    Headline("expected_ttft_seconds", "≈ TTFT (s, expected)"),
    Headline("memory_needed_bytes", "Memory", "bytes"),
    Headline("fits", "Fits"),
)


def train_headline(report: Any) -> dict[str, Figure]:
    """train: total model FLOPs, FLOPs per token, GPU-hours, days and cost (at the report's MFU, assumed or measured),
    and the training memory of the busiest GPU (the layout's, as memory with `train` counts it)."""
    return {
        "total_flops": report.total_flops,
        "flops_per_token": report.flops_per_token,
        "mfu": report.mfu,
        "mfu_is": "assumed" if report.mfu_assumed else "measured",
        "gpu_hours": report.gpu_hours,
        "days": report.days,
        "cost": report.cost,
        "per_gpu_bytes": report.memory.per_gpu,
    }


TRAIN_HEADLINES = (
    Headline("total_flops", "Total FLOPs", "FLOPs"),
    Headline("flops_per_token", "FLOPs/token", "FLOPs"),
    Headline("mfu", "MFU"),
    Headline("mfu_is", "MFU is"),
    Headline("gpu_hours", "GPU-hours (at that MFU)"),
    Headline("days", "Days (at that MFU)"),
    Headline("cost", "Cost (at that MFU)"),
    Headline("per_gpu_bytes", "Memory, busiest GPU", "bytes"),
)


def verify_headline(report: Any) -> dict[str, Figure]:
    """verify: the verdict, the tensors stored and how many are problems, the parameters found against ffncalc's."""
    problems = sum(report.counts.get(kind, 0) for kind in ("missing", "unexpected", "wrong shape"))
    return {
        "verdict": "OK" if report.ok else "NOT OK",
        "stored_tensors": sum(report.counts.values()),
        "problem_tensors": problems + len(report.missing_files) + len(report.index_problems),
        "checkpoint_params": report.checkpoint_params,
        "ffncalc_params": report.ffncalc_params,
    }


VERIFY_HEADLINES = (
    Headline("verdict", "Verdict"),
    Headline("stored_tensors", "Stored tensors"),
    Headline("problem_tensors", "Problems"),
    Headline("checkpoint_params", "Parameters stored"),
    Headline("ffncalc_params", "ffncalc's count"),
)


def derive_dim_headline(report: Any) -> dict[str, Figure]:
    """derive-dim: the width the rule gives, and how many searched settings reach the target."""
    return {
        "intermediate_size": report.derivation.intermediate_size if report.derivation is not None else None,
        "target": report.solve.target if report.solve is not None else None,
        "settings_found": len(report.solve.settings) if report.solve is not None else None,
    }


DERIVE_DIM_HEADLINES = (
    Headline("intermediate_size", "intermediate_size"),
    Headline("target", "Target"),
    Headline("settings_found", "Settings that give it"),
)
