"""Granite (configuration_granite.py), Granite-MoE and its shared-expert variant, and Granite's sliding-window
variants (Granite-SWA, Granite-MoE-SWA); HyperCLOVA X, Granite with norms on each block's output."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field

from ..schema import (
    ExpertCount,
    Flag,
    HeadCount,
    LayerCount,
    Name,
    PositionCount,
    Width,
    WidthOrZero,
    derives,
    per_config,
)
from ..spec import Attention, Layer, names
from .base import (
    DecoderConfig,
)
from .blocks import windows_of_layer_types
from .registry import family


@family(
    "granite",
    transformers="GraniteConfig",
    architecture="Granite",
    model_class="GraniteForCausalLM",
    heads_divide_hidden=False,  # configuration_*.py floors hidden_size // num_attention_heads
    read_beyond={"head_dim": "read by the modeling code with getattr"},
)
class GraniteConfig(
    DecoderConfig,
):
    """configuration_granite.py: Llama's modules; its embedding, attention, residual and logits
    multipliers scale activations, not parameters."""

    num_hidden_layers: LayerCount
    intermediate_size: Width
    tie_word_embeddings: Flag
    mlp_bias: Flag
    attention_bias: Flag
    max_position_embeddings: PositionCount
    num_key_value_heads: HeadCount | None
    hidden_act: Name
    head_dim: Width | None = None


@family(
    "hyperclovax",
    transformers="HyperCLOVAXConfig",
    architecture="HyperCLOVA X",
    model_class="HyperCLOVAXForCausalLM",
    heads_divide_hidden=True,
)
class HyperClovaXConfig(GraniteConfig):
    """configuration_hyperclovax.py / modular_hyperclovax.py (HyperCLOVA X SEED): Granite's layer with, under
    use_post_norm, an RMSNorm on the attention's output (post_norm1) and on the MLP's (post_norm2) before each
    residual sum (Peri-LN); head_dim a field (default hidden_size // num_attention_heads), and hidden_size must be a
    multiple of num_attention_heads (HyperCLOVAXConfig.validate_architecture)."""

    use_post_norm: Flag

    def build_layer(self, index: int, window: int | None) -> Layer:
        norms = self.pre_norms()
        if self.use_post_norm:
            norm = self.rms_norm()
            norms += (("post_norm1", norm), ("post_norm2", norm))
        return self.layer(self.attention(window), self.gated_ffn(), norms)


@family(
    "granitemoe",
    transformers="GraniteMoeConfig",
    architecture="Granite-MoE",
    model_class="GraniteMoeForCausalLM",
    heads_divide_hidden=False,  # configuration_*.py floors hidden_size // num_attention_heads
    routing=("num_experts_per_tok", "num_local_experts"),
    read_beyond={"head_dim": "read by the modeling code with getattr"},
)
class GraniteMoeConfig(DecoderConfig):
    """configuration_granitemoe.py / modeling_granitemoe.py: Llama attention (no mlp_bias); every FFN
    a MoE whose experts are stored stacked, gate and up fused (input_linear [E, 2I, H],
    output_linear [E, H, I]), routed by router.layer."""

    moe_names = names(router="block_sparse_moe.router.layer", experts="block_sparse_moe")
    expert_names = names(gate="input_linear", up="input_linear", down="output_linear")

    num_hidden_layers: LayerCount
    intermediate_size: Width
    tie_word_embeddings: Flag
    attention_bias: Flag
    max_position_embeddings: PositionCount
    num_key_value_heads: HeadCount | None
    hidden_act: Name
    head_dim: Width | None = None
    num_local_experts: ExpertCount
    num_experts_per_tok: ExpertCount

    def build_layer(self, index: int, window: int | None) -> Layer:
        moe = self.moe_ffn(self.num_local_experts, self.num_experts_per_tok, self.intermediate_size)
        return self.layer(self.attention(window), moe)


@family(
    "granitemoeshared",
    transformers="GraniteMoeSharedConfig",
    architecture="Granite-MoE-Shared",
    model_class="GraniteMoeSharedForCausalLM",
)
class GraniteMoeSharedConfig(GraniteMoeConfig):
    """configuration_granitemoeshared.py / modular_granitemoeshared.py: Granite-MoE's layer plus, with
    shared_intermediate_size > 0, a shared MLP beside the experts in every layer, gate and up fused
    (shared_mlp.input_linear [2S, H], output_linear [H, S])."""

    shared_names = names(gate="shared_mlp.input_linear", up="shared_mlp.input_linear", down="shared_mlp.output_linear")

    shared_intermediate_size: WidthOrZero

    def build_layer(self, index: int, window: int | None) -> Layer:
        moe = self.moe_ffn(
            self.num_local_experts,
            self.num_experts_per_tok,
            self.intermediate_size,
            shared_width=self.shared_intermediate_size,
            shared_names=self.shared_names,
        )
        return self.layer(self.attention(window), moe)


if TYPE_CHECKING:  # a mixin: it relies on what its model class has
    _SlidingWithSinksBase = DecoderConfig
else:
    _SlidingWithSinksBase = object


class _SlidingWithSinks(_SlidingWithSinksBase):
    """Granite-SWA's attention: a learned sink logit per head (self_attn.sinks) in every layer; ``layer_types``
    (default: layer i full when i % 4 == 0, the others sliding) gives the sliding layers a window of
    sliding_window. layer_rope_theta (0: no RoPE in that layer) changes no parameter."""

    sliding_window: int | None
    layer_types: Sequence[str] | None  # each family narrows it to its own layer types

    def attention(self, window: int | None, **overrides: Any) -> Attention:
        return super().attention(window, sinks=True, **overrides)

    @derives("layer_types", "full_attention where i % 4 == 0, the others sliding_attention")
    @per_config
    def kinds(self) -> list[str]:
        if self.layer_types is not None:
            return list(self.layer_types)
        return ["full_attention" if i % 4 == 0 else "sliding_attention" for i in range(self.layer_count)]

    def layer_windows(self) -> list[int | None]:
        return windows_of_layer_types(self.kinds(), self.sliding_window)


@family("granite_swa", transformers="GraniteSWAConfig", architecture="Granite-SWA", model_class="GraniteSWAForCausalLM")
class GraniteSWAConfig(_SlidingWithSinks, GraniteConfig):
    """configuration_granite_swa.py / modular_granite_swa.py: Granite's layer with Granite-SWA's attention (sinks,
    sliding windows)."""

    sliding_window: Width | None
    layer_types: Annotated[list[Literal["full_attention", "sliding_attention"]] | None, Field(max_length=1 << 14)]


@family(
    "granitemoe_swa",
    transformers="GraniteMoeSWAConfig",
    architecture="Granite-MoE-SWA",
    model_class="GraniteMoeSWAForCausalLM",
)
class GraniteMoeSWAConfig(_SlidingWithSinks, GraniteMoeSharedConfig):
    """configuration_granitemoe_swa.py / modular_granitemoe_swa.py: Granite-MoE-Shared's layer (experts, and a shared
    MLP when shared_intermediate_size > 0) with Granite-SWA's attention (sinks, sliding windows)."""

    # transformers 5.24 has no conversion for this model_type (GraniteMoe's renames input_linear and output_linear):
    # its checkpoints keep the modules' own names, the experts stacked as gate_up_proj [E, 2I, H], down_proj [E, H, I].
    moe_names = names(router="block_sparse_moe.router", experts="block_sparse_moe.experts")
    expert_names = names(gate="gate_up_proj", up="gate_up_proj", down="down_proj", parameters=True)

    sliding_window: Width | None
    layer_types: Annotated[list[Literal["full_attention", "sliding_attention"]] | None, Field(max_length=1 << 14)]
