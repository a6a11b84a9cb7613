"""Checking a checkpoint against the model, tensor by tensor, from headers only.

The expected tensors come from the same description as the parameter count (``storage``: the
spec's tensors under their stored names, in the checkpoint's dtype or quantized as the config
says) and the checkpoint extras the family declares (buffers, multi-token-prediction layers, a
tied head stored again …). Each stored tensor is then a parameter (name and shape match), a
quantization tensor of one, an extra explained by its reason, a tensor of the wrong shape, or an
unexpected one; each expected parameter that is not stored is missing. Names are matched as
transformers loads them: a checkpoint saved from the base model lacks its ``base_model_prefix``.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Literal

from .accounting import ParamsReport
from .checkpoint import Checkpoint, HeaderTensor
from .results import ModelInfo, Result
from .spec import CheckpointExtra, ModelSpec
from .storage import Scheme, layout, parameter_layout
from .tensors import embedding_width, stored_layer
from .units import DTYPE_BYTES
from .values import field_names

Verdict = Literal["parameter", "quantization", "extra", "wrong shape", "unexpected", "missing", "not saved"]


class TensorVerdict(Result):
    """One tensor: what the checkpoint stores (or should), and what it is."""

    name: str
    verdict: Verdict
    dtype: str | None
    shape: list[int] | None
    expected_shape: list[int] | None = None
    reason: str | None = None


class ExtraGroup(Result):
    """Stored tensors of one kind that are not parameters of the model, and why."""

    kind: str
    tensors: int
    elements: int
    reason: str


class VerifyReport(ModelInfo):
    """verify's JSON document: the checkpoint against the count, every tensor matched by name."""

    checkpoint: str
    files: list[str]
    missing_files: list[str]
    index_problems: list[str]  # where the index disagrees with itself or with its shards
    ignored: list[str]  # files and folders of other formats beside the checkpoint, not read
    index_only: bool
    stored_bytes: int | None  # Σ over the tensors read; None with only an index
    stored_bytes_by_dtype: dict[str, int]
    stored_bytes_by_component: dict[str, int]
    index_total_size: int | None
    expected_bytes: int | None  # the config's parameters (and the extras the index names) at the config's dtype
    stored_elements: int
    checkpoint_params: int  # parameters found: matched tensors, quantized ones as the parameters they pack
    ffncalc_params: int
    counts: dict[str, int]  # tensors by verdict
    extras: list[ExtraGroup]
    tensors: list[TensorVerdict]  # every tensor's verdict: those that are not plain parameters first
    ok: bool

    @property
    def exit_code(self) -> int:
        """1 when the checkpoint is not what the config says: the report is printed, then the command fails."""
        return 0 if self.ok else 1


def expected_extras(
    spec: ModelSpec, dtype: str, scheme: Scheme | None
) -> dict[str, tuple[tuple[int, ...], CheckpointExtra]]:
    """Every tensor the family says a checkpoint may hold beside the parameters: name → (shape, extra).

    Whole layers among them (multi-token prediction) are stored as the model's layers are, quantized alike.
    """
    found: dict[str, tuple[tuple[int, ...], CheckpointExtra]] = {}
    for extra in spec.checkpoint_extras:
        for index in extra.per_layer or (None,):
            for tensor in extra.tensors:
                found[tensor.name.format(i=index)] = (tensor.shape, extra)
        for index, layer in extra.layers:
            for stored in layout(stored_layer(layer, index), dtype, scheme):
                found[stored.name] = (stored.shape, extra)
    if spec.tie_word_embeddings and spec.lm_head:
        shape = (spec.vocab_size, embedding_width(spec))
        tied = CheckpointExtra(
            "tied head stored again", "tie_word_embeddings: the head is the embedding table, already counted"
        )
        found.setdefault(spec.names.lm_head + ".weight", (shape, tied))
    return found


def verify_checkpoint(
    spec: ModelSpec, report: ParamsReport, checkpoint: Checkpoint, dtype: str | None, scheme: Scheme | None
) -> VerifyReport:
    """Match every stored tensor by name (and shape) to a parameter, a quantization tensor or an extra."""
    expected = {stored.name: stored for stored in parameter_layout(spec, dtype or "F32", scheme)}
    extras = expected_extras(spec, dtype or "F32", scheme)
    prefix = spec.names.base_model_prefix

    def known(name: str) -> str:
        """The name as transformers reads it: with the base model's prefix when the checkpoint lacks it."""
        if name in expected or name in extras or not prefix:
            return name
        if f"{prefix}.{name}" in expected or f"{prefix}.{name}" in extras:
            return f"{prefix}.{name}"
        if name.startswith(prefix + ".") and name.removeprefix(prefix + ".") in expected:
            return name.removeprefix(prefix + ".")
        return name

    verdicts: list[TensorVerdict] = []
    groups: dict[str, list[int]] = {}
    reasons: dict[str, str] = {}
    seen: set[str] = set()
    by_dtype: dict[str, int] = defaultdict(int)
    by_component: dict[str, int] = defaultdict(int)
    params = 0
    for tensor in checkpoint.tensors:
        name = known(tensor.name)
        if not checkpoint.index_only:
            by_dtype[tensor.dtype] += tensor.bytes
        if name in expected:
            seen.add(name)
            stored = expected[name]
            swapped = _transposed_on_load(spec, name, stored.shape, tuple(tensor.shape))
            if checkpoint.index_only or tuple(tensor.shape) == stored.shape or swapped:
                params += stored.parameters
                by_component[stored.component] += tensor.bytes
                reason = None if stored.role == "parameter" else f"quantizes {stored.of}"
                if swapped:
                    reason = "stored with axes 1 and 2 swapped, as published; transformers transposes it on load"
                verdicts.append(_verdict(tensor, stored.role, reason, stored.shape if swapped else None))
            else:
                by_component["unexplained"] += tensor.bytes
                verdicts.append(_verdict(tensor, "wrong shape", "the model's tensor has another shape", stored.shape))
        elif name in extras:
            shape, extra = extras[name]
            if checkpoint.index_only or tuple(tensor.shape) == shape:
                group = groups.setdefault(extra.name, [0, 0])
                group[0] += 1
                group[1] += math.prod(shape) if checkpoint.index_only else tensor.elements
                reasons[extra.name] = extra.reason
                by_component["not parameters"] += tensor.bytes
                verdicts.append(_verdict(tensor, "extra", f"{extra.name}: {extra.reason}"))
            else:
                by_component["unexplained"] += tensor.bytes
                verdicts.append(_verdict(tensor, "wrong shape", extra.name, shape))
        else:
            by_component["unexplained"] += tensor.bytes
            verdicts.append(_verdict(tensor, "unexpected", _unexpected_reason(tensor.name)))
    not_saved = spec.not_saved
    unsaved_params = 0  # parameters the model builds that transformers does not save, absent here
    for name, stored in expected.items():
        if name not in seen:
            left_out = not_saved is not None and name in not_saved.names
            unsaved_params += stored.parameters if left_out else 0
            verdicts.append(
                TensorVerdict(
                    name=name,
                    verdict="not saved" if left_out else "missing",
                    dtype=stored.dtype,
                    shape=list(stored.shape),
                    reason=not_saved.reason
                    if left_out and not_saved is not None
                    else "the model has this tensor; the checkpoint does not store it",
                )
            )
    counts: dict[str, int] = defaultdict(int)
    for verdict in verdicts:
        counts[verdict.verdict] += 1
    bad = sum(counts.get(verdict, 0) for verdict in ("missing", "unexpected", "wrong shape"))
    index_names = {known(t.name) for t in checkpoint.tensors} if checkpoint.index_only else set()
    expected_bytes = None
    if checkpoint.index_only and dtype is not None:
        unsaved = {v.name for v in verdicts if v.verdict == "not saved"}
        expected_bytes = sum(s.bytes for name, s in expected.items() if name not in unsaved) + sum(
            _bytes(shape, dtype) for name, (shape, _) in extras.items() if name in index_names
        )
    size_ok = expected_bytes is None or checkpoint.index_total_size in (None, expected_bytes)
    listed = [v for v in verdicts if v.verdict != "parameter"] + [v for v in verdicts if v.verdict == "parameter"]
    return VerifyReport(
        **{name: getattr(report, name) for name in field_names(ModelInfo)},
        checkpoint=checkpoint.location,
        files=list(checkpoint.files),
        missing_files=list(checkpoint.missing_files),
        index_problems=list(checkpoint.index_problems),
        ignored=list(checkpoint.ignored),
        index_only=checkpoint.index_only,
        stored_bytes=None if checkpoint.index_only else sum(by_dtype.values()),
        stored_bytes_by_dtype=dict(sorted(by_dtype.items())),
        stored_bytes_by_component=dict(sorted(by_component.items())),
        index_total_size=checkpoint.index_total_size,
        expected_bytes=expected_bytes,
        stored_elements=sum(t.elements for t in checkpoint.tensors),
        checkpoint_params=params,
        ffncalc_params=report.total_params,
        counts=dict(counts),
        extras=[ExtraGroup(kind=k, tensors=n, elements=e, reason=reasons[k]) for k, (n, e) in groups.items()],
        tensors=[v for v in listed if v.verdict != "parameter"] + [v for v in listed if v.verdict == "parameter"],
        ok=not bad
        and not checkpoint.missing_files
        and not checkpoint.index_problems
        and size_ok
        and (checkpoint.index_only or params + unsaved_params == report.total_params),
    )


def _verdict(tensor: HeaderTensor, verdict: Verdict, reason: str | None, expected_shape=None) -> TensorVerdict:
    return TensorVerdict(
        name=tensor.name,
        verdict=verdict,
        dtype=tensor.dtype or None,
        shape=list(tensor.shape) if tensor.dtype else None,
        expected_shape=list(expected_shape) if expected_shape is not None else None,
        reason=reason,
    )


def _bytes(shape: tuple[int, ...], dtype: str) -> int:
    return math.prod(shape) * DTYPE_BYTES[dtype]


def _transposed_on_load(spec: ModelSpec, name: str, shape: tuple[int, ...], stored: tuple[int, ...]) -> bool:
    """Whether a checkpoint's STORED shape is SHAPE with axes 1 and 2 swapped, for a tensor transformers
    transposes on load (ModelSpec.transposed_on_load)."""
    return (
        len(shape) == 3
        and stored == (shape[0], shape[2], shape[1])
        and any(name.endswith(suffix) for suffix in spec.transposed_on_load)
    )


def _unexpected_reason(name: str) -> str:
    """Why a stored tensor no module holds is there, where its name tells: rotary tables of old checkpoints."""
    if name.endswith("rotary_emb.inv_freq"):
        return (
            "a rotary inv_freq buffer, which transformers before 4.32 saved with the weights; the config's "
            "transformers_version decides whether ffncalc expects them (this config's is 4.32 or later, or absent)"
        )
    return "no module of the model holds it; transformers would not load it"
