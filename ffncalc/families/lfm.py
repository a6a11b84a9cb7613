"""Liquid AI's LFM2 and LFM2-MoE: gated short convolutions in most layers, attention (with per-head q/k norms)
in the others, each followed by a gated MLP (LFM2) or, past the first num_dense_layers, a MoE (LFM2-MoE); and
LFM2-VL, a SigLIP 2 tower and a pixel-unshuffle projector around an LFM2; LFM3, LFM2's layers with sliding-window
layers, a gate per attention head and norms on each block's output."""

from __future__ import annotations

import math
from typing import Annotated, Literal

from pydantic import AliasChoices, Field, model_validator

from ..schema import ExpertCount, Flag, HeadCount, LayerCount, LayerIndex, PositionCount, Width, derives, per_config
from ..spec import (
    Attention,
    CheckpointExtra,
    DenseFfn,
    Extra,
    ImageInput,
    Layer,
    Linear,
    Mixer,
    ModelNames,
    MoeFfn,
    Norm,
    Norms,
    Parameter,
    Projection,
    StoredTensor,
    names,
)
from .base import DecoderConfig
from .blocks import required_field
from .mixers import short_conv
from .multimodal import MultimodalConfig
from .registry import family, tower
from .towers import Tower, TowerConfig, projector_module, tower_module

LFM_ATTENTION = names(
    q="self_attn.q_proj",
    k="self_attn.k_proj",
    v="self_attn.v_proj",
    o="self_attn.out_proj",
    q_norm="self_attn.q_layernorm",
    k_norm="self_attn.k_layernorm",
)
LFM_MLP = names(gate="feed_forward.w1", up="feed_forward.w3", down="feed_forward.w2")
LFM_SHORT_CONV = names(in_proj="conv.in_proj", conv="conv.conv", out_proj="conv.out_proj")
LfmLayerType = Literal["conv", "full_attention"]


class Lfm2Layers(DecoderConfig):
    """LFM2's layers (LFM2, LFM2-MoE): each layer's operator a short convolution ("conv": in_proj to B, C, x; a
    depthwise conv of conv_L_cache taps; out_proj; conv_bias on all three) or attention (no biases, RMSNorms on each
    q and k head), by layer_types; norms operator_norm and ffn_norm, and embedding_norm at the end. Each config
    says its FFNs (``ffn``) and the layer kinds it assumes without layer_types (``default_kinds``). The tie_embedding
    key wins over tie_word_embeddings."""

    heads_divide_hidden = False  # the attention reads head_dim, else floors hidden_size // num_attention_heads
    read_beyond = {"head_dim": "read by the modeling code with getattr"}
    attention_names = LFM_ATTENTION
    mlp_names = LFM_MLP
    model_names = ModelNames(embed_tokens="model.embed_tokens", final_norm="model.embedding_norm")

    num_hidden_layers: LayerCount
    intermediate_size: Width = Field(validation_alias=AliasChoices("block_ff_dim", "intermediate_size"))
    tie_word_embeddings: Flag = Field(validation_alias=AliasChoices("tie_embedding", "tie_word_embeddings"))
    head_dim: Width | None = None
    other_names = {
        "intermediate_size": "LFM2's configs give it as block_ff_dim, which wins (no attribute_map entry)",
        "tie_word_embeddings": "LFM2's configs give it as tie_embedding, which wins (no attribute_map entry)",
    }
    num_key_value_heads: HeadCount
    max_position_embeddings: PositionCount
    conv_bias: Flag
    conv_L_cache: Width
    layer_types: Annotated[list[LfmLayerType] | None, Field(max_length=1 << 14)]

    @property
    def activation(self) -> str:
        """SiLU: LFM2's MLP fixes it (its configuration class has no hidden_act)."""
        return "silu"

    def default_kinds(self) -> list[str]:  # pragma: no cover - each config says
        raise NotImplementedError

    def ffn(self, index: int) -> DenseFfn | MoeFfn:  # pragma: no cover - each config says
        raise NotImplementedError

    def unused_operators(self) -> set[str]:
        """The fields of an operator no layer has: attention's heads, or the short convolution's."""
        kinds = set(self.kinds())
        unused = set() if kinds - {"conv"} else {"num_attention_heads", "num_key_value_heads"}
        return unused if "conv" in kinds else unused | {"conv_bias", "conv_L_cache"}

    def kinds(self) -> list[str]:
        return list(self.layer_types) if self.layer_types is not None else self.default_kinds()

    def short_conv(self) -> Mixer:
        return short_conv(self.hidden_size, self.conv_L_cache, LFM_SHORT_CONV, bias=self.conv_bias)

    def build_layers(self) -> tuple[Layer, ...]:
        norm = self.rms_norm()
        norms = (("operator_norm", norm), ("ffn_norm", norm))
        built: dict[tuple[str, DenseFfn | MoeFfn], Layer] = {}
        layers = []
        for index, kind in enumerate(self.kinds()):
            ffn = self.ffn(index)
            if (kind, ffn) not in built:
                if kind == "conv":
                    built[kind, ffn] = self.layer(None, ffn, norms, mixer=self.short_conv())
                else:
                    built[kind, ffn] = self.layer(self.attention(None, **self.per_head_norms()), ffn, norms)
            layers.append(built[kind, ffn])
        return tuple(layers)


@family("lfm2", transformers="Lfm2Config", architecture="LFM2", model_class="Lfm2ForCausalLM")
class Lfm2Config(Lfm2Layers):
    """configuration_lfm2.py / modeling_lfm2.py.

    layer_types picks each layer's operator: a short convolution ("conv": in_proj to B, C, x; a depthwise conv
    of conv_L_cache taps; out_proj; conv_bias on all three) or attention (no biases, RMSNorms on each q and k
    head). Without layer_types, the layers in full_attn_idxs attend (default: all of them). Norms: operator_norm,
    ffn_norm, and embedding_norm at the end. The MLP's width is intermediate_size (the block_ff_dim key wins);
    with block_auto_adjust_ff_dim it becomes int(2/3 of it), times block_ffn_dim_multiplier, rounded up to a
    multiple of block_multiple_of. The tie_embedding key wins over tie_word_embeddings.
    """

    block_multiple_of: Width
    block_ffn_dim_multiplier: Annotated[float, Field(allow_inf_nan=False, ge=0)]
    block_auto_adjust_ff_dim: Flag
    full_attn_idxs: Annotated[list[LayerIndex] | None, Field(max_length=1 << 14)]

    def unused_fields(self) -> set[str]:
        unused = {"full_attn_idxs"} if self.layer_types is not None else set()
        if not self.block_auto_adjust_ff_dim:
            unused |= {"block_multiple_of", "block_ffn_dim_multiplier"}
        return unused | self.unused_operators()

    @derives("layer_types", "full_attention in full_attn_idxs (default: every layer), else conv")
    def default_kinds(self) -> list[str]:
        attends = set(range(self.num_hidden_layers) if self.full_attn_idxs is None else self.full_attn_idxs)
        return ["full_attention" if index in attends else "conv" for index in range(self.num_hidden_layers)]

    def ffn_width(self) -> int:
        """intermediate_size, or with block_auto_adjust_ff_dim: int(2 · it / 3), × the multiplier, rounded up to block_multiple_of."""
        width = self.intermediate_size
        if self.block_auto_adjust_ff_dim:
            width = int(self.block_ffn_dim_multiplier * int(2 * width / 3))
            width = self.block_multiple_of * math.ceil(width / self.block_multiple_of)
        return width

    def ffn(self, index: int) -> DenseFfn | MoeFfn:
        return self.gated_ffn(self.ffn_width())


@family(
    "lfm2_moe",
    transformers="Lfm2MoeConfig",
    architecture="LFM2-MoE",
    model_class="Lfm2MoeForCausalLM",
    routing=("num_experts_per_tok", "num_experts"),
)
class Lfm2MoeConfig(Lfm2Layers):
    """configuration_lfm2_moe.py / modeling_lfm2_moe.py: LFM2's layers; the first num_dense_layers have a gated
    MLP of intermediate_size, the others a MoE of num_experts (w1, w3, w2 each, routed by gate) with, with
    use_expert_bias, a routing-bias buffer (expert_bias) the checkpoints store. transformers cannot build the
    model without layer_types."""

    moe_names = names(router="feed_forward.gate", experts="feed_forward.experts.{e}")
    expert_names = names(gate="w1", up="w3", down="w2")

    intermediate_size: Width  # under the record's names only, as ffncalc read it (no block_ff_dim here)
    moe_intermediate_size: Width
    num_dense_layers: LayerIndex
    num_experts_per_tok: ExpertCount
    num_experts: ExpertCount
    use_expert_bias: Flag
    _check_layer_types = required_field("layer_types", "Lfm2MoeConfig")

    def unused_fields(self) -> set[str]:
        unused = self.unused_operators()
        if self.num_dense_layers >= self.num_hidden_layers:
            unused |= {"num_experts", "num_experts_per_tok", "moe_intermediate_size", "use_expert_bias"}
        return unused if self.num_dense_layers else unused | {"intermediate_size"}

    def ffn(self, index: int) -> DenseFfn | MoeFfn:
        if index < self.num_dense_layers:
            return self.gated_ffn()
        return self.moe_ffn(self.num_experts, self.num_experts_per_tok, self.moe_intermediate_size)

    def checkpoint_extras(self) -> tuple[CheckpointExtra, ...]:
        moe_layers = tuple(range(self.num_dense_layers, self.num_hidden_layers))
        if not self.use_expert_bias or not moe_layers:
            return ()
        return (
            CheckpointExtra(
                name="router expert_bias",
                reason=f"{len(moe_layers)} MoE layers × {self.num_experts} experts; a routing-bias buffer set by load balancing, not trained",
                tensors=(StoredTensor(self.layer_name + ".feed_forward.expert_bias", (self.num_experts,)),),
                per_layer=moe_layers,
                buffer=True,
            ),
        )


LFM3_ATTENTION = names(
    q="self_attn.q_proj",
    k="self_attn.k_proj",
    v="self_attn.v_proj",
    o="self_attn.o_proj",
    q_norm="self_attn.q_norm",
    k_norm="self_attn.k_norm",
)
Lfm3LayerType = Literal["conv", "full_attention", "sliding_attention"]


@family(
    "lfm3",
    transformers="Lfm3Config",
    architecture="LFM3",
    model_class="Lfm3ForCausalLM",
    heads_divide_hidden=False,  # the attention reads head_dim; nothing checks hidden_size against the heads
)
class Lfm3Config(DecoderConfig):
    """configuration_lfm3.py / modular_lfm3.py: LFM2's layers without its width rules. layer_types (default: full
    attention where i % 4 == 2, sliding where i % 4 == 0 past layer 0, a short convolution elsewhere) picks each
    layer's operator: LFM2's short convolution (conv_L_cache taps, conv_bias on all three parts) or Qwen3's attention
    (num_key_value_heads heads of head_dim, attention_bias on q, k, v and o, an RMSNorm on each query and key head;
    sliding layers within sliding_window) whose heads' outputs a sigmoid gate scales, g_proj (hidden → one unit a
    head, no bias; the checkpoint's self_attn.gate_proj) with use_attention_gate. Every layer's MLP is w1, w3, w2 of
    intermediate_size, unbiased. Norms: operator_norm and ffn_norm, with use_sandwich_norm also post_operator_norm and
    post_ffn_norm on the operator's and the MLP's outputs; embedding_norm at the end. Tied by default."""

    attention_names = LFM3_ATTENTION
    mlp_names = LFM_MLP
    model_names = ModelNames(embed_tokens="model.embed_tokens", final_norm="model.embedding_norm")

    num_hidden_layers: LayerCount
    intermediate_size: Width
    tie_word_embeddings: Flag
    attention_bias: Flag
    num_key_value_heads: HeadCount
    head_dim: Width
    max_position_embeddings: PositionCount
    conv_bias: Flag
    conv_L_cache: Width
    sliding_window: Width | None
    use_sandwich_norm: Flag
    use_attention_gate: Flag
    layer_types: Annotated[list[Lfm3LayerType] | None, Field(max_length=1 << 14)]

    @property
    def activation(self) -> str:
        """SiLU: LFM2's MLP fixes it (its configuration class has no hidden_act)."""
        return "silu"

    @model_validator(mode="after")
    def _check_window(self) -> Lfm3Config:
        if self.sliding_window is None and "sliding_attention" in self.kinds():
            raise ValueError("sliding_window: required by the sliding_attention layers (None cannot build their mask)")
        return self

    @derives("layer_types", "full_attention where i % 4 == 2, sliding_attention where i % 4 == 0 and i > 0, else conv")
    @per_config
    def kinds(self) -> list[str]:
        if self.layer_types is not None:
            return list(self.layer_types)
        return [
            "full_attention" if i % 4 == 2 else "sliding_attention" if i % 4 == 0 and i > 0 else "conv"
            for i in range(self.num_hidden_layers)
        ]

    def unused_fields(self) -> set[str]:
        kinds = set(self.kinds())
        unused = set() if "sliding_attention" in kinds else {"sliding_window"}
        if not kinds - {"conv"}:
            unused |= {"num_attention_heads", "num_key_value_heads", "head_dim", "use_attention_gate"}
        return unused if "conv" in kinds else unused | {"conv_bias", "conv_L_cache"}

    def build_layers(self) -> tuple[Layer, ...]:
        norm = self.rms_norm()
        norms: Norms = (("operator_norm", norm), ("ffn_norm", norm))
        if self.use_sandwich_norm:
            norms += (("post_operator_norm", norm), ("post_ffn_norm", norm))
        ffn = self.gated_ffn()
        # the checkpoint's name, which transformers renames g_proj on load (conversion_mapping.py, "lfm3")
        gate = Projection(
            "g_proj", "self_attn.gate_proj", self.hidden_size, self.num_attention_heads, component="attention"
        )
        gates = (gate,) if self.use_attention_gate else ()
        built = {
            "conv": self.layer(
                None,
                ffn,
                norms,
                mixer=short_conv(self.hidden_size, self.conv_L_cache, LFM_SHORT_CONV, bias=self.conv_bias),
            ),
            "full_attention": self.layer(self.attention(None, **self.per_head_norms()), ffn, norms, projections=gates),
        }
        if "sliding_attention" in self.kinds():
            attention = self.attention(self.sliding_window, **self.per_head_norms())
            built["sliding_attention"] = self.layer(attention, ffn, norms, projections=gates)
        return tuple(built[kind] for kind in self.kinds())


# Lfm2VlImageProcessor's defaults (image_processing_lfm2_vl.py; preprocessor_config.json may set others, config.json
# does not hold them): an image too large for max_image_tokens is cut into tiles of tile_size px (and a thumbnail),
# each read in encoder_patch_size patches; every image or tile is padded to max_num_patches = max(max_image_tokens ·
# downsample_factor², (tile_size / encoder_patch_size)²) patches, all computed.
LFM2_VL_TILE_SIZE = 512
LFM2_VL_ENCODER_PATCH_SIZE = 16
LFM2_VL_MAX_IMAGE_TOKENS = 256


@family(
    "lfm2_vl",
    transformers="Lfm2VlConfig",
    architecture="LFM2-VL",
    model_class="Lfm2VlForConditionalGeneration",
    other_names={"tie_word_embeddings": "a tie_embedding key wins, as in LFM2's own configs (no attribute_map entry)"},
)
class Lfm2VlConfig(MultimodalConfig):
    """configuration_lfm2_vl.py / modeling_lfm2_vl.py: a vision tower (SigLIP 2 by default) and a language model (LFM2
    by default), each built by AutoModel, saved as model.vision_tower. and model.language_model.; the projector
    (Lfm2VlMultiModalProjector) reads downsample_factor² patches side by side: a LayerNorm with bias
    (projector_use_layernorm), linear_1 into projector_hidden_size and linear_2 into the text width, biased by
    projector_bias. The top-level tie_word_embeddings (default true; a tie_embedding key wins) decides tying."""

    text_model_type = "lfm2"
    text_defaults = {"model_type": "lfm2"}
    vision_model_type = "siglip2_vision_model"
    vision_defaults = {"model_type": "siglip2_vision_model"}
    language_model_prefix = "model.language_model."
    vision_prefix = "model.vision_tower."
    lm_head_name = "lm_head"
    informational_fields = frozenset({"projector_hidden_act"})

    tie_word_embeddings: Flag = Field(validation_alias=AliasChoices("tie_embedding", "tie_word_embeddings"))
    projector_hidden_act: str
    projector_hidden_size: Width
    projector_bias: Flag
    projector_use_layernorm: Flag
    downsample_factor: Width

    def image_input(self, tower: Tower) -> ImageInput | None:
        """One tile of LFM2_VL_TILE_SIZE px: (512 / 16)² = 1,024 patches, pixel-unshuffled downsample_factor² into one
        token each. At downsample_factor 2 that is also what every image is padded to (max_num_patches), so an image
        small enough not to be cut costs the tower as much, with fewer tokens; other factors or patch sizes pad
        otherwise, and have no rule here."""
        if tower.image is None or self.downsample_factor != 2 or tower.image.patch_size != LFM2_VL_ENCODER_PATCH_SIZE:
            return None
        return ImageInput(tower.image.patch_size, "tiles", LFM2_VL_TILE_SIZE, merge=self.downsample_factor)

    def projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        merged, inner, bias = (
            tower.hidden_size * self.downsample_factor**2,
            self.projector_hidden_size,
            self.projector_bias,
        )
        modules: tuple[tuple[str, Linear | Norm], ...] = (
            ("linear_1", Linear(merged, inner, bias)),
            ("linear_2", Linear(inner, text_hidden, bias)),
        )
        if self.projector_use_layernorm:
            modules = (("layer_norm", Norm("layernorm", merged, bias=True)),) + modules
        return tuple(projector_module("model.multi_modal_projector." + name, module) for name, module in modules)


# transformers saves LFM3-VL's tower as the original checkpoints name it (conversion_mapping.py's "lfm3_vl_vision",
# reverted): patchifier, q_layernorm and k_layernorm.
LFM3_VL_VISION_ATTENTION = names(
    q="self_attn.q_proj",
    k="self_attn.k_proj",
    v="self_attn.v_proj",
    o="self_attn.out_proj",
    q_norm="self_attn.q_layernorm",
    k_norm="self_attn.k_layernorm",
)


@tower("lfm3_vl_vision", transformers="Lfm3VlVisionConfig")
class Lfm3VlVisionConfig(TowerConfig):
    """configuration_lfm3_vl.py (Lfm3VlVisionConfig) / modeling_lfm3_vl.py (Lfm3VlVisionModel): a linear patch
    embedding without bias (in_channels · temporal_patch_size · patch_size² → hidden; an image is repeated in time),
    an RMSNorm after it (embedding_norm), then layers of two RMSNorms (operator_norm, ffn_norm), a SwiGLU MLP without
    biases (w1, w3, w2) and, as layer_types says (default: attention where i ≥ 2 and i is even, else "conv"), either
    bidirectional grouped-query attention (q of hidden // heads per head, k and v of num_key_value_heads heads,
    out_proj, RMSNorms over each query and key head, 2-D rotary positions, no biases; any entry but "conv" builds it)
    or a gated depthwise convolution over the frame's patch grid (Lfm3VlVisionShortConv: in_proj hidden → 3 · hidden,
    a conv_kernel_size² depthwise Conv2d without bias, out_proj). No final norm: the wrapper's projector norms."""

    hidden_size: Width
    intermediate_size: Width
    in_channels: Width
    patch_size: Width
    spatial_merge_size: Width
    temporal_patch_size: Width
    num_hidden_layers: LayerCount
    num_attention_heads: HeadCount
    num_key_value_heads: HeadCount
    layer_types: Annotated[list[Lfm3LayerType] | None, Field(max_length=1 << 14)]
    conv_kernel_size: Width

    @model_validator(mode="after")
    def _check_layer_types(self) -> Lfm3VlVisionConfig:
        # PreTrainedConfig.validate_layer_type: one entry a layer
        if self.layer_types is not None and len(self.layer_types) != self.num_hidden_layers:
            raise ValueError(f"layer_types has {len(self.layer_types)} entries for {self.num_hidden_layers} layers")
        return self

    @derives("layer_types", "full_attention where i >= 2 and i is even, else conv")
    def kinds(self) -> list[str]:
        """Each layer's operator: layer_types, else Lfm3VlVisionConfig.__post_init__'s pattern."""
        if self.layer_types is not None:
            return list(self.layer_types)
        return ["conv" if i < 2 or i % 2 else "full_attention" for i in range(self.num_hidden_layers)]

    def tower(self, prefix: str) -> Tower:
        hidden, heads, kernel = self.hidden_size, self.num_attention_heads, self.conv_kernel_size
        head_dim = hidden // heads
        norm = Norm("rmsnorm", hidden)
        norms: Norms = (("operator_norm", norm), ("ffn_norm", norm))
        ffn = DenseFfn(hidden, self.intermediate_size, True, "silu", LFM_MLP)
        head_norm = Norm("rmsnorm", head_dim)
        attention = Attention(
            hidden, heads, self.num_key_value_heads, head_dim, head_dim, LFM3_VL_VISION_ATTENTION,
            q_norm=head_norm, k_norm=head_norm,
        )  # fmt: skip
        # a depthwise k × k convolution is k² multiply-adds a channel at each patch: a matmul of its weight's size
        spatial = Parameter("mixer", "spatial_conv", "conv.spatial_conv.weight", (hidden, 1, kernel, kernel), True)
        conv = Mixer(
            kind="gated_conv2d",
            projections=(
                Projection("in_proj", "conv.in_proj", hidden, 3 * hidden),
                Projection("out_proj", "conv.out_proj", hidden, hidden),
            ),
            parameters=(spatial,),
        )
        name = prefix + "layers.{i}"
        built = {
            "conv": Layer(name, None, ffn, norms, mixer=conv, stack="vision"),
            "attention": Layer(name, attention, ffn, norms, stack="vision"),
        }
        layers = tuple(built["conv" if kind == "conv" else "attention"] for kind in self.kinds())
        patch = Linear(self.in_channels * self.temporal_patch_size * self.patch_size**2, hidden)
        extras = (tower_module(prefix + "patchifier", patch), tower_module(prefix + "embedding_norm", norm))
        # Qwen2VLImageProcessor (image_processing_auto.py's "lfm3_vl"): smart_resize to multiples of patch · merge;
        # the projector merges merge² patches into one token
        merge = self.spatial_merge_size
        image = ImageInput(self.patch_size, "multiple", self.patch_size * merge, merge=merge)
        return Tower(layers, extras, hidden, image)


@family("lfm3_vl", transformers="Lfm3VlConfig", architecture="LFM3-VL", model_class="Lfm3VlForConditionalGeneration")
class Lfm3VlConfig(MultimodalConfig):
    """configuration_lfm3_vl.py / modeling_lfm3_vl.py (Lfm3VlForConditionalGeneration): the tower
    (model.vision_tower.), Lfm3VlMultiModalProjector (a LayerNorm with bias over each patch, then linear_1 from
    spatial_merge_size² patches side by side into projector_hidden_size and linear_2 into the text width, biased by
    projector_bias) and a language model built by AutoModel (LFM3 by default), saved as model.language_model. and
    lm_head; the top-level tie_word_embeddings (default true) alone decides tying."""

    text_model_type = "lfm3"
    text_defaults = {"model_type": "lfm3"}
    vision_model_type = "lfm3_vl_vision"
    vision_defaults = {"model_type": "lfm3_vl_vision"}
    language_model_prefix = "model.language_model."
    vision_prefix = "model.vision_tower."
    lm_head_name = "lm_head"
    informational_fields = frozenset({"projector_hidden_act"})

    projector_hidden_act: str
    projector_hidden_size: Width
    projector_bias: Flag

    def projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        merge = self.vision.spatial_merge_size if isinstance(self.vision, Lfm3VlVisionConfig) else 1
        merged, inner, bias = tower.hidden_size * merge**2, self.projector_hidden_size, self.projector_bias
        name = "model.multi_modal_projector."
        return (
            tower_module(name + "layer_norm", Norm("layernorm", tower.hidden_size, bias=True), "projector"),
            projector_module(name + "linear_1", Linear(merged, inner, bias)),
            projector_module(name + "linear_2", Linear(inner, text_hidden, bias)),
        )
