"""The architecture-neutral description of a model that the engine reads.

A family adapter (``ffncalc.families``) turns one family's config.json fields into a
``ModelSpec``; nothing downstream knows which family a spec came from. Every class is a
frozen, hashable dataclass, so identical layers compare equal and can be grouped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Union

NormKind = Literal["rmsnorm", "layernorm"]


@dataclass(frozen=True)
class Norm:
    """A normalisation layer: a weight of ``dim`` elements, plus a bias of ``dim`` for LayerNorm."""

    kind: NormKind
    dim: int
    bias: bool = False


@dataclass(frozen=True)
class Mla:
    """Multi-head latent attention (DeepSeek-V2/V3): queries and keys/values pass through low-rank latents."""

    q_lora_rank: int | None  # None: queries are projected directly from the hidden state
    kv_lora_rank: int
    qk_nope_head_dim: int
    qk_rope_head_dim: int
    v_head_dim: int
    latent_norm: NormKind = "rmsnorm"  # on each latent: q_a_layernorm (q_lora_rank), kv_a_layernorm (kv_lora_rank)


@dataclass(frozen=True)
class Attention:
    """One layer's self-attention.

    ``qk_head_dim`` and ``v_head_dim`` are per-head widths; for MLA they are the
    decompressed widths (nope + rope, and v_head_dim), the ones attention scores use.
    """

    hidden_size: int
    num_heads: int
    num_kv_heads: int
    qk_head_dim: int
    v_head_dim: int
    q_bias: bool = False
    k_bias: bool = False
    v_bias: bool = False
    o_bias: bool = False
    qk_norm: Norm | None = None  # per-head RMSNorm on queries and keys (Qwen3, Gemma-3), dim = qk_head_dim
    sinks: bool = False  # one learned logit per head (gpt-oss)
    window: int | None = None  # sliding-window size; None attends to the whole context
    mla: Mla | None = None

    @property
    def kind(self) -> str:
        """mla, mha (kv heads = heads), mqa (one kv head) or gqa (in between)."""
        if self.mla is not None:
            return "mla"
        if self.num_kv_heads == self.num_heads:
            return "mha"
        if self.num_kv_heads == 1:
            return "mqa"
        return "gqa"


@dataclass(frozen=True)
class DenseFfn:
    """A position-wise feed-forward block: gated (gate, up, down) or plain (up, down)."""

    hidden_size: int
    intermediate_size: int
    gated: bool
    activation: str
    bias: bool = False

    @property
    def kind(self) -> str:
        """The activation with its gating, as usually named: SwiGLU, GeGLU, GELU, ReLU…"""
        return ffn_kind_name(self.activation, self.gated)


@dataclass(frozen=True)
class MoeFfn:
    """A mixture-of-experts block: a router picks ``experts_per_token`` of ``num_experts`` per token.

    Shared experts run for every token. Some families fuse them into one MLP of width
    num_shared_experts × expert width (DeepSeek); the spec stores that MLP as ``shared``.
    """

    hidden_size: int
    num_experts: int
    experts_per_token: int
    expert: DenseFfn
    shared: DenseFfn | None = None
    num_shared_experts: int = 0
    shared_expert_gate: bool = False  # a Linear(hidden, 1) that scales the shared expert's output (Qwen2-MoE)
    router_bias: bool = False

    @property
    def kind(self) -> str:
        return self.expert.kind


Ffn = Union[DenseFfn, MoeFfn]


@dataclass(frozen=True)
class Layer:
    """One decoder layer: attention, FFN and the norms around them, each norm with its module's name."""

    attention: Attention
    ffn: Ffn
    norms: tuple[tuple[str, Norm], ...]


@dataclass(frozen=True)
class CheckpointExtra:
    """Elements a published checkpoint may store that are not parameters of the model's modules.

    The engine counts ``elements`` plus the parameters of any whole ``layers`` the extra holds
    (DeepSeek's multi-token-prediction layers are decoder layers the causal LM does not run).
    """

    name: str
    reason: str
    elements: int = 0
    layers: tuple["Layer", ...] = ()


@dataclass(frozen=True)
class ModelSpec:
    """Everything the engine needs to count a model's parameters and FLOPs."""

    model_type: str
    architecture: str  # a readable family name, e.g. "Llama"
    hidden_size: int
    vocab_size: int
    layers: tuple[Layer, ...]
    final_norm: Norm | None
    tie_word_embeddings: bool
    position_embeddings: int = 0  # rows of a learned absolute position table (GPT-2); 0 for rotary
    lm_head_bias: bool = False
    torch_dtype: str | None = None
    checkpoint_extras: tuple[CheckpointExtra, ...] = ()
    notes: tuple[str, ...] = field(default=())


_ACTIVATION_NAMES = {
    "silu": "Swi",
    "swish": "Swi",
    "gelu": "Ge",
    "gelu_new": "Ge",
    "gelu_pytorch_tanh": "Ge",
    "gelu_fast": "Ge",
    "gelu_python": "Ge",
    "relu": "Re",
}


def ffn_kind_name(activation: str, gated: bool) -> str:
    """SwiGLU / GeGLU / ReGLU for gated FFNs, the activation's own name (GELU, ReLU, SiLU) otherwise."""
    prefix = _ACTIVATION_NAMES.get(activation)
    if gated:
        return f"{prefix}GLU" if prefix else f"gated {activation}"
    return {"Swi": "SiLU", "Ge": "GELU", "Re": "ReLU"}.get(prefix or "", activation)
