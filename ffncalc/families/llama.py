"""Llama (2, 3, 3.1–3.3 and the many models that reuse its layout), InternLM3, SmolLM3, Granite, Granite-MoE (and
its shared-expert variant), Granite's sliding-window variants (Granite-SWA, Granite-MoE-SWA), and Llama-4."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import AliasChoices, Field, model_validator

from ..schema import ExpertCount, Flag, HeadCount, LayerCount, LayerIndex, PositionCount, Width, WidthOrZero, per_config
from ..spec import Attention, Extra, Layer, Linear, names
from .base import DecoderConfig
from .blocks import is_sparse, windows_of_layer_types
from .multimodal import MultimodalConfig
from .towers import Tower, projector_module


class LlamaConfig(DecoderConfig):
    """configuration_llama.py: q/k/v/o share ``attention_bias``; gate/up/down share ``mlp_bias``."""

    architecture = "Llama"


class InternLM3Config(DecoderConfig):
    """configuration_internlm3.py: Llama's implementation (transformers builds LlamaForCausalLM) with InternLM3's
    defaults; its configs name the bias switches qkv_bias (q, k, v and o) and bias (the MLP), and transformers
    refuses them unequal."""

    architecture = "InternLM3"
    config_class = "InternLM3Config"
    default_model_class = "LlamaForCausalLM"
    derived_defaults = {}  # head_dim and num_key_value_heads have defaults of their own (null: as Llama's)

    vocab_size: Width = 128512
    intermediate_size: Width = 10240
    num_hidden_layers: LayerCount = 48
    num_key_value_heads: HeadCount | None = 2
    head_dim: Width | None = 128
    max_position_embeddings: PositionCount = 32768
    pad_token_id: int | None = Field(2, strict=True)
    attention_bias: Flag = Field(False, validation_alias=AliasChoices("attention_bias", "qkv_bias"))
    mlp_bias: Flag = Field(False, validation_alias=AliasChoices("mlp_bias", "bias"))

    @model_validator(mode="after")
    def _check_biases(self) -> InternLM3Config:
        if self.attention_bias != self.mlp_bias:
            raise ValueError(
                f"qkv_bias ({self.attention_bias}) must equal bias ({self.mlp_bias}), as transformers requires: it "
                "builds InternLM3 with Llama's layer"
            )
        return self


class SmolLM3Config(DecoderConfig):
    """configuration_smollm3.py / modeling_smollm3.py: Llama's layer, embeddings tied. With use_sliding_window,
    the layers ``layer_types`` marks sliding (default: those without RoPE, ``no_rope_layers`` 0, by default
    every no_rope_layer_interval-th) attend within sliding_window."""

    architecture = "SmolLM3"
    config_class = "SmolLM3Config"
    default_model_class = "SmolLM3ForCausalLM"
    heads_divide_hidden = False  # configuration_*.py floors hidden_size // num_attention_heads
    undeclared_keys = frozenset({"head_dim"})  # read by the modeling code with getattr
    derived_defaults = {
        **DecoderConfig.derived_defaults,
        "no_rope_layers": "0 on every no_rope_layer_interval-th layer, else 1",
        "layer_types": "sliding_attention where no_rope_layers is 0 (with use_sliding_window and a sliding_window), else full_attention",
    }

    vocab_size: Width = 128256
    hidden_size: Width = 2048
    num_hidden_layers: LayerCount = 36
    num_attention_heads: HeadCount = 16
    num_key_value_heads: HeadCount | None = 4
    max_position_embeddings: PositionCount = 32768
    pad_token_id: int | None = Field(128004, strict=True)
    use_sliding_window: Flag = False
    sliding_window: Width | None = None
    no_rope_layers: list[Literal[0, 1]] | None = Field(None, max_length=1 << 14)
    no_rope_layer_interval: LayerCount = 4
    layer_types: list[Literal["full_attention", "sliding_attention"]] | None = None
    tie_word_embeddings: Flag = True

    @model_validator(mode="after")
    def _check_rope_layers(self) -> SmolLM3Config:
        if self.no_rope_layers is not None and len(self.no_rope_layers) < self.num_hidden_layers:
            raise ValueError(
                f"no_rope_layers has {len(self.no_rope_layers)} entries for {self.num_hidden_layers} layers"
            )
        return self

    def resolved(self, field: str):
        if field == "no_rope_layers":
            return self.rope_layers()
        if field == "layer_types":
            return self.kinds()
        return super().resolved(field)

    def unused_fields(self) -> set[str]:
        rope = {"no_rope_layers", "no_rope_layer_interval"}  # they move RoPE, and default the layer_types
        if not self.use_sliding_window:
            return {"sliding_window", "layer_types"} | rope
        return rope if self.layer_types is not None else set()

    @per_config
    def rope_layers(self) -> list[int]:
        if self.no_rope_layers is not None:
            return list(self.no_rope_layers)
        return [int((i + 1) % self.no_rope_layer_interval != 0) for i in range(self.num_hidden_layers)]

    @per_config
    def kinds(self) -> list[str]:
        if self.layer_types is not None:
            return list(self.layer_types)
        sliding = self.use_sliding_window and self.sliding_window is not None
        return ["sliding_attention" if sliding and not rope else "full_attention" for rope in self.rope_layers()]

    def layer_windows(self) -> list[int | None]:
        return windows_of_layer_types(self.kinds(), self.sliding_window if self.use_sliding_window else None)


class GraniteConfig(DecoderConfig):
    """configuration_granite.py: Llama's modules; its embedding, attention, residual and logits
    multipliers scale activations, not parameters."""

    architecture = "Granite"
    config_class = "GraniteConfig"
    default_model_class = "GraniteForCausalLM"
    heads_divide_hidden = False  # configuration_*.py floors hidden_size // num_attention_heads
    undeclared_keys = frozenset({"head_dim"})  # read by the modeling code with getattr


class GraniteMoeConfig(DecoderConfig):
    """configuration_granitemoe.py / modeling_granitemoe.py: Llama attention (no mlp_bias); every FFN
    a MoE whose experts are stored stacked, gate and up fused (input_linear [E, 2I, H],
    output_linear [E, H, I]), routed by router.layer."""

    architecture = "Granite-MoE"
    config_class = "GraniteMoeConfig"
    default_model_class = "GraniteMoeForCausalLM"
    heads_divide_hidden = False  # configuration_*.py floors hidden_size // num_attention_heads
    undeclared_keys = frozenset({"head_dim"})  # read by the modeling code with getattr
    moe_names = names(router="block_sparse_moe.router.layer", experts="block_sparse_moe")
    expert_names = names(gate="input_linear", up="input_linear", down="output_linear")

    num_local_experts: ExpertCount = 8
    num_experts_per_tok: ExpertCount = 2
    mlp_bias: ClassVar[bool] = False
    routing_fields = ("num_experts_per_tok", "num_local_experts")

    def build_layer(self, index: int, window: int | None) -> Layer:
        moe = self.moe_ffn(self.num_local_experts, self.num_experts_per_tok, self.intermediate_size)
        return self.layer(self.attention(window), moe)


class GraniteMoeSharedConfig(GraniteMoeConfig):
    """configuration_granitemoeshared.py / modular_granitemoeshared.py: Granite-MoE's layer plus, with
    shared_intermediate_size > 0, a shared MLP beside the experts in every layer, gate and up fused
    (shared_mlp.input_linear [2S, H], output_linear [H, S])."""

    architecture = "Granite-MoE-Shared"
    config_class = "GraniteMoeSharedConfig"
    default_model_class = "GraniteMoeSharedForCausalLM"
    shared_names = names(gate="shared_mlp.input_linear", up="shared_mlp.input_linear", down="shared_mlp.output_linear")

    shared_intermediate_size: WidthOrZero = 0

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
    layer_types: list[str] | None

    def attention(self, window: int | None, **overrides: Any) -> Attention:
        return super().attention(window, sinks=True, **overrides)

    @per_config
    def kinds(self) -> list[str]:
        if self.layer_types is not None:
            return list(self.layer_types)
        return ["full_attention" if i % 4 == 0 else "sliding_attention" for i in range(self.num_hidden_layers)]

    def resolved(self, field: str):
        return self.kinds() if field == "layer_types" else super().resolved(field)

    def layer_windows(self) -> list[int | None]:
        return windows_of_layer_types(self.kinds(), self.sliding_window)


SWA_DERIVED = {"layer_types": "full_attention where i % 4 == 0, the others sliding_attention"}


class GraniteSWAConfig(_SlidingWithSinks, GraniteConfig):
    """configuration_granite_swa.py / modular_granite_swa.py: Granite's layer with Granite-SWA's attention (sinks,
    sliding windows)."""

    architecture = "Granite-SWA"
    config_class = "GraniteSWAConfig"
    default_model_class = "GraniteSWAForCausalLM"
    derived_defaults = {**GraniteConfig.derived_defaults, **SWA_DERIVED}

    vocab_size: Width = 100352
    hidden_size: Width = 2560
    intermediate_size: Width = 8192
    num_hidden_layers: LayerCount = 24
    num_attention_heads: HeadCount = 20
    num_key_value_heads: HeadCount | None = 4
    max_position_embeddings: PositionCount = 8192
    tie_word_embeddings: Flag = True
    sliding_window: Width | None = 128
    layer_types: list[Literal["full_attention", "sliding_attention"]] | None = Field(None, max_length=1 << 14)


class GraniteMoeSWAConfig(_SlidingWithSinks, GraniteMoeSharedConfig):
    """configuration_granitemoe_swa.py / modular_granitemoe_swa.py: Granite-MoE-Shared's layer (experts, and a shared
    MLP when shared_intermediate_size > 0) with Granite-SWA's attention (sinks, sliding windows)."""

    architecture = "Granite-MoE-SWA"
    config_class = "GraniteMoeSWAConfig"
    default_model_class = "GraniteMoeSWAForCausalLM"
    derived_defaults = {**GraniteMoeSharedConfig.derived_defaults, **SWA_DERIVED}
    # transformers 5.24 has no conversion for this model_type (GraniteMoe's renames input_linear and output_linear):
    # its checkpoints keep the modules' own names, the experts stacked as gate_up_proj [E, 2I, H], down_proj [E, H, I].
    moe_names = names(router="block_sparse_moe.router", experts="block_sparse_moe.experts")
    expert_names = names(gate="gate_up_proj", up="gate_up_proj", down="down_proj", parameters=True)

    sliding_window: Width | None = 128
    layer_types: list[Literal["full_attention", "sliding_attention"]] | None = Field(None, max_length=1 << 14)


class Llama4TextConfig(DecoderConfig):
    """configuration_llama4.py (text model) / modeling_llama4.py.

    MoE on the layers in ``moe_layers`` (default every interleave_moe_layer_step-th), each with a
    shared expert of width intermediate_size and routed experts stored stacked and transposed;
    dense layers use intermediate_size_mlp. q/k are L2-normalised (no parameters). Layers whose
    ``layer_types`` entry is chunked_attention (default: all but every no_rope_layer_interval-th)
    attend within chunks of attention_chunk_size: a token sees the keys of its own chunk, at
    most that many.
    """

    architecture = "Llama-4"
    config_class = "Llama4TextConfig"
    default_model_class = "Llama4ForCausalLM"
    heads_divide_hidden = False  # configuration_*.py floors hidden_size // num_attention_heads
    derived_defaults = {
        "num_key_value_heads": "num_attention_heads",
        "moe_layers": "every interleave_moe_layer_step-th layer",
        "no_rope_layers": "all but every no_rope_layer_interval-th layer",
        "layer_types": "chunked_attention where no_rope_layers is 1, else full_attention",
    }
    mlp_names = names(gate="feed_forward.gate_proj", up="feed_forward.up_proj", down="feed_forward.down_proj")
    moe_names = names(router="feed_forward.router", experts="feed_forward.experts")
    expert_names = names(gate="gate_up_proj", up="gate_up_proj", down="down_proj", transposed=True, parameters=True)
    shared_names = names(
        gate="feed_forward.shared_expert.gate_proj",
        up="feed_forward.shared_expert.up_proj",
        down="feed_forward.shared_expert.down_proj",
    )

    vocab_size: Width = 202048
    hidden_size: Width = 5120
    intermediate_size: Width = 8192
    intermediate_size_mlp: Width = 16384
    num_hidden_layers: LayerCount = 48
    num_attention_heads: HeadCount = 40
    num_key_value_heads: HeadCount | None = 8
    head_dim: Width | None = 128
    max_position_embeddings: PositionCount = 131072
    num_local_experts: ExpertCount = 16
    num_experts_per_tok: ExpertCount = 1
    interleave_moe_layer_step: LayerCount = 1
    moe_layers: list[LayerIndex] | None = None
    no_rope_layers: list[Literal[0, 1]] | None = None
    no_rope_layer_interval: LayerCount = 4
    attention_chunk_size: Width | None = 8192
    layer_types: list[Literal["full_attention", "chunked_attention"]] | None = None
    attention_bias: Flag = False
    mlp_bias: ClassVar[bool] = False
    routing_fields = ("num_experts_per_tok", "num_local_experts")

    def resolved(self, field: str):
        if field == "moe_layers":
            return sorted(self.sparse_layers())
        if field == "no_rope_layers":
            return self.rope_layers()
        if field == "layer_types":
            return self.kinds()
        return super().resolved(field)

    @per_config
    def sparse_layers(self) -> set[int]:
        if self.moe_layers is not None:
            return set(self.moe_layers)
        step = self.interleave_moe_layer_step
        return {i for i in range(self.num_hidden_layers) if is_sparse(i, every=step, phase=step - 1)}

    @per_config
    def rope_layers(self) -> list[int]:
        if self.no_rope_layers:
            return list(self.no_rope_layers)
        return [int((i + 1) % self.no_rope_layer_interval != 0) for i in range(self.num_hidden_layers)]

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


class Llama4Config(MultimodalConfig):
    """configuration_llama4.py: a vision encoder and a projector around a Llama-4 text model; the
    top-level tie_word_embeddings (default false) decides tying."""

    architecture = "Llama-4"
    config_class = "Llama4Config"
    default_model_class = "Llama4ForConditionalGeneration"
    text_model_type = "llama4_text"
    vision_model_type = "llama4_vision_model"
    vision_prefix = "vision_model."
    tie_word_embeddings: Flag = False

    def projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        """Llama4MultiModalProjector: one linear from vision_output_dim to the text width, without bias."""
        return (projector_module("multi_modal_projector.linear_1", Linear(tower.hidden_size, text_hidden)),)
