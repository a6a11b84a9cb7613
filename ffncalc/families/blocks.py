"""Building blocks that several families share, written once.

- where checkpoints of the Llama lineage keep each part (``LLAMA_*`` names);
- which layers are sparse (one rule with the knobs every MoE family turns);
- which layers attend within a window (a period, or a config's ``layer_types``);
- the multi-token-prediction modules some checkpoints store past the last layer;
- fields transformers leaves None and cannot build a model without;
- per-layer lists (mlp_layer_types and the like) and their lengths;
- the heads of a Mamba-2 mixer configured by head count and head width (Bamba, Falcon-H1).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

from pydantic import model_validator

from ..schema import HFConfig, derives, per_config
from ..spec import (
    Attention,
    CheckpointExtra,
    DenseFfn,
    Layer,
    ModelNames,
    Names,
    Norm,
    NormKind,
    Stack,
    StoredTensor,
    names,
)

# Where a Llama-lineage checkpoint keeps each part, relative to model.layers.{i}.
LLAMA_ATTENTION = names(
    q="self_attn.q_proj",
    k="self_attn.k_proj",
    v="self_attn.v_proj",
    o="self_attn.o_proj",
    q_norm="self_attn.q_norm",
    k_norm="self_attn.k_norm",
    sinks="self_attn.sinks",
)
MLA_ATTENTION = names(
    q="self_attn.q_proj",
    q_a="self_attn.q_a_proj",
    q_a_layernorm="self_attn.q_a_layernorm",
    q_b="self_attn.q_b_proj",
    kv_a="self_attn.kv_a_proj_with_mqa",
    kv_a_layernorm="self_attn.kv_a_layernorm",
    kv_b="self_attn.kv_b_proj",
    o="self_attn.o_proj",
)
LLAMA_MLP = names(gate="mlp.gate_proj", up="mlp.up_proj", down="mlp.down_proj")
EXPERT_MLP = names(gate="gate_proj", up="up_proj", down="down_proj")  # relative to the experts' module
# DeepSeek's shared experts: one MLP of n_shared_experts × the expert width, beside the routed experts.
SHARED_EXPERTS = names(
    gate="mlp.shared_experts.gate_proj", up="mlp.shared_experts.up_proj", down="mlp.shared_experts.down_proj"
)
LLAMA_MOE = names(router="mlp.gate", experts="mlp.experts.{e}", shared_expert_gate="mlp.shared_expert_gate")
LLAMA_LAYER = "model.layers.{i}"
LLAMA_MODEL = ModelNames(embed_tokens="model.embed_tokens", final_norm="model.norm")


def is_sparse(
    index: int,
    *,
    every: int = 1,
    phase: int = 0,
    first: int = 0,
    last: int | None = None,
    exclude: Collection[int] = (),
) -> bool:
    """The sparse-layer rule of every MoE family: first ≤ i ≤ last, i % every == phase, i not excluded.

    Qwen: every = decoder_sparse_step, phase = step − 1, exclude = mlp_only_layers. DeepSeek:
    first = first_k_dense_replace, every = moe_layer_freq. ERNIE: first/last = the start and end
    indices, phase = interval − 1. Llama-4: phase = interleave step − 1.
    """
    return first <= index and (last is None or index <= last) and index % every == phase and index not in exclude


def periodic_window(index: int, window: int | None, period: int) -> int | None:
    """Every period-th layer attends globally, the others within the window (Gemma-2: period 2; Gemma-3: 6)."""
    return None if (index + 1) % period == 0 else window


def windows_of_layer_types(layer_types: Sequence[str], window: int | None) -> list[int | None]:
    """A config's layer_types: 'sliding_attention' (or 'chunked_attention') layers get the window, the others none."""
    return [window if kind in ("sliding_attention", "chunked_attention") else None for kind in layer_types]


def periodic_layer_types(count: int, period: int) -> list[str]:
    """layer_types of COUNT layers: every period-th full_attention, the others sliding_attention (Cohere2, EXAONE 4)."""
    return ["full_attention" if (i + 1) % period == 0 else "sliding_attention" for i in range(count)]


def mtp_extra(
    count: int,
    first_index: int,
    layer: Layer,
    tensors: tuple[StoredTensor, ...],
    reason: str,
) -> CheckpointExtra:
    """Multi-token-prediction modules a checkpoint stores past the last layer: a decoder layer each, and its own tensors.

    ``layer.name`` and the ``tensors`` are named with ``{i}``, the module's index (first_index,
    first_index + 1 …); the causal LM does not run them.
    """
    indices = tuple(range(first_index, first_index + count))
    return CheckpointExtra(
        name="multi-token-prediction layers",
        reason=reason,
        tensors=tensors,
        per_layer=indices,
        layers=tuple((index, layer) for index in indices),
    )


def required_field(field: str, config_class: str):
    """A model validator for a field that CONFIG_CLASS leaves None when the config omits it, while the modeling
    code reads it as a number: transformers then fails to build the model, and so does ffncalc."""

    def check(self):
        if getattr(self, field) is None:
            raise ValueError(
                f"{field}: required field is missing ({config_class} leaves it None and cannot build the model)"
            )
        return self

    return model_validator(mode="after")(check)


class MambaHeads:
    """Mamba-2 heads as Bamba and Falcon-H1 configure them: mamba_n_heads heads across the mixer's width
    (mamba_expand · hidden_size, unless the family sets it otherwise), each mamba_d_head wide ("auto": the
    width over the heads)."""

    hidden_size: int
    mamba_expand: int
    mamba_n_heads: int
    mamba_d_head: int | str

    def mamba_inner(self) -> int:
        return self.mamba_expand * self.hidden_size

    @derives("mamba_d_head", "mamba_expand · hidden_size / mamba_n_heads", when="auto")
    def mamba_head_dim(self) -> int:
        return self.mamba_inner() // self.mamba_n_heads if self.mamba_d_head == "auto" else int(self.mamba_d_head)


def mamba_heads_check():
    """A model validator for MambaHeads: the heads divide the mixer's width and, head_dim wide, fill it exactly,
    as transformers requires."""

    def check(self):
        inner = self.mamba_inner()
        if inner % self.mamba_n_heads:
            raise ValueError(
                f"mamba_n_heads ({self.mamba_n_heads}) must divide the mixer's width ({inner}), as transformers requires"
            )
        if self.mamba_head_dim() * self.mamba_n_heads != inner:
            raise ValueError(
                f"mamba_d_head × mamba_n_heads ({self.mamba_head_dim()} × {self.mamba_n_heads}) must equal the mixer's "
                f"width ({inner}), as transformers requires"
            )
        return self

    return model_validator(mode="after")(check)


if TYPE_CHECKING:  # a mixin: it relies on what its model class has
    _MlpLayerTypesBase = HFConfig
else:
    _MlpLayerTypesBase = object


class MlpLayerTypes(_MlpLayerTypesBase):
    """``mlp_layer_types`` ("dense" or "sparse" per layer), as transformers' newer configs list each layer's FFN;
    ``default_mlp_kinds`` when the config leaves it out."""

    mlp_layer_types: Sequence[str] | None  # each family narrows it to its own layer types
    num_hidden_layers: int

    def default_mlp_kinds(self) -> list[str]:  # pragma: no cover - each adapter says its default
        """Each layer's FFN kind when the config leaves mlp_layer_types out (each adapter marks it ``derives``)."""
        raise NotImplementedError

    @per_config
    def mlp_kinds(self) -> list[str]:
        return list(self.mlp_layer_types) if self.mlp_layer_types is not None else self.default_mlp_kinds()

    def sparse(self, index: int) -> bool:
        return self.mlp_kinds()[index] == "sparse"

    def unused_ffn_fields(self, sparse_fields: set[str]) -> set[str]:
        """The FFN fields no layer reads: intermediate_size without a dense layer, SPARSE_FIELDS without a sparse one."""
        kinds = set(self.mlp_kinds())
        return (set() if "dense" in kinds else {"intermediate_size"}) | (set() if "sparse" in kinds else sparse_fields)


def entries_check(field: str, exact: bool):
    """A model validator: the per-layer list FIELD has num_hidden_layers entries (EXACT), or at least that many
    (transformers indexes it by layer without checking its length)."""

    def check(self):
        entries = getattr(self, field)
        layers = self.num_hidden_layers
        if entries is not None and (len(entries) != layers if exact else len(entries) < layers):
            raise ValueError(f"{field} has {len(entries)} entries for {layers} layers")
        return self

    return model_validator(mode="after")(check)


def heads_divide(width_field: str, heads_field: str):
    """transformers refuses a hidden size that is not a multiple of the heads (these families have no head_dim)."""

    def check(self):
        width, heads = getattr(self, width_field), getattr(self, heads_field)
        if width % heads:
            raise ValueError(f"{width_field} ({width}) is not a multiple of {heads_field} ({heads})")
        return self

    return model_validator(mode="after")(check)


def check_padding_row(pad_token_id: int | None, vocab_size: int) -> None:
    """PAD_TOKEN_ID must be a row of the token table (counted from either end): torch refuses any other padding_idx."""
    if pad_token_id is not None and not -vocab_size <= pad_token_id < vocab_size:
        raise ValueError(
            f"pad_token_id ({pad_token_id}) is not a row of the embedding table (vocab_size {vocab_size}); torch "
            "refuses such a padding_idx"
        )


def check_heads_divide(config: object, width_field: str) -> None:
    """An encoder-decoder's width (WIDTH_FIELD) must be a multiple of each stack's attention heads: its layers split it
    into heads of width // heads."""
    width = getattr(config, width_field)
    for field in ("encoder_attention_heads", "decoder_attention_heads"):
        if width % getattr(config, field):
            raise ValueError(f"{width_field} ({width}) is not a multiple of {field} ({getattr(config, field)})")


def encoder_layer(
    name: str,
    hidden: int,
    heads: int,
    intermediate: int,
    activation: str,
    *,
    attention_names: Names,
    ffn_names: Names,
    norm_names: tuple[str, str],
    norm_kind: NormKind,
    bias: bool,
    gated: bool,
    k_bias: bool | None = None,
    stack: Stack = "vision",
) -> Layer:
    """One encoder layer of a vision or audio tower: bidirectional attention over its positions (q, k, v and o biased
    with BIAS, k with K_BIAS where it differs: Whisper's k_proj has none), then an FFN, each with its norm."""
    head_dim = hidden // heads
    key_bias = bias if k_bias is None else k_bias
    attention = Attention(hidden, heads, heads, head_dim, head_dim, attention_names, bias, key_bias, bias, bias)
    ffn = DenseFfn(hidden, intermediate, gated, activation, ffn_names, bias)
    layer_norm = Norm(norm_kind, hidden, bias=norm_kind == "layernorm")
    return Layer(name, attention, ffn, ((norm_names[0], layer_norm), (norm_names[1], layer_norm)), stack=stack)


class SharedIndexerPattern:
    """Which layers' sparse-attention indexers are their own and which reuse the previous layer's picks (GLM-5's and
    Mistral Large 4's configuration classes build indexer_types in __post_init__ by the same rule). The family declares
    the four fields; this is the rule."""

    num_hidden_layers: int
    indexer_types: Sequence[str] | None
    index_topk_pattern: str | Sequence[str] | None
    index_topk_freq: int
    index_skip_topk_offset: int

    @derives(
        "indexer_types",
        "index_topk_pattern, else full where max(i − index_skip_topk_offset + 1, 0) % index_topk_freq == 0",
    )
    @per_config
    def indexer_kinds(self) -> list[str]:
        """Each layer's indexer: "full" (its own) or "shared" (the previous layer's picks)."""
        if self.indexer_types is not None:
            return list(self.indexer_types)
        pattern = self.index_topk_pattern
        if pattern is not None:
            return [{"F": "full", "S": "shared"}[c] for c in pattern] if isinstance(pattern, str) else list(pattern)
        freq, offset = max(self.index_topk_freq, 1), self.index_skip_topk_offset
        return ["full" if max(i - offset + 1, 0) % freq == 0 else "shared" for i in range(self.num_hidden_layers)]

    def indexer_shared(self, index: int) -> bool:
        return self.indexer_kinds()[index] == "shared"
