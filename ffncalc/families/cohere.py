"""Cohere's Command models: Command-R and Aya (cohere: attention and MLP side by side behind one LayerNorm),
Command R7B / A (cohere2: three sliding-window layers in four), Cohere2-MoE (their MoE) and Cohere Compass's
language model (cohere_compass_text: Cohere2's layers, all full attention by default)."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal

from pydantic import model_validator

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
    derives,
)
from ..spec import DenseFfn, Layer, ModelSpec, MoeFfn, Norm, Parameter, names
from ..values import replace
from .base import DecoderConfig
from .blocks import periodic_layer_types, windows_of_layer_types
from .registry import family

COHERE_SHARED = names(
    gate="mlp.shared_experts.gate_proj", up="mlp.shared_experts.up_proj", down="mlp.shared_experts.down_proj"
)


class CohereLayers(DecoderConfig):
    """configuration_cohere.py / modeling_cohere.py: attention and the MLP read the same input, behind one
    LayerNorm without bias (input_layernorm); embeddings tied by default. With use_qk_norm (Cohere's switch; the
    Cohere 2 families have none), a LayerNorm over each query head and each key head, its weight [heads, head_dim]."""

    architecture = "Cohere"
    config_class = "CohereConfig"
    default_model_class = "CohereForCausalLM"
    heads_divide_hidden = False  # configuration_*.py floors hidden_size // num_attention_heads
    read_beyond = {"head_dim": "read by the modeling code with getattr"}

    num_hidden_layers: LayerCount
    intermediate_size: Width
    tie_word_embeddings: Flag
    attention_bias: Flag
    num_key_value_heads: HeadCount | None
    hidden_act: Name
    head_dim: Width | None = None
    max_position_embeddings: PositionCount

    def layer_norm(self) -> Norm:
        return Norm("layernorm", self.hidden_size)

    def qk_norms(self) -> tuple[Parameter, ...]:
        """CohereLayerNorm over (heads, head_dim) and (kv_heads, head_dim): 2-D weights, no bias."""
        if not getattr(self, "use_qk_norm", False):  # CohereConfig's switch; the Cohere 2 families have none
            return ()
        head_dim = self.resolved_head_dim
        return (
            Parameter("norm", "q_norm", "self_attn.q_norm.weight", (self.num_attention_heads, head_dim)),
            Parameter("norm", "k_norm", "self_attn.k_norm.weight", (self.kv_heads, head_dim)),
        )

    def ffn(self, index: int) -> DenseFfn | MoeFfn:
        return self.gated_ffn()

    def build_layer(self, index: int, window: int | None) -> Layer:
        norms = (("input_layernorm", self.layer_norm()),)
        return self.layer(self.attention(window), self.ffn(index), norms, parameters=self.qk_norms())

    def to_spec(self) -> ModelSpec:
        return replace(super().to_spec(), final_norm=self.layer_norm())


@family("cohere", transformers="CohereConfig")
class CohereConfig(CohereLayers):
    """configuration_cohere.py: Cohere's layers and their use_qk_norm switch."""

    use_qk_norm: Flag


if TYPE_CHECKING:  # a mixin: it relies on what its model class has
    _Cohere2WindowsBase = CohereLayers
else:
    _Cohere2WindowsBase = object


class _Cohere2Windows(_Cohere2WindowsBase):
    """Cohere2's windows: the layers ``layer_types`` marks sliding attend within sliding_window."""

    sliding_window: int | None
    layer_types: Sequence[str] | None  # each family narrows it to its own layer types

    def kinds(self) -> list[str]:  # pragma: no cover - each Cohere2 family lays out its own
        raise NotImplementedError

    def layer_windows(self) -> list[int | None]:
        return windows_of_layer_types(self.kinds(), self.sliding_window)


@family(
    "cohere2",
    transformers="Cohere2Config",
    architecture="Cohere2",
    model_class="Cohere2ForCausalLM",
    read_beyond={
        "sliding_window_pattern": "no field: still in configs on the Hub, and __post_init__ reads it",
        "head_dim": "no field: __post_init__ sets hidden_size // heads, and a head_dim key of the config, set after it, wins",
    },
)
class Cohere2Config(_Cohere2Windows, CohereLayers):
    """configuration_cohere2.py / modular_cohere2.py: Cohere's parallel layer without q/k norms. ``layer_types``
    (default: every sliding_window_pattern-th layer full, a key read only for that, 4) gives the sliding
    layers a window."""

    sliding_window: Width | None
    layer_types: list[Literal["full_attention", "sliding_attention"]] | None
    sliding_window_pattern: LayerCount = 4  # not a field of Cohere2Config: a key it still reads

    def unused_fields(self) -> set[str]:
        return {"sliding_window_pattern"} if self.layer_types is not None else set()

    @derives("layer_types", "every sliding_window_pattern-th layer (default 4) full, the others sliding")
    def kinds(self) -> list[str]:
        if self.layer_types is not None:
            return list(self.layer_types)
        return periodic_layer_types(self.num_hidden_layers, self.sliding_window_pattern)


@family(
    "cohere2_moe",
    transformers="Cohere2MoeConfig",
    architecture="Cohere2-MoE",
    routing=("num_experts_per_tok", "num_experts"),
    model_class="Cohere2MoeForCausalLM",
    read_beyond={"first_k_dense_replace": "__post_init__ reads it to build the layer types"},
)
class Cohere2MoeConfig(_Cohere2Windows, CohereLayers):
    """configuration_cohere2_moe.py / modeling_cohere2_moe.py: Cohere2's parallel layer (head_dim a field,
    128) with a MoE: routed experts of width intermediate_size (stored stacked, saved one module per
    expert) and, with num_shared_experts, one shared MLP of num_shared_experts × intermediate_size.

    The first ``first_k_dense_replace`` layers (a key __post_init__ reads, 0) are dense, of width
    prefix_dense_intermediate_size (default intermediate_size), with their own window pattern
    (prefix_dense_sliding_window_pattern; 1: all full); ``mlp_layer_types`` and ``layer_types``
    override these. Norms are RMSNorms when rms_norm_eps is set, else LayerNorms without bias.
    """

    moe_names = names(router="mlp.gate", experts="mlp.experts.{e}")

    sliding_window: Width | None
    layer_types: list[Literal["full_attention", "sliding_attention"]] | None
    sliding_window_pattern: LayerCount
    num_experts: ExpertCount
    num_experts_per_tok: ExpertCount
    num_shared_experts: ExpertCountOrZero
    mlp_layer_types: list[Literal["dense", "sparse"]] | None
    prefix_dense_sliding_window_pattern: LayerCount
    prefix_dense_intermediate_size: Width | None
    rms_norm_eps: float | None
    # Not a field of Cohere2MoeConfig: read from the config's keys to build the layer types.
    first_k_dense_replace: LayerIndex = 0

    @model_validator(mode="after")
    def _check_mlp_layer_types(self) -> Cohere2MoeConfig:
        if self.mlp_layer_types is not None and len(self.mlp_layer_types) != self.num_hidden_layers:
            raise ValueError(
                f"mlp_layer_types has {len(self.mlp_layer_types)} entries for {self.num_hidden_layers} layers"
            )
        if self.layer_types is None and self.first_k_dense_replace > self.num_hidden_layers:
            # transformers' default layer_types would then have first_k_dense_replace entries, and it refuses them
            raise ValueError(
                f"first_k_dense_replace ({self.first_k_dense_replace}) exceeds num_hidden_layers ({self.num_hidden_layers})"
            )
        return self

    def unused_fields(self) -> set[str]:
        unused = set()
        if self.layer_types is not None:
            unused |= {"sliding_window_pattern", "prefix_dense_sliding_window_pattern"}
        if self.layer_types is not None and self.mlp_layer_types is not None:
            unused.add("first_k_dense_replace")
        return unused

    @derives(
        "layer_types",
        "the first first_k_dense_replace layers: every prefix_dense_sliding_window_pattern-th full; then every sliding_window_pattern-th full; the others sliding",
    )
    def kinds(self) -> list[str]:
        if self.layer_types is not None:
            return list(self.layer_types)
        prefix = self.first_k_dense_replace
        rest = self.num_hidden_layers - prefix
        return periodic_layer_types(prefix, self.prefix_dense_sliding_window_pattern) + periodic_layer_types(
            rest, self.sliding_window_pattern
        )

    @cached_property
    @derives("mlp_layer_types", "dense for the first first_k_dense_replace layers, then sparse")
    def mlp_kinds(self) -> list[str]:
        if self.mlp_layer_types is not None:
            return list(self.mlp_layer_types)
        return ["dense" if i < self.first_k_dense_replace else "sparse" for i in range(self.num_hidden_layers)]

    def layer_norm(self) -> Norm:
        return Norm("rmsnorm" if self.rms_norm_eps is not None else "layernorm", self.hidden_size)

    def ffn(self, index: int) -> DenseFfn | MoeFfn:
        if self.mlp_kinds[index] == "dense":
            return self.gated_ffn(self.prefix_dense_intermediate_size)
        return self.moe_ffn(
            self.num_experts,
            self.num_experts_per_tok,
            self.intermediate_size,
            shared_width=self.intermediate_size * self.num_shared_experts,
            num_shared_experts=self.num_shared_experts,
            shared_names=COHERE_SHARED,
        )


@family(
    "cohere_compass_text",
    transformers="CohereCompassTextConfig",
    architecture="Cohere Compass",
    model_class="CohereCompassForCausalLM",
)
class CohereCompassTextConfig(Cohere2Config):
    """configuration_cohere_compass.py / modular_cohere_compass.py (text): Cohere2's parallel layer, every layer full
    attention unless layer_types says (CohereCompassTextConfig.__post_init__), rotary positions of its own per layer
    kind (M-RoPE, or none: NoPE), which hold no parameters. Its rotary embedding reads rope_parameters[kind] for each
    kind in layer_types and fails without one, so transformers cannot build a config without them (its default)."""

    rope_parameters: dict[str, dict[str, Any] | None] | None

    @model_validator(mode="after")
    def _check_rope_per_kind(self) -> CohereCompassTextConfig:
        missing = sorted(set(self.kinds()) - set(self.rope_parameters or {}))
        if missing:
            raise ValueError(
                f"rope_parameters: no entry for {', '.join(missing)} (one per kind of layer_types, null for no "
                "rotary positions); transformers' rotary embedding reads one per kind and cannot build the model"
            )
        return self

    def unused_fields(self) -> set[str]:
        return {"sliding_window_pattern"}

    @derives("layer_types", "every layer full_attention")
    def kinds(self) -> list[str]:
        if self.layer_types is not None:
            return list(self.layer_types)
        return ["full_attention"] * self.num_hidden_layers
