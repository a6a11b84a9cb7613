"""Qwen: Qwen2 (q/k/v biases), Qwen3 (per-head q/k norms), their MoEs (Qwen's sparse-layer rule),
and Qwen3-Next (Gated DeltaNet linear attention beside gated full attention)."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import Field

from ..schema import ExpertCount, ExpertCountOrZero, Flag, HeadCount, LayerCount, LayerIndex, PositionCount, Width
from ..schema import WidthOrZero
from ..spec import CheckpointExtra, DenseFfn, Layer, Mixer, MoeFfn, StoredTensor, names
from .base import DecoderConfig, experts_check
from .blocks import is_sparse, mtp_extra, windows_of_layer_types
from .mixers import gated_deltanet

QWEN_MOE = names(router="mlp.gate", experts="mlp.experts.{e}", shared_expert_gate="mlp.shared_expert_gate")
SHARED_EXPERT = names(gate="mlp.shared_expert.gate_proj", up="mlp.shared_expert.up_proj", down="mlp.shared_expert.down_proj")
GATED_DELTANET = names(
    in_proj_qkv="linear_attn.in_proj_qkvz",
    in_proj_z="linear_attn.in_proj_qkvz",
    in_proj_b="linear_attn.in_proj_ba",
    in_proj_a="linear_attn.in_proj_ba",
    conv1d="linear_attn.conv1d",
    dt_bias="linear_attn.dt_bias",
    A_log="linear_attn.A_log",
    norm="linear_attn.norm",
    out_proj="linear_attn.out_proj",
)


class QwenWindows:
    """Qwen's windows: only with use_sliding_window, then on the layers ≥ max_window_layers (or as
    ``layer_types`` says); transformers drops sliding_window when use_sliding_window is false."""

    num_hidden_layers: int
    use_sliding_window: bool
    sliding_window: int | None
    max_window_layers: int
    layer_types: list[str] | None

    def layer_windows(self) -> list[int | None]:
        window = self.sliding_window if self.use_sliding_window else None
        if self.layer_types is not None:
            return windows_of_layer_types(self.layer_types, window)
        return [window if window is not None and i >= self.max_window_layers else None for i in range(self.num_hidden_layers)]

    def unused_fields(self) -> set[str]:
        return set() if self.use_sliding_window else {"sliding_window", "max_window_layers", "layer_types"}


class Qwen2Config(QwenWindows, DecoderConfig):
    """configuration_qwen2.py / modeling_qwen2.py: q, k and v carry biases, o and the MLP none."""

    architecture = "Qwen2"
    config_class = "Qwen2Config"
    default_model_class = "Qwen2ForCausalLM"
    heads_divide_hidden = False  # configuration_*.py floors hidden_size // num_attention_heads
    undeclared_keys = frozenset({"head_dim"})  # read by the modeling code with getattr

    vocab_size: Width = 151936
    intermediate_size: Width = 22016
    num_key_value_heads: HeadCount | None = 32
    max_position_embeddings: PositionCount = 32768
    use_sliding_window: Flag = False
    sliding_window: Width | None = 4096
    max_window_layers: LayerIndex = 28
    layer_types: list[Literal["full_attention", "sliding_attention"]] | None = None
    attention_bias: ClassVar[bool] = True  # q, k, v; o never has one
    mlp_bias: ClassVar[bool] = False

    def build_layer(self, index: int, window: int | None) -> Layer:
        return self.layer(self.attention(window, o_bias=False), self.gated_ffn())


class Qwen3Config(QwenWindows, DecoderConfig):
    """configuration_qwen3.py: Qwen2's windows; head_dim 128; attention_bias on q, k, v and o; RMSNorm on each query and key head."""

    architecture = "Qwen3"
    config_class = "Qwen3Config"
    default_model_class = "Qwen3ForCausalLM"
    heads_divide_hidden = False  # configuration_*.py floors hidden_size // num_attention_heads
    derived_defaults = {"num_key_value_heads": "num_attention_heads"}

    vocab_size: Width = 151936
    intermediate_size: Width = 22016
    num_key_value_heads: HeadCount | None = 32
    head_dim: Width | None = 128
    max_position_embeddings: PositionCount = 32768
    use_sliding_window: Flag = False
    sliding_window: Width | None = 4096
    max_window_layers: LayerIndex = 28
    layer_types: list[Literal["full_attention", "sliding_attention"]] | None = None
    mlp_bias: ClassVar[bool] = False

    def build_layer(self, index: int, window: int | None) -> Layer:
        return self.layer(self.attention(window, **self.per_head_norms()), self.gated_ffn())


class _QwenMoeRule:
    """Qwen's sparse-layer rule (Qwen2-MoE, Qwen3-MoE, Qwen3-Next): layer i is MoE unless listed in
    mlp_only_layers, when there are experts and (i + 1) is a multiple of decoder_sparse_step."""

    num_experts: int
    decoder_sparse_step: int
    mlp_only_layers: list[int]

    def sparse(self, index: int) -> bool:
        step = self.decoder_sparse_step
        return self.num_experts > 0 and is_sparse(index, every=step, phase=step - 1, exclude=self.mlp_only_layers)


class Qwen3MoeConfig(_QwenMoeRule, DecoderConfig):
    """configuration_qwen3_moe.py: Qwen3 attention (q/k norms; head_dim hidden / heads unless given);
    Qwen's sparse rule; routed experts only (no shared expert, whatever the config says: Qwen3-Coder
    has 0). With use_sliding_window every layer slides."""

    architecture = "Qwen3-MoE"
    config_class = "Qwen3MoeConfig"
    default_model_class = "Qwen3MoeForCausalLM"
    heads_divide_hidden = False  # configuration_*.py floors hidden_size // num_attention_heads
    undeclared_keys = frozenset({"head_dim"})  # read by the modeling code with getattr
    moe_names = QWEN_MOE

    vocab_size: Width = 151936
    hidden_size: Width = 2048
    intermediate_size: Width = 6144
    num_hidden_layers: LayerCount = 24
    num_key_value_heads: HeadCount | None = 4
    max_position_embeddings: PositionCount = 32768
    use_sliding_window: Flag = False
    sliding_window: Width | None = 4096
    num_experts: ExpertCountOrZero = 128
    num_experts_per_tok: ExpertCount = 8
    moe_intermediate_size: Width = 768
    decoder_sparse_step: LayerCount = 1
    mlp_only_layers: list[LayerIndex] = Field(default_factory=list)
    mlp_bias: ClassVar[bool] = False
    _check_experts = experts_check("num_experts_per_tok", "num_experts")

    def layer_windows(self) -> list[int | None]:
        return [self.sliding_window if self.use_sliding_window else None] * self.num_hidden_layers

    def unused_fields(self) -> set[str]:
        return set() if self.use_sliding_window else {"sliding_window"}

    def build_layer(self, index: int, window: int | None) -> Layer:
        ffn = self.moe_ffn(self.num_experts, self.num_experts_per_tok, self.moe_intermediate_size) if self.sparse(index) else self.gated_ffn()
        return self.layer(self.attention(window, **self.per_head_norms()), ffn)


class Qwen2MoeConfig(_QwenMoeRule, Qwen2Config):
    """configuration_qwen2_moe.py: Qwen2 attention (q/k/v biases from qkv_bias); Qwen's sparse rule with
    one shared expert behind a sigmoid gate. Windows: on the odd-numbered layers (i + 1 odd) below
    max_window_layers, with use_sliding_window."""

    architecture = "Qwen2-MoE"
    config_class = "Qwen2MoeConfig"
    default_model_class = "Qwen2MoeForCausalLM"
    moe_names = QWEN_MOE

    hidden_size: Width = 2048
    intermediate_size: Width = 5632
    num_hidden_layers: LayerCount = 24
    num_attention_heads: HeadCount = 16
    num_key_value_heads: HeadCount | None = 16
    qkv_bias: Flag = True
    num_experts: ExpertCountOrZero = 60
    num_experts_per_tok: ExpertCount = 4
    moe_intermediate_size: Width = 1408
    shared_expert_intermediate_size: WidthOrZero = 5632
    decoder_sparse_step: LayerCount = 1
    mlp_only_layers: list[LayerIndex] = Field(default_factory=list)
    _check_experts = experts_check("num_experts_per_tok", "num_experts")

    def layer_windows(self) -> list[int | None]:
        window = self.sliding_window if self.use_sliding_window else None
        if self.layer_types is not None:
            return windows_of_layer_types(self.layer_types, window)
        return [window if (i + 1) % 2 and i < self.max_window_layers else None for i in range(self.num_hidden_layers)]

    def build_layer(self, index: int, window: int | None) -> Layer:
        bias = self.qkv_bias
        attention = self.attention(window, q_bias=bias, k_bias=bias, v_bias=bias, o_bias=False)
        return self.layer(attention, self.qwen_ffn(index))

    def qwen_ffn(self, index: int) -> DenseFfn | MoeFfn:
        if not self.sparse(index):
            return self.gated_ffn()
        width = self.shared_expert_intermediate_size
        return self.moe_ffn(
            self.num_experts,
            self.num_experts_per_tok,
            self.moe_intermediate_size,
            shared_width=width,
            shared_names=SHARED_EXPERT,
            shared_expert_gate=bool(width),
        )


class Qwen3NextConfig(_QwenMoeRule, DecoderConfig):
    """configuration_qwen3_next.py / modeling_qwen3_next.py.

    ``layer_types`` (default: every full_attention_interval-th layer full, the rest linear) picks
    gated full attention (q_proj doubled for the output gate, per-head q/k RMSNorms) or Gated
    DeltaNet linear attention. FFNs follow Qwen's sparse rule, with a gated shared expert.
    """

    architecture = "Qwen3-Next"
    config_class = "Qwen3NextConfig"
    default_model_class = "Qwen3NextForCausalLM"
    heads_divide_hidden = False  # configuration_*.py floors hidden_size // num_attention_heads
    undeclared_keys = frozenset({"full_attention_interval"})  # __post_init__ reads it to build layer_types
    derived_defaults = {"layer_types": "every full_attention_interval-th layer (default 4) full, the rest linear"}
    moe_names = QWEN_MOE

    vocab_size: Width = 151936
    hidden_size: Width = 2048
    intermediate_size: Width = 5632
    num_hidden_layers: LayerCount = 48
    num_attention_heads: HeadCount = 16
    num_key_value_heads: HeadCount | None = 2
    head_dim: Width | None = 256
    max_position_embeddings: PositionCount = 32768
    linear_conv_kernel_dim: Width = 4
    linear_key_head_dim: Width = 128
    linear_value_head_dim: Width = 128
    linear_num_key_heads: HeadCount = 16
    linear_num_value_heads: HeadCount = 32
    num_experts: ExpertCountOrZero = 512
    num_experts_per_tok: ExpertCount = 10
    moe_intermediate_size: Width = 512
    shared_expert_intermediate_size: WidthOrZero = 512
    decoder_sparse_step: LayerCount = 1
    mlp_only_layers: list[LayerIndex] = Field(default_factory=list)
    layer_types: list[Literal["full_attention", "linear_attention"]] | None = None
    # Not a field of Qwen3NextConfig: read from the config's keys to build layer_types.
    full_attention_interval: LayerCount = 4
    mlp_bias: ClassVar[bool] = False
    _check_experts = experts_check("num_experts_per_tok", "num_experts")

    def resolved(self, field: str):
        return self.kinds() if field == "layer_types" else super().resolved(field)

    def unused_fields(self) -> set[str]:
        return {"full_attention_interval"} if self.layer_types is not None else set()

    def kinds(self) -> list[str]:
        if self.layer_types is not None:
            return list(self.layer_types)
        period = self.full_attention_interval
        return ["full_attention" if (i + 1) % period == 0 else "linear_attention" for i in range(self.num_hidden_layers)]

    def build_layers(self) -> tuple[Layer, ...]:
        kinds = self.kinds()
        built: dict[tuple[str, bool], Layer] = {}
        layers = []
        for index, kind in enumerate(kinds):
            key = (kind, self.sparse(index))
            if key not in built:
                built[key] = self.next_layer(kind, key[1])
            layers.append(built[key])
        return tuple(layers)

    def next_layer(self, kind: str, sparse: bool) -> Layer:
        ffn = self.gated_ffn()
        if sparse:
            width = self.shared_expert_intermediate_size
            ffn = self.moe_ffn(
                self.num_experts,
                self.num_experts_per_tok,
                self.moe_intermediate_size,
                shared_width=width,
                shared_names=SHARED_EXPERT,
                shared_expert_gate=bool(width),
            )
        if kind == "full_attention":
            return self.layer(self.attention(None, q_gate=True, **self.per_head_norms()), ffn)
        return self.layer(None, ffn, mixer=self.gated_deltanet())

    def gated_deltanet(self) -> Mixer:
        return gated_deltanet(
            self.hidden_size,
            self.linear_num_key_heads,
            self.linear_num_value_heads,
            self.linear_key_head_dim,
            self.linear_value_head_dim,
            self.linear_conv_kernel_dim,
            GATED_DELTANET,
        )

    def checkpoint_extras(self) -> tuple[CheckpointExtra, ...]:
        return (self.mtp(),)

    def mtp(self) -> CheckpointExtra:
        """Qwen3-Next's checkpoints store one multi-token-prediction module under ``mtp.``: a full-attention
        MoE decoder layer, RMSNorms on the embedding and the hidden state, fc (2H → H) and a final norm."""
        hidden = self.hidden_size
        layer = self.next_layer("full_attention", True)
        layer = Layer("mtp.layers.{i}", layer.attention, layer.ffn, layer.norms)
        tensors = (
            StoredTensor("mtp.pre_fc_norm_embedding.weight", (hidden,)),
            StoredTensor("mtp.pre_fc_norm_hidden.weight", (hidden,)),
            StoredTensor("mtp.fc.weight", (hidden, 2 * hidden)),
            StoredTensor("mtp.norm.weight", (hidden,)),
        )
        extra = mtp_extra(
            1,
            0,
            layer,
            tensors,
            "one multi-token-prediction module (a full-attention MoE layer, two norms, fc 2H → H and a final "
            "norm), used for speculative decoding, not by the causal LM",
        )
        return CheckpointExtra(extra.name, extra.reason, extra.tensors, (), extra.layers)
