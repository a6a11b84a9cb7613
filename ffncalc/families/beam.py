"""Beam: Qwen3-MoE's attention with a per-element output gate (and a bias per head), Gemma's four norms a layer,
sliding and full layers by layer_types, and a DeepSeek-style grouped router over stacked experts after three dense
layers."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from ..schema import MAX_LAYERS, ExpertCount, Flag, HeadCount, LayerCount, Name, PositionCount, Width, derives
from ..spec import CheckpointExtra, Layer, Parameter, Projection, names
from .base import DecoderConfig
from .blocks import MlpLayerTypes, entries_check, windows_of_layer_types
from .deepseek import correction_bias_extra
from .registry import family


@family(
    "beam",
    transformers="BeamConfig",
    architecture="Beam",
    model_class="BeamForCausalLM",
    heads_divide_hidden=False,  # head_dim is a field; validate_architecture checks only the key-value grouping
    routing=("num_experts_per_tok", "num_experts"),
)
class BeamConfig(MlpLayerTypes, DecoderConfig):
    """configuration_beam.py / modular_beam.py: BeamAttention is Qwen3-MoE's (q, k, v, o with attention_bias, an
    RMSNorm over each query and key head, head_dim wide) plus gate_proj (hidden → heads · head_dim, no bias) and
    gate_bias (one per head): the output is scaled by sigmoid(gate_proj(x) + gate_bias) before o_proj. Layers
    layer_types marks sliding attend within sliding_window (default: every sixth layer and the last full). Each
    layer has four RMSNorms (input, post_attention, pre_feedforward, post_feedforward). mlp_layer_types (default:
    min(3, layers) dense, then sparse) picks a SwiGLU of intermediate_size or an MoE: a router (num_experts × hidden,
    with an e_score_correction_bias buffer, grouped top-k over n_group groups) and num_experts stacked experts of
    moe_intermediate_size, no shared expert. transformers saves the experts one module each (conversion_mapping.py:
    beam → qwen2_moe's): mlp.experts.{e}.gate_proj, up_proj, down_proj."""

    moe_names = names(router="mlp.gate", experts="mlp.experts.{e}")

    tie_word_embeddings: Flag
    attention_bias: Flag
    hidden_act: Name
    intermediate_size: Width
    num_hidden_layers: LayerCount
    num_key_value_heads: HeadCount
    head_dim: Width
    max_position_embeddings: PositionCount
    sliding_window: Width | None
    moe_intermediate_size: Width
    num_experts_per_tok: ExpertCount
    num_experts: ExpertCount
    layer_types: Annotated[list[Literal["full_attention", "sliding_attention"]], Field(max_length=MAX_LAYERS)] | None
    mlp_layer_types: Annotated[list[Literal["dense", "sparse"]], Field(max_length=MAX_LAYERS)] | None

    _check_layer_types = entries_check("layer_types", exact=True)
    _check_mlp_layer_types = entries_check("mlp_layer_types", exact=True)

    @derives("layer_types", "sliding_attention, every sixth layer and the last full_attention")
    def kinds(self) -> list[str]:
        if self.layer_types is not None:
            return list(self.layer_types)
        count = self.num_hidden_layers
        return ["full_attention" if (i + 1) % 6 == 0 or i == count - 1 else "sliding_attention" for i in range(count)]

    @derives("mlp_layer_types", "min(3, num_hidden_layers) dense layers, then sparse")
    def default_mlp_kinds(self) -> list[str]:
        dense = min(3, self.num_hidden_layers)
        return ["dense"] * dense + ["sparse"] * (self.num_hidden_layers - dense)

    def unused_fields(self) -> set[str]:
        unused = set() if "sliding_attention" in self.kinds() else {"sliding_window"}
        return unused | self.unused_ffn_fields({"num_experts", "num_experts_per_tok", "moe_intermediate_size"})

    def layer_windows(self) -> list[int | None]:
        return windows_of_layer_types(self.kinds(), self.sliding_window)

    def pre_norms(self):
        norm = self.rms_norm()
        return tuple(
            (name, norm)
            for name in (
                "input_layernorm",
                "post_attention_layernorm",
                "pre_feedforward_layernorm",
                "post_feedforward_layernorm",
            )
        )

    def build_layer(self, index: int, window: int | None) -> Layer:
        heads, width = self.num_attention_heads, self.num_attention_heads * self.resolved_head_dim
        gate = Projection("gate_proj", "self_attn.gate_proj", self.hidden_size, width, component="attention")
        gate_bias = Parameter("attention", "gate_bias", "self_attn.gate_bias", (heads,))
        attention = self.attention(window, **self.per_head_norms())
        ffn = (
            self.moe_ffn(self.num_experts, self.num_experts_per_tok, self.moe_intermediate_size)
            if self.sparse(index)
            else self.gated_ffn()
        )
        return self.layer(attention, ffn, projections=(gate,), parameters=(gate_bias,))

    def checkpoint_extras(self) -> tuple[CheckpointExtra, ...]:
        sparse = tuple(i for i in range(self.num_hidden_layers) if self.sparse(i))
        extras = self.rotary_extras()
        return extras + (correction_bias_extra(self.layer_name, sparse, self.num_experts),) if sparse else extras
