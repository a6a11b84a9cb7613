"""Gemma (tied, head_dim 256, GeGLU), Gemma-2 (four norms a layer, alternating windows), VaultGemma (Gemma-2
with norms before the sublayers only), Gemma-3 (q/k norms, 5 local : 1 global), the Gemma-3 multimodal
wrapper and ShieldGemma 2 (the same model, saved one level deeper); Gemma 3n and Gemma 4 (per-layer embeddings,
layers that reuse another's keys and values; Gemma 3n's AltUp and LAuReL, Gemma 4's wider global heads and MoE block),
Gemma 4 unified's text model (Gemma 4's layers alone), their wrappers and Gemma 4's assistants (drafters that read the
target's cached keys and values)."""

from __future__ import annotations

from functools import cached_property
from typing import Any, ClassVar, Literal

from pydantic import AliasChoices, Field, model_validator

from ..errors import InvalidConfigError
from ..results import DefaultUsed
from ..schema import (
    MAX_HEADS,
    ExpertCount,
    ExpertCountOrZero,
    Flag,
    HeadCount,
    HFConfig,
    LayerCount,
    LayerIndex,
    Name,
    PositionCount,
    Width,
    WidthOrZero,
    derives,
)
from ..spec import (
    CheckpointExtra,
    DenseFfn,
    Extra,
    ImageInput,
    Layer,
    LearnedTensor,
    Linear,
    ModelSpec,
    MoeFfn,
    Norm,
    Parameter,
    Projection,
    StoredTensor,
    Table,
    names,
)
from ..values import replace
from .base import DecoderConfig
from .blocks import periodic_window, windows_of_layer_types
from .multimodal import MultimodalConfig, MultimodalLayers, nest
from .registry import family
from .towers import Tower, audio_module, projector_module


class GemmaLayers(DecoderConfig):
    """configuration_gemma.py: embeddings tied unless told otherwise; head_dim 256 by default.

    Gemma's RMSNorm scales by (1 + weight), which changes its values, not its size.
    """

    architecture = "Gemma"
    config_class = "GemmaConfig"
    default_model_class = "GemmaForCausalLM"
    heads_divide_hidden = False  # configuration_*.py floors hidden_size // num_attention_heads

    num_hidden_layers: LayerCount
    tie_word_embeddings: Flag
    attention_bias: Flag
    num_key_value_heads: HeadCount | None
    head_dim: Width | None
    hidden_act: Name
    max_position_embeddings: PositionCount


@family("gemma", transformers="GemmaConfig")
class GemmaConfig(GemmaLayers):
    """configuration_gemma.py: Gemma's layers, one MLP width for all (Gemma 3n's language model gives one per layer,
    so the width is each config's)."""

    intermediate_size: Width


class Gemma2Layers(GemmaLayers):
    """configuration_gemma2.py: norms before and after both attention and FFN; windows from layer_types,
    by default on the even-indexed layers (every second layer global). transformers refuses a hidden
    size that is not a multiple of the heads, head_dim or not."""

    architecture = "Gemma-2"
    config_class = "Gemma2Config"
    default_model_class = "Gemma2ForCausalLM"
    heads_divide_hidden = True  # Gemma2Config.validate_architecture
    global_period: ClassVar[int] = 2

    other_names = {
        "hidden_act": "from Gemma-2 on the class names the activation hidden_activation; older configs have hidden_act"
    }
    hidden_act: Name = Field(validation_alias=AliasChoices("hidden_activation", "hidden_act"))
    sliding_window: Width | None
    layer_types: list[Literal["full_attention", "sliding_attention"]] | None

    @derives("layer_types", "every second layer global, the others sliding")
    def window_kinds(self) -> list[str]:
        return super().window_kinds()

    @property
    def window(self) -> int | None:
        return self.sliding_window

    def layer_windows(self) -> list[int | None]:
        if self.layer_types is not None:
            return windows_of_layer_types(self.layer_types, self.window)
        return [periodic_window(i, self.window, self.global_period) for i in range(self.num_hidden_layers)]

    def sandwich_norms(self) -> tuple[tuple[str, Norm], ...]:
        norm = self.rms_norm()
        return (
            ("input_layernorm", norm),
            ("post_attention_layernorm", norm),
            ("pre_feedforward_layernorm", norm),
            ("post_feedforward_layernorm", norm),
        )

    def build_layer(self, index: int, window: int | None) -> Layer:
        return self.layer(self.attention(window), self.gated_ffn(), self.sandwich_norms())


@family("gemma2", transformers="Gemma2Config")
class Gemma2Config(Gemma2Layers):
    """configuration_gemma2.py: Gemma-2's layers, one MLP width for all."""

    intermediate_size: Width


@family("vaultgemma", transformers="VaultGemmaConfig", architecture="VaultGemma", model_class="VaultGemmaForCausalLM")
class VaultGemmaConfig(Gemma2Config):
    """configuration_vaultgemma.py / modular_vaultgemma.py: Gemma-2's layer without the norms after attention
    and after the FFN (input_layernorm and pre_feedforward_layernorm remain); Gemma-2's windows."""

    def build_layer(self, index: int, window: int | None) -> Layer:
        norm = self.rms_norm()
        norms = (("input_layernorm", norm), ("pre_feedforward_layernorm", norm))
        return self.layer(self.attention(window), self.gated_ffn(), norms)


@family(
    "gemma3_text",
    transformers="Gemma3TextConfig",
    architecture="Gemma-3",
    model_class="Gemma3ForCausalLM",
    read_beyond={"sliding_window_pattern": "still in configs on the Hub; __post_init__ reads it"},
)
class Gemma3TextConfig(Gemma2Config):
    """configuration_gemma3.py (text): Gemma-2's layer plus RMSNorm on each query and key head; by
    default every ``sliding_window_pattern``-th layer (6, a key read only for layer_types) is global.
    With use_bidirectional_attention the window becomes sliding_window // 2 + 1."""

    use_bidirectional_attention: Flag
    sliding_window_pattern: LayerCount = 6  # not a field of Gemma3TextConfig: a key it still reads

    @derives("layer_types", "every sliding_window_pattern-th layer (default 6) global, the others sliding")
    def window_kinds(self) -> list[str]:
        return super().window_kinds()

    @property
    def global_period(self) -> int:  # type: ignore[override]
        return self.sliding_window_pattern

    @property
    def window(self) -> int | None:
        if self.sliding_window is not None and self.use_bidirectional_attention:
            return self.sliding_window // 2 + 1
        return self.sliding_window

    def unused_fields(self) -> set[str]:
        return {"sliding_window_pattern"} if self.layer_types is not None else set()

    def build_layer(self, index: int, window: int | None) -> Layer:
        attention = self.attention(window, **self.per_head_norms())
        return self.layer(attention, self.gated_ffn(), self.sandwich_norms())


@family("gemma3", transformers="Gemma3Config", architecture="Gemma-3", model_class="Gemma3ForConditionalGeneration")
class Gemma3Config(MultimodalConfig):
    """configuration_gemma3.py: a SigLIP vision tower and a projector around a Gemma-3 text model; the
    top-level tie_word_embeddings (default true) decides tying."""

    text_model_type = "gemma3_text"
    vision_model_type = "siglip_vision_model"
    informational_fields = frozenset({"mm_tokens_per_image"})
    #: Where the checkpoint keeps Gemma3MultiModalProjector.
    projector_prefix: ClassVar[str] = "multi_modal_projector."

    mm_tokens_per_image: Width  # the tower's patches are average-pooled to this many tokens (no parameters)

    def projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        """Gemma3MultiModalProjector: an RMSNorm of the tower's width, then one matrix into the text width
        (an nn.Parameter, mm_input_projection_weight [vision hidden, text hidden])."""
        return (
            projector_module(self.projector_prefix + "mm_soft_emb_norm", Norm("rmsnorm", tower.hidden_size)),
            projector_module(
                self.projector_prefix + "mm_input_projection_weight",
                LearnedTensor((tower.hidden_size, text_hidden), matmul=True),
            ),
        )

    def image_input(self, tower: Tower) -> ImageInput | None:
        """SigLIP's patches of a 896 × 896 (image_size) image, average-pooled to mm_tokens_per_image tokens."""
        return None if tower.image is None else replace(tower.image, pooled_tokens=self.mm_tokens_per_image)


@family(
    "shieldgemma2",
    transformers="ShieldGemma2Config",
    architecture="ShieldGemma 2",
    model_class="Gemma3ForConditionalGeneration",
)
class ShieldGemma2Config(Gemma3Config):
    """configuration_shieldgemma2.py / modeling_shieldgemma2.py: Gemma 3's model (the image-text-to-text mapping
    builds Gemma3ForConditionalGeneration from this config) with Gemma 3's text and SigLIP defaults;
    tie_word_embeddings (default false) turns true when text_config's is (Gemma 3's text model ties by default).
    Saved as conversion_mapping.py's "shieldgemma2" PrefixChange reverts it: model.language_model.model.,
    model.vision_tower., model.multi_modal_projector. and lm_head. ShieldGemma2ForImageClassification holds that
    whole model as its module model. (every name one "model." deeper) and reads the logits of two tokens (yes, no)
    at the last position: the head runs whole, as in the model it holds."""

    language_model_prefix = "model.language_model.model."
    lm_head_name = "lm_head"
    vision_prefix = "model.vision_tower."
    projector_prefix = "model.multi_modal_projector."
    #: The class that keeps the image-text-to-text model as its module model.
    classifier_class: ClassVar[str] = "ShieldGemma2ForImageClassification"

    def tied(self) -> bool:
        """ShieldGemma2Config.__post_init__: the wrapper ties when it says so or when its language model does."""
        return self.tie_word_embeddings or getattr(self.text, "tie_word_embeddings", False) is True

    def wrapped_spec(self) -> ModelSpec:
        spec = super().wrapped_spec()
        return nest(spec, "model.") if self.model_class() == self.classifier_class else spec


# --- Gemma 4 and Gemma 3n: per-layer embeddings, layers that reuse another layer's keys and values --------------

GEMMA4_MOE = names(router="router.proj", experts="experts")
STACKED_EXPERTS = names(
    gate="gate_up_proj", up="gate_up_proj", down="down_proj", parameters=True
)  # [E, 2I, H], [E, H, I]
PER_LAYER_EMBEDDINGS_NOTE = (
    "per-layer embeddings: each token looks up num_hidden_layers · hidden_size_per_layer_input values in "
    "embed_tokens_per_layer (a lookup: no FLOPs, like the token embedding) and adds them to per_layer_model_projection "
    "of its embedding (2 · hidden · L · P FLOPs, under other); each layer gates its slice in with per_layer_input_gate "
    "and per_layer_projection (2 · 2 · hidden · P FLOPs, under other)"
)


def kv_sharing_modes(layer_types: list[str], shared: int) -> list[str | None]:
    """transformers' kv_sharing_modes: the last SHARED layers "reuse" the keys and values of the last layer of their
    kind before them, which "store"s them; the layers before the shared ones must hold every kind."""
    count = len(layer_types)
    first_shared = count - shared
    modes: list[str | None] = [None if i < first_shared else "reuse" for i in range(count)]
    producers = layer_types[0:first_shared][::-1]
    if sorted(set(producers)) != sorted(set(layer_types)):
        raise ValueError(
            f"num_kv_shared_layers ({shared}) leaves no layer before the shared ones for some kind of layer_types: "
            "transformers refuses a kind whose keys and values no layer computes"
        )
    for kind in set(layer_types):
        modes[first_shared - 1 - producers.index(kind)] = "store"
    return modes


class PerLayerEmbeddings:
    """Gemma 3n's and Gemma 4's per-layer embeddings (PLE): a second token table of L · P columns
    (num_hidden_layers · hidden_size_per_layer_input), added to per_layer_model_projection of the embedding
    (hidden → L · P, then an RMSNorm over P); layer i gates its slice in: per_layer_input_gate (hidden → P),
    per_layer_projection (P → hidden) and an RMSNorm."""

    hidden_size: int
    num_hidden_layers: int
    pad_token_id: int | None
    vocab_size_per_layer_input: int
    hidden_size_per_layer_input: int

    def has_per_layer_embeddings(self) -> bool:
        return True

    def check_per_layer_padding(self) -> None:
        """torch refuses a padding_idx (pad_token_id) that is not a row of embed_tokens_per_layer."""
        pad, rows = self.pad_token_id, self.vocab_size_per_layer_input
        if self.has_per_layer_embeddings() and pad is not None and not -rows <= pad < rows:
            raise ValueError(
                f"pad_token_id ({pad}) is not a row of embed_tokens_per_layer (vocab_size_per_layer_input {rows}); "
                "torch refuses such a padding_idx"
            )

    def per_layer_embeddings(self) -> tuple[Extra, ...]:
        """embed_tokens_per_layer [V_ple, L · P] (a lookup), per_layer_model_projection [L · P, hidden], per_layer_projection_norm [P]."""
        width = self.num_hidden_layers * self.hidden_size_per_layer_input
        return (
            Extra("embedding", "model.embed_tokens_per_layer", Table(self.vocab_size_per_layer_input, width)),
            Extra("other", "model.per_layer_model_projection", Linear(self.hidden_size, width)),
            Extra("norm", "model.per_layer_projection_norm", Norm("rmsnorm", self.hidden_size_per_layer_input)),
        )

    def per_layer_input(self) -> tuple[Projection, ...]:
        """A layer's gate (hidden → P) and projection back (P → hidden)."""
        hidden, width = self.hidden_size, self.hidden_size_per_layer_input
        return (
            Projection("per_layer_input_gate", "per_layer_input_gate", hidden, width, component="other"),
            Projection("per_layer_projection", "per_layer_projection", width, hidden, component="other"),
        )


class Gemma4TextLayers(Gemma2Config):
    """configuration_gemma4.py / modeling_gemma4.py (text), the layers every Gemma 4 language model shares: Gemma-3's
    layer (four norms, q/k norms; v is normed without a weight) and a one-element layer_scalar buffer, and options:

    - full-attention layers (by default every sixth, and always the last) have heads of global_head_dim (512) and,
      with attention_k_eq_v, num_global_key_value_heads KV heads and no v_proj (v is k's projection);
      a config transformers wrote lists these as per_layer_config overrides instead;
    - the last num_kv_shared_layers reuse the keys and values of the last earlier layer of their kind: no k_proj,
      v_proj or k_norm, nothing cached (all layers when it equals num_hidden_layers); with use_double_wide_mlp
      their MLP is twice as wide;
    - use_bidirectional_attention "all" makes the window sliding_window // 2 + 1.

    Gemma4TextConfig adds per-layer embeddings and the MoE block; Gemma 4 unified's text model has neither field.
    """

    heads_divide_hidden = False  # Gemma4TextConfig has no validate_architecture of its own
    read_beyond = dict.fromkeys(
        ("global_head_dim", "num_global_key_value_heads", "per_layer_config"),
        "no field of Gemma4TextConfig: a key its __post_init__ reads from its kwargs",
    )
    global_period: ClassVar[int] = 6  # a local of __post_init__, not a field

    num_key_value_heads: HeadCount
    head_dim: Width
    sliding_window: Width
    use_bidirectional_attention: Literal["all", "vision"] | None
    attention_k_eq_v: Flag
    num_kv_shared_layers: LayerIndex
    use_double_wide_mlp: Flag
    global_head_dim: Width = 512
    num_global_key_value_heads: HeadCount | None = None
    per_layer_config: dict[str, dict[str, Any]] | None = None

    @model_validator(mode="after")
    def _check_gemma4_layers(self) -> Gemma4TextLayers:
        self.attention_overrides()  # refuses what transformers refuses
        self.kv_modes()
        return self

    def warnings(self) -> list[str]:
        found = super().warnings()
        if self.layer_types is not None and self.layer_types[-1] != "full_attention":
            found.append("layer_types: the last layer must use full_attention, and transformers makes it so")
        return found

    def unused_fields(self) -> set[str]:
        unused = set()
        if self.per_layer_config is not None:
            unused |= {"global_head_dim", "num_global_key_value_heads"}
        else:  # the other way to say the full-attention layers' heads, not a default taken
            unused.add("per_layer_config")
            if not self.attention_k_eq_v:
                unused.add("num_global_key_value_heads")
        return unused

    @derives("layer_types", "every sixth layer global, the others sliding; the last layer always global")
    def kinds(self) -> list[str]:
        """layer_types, every sixth layer global by default; transformers makes the last layer global whatever they say."""
        count = self.num_hidden_layers
        kinds: list[str] = (
            list(self.layer_types)
            if self.layer_types is not None
            else ["full_attention" if (i + 1) % self.global_period == 0 else "sliding_attention" for i in range(count)]
        )
        kinds[-1] = "full_attention"
        return kinds

    @property
    def window(self) -> int:
        return self.sliding_window // 2 + 1 if self.use_bidirectional_attention == "all" else self.sliding_window

    def layer_windows(self) -> list[int | None]:
        return windows_of_layer_types(self.kinds(), self.window)

    def kv_modes(self) -> list[str | None]:
        """Which layers reuse another's keys and values: the last num_kv_shared_layers (all of them when it equals the layers)."""
        if self.num_kv_shared_layers == self.num_hidden_layers:
            return ["reuse"] * self.num_hidden_layers
        return kv_sharing_modes(self.kinds(), self.num_kv_shared_layers)

    def attention_overrides(self) -> dict[int, dict[str, int]]:
        """Each layer's head_dim and num_key_value_heads where they differ from the config's: per_layer_config as given,
        else (__post_init__) global_head_dim on every full-attention layer and, with attention_k_eq_v,
        num_global_key_value_heads. transformers needs every layer of a kind to agree (one rotary table per kind)."""
        kinds = self.kinds()
        own = {"head_dim": self.head_dim, "num_key_value_heads": self.num_key_value_heads}
        given: dict[int, dict[str, int]]
        if self.per_layer_config is None:
            full: dict[str, int] = {"head_dim": self.global_head_dim}
            if self.attention_k_eq_v and self.num_global_key_value_heads is not None:
                full["num_key_value_heads"] = self.num_global_key_value_heads
            given = {i: full for i, kind in enumerate(kinds) if kind == "full_attention"}
        else:
            given = {}
            for key, layer in self.per_layer_config.items():
                index = int(key) if key.strip().isdigit() else -1
                if not 0 <= index < self.num_hidden_layers:
                    raise ValueError(
                        f"per_layer_config: {key!r} is not a layer index (0 to {self.num_hidden_layers - 1})"
                    )
                unread = set(layer) - set(own) - {"skip"}  # skip: sub-layers to leave out, which Gemma 4 ignores
                if unread:
                    raise ValueError(f"per_layer_config[{key!r}]: {sorted(unread)} cannot differ by layer in Gemma 4")
                for field, value in layer.items():
                    if field != "skip" and not (
                        isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_HEADS
                    ):
                        raise ValueError(f"per_layer_config[{key!r}].{field}: must be a positive integer")
                given[index] = {field: value for field, value in layer.items() if field != "skip"}
        differing = {index: {f: v for f, v in layer.items() if v != own[f]} for index, layer in given.items()}
        for kind in set(kinds):
            of_kind = {tuple(sorted(differing.get(i, {}).items())) for i, k in enumerate(kinds) if k == kind}
            if len(of_kind) > 1:
                raise ValueError(f"per_layer_config: the {kind} layers differ, and transformers needs them alike")
        return differing

    def build_layers(self) -> tuple[Layer, ...]:
        overrides, modes = self.attention_overrides(), self.kv_modes()
        return tuple(
            self.gemma4_layer(window, overrides.get(index, {}), modes[index] == "reuse")
            for index, window in enumerate(self.layer_windows())
        )

    def gemma4_layer(self, window: int | None, overrides: dict[str, int], kv_shared: bool) -> Layer:
        head_dim = overrides.get("head_dim", self.head_dim)
        head_norm = self.rms_norm(head_dim)
        attention = self.attention(
            window,
            num_kv_heads=overrides.get("num_key_value_heads", self.num_key_value_heads),
            qk_head_dim=head_dim,
            v_head_dim=head_dim,
            q_norm=head_norm,
            k_norm=None if kv_shared else head_norm,
            kv_shared=kv_shared,
            values_from_keys=self.attention_k_eq_v and window is None,
        )
        mlp = self.gated_ffn(self.intermediate_size * (2 if self.use_double_wide_mlp and kv_shared else 1))
        ffn, norms, fields = self.around_mlp(mlp)
        return self.layer(attention, ffn, norms, **fields)

    def around_mlp(self, mlp: DenseFfn) -> tuple[DenseFfn | MoeFfn, tuple[tuple[str, Norm], ...], dict[str, Any]]:
        """A layer's feed-forward block, its norms and its other parts (a family with more wraps the dense MLP)."""
        return mlp, self.sandwich_norms(), {}

    def checkpoint_extras(self) -> tuple[CheckpointExtra, ...]:
        return (
            CheckpointExtra(
                name="layer_scalar buffers",
                reason=f"one scale per layer × {self.num_hidden_layers} layers; a persistent buffer, saved with the weights",
                tensors=(StoredTensor(self.layer_name + ".layer_scalar", (1,)),),
                per_layer=tuple(range(self.num_hidden_layers)),
                buffer=True,
            ),
        )


@family(
    "gemma4_text",
    transformers="Gemma4TextConfig",
    architecture="Gemma-4",
    model_class="Gemma4ForCausalLM",
    routing=("top_k_experts", "num_experts"),
)
class Gemma4TextConfig(PerLayerEmbeddings, Gemma4TextLayers):
    """configuration_gemma4.py / modeling_gemma4.py (text): Gemma 4's layers (Gemma4TextLayers), and

    - hidden_size_per_layer_input > 0: per-layer embeddings (PerLayerEmbeddings);
    - enable_moe_block: beside the dense MLP, which acts as a shared expert, a router (a weightless RMSNorm, a
      scale per hidden unit, proj, a scale per expert) picks top_k_experts of num_experts stacked experts
      (moe_intermediate_size wide), with three more norms.
    """

    moe_names = GEMMA4_MOE
    expert_names = STACKED_EXPERTS

    vocab_size_per_layer_input: WidthOrZero  # 0 with no per-layer embeddings (a Gemma 4 assistant)
    hidden_size_per_layer_input: WidthOrZero
    enable_moe_block: Flag
    num_experts: ExpertCountOrZero | None
    top_k_experts: ExpertCount | None
    moe_intermediate_size: Width | None

    @model_validator(mode="after")
    def _check_gemma4(self) -> Gemma4TextConfig:
        if self.enable_moe_block:
            for field in ("num_experts", "moe_intermediate_size"):
                if getattr(self, field) is None:
                    raise ValueError(
                        f"{field}: required with enable_moe_block (Gemma4TextConfig leaves it None and cannot build the experts)"
                    )
        self.check_per_layer_padding()
        return self

    def warnings(self) -> list[str]:
        found = super().warnings()
        if self.enable_moe_block and self.top_k_experts is None:
            found.append(
                "top_k_experts is not set: transformers builds the experts, but cannot route a token; "
                "active parameters count every expert"
            )
        return found

    def unused_fields(self) -> set[str]:
        unused = super().unused_fields()
        if not self.enable_moe_block:
            unused |= {"num_experts", "top_k_experts", "moe_intermediate_size"}
        if not self.hidden_size_per_layer_input:
            unused.add("vocab_size_per_layer_input")
        return unused

    def has_per_layer_embeddings(self) -> bool:
        return bool(self.hidden_size_per_layer_input)  # 0: no per-layer embeddings (Gemma-4-26B-A4B)

    def notes(self) -> list[str]:
        return [PER_LAYER_EMBEDDINGS_NOTE] if self.has_per_layer_embeddings() else []

    def around_mlp(self, mlp: DenseFfn) -> tuple[DenseFfn | MoeFfn, tuple[tuple[str, Norm], ...], dict[str, Any]]:
        ffn, norms, fields = super().around_mlp(mlp)
        if self.enable_moe_block:
            experts = self.num_experts or 0
            per_token = experts if self.top_k_experts is None else self.top_k_experts
            ffn = self.moe_ffn(experts, per_token, self.moe_intermediate_size or 0, shared_width=mlp.intermediate_size)
            norm = self.rms_norm()
            norms += (
                ("post_feedforward_layernorm_1", norm),
                ("post_feedforward_layernorm_2", norm),
                ("pre_feedforward_layernorm_2", norm),
            )
            fields["parameters"] = (
                Parameter("ffn", "router", "router.scale", (self.hidden_size,)),
                Parameter("ffn", "router", "router.per_expert_scale", (experts,)),
            )
        if self.has_per_layer_embeddings():
            norms += (("post_per_layer_input_norm", self.rms_norm()),)
            fields["projections"] = self.per_layer_input()
        return ffn, norms, fields

    def to_spec(self) -> ModelSpec:
        spec = super().to_spec()
        return replace(spec, extras=self.per_layer_embeddings() if self.has_per_layer_embeddings() else ())


@family(
    "gemma4_unified_text",
    transformers="Gemma4UnifiedTextConfig",
    architecture="Gemma-4 unified",
    model_class="Gemma4UnifiedForCausalLM",
)
class Gemma4UnifiedTextConfig(Gemma4TextLayers):
    """configuration_gemma4_unified.py / modular_gemma4_unified.py (text): Gemma 4's layers without per-layer
    embeddings or the MoE block (its configuration class removes their fields), a window of 1,024 and 262,144
    positions by default; the causal LM (Gemma4UnifiedForCausalLM) lays its model out as Gemma 4's text model."""


@family(
    "gemma4",
    transformers="Gemma4Config",
    architecture="Gemma-4",
    model_class="Gemma4ForConditionalGeneration",
    read_beyond={"vision_soft_tokens_per_image": "the processor's max_soft_tokens, saved with the model"},
)
class Gemma4Config(MultimodalConfig):
    """configuration_gemma4.py: a Gemma 4 language model under ``model.language_model.``, with an optional vision
    tower and an optional audio tower (a Conformer, families/audio.py), each with its embedder; the top-level
    tie_word_embeddings (default true) decides tying."""

    text_model_type = "gemma4_text"
    vision_model_type = "gemma4_vision"
    language_model_prefix = "model.language_model."
    vision_prefix = "model.vision_tower."
    audio_model_type = "gemma4_audio"
    audio_prefix = "model.audio_tower."
    tower_when_absent = False
    lm_head_name = "lm_head"
    vision_soft_tokens_per_image: Width | None = None

    def image_input(self, tower: Tower) -> ImageInput | None:
        """Every image padded to vision_soft_tokens_per_image · pooling_kernel_size² patches (280 tokens by default)."""
        if self.vision_soft_tokens_per_image is None or tower.image is None:
            return tower.image
        return replace(tower.image, size=self.vision_soft_tokens_per_image * tower.image.merge**2)

    def projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        """Gemma4MultimodalEmbedder: an RMSNorm without weight, then one linear into the text width, no bias."""
        return (projector_module("model.embed_vision.embedding_projection", Linear(tower.hidden_size, text_hidden)),)

    def audio_projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        """Gemma4MultimodalEmbedder on the audio tower's output (output_proj_dims): a norm without weight, a linear."""
        projection = Linear(tower.hidden_size, text_hidden)
        return (audio_module("model.embed_audio.embedding_projection", projection, "projector"),)

    audio_config: dict[str, Any] | None  # the audio tower (None: none)
    #: What a config without vision_config / audio_config gets: no tower (None), or the named default tower.
    absent_towers: ClassVar[dict[str, str | None]] = {"vision_config": None, "audio_config": None}

    def defaults_used(self) -> list[DefaultUsed]:
        """The wrapper's defaults, and the towers a config leaves out: none (Gemma 4's are optional)."""
        found = [default for default in super().defaults_used() if default.field not in self.absent_towers]
        for field, tower in self.absent_towers.items():
            if field not in self.model_fields_set:
                rule = "optional: no tower" if tower is None else f"{tower}(): the default tower"
                found.append(DefaultUsed(field=field, value=tower, rule=rule))
        return found


@family(
    "gemma3n_text",
    transformers="Gemma3nTextConfig",
    architecture="Gemma-3n",
    model_class="Gemma3nForCausalLM",
    heads_divide_hidden=True,  # Gemma3nTextConfig.validate_architecture
)
class Gemma3nTextConfig(PerLayerEmbeddings, Gemma2Layers):
    """configuration_gemma3n.py / modeling_gemma3n.py (text): Gemma-3's layer (four norms, q/k norms; v normed
    without a weight), and around it:

    - AltUp (Baykal et al. 2023): the hidden state travels as altup_num_inputs copies; the model projects the
      embedding into the other n − 1 (altup_projections, hidden → hidden each) and back before the head
      (altup_unembed_projections); each layer predicts all n from the active one (modality_router hidden → n,
      prediction_coefs n → n², an RMSNorm) and corrects them after it runs (correction_coefs n → n, a
      correct_output_scale per hidden unit);
    - LAuReL: a low-rank residual beside attention (linear_left hidden → laurel_rank, linear_right back, an RMSNorm);
    - per-layer embeddings (PerLayerEmbeddings);
    - the last num_kv_shared_layers reuse the keys and values of the last earlier layer of their kind: no k_proj,
      v_proj or k_norm, nothing cached;
    - an FFN width per layer (intermediate_size may be a list), and activation_sparsity_pattern: a Gaussian top-k
      on the gate's output of the first layers, which changes values, not weights or FLOPs.
    """

    # Activation sparsity changes values, not weights or FLOPs: checked, never counted.
    informational_fields = frozenset({"max_position_embeddings", "pad_token_id", "activation_sparsity_pattern"})
    global_period: ClassVar[int] = 5

    intermediate_size: Width | list[Width]
    num_key_value_heads: HeadCount
    head_dim: Width
    sliding_window: Width
    vocab_size_per_layer_input: Width
    hidden_size_per_layer_input: WidthOrZero
    altup_active_idx: LayerIndex
    altup_correct_scale: Flag
    altup_num_inputs: LayerIndex
    num_kv_shared_layers: LayerIndex
    laurel_rank: WidthOrZero
    activation_sparsity_pattern: list[float] | None

    @model_validator(mode="after")
    def _check_gemma3n(self) -> Gemma3nTextConfig:
        layers = self.num_hidden_layers
        for field in ("intermediate_size", "activation_sparsity_pattern"):
            value = getattr(self, field)
            if isinstance(value, list) and len(value) != layers:
                raise ValueError(f"{field} has {len(value)} entries for {layers} layers")
        self.check_per_layer_padding()
        self.kv_modes()
        return self

    def notes(self) -> list[str]:
        sparse = sum(1 for value in self.sparsity() if value > 0)
        if not sparse:
            return [PER_LAYER_EMBEDDINGS_NOTE]
        sparsity = (
            f"activation sparsity in {sparse} layers (activation_sparsity_pattern) keeps the gate's largest outputs "
            "above a Gaussian threshold: every projection still runs in full, so it changes no parameter and no FLOP"
        )
        return [PER_LAYER_EMBEDDINGS_NOTE, sparsity]

    def sparsity(self) -> list[float]:
        """activation_sparsity_pattern, or 0.95 on the first 10 layers of a model with more than 10."""
        if self.activation_sparsity_pattern is not None:
            return list(self.activation_sparsity_pattern)
        sparse = 10 if self.num_hidden_layers > 10 else 0
        return [0.95] * sparse + [0.0] * (self.num_hidden_layers - sparse)

    def ffn_widths(self) -> list[int]:
        width = self.intermediate_size
        return list(width) if isinstance(width, list) else [width] * self.num_hidden_layers

    @derives("layer_types", "every fifth layer global, the others sliding")
    def kinds(self) -> list[str]:
        if self.layer_types is not None:
            return list(self.layer_types)
        return [
            "full_attention" if (i + 1) % self.global_period == 0 else "sliding_attention"
            for i in range(self.num_hidden_layers)
        ]

    def layer_windows(self) -> list[int | None]:
        return windows_of_layer_types(self.kinds(), self.sliding_window)

    def kv_modes(self) -> list[str | None]:
        """Which layers reuse another's keys and values: the last num_kv_shared_layers (none when it is 0)."""
        if self.num_kv_shared_layers == 0:
            return [None] * self.num_hidden_layers
        return kv_sharing_modes(self.kinds(), self.num_kv_shared_layers)

    def build_layers(self) -> tuple[Layer, ...]:
        modes, widths = self.kv_modes(), self.ffn_widths()
        return tuple(
            self.gemma3n_layer(window, widths[index], modes[index] == "reuse")
            for index, window in enumerate(self.layer_windows())
        )

    def gemma3n_layer(self, window: int | None, width: int, kv_shared: bool) -> Layer:
        hidden, inputs, head_norm = self.hidden_size, self.altup_num_inputs, self.rms_norm(self.head_dim)
        attention = self.attention(
            window, q_norm=head_norm, k_norm=None if kv_shared else head_norm, kv_shared=kv_shared
        )
        norm = self.rms_norm()
        norms = self.sandwich_norms() + (
            ("altup.router_norm", norm),
            ("laurel.post_laurel_norm", norm),
            ("post_per_layer_input_norm", norm),
        )
        projections = (
            Projection("altup", "altup.modality_router", hidden, inputs, component="other"),
            Projection("altup", "altup.prediction_coefs", inputs, inputs * inputs, component="other"),
            Projection("altup", "altup.correction_coefs", inputs, inputs, component="other"),
            Projection("laurel", "laurel.linear_left", hidden, self.laurel_rank, component="other"),
            Projection("laurel", "laurel.linear_right", self.laurel_rank, hidden, component="other"),
        ) + self.per_layer_input()
        scale = Parameter("other", "altup", "altup.correct_output_scale", (hidden,))
        # AltUp's matmuls beyond its weights: modality_router runs again to correct (2 · hidden · n), and the n copies
        # are mixed by the predicted n × n coefficients ([hidden, n] × [n, n] per token: 2 · hidden · n²).
        altup = 2 * hidden * inputs + 2 * hidden * inputs * inputs
        return self.layer(
            attention, self.gated_ffn(width), norms, projections=projections, parameters=(scale,), other_flops=altup
        )

    def to_spec(self) -> ModelSpec:
        spec = super().to_spec()
        altup = tuple(
            Extra("other", f"model.{stack}.{i}", Linear(self.hidden_size, self.hidden_size))
            for stack in ("altup_projections", "altup_unembed_projections")
            for i in range(self.altup_num_inputs - 1)
        )
        return replace(spec, extras=self.per_layer_embeddings() + altup)


@family(
    "gemma3n",
    transformers="Gemma3nConfig",
    architecture="Gemma-3n",
    model_class="Gemma3nForConditionalGeneration",
    own_defaults={
        "vision_soft_tokens_per_image": "Gemma3nConfig records 256, the tokens its MobileNet-V5 tower gives an image "
        "by itself; the field pads Gemma 4's images, so None keeps the tower's own image rule"
    },
)
class Gemma3nConfig(Gemma4Config):
    """configuration_gemma3n.py: a Gemma 3n language model under ``model.language_model.``, a vision tower (timm's
    MobileNet-V5, families/vision.py) and an audio tower (a Conformer, families/audio.py), both always built, each
    with its embedder; the top-level tie_word_embeddings (default true) decides tying."""

    text_model_type = "gemma3n_text"
    vision_model_type = "gemma3n_vision"
    audio_model_type = "gemma3n_audio"
    tower_when_absent = True
    absent_towers = {"vision_config": "Gemma3nVisionConfig", "audio_config": "Gemma3nAudioConfig"}

    vision_soft_tokens_per_image: Width | None = None

    def projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        """Gemma3nMultimodalEmbedder: a table of the tower's vocab_size hard tokens, RMSNorms for hard and soft
        (the tower's) embeddings, one linear into the text width (no bias), a norm without weight."""
        from .vision import Gemma3nVisionConfig

        assert isinstance(self.vision, Gemma3nVisionConfig)
        vocab = self.vision.vocab_size
        return gemma3n_embedder("model.embed_vision.", vocab, tower.hidden_size, text_hidden, projector_module)

    def audio_projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        """The same embedder over the audio tower's hidden_size and vocab_size."""
        from .audio import Gemma3nAudioConfig

        assert isinstance(self.audio, Gemma3nAudioConfig)

        def module(name: str, block) -> Extra:
            return audio_module(name, block, "projector")

        return gemma3n_embedder("model.embed_audio.", self.audio.vocab_size, tower.hidden_size, text_hidden, module)


def gemma3n_embedder(prefix: str, vocab: int, width: int, text_hidden: int, module) -> tuple[Extra, ...]:
    """embedding (vocab × width), hard_embedding_norm and soft_embedding_norm (width), embedding_projection
    (width → text hidden, no bias); its post-projection norm has no weight."""
    return (
        module(prefix + "embedding", Table(vocab, width)),
        module(prefix + "hard_embedding_norm", Norm("rmsnorm", width)),
        module(prefix + "soft_embedding_norm", Norm("rmsnorm", width)),
        module(prefix + "embedding_projection", Linear(width, text_hidden)),
    )


@family(
    "paligemma",
    transformers="PaliGemmaConfig",
    architecture="PaliGemma",
    model_class="PaliGemmaForConditionalGeneration",
)
class PaliGemmaConfig(MultimodalConfig):
    """configuration_paligemma.py / modeling_paligemma.py: a SigLIP tower without its pooling head, one linear
    (vision hidden → projection_dim, with bias) and a Gemma (PaliGemma 2: Gemma 2) language model built by
    AutoModel; the top-level tie_word_embeddings (default true) decides tying. Every image is read at the tower's
    image_size square, one token a patch."""

    text_model_type = "gemma"
    text_defaults = {  # PaliGemmaConfig.sub_configs_defaults (the keys the language model's adapter reads)
        "model_type": "gemma",
        "hidden_size": 2048,
        "num_hidden_layers": 18,
        "intermediate_size": 16384,
        "num_attention_heads": 8,
        "num_key_value_heads": 1,
        "vocab_size": 257152,
    }
    vision_model_type = "siglip_vision_model"
    vision_defaults = {
        "model_type": "siglip_vision_model",
        "intermediate_size": 4096,
        "hidden_size": 1152,
        "patch_size": 14,
        "image_size": 224,
        "num_hidden_layers": 27,
        "num_attention_heads": 16,
        "vision_use_head": False,
    }
    projection_dim: Width

    def projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        """PaliGemmaMultiModalProjector: one linear, vision hidden → projection_dim, with bias."""
        return (projector_module("multi_modal_projector.linear", Linear(tower.hidden_size, self.projection_dim, True)),)


class Gemma4AssistantLayers(MultimodalLayers):
    """A Gemma 4 drafter (modeling_gemma4_assistant.py, modeling_gemma4_unified_assistant.py, transformers 5.24):
    a Gemma 4 language model (text_config, built by AutoModel under ``model.``) whose layers all read the keys and
    values the target model cached (__post_init__ sets num_kv_shared_layers to num_hidden_layers when the config
    leaves it 0: no k_proj, v_proj or k_norm anywhere, nothing cached of its own); pre_projection
    (2 · backbone_hidden_size → hidden, the target's embedding and last hidden state side by side) before the layers
    and post_projection (hidden → backbone_hidden_size) after them, no biases; lm_head tied to the token table
    unless tie_word_embeddings is false. With use_ordered_embeddings a masked embedder adds centroids
    (hidden → num_centroids) and a token_ordering buffer of vocab_size entries."""

    language_model_prefix = "model."
    lm_head_name = "lm_head"
    text_ties = False

    backbone_hidden_size: Width
    use_ordered_embeddings: Flag
    num_centroids: Width
    centroid_intermediate_top_k: Width
    tie_word_embeddings: Flag

    def tied(self) -> bool:
        return self.tie_word_embeddings

    @cached_property
    def text(self) -> HFConfig:
        """text_config read by its adapter, num_kv_shared_layers set to every layer when it is 0 (__post_init__)."""
        text = super().text
        if getattr(text, "num_kv_shared_layers", None) == 0:
            return text.model_copy(update={"num_kv_shared_layers": text.num_hidden_layers})  # type: ignore[attr-defined]
        return text

    def wrapped_spec(self) -> ModelSpec:
        """The language model with the two projections (and the masked embedder's centroids and ordering)."""
        spec = super().wrapped_spec()
        hidden, backbone = spec.hidden_size, self.backbone_hidden_size
        extras = [
            Extra("other", "pre_projection", Linear(2 * backbone, hidden)),
            Extra("other", "post_projection", Linear(hidden, backbone)),
        ]
        stored: tuple[CheckpointExtra, ...] = ()
        if self.use_ordered_embeddings:
            extras.append(Extra("other", "masked_embedding.centroids", Linear(hidden, self.num_centroids)))
            ordering = StoredTensor("masked_embedding.token_ordering", (spec.vocab_size,))
            reason = "use_ordered_embeddings: the vocabulary's order by centroid, saved as a buffer"
            stored = (CheckpointExtra("token ordering", reason, (ordering,), buffer=True),)
        return replace(spec, extras=spec.extras + tuple(extras), checkpoint_extras=spec.checkpoint_extras + stored)

    def notes(self) -> list[str]:
        notes = [
            f"A drafter for speculative decoding: it reads the target model's embedding and last hidden state "
            f"({self.backbone_hidden_size:,} wide each) and attends to the keys and values the target cached, keeping "
            "none of its own; the context is the target's."
        ]
        if self.use_ordered_embeddings:
            rows = self.centroid_intermediate_top_k * (self.text.vocab_size // self.num_centroids)  # type: ignore[attr-defined]
            notes.append(
                f"use_ordered_embeddings: the head scores only the {rows:,} tokens of the "
                f"{self.centroid_intermediate_top_k} centroids it picks, after {self.num_centroids:,} centroid "
                "logits; the FLOPs shown count the whole head (an upper bound for this model)."
            )
        return notes + self.text.notes()


@family(
    "gemma4_unified_assistant",
    transformers="Gemma4UnifiedAssistantConfig",
    architecture="Gemma-4 unified assistant",
    model_class="Gemma4UnifiedAssistantForCausalLM",
)
class Gemma4UnifiedAssistantConfig(Gemma4AssistantLayers):
    """configuration_gemma4_unified_assistant.py: a drafter on Gemma 4 unified's text model (gemma4_unified_text)."""

    text_model_type = "gemma4_unified_text"
    text_defaults: ClassVar[dict[str, Any]] = {"model_type": "gemma4_unified_text"}

    backbone_hidden_size: Width


@family(
    "gemma4_assistant",
    transformers="Gemma4AssistantConfig",
    architecture="Gemma-4 assistant",
    model_class="Gemma4AssistantForCausalLM",
)
class Gemma4AssistantConfig(Gemma4AssistantLayers):
    """configuration_gemma4_assistant.py: a drafter on Gemma 4's text model (gemma4_text), which validate_architecture
    holds to no per-layer embeddings (hidden_size_per_layer_input and vocab_size_per_layer_input 0), no MoE block, no
    double-wide MLP and every layer reading the target's keys and values. Gemma4TextConfig's defaults have per-layer
    embeddings: transformers refuses the default config, and so does ffncalc."""

    text_model_type = "gemma4_text"
    text_defaults: ClassVar[dict[str, Any]] = {"model_type": "gemma4_text"}

    backbone_hidden_size: Width

    def validate_nested(self) -> None:
        """Gemma4AssistantConfig.validate_architecture's checks on text_config, in its order and words."""
        super().validate_nested()
        text = self.text
        required = (
            ("hidden_size_per_layer_input", 0),
            ("enable_moe_block", False),
            ("use_double_wide_mlp", False),
            ("vocab_size_per_layer_input", 0),
            ("num_kv_shared_layers", getattr(text, "num_hidden_layers", None)),
        )
        for field, value in required:
            given = getattr(text, field, None)
            if given != value:
                raise InvalidConfigError(
                    f"text_config.{field}: a Gemma 4 assistant's must be {value}, got {given} (transformers' "
                    "Gemma4AssistantConfig refuses it)"
                )
