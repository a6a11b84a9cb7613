"""Which tensor-parallel sizes a model can be split over: one rule for serving and one for training, each the rule
of the framework whose arithmetic ffncalc follows, used by every command that takes a tensor-parallel size.

- Serving (`speed`, `memory`'s inference and engine figures) follows vLLM: the attention heads must divide by the
  size (``ModelConfig.verify_with_parallel_config``: "Total number of attention heads must be divisible by tensor
  parallel size"), and the KV heads either divide by it or divide it, the KV heads then being replicated
  (``QKVParallelLinear`` in vllm/model_executor/layers/linear.py: ``tp_size % total_num_kv_heads == 0`` when
  ``tp_size >= total_num_kv_heads``, else ``total_num_kv_heads % tp_size == 0``), vLLM v0.11.0.
- Training (`train`, memory with `train`) follows Megatron-LM: ``num_attention_heads % tensor_model_parallel_size``
  and ``num_query_groups % tensor_model_parallel_size`` must both be 0 (megatron/training/arguments.py, core_r0.14.0).

A model without attention layers (a pure state-space model) has no such rule here.
"""

from __future__ import annotations

from typing import Literal

from .errors import UsageError
from .spec import ModelSpec
from .structure import generating_layers

Rule = Literal["serving", "training"]


def _splits(heads: int, kv_heads: int, size: int, rule: Rule) -> bool:
    if heads % size:
        return False
    if rule == "training":
        return kv_heads % size == 0
    return (size % kv_heads == 0) if size >= kv_heads else (kv_heads % size == 0)


def head_counts(spec: ModelSpec) -> set[tuple[int, int]]:
    """The (attention heads, KV heads) pairs of the layers a token runs."""
    return {
        (layer.attention.num_heads, layer.attention.num_kv_heads)
        for layer in generating_layers(spec)
        if layer.attention is not None
    }


def valid_sizes(spec: ModelSpec, rule: Rule) -> list[int]:
    """Every tensor-parallel size the model splits over under RULE (each a divisor of the fewest heads)."""
    pairs = head_counts(spec)
    if not pairs:
        return []
    fewest = min(heads for heads, _ in pairs)
    return [size for size in range(1, fewest + 1) if all(_splits(h, kv, size, rule) for h, kv in pairs)]


def check_tensor_parallel(spec: ModelSpec, size: int, rule: Rule) -> None:
    """Refuse a tensor-parallel SIZE the model's heads do not split over, naming the sizes that do."""
    if size == 1:
        return
    pairs = head_counts(spec)
    if not pairs or all(_splits(heads, kv, size, rule) for heads, kv in pairs):
        return
    heads, kv_heads = min(pairs)
    who = "vLLM" if rule == "serving" else "Megatron-LM"
    need = (
        "the attention heads must divide by it, and the KV heads divide by it or divide it"
        if rule == "serving"
        else "the attention heads and the KV heads must both divide by it"
    )
    sizes = ", ".join(str(s) for s in valid_sizes(spec, rule))
    raise UsageError(
        f"a tensor-parallel size of {size} does not split {heads} attention heads and {kv_heads} KV heads ({who} "
        f"refuses it: {need}); use one of {sizes}"
    )
