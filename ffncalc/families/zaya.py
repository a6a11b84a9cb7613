"""Zyphra's ZAYA: Compressed Convolutional Attention (q and k mixed by two short convolutions, values half from the
previous token) and a top-1 MoE whose router is a small MLP that carries its state from layer to layer."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, model_validator

from ..schema import MAX_LAYERS, ExpertCount, Flag, HeadCount, LayerCount, Name, PositionCount, Width, derives
from ..spec import (
    CheckpointExtra,
    Extra,
    Layer,
    LearnedTensor,
    Mixer,
    ModelSpec,
    MoeFfn,
    Norm,
    Parameter,
    Projection,
    StoredTensor,
    names,
)
from ..values import replace
from .base import DecoderConfig
from .blocks import entries_check
from .gemma import STACKED_EXPERTS
from .registry import family

CCA = "self_attn.qkv_proj."
ZAYA_ATTENTION = names(q=CCA + "q_proj", k=CCA + "k_proj", o="self_attn.o_proj")
ROUTER = "mlp.gate."
RESIDUAL_SCALES = ("hidden_states_scale", "hidden_states_bias", "residual_scale", "residual_bias")


@family(
    "zaya",
    transformers="ZayaConfig",
    architecture="ZAYA",
    model_class="ZayaForCausalLM",
    heads_divide_hidden=False,  # head_dim is a field; validate_architecture checks only the key-value grouping
    routing=("num_experts_per_tok", "num_experts"),
    read_beyond={"intermediate_size": "ZayaConfig has none: every layer is an MoE"},
)
class ZayaConfig(DecoderConfig):
    """configuration_zaya.py / modeling_zaya.py (ZAYA1). ZayaCCAProjection: q_proj (heads · head_dim) and k_proj
    (kv heads · head_dim) from the hidden state, their outputs concatenated (C = (heads + kv heads) · head_dim
    channels) through conv_qk_depthwise (a depthwise convolution of cca_time0 taps, with bias) and conv_qk_grouped
    (heads + kv heads groups of head_dim channels, cca_time1 taps, with bias: C · head_dim · cca_time1 weights, a
    multiply-add each per token), plus residual paths; the values from v_proj_current and v_proj_delayed (each kv
    heads · head_dim / 2; the delayed half is the previous token's). All biased by attention_bias, as is o_proj.
    ZayaQKNorm L2-normalises q and k and scales each key head by temp (one per kv head). Layers of layer_types
    'hybrid_sliding' attend within sliding_window ('hybrid': the whole context; the default for every layer).

    The MoE: ZayaRouter's down_proj (hidden → router_hidden_size, biased), router_states_scale (one per router unit,
    from layer 1: the previous layer's router state is added), router_mlp (an RMSNorm, fc1 and fc2 of
    router_hidden_size with biases, out_proj to num_experts + 1 classes, the last a skip expert that holds and costs
    nothing), its balancing_biases buffer; num_experts stacked experts of moe_intermediate_size; one expert a token
    (validate_architecture requires num_experts_per_tok 1). Each layer's two residual additions are scaled and
    biased (post_attention_residual_scale, post_mlp_residual_scale: four vectors of hidden each), and so is the
    embedding (input_hidden_states_scale, input_hidden_states_bias). The head has a bias with lm_head_bias."""

    attention_names = ZAYA_ATTENTION
    moe_names = names(router=ROUTER + "router_mlp.out_proj", experts="mlp.experts")
    expert_names = STACKED_EXPERTS

    attention_bias: Flag
    hidden_act: Name
    num_hidden_layers: LayerCount
    num_key_value_heads: HeadCount
    head_dim: Width
    max_position_embeddings: PositionCount
    tie_word_embeddings: Flag
    sliding_window: Width | None
    moe_intermediate_size: Width
    num_experts_per_tok: Literal[1]
    num_experts: ExpertCount
    router_hidden_size: Width
    cca_time0: Width
    cca_time1: Width
    lm_head_bias: Flag
    layer_types: Annotated[list[Literal["hybrid", "hybrid_sliding"]], Field(max_length=MAX_LAYERS)] | None

    _check_layer_types = entries_check("layer_types", exact=True)  # validate_layer_type: one per layer

    @model_validator(mode="after")
    def _check_window(self) -> ZayaConfig:
        if self.sliding_window is None and "hybrid_sliding" in self.kinds():
            raise ValueError("sliding_window is null, but a layer is hybrid_sliding (ZayaConfig refuses it)")
        return self

    @derives("layer_types", "hybrid on every layer")
    def kinds(self) -> list[str]:
        return list(self.layer_types) if self.layer_types is not None else ["hybrid"] * self.num_hidden_layers

    def unused_fields(self) -> set[str]:
        return {"intermediate_size"} | (set() if "hybrid_sliding" in self.kinds() else {"sliding_window"})

    def layer_windows(self) -> list[int | None]:
        return [self.sliding_window if kind == "hybrid_sliding" else None for kind in self.kinds()]

    def convolutions(self) -> Mixer:
        """CCA's two convolutions over q and k, as parameters of the attention a token multiplies by; their windows
        (cca_time0 − 1 + cca_time1 − 1 inputs of C channels) and the delayed value half are state each sequence
        keeps."""
        head_dim = self.resolved_head_dim
        channels = (self.num_attention_heads + self.kv_heads) * head_dim
        depthwise, grouped = CCA + "conv_qk_depthwise", CCA + "conv_qk_grouped"
        return Mixer(
            kind="cca",
            projections=(),
            parameters=(
                Parameter("attention", "cca_conv", depthwise + ".weight", (channels, 1, self.cca_time0), matmul=True),
                Parameter("attention", "cca_conv", depthwise + ".bias", (channels,)),
                Parameter(
                    "attention", "cca_conv", grouped + ".weight", (channels, head_dim, self.cca_time1), matmul=True
                ),
                Parameter("attention", "cca_conv", grouped + ".bias", (channels,)),
            ),
            state_elements=channels * (self.cca_time0 - 1 + self.cca_time1 - 1) + self.kv_heads * head_dim // 2,
            component="attention",
        )

    def moe(self) -> MoeFfn:
        # The router's skip class: a zero expert (it holds and costs nothing; its output is zero, not the input).
        moe = self.moe_ffn(self.num_experts, self.num_experts_per_tok, self.moe_intermediate_size)
        return replace(moe, zero_experts=1, router_input=self.router_hidden_size)

    def build_layer(self, index: int, window: int | None) -> Layer:
        hidden, router, bias = self.hidden_size, self.router_hidden_size, self.attention_biased
        half_values = self.kv_heads * self.resolved_head_dim // 2
        projections = (
            Projection("v", CCA + "v_proj_current", hidden, half_values, bias, component="attention"),
            Projection("v", CCA + "v_proj_delayed", hidden, half_values, bias, component="attention"),
            Projection("router", ROUTER + "down_proj", hidden, router, True, component="ffn"),
            Projection("router", ROUTER + "router_mlp.fc1", router, router, True, component="ffn"),
            Projection("router", ROUTER + "router_mlp.fc2", router, router, True, component="ffn"),
        )
        parameters = [Parameter("norm", "qk_norm", "self_attn.qk_norm.temp", (self.kv_heads,))]
        if index:  # the first layer's router has no state from a previous one
            parameters.append(Parameter("ffn", "router", ROUTER + "router_states_scale", (router,)))
        parameters += [
            Parameter("other", "residual_scale", f"{module}.{name}", (hidden,))
            for module in ("post_attention_residual_scale", "post_mlp_residual_scale")
            for name in RESIDUAL_SCALES
        ]
        # Values come from the two half projections above, not from a v of the attention's own.
        attention = self.attention(window, values_from_keys=True)
        norms = (*self.pre_norms(), (ROUTER + "router_mlp.norm", Norm("rmsnorm", router)))
        return self.layer(
            attention,
            self.moe(),
            norms,
            mixer=self.convolutions(),
            projections=projections,
            parameters=tuple(parameters),
        )

    def checkpoint_extras(self) -> tuple[CheckpointExtra, ...]:
        classes = self.num_experts + 1
        balancing = CheckpointExtra(
            name="router balancing_biases",
            reason=f"{self.num_hidden_layers} layers × {classes} router classes; a buffer set by load balancing",
            tensors=(StoredTensor(self.layer_name + "." + ROUTER + "balancing_biases", (classes,)),),
            per_layer=tuple(range(self.num_hidden_layers)),
            buffer=True,
        )
        return (*self.rotary_extras(), balancing)

    def to_spec(self) -> ModelSpec:
        hidden = self.hidden_size
        extras = tuple(
            Extra("other", f"model.input_hidden_states_{name}", LearnedTensor((hidden,))) for name in ("scale", "bias")
        )
        return replace(super().to_spec(), extras=extras, lm_head_bias=self.lm_head_bias)
