"""The Llama-shaped decoder that most families refine: the fields every decoder reads, and the builders.

A family adapter subclasses ``DecoderConfig``, annotates the further fields its layers read (head_dim,
num_key_value_heads, attention_bias …, each only where its transformers configuration class has it, or with the
reason it reads it beyond), and assembles its layers from the builders here. ``@family(..., transformers=...)``
(declaration.py) gives every field, these included, the default and other names of the family's own configuration
class; DecoderConfig itself carries LlamaConfig's. The optional fields are read with getattr below (a family whose
class has no head_dim reads hidden_size // heads), so no base declares a field that a descendant's class lacks.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from pydantic import Field, model_validator

from ..schema import (
    HeadCount,
    HFConfig,
    Width,
    derives,
    per_arguments,
    ungroupable,
)
from ..spec import (
    Attention,
    CheckpointExtra,
    DenseFfn,
    ExpertStacking,
    Layer,
    ModelNames,
    ModelSpec,
    MoeFfn,
    Names,
    Norm,
    StoredTensor,
)
from .blocks import EXPERT_MLP, LLAMA_ATTENTION, LLAMA_LAYER, LLAMA_MLP, LLAMA_MODEL, LLAMA_MOE, SHARED_EXPERTS
from .declaration import fields_from


@fields_from(
    transformers="LlamaConfig",
    model_class="LlamaForCausalLM",
    informational=frozenset({"max_position_embeddings", "pad_token_id"}),
)
class DecoderConfig(HFConfig):
    """configuration_llama.py: the fields every Llama-style decoder reads, with LlamaConfig's defaults (a family
    declared from its own configuration class re-defaults them)."""

    # Where the checkpoint keeps each part (the Llama lineage's names unless a family says otherwise).
    layer_name: ClassVar[str] = LLAMA_LAYER
    attention_names: ClassVar[Names] = LLAMA_ATTENTION
    mlp_names: ClassVar[Names] = LLAMA_MLP
    moe_names: ClassVar[Names] = LLAMA_MOE
    expert_names: ClassVar[Names] = EXPERT_MLP
    model_names: ClassVar[ModelNames] = LLAMA_MODEL

    vocab_size: Width
    hidden_size: Width
    num_attention_heads: HeadCount
    pad_token_id: Annotated[
        int | None, Field(strict=True)
    ]  # the embedding's padding row: it must be a row of the table

    #: Whether transformers refuses a hidden_size that is not a multiple of num_attention_heads
    #: (LlamaConfig.validate_architecture does, whatever head_dim says; Mistral and Qwen floor it).
    heads_divide_hidden: ClassVar[bool] = True

    @model_validator(mode="after")
    def _check_shapes(self) -> DecoderConfig:
        if self.heads_divide_hidden and self.hidden_size % self.num_attention_heads:
            raise ValueError(
                f"hidden_size ({self.hidden_size}) is not a multiple of num_attention_heads ({self.num_attention_heads})"
            )
        rows = self.token_rows
        if self.pad_token_id is not None and not -rows <= self.pad_token_id < rows:
            size = f"vocab_size {self.vocab_size}" + ("" if rows == self.vocab_size else f", {rows} rows")
            raise ValueError(
                f"pad_token_id ({self.pad_token_id}) is not a row of the embedding table ({size}); "
                "torch refuses such a padding_idx"
            )
        layer_types = getattr(self, "layer_types", None)
        if isinstance(layer_types, list) and len(layer_types) != self.layer_count:
            raise ValueError(f"layer_types has {len(layer_types)} entries for {self.layer_count} layers")
        return self

    def warnings(self) -> list[str]:
        found = super().warnings()
        if self.resolved_head_dim == 0:
            found.append(
                f"hidden_size {self.hidden_size} over {self.num_attention_heads} heads leaves heads of width 0: "
                "transformers builds such a model, but it cannot attend"
            )
        return found + ungroupable(
            self.num_attention_heads, self.kv_heads, "num_attention_heads", "num_key_value_heads"
        )

    # --- resolved values (transformers' defaulting rules) ---

    @property
    def token_rows(self) -> int:
        """The token table's rows: vocab_size (a family whose table holds more says so)."""
        return self.vocab_size

    @property
    @derives("num_key_value_heads", "num_attention_heads")
    def kv_heads(self) -> int:
        """num_key_value_heads where the family has the field and the config sets it, else every head."""
        return getattr(self, "num_key_value_heads", None) or self.num_attention_heads

    @property
    @derives("head_dim", "hidden_size // num_attention_heads")
    def resolved_head_dim(self) -> int:
        """head_dim where the family has the field and the config sets it, else hidden_size // heads."""
        return getattr(self, "head_dim", None) or self.hidden_size // self.num_attention_heads

    @property
    def activation(self) -> str:
        """The MLP's activation: the hidden_act field (a family whose class names it otherwise, or fixes it, says so
        by overriding this property)."""
        found = getattr(self, "hidden_act", None)
        if not isinstance(found, str):  # pragma: no cover - every family has the field or fixes the value
            raise TypeError(f"{type(self).__name__} names no MLP activation (hidden_act)")
        return found

    @property
    def attention_biased(self) -> bool:
        """attention_bias where the family's configuration class has the switch; a family whose attention always
        has biases overrides this property; else no biases."""
        return bool(getattr(self, "attention_bias", False))

    @property
    def layer_count(self) -> int:
        """num_hidden_layers where the family has the field; a family whose layers come from a pattern says its own."""
        found = getattr(self, "num_hidden_layers", None)
        if not isinstance(found, int):  # pragma: no cover - every family has the field or says its count
            raise TypeError(f"{type(self).__name__} says no layer count (num_hidden_layers)")
        return found

    @property
    def dense_width(self) -> int:
        """intermediate_size where the family has the field; a family without it builds no dense MLP."""
        found = getattr(self, "intermediate_size", None)
        if not isinstance(found, int):
            raise TypeError(f"{type(self).__name__} has no dense MLP width (intermediate_size)")
        return found

    @property
    def ties_embeddings(self) -> bool:
        """tie_word_embeddings where the family has the switch; else the head has weights of its own (a family that
        always ties overrides this property)."""
        return bool(getattr(self, "tie_word_embeddings", False))

    @property
    def mlp_biased(self) -> bool:
        """mlp_bias where the family's configuration class has the switch; else no biases (a family whose MLP always
        has biases overrides this property)."""
        return bool(getattr(self, "mlp_bias", False))

    def layer_windows(self) -> list[int | None]:
        """Each layer's attention window (None: the whole context); Llama has none."""
        return [None] * self.layer_count

    def window_kinds(self) -> list[str]:
        """Each layer's kind as its window makes it: full_attention, or sliding_attention where it has a window."""
        return ["full_attention" if window is None else "sliding_attention" for window in self.layer_windows()]

    # --- builders ---

    @per_arguments
    def rms_norm(self, dim: int | None = None) -> Norm:
        return Norm("rmsnorm", dim or self.hidden_size)

    @per_arguments
    def attention(self, window: int | None, **overrides: Any) -> Attention:
        """Standard q/k/v/o attention with this config's heads; ``overrides`` set biases, norms, sinks."""
        fields: dict[str, Any] = dict(
            hidden_size=self.hidden_size,
            num_heads=self.num_attention_heads,
            num_kv_heads=self.kv_heads,
            qk_head_dim=self.resolved_head_dim,
            v_head_dim=self.resolved_head_dim,
            names=self.attention_names,
            q_bias=self.attention_biased,
            k_bias=self.attention_biased,
            v_bias=self.attention_biased,
            o_bias=self.attention_biased,
            window=window,
        )
        fields.update(overrides)
        return Attention(**fields)

    def per_head_norms(self) -> dict[str, Norm]:
        """RMSNorm over each query and key head (Qwen3, Gemma-3): attention() overrides."""
        norm = self.rms_norm(self.resolved_head_dim)
        return {"q_norm": norm, "k_norm": norm}

    @per_arguments
    def gated_ffn(self, width: int | None = None, bias: bool | None = None, names: Names | None = None) -> DenseFfn:
        return DenseFfn(
            hidden_size=self.hidden_size,
            intermediate_size=width or self.dense_width,
            gated=True,
            activation=self.activation,
            names=names or self.mlp_names,
            bias=self.mlp_biased if bias is None else bias,
        )

    def shared_experts_moe(
        self, experts: int, per_token: int, width: int, shared: int, names: Names | None = None
    ) -> MoeFfn:
        """DeepSeek's MoE: EXPERTS routed experts of WIDTH, PER_TOKEN a token, beside SHARED shared experts run as one
        MLP SHARED × WIDTH wide (under mlp.shared_experts unless NAMES says)."""
        return self.moe_ffn(
            experts,
            per_token,
            width,
            shared_width=width * shared,
            num_shared_experts=shared,
            shared_names=names or SHARED_EXPERTS,
        )

    @per_arguments
    def moe_ffn(
        self,
        num_experts: int,
        experts_per_token: int,
        expert_width: int,
        *,
        shared_width: int = 0,
        num_shared_experts: int = 0,
        shared_names: Names | None = None,
        shared_expert_gate: bool = False,
        router_bias: bool = False,
        expert_bias: bool = False,
        shared_bias: bool = False,
        stacking: ExpertStacking = "stacked",
        latent_size: int | None = None,
        gated: bool = True,
        activation: str | None = None,
    ) -> MoeFfn:
        """The one MoE builder: routed experts of ``expert_width`` (gated unless told otherwise), and
        optionally a shared MLP of ``shared_width``; with ``latent_size`` the experts run at that width."""
        act = activation or self.activation
        shared = None
        if shared_width:
            shared = DenseFfn(self.hidden_size, shared_width, gated, act, shared_names or self.mlp_names, shared_bias)
        expert = DenseFfn(latent_size or self.hidden_size, expert_width, gated, act, self.expert_names, expert_bias)
        return MoeFfn(
            hidden_size=self.hidden_size,
            num_experts=num_experts,
            experts_per_token=min(
                experts_per_token, num_experts
            ),  # more draws than experts: all (HFConfig.warnings says so)
            expert=expert,
            names=self.moe_names,
            shared=shared,
            num_shared_experts=num_shared_experts or (1 if shared_width else 0),
            shared_expert_gate=shared_expert_gate,
            router_bias=router_bias,
            stacking=stacking,
            latent_size=latent_size,
        )

    @per_arguments
    def pre_norms(self) -> tuple[tuple[str, Norm], ...]:
        """Llama's two RMSNorms per layer: before attention and before the FFN."""
        norm = self.rms_norm()
        return (("input_layernorm", norm), ("post_attention_layernorm", norm))

    @per_arguments
    def layer(self, attention: Attention | None, ffn: DenseFfn | MoeFfn | None, norms=None, **fields: Any) -> Layer:
        """A layer under this family's module name, with Llama's norms unless told otherwise."""
        return Layer(self.layer_name, attention, ffn, self.pre_norms() if norms is None else norms, **fields)

    def build_layer(self, index: int, window: int | None) -> Layer:
        """A Llama layer; families override this to change attention, FFN or norms."""
        return self.layer(self.attention(window), self.gated_ffn())

    def build_layers(self) -> tuple[Layer, ...]:
        """Every layer, in one pass over the windows: a 16k-layer config stays linear. Llama's own layer depends on
        its window alone, so one is built per window and reused; a family that overrides build_layer (its layers
        may differ by index) gets one built per index."""
        windows = self.layer_windows()
        if type(self).build_layer is not DecoderConfig.build_layer:
            return tuple(self.build_layer(index, window) for index, window in enumerate(windows))
        built: dict[int | None, Layer] = {}
        for index, window in enumerate(windows):
            if window not in built:
                built[window] = self.build_layer(index, window)
        return tuple(built[window] for window in windows)

    def rotary_extras(self) -> tuple[CheckpointExtra, ...]:
        """Rotary ``inv_freq`` tables: buffers that transformers before 4.32 saved with the weights (Llama-2-7b)."""
        if not self.written_before(4, 32):
            return ()
        per_layer = self.resolved_head_dim // 2
        return (
            CheckpointExtra(
                name="rotary inv_freq buffers",
                reason=(
                    f"{per_layer} per layer × {self.layer_count} layers; buffers, not parameters, which "
                    f"transformers before 4.32 saved with the weights (this config: {self.transformers_version})"
                ),
                tensors=(StoredTensor(self.layer_name + ".self_attn.rotary_emb.inv_freq", (per_layer,)),),
                per_layer=tuple(range(self.layer_count)),
            ),
        )

    def checkpoint_extras(self) -> tuple[CheckpointExtra, ...]:
        return self.rotary_extras()

    def to_spec(self) -> ModelSpec:
        return ModelSpec(
            model_type=self.model_type,
            hidden_size=self.hidden_size,
            vocab_size=self.vocab_size,
            layers=self.build_layers(),
            final_norm=self.rms_norm(),
            tie_word_embeddings=self.ties_embeddings,
            names=self.model_names,
            checkpoint_extras=self.checkpoint_extras(),
        )


class LayerNormDecoder(HFConfig):
    """The decoders before Llama (GPT-2, GPT-J, GPT-NeoX, BLOOM, Falcon, OPT): LayerNorms with biases,
    each family naming its fields its own way; ``width`` is the hidden size under whatever name."""

    layer_name: ClassVar[str] = "transformer.h.{i}"
    model_names: ClassVar[ModelNames] = ModelNames(
        embed_tokens="transformer.wte", final_norm="transformer.ln_f", base_model_prefix="transformer"
    )

    @property
    def width(self) -> int:  # pragma: no cover - each adapter names its own field
        raise NotImplementedError

    def layer_norm(self, bias: bool = True) -> Norm:
        return Norm("layernorm", self.width, bias=bias)

    def mha(
        self, heads: int, bias: bool, names: Names, kv_heads: int | None = None, head_dim: int | None = None
    ) -> Attention:
        """Attention whose q, k, v, o share one bias switch and one head width (default hidden / heads)."""
        width = head_dim or self.width // heads
        return Attention(self.width, heads, kv_heads or heads, width, width, names, bias, bias, bias, bias)

    def plain_ffn(self, width: int, activation: str, bias: bool, names: Names) -> DenseFfn:
        return DenseFfn(self.width, width, gated=False, activation=activation, names=names, bias=bias)

    def decoder_spec(self, layer: Layer, count: int, final_norm: Norm | None, tie: bool, **fields: Any) -> ModelSpec:
        return ModelSpec(
            model_type=self.model_type,
            hidden_size=self.width,
            vocab_size=fields.pop("vocab_size"),
            layers=(layer,) * count,
            final_norm=final_norm,
            tie_word_embeddings=tie,
            names=fields.pop("names", self.model_names),
            **fields,
        )
