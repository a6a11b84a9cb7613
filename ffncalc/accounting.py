"""Parameter accounting: pure functions from a ``ModelSpec`` to exact integer counts.

Conventions:
- a parameter is a unique weight element of the language model's modules; a tied head
  shares the embedding matrix and is counted once (in ``embedding``);
- a linear layer holds in·out weights plus out biases when it has a bias;
- every normalisation weight (layer norms, q/k norms, MLA latent norms) is in ``norm``;
- "active" parameters are those one token touches: all of them, except that an MoE layer
  uses ``experts_per_token`` of its routed experts.
No I/O and no formatting here: ``render`` and the CLI present what this returns.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal, NamedTuple

from pydantic import BaseModel, ConfigDict

from .spec import Attention, CheckpointExtra, DenseFfn, Ffn, Layer, ModelSpec, MoeFfn, Norm

Component = Literal["ffn", "attention", "embedding", "lm_head", "norm", "other"]
COMPONENTS: tuple[Component, ...] = ("ffn", "attention", "embedding", "lm_head", "norm", "other")


class Part(NamedTuple):
    """One named piece of a layer.

    ``matmul_weights`` are the weight elements a token multiplies by (biases, norms and sinks
    hold none); a token uses ``used`` of every ``of`` of both (routed experts: k of E).
    """

    component: Component
    name: str
    params: int
    matmul_weights: int = 0
    used: int = 1
    of: int = 1

    @property
    def active_params(self) -> int:
        return self.params * self.used // self.of

    @property
    def active_matmul_weights(self) -> int:
        return self.matmul_weights * self.used // self.of


def linear_part(component: Component, name: str, in_features: int, out_features: int, bias: bool) -> Part:
    """A linear layer: in · out weights (all multiplied per token), + out biases."""
    return Part(component, name, linear_params(in_features, out_features, bias), in_features * out_features)


def norm_part(name: str, norm: Norm) -> Part:
    return Part("norm", name, norm_params(norm))


# --- results -----------------------------------------------------------------------------


class Result(BaseModel):
    model_config = ConfigDict(frozen=True, defer_build=True)


class Components(Result):
    """Parameters by component; they add up to the total."""

    ffn: int = 0
    attention: int = 0
    embedding: int = 0
    lm_head: int = 0
    norm: int = 0
    other: int = 0

    @property
    def total(self) -> int:
        return self.ffn + self.attention + self.embedding + self.lm_head + self.norm + self.other


class LayerGroup(Result):
    """Layers with one structure: their indices, and what one of them holds."""

    indices: list[int]
    attention_kind: str
    window: int | None
    ffn_kind: Literal["dense", "moe"]
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


class ParamsReport(Result):
    """Where every parameter of one model is. ``--json`` of ``ffncalc params`` is this model."""

    model: str
    source: str
    model_type: str
    architecture: str
    total_params: int
    components: Components
    tie_word_embeddings: bool
    num_layers: int
    layers: list[LayerGroup]
    moe: MoeSummary | None
    active_params: int | None
    active_params_without_embedding: int | None
    checkpoint_extras: list[StoredExtra]
    notes: list[str]


# --- counting ----------------------------------------------------------------------------


def linear_params(in_features: int, out_features: int, bias: bool) -> int:
    """in · out weights, + out biases."""
    return in_features * out_features + (out_features if bias else 0)


def norm_params(norm: Norm) -> int:
    """dim weights, + dim biases for a LayerNorm with bias."""
    return norm.dim * (2 if norm.bias else 1)


def attention_parts(attention: Attention) -> list[Part]:
    """q, k, v, o projections (MLA: q_a, q_b, kv_a, kv_b, o), sinks and per-head norms."""
    hidden = attention.hidden_size
    heads, kv_heads = attention.num_heads, attention.num_kv_heads
    qk_dim, v_dim = attention.qk_head_dim, attention.v_head_dim
    mla = attention.mla
    if mla is None:
        parts = [
            linear_part("attention", "q", hidden, heads * qk_dim, attention.q_bias),
            linear_part("attention", "k", hidden, kv_heads * qk_dim, attention.k_bias),
            linear_part("attention", "v", hidden, kv_heads * v_dim, attention.v_bias),
        ]
    else:
        if mla.q_lora_rank is None:
            parts = [linear_part("attention", "q", hidden, heads * qk_dim, False)]
        else:
            parts = [
                linear_part("attention", "q_a", hidden, mla.q_lora_rank, attention.q_bias),
                norm_part("q_a_layernorm", Norm(mla.latent_norm, mla.q_lora_rank)),
                linear_part("attention", "q_b", mla.q_lora_rank, heads * qk_dim, False),
            ]
        # kv_a emits the compressed latent and the shared rope key at once.
        parts += [
            linear_part("attention", "kv_a", hidden, mla.kv_lora_rank + mla.qk_rope_head_dim, attention.k_bias),
            norm_part("kv_a_layernorm", Norm(mla.latent_norm, mla.kv_lora_rank)),
            linear_part("attention", "kv_b", mla.kv_lora_rank, heads * (mla.qk_nope_head_dim + v_dim), False),
        ]
    parts.append(linear_part("attention", "o", heads * v_dim, hidden, attention.o_bias))
    if attention.sinks:
        parts.append(Part("attention", "sinks", heads))
    if attention.qk_norm is not None:
        parts += [norm_part("q_norm", attention.qk_norm), norm_part("k_norm", attention.qk_norm)]
    return parts


def dense_ffn_parts(ffn: DenseFfn) -> list[Part]:
    """Gated: gate, up (H → I) and down (I → H), 3 · H · I; plain: up and down, 2 · H · I; plus biases."""
    hidden, width = ffn.hidden_size, ffn.intermediate_size
    inputs = ["gate", "up"] if ffn.gated else ["up"]
    return [linear_part("ffn", name, hidden, width, ffn.bias) for name in inputs] + [
        linear_part("ffn", "down", width, hidden, ffn.bias)
    ]


def dense_ffn_params(ffn: DenseFfn) -> int:
    """Gated: 3 · H · I; plain: 2 · H · I; plus biases (I per input matrix, H for down)."""
    return sum(part.params for part in dense_ffn_parts(ffn))


def ffn_parts(ffn: Ffn) -> list[Part]:
    """Dense: gate, up, down. MoE: router, routed experts (k of E used), shared experts and their gate."""
    if isinstance(ffn, DenseFfn):
        return dense_ffn_parts(ffn)
    return moe_parts(ffn)


def moe_parts(moe: MoeFfn) -> list[Part]:
    """router H·E (+E), routed E · expert (k of E used per token), shared experts, shared-expert gate H."""
    expert = dense_ffn_parts(moe.expert)
    parts = [
        linear_part("ffn", "router", moe.hidden_size, moe.num_experts, moe.router_bias),
        Part(
            "ffn",
            "routed_experts",
            moe.num_experts * sum(part.params for part in expert),
            moe.num_experts * sum(part.matmul_weights for part in expert),
            used=moe.experts_per_token,
            of=moe.num_experts,
        ),
    ]
    if moe.shared is not None:
        shared = dense_ffn_parts(moe.shared)
        parts.append(
            Part("ffn", "shared_experts", sum(p.params for p in shared), sum(p.matmul_weights for p in shared))
        )
    if moe.shared_expert_gate:
        parts.append(linear_part("ffn", "shared_expert_gate", moe.hidden_size, 1, False))
    return parts


def layer_parts(layer: Layer) -> list[Part]:
    """Everything in one layer: attention, FFN, and its norms by module name."""
    norms = [norm_part(name, norm) for name, norm in layer.norms]
    return attention_parts(layer.attention) + ffn_parts(layer.ffn) + norms


def layer_params(layer: Layer) -> int:
    """Σ of the layer's parts."""
    return sum(part.params for part in layer_parts(layer))


def embedding_params(spec: ModelSpec) -> int:
    """vocab · hidden for the token table, + positions · hidden for a learned position table."""
    return (spec.vocab_size + spec.position_embeddings) * spec.hidden_size


def lm_head_params(spec: ModelSpec) -> int:
    """0 when tied to the token table; else vocab · hidden (+ vocab for a bias)."""
    if spec.tie_word_embeddings:
        return 0
    return linear_params(spec.hidden_size, spec.vocab_size, spec.lm_head_bias)


def sum_components(parts: Iterable[Part]) -> Components:
    totals: dict[str, int] = {}
    for part in parts:
        totals[part.component] = totals.get(part.component, 0) + part.params
    return Components(**totals)


def count_params(spec: ModelSpec, model: str = "", source: str = "") -> ParamsReport:
    """total = embedding + Σ layers + final norm + head; active replaces each MoE layer's E experts by k."""
    layer_groups = _group_layers(spec.layers)
    groups = [_layer_group(layer, indices) for layer, indices in layer_groups.items()]

    per_layer_components = [(group.components, len(group.indices)) for group in groups]
    final_norm = norm_params(spec.final_norm) if spec.final_norm is not None else 0
    components = Components(
        ffn=sum(c.ffn * n for c, n in per_layer_components),
        attention=sum(c.attention * n for c, n in per_layer_components),
        embedding=embedding_params(spec),
        lm_head=lm_head_params(spec),
        norm=sum(c.norm * n for c, n in per_layer_components) + final_norm,
        other=sum(c.other * n for c, n in per_layer_components),
    )
    total = components.total
    moe = _moe_summary(spec.layers)
    active = None
    active_without_embedding = None
    if moe is not None:
        active = total - sum((group.params - group.active_params) * len(group.indices) for group in groups)
        # A tied table is also the output head, which every token uses: only positions drop out.
        input_only = spec.position_embeddings * spec.hidden_size if spec.tie_word_embeddings else components.embedding
        active_without_embedding = active - input_only
    return ParamsReport(
        model=model,
        source=source,
        model_type=spec.model_type,
        architecture=spec.architecture,
        total_params=total,
        components=components,
        tie_word_embeddings=spec.tie_word_embeddings,
        num_layers=len(spec.layers),
        layers=groups,
        moe=moe,
        active_params=active,
        active_params_without_embedding=active_without_embedding,
        checkpoint_extras=[_stored_extra(extra) for extra in spec.checkpoint_extras],
        notes=list(spec.notes),
    )


def _group_layers(layers: tuple[Layer, ...]) -> dict[Layer, list[int]]:
    groups: dict[Layer, list[int]] = {}
    for index, layer in enumerate(layers):
        groups.setdefault(layer, []).append(index)
    return groups


def _layer_group(layer: Layer, indices: list[int]) -> LayerGroup:
    parts = layer_parts(layer)
    named = {f"{part.component}.{part.name}": part.params for part in parts}
    return LayerGroup(
        indices=indices,
        attention_kind=layer.attention.kind,
        window=layer.attention.window,
        ffn_kind="moe" if isinstance(layer.ffn, MoeFfn) else "dense",
        activation=layer.ffn.kind,
        parts=named,
        components=sum_components(parts),
        params=sum(part.params for part in parts),
        active_params=sum(part.active_params for part in parts),
    )


def _moe_summary(layers: tuple[Layer, ...]) -> MoeSummary | None:
    moe_layers = [layer.ffn for layer in layers if isinstance(layer.ffn, MoeFfn)]
    if not moe_layers:
        return None
    first = moe_layers[0]
    return MoeSummary(
        moe_layers=len(moe_layers),
        num_experts=first.num_experts,
        experts_per_token=first.experts_per_token,
        num_shared_experts=first.num_shared_experts or (1 if first.shared is not None else 0),
        expert_params=dense_ffn_params(first.expert),
        routed_expert_params=sum(moe.num_experts * dense_ffn_params(moe.expert) for moe in moe_layers),
        shared_expert_params=sum(dense_ffn_params(moe.shared) for moe in moe_layers if moe.shared is not None),
        router_params=sum(linear_params(moe.hidden_size, moe.num_experts, moe.router_bias) for moe in moe_layers),
    )


def _stored_extra(extra: CheckpointExtra) -> StoredExtra:
    elements = extra.elements + sum(layer_params(layer) for layer in extra.layers)
    return StoredExtra(name=extra.name, elements=elements, reason=extra.reason)
