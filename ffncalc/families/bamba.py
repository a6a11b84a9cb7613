"""IBM's Mamba-2 hybrids: Bamba (Mamba-2 layers with attention at attn_layer_indices, a gated MLP in every
layer) and Granite-4.0's GraniteMoeHybrid, which extends it with Granite-MoE's experts beside a shared MLP."""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal

from pydantic import Field

from ..schema import (
    ExpertCount,
    ExpertCountOrZero,
    Flag,
    HeadCount,
    LayerCount,
    LayerIndex,
    Name,
    PositionCount,
    Width,
    WidthOrZero,
    derives,
)
from ..spec import DenseFfn, Layer, Mixer, ModelNames, MoeFfn, names
from .base import DecoderConfig
from .blocks import MambaHeads, mamba_heads_check
from .mixers import mamba2, mamba2_names
from .registry import family

BAMBA_MAMBA = mamba2_names("mamba.")


class BambaLayers(MambaHeads, DecoderConfig):
    """configuration_bamba.py / modeling_bamba.py.

    Layers in attn_layer_indices attend (Llama attention, attention_bias), the others run a Mamba-2 mixer of
    mamba_expand · hidden_size in mamba_n_heads heads of mamba_d_head ("auto": the width / heads; transformers
    refuses a head width that does not tile it); every layer then has a gated MLP (feed_forward, mlp_bias),
    with input_layernorm and pre_ff_layernorm.
    """

    architecture = "Bamba"
    config_class = "BambaConfig"
    default_model_class = "BambaForCausalLM"
    heads_divide_hidden = False  # the attention reads head_dim, else floors hidden_size // num_attention_heads
    read_beyond = {"head_dim": "read by the modeling code with getattr"}
    mlp_names = names(gate="feed_forward.gate_proj", up="feed_forward.up_proj", down="feed_forward.down_proj")
    model_names = ModelNames(embed_tokens="model.embed_tokens", final_norm="model.final_layernorm")
    ffn_norm: ClassVar[str] = "pre_ff_layernorm"

    num_hidden_layers: LayerCount
    intermediate_size: Width
    tie_word_embeddings: Flag
    attention_bias: Flag
    hidden_act: Name
    head_dim: Width | None = None
    num_key_value_heads: HeadCount | None
    max_position_embeddings: PositionCount
    mamba_n_heads: HeadCount
    mamba_d_head: Width | Literal["auto"]
    mamba_n_groups: HeadCount
    mamba_d_state: Width
    mamba_d_conv: Width
    mamba_expand: Width
    mamba_conv_bias: Flag
    mamba_proj_bias: Flag

    _check_mamba_heads = mamba_heads_check()

    def unused_fields(self) -> set[str]:
        attends = self.attends()
        unused = set() if any(attends) else {"num_attention_heads", "num_key_value_heads", "attention_bias"}
        if all(attends):
            unused |= {"mamba_d_state", "mamba_d_conv", "mamba_n_groups", "mamba_conv_bias", "mamba_proj_bias"}
        return unused

    def attends(self) -> list[bool]:  # pragma: no cover - each config says which layers attend
        """Whether each layer attends (else it runs a Mamba-2 mixer)."""
        raise NotImplementedError

    def mixer(self) -> Mixer:
        return mamba2(
            self.hidden_size,
            self.mamba_n_heads,
            self.mamba_head_dim(),
            self.mamba_n_groups,
            self.mamba_d_state,
            self.mamba_d_conv,
            BAMBA_MAMBA,
            proj_bias=self.mamba_proj_bias,
            conv_bias=self.mamba_conv_bias,
        )

    def ffn(self) -> DenseFfn | MoeFfn:
        return self.gated_ffn()

    def build_layers(self) -> tuple[Layer, ...]:
        norm = self.rms_norm()
        norms = (("input_layernorm", norm), (self.ffn_norm, norm))
        attention_layer = self.layer(self.attention(None), self.ffn(), norms)
        mamba_layer = self.layer(None, self.ffn(), norms, mixer=self.mixer())
        return tuple(attention_layer if attends else mamba_layer for attends in self.attends())


@family("bamba", transformers="BambaConfig")
class BambaConfig(BambaLayers):
    """configuration_bamba.py: Bamba's layers with the MLP's bias switch, mlp_bias, and the layers that attend listed
    in attn_layer_indices (GraniteMoeHybrid has neither: its layer_types say)."""

    mlp_bias: Flag
    attn_layer_indices: Annotated[list[LayerIndex] | None, Field(max_length=1 << 14)]

    def attends(self) -> list[bool]:
        indices = set(self.attn_layer_indices or ())
        return [index in indices for index in range(self.num_hidden_layers)]


@family(
    "granitemoehybrid",
    transformers="GraniteMoeHybridConfig",
    architecture="Granite-MoE-Hybrid",
    model_class="GraniteMoeHybridForCausalLM",
    routing=("num_experts_per_tok", "num_local_experts"),
)
class GraniteMoeHybridConfig(BambaLayers):
    """configuration_granitemoehybrid.py / modeling_granitemoehybrid.py: Bamba's Mamba-2 and attention layers,
    picked by layer_types (default: every layer Mamba-2), with Granite's norms (input_layernorm,
    post_attention_layernorm) and Granite-MoE's experts (stacked, gate and up fused, routed by router.layer)
    beside a shared MLP of shared_intermediate_size (shared_mlp); with num_local_experts 0, the shared MLP alone.
    Granite's multipliers scale activations, not parameters.
    """

    moe_names = names(router="block_sparse_moe.router.layer", experts="block_sparse_moe")
    expert_names = names(gate="input_linear", up="input_linear", down="output_linear")
    shared_names = names(gate="shared_mlp.input_linear", up="shared_mlp.input_linear", down="shared_mlp.output_linear")
    model_names = ModelNames(embed_tokens="model.embed_tokens", final_norm="model.norm")
    ffn_norm: ClassVar[str] = "post_attention_layernorm"

    num_local_experts: ExpertCountOrZero
    num_experts_per_tok: ExpertCount
    shared_intermediate_size: WidthOrZero
    layer_types: Annotated[
        list[Literal["linear_attention", "full_attention", "mamba", "attention"]] | None, Field(max_length=1 << 14)
    ]

    def unused_fields(self) -> set[str]:
        unused = super().unused_fields()
        return unused if self.num_local_experts else unused | {"num_experts_per_tok", "intermediate_size"}

    @derives("layer_types", "linear_attention for every layer")
    def kinds(self) -> list[str]:
        return list(self.layer_types) if self.layer_types is not None else ["linear_attention"] * self.num_hidden_layers

    def attends(self) -> list[bool]:
        return [kind not in ("linear_attention", "mamba") for kind in self.kinds()]

    def ffn(self) -> DenseFfn | MoeFfn:
        if not self.num_local_experts:
            return DenseFfn(self.hidden_size, self.shared_intermediate_size, True, self.hidden_act, self.shared_names)
        return self.moe_ffn(
            self.num_local_experts,
            self.num_experts_per_tok,
            self.intermediate_size,
            shared_width=self.shared_intermediate_size,
            shared_names=self.shared_names,
        )
