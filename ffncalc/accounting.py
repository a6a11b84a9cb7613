"""Parameter accounting: pure functions from a ``ModelSpec`` to exact integer counts.

Conventions:
- a parameter is a unique weight element of the model's modules (``ffncalc.tensors``); a
  tied head shares the embedding matrix and is counted once (in ``embedding``);
- every normalisation weight (layer norms, q/k norms, MLA latent norms) is in ``norm``;
- "active" parameters are those one text token touches: the language model's, except that an MoE
  layer uses ``experts_per_token`` of its routed experts (a multimodal model's towers and projector
  run for images, not for text tokens).
No I/O and no formatting here: ``render`` and the CLI present what this returns.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from typing import Literal, NamedTuple

from .ggml import GgufWeights
from .results import ModelInfo, Result
from .spec import CheckpointExtra, Component, DenseFfn, Layer, ModelSpec, MoeFfn, Runs, Stack
from .tensors import Tensor, dense_ffn_tensors, layer_tensors, model_tensors, router_rows
from .values import field_values


class Part(NamedTuple):
    """One named piece of a layer or of the model: the sum of its tensors.

    ``matmul_weights`` are the weight elements a token multiplies by; a token uses ``used`` of
    every ``of`` of both (routed experts: k of E).
    """

    component: Component
    name: str
    params: int
    matmul_weights: int = 0
    used: int = 1
    of: int = 1
    runs: Runs = "every_token"

    @property
    def active_params(self) -> int:
        return self.params * self.used // self.of

    @property
    def active_matmul_weights(self) -> int:
        return self.matmul_weights * self.used // self.of


def parts_of(tensors: Iterable[Tensor]) -> list[Part]:
    """Tensors summed by (component, part), in the order they first appear; a borrowed tensor adds the weights a
    token multiplies by, not parameters (the layer that holds it counts them)."""
    parts: dict[tuple[str, str], Part] = {}
    for tensor in tensors:
        key = (tensor.component, tensor.part)
        elements = tensor.elements
        params = 0 if tensor.borrowed else elements
        matmul = elements if tensor.matmul else 0
        part = parts.get(key)
        if part is None:
            parts[key] = Part(tensor.component, tensor.part, params, matmul, tensor.used, tensor.of, tensor.runs)
        else:
            parts[key] = part._replace(params=part.params + params, matmul_weights=part.matmul_weights + matmul)
    return list(parts.values())


def layer_parts(layer: Layer) -> list[Part]:
    """Everything in one layer, by part: attention or another mixer, cross-attention, FFN, norms."""
    return parts_of(layer_tensors(layer))


def layer_params(layer: Layer) -> int:
    """Σ of the layer's parts."""
    return sum(part.params for part in layer_parts(layer))


def model_level_parts(spec: ModelSpec) -> list[Part]:
    """Outside the layers: vocab · embedding width, positions · hidden, final norm, output head, extras."""
    return parts_of(model_tensors(spec))


def linear_params(in_features: int, out_features: int, bias: bool) -> int:
    """in · out weights, + out biases."""
    return in_features * out_features + (out_features if bias else 0)


def dense_ffn_params(ffn: DenseFfn) -> int:
    """Gated: 3 · H · I; plain: 2 · H · I; plus biases (I per input matrix, H for down)."""
    return sum(tensor.elements for tensor in dense_ffn_tensors(ffn))


# --- results -----------------------------------------------------------------------------


class Components(Result):
    """Parameters by component; they add up to the total."""

    ffn: int = 0
    attention: int = 0
    cross_attention: int = 0  # decoder layers' attention over the encoder output
    mixer: int = 0  # non-attention sequence mixers: Mamba-2, Gated DeltaNet
    embedding: int = 0
    lm_head: int = 0
    norm: int = 0
    vision: int = 0  # a multimodal model's vision tower
    audio: int = 0
    projector: int = 0  # the projection from a tower into the language model
    other: int = 0

    @property
    def total(self) -> int:
        return sum(field_values(self).values())

    @property
    def language_model(self) -> int:
        """Everything but the towers and their projectors."""
        return self.total - self.vision - self.audio - self.projector


class LayerGroup(Result):
    """Layers with one structure: their stack, their indices in it, and what one of them holds.

    ``attention_kind`` names the sequence mixer: mha, gqa, mqa, mla, or for hybrids mamba2,
    gated_deltanet, …, both joined by "+" in a layer that runs them side by side (Falcon-H1:
    gqa+mamba2), or none (an FFN-only layer).
    """

    stack: Stack
    indices: list[int]
    attention_kind: str
    window: int | None
    ffn_kind: Literal["dense", "moe", "none"]
    activation: str
    parts: dict[str, int]
    components: Components
    params: int
    active_params: int


class MoeSummary(Result):
    """The mixture-of-experts layers taken together."""

    moe_layers: int
    num_experts: int
    experts_per_token: int
    num_shared_experts: int
    expert_params: int
    routed_expert_params: int
    shared_expert_params: int
    router_params: int


class StoredExtra(Result):
    """Elements a checkpoint may store beyond the parameters, and why."""

    name: str
    elements: int
    reason: str


class ParamsReport(ModelInfo):
    """Where every parameter of one model is. params' JSON document is this model."""

    total_params: int
    language_model_params: int  # the total without vision/audio towers and projectors
    components: Components
    tie_word_embeddings: bool
    num_layers: int
    layers: list[LayerGroup]
    outside_layers: dict[str, int]  # "component.name" → parameters: tables, final norm, head, heads and projections
    moe: MoeSummary | None
    active_params: int | None
    active_params_without_embedding: int | None  # active without the input embedding table (some cards quote this)
    checkpoint_extras: list[StoredExtra]
    published_active: str | None = None  # a published active figure as written, e.g. "3.3B" (ffncalc/published.py)
    published_active_source: str | None = None
    published_active_matches: str | None = (
        None  # which exact figure it rounds from: "the figure with the input table" …
    )
    published_params: int | None = None  # presets: the paper's own figure, beside the count
    published_source: str | None = None
    gguf: GgufWeights | None = None  # a GGUF's tensor data: exact bytes by ggml type and component


# --- counting ----------------------------------------------------------------------------

LANGUAGE_STACKS = ("decoder", "encoder")  # the language model's layers; the others are a tower's


def sum_components(parts: Iterable[Part]) -> Components:
    totals: dict[str, int] = {}
    for part in parts:
        totals[part.component] = totals.get(part.component, 0) + part.params
    return Components(**totals)


def count_params(spec: ModelSpec, info: ModelInfo | None = None) -> ParamsReport:
    """total = Σ layers + embeddings + final norm + head + extras; active: the language model, each MoE layer's E experts replaced by k."""
    info = info or ModelInfo(model_type=spec.model_type)
    groups = [_layer_group(layer, indices) for layer, indices in group_layers(spec.layers).items()]
    outside = model_level_parts(spec)
    totals = field_values(sum_components(outside))
    for group in groups:
        for name, value in field_values(group.components).items():
            totals[name] += value * len(group.indices)
    components = Components(**totals)
    total = components.total
    # A tower's MoE layers (dots3 Note's vision encoder) run for images, never for a text token: the language model's
    # experts alone make the MoE summary and the active parameters.
    moe = _moe_summary(tuple(layer for layer in spec.layers if layer.stack in LANGUAGE_STACKS))
    active = None
    active_without_embedding = None
    if moe is not None:
        skipped = sum(
            (group.params - group.active_params) * len(group.indices)
            for group in groups
            if group.stack in LANGUAGE_STACKS
        )
        active = components.language_model - skipped
        # A tied table is also the output head, which every token uses: only positions drop out.
        input_only = spec.position_embeddings * spec.hidden_size if spec.tie_word_embeddings else components.embedding
        active_without_embedding = active - input_only
    return ParamsReport(
        **field_values(info),
        total_params=total,
        language_model_params=components.language_model,
        components=components,
        tie_word_embeddings=spec.tie_word_embeddings,
        num_layers=sum(layer.stack in LANGUAGE_STACKS for layer in spec.layers),
        layers=groups,
        outside_layers={f"{part.component}.{part.name}": part.params for part in outside},
        moe=moe,
        active_params=active,
        active_params_without_embedding=active_without_embedding,
        checkpoint_extras=[_stored_extra(extra) for extra in spec.checkpoint_extras if extra.likely],
    )


def group_layers(layers: tuple[Layer, ...]) -> dict[Layer, list[int]]:
    """Identical layers together (a layer knows its stack), with their indices within their stack.

    A layer object a builder reuses is grouped by identity first, so that each distinct object is hashed (a walk of
    its whole structure) once, not once per layer: a 16,384-layer model, or a sweep of thousands of configs."""
    by_object: dict[int, tuple[Layer, list[int]]] = {}
    position: dict[str, int] = {}
    for layer in layers:
        index = position.get(layer.stack, 0)
        position[layer.stack] = index + 1
        by_object.setdefault(id(layer), (layer, []))[1].append(index)
    groups: dict[Layer, list[int]] = {}
    for layer, indices in by_object.values():
        groups.setdefault(layer, []).extend(indices)
    return {layer: sorted(indices) for layer, indices in groups.items()}


def mixer_kind(layer: Layer) -> str:
    """The layer's sequence mixer: its attention kind (mha, gqa, mqa, mla), a mixer's kind, both joined by "+" when
    the layer runs them side by side (Falcon-H1: gqa+mamba2), or none."""
    kinds = [block.kind for block in (layer.attention, layer.mixer) if block is not None]
    return "+".join(kinds) or "none"


_ACTIVATION_NAMES = {
    "silu": "Swi",
    "swish": "Swi",
    "gelu": "Ge",
    "gelu_new": "Ge",
    "gelu_pytorch_tanh": "Ge",
    "gelu_fast": "Ge",
    "gelu_python": "Ge",
    "quick_gelu": "Ge",
    "relu": "Re",
}


def ffn_kind_name(activation: str, gated: bool) -> str:
    """SwiGLU / GeGLU / ReGLU for gated FFNs, the activation's own name (GELU, ReLU, SiLU) otherwise."""
    if activation == "relu2":
        return "ReGLU²" if gated else "ReLU²"  # squared ReLU (Nemotron-H, Primer)
    prefix = _ACTIVATION_NAMES.get(activation)
    if gated:
        return f"{prefix}GLU" if prefix else f"gated {activation}"
    return {"Swi": "SiLU", "Ge": "GELU", "Re": "ReLU"}.get(prefix or "", activation)


def _layer_group(layer: Layer, indices: list[int]) -> LayerGroup:
    parts = layer_parts(layer)
    ffn = layer.ffn
    dense = ffn.expert if isinstance(ffn, MoeFfn) else ffn
    return LayerGroup(
        stack=layer.stack,
        indices=indices,
        attention_kind=mixer_kind(layer),
        window=layer.attention.window if layer.attention is not None else None,
        ffn_kind="none" if ffn is None else ("moe" if isinstance(ffn, MoeFfn) else "dense"),
        activation=ffn_kind_name(dense.activation, dense.gated) if dense is not None else "",
        parts={f"{part.component}.{part.name}": part.params for part in parts},
        components=sum_components(parts),
        params=sum(part.params for part in parts),
        active_params=sum(part.active_params for part in parts),
    )


def _moe_summary(layers: tuple[Layer, ...]) -> MoeSummary | None:
    # A layer that borrows its MoE (a looped layer run again: Layer.borrowed) holds none of its parameters.
    moe_layers = [
        layer.ffn
        for layer in layers
        if isinstance(layer.ffn, MoeFfn)
        and not any((layer.ffn.names.get("experts") or "").startswith(prefix) for prefix in layer.borrowed)
    ]
    if not moe_layers:
        return None
    first = moe_layers[0]
    blocks = Counter(moe_layers)  # identical MoE blocks are counted once, times their number
    return MoeSummary(
        moe_layers=len(moe_layers),
        num_experts=first.num_experts,
        experts_per_token=first.experts_per_token,
        num_shared_experts=first.num_shared_experts or (1 if first.shared is not None else 0),
        expert_params=dense_ffn_params(first.expert),
        routed_expert_params=sum(n * moe.num_experts * dense_ffn_params(moe.expert) for moe, n in blocks.items()),
        shared_expert_params=sum(
            n * dense_ffn_params(moe.shared) * (moe.num_shared_experts if moe.shared_stacked else 1)
            for moe, n in blocks.items()
            if moe.shared is not None
        ),
        router_params=sum(
            n * linear_params(moe.router_input or moe.hidden_size, router_rows(moe), moe.router_bias)
            for moe, n in blocks.items()
        ),
    )


def extra_elements(extra: CheckpointExtra) -> int:
    """Σ of the extra's tensors (each per layer it names) and of its whole layers."""
    per_tensor = sum(math.prod(tensor.shape) for tensor in extra.tensors)
    return per_tensor * max(1, len(extra.per_layer)) + sum(layer_params(layer) for _, layer in extra.layers)


def _stored_extra(extra: CheckpointExtra) -> StoredExtra:
    return StoredExtra(name=extra.name, elements=extra_elements(extra), reason=extra.reason)
