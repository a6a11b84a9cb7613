"""Hybrid stacks whose layers are not all attention: Qwen3-Next (Gated DeltaNet) and Nemotron-H (Mamba-2)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from ..schema import ExpertCount, ExpertCountOrZero, Flag, HeadCount, LayerCount, Name, Width
from ..spec import DenseFfn, GatedDeltaNet, Layer, Mamba2, MoeFfn
from .base import DecoderConfig
from .qwen import QwenSparseLayers

NEMOTRON_BLOCKS = {"M": "mamba", "*": "attention", "-": "mlp", "E": "moe"}


class Qwen3NextConfig(QwenSparseLayers):
    """configuration_qwen3_next.py / modeling_qwen3_next.py.

    Every full_attention_interval-th layer is gated attention (q_proj doubled for the output
    gate, per-head q/k RMSNorms); the others are Gated DeltaNet linear attention. FFNs are MoE
    (unless in mlp_only_layers or off the decoder_sparse_step) with a gated shared expert.
    """

    architecture = "Qwen3-Next"
    layer_types: list[Literal["full_attention", "linear_attention"]] | None = None
    full_attention_interval: LayerCount = 4
    linear_num_key_heads: HeadCount = 16
    linear_num_value_heads: HeadCount = 32
    linear_key_head_dim: Width = 128
    linear_value_head_dim: Width = 128
    linear_conv_kernel_dim: Width = 4
    num_experts: ExpertCountOrZero = 512
    num_experts_per_tok: ExpertCount = 10
    moe_intermediate_size: Width = 512
    shared_expert_intermediate_size: Width | None = 512

    def kinds(self) -> list[str]:
        if self.layer_types is not None:
            return list(self.layer_types)
        interval = self.full_attention_interval
        return ["full_attention" if (i + 1) % interval == 0 else "linear_attention" for i in range(self.num_hidden_layers)]

    def layer_windows(self) -> list[int | None]:
        return [None] * self.num_hidden_layers

    def build_layer(self, index: int, window: int | None) -> Layer:
        ffn = self.qwen_ffn(index)
        if self.kinds()[index] == "full_attention":
            attention = self.attention(None, q_gate=True, **self.per_head_norms())
            return Layer(attention, ffn, self.pre_norms())
        mixer = GatedDeltaNet(
            self.hidden_size,
            self.linear_num_key_heads,
            self.linear_num_value_heads,
            self.linear_key_head_dim,
            self.linear_value_head_dim,
            self.linear_conv_kernel_dim,
        )
        return Layer(None, ffn, self.pre_norms(), mixer=mixer)


class NemotronHConfig(DecoderConfig):
    """configuration_nemotron_h.py / modeling_nemotron_h.py: hybrid_override_pattern names each
    layer's one block — M Mamba-2, * attention, - MLP (ReLU², not gated), E MoE — behind one
    RMSNorm. intermediate_size is the MLP width."""

    architecture = "Nemotron-H"
    hybrid_override_pattern: Name = Field(max_length=16384)
    num_hidden_layers: LayerCount | None = None  # the pattern decides; transformers ignores this
    head_dim: Width | None = Field(None, validation_alias="attention_head_dim")
    mamba_num_heads: HeadCount = 128
    mamba_head_dim: Width = 64
    n_groups: HeadCount = 8
    ssm_state_size: Width = 128
    conv_kernel: Width = 4
    use_bias: Flag = False
    use_conv_bias: Flag = True
    mlp_bias: Flag = False
    mlp_hidden_act: Name = "relu2"
    n_routed_experts: ExpertCount = 8
    num_experts_per_tok: ExpertCount = 2
    moe_intermediate_size: Width = 7688
    moe_shared_expert_intermediate_size: Width = 7688

    @model_validator(mode="before")
    @classmethod
    def _layers_from_pattern(cls, data):
        if isinstance(data, dict) and isinstance(data.get("hybrid_override_pattern"), str):
            data = {**data, "num_hidden_layers": len(data["hybrid_override_pattern"]) or None}
        return data

    @model_validator(mode="after")
    def _check_pattern(self) -> "NemotronHConfig":
        unknown = sorted(set(self.hybrid_override_pattern) - set(NEMOTRON_BLOCKS))
        if unknown:
            raise ValueError(f"hybrid_override_pattern has unknown block letters {unknown}; known: M * - E")
        return self

    def layer_windows(self) -> list[int | None]:
        return [None] * len(self.hybrid_override_pattern)

    def mlp(self, width: int) -> DenseFfn:
        return DenseFfn(self.hidden_size, width, gated=False, activation=self.mlp_hidden_act, bias=self.mlp_bias)

    def build_layer(self, index: int, window: int | None) -> Layer:
        block = NEMOTRON_BLOCKS[self.hybrid_override_pattern[index]]
        norms = (("norm", self.rms_norm()),)
        if block == "mamba":
            mixer = Mamba2(
                self.hidden_size,
                self.mamba_num_heads,
                self.mamba_head_dim,
                self.n_groups,
                self.ssm_state_size,
                self.conv_kernel,
                proj_bias=self.use_bias,
                conv_bias=self.use_conv_bias,
            )
            return Layer(None, None, norms, mixer=mixer)
        if block == "attention":
            attention = self.attention(None, q_bias=False, k_bias=False, v_bias=False, o_bias=False)
            return Layer(attention, None, norms)
        if block == "mlp":
            return Layer(None, self.mlp(self.intermediate_size), norms)
        moe = MoeFfn(
            self.hidden_size,
            self.n_routed_experts,
            self.num_experts_per_tok,
            self.mlp(self.moe_intermediate_size),
            shared=self.mlp(self.moe_shared_expert_intermediate_size),
            num_shared_experts=1,
        )
        return Layer(None, moe, norms)
