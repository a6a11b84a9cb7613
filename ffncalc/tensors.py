"""The tensors a spec's modules hold: the one description that parameters, bytes and ``verify`` read.

Conventions:
- a linear layer holds a weight of [out, in] (as torch stores it; [in, out] where the family
  stores it transposed) and, with a bias, a bias of [out];
- a norm holds a weight of [dim], and a bias of [dim] for a LayerNorm with bias;
- each tensor belongs to a logical part (q, k, gate, routed_experts …) of a component; parts that
  a family stores fused (qkv_proj) are separate tensors here, under one stored name, and are
  concatenated along their output axis when the checkpoint's tensors are assembled;
- ``matmul`` marks the weights a token multiplies by (biases, norms and tables hold none); a
  token uses ``used`` of every ``of`` of a part (routed experts: k of E).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator

from .spec import (
    Attention,
    Component,
    Compressor,
    DenseFfn,
    Extra,
    Ffn,
    Indexer,
    Layer,
    LearnedTensor,
    Linear,
    Mixer,
    ModelSpec,
    MoeFfn,
    Norm,
    PatchEmbedding,
    Runs,
)
from .values import Value, replace


class Tensor(Value):
    """One parameter tensor: its part, its stored name (relative to its layer) and shape.

    ``copies`` > 1 stands for one tensor per routed expert, ``{e}`` in the name marking the
    expert's index; the engine never needs to list them one by one to count them.
    """

    component: Component
    part: str
    name: str
    shape: tuple[int, ...]
    matmul: bool = False
    copies: int = 1
    used: int = 1
    of: int = 1
    runs: Runs = "every_token"
    concat_axis: int = 0  # where parts fused under one name are joined (the output axis)
    transposed: bool = False  # a weight stored [in, out] (Conv1D, stacked experts), not torch's [out, in]
    borrowed: bool = (
        False  # held by another layer (Layer.borrowed): a token's FLOPs here, no parameter or stored tensor
    )
    padded_rows: int = 0  # zero rows a checkpoint stores after the tensor's own (lm_head_stored_rows): bytes only

    @property
    def elements(self) -> int:
        """copies · Π shape."""
        return self.copies * math.prod(self.shape)


# --- building blocks --------------------------------------------------------------------------


def linear(
    component: Component,
    part: str,
    module: str,
    in_features: int,
    out_features: int,
    bias: bool,
    transposed: bool = False,
    leading: tuple[int, ...] = (),
    parameter_names: bool = False,
    groups: int = 1,
    pointwise: bool = False,
) -> list[Tensor]:
    """in · out / groups weights (+ out biases); ``leading`` axes stack experts; ``parameter_names`` for raw tensors
    (``gate_up_proj``, ``gate_up_proj_bias``); block-diagonal in ``groups`` (transposed: [groups, in / groups,
    out / groups]); ``pointwise``: a 1 × 1 convolution's weight, [out, in / groups, 1]."""
    if groups > 1 and transposed:
        weight_shape = leading + (groups, in_features // groups, out_features // groups)
        axis = len(leading) + 2
    else:
        weight_shape = leading + ((in_features, out_features) if transposed else (out_features, in_features // groups))
        weight_shape += (1,) if pointwise else ()
        axis = len(leading) + (1 if transposed else 0)
    weight_name, bias_name = (module, module + "_bias") if parameter_names else (module + ".weight", module + ".bias")
    tensors = [Tensor(component, part, weight_name, weight_shape, matmul=True, concat_axis=axis, transposed=transposed)]
    if bias:
        tensors.append(Tensor(component, part, bias_name, leading + (out_features,), concat_axis=len(leading)))
    return tensors


def norm(part: str, module: str, spec_norm: Norm) -> list[Tensor]:
    """dim weights, + dim biases for a LayerNorm with bias (each stored as the norm's shape, [dim] unless it says)."""
    shape = spec_norm.shape or (spec_norm.dim,)
    tensors = [Tensor("norm", part, module + ".weight", shape)]
    if spec_norm.bias:
        tensors.append(Tensor("norm", part, module + ".bias", shape))
    return tensors


def attention_tensors(attention: Attention, component: Component = "attention", prefix: str = "") -> list[Tensor]:
    """q, k, v (each reading its own input's width), o (MLA: q_a, q_b, kv_a, kv_b, o), sinks, position bias and q/k
    norms; no k, v for an attention that reads another layer's keys and values, no v where values are the keys (or
    their projection); q_a, q_b for a query latent, o_a, o_b for an output latent; q and o stacked per expert where
    they are routed (k of E used); an indexer's and a compressor's weights."""
    names = attention.names
    hidden = attention.hidden_size
    q_input = attention.input_size or hidden
    kv_input = attention.kv_input_size or q_input
    heads, kv_heads = attention.num_heads, attention.num_kv_heads
    qk_dim, v_dim = attention.qk_head_dim, attention.v_head_dim
    q_width = (attention.q_width or heads * qk_dim) * (2 if attention.q_gate else 1)
    o_width = attention.o_input or attention.q_width or heads * v_dim
    mla = attention.mla
    tensors: list[Tensor] = []

    def proj(part: str, in_f: int, out_f: int, bias: bool) -> None:
        if attention.q_o_experts is not None and part in ("q", "o"):  # stacked per expert, k of E used per token
            experts, per_token = attention.q_o_experts
            in_f, out_f = (in_f, out_f // per_token) if part == "q" else (in_f // per_token, out_f)
            routed = linear(component, prefix + part + "_experts", names[part], in_f, out_f, bias, leading=(experts,))
            tensors.extend(replace(t, used=per_token, of=experts) for t in routed)
            return
        stored = linear(
            component,
            prefix + part,
            names[part],
            in_f,
            out_f,
            bias,
            transposed=part in names.transposed,
            parameter_names=names.parameters,
            groups=names.groups_of(part),
            pointwise=part in names.pointwise,
        )
        tensors.extend(stored)

    def q_latent(in_f: int, rank: int, latent_norm: Norm) -> None:
        proj("q_a", in_f, rank, attention.q_bias)
        tensors.extend(norm("q_a_layernorm", names["q_a_layernorm"], latent_norm))
        proj("q_b", rank, q_width, False)

    if mla is None:
        if attention.q_latent is None:
            proj("q", q_input, q_width, attention.q_bias)
        else:
            q_latent(q_input, attention.q_latent, Norm("rmsnorm", attention.q_latent))
        if not attention.kv_shared:
            proj("k", kv_input, kv_heads * qk_dim, attention.k_bias)
            if not (attention.values_from_keys or attention.values_are_keys):
                proj("v", attention.v_input_size or kv_input, kv_heads * v_dim, attention.v_bias)
    else:
        if mla.q_lora_rank is None:
            proj("q", hidden, q_width, False)
        elif mla.q_b_input is None:
            q_latent(hidden, mla.q_lora_rank, Norm(mla.latent_norm, mla.q_lora_rank))
        else:  # q_b reads a wider input than the latent (A.X-K2's q_gate_proj: the latent before and after its norm)
            proj("q_a", hidden, mla.q_lora_rank, attention.q_bias)
            tensors.extend(norm("q_a_layernorm", names["q_a_layernorm"], Norm(mla.latent_norm, mla.q_lora_rank)))
            proj("q_b", mla.q_b_input, q_width, False)
        if mla.output_gate:  # fused with q_b under its name: heads · (qk + v) rows in all
            proj("output_gate", mla.q_b_input or mla.q_lora_rank or hidden, mla.output_gate, False)
        # kv_a emits the compressed latent and the shared rope key at once.
        proj("kv_a", hidden, mla.kv_lora_rank + mla.qk_rope_head_dim, attention.k_bias)
        tensors += norm("kv_a_layernorm", names["kv_a_layernorm"], Norm(mla.latent_norm, mla.kv_lora_rank))
        proj("kv_b", mla.kv_lora_rank, heads * (mla.qk_nope_head_dim + v_dim), False)
    if attention.o_latent is None:
        proj("o", o_width, hidden, attention.o_bias)
    else:  # o_a is block-diagonal: stored [o_latent, o_width / o_groups], each group of heads through its own block
        proj("o_a", o_width // attention.o_groups, attention.o_latent, False)
        proj("o_b", attention.o_latent, hidden, attention.o_bias)
    if attention.sinks:
        tensors.append(Tensor(component, prefix + "sinks", names["sinks"], (heads,)))
    if attention.relative_position_buckets:
        shape = (attention.relative_position_buckets, heads)
        tensors.append(
            Tensor(component, prefix + "relative_position_bias", names["relative_position_bias"] + ".weight", shape)
        )
    if attention.indexer is not None:
        tensors += indexer_tensors(attention.indexer, attention.hidden_size, component)
    if attention.compressor is not None:
        tensors += compressor_tensors(attention.compressor, attention.hidden_size, component)
    if attention.q_norm is not None:
        tensors += norm(prefix + "q_norm", names["q_norm"], attention.q_norm)
    if attention.k_norm is not None:
        tensors += norm(prefix + "k_norm", names["k_norm"], attention.k_norm)
    return tensors


def indexer_tensors(indexer: Indexer, hidden: int, component: Component) -> list[Tensor]:
    """wq_b (query latent → heads · head_dim), wk (hidden → head_dim), its LayerNorm, weights_proj (hidden → heads);
    a compressor's weights instead of wk and its norm when its keys are compressed; none for an indexer that reuses
    another layer's picks. The LayerNorm counts with the norms, as q_norm does."""
    if indexer.shared:
        return []
    names = indexer.names
    tensors = linear(component, "indexer", names["wq_b"], indexer.q_input, indexer.heads * indexer.head_dim, False)
    if indexer.compressor is not None:
        tensors += compressor_tensors(indexer.compressor, hidden, component, "indexer_")
    else:
        tensors += linear(component, "indexer", names["wk"], hidden, indexer.head_dim, False)
    if indexer.k_norm is not None:
        tensors += norm("indexer_k_norm", names["k_norm"], indexer.k_norm)
    tensors += linear(component, "indexer", names["weights_proj"], hidden, indexer.heads, False)
    return tensors


def compressor_tensors(compressor: Compressor, hidden: int, component: Component, prefix: str = "") -> list[Tensor]:
    """kv and gate (hidden → series · head_dim each), the position bias [rate, series · head_dim], an RMSNorm of head_dim."""
    names, width = compressor.names, compressor.series * compressor.head_dim
    part = prefix + "compressor"
    tensors = linear(component, part, names["kv"], hidden, width, False)
    tensors += linear(component, part, names["gate"], hidden, width, False)
    tensors.append(Tensor(component, part, names["position_bias"], (compressor.rate, width)))
    tensors += norm(part + "_norm", names["norm"], Norm("rmsnorm", compressor.head_dim))
    return tensors


def dense_ffn_tensors(ffn: DenseFfn, part: str | None = None, leading: tuple[int, ...] = ()) -> list[Tensor]:
    """Gated: gate, up (H → I) and down (I → H), 3 · H · I; plain: up and down, 2 · H · I; plus biases.

    ``part`` puts every tensor under one part (an expert's gate, up and down are its ``routed_experts``).
    """
    names, hidden, width = ffn.names, ffn.hidden_size, ffn.intermediate_size
    shapes = [("gate", hidden, width)] if ffn.gated else []
    shapes += [("up", hidden, width), ("down", width, hidden)]
    tensors = []
    for name, in_f, out_f in shapes:
        tensors += linear(
            "ffn",
            part or name,
            names[name],
            in_f,
            out_f,
            ffn.bias,
            name in names.transposed,
            leading,
            names.parameters,
            names.groups_of(name),
            name in names.pointwise,
        )
    return tensors


def router_rows(moe: MoeFfn) -> int:
    """The router's outputs: the routed experts, any zero experts, and the shared experts where it scores them."""
    return moe.num_experts + moe.zero_experts + (moe.num_shared_experts if moe.scored_shared else 0)


def moe_tensors(moe: MoeFfn) -> list[Tensor]:
    """router H·(E + zero experts) (+ biases), routed experts E · expert (k of E used per token), shared experts,
    shared-expert gate H."""
    names = moe.names
    experts, k = moe.num_experts, moe.experts_per_token
    router_input = moe.router_input or moe.hidden_size
    # With parameter names the router is a raw tensor too (dots3 Note's tower saves mlp.gate_weight)
    router = names["router"]
    tensors = linear(
        "ffn", "router", router, router_input, router_rows(moe), moe.router_bias, parameter_names=names.parameters
    )
    if moe.latent_size is not None:  # the experts' hidden_size is the latent's
        bias = moe.expert.bias
        tensors += linear("ffn", "latent_down", names["latent_in"], moe.hidden_size, moe.latent_size, bias)
        tensors += linear("ffn", "latent_up", names["latent_out"], moe.latent_size, moe.hidden_size, bias)
    module = names["experts"]
    expert = replace(moe.expert, names=moe.expert.names.prefixed(module + "."))
    if "{e}" in module:  # one module per expert
        routed = [replace(t, copies=experts) for t in dense_ffn_tensors(expert, "routed_experts")]
    elif moe.stacking == "stacked":
        routed = dense_ffn_tensors(expert, "routed_experts", leading=(experts,))
    else:  # concatenated along the first axis (DBRX: w1 is [E · I, H])
        routed = [
            replace(t, shape=(experts * t.shape[0],) + t.shape[1:]) for t in dense_ffn_tensors(expert, "routed_experts")
        ]
    tensors += [replace(t, used=k, of=experts) for t in routed]
    if moe.shared is not None:
        leading = (moe.num_shared_experts,) if moe.shared_stacked else ()
        tensors += dense_ffn_tensors(moe.shared, "shared_experts", leading)
    if moe.shared_expert_gate:
        tensors += linear("ffn", "shared_expert_gate", names["shared_expert_gate"], moe.hidden_size, 1, False)
    return tensors


def ffn_tensors(ffn: Ffn) -> list[Tensor]:
    """Dense: gate, up, down. MoE: router, routed experts, shared experts and their gate."""
    return dense_ffn_tensors(ffn) if isinstance(ffn, DenseFfn) else moe_tensors(ffn)


def mixer_tensors(mixer: Mixer) -> list[Tensor]:
    """A mixer's projections, convolutions (weight [channels, 1, kernel] + bias), parameters and norms."""
    tensors: list[Tensor] = []
    for p in mixer.projections:
        tensors += linear(p.component, p.part, p.module, p.in_features, p.out_features, p.bias)
    for conv in mixer.convs:
        part = conv.module.rsplit(".", 1)[-1]
        tensors.append(Tensor("mixer", part, conv.module + ".weight", (conv.channels, 1, conv.kernel)))
        if conv.bias:
            tensors.append(Tensor("mixer", part, conv.module + ".bias", (conv.channels,)))
    tensors += [Tensor(p.component, p.part, p.name, p.shape, matmul=p.matmul) for p in mixer.parameters]
    tensors = [replace(t, component=mixer.component) if t.component == "mixer" else t for t in tensors]
    for module, mixer_norm in mixer.norms:
        tensors += norm("mixer_norm", module, mixer_norm)
    return tensors


def layer_tensors(layer: Layer) -> list[Tensor]:
    """Everything in one layer: attention or another mixer, cross-attention, FFN, and its norms."""
    tensors: list[Tensor] = []
    if layer.attention is not None:
        tensors += attention_tensors(layer.attention)
    if layer.mixer is not None:
        tensors += mixer_tensors(layer.mixer)
    if layer.cross_attention is not None:
        # The encoder output's keys and values are projected once per input, not per generated token.
        tensors += [
            replace(t, runs="once_per_input") if t.part in ("cross_k", "cross_v") else t
            for t in attention_tensors(layer.cross_attention, "cross_attention", "cross_")
        ]
    if layer.ffn is not None:
        tensors += ffn_tensors(layer.ffn)
    for module, layer_norm in layer.norms:
        tensors += norm(module, module, layer_norm)
    tensors += [Tensor(p.component, p.part, p.name, p.shape, matmul=p.matmul, of=p.of) for p in layer.parameters]
    for p in layer.projections:
        tensors += linear(p.component, p.part, p.module, p.in_features, p.out_features, p.bias)
    if layer.borrowed:
        tensors = [replace(t, borrowed=True) if t.name.startswith(layer.borrowed) else t for t in tensors]
    if layer.stack in ("vision", "video", "audio"):  # a tower's parts count under the tower (a video tower: vision)
        component: Component = "audio" if layer.stack == "audio" else "vision"
        tensors = [replace(t, component=component) for t in tensors]
    return tensors


def embedding_width(spec: ModelSpec) -> int:
    return spec.embedding_dim or spec.hidden_size


def lm_head_width(spec: ModelSpec) -> int:
    """The head's input width: the token table's, unless an untied head reads another (RemBERT)."""
    return spec.lm_head_dim or embedding_width(spec)


def lm_head_rows(spec: ModelSpec) -> int:
    """The head's outputs (logits): the token table's rows, unless the head is pruned to fewer (Apertus 1.5)."""
    return spec.lm_head_rows or spec.vocab_size


def extra_tensors(extra: Extra) -> list[Tensor]:
    """A model-level linear, norm, table, patch embedding or learned tensor, under its component (borrowed: another
    module's weight, FLOPs only)."""
    module, part = extra.module, extra.name
    if isinstance(module, Linear):
        tensors = linear(extra.component, part, extra.name, module.in_features, module.out_features, module.bias)
    elif isinstance(module, Norm):
        tensors = [replace(t, component=extra.component) for t in norm(part, extra.name, module)]
    elif isinstance(module, PatchEmbedding):  # a convolution whose stride is its kernel: one matmul per patch
        shape = (module.out_features, module.channels, *module.patch)
        tensors = [Tensor(extra.component, part, extra.name + ".weight", shape, matmul=True)]
        if module.bias:
            tensors.append(Tensor(extra.component, part, extra.name + ".bias", (module.out_features,)))
    elif isinstance(module, LearnedTensor):
        tensors = [Tensor(extra.component, part, extra.name, module.shape, matmul=module.matmul)]
    else:
        tensors = [Tensor(extra.component, part, extra.name + ".weight", (module.rows, module.dim))]
    return [replace(t, runs=extra.runs, borrowed=extra.borrowed) for t in tensors]


def model_tensors(spec: ModelSpec) -> list[Tensor]:
    """Outside the layers: token table, position table, final norm, output head (unless tied), extras."""
    names = spec.names
    width = embedding_width(spec)
    table = names.embed_tokens if names.embedding_parameter else names.embed_tokens + ".weight"
    tensors = [Tensor("embedding", "embed_tokens", table, (spec.vocab_size, width))]
    if spec.position_embeddings:
        shape = (spec.position_embeddings, spec.hidden_size)
        tensors.append(Tensor("embedding", "position_embeddings", names.position_embeddings + ".weight", shape))
    if spec.final_norm is not None:
        tensors += norm("final_norm", names.final_norm, spec.final_norm)
    if spec.lm_head:
        # A tied head is the embedding table; a tied head with a bias (GPT-J style) keeps its bias.
        if not spec.tie_word_embeddings:
            tensors.append(
                Tensor(
                    "lm_head",
                    "lm_head",
                    names.lm_head + ".weight",
                    (lm_head_rows(spec), lm_head_width(spec)),
                    matmul=True,
                    padded_rows=max(0, (spec.lm_head_stored_rows or 0) - lm_head_rows(spec)),
                )
            )
        if spec.lm_head_bias:
            tensors.append(
                Tensor("lm_head", "lm_head", names.lm_head_bias or names.lm_head + ".bias", (lm_head_rows(spec),))
            )
    for extra in spec.extras:
        tensors += extra_tensors(extra)
    return tensors


# --- the checkpoint's view --------------------------------------------------------------------


def layer_indices(layers: Iterable[Layer]) -> Iterator[tuple[int, Layer]]:
    """Each layer with the index it is stored under: its index within its stack (T5 numbers encoder and decoder blocks
    apart), less its index_offset (a stage's layers count from 0); a layer that continues the previous one is stored
    under its index."""
    position: dict[str, int] = {}
    for layer in layers:
        index = position.get(layer.stack, 0)
        if layer.continues and index:
            index -= 1
        else:
            position[layer.stack] = index + 1
        yield index - layer.index_offset, layer


def assemble(tensors: Iterable[Tensor], prefix: str = "") -> Iterator[tuple[str, tuple[int, ...], Tensor]]:
    """(stored name, shape, first part's tensor): experts listed one by one, fused parts joined along their output axis;
    a borrowed tensor is stored with the layer that holds it, not here."""
    joined: dict[str, tuple[tuple[int, ...], Tensor]] = {}
    for tensor in tensors:
        if tensor.borrowed:
            continue
        names = (
            [tensor.name.replace("{e}", str(e)) for e in range(tensor.copies)]
            if "{e}" in tensor.name
            else [tensor.name]
        )
        for name in names:
            full = prefix + name
            if full in joined:
                shape, first = joined[full]
                grown = list(shape)
                grown[tensor.concat_axis] += tensor.shape[tensor.concat_axis]
                joined[full] = (tuple(grown), first)
            else:
                joined[full] = (tensor.shape, tensor)
    for name, (shape, tensor) in joined.items():
        yield name, (shape[0] + tensor.padded_rows, *shape[1:]) if tensor.padded_rows else shape, tensor


def stored_layer(
    layer: Layer, index: int, tensors: Iterable[Tensor] | None = None
) -> Iterator[tuple[str, tuple[int, ...], Tensor]]:
    """A layer's tensors as stored at INDEX: under its module (``{i}`` its index; none where the layer's name is
    empty), and with ``{i}`` in a part's own module replaced too, for a model that keeps each kind of sublayer in a
    list of its own (XLM: attentions.{i}, layer_norm1.{i}, ffns.{i})."""
    prefix = layer.name.format(i=index) + "." if layer.name else ""
    for name, shape, tensor in assemble(layer_tensors(layer) if tensors is None else tensors, prefix):
        yield name.replace("{i}", str(index)), shape, tensor


def stored_parameters(spec: ModelSpec) -> Iterator[tuple[str, tuple[int, ...], Tensor]]:
    """Every parameter tensor as a checkpoint of the model names and shapes it, with the tensor it holds."""
    yield from assemble(model_tensors(spec))
    cache: dict[Layer, list[Tensor]] = {}
    for index, layer in layer_indices(spec.layers):
        tensors = cache.get(layer)
        if tensors is None:
            tensors = cache[layer] = layer_tensors(layer)
        yield from stored_layer(layer, index, tensors)


def checkpoint_tensors(spec: ModelSpec) -> dict[str, tuple[int, ...]]:
    """Every parameter tensor as a checkpoint of the model stores it: full name → shape."""
    return {name: shape for name, shape, _ in stored_parameters(spec)}
