"""Llama 4 (configuration_llama4.py): its text model (MoE every interleave_moe_layer_step layers, no RoPE in some)
and the multimodal wrapper with its vision tower."""

from __future__ import annotations

from typing import Literal

from ..schema import (
    ExpertCount,
    Flag,
    HeadCount,
    LayerCount,
    LayerIndex,
    Name,
    PositionCount,
    Width,
    derives,
    per_config,
)
from ..spec import Extra, Layer, Linear, names
from .base import DecoderConfig
from .blocks import is_sparse, windows_of_layer_types
from .multimodal import MultimodalConfig
from .registry import family
from .towers import Tower, projector_module


@family(
    "llama4_text",
    transformers="Llama4TextConfig",
    architecture="Llama-4",
    model_class="Llama4ForCausalLM",
    heads_divide_hidden=False,  # configuration_*.py floors hidden_size // num_attention_heads
    routing=("num_experts_per_tok", "num_local_experts"),
)
class Llama4TextConfig(DecoderConfig):
    """configuration_llama4.py (text model) / modeling_llama4.py.

    MoE on the layers in ``moe_layers`` (default every interleave_moe_layer_step-th), each with a
    shared expert of width intermediate_size and routed experts stored stacked and transposed;
    dense layers use intermediate_size_mlp. q/k are L2-normalised (no parameters). Layers whose
    ``layer_types`` entry is chunked_attention (default: all but every no_rope_layer_interval-th)
    attend within chunks of attention_chunk_size: a token sees the keys of its own chunk, at
    most that many.
    """

    mlp_names = names(gate="feed_forward.gate_proj", up="feed_forward.up_proj", down="feed_forward.down_proj")
    moe_names = names(router="feed_forward.router", experts="feed_forward.experts")
    expert_names = names(gate="gate_up_proj", up="gate_up_proj", down="down_proj", transposed=True, parameters=True)
    shared_names = names(
        gate="feed_forward.shared_expert.gate_proj",
        up="feed_forward.shared_expert.up_proj",
        down="feed_forward.shared_expert.down_proj",
    )

    num_hidden_layers: LayerCount
    intermediate_size: Width
    tie_word_embeddings: Flag
    hidden_act: Name
    intermediate_size_mlp: Width
    num_key_value_heads: HeadCount | None
    head_dim: Width | None
    max_position_embeddings: PositionCount
    num_local_experts: ExpertCount
    num_experts_per_tok: ExpertCount
    interleave_moe_layer_step: LayerCount
    moe_layers: list[LayerIndex] | None
    no_rope_layers: list[Literal[0, 1]] | None
    no_rope_layer_interval: LayerCount
    attention_chunk_size: Width | None
    layer_types: list[Literal["full_attention", "chunked_attention"]] | None
    attention_bias: Flag

    @derives("moe_layers", "every interleave_moe_layer_step-th layer")
    def moe_layer_list(self) -> list[int]:
        return sorted(self.sparse_layers())

    @per_config
    def sparse_layers(self) -> set[int]:
        if self.moe_layers is not None:
            return set(self.moe_layers)
        step = self.interleave_moe_layer_step
        return {i for i in range(self.num_hidden_layers) if is_sparse(i, every=step, phase=step - 1)}

    @derives("no_rope_layers", "all but every no_rope_layer_interval-th layer")
    @per_config
    def rope_layers(self) -> list[int]:
        if self.no_rope_layers:
            return list(self.no_rope_layers)
        return [int((i + 1) % self.no_rope_layer_interval != 0) for i in range(self.num_hidden_layers)]

    @derives("layer_types", "chunked_attention where no_rope_layers is 1, else full_attention")
    @per_config
    def kinds(self) -> list[str]:
        if self.layer_types is not None:
            return list(self.layer_types)
        chunked = self.attention_chunk_size is not None
        return ["chunked_attention" if rope and chunked else "full_attention" for rope in self.rope_layers()]

    def layer_windows(self) -> list[int | None]:
        return windows_of_layer_types(self.kinds(), self.attention_chunk_size)

    def build_layer(self, index: int, window: int | None) -> Layer:
        attention = self.attention(window, chunked=window is not None)
        if index not in self.sparse_layers():
            return self.layer(attention, self.gated_ffn(self.intermediate_size_mlp))
        moe = self.moe_ffn(
            self.num_local_experts,
            self.num_experts_per_tok,
            self.intermediate_size,
            shared_width=self.intermediate_size,
            shared_names=self.shared_names,
        )
        return self.layer(attention, moe)


@family("llama4", transformers="Llama4Config", architecture="Llama-4", model_class="Llama4ForConditionalGeneration")
class Llama4Config(MultimodalConfig):
    """configuration_llama4.py: a vision encoder and a projector around a Llama-4 text model; the
    top-level tie_word_embeddings (default false) decides tying."""

    # AutoModelForCausalLM (the text-generation mapping) builds Llama4ForCausalLM: the language model alone.
    text_only_classes = frozenset({"Llama4ForCausalLM"})
    text_model_type = "llama4_text"
    vision_model_type = "llama4_vision_model"
    vision_prefix = "vision_model."

    def projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        """Llama4MultiModalProjector: one linear from vision_output_dim to the text width, without bias."""
        return (projector_module("multi_modal_projector.linear_1", Linear(tower.hidden_size, text_hidden)),)
