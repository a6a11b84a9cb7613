"""Mistral Large 4: a Pixtral tower and Mistral 3's patch-merging projector around a language model of DeepSeek's
lineage (multi-head latent attention without a query latent, DeepSeek-V3.2's lightning indexer, a dense layer then
MoE layers), saved under Mistral's own names."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AliasChoices, Field, model_validator

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
    per_config,
)
from ..spec import (
    Attention,
    DenseFfn,
    Extra,
    Indexer,
    Layer,
    LearnedTensor,
    Linear,
    Mla,
    ModelNames,
    ModelSpec,
    MoeFfn,
    Names,
    Norm,
    Norms,
    Parameter,
    names,
)
from ..values import replace
from .base import DecoderConfig
from .blocks import MlpLayerTypes, SharedIndexerPattern, entries_check
from .mistral3 import Mistral3Config
from .multimodal import saved_spec
from .qwen import TextOfWrapper
from .registry import family
from .towers import Tower, projector_module

# Mistral's names, as the checkpoints store them (conversion_mapping.py's "mistral_large4", reverted), relative to
# layers.{i}. A text model saved alone (mistral_large4_text's own mapping, reverted) keeps transformers' o_proj and
# the dense and shared MLPs' gate_proj, up_proj and down_proj, its token table as embed_tokens.
INDEXER = names(
    wq_b="attention.indexer.wq_b",
    wk="attention.indexer.wk",
    k_norm="attention.indexer.k_norm",
    weights_proj="attention.indexer.weights_proj",
)
MOE = names(router="gate", experts="experts.{e}")
EXPERT = names(gate="w1", up="w3", down="w2")
LAYER = "layers.{i}"


def attention_names(o: str) -> Names:
    return names(
        q="attention.wq",
        kv_a="attention.wkv_a_with_mqa",
        kv_a_layernorm="attention.kv_a_norm",
        kv_b="attention.wkv_b",
        o=o,
    )


def mlp_names(module: str, gate: str, up: str, down: str) -> Names:
    return names(gate=f"{module}.{gate}", up=f"{module}.{up}", down=f"{module}.{down}")


@family(
    "mistral_large4_text",
    transformers="MistralLarge4TextConfig",
    architecture="Mistral Large 4",
    model_class="MistralLarge4TextModel",
    heads_divide_hidden=False,  # the widths are MLA's (qk_nope, qk_rope, v_head_dim); nothing checks hidden_size
    routing=("num_experts_per_tok", "n_routed_experts"),
    read_beyond={
        "no_rope_layer_interval": "no field: MistralLarge4TextConfig.__post_init__ reads it to build no_rope_layers",
        "index_topk_pattern": "no field: MistralLarge4TextConfig.__post_init__ reads it to build indexer_types",
        "index_topk_freq": "no field: MistralLarge4TextConfig.__post_init__ reads it to build indexer_types",
        "index_skip_topk_offset": "no field: MistralLarge4TextConfig.__post_init__ reads it to build indexer_types",
    },
    other_names={
        "n_routed_experts": "num_experts read first: MistralLarge4TextConfig.__post_init__ sets n_routed_experts from it",
    },
)
class MistralLarge4TextConfig(SharedIndexerPattern, TextOfWrapper, MlpLayerTypes, DecoderConfig):
    """configuration_mistral_large4.py / modeling_mistral_large4.py (MistralLarge4TextModel): every layer's
    attention is multi-head latent attention with queries straight from the hidden state (q_proj: hidden → heads ·
    (qk_nope + qk_rope)), a key-value latent of kv_lora_rank (kv_a_proj_with_mqa, its RMSNorm, kv_b_proj) and a
    softmax scaling of its own (a scale and a bias per head); a layer whose no_rope_layers entry is 0 uses no rotary
    positions, so its kv_a_proj emits the latent alone and its keys take qk_nope + qk_rope dimensions from kv_b_proj.
    A layer whose indexer_types entry is "full" holds DeepSeek-V3.2's lightning indexer, its queries from the hidden
    state through a LayerNorm (q_input_norm) and wq_b, with a softmax scaling of index_n_heads; a "shared" one reuses
    the previous layer's picks. FFNs as mlp_layer_types says (default: first_k_dense_replace dense layers, then MoE:
    n_routed_experts routed experts beside one shared MLP of n_shared_experts × moe_intermediate_size, a router
    without bias). The rotary embedding holds a learned alpha (qk_rope_head_dim / 2) that scales its frequencies."""

    model_names = ModelNames(embed_tokens="embed_tokens", final_norm="norm", lm_head="output")
    layer_name = LAYER
    moe_names = MOE
    expert_names = EXPERT

    num_hidden_layers: LayerCount
    intermediate_size: Width
    moe_intermediate_size: Width
    tie_word_embeddings: Flag
    hidden_act: Name
    attention_bias: Flag
    max_position_embeddings: PositionCount
    n_shared_experts: ExpertCountOrZero
    n_routed_experts: ExpertCountOrZero = Field(
        validation_alias=AliasChoices("num_experts", "n_routed_experts", "num_local_experts")
    )
    num_experts_per_tok: ExpertCount
    first_k_dense_replace: LayerIndex
    mlp_layer_types: list[Literal["dense", "sparse"]] | None
    kv_lora_rank: Width
    qk_rope_head_dim: Width
    qk_nope_head_dim: Width
    v_head_dim: Width
    index_topk: Width
    index_head_dim: Width
    index_n_heads: HeadCount
    indexer_types: list[Literal["full", "shared"]] | None
    no_rope_layers: list[Literal[0, 1]] | None
    kv_source_layers: list[LayerIndex] | None
    no_rope_layer_interval: int = Field(4, strict=True, ge=1)
    index_topk_pattern: Annotated[str, Field(pattern="^[FS]*$")] | list[Literal["full", "shared"]] | None = None
    index_topk_freq: int = Field(1, strict=True)
    index_skip_topk_offset: int = Field(2, strict=True)

    _check_mlp_layer_types = entries_check("mlp_layer_types", exact=True)
    _check_no_rope_layers = entries_check("no_rope_layers", exact=False)

    @model_validator(mode="after")
    def _check_layer_lists(self):
        """transformers indexes indexer_types by layer; kv_source_layers needs one entry a layer, each naming itself
        or an earlier layer that owns its cache (validate_architecture). ffncalc does not count shared caches yet."""
        kinds = self.indexer_kinds()
        if len(kinds) < self.num_hidden_layers:
            field = "indexer_types" if self.indexer_types is not None else "index_topk_pattern"
            raise ValueError(f"{field} has {len(kinds)} entries for {self.num_hidden_layers} layers")
        sources = self.kv_source_layers
        if sources is not None:
            if len(sources) != self.num_hidden_layers:
                raise ValueError(f"kv_source_layers has {len(sources)} entries for {self.num_hidden_layers} layers")
            shared = [index for index, source in enumerate(sources) if source != index]
            if shared:
                raise ValueError(
                    f"kv_source_layers: layer {shared[0]} reads layer {sources[shared[0]]}'s latent cache; layers "
                    "sharing a latent key-value cache (no kv_a_proj_with_mqa of their own) are not counted yet"
                )
        if self.qk_rope_head_dim % 2:
            raise ValueError(f"qk_rope_head_dim ({self.qk_rope_head_dim}) is odd: RoPE needs an even rotary width")
        return self

    @derives("mlp_layer_types", "first_k_dense_replace dense layers, then sparse")
    def default_mlp_kinds(self) -> list[str]:
        dense = min(self.first_k_dense_replace, self.num_hidden_layers)
        return ["dense"] * dense + ["sparse"] * (self.num_hidden_layers - dense)

    @derives("no_rope_layers", "1 (rotary) but every no_rope_layer_interval-th layer")
    @per_config
    def rope_layers(self) -> list[int]:
        if self.no_rope_layers is not None:
            return list(self.no_rope_layers)
        interval = self.no_rope_layer_interval
        return [int((index + 1) % interval != 0) for index in range(self.num_hidden_layers)]

    def unused_fields(self) -> set[str]:
        unused = {"first_k_dense_replace"} if self.mlp_layer_types is not None else set()
        if self.no_rope_layers is not None:
            unused.add("no_rope_layer_interval")
        if self.indexer_types is not None or self.index_topk_pattern is not None:
            unused |= {"index_topk_freq", "index_skip_topk_offset"}
        if self.indexer_types is not None:
            unused.add("index_topk_pattern")
        return unused

    def mla(self, rope: bool, alone: bool, indexed: bool) -> Attention:
        """The attention of a layer with rotary positions (ROPE) or without, its indexer its own (INDEXED) or the
        previous layer's; named as a text model saved ALONE names it, else as the wrapper's checkpoints do."""
        rope_dim = self.qk_rope_head_dim if rope else 0
        mla = Mla(
            q_lora_rank=None,
            kv_lora_rank=self.kv_lora_rank,
            qk_nope_head_dim=self.qk_nope_head_dim + self.qk_rope_head_dim - rope_dim,
            qk_rope_head_dim=rope_dim,
            v_head_dim=self.v_head_dim,
        )
        indexer = Indexer(
            heads=self.index_n_heads,
            head_dim=self.index_head_dim,
            q_input=self.hidden_size,
            top_k=self.index_topk,
            names=INDEXER,
            k_norm=Norm("layernorm", self.index_head_dim, bias=True),
            shared=not indexed,
        )
        return Attention(
            hidden_size=self.hidden_size,
            num_heads=self.num_attention_heads,
            num_kv_heads=self.num_attention_heads,
            qk_head_dim=self.qk_nope_head_dim + self.qk_rope_head_dim,
            v_head_dim=self.v_head_dim,
            names=attention_names("attention.o_proj" if alone else "attention.wo"),
            k_bias=self.attention_biased,
            o_bias=self.attention_biased,
            mla=mla,
            indexer=indexer,
        )

    def layer_at(self, rope: bool, indexed: bool, sparse: bool, alone: bool) -> Layer:
        gate, up, down = ("gate_proj", "up_proj", "down_proj") if alone else ("w1", "w3", "w2")
        if sparse:
            ffn: DenseFfn | MoeFfn = self.shared_experts_moe(
                self.n_routed_experts,
                self.num_experts_per_tok,
                self.moe_intermediate_size,
                self.n_shared_experts,
                mlp_names("shared_experts", gate, up, down),
            )
        else:
            ffn = self.gated_ffn(names=mlp_names("feed_forward", gate, up, down))
        norms: Norms = (("attention_norm", self.rms_norm()), ("ffn_norm", self.rms_norm()))
        if indexed:
            norms += (("attention.indexer.q_input_norm", Norm("layernorm", self.hidden_size, bias=True)),)
        scalings = [("attention.ssmax_scaling", self.num_attention_heads)]
        if indexed:
            scalings.append(("attention.indexer.ssmax_scaling", self.index_n_heads))
        parameters = tuple(
            Parameter("attention", "softmax_scaling", f"{module}.{tensor}", (heads,))
            for module, heads in scalings
            for tensor in ("s", "b")
        )
        return Layer(LAYER, self.mla(rope, alone, indexed), ffn, norms, parameters=parameters)

    def layers_named(self, alone: bool) -> tuple[Layer, ...]:
        built: dict[tuple[bool, bool, bool], Layer] = {}
        rope, kinds = self.rope_layers(), self.indexer_kinds()
        layers = []
        for index in range(self.num_hidden_layers):
            key = (bool(rope[index]), kinds[index] == "full", self.n_routed_experts > 0 and self.sparse(index))
            if key not in built:
                built[key] = self.layer_at(*key, alone=alone)
            layers.append(built[key])
        return tuple(layers)

    def spec_named(self, alone: bool) -> ModelSpec:
        alpha = "rotary_emb.alpha" if alone else "lerope.alpha"
        return ModelSpec(
            model_type=self.model_type,
            hidden_size=self.hidden_size,
            vocab_size=self.vocab_size,
            layers=self.layers_named(alone),
            final_norm=self.rms_norm(),
            tie_word_embeddings=self.ties_embeddings,
            names=replace(self.model_names, embed_tokens="embed_tokens" if alone else "tok_embeddings"),
            extras=(Extra("other", alpha, LearnedTensor((self.qk_rope_head_dim // 2,))),),
        )

    def language_model_spec(self) -> ModelSpec:
        """The language model with its head (output), as the wrapper's checkpoints name it."""
        return self.spec_named(alone=False)

    def to_spec(self) -> ModelSpec:
        """The text model alone: MistralLarge4TextModel, no head, named as transformers saves it alone."""
        return replace(self.spec_named(alone=True), lm_head=False)


# Pixtral's modules as Mistral's checkpoints name them (the wrapper's mapping, reverted): (pattern, saved spelling).
VISION_SAVED = (
    (r"\.q_proj\.", ".wq."),
    (r"\.k_proj\.", ".wk."),
    (r"\.v_proj\.", ".wv."),
    (r"\.o_proj\.", ".wo."),
    (r"\.gate_proj\.", ".w1."),
    (r"\.down_proj\.", ".w2."),
    (r"\.up_proj\.", ".w3."),
)


@family(
    "mistral_large4",
    transformers="MistralLarge4Config",
    architecture="Mistral Large 4",
    model_class="MistralLarge4ForConditionalGeneration",
)
class MistralLarge4Config(Mistral3Config):
    """configuration_mistral_large4.py / modeling_mistral_large4.py: Mistral 3's wrapper (a Pixtral tower, an RMSNorm,
    the patch merger and two linears into the language model) around mistral_large4_text; its default tower is
    Mistral Large 4's own (sub_configs_defaults: 2048 wide, 30 layers, 1540-pixel images) and its head is untied by
    default. Its checkpoints keep Mistral's names (conversion_mapping.py's "mistral_large4", reverted): the language
    model's modules at the top (tok_embeddings, layers, norm, output, lerope.alpha), the tower as vision_encoder. with
    wq, wk, wv, wo and w1, w2, w3, the projector as pre_mm_projector_norm, patch_merger and vision_language_adapter."""

    text_model_type = "mistral_large4_text"
    text_defaults = {"model_type": "mistral_large4_text"}
    vision_defaults = {  # MistralLarge4Config.sub_configs_defaults' vision init_kwargs
        "model_type": "pixtral",
        "hidden_size": 2048,
        "intermediate_size": 6144,
        "num_hidden_layers": 30,
        "num_attention_heads": 16,
        "patch_size": 14,
        "image_size": 1540,
        "hidden_act": "silu",
    }
    language_model_prefix = ""
    lm_head_name = "output"
    vision_prefix = "vision_encoder."

    def wrapped_spec(self) -> ModelSpec:
        language_model_spec = getattr(self.text, "language_model_spec", self.text.to_spec)
        spec = replace(language_model_spec(), model_type=self.model_type, tie_word_embeddings=self.tied())
        return saved_spec(self.whole(spec), VISION_SAVED)

    def projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        """Mistral3MultiModalProjector under Mistral's names: pre_mm_projector_norm (an RMSNorm of the tower's
        width), patch_merger.merging_layer (spatial_merge_size² patches → the tower's width), vision_language_adapter
        w_in (tower width × the feature layers read → text hidden) and w_out (text → text), biased when
        multimodal_projector_bias."""
        width, merge = tower.hidden_size, self.spatial_merge_size
        layers_read = 1 if isinstance(self.vision_feature_layer, int) else len(self.vision_feature_layer)
        bias = self.multimodal_projector_bias
        return tuple(
            projector_module(name, module)
            for name, module in (
                ("pre_mm_projector_norm", Norm("rmsnorm", width)),
                ("patch_merger.merging_layer", Linear(width * merge**2, width)),
                ("vision_language_adapter.w_in", Linear(width * layers_read, text_hidden, bias)),
                ("vision_language_adapter.w_out", Linear(text_hidden, text_hidden, bias)),
            )
        )
