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

from .spec import (
    Attention,
    CheckpointExtra,
    DenseFfn,
    Ffn,
    Layer,
    Linear,
    Mamba2,
    Mixer,
    ModelSpec,
    MoeFfn,
    Norm,
)

Component = Literal["ffn", "attention", "cross_attention", "mixer", "embedding", "lm_head", "norm", "other"]


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
    cross_attention: int = 0  # decoder layers' attention over the encoder output
    mixer: int = 0  # non-attention sequence mixers: Mamba-2, Gated DeltaNet
    embedding: int = 0
    lm_head: int = 0
    norm: int = 0
    other: int = 0

    @property
    def total(self) -> int:
        return (
            self.ffn + self.attention + self.cross_attention + self.mixer
            + self.embedding + self.lm_head + self.norm + self.other
        )


class LayerGroup(Result):
    """Layers with one structure: their stack, their indices in it, and what one of them holds.

    ``attention_kind`` names the sequence mixer: mha, gqa, mqa, mla, or for hybrids mamba2,
    gated_deltanet, or none (an FFN-only layer).
    """

    stack: str
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
    outside_layers: dict[str, int]  # "component.name" → parameters: tables, final norm, head, heads and projections
    moe: MoeSummary | None
    active_params: int | None
    active_params_without_embedding: int | None
    checkpoint_extras: list[StoredExtra]
    notes: list[str]
    published_params: int | None = None  # presets: the paper's own figure, beside the count
    published_source: str | None = None


# --- counting ----------------------------------------------------------------------------


def linear_params(in_features: int, out_features: int, bias: bool) -> int:
    """in · out weights, + out biases."""
    return in_features * out_features + (out_features if bias else 0)


def norm_params(norm: Norm) -> int:
    """dim weights, + dim biases for a LayerNorm with bias."""
    return norm.dim * (2 if norm.bias else 1)


def attention_parts(attention: Attention, component: Component = "attention", prefix: str = "") -> list[Part]:
    """q, k, v, o projections (MLA: q_a, q_b, kv_a, kv_b, o), sinks, position bias and q/k norms."""
    hidden = attention.hidden_size
    heads, kv_heads = attention.num_heads, attention.num_kv_heads
    qk_dim, v_dim = attention.qk_head_dim, attention.v_head_dim
    q_width = heads * qk_dim * (2 if attention.q_gate else 1)
    mla = attention.mla
    if mla is None:
        parts = [
            linear_part(component, prefix + "q", hidden, q_width, attention.q_bias),
            linear_part(component, prefix + "k", hidden, kv_heads * qk_dim, attention.k_bias),
            linear_part(component, prefix + "v", hidden, kv_heads * v_dim, attention.v_bias),
        ]
    else:
        if mla.q_lora_rank is None:
            parts = [linear_part(component, "q", hidden, q_width, False)]
        else:
            parts = [
                linear_part(component, "q_a", hidden, mla.q_lora_rank, attention.q_bias),
                norm_part("q_a_layernorm", Norm(mla.latent_norm, mla.q_lora_rank)),
                linear_part(component, "q_b", mla.q_lora_rank, q_width, False),
            ]
        # kv_a emits the compressed latent and the shared rope key at once.
        parts += [
            linear_part(component, "kv_a", hidden, mla.kv_lora_rank + mla.qk_rope_head_dim, attention.k_bias),
            norm_part("kv_a_layernorm", Norm(mla.latent_norm, mla.kv_lora_rank)),
            linear_part(component, "kv_b", mla.kv_lora_rank, heads * (mla.qk_nope_head_dim + v_dim), False),
        ]
    parts.append(linear_part(component, prefix + "o", heads * v_dim, hidden, attention.o_bias))
    if attention.sinks:
        parts.append(Part(component, prefix + "sinks", heads))
    if attention.relative_position_buckets:
        parts.append(Part(component, prefix + "relative_position_bias", attention.relative_position_buckets * heads))
    if attention.q_norm is not None:
        parts.append(norm_part(prefix + "q_norm", attention.q_norm))
    if attention.k_norm is not None:
        parts.append(norm_part(prefix + "k_norm", attention.k_norm))
    return parts


def mixer_parts(mixer: Mixer) -> list[Part]:
    """Mamba-2: in_proj, conv, dt_bias, A_log, D, norm, out_proj. Gated DeltaNet: in_proj_qkvz, in_proj_ba, conv, dt_bias, A_log, norm, out_proj."""
    if isinstance(mixer, Mamba2):
        inner, heads = mixer.inner_size, mixer.num_heads
        return [
            linear_part("mixer", "in_proj", mixer.hidden_size, inner + mixer.conv_dim + heads, mixer.proj_bias),
            Part("mixer", "conv1d", mixer.conv_dim * mixer.conv_kernel + (mixer.conv_dim if mixer.conv_bias else 0)),
            Part("mixer", "dt_bias, A_log, D", 3 * heads),
            norm_part("mixer_norm", Norm("rmsnorm", inner)),
            linear_part("mixer", "out_proj", inner, mixer.hidden_size, mixer.proj_bias),
        ]
    key_dim, value_dim, v_heads = mixer.key_dim, mixer.value_dim, mixer.num_v_heads
    return [
        linear_part("mixer", "in_proj_qkvz", mixer.hidden_size, 2 * key_dim + 2 * value_dim, False),
        linear_part("mixer", "in_proj_ba", mixer.hidden_size, 2 * v_heads, False),
        Part("mixer", "conv1d", mixer.conv_dim * mixer.conv_kernel),
        Part("mixer", "dt_bias, A_log", 2 * v_heads),
        norm_part("mixer_norm", Norm("rmsnorm", mixer.head_v_dim)),
        linear_part("mixer", "out_proj", value_dim, mixer.hidden_size, False),
    ]


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
    """Everything in one layer: attention or another mixer, cross-attention, FFN, and its norms by module name."""
    parts: list[Part] = []
    if layer.attention is not None:
        parts += attention_parts(layer.attention)
    if layer.mixer is not None:
        parts += mixer_parts(layer.mixer)
    if layer.cross_attention is not None:
        parts += attention_parts(layer.cross_attention, "cross_attention", "cross_")
    if layer.ffn is not None:
        parts += ffn_parts(layer.ffn)
    return parts + [norm_part(name, norm) for name, norm in layer.norms]


def layer_params(layer: Layer) -> int:
    """Σ of the layer's parts."""
    return sum(part.params for part in layer_parts(layer))


def embedding_width(spec: ModelSpec) -> int:
    return spec.embedding_dim or spec.hidden_size


def lm_head_params(spec: ModelSpec) -> int:
    """0 when tied to the token table (or absent); else embedding width · vocab (+ vocab for a bias).

    A tied head with a bias (GPT-J style) keeps its bias: only the matrix is shared.
    """
    if not spec.lm_head:
        return 0
    bias = spec.vocab_size if spec.lm_head_bias else 0
    if spec.tie_word_embeddings:
        return bias
    return embedding_width(spec) * spec.vocab_size + bias


def extra_parts(spec: ModelSpec) -> list[Part]:
    """The model-level modules outside the layers: linears, norms and tables."""
    parts = []
    for extra in spec.extras:
        module = extra.module
        if isinstance(module, Linear):
            part = linear_part(extra.component, extra.name, module.in_features, module.out_features, module.bias)
        elif isinstance(module, Norm):
            part = norm_part(extra.name, module)
        else:
            part = Part(extra.component, extra.name, module.rows * module.dim)
        parts.append(part if extra.per_token else part._replace(matmul_weights=0, used=0))
    return parts


def sum_components(parts: Iterable[Part]) -> Components:
    totals: dict[str, int] = {}
    for part in parts:
        totals[part.component] = totals.get(part.component, 0) + part.params
    return Components(**totals)


def model_level_parts(spec: ModelSpec) -> list[Part]:
    """Outside the layers: vocab · embedding width, positions · hidden, final norm, output head, extras."""
    parts = [Part("embedding", "embed_tokens", spec.vocab_size * embedding_width(spec))]
    if spec.position_embeddings:
        parts.append(Part("embedding", "position_embeddings", spec.position_embeddings * spec.hidden_size))
    if spec.final_norm is not None:
        parts.append(norm_part("final_norm", spec.final_norm))
    head = lm_head_params(spec)
    if head:
        parts.append(Part("lm_head", "lm_head", head))
    return parts + extra_parts(spec)


def count_params(spec: ModelSpec, model: str = "", source: str = "") -> ParamsReport:
    """total = Σ layers + embeddings + final norm + head + extras; active replaces each MoE layer's E experts by k."""
    groups = [_layer_group(layer, stack, indices) for (layer, stack), indices in _group_layers(spec.layers).items()]
    outside = model_level_parts(spec)
    totals = sum_components(outside).model_dump()
    for group in groups:
        for name, value in group.components.model_dump().items():
            totals[name] += value * len(group.indices)
    components = Components(**totals)
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
        outside_layers={f"{part.component}.{part.name}": part.params for part in outside},
        moe=moe,
        active_params=active,
        active_params_without_embedding=active_without_embedding,
        checkpoint_extras=[_stored_extra(extra) for extra in spec.checkpoint_extras],
        notes=list(spec.notes),
        published_params=spec.published_params,
        published_source=spec.published_source,
    )


def _group_layers(layers: tuple[Layer, ...]) -> dict[tuple[Layer, str], list[int]]:
    """Identical layers together, with their indices counted within their stack."""
    groups: dict[tuple[Layer, str], list[int]] = {}
    position: dict[str, int] = {}
    for layer in layers:
        index = position.get(layer.stack, 0)
        position[layer.stack] = index + 1
        groups.setdefault((layer, layer.stack), []).append(index)
    return groups


def _layer_group(layer: Layer, stack: str, indices: list[int]) -> LayerGroup:
    parts = layer_parts(layer)
    named = {f"{part.component}.{part.name}": part.params for part in parts}
    if layer.attention is not None:
        mixer = layer.attention.kind
    elif layer.mixer is not None:
        mixer = "mamba2" if isinstance(layer.mixer, Mamba2) else "gated_deltanet"
    else:
        mixer = "none"
    ffn_kind = "none" if layer.ffn is None else ("moe" if isinstance(layer.ffn, MoeFfn) else "dense")
    return LayerGroup(
        stack=stack,
        indices=indices,
        attention_kind=mixer,
        window=layer.attention.window if layer.attention is not None else None,
        ffn_kind=ffn_kind,
        activation=layer.ffn.kind if layer.ffn is not None else "",
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
