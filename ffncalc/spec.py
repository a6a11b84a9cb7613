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
    q_norm: Norm | None = None  # RMSNorm on queries: per head (Qwen3, Gemma-3) or across heads (OLMo-2)
    k_norm: Norm | None = None
    q_gate: bool = False  # q_proj also emits a sigmoid gate for the output, doubling its width (Qwen3-Next)
    sinks: bool = False  # one learned logit per head (gpt-oss)
    window: int | None = None  # sliding-window size; None attends to the whole context
    mla: Mla | None = None
    relative_position_buckets: int = 0  # T5: a learned bias per bucket and head, held by a stack's first layer

    @classmethod
    def uniform(
        cls,
        hidden_size: int,
        num_heads: int,
        bias: bool,
        num_kv_heads: int | None = None,
        head_dim: int | None = None,
        window: int | None = None,
    ) -> "Attention":
        """Attention whose q, k, v, o share one bias switch and one head width (default hidden / heads)."""
        width = head_dim or hidden_size // num_heads
        return cls(
            hidden_size, num_heads, num_kv_heads or num_heads, width, width, bias, bias, bias, bias, window=window
        )

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
class Mamba2:
    """A Mamba-2 state-space mixer (Nemotron-H): its cost per token does not grow with the context.

    in_proj emits z (inner), x·B·C for the convolution (inner + 2·groups·state) and dt (heads);
    a depthwise conv over those; dt_bias, A_log and D per head; a gated RMSNorm; out_proj.
    """

    hidden_size: int
    num_heads: int
    head_dim: int
    n_groups: int
    state_size: int
    conv_kernel: int
    proj_bias: bool = False
    conv_bias: bool = True

    @property
    def inner_size(self) -> int:
        return self.num_heads * self.head_dim

    @property
    def conv_dim(self) -> int:
        return self.inner_size + 2 * self.n_groups * self.state_size

    @property
    def state_elements(self) -> int:
        """The recurrent state one token updates: heads · head_dim · state."""
        return self.inner_size * self.state_size


@dataclass(frozen=True)
class GatedDeltaNet:
    """A Gated DeltaNet linear-attention mixer (Qwen3-Next): a fixed-size state per value head.

    in_proj_qkvz emits q, k (key heads) and v, z (value heads); in_proj_ba the per-head b and a;
    a depthwise conv over q, k, v; dt_bias and A_log per value head; a gated RMSNorm; out_proj.
    """

    hidden_size: int
    num_k_heads: int
    num_v_heads: int
    head_k_dim: int
    head_v_dim: int
    conv_kernel: int

    @property
    def key_dim(self) -> int:
        return self.num_k_heads * self.head_k_dim

    @property
    def value_dim(self) -> int:
        return self.num_v_heads * self.head_v_dim

    @property
    def conv_dim(self) -> int:
        return 2 * self.key_dim + self.value_dim

    @property
    def state_elements(self) -> int:
        """The state one token updates: a head_k_dim × head_v_dim matrix per value head."""
        return self.num_v_heads * self.head_k_dim * self.head_v_dim


Mixer = Union[Mamba2, GatedDeltaNet]


@dataclass(frozen=True)
class Layer:
    """One layer: attention (or another mixer), FFN, the norms around them by module name.

    A hybrid stack's layer may hold only a mixer, only attention or only an FFN (Nemotron-H).
    ``parallel`` layers run attention and FFN side by side on the same input (GPT-J, Falcon):
    the same parameters, in another order.
    """

    attention: Attention | None
    ffn: Ffn | None
    norms: tuple[tuple[str, Norm], ...]
    mixer: Mixer | None = None
    cross_attention: Attention | None = None  # decoder layers of an encoder-decoder
    stack: str = "decoder"  # "encoder" or "decoder"
    parallel: bool = False


@dataclass(frozen=True)
class Linear:
    """A linear map outside the layers (OPT's project_in/out, BERT's pooler)."""

    in_features: int
    out_features: int
    bias: bool = False


@dataclass(frozen=True)
class Table:
    """A learned table looked up, not multiplied (token-type embeddings, a bias vector)."""

    rows: int
    dim: int = 1


@dataclass(frozen=True)
class Extra:
    """A model-level module outside the layers, with the component it counts under."""

    component: str
    name: str
    module: "Linear | Norm | Table"
    per_token: bool = True  # does a generated token run it (a pooler or pre-training head does not)


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
    embedding_dim: int | None = None  # the token table's width when it differs from hidden (OPT-350m)
    lm_head_bias: bool = False
    lm_head: bool = True  # False for an encoder without a language-modelling head
    extras: tuple[Extra, ...] = ()
    torch_dtype: str | None = None
    checkpoint_extras: tuple[CheckpointExtra, ...] = ()
    notes: tuple[str, ...] = field(default=())
    published_params: int | None = None  # a paper's own figure, for presets
    published_source: str | None = None


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
    if activation == "relu2":
        return "ReGLU²" if gated else "ReLU²"  # squared ReLU (Nemotron-H, Primer)
    prefix = _ACTIVATION_NAMES.get(activation)
    if gated:
        return f"{prefix}GLU" if prefix else f"gated {activation}"
    return {"Swi": "SiLU", "Ge": "GELU", "Re": "ReLU"}.get(prefix or "", activation)
