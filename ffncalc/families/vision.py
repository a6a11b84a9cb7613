"""Vision towers of multimodal models, counted as the language model is: per layer, by stored name.

A wrapper (``families/multimodal.py``) reads its ``vision_config`` with one of the tower adapters
here, chosen by the config's model_type (the classes registered with ``@tower``) or else the
wrapper's own, and stores the tower under its prefix; the wrapper adds its projector. A tower's
layers form the "vision" stack: their parameters count under the ``vision`` component, and a
text token never runs them (``ffncalc flops `image``` does).

The towers:
- CLIP (LLaVA): a ViT with LayerNorms and biases, a class token, a learned position per patch;
- SigLIP (Gemma 3): a ViT with LayerNorms and biases, a learned position per patch, and an optional
  attention-pooling head; SigLIP 2 (LFM2-VL): the same layers after a linear patch embedding;
- InternViT (InternVL): a class token, layer-scale vectors, optional q/k RMSNorms over all heads;
- Pixtral (Mistral 3): RMSNorms, a gated FFN, no biases, rotary positions;
- the Qwen2-VL vision transformer (LayerNorms, plain FFN, fused qkv), the Qwen2.5-VL one (RMSNorms, gated FFN,
  fused qkv) and the Qwen3-VL / Qwen3.5 one
  (LayerNorms, plain FFN, a learned position table; Qwen3-VL adds "deepstack" mergers that feed
  intermediate layers to the language model), each with its patch merger;
- the GLM-4.1V vision encoder: RMSNorm blocks with a gated FFN, a learned position table, a convolution merging
  2 × 2 patches and a gated merger;
- the GLM-OCR vision encoder: GLM-4.1V's without its position table, with q/k RMSNorms per head and biases;
- the Llama-4 vision encoder: a class token, a pixel-shuffle adapter;
- the Gemma 4 vision encoder: Gemma layers, a table of x and y positions, pooling into soft tokens;
- MoonViT (Kimi-K2.5): a ViT with a learned position grid and 2-D rotary positions, merged 2 × 2 by the projector;
- MobileNet-V5 (Gemma 3n): a convolutional network (timm's mobilenetv5_300m_enc), counted by parameter, not by FLOPs.
The audio towers (Gemma 3n, Gemma 4) are in families/audio.py.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, ClassVar, Literal

from pydantic import AliasChoices, Field, model_validator

from ..schema import Flag, HeadCount, LayerCount, LayerIndex, Name, Width
from ..spec import (
    Attention,
    CheckpointExtra,
    DenseFfn,
    Extra,
    ImageInput,
    Layer,
    LearnedTensor,
    Linear,
    Names,
    Norm,
    Parameter,
    PatchEmbedding,
    StoredTensor,
    Table,
    names,
)
from ..values import replace
from .blocks import encoder_layer
from .registry import tower
from .towers import Tower, TowerConfig, projector_module, tower_module

# --- SigLIP (Gemma 3) ----------------------------------------------------------------------------

SIGLIP_ATTENTION = names(q="self_attn.q_proj", k="self_attn.k_proj", v="self_attn.v_proj", o="self_attn.out_proj")
SIGLIP_MLP = names(up="mlp.fc1", down="mlp.fc2")


class SiglipLayers(TowerConfig):
    """The fields SigLIP's and SigLIP 2's vision configs share, and the tower they build around their patch
    embeddings: LayerNorm encoder layers with biases and a plain FFN, a final LayerNorm, and optionally the
    attention-pooling head."""

    hidden_size: Width
    intermediate_size: Width
    num_hidden_layers: LayerCount
    num_attention_heads: HeadCount
    num_channels: Width
    patch_size: Width
    hidden_act: Name

    @model_validator(mode="after")
    def _check_heads(self) -> SiglipLayers:
        # SiglipAttention (modeling_siglip.py) and Siglip2Attention raise "embed_dim must be divisible by num_heads"
        if self.hidden_size % self.num_attention_heads:
            raise ValueError(
                f"hidden_size ({self.hidden_size}) is not a multiple of num_attention_heads "
                f"({self.num_attention_heads}); transformers' SiglipAttention refuses it"
            )
        return self

    def encoder_tower(self, prefix: str, image: ImageInput | None, embeddings: tuple[Extra, ...], head: bool) -> Tower:
        """The tower under PREFIX that reads IMAGE through EMBEDDINGS, with SigLIP's attention-pooling head when HEAD."""
        hidden, inner = self.hidden_size, self.intermediate_size
        layer = encoder_layer(
            prefix + "encoder.layers.{i}", hidden, self.num_attention_heads, inner, self.hidden_act,
            attention_names=SIGLIP_ATTENTION, ffn_names=SIGLIP_MLP, norm_names=("layer_norm1", "layer_norm2"),
            norm_kind="layernorm", bias=True, gated=False,
        )  # fmt: skip
        layer_norm = Norm("layernorm", hidden, bias=True)
        extras = [*embeddings, tower_module(prefix + "post_layernorm", layer_norm)]
        if head:  # its pooled output feeds no language model: left out of an image's FLOPs
            pooling = prefix + "head."
            extras += [
                tower_module(pooling + name, module, runs="not_generating")
                for name, module in (
                    ("probe", LearnedTensor((1, 1, hidden))),
                    ("attention.in_proj_weight", LearnedTensor((3 * hidden, hidden), matmul=True)),
                    ("attention.in_proj_bias", LearnedTensor((3 * hidden,))),
                    ("attention.out_proj", Linear(hidden, hidden, True)),
                    ("layernorm", layer_norm),
                    ("mlp.fc1", Linear(hidden, inner, True)),
                    ("mlp.fc2", Linear(inner, hidden, True)),
                )
            ]
        return Tower((layer,) * self.num_hidden_layers, tuple(extras), hidden, image)


class SiglipFields(SiglipLayers):
    """SigLIP's vision config and its variable-resolution copies (Idefics3, SmolVLM): a patch convolution with a bias
    and a learned position per patch (image_size / patch_size squared) before SigLIP's layers."""

    image_size: Width

    def siglip_tower(self, prefix: str, image: ImageInput | None, head: bool = False) -> Tower:
        """The tower under PREFIX that reads IMAGE, with SigLIP's attention-pooling head when HEAD."""
        patches = (self.image_size // self.patch_size) ** 2
        embeddings = (
            tower_module(
                prefix + "embeddings.patch_embedding",
                PatchEmbedding(self.num_channels, (self.patch_size,) * 2, self.hidden_size, True),
            ),
            tower_module(prefix + "embeddings.position_embedding", Table(patches, self.hidden_size)),
        )
        return self.encoder_tower(prefix, image, embeddings, head)


@tower("siglip_vision_model", transformers="SiglipVisionConfig")
class SiglipVisionConfig(SiglipFields):
    """configuration_siglip.py / modeling_siglip.py (SiglipVisionModel): SigLIP's tower and, with vision_use_head, an
    attention-pooling head (a probe token, nn.MultiheadAttention, an MLP). Every image is resized to image_size."""

    vision_use_head: Flag

    def tower(self, prefix: str) -> Tower:
        image = ImageInput(self.patch_size, "fixed", self.image_size)
        return self.siglip_tower(prefix, image, head=self.vision_use_head)


@tower("idefics3_vision", transformers="Idefics3VisionConfig")
class Idefics3VisionConfig(SiglipFields):
    """configuration_idefics3.py (Idefics3VisionConfig) / modeling_idefics3.py (Idefics3VisionTransformer): SigLIP's
    tower without a head, its positions interpolated over any image (NaViT); the image processor cuts an image
    into tiles of image_size square (and a global view), and the connector's pixel shuffle merges each tile's
    patches (the wrapper's scale_factor)."""

    def tower(self, prefix: str) -> Tower:
        return self.siglip_tower(prefix, ImageInput(self.patch_size, "tiles", self.image_size))


@tower("idefics2_vision", transformers="Idefics2VisionConfig")
class Idefics2VisionConfig(Idefics3VisionConfig):
    """configuration_idefics2.py (Idefics2VisionConfig) / modeling_idefics2.py (Idefics2VisionTransformer): Idefics3's
    tower (SigLIP's without a head) with SigLIP's default sizes."""


@tower("smolvlm_vision", transformers="SmolVLMVisionConfig")
class SmolVLMVisionConfig(Idefics3VisionConfig):
    """configuration_smolvlm.py (SmolVLMVisionConfig): Idefics3's tower and defaults."""


@tower("siglip2_vision_model", transformers="Siglip2VisionConfig")
class Siglip2VisionConfig(SiglipLayers):
    """configuration_siglip2.py (Siglip2VisionConfig) / modeling_siglip2.py (Siglip2VisionModel, NaFlex): patches of
    patch_size² pixels projected by a linear with a bias, a learned grid of num_patches positions (resized to each
    image: no matmul), SigLIP's layers, post_layernorm and (vision_use_head) its pooling head. Its image processor
    resizes an image to at most num_patches patches, padded to num_patches, all computed."""

    vision_use_head: Flag
    num_patches: Width

    def tower(self, prefix: str) -> Tower:
        embeddings = (
            tower_module(
                prefix + "embeddings.patch_embedding",
                Linear(self.num_channels * self.patch_size**2, self.hidden_size, True),
            ),
            tower_module(prefix + "embeddings.position_embedding", Table(self.num_patches, self.hidden_size)),
        )
        image = ImageInput(self.patch_size, "budget", self.num_patches)
        return self.encoder_tower(prefix, image, embeddings, self.vision_use_head)


# --- CLIP (LLaVA) --------------------------------------------------------------------------------

CLIP_ATTENTION = names(q="self_attn.q_proj", k="self_attn.k_proj", v="self_attn.v_proj", o="self_attn.out_proj")


@tower("clip_vision_model", transformers="CLIPVisionConfig")
class ClipVisionConfig(TowerConfig):
    """configuration_clip.py (CLIPVisionConfig) / modeling_clip.py (CLIPVisionModel, saved without its vision_model.
    level inside a wrapper): a class token, a patch convolution without bias, a learned position per patch and
    for the class token, a LayerNorm before the layers (pre_layrnorm, transformers' spelling), LayerNorm layers with
    biases and a plain FFN, and post_layernorm (on the class token only: no FLOPs that matter)."""

    hidden_size: Width
    intermediate_size: Width
    num_hidden_layers: LayerCount
    num_attention_heads: HeadCount
    num_channels: Width
    image_size: Width
    patch_size: Width
    hidden_act: Name

    def tower(self, prefix: str) -> Tower:
        hidden = self.hidden_size
        layer = encoder_layer(
            prefix + "encoder.layers.{i}", hidden, self.num_attention_heads, self.intermediate_size, self.hidden_act,
            attention_names=CLIP_ATTENTION, ffn_names=SIGLIP_MLP, norm_names=("layer_norm1", "layer_norm2"),
            norm_kind="layernorm", bias=True, gated=False,
        )  # fmt: skip
        patches = (self.image_size // self.patch_size) ** 2
        layer_norm = Norm("layernorm", hidden, bias=True)
        patch = PatchEmbedding(self.num_channels, (self.patch_size,) * 2, hidden)
        extras = (
            tower_module(prefix + "embeddings.class_embedding", LearnedTensor((hidden,))),
            tower_module(prefix + "embeddings.patch_embedding", patch),
            tower_module(prefix + "embeddings.position_embedding", Table(patches + 1, hidden)),
            tower_module(prefix + "pre_layrnorm", layer_norm),
            tower_module(prefix + "post_layernorm", layer_norm),
        )
        # CLIPImageProcessor: the shortest edge resized to image_size, then a centre crop of image_size square
        image = ImageInput(self.patch_size, "fixed", self.image_size, extra_tokens=1)
        return Tower((layer,) * self.num_hidden_layers, extras, hidden, image)


# --- InternViT (InternVL) ------------------------------------------------------------------------

INTERNVL_ATTENTION = names(
    q="attention.q_proj", k="attention.k_proj", v="attention.v_proj", o="attention.projection_layer",
    q_norm="attention.q_norm", k_norm="attention.k_norm",
)  # fmt: skip


@tower("internvl_vision", transformers="InternVLVisionConfig")
class InternVLVisionConfig(TowerConfig):
    """configuration_internvl.py (InternVLVisionConfig) / modeling_internvl.py (InternVLVisionModel): a class token
    (cls_token), a biased patch convolution, a learned position per patch and for the class token
    (use_absolute_position_embeddings), a mask token (use_mask_token); layers with q, k, v (attention_bias), a biased
    output projection, RMSNorms over all heads on q and k (use_qk_norm), a plain biased FFN, two norms (norm_type:
    LayerNorms with biases, or RMSNorms) and two layer-scale vectors (lambda_1, lambda_2); a final LayerNorm unless
    use_mean_pooling. image_size and patch_size are (height, width) pairs or one number for both."""

    #: Where the checkpoint keeps each part: the layers, their attention, norms and scales, the embeddings.
    attention_names: ClassVar[Names] = INTERNVL_ATTENTION
    layer_path: ClassVar[str] = "encoder.layer.{i}"
    norm_names: ClassVar[tuple[str, str]] = ("layernorm_before", "layernorm_after")
    scale_names: ClassVar[tuple[str, str]] = ("lambda_1", "lambda_2")
    class_token_name: ClassVar[str] = "embeddings.cls_token"
    patch_embedding_name: ClassVar[str] = "embeddings.patch_embeddings.projection"
    position_embedding_name: ClassVar[str] = "embeddings.position_embeddings"

    hidden_size: Width
    num_hidden_layers: LayerCount
    num_attention_heads: HeadCount
    attention_bias: Flag
    use_qk_norm: Flag
    intermediate_size: Width
    hidden_act: Name
    norm_type: Literal["layer_norm", "rms_norm"]
    image_size: Width | list[Width]
    patch_size: Width | list[Width]
    num_channels: Width
    use_mask_token: Flag
    use_absolute_position_embeddings: Flag
    use_mean_pooling: Flag

    @staticmethod
    def _pair(value: int | list[int]) -> tuple[int, int]:
        if isinstance(value, int):
            return value, value
        if len(value) != 2:
            raise ValueError("must be one number or a (height, width) pair")
        return value[0], value[1]

    @model_validator(mode="after")
    def _check_pairs(self) -> InternVLVisionConfig:
        self._pair(self.image_size)
        self._pair(self.patch_size)
        return self

    def tower(self, prefix: str) -> Tower:
        hidden, heads = self.hidden_size, self.num_attention_heads
        (image_h, image_w), (patch_h, patch_w) = self._pair(self.image_size), self._pair(self.patch_size)
        norm: Norm = Norm("layernorm", hidden, bias=True) if self.norm_type == "layer_norm" else Norm("rmsnorm", hidden)
        qk_norm = Norm("rmsnorm", hidden) if self.use_qk_norm else None  # over all heads
        bias = self.attention_bias
        head_dim = hidden // heads
        attention = Attention(
            hidden, heads, heads, head_dim, head_dim, self.attention_names, bias, bias, bias, True, qk_norm, qk_norm
        )
        ffn = DenseFfn(hidden, self.intermediate_size, False, self.hidden_act, SIGLIP_MLP, True)
        scales = tuple(Parameter("vision", name, name, (hidden,)) for name in self.scale_names)
        before, after = self.norm_names
        layer = Layer(
            prefix + self.layer_path, attention, ffn, ((before, norm), (after, norm)),
            stack="vision", parameters=scales,
        )  # fmt: skip
        patches = (image_h // patch_h) * (image_w // patch_w)
        extras = [
            tower_module(prefix + self.class_token_name, LearnedTensor((1, 1, hidden))),
            tower_module(
                prefix + self.patch_embedding_name, PatchEmbedding(self.num_channels, (patch_h, patch_w), hidden, True)
            ),
        ]
        if self.use_mask_token:
            extras.append(tower_module(prefix + "embeddings.mask_token", LearnedTensor((1, 1, hidden))))
        if self.use_absolute_position_embeddings:
            extras.append(tower_module(prefix + self.position_embedding_name, LearnedTensor((1, patches + 1, hidden))))
        if not self.use_mean_pooling:
            extras.append(tower_module(prefix + "layernorm", Norm("layernorm", hidden, bias=True)))
        # the image processor (GotOcr2ImageProcessor's crop_to_patches) cuts tiles of image_size square; ffncalc
        # counts one. A tower of oblong tiles has no rule here.
        square = image_h == image_w and patch_h == patch_w
        image = ImageInput(patch_h, "tiles", image_h, extra_tokens=1) if square else None
        return Tower((layer,) * self.num_hidden_layers, tuple(extras), hidden, image)


@tower("qianfan_ocr_vision", transformers="QianfanOCRVisionConfig")
class QianfanOCRVisionConfig(InternVLVisionConfig):
    """configuration_qianfan_ocr.py (QianfanOCRVisionConfig) / modeling_qianfan_ocr.py: InternViT with attention_bias
    true by default and its layers in a list of their own (QianfanOCRVisionModel.layers; drop paths hold no
    weights), saved in the original InternViT layout that conversion_mapping.py's "qianfan_ocr" renames from
    (encoder.layers.{i}, a fused attn.qkv, attn.proj, norm1, norm2, ls1, ls2, embeddings.class_embedding,
    patch_embedding and position_embedding); q_norm and k_norm, which no renaming names, keep the model's names."""

    attention_names = names(
        q="attn.qkv", k="attn.qkv", v="attn.qkv", o="attn.proj", q_norm="attention.q_norm", k_norm="attention.k_norm"
    )
    layer_path = "encoder.layers.{i}"
    norm_names = ("norm1", "norm2")
    scale_names = ("ls1", "ls2")
    class_token_name = "embeddings.class_embedding"
    patch_embedding_name = "embeddings.patch_embedding"
    position_embedding_name = "embeddings.position_embedding"


# --- Pixtral (Mistral 3) -------------------------------------------------------------------------

PIXTRAL_ATTENTION = names(q="attention.q_proj", k="attention.k_proj", v="attention.v_proj", o="attention.o_proj")
PIXTRAL_FFN = names(gate="feed_forward.gate_proj", up="feed_forward.up_proj", down="feed_forward.down_proj")


@tower("pixtral", transformers="PixtralVisionConfig")
class PixtralVisionConfig(TowerConfig):
    """configuration_pixtral.py / modeling_pixtral.py: a patch convolution without bias, an RMSNorm before the
    layers (ln_pre), RMSNorm layers with a gated FFN and no biases; head_dim = hidden_size // heads."""

    hidden_size: Width
    intermediate_size: Width
    num_hidden_layers: LayerCount
    num_attention_heads: HeadCount
    num_channels: Width
    image_size: Width
    patch_size: Width
    hidden_act: Name

    def tower(self, prefix: str) -> Tower:
        hidden = self.hidden_size
        layer = encoder_layer(
            prefix + "transformer.layers.{i}", hidden, self.num_attention_heads, self.intermediate_size, self.hidden_act,
            attention_names=PIXTRAL_ATTENTION, ffn_names=PIXTRAL_FFN, norm_names=("attention_norm", "ffn_norm"),
            norm_kind="rmsnorm", bias=False, gated=True,
        )  # fmt: skip
        extras = (
            tower_module(prefix + "patch_conv", PatchEmbedding(self.num_channels, (self.patch_size,) * 2, hidden)),
            tower_module(prefix + "ln_pre", Norm("rmsnorm", hidden)),
        )
        image = ImageInput(self.patch_size, "longest_edge", self.image_size)
        return Tower((layer,) * self.num_hidden_layers, extras, hidden, image)


# --- Qwen-VL --------------------------------------------------------------------------------------

QWEN_VL_ATTENTION = names(q="attn.qkv", k="attn.qkv", v="attn.qkv", o="attn.proj")
QWEN2_VL_MLP = names(up="mlp.fc1", down="mlp.fc2")
QWEN25_VL_MLP = names(gate="mlp.gate_proj", up="mlp.up_proj", down="mlp.down_proj")
QWEN3_VL_MLP = names(up="mlp.linear_fc1", down="mlp.linear_fc2")


class _QwenVisionFields(TowerConfig):
    """The fields the Qwen vision configs share (``num_heads`` and ``depth`` are also read as num_attention_heads
    and num_hidden_layers, their attribute_map)."""

    depth: LayerCount
    hidden_size: Width
    hidden_act: Name
    intermediate_size: Width
    num_heads: HeadCount
    in_channels: Width
    patch_size: Width
    spatial_merge_size: Width
    temporal_patch_size: Width
    out_hidden_size: Width

    def patch_embedding(self, bias: bool) -> PatchEmbedding:
        """A 3-D convolution over temporal_patch_size frames of patch_size² pixels (an image is repeated in time)."""
        return PatchEmbedding(
            self.in_channels, (self.temporal_patch_size, self.patch_size, self.patch_size), self.hidden_size, bias
        )

    def image_input(self, window_units: int | None = None) -> ImageInput:
        """smart_resize: each side rounded to a multiple of patch_size · spatial_merge_size (within the processor's
        min_pixels and max_pixels, which are not in config.json); merge² patches make one token."""
        factor = self.patch_size * self.spatial_merge_size
        return ImageInput(self.patch_size, "multiple", factor, merge=self.spatial_merge_size, window_units=window_units)

    @property
    def merged_width(self) -> int:
        """The merger reads spatial_merge_size² neighbouring patches side by side: hidden · merge²."""
        return self.hidden_size * self.spatial_merge_size**2


@tower("qwen2_vl_vision", transformers="Qwen2VLVisionConfig")
class Qwen2VLVisionConfig(TowerConfig):
    """configuration_qwen2_vl.py (Qwen2VLVisionConfig) / modeling_qwen2_vl.py: a patch convolution without bias,
    LayerNorm blocks embed_dim wide with fused qkv and a plain FFN (embed_dim · mlp_ratio), all with biases; the
    merger (PatchMerger): LayerNorm ln_q (embed_dim), mlp.0 (merged → merged) and mlp.2 (merged → hidden_size), with
    biases. ``hidden_size`` is what the merger hands on, the language model's width."""

    depth: LayerCount
    embed_dim: Width
    hidden_size: Width
    hidden_act: Name
    mlp_ratio: Width
    num_heads: HeadCount
    in_channels: Width
    patch_size: Width
    spatial_merge_size: Width
    temporal_patch_size: Width

    def tower(self, prefix: str) -> Tower:
        width = self.embed_dim
        layer = encoder_layer(
            prefix + "blocks.{i}", width, self.num_heads, width * self.mlp_ratio, self.hidden_act,
            attention_names=QWEN_VL_ATTENTION, ffn_names=QWEN2_VL_MLP, norm_names=("norm1", "norm2"),
            norm_kind="layernorm", bias=True, gated=False,
        )  # fmt: skip
        merged = width * self.spatial_merge_size**2
        patch = (self.temporal_patch_size, self.patch_size, self.patch_size)
        extras = (
            tower_module(prefix + "patch_embed.proj", PatchEmbedding(self.in_channels, patch, width)),
            tower_module(prefix + "merger.ln_q", Norm("layernorm", width, bias=True), "projector"),
            projector_module(prefix + "merger.mlp.0", Linear(merged, merged, True)),
            projector_module(prefix + "merger.mlp.2", Linear(merged, self.hidden_size, True)),
        )
        # smart_resize, as Qwen2.5-VL's processor (image_processing_qwen2_vl.py): sides to multiples of patch · merge
        image = ImageInput(
            self.patch_size, "multiple", self.patch_size * self.spatial_merge_size, merge=self.spatial_merge_size
        )
        return Tower((layer,) * self.depth, extras, self.hidden_size, image)


@tower("qwen2_5_vl_vision", transformers="Qwen2_5_VLVisionConfig")
class Qwen25VLVisionConfig(_QwenVisionFields):
    """configuration_qwen2_5_vl.py (Qwen2_5_VLVisionConfig) / modeling_qwen2_5_vl.py: RMSNorm blocks, fused qkv
    with bias, a gated FFN with biases; window attention except in fullatt_block_indexes (no parameter
    effect); the merger: RMSNorm (ln_q), then mlp.0 (merged → merged) and mlp.2 (merged → out_hidden_size)."""

    informational_fields = frozenset({"window_size", "fullatt_block_indexes", "tokens_per_second"})

    window_size: Width
    fullatt_block_indexes: list[LayerIndex]

    def tower(self, prefix: str) -> Tower:
        layer = encoder_layer(
            prefix + "blocks.{i}", self.hidden_size, self.num_heads, self.intermediate_size, self.hidden_act,
            attention_names=QWEN_VL_ATTENTION, ffn_names=QWEN25_VL_MLP, norm_names=("norm1", "norm2"),
            norm_kind="rmsnorm", bias=True, gated=True,
        )  # fmt: skip
        merged = self.merged_width
        extras = (
            tower_module(prefix + "patch_embed.proj", self.patch_embedding(bias=False)),
            tower_module(prefix + "merger.ln_q", Norm("rmsnorm", self.hidden_size), "projector"),
            projector_module(prefix + "merger.mlp.0", Linear(merged, merged, True)),
            projector_module(prefix + "merger.mlp.2", Linear(merged, self.out_hidden_size, True)),
        )
        # Layers outside fullatt_block_indexes attend within windows of window_size pixels (in merged units).
        units = self.window_size // self.spatial_merge_size // self.patch_size
        assert layer.attention is not None
        windowed = replace(layer, attention=replace(layer.attention, window=(units * self.spatial_merge_size) ** 2))
        layers = tuple(layer if i in self.fullatt_block_indexes else windowed for i in range(self.depth))
        return Tower(layers, extras, self.out_hidden_size, self.image_input(window_units=units))


@tower("exaone4_5_vision", transformers="Exaone4_5_VisionConfig")
class Exaone45VisionConfig(Qwen25VLVisionConfig):
    """configuration_exaone4_5.py / modular_exaone4_5.py (Exaone4_5_VisionModel): Qwen2.5-VL's tower, windows and
    merger, its fused qkv (with bias) grouped: q_dim + 2 · num_key_value_heads · head_dim outputs (2-D RoPE, no
    parameters)."""

    informational_fields = frozenset({"window_size", "fullatt_block_indexes"})

    num_key_value_heads: HeadCount

    @model_validator(mode="after")
    def _check_groups(self) -> Exaone45VisionConfig:
        # Exaone4_5_VisionAttention views k and v as num_key_value_heads heads of head_dim and repeats them
        # num_heads // num_key_value_heads times: a remainder cannot be attended
        if self.num_heads % self.num_key_value_heads:
            raise ValueError(
                f"num_heads ({self.num_heads}) must be a multiple of num_key_value_heads ({self.num_key_value_heads})"
            )
        return self

    def tower(self, prefix: str) -> Tower:
        tower = super().tower(prefix)
        grouped = []
        for layer in tower.layers:
            assert layer.attention is not None  # every block of Qwen2.5-VL's tower attends
            grouped.append(replace(layer, attention=replace(layer.attention, num_kv_heads=self.num_key_value_heads)))
        return replace(tower, layers=tuple(grouped))


@tower("qwen3_5_vision", transformers="Qwen3_5VisionConfig")
class Qwen35VisionConfig(_QwenVisionFields):
    """configuration_qwen3_5.py (Qwen3_5VisionConfig) / modeling_qwen3_5.py: a patch convolution with bias, a
    learned position table (num_position_embeddings), LayerNorm blocks with fused qkv and a plain FFN, all with
    biases; the merger: LayerNorm (hidden), linear_fc1 (merged → merged), linear_fc2 (merged → out_hidden_size)."""

    num_position_embeddings: Width

    def merger(self, name: str, norm_width: int) -> tuple[Extra, ...]:
        """A patch merger: LayerNorm over NORM_WIDTH, then merged → merged → out_hidden_size, with biases."""
        merged = self.merged_width
        return (
            tower_module(name + ".norm", Norm("layernorm", norm_width, bias=True), "projector"),
            projector_module(name + ".linear_fc1", Linear(merged, merged, True)),
            projector_module(name + ".linear_fc2", Linear(merged, self.out_hidden_size, True)),
        )

    def tower(self, prefix: str) -> Tower:
        layer = encoder_layer(
            prefix + "blocks.{i}", self.hidden_size, self.num_heads, self.intermediate_size, self.hidden_act,
            attention_names=QWEN_VL_ATTENTION, ffn_names=QWEN3_VL_MLP, norm_names=("norm1", "norm2"),
            norm_kind="layernorm", bias=True, gated=False,
        )  # fmt: skip
        extras = (
            tower_module(prefix + "patch_embed.proj", self.patch_embedding(bias=True)),
            tower_module(prefix + "pos_embed", Table(self.num_position_embeddings, self.hidden_size)),
            *self.merger(prefix + "merger", self.hidden_size),
            *self.deepstack(prefix),
        )
        return Tower((layer,) * self.depth, extras, self.out_hidden_size, self.image_input())

    def deepstack(self, prefix: str) -> tuple[Extra, ...]:
        return ()


@tower("qwen3_5_moe_vision", transformers="Qwen3_5MoeVisionConfig")
class Qwen35MoeVisionConfig(Qwen35VisionConfig):
    """configuration_qwen3_5_moe.py (Qwen3_5MoeVisionConfig): the same tower."""


@tower("qwen3_vl_vision", transformers="Qwen3VLVisionConfig")
class Qwen3VLVisionConfig(Qwen35VisionConfig):
    """configuration_qwen3_vl.py (Qwen3VLVisionConfig): Qwen3.5's tower, plus one "deepstack" merger for each of
    deepstack_visual_indexes, whose LayerNorm reads the merged width (use_postshuffle_norm)."""

    deepstack_visual_indexes: list[LayerIndex]

    def deepstack(self, prefix: str) -> tuple[Extra, ...]:
        mergers: tuple[Extra, ...] = ()
        for j in range(len(self.deepstack_visual_indexes)):
            mergers += self.merger(f"{prefix}deepstack_merger_list.{j}", self.merged_width)
        return mergers


@tower("qwen3_vl_moe_vision", transformers="Qwen3VLMoeVisionConfig")
class Qwen3VLMoeVisionConfig(Qwen3VLVisionConfig):
    """configuration_qwen3_vl_moe.py (Qwen3VLMoeVisionConfig): the same tower."""


# --- GLM-4.1V / GLM-4.5V ---------------------------------------------------------------------------


@tower("glm4v_vision", transformers="Glm4vVisionConfig")
class Glm4vVisionConfig(TowerConfig):
    """configuration_glm4v.py (Glm4vVisionConfig) / modeling_glm4v.py (Glm4vVisionModel): a patch convolution over
    temporal_patch_size frames with a bias, an RMSNorm after it (post_conv_layernorm), a learned position per patch
    of an image_size square (embeddings.position_embedding, interpolated to each image: no matmul); RMSNorm blocks with
    fused qkv (bias: attention_bias), proj without bias and a gated FFN hidden → out_hidden_size → hidden without
    biases (Glm4VisionMlp reads out_hidden_size, not intermediate_size); a final RMSNorm (post_layernorm), then
    downsample, a convolution of spatial_merge_size² patches into out_hidden_size with a bias, and the merger
    (Glm4vVisionPatchMerger): proj (out → out), a LayerNorm with bias, gate and up (out → intermediate_size) and
    down (intermediate_size → out), no biases."""

    depth: LayerCount
    hidden_size: Width
    hidden_act: Name
    attention_bias: Flag
    num_heads: HeadCount
    in_channels: Width
    image_size: Width
    patch_size: Width
    spatial_merge_size: Width
    temporal_patch_size: Width
    out_hidden_size: Width
    intermediate_size: Width

    def tower(self, prefix: str) -> Tower:
        hidden, heads, out = self.hidden_size, self.num_heads, self.out_hidden_size
        # qkv is hidden → 3 · hidden and proj hidden → hidden whatever the heads: heads that do not divide hidden
        # are counted as one head of the whole width (such a tower cannot run)
        heads, head_dim = (heads, hidden // heads) if hidden % heads == 0 else (1, hidden)
        norm = Norm("rmsnorm", hidden)
        layer = Layer(
            prefix + "blocks.{i}",
            self.block_attention(heads, head_dim),
            self.block_mlp(),
            (("norm1", norm), ("norm2", norm)),
            stack="vision",
        )
        merge, inner = self.spatial_merge_size, self.merger_width()
        patch = (self.temporal_patch_size, self.patch_size, self.patch_size)
        merger = prefix + "merger."
        extras = (
            tower_module(prefix + "patch_embed.proj", PatchEmbedding(self.in_channels, patch, hidden, True)),
            *self.after_patches(prefix),
            tower_module(prefix + "post_layernorm", norm),
            # once per token: merge × merge patches into one
            tower_module(
                prefix + "downsample", PatchEmbedding(hidden, (merge, merge), out, True), runs="per_image_token"
            ),
            projector_module(merger + "proj", Linear(out, out)),
            tower_module(merger + "post_projection_norm", Norm("layernorm", out, bias=True), "projector"),
            projector_module(merger + "gate_proj", Linear(out, inner)),
            projector_module(merger + "up_proj", Linear(out, inner)),
            projector_module(merger + "down_proj", Linear(inner, out)),
        )
        # Glm4vImageProcessor's smart_resize: each side to the nearest multiple of patch_size · spatial_merge_size
        # (within its min and max pixels, size["shortest_edge"] and ["longest_edge"], not in config.json)
        image = ImageInput(self.patch_size, "multiple", self.patch_size * merge, merge=merge)
        return Tower((layer,) * self.depth, extras, out, image)

    def block_attention(self, heads: int, head_dim: int) -> Attention:
        """Glm4vVisionAttention: fused qkv and proj, both biased by attention_bias."""
        bias = self.attention_bias
        return Attention(self.hidden_size, heads, heads, head_dim, head_dim, QWEN_VL_ATTENTION, bias, bias, bias, False)

    def block_mlp(self) -> DenseFfn:
        """Glm4VisionMlp: gate and up hidden → out_hidden_size, down back, no biases."""
        return DenseFfn(self.hidden_size, self.out_hidden_size, True, self.hidden_act, QWEN25_VL_MLP, False)

    def after_patches(self, prefix: str) -> tuple[Extra, ...]:
        """post_conv_layernorm and a learned position per patch of an image_size square (interpolated: no matmul)."""
        positions = (self.image_size // self.patch_size) ** 2
        return (
            tower_module(prefix + "post_conv_layernorm", Norm("rmsnorm", self.hidden_size)),
            tower_module(prefix + "embeddings.position_embedding", Table(positions, self.hidden_size)),
        )

    def merger_width(self) -> int:
        """Glm4vVisionPatchMerger's context_dim: its gate and up project into intermediate_size."""
        return self.intermediate_size


@tower("glm4v_moe_vision", transformers="Glm4vMoeVisionConfig")
class Glm4vMoeVisionConfig(Glm4vVisionConfig):
    """configuration_glm4v_moe.py (Glm4vMoeVisionConfig): GLM-4.1V's tower and defaults."""


GLM_OCR_VISION_ATTENTION = names(
    q="attn.qkv", k="attn.qkv", v="attn.qkv", o="attn.proj", q_norm="attn.q_norm", k_norm="attn.k_norm"
)


@tower("glm_ocr_vision", transformers="GlmOcrVisionConfig")
class GlmOcrVisionConfig(Glm4vVisionConfig):
    """configuration_glm_ocr.py (GlmOcrVisionConfig) / modeling_glm_ocr.py (GlmOcrVisionModel): GLM-4.1V's tower
    without post_conv_layernorm and the position table (GlmOcrVisionModel deletes both), an RMSNorm over each head's
    queries and keys (q_norm, k_norm), its MLP hidden → intermediate_size → hidden biased by attention_bias (default
    true here, as qkv and proj), and a merger whose gate and up read out_hidden_size · in_channels."""

    def block_attention(self, heads: int, head_dim: int) -> Attention:
        bias, head_norm = self.attention_bias, Norm("rmsnorm", head_dim)
        return Attention(
            self.hidden_size,
            heads,
            heads,
            head_dim,
            head_dim,
            GLM_OCR_VISION_ATTENTION,
            bias,
            bias,
            bias,
            bias,
            q_norm=head_norm,
            k_norm=head_norm,
        )

    def block_mlp(self) -> DenseFfn:
        """GlmOcrVisionMlp: gate and up hidden → intermediate_size, down back, biased by attention_bias."""
        return DenseFfn(
            self.hidden_size, self.intermediate_size, True, self.hidden_act, QWEN25_VL_MLP, self.attention_bias
        )

    def after_patches(self, prefix: str) -> tuple[Extra, ...]:
        return ()

    def merger_width(self) -> int:
        """GlmOcrVisionModel builds its merger with context_dim out_hidden_size · in_channels."""
        return self.out_hidden_size * self.in_channels


# --- Llama 4 --------------------------------------------------------------------------------------

LLAMA4_VISION_ATTENTION = names(q="self_attn.q_proj", k="self_attn.k_proj", v="self_attn.v_proj", o="self_attn.o_proj")
LLAMA4_VISION_MLP = names(up="mlp.fc1", down="mlp.fc2")


@tower("llama4_vision_model", transformers="Llama4VisionConfig")
class Llama4VisionConfig(TowerConfig):
    """configuration_llama4.py (Llama4VisionConfig) / modeling_llama4.py: patches unfolded and projected by one
    linear without bias, a class token and a learned position per patch (+1 for the class token), LayerNorms
    before and after the layers, LayerNorm layers with biases and a plain FFN; the pixel-shuffle adapter
    (vision_adapter.mlp: fc1 intermediate_size → projector_input_dim, fc2 projector_output_dim → itself,
    no biases) hands vision_output_dim-wide features to the wrapper's projector."""

    informational_fields = frozenset({"pixel_shuffle_ratio", "vision_feature_select_strategy"})

    hidden_size: Width
    hidden_act: Name
    num_hidden_layers: LayerCount
    num_attention_heads: HeadCount
    num_channels: Width
    intermediate_size: Width
    vision_output_dim: Width
    image_size: Width
    patch_size: Width
    pixel_shuffle_ratio: float
    projector_input_dim: Width
    projector_output_dim: Width
    multi_modal_projector_bias: Flag

    def tower(self, prefix: str) -> Tower:
        hidden = self.hidden_size
        layer = encoder_layer(
            prefix + "model.layers.{i}", hidden, self.num_attention_heads, self.intermediate_size, self.hidden_act,
            attention_names=LLAMA4_VISION_ATTENTION, ffn_names=LLAMA4_VISION_MLP,
            norm_names=("input_layernorm", "post_attention_layernorm"), norm_kind="layernorm", bias=True, gated=False,
        )  # fmt: skip
        patches = (self.image_size // self.patch_size) ** 2
        layer_norm = Norm("layernorm", hidden, bias=True)
        extras = (
            tower_module(prefix + "patch_embedding.linear", Linear(self.num_channels * self.patch_size**2, hidden)),
            tower_module(prefix + "class_embedding", LearnedTensor((hidden,))),
            tower_module(prefix + "positional_embedding_vlm", LearnedTensor((patches + 1, hidden))),
            tower_module(prefix + "layernorm_pre", layer_norm),
            tower_module(prefix + "layernorm_post", layer_norm),
            # after pixel shuffle: one token for every (1 / pixel_shuffle_ratio)² patches
            tower_module(
                prefix + "vision_adapter.mlp.fc1",
                Linear(self.intermediate_size, self.projector_input_dim),
                runs="per_image_token",
            ),
            tower_module(
                prefix + "vision_adapter.mlp.fc2",
                Linear(self.projector_output_dim, self.projector_output_dim),
                runs="per_image_token",
            ),
        )
        merge = round(1 / self.pixel_shuffle_ratio)
        image = ImageInput(self.patch_size, "tiles", self.image_size, merge=merge, extra_tokens=1)
        return Tower((layer,) * self.num_hidden_layers, extras, self.vision_output_dim, image)


# --- Gemma 4 ----------------------------------------------------------------------------------------

GEMMA4_VISION_ATTENTION = names(
    q="self_attn.q_proj.linear", k="self_attn.k_proj.linear", v="self_attn.v_proj.linear", o="self_attn.o_proj.linear",
    q_norm="self_attn.q_norm", k_norm="self_attn.k_norm",
)  # fmt: skip
GEMMA4_VISION_MLP = names(gate="mlp.gate_proj.linear", up="mlp.up_proj.linear", down="mlp.down_proj.linear")
GEMMA4_VISION_NORMS = (
    "input_layernorm",
    "post_attention_layernorm",
    "pre_feedforward_layernorm",
    "post_feedforward_layernorm",
)


@tower("gemma4_vision", transformers="Gemma4VisionConfig")
class Gemma4VisionConfig(TowerConfig):
    """configuration_gemma4.py (Gemma4VisionConfig) / modeling_gemma4.py (Gemma4VisionModel): patches of patch_size²
    pixels projected by one linear without bias, a learned table of x and y positions [2, position_embedding_size,
    hidden], Gemma layers (four RMSNorms, per-head q/k RMSNorms, v normed without a weight, a gated FFN), every
    linear wrapped in a Gemma4ClippableLinear without bias (attention_bias has no effect). With use_clipped_linears
    each linear also saves four clipping bounds; with standardize the model saves std_bias and std_scale."""

    informational_fields = frozenset({"max_position_embeddings", "attention_bias"})

    hidden_size: Width
    intermediate_size: Width
    num_hidden_layers: LayerCount
    num_attention_heads: HeadCount
    num_key_value_heads: HeadCount
    head_dim: Width
    hidden_activation: Name
    pooling_kernel_size: Width
    patch_size: Width
    position_embedding_size: Width
    use_clipped_linears: Flag
    standardize: Flag

    def tower(self, prefix: str) -> Tower:
        hidden, heads, kv_heads, head_dim = (
            self.hidden_size,
            self.num_attention_heads,
            self.num_key_value_heads,
            self.head_dim,
        )
        head_norm = Norm("rmsnorm", head_dim)
        attention = Attention(
            hidden, heads, kv_heads, head_dim, head_dim, GEMMA4_VISION_ATTENTION, q_norm=head_norm, k_norm=head_norm
        )
        ffn = DenseFfn(hidden, self.intermediate_size, True, self.hidden_activation, GEMMA4_VISION_MLP)
        norms = tuple((name, Norm("rmsnorm", hidden)) for name in GEMMA4_VISION_NORMS)
        layer = Layer(prefix + "encoder.layers.{i}", attention, ffn, norms, stack="vision")
        extras = (
            tower_module(prefix + "patch_embedder.input_proj", Linear(3 * self.patch_size**2, hidden)),
            tower_module(
                prefix + "patch_embedder.position_embedding_table",
                LearnedTensor((2, self.position_embedding_size, hidden)),
            ),
        )
        saved: list[CheckpointExtra] = []
        if self.use_clipped_linears:
            bounds = tuple(
                StoredTensor(f"{prefix}encoder.layers.{{i}}.{module}.{bound}", ())
                for module in ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj",
                               "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj")
                for bound in ("input_min", "input_max", "output_min", "output_max")
            )  # fmt: skip
            reason = "use_clipped_linears: each linear's clipping bounds, saved as buffers"
            saved.append(
                CheckpointExtra("clipping bounds", reason, bounds, tuple(range(self.num_hidden_layers)), buffer=True)
            )
        if self.standardize:
            std = (StoredTensor(prefix + "std_bias", (hidden,)), StoredTensor(prefix + "std_scale", (hidden,)))
            saved.append(
                CheckpointExtra(
                    "standardization", "standardize: the output's bias and scale, saved as buffers", std, buffer=True
                )
            )
        # The processor pads every image to max_soft_tokens · pooling_kernel_size² patches, all computed; the pooler
        # averages each k × k of them into one soft token.
        k = self.pooling_kernel_size
        image = ImageInput(self.patch_size, "budget", GEMMA4_SOFT_TOKENS * k * k, merge=k)
        return Tower((layer,) * self.num_hidden_layers, extras, hidden, image, tuple(saved))


GEMMA4_SOFT_TOKENS = 280  # Gemma4ImageProcessor.max_soft_tokens, unless the wrapper's config says otherwise


# --- MoonViT (Kimi-K2.5) ----------------------------------------------------------------------------

# transformers saves the tower as Moonshot's checkpoints name it (its conversion reverted): fused wqkv, wo, norm0 and
# norm1, mlp.fc0 and mlp.fc1, the layers under encoder.blocks, the position grid outside the encoder.
MOONVIT_ATTENTION = names(q="wqkv", k="wqkv", v="wqkv", o="wo")
MOONVIT_MLP = names(up="mlp.fc0", down="mlp.fc1")
# Kimi_K25ImageProcessor's defaults (preprocessor_config.json may set others; config.json does not hold them).
KIMI_K25_MAX_PATCHES = 16384
KIMI_K25_MAX_PATCHES_PER_SIDE = 512  # its size["max_height"], read as patches


@tower("kimi_k25_vision", transformers="Kimi_K25VisionConfig")
class KimiK25VisionConfig(TowerConfig):
    """configuration_kimi_k25.py (Kimi_K25VisionConfig) / modeling_kimi_k25.py (Kimi_K25VisionModel, MoonViT): a patch
    convolution with bias, a learned position grid [pos_emb_height, pos_emb_width, hidden] (resampled to each image's
    grid: no matmul; the time axis is a sinusoid, not saved), LayerNorm layers with biases, q, k and v each
    hidden → hidden (head_dim = hidden // heads), a plain FFN, a final LayerNorm; 2-D rotary positions (no weights).
    Its output keeps every patch: the wrapper's projector merges merge_kernel_size patches into one token."""

    patch_size: Width
    pos_emb_height: Width
    pos_emb_width: Width
    num_attention_heads: HeadCount
    num_hidden_layers: LayerCount
    hidden_size: Width
    intermediate_size: Width
    hidden_act: Name
    # The projector reads [0] · [1] (fewer than two: transformers fails to build it).
    merge_kernel_size: Annotated[list[Width], Field(min_length=2)]

    def tower(self, prefix: str) -> Tower:
        hidden, heads = self.hidden_size, self.num_attention_heads
        layer = encoder_layer(
            prefix + "encoder.blocks.{i}", hidden, heads, self.intermediate_size, self.hidden_act,
            attention_names=MOONVIT_ATTENTION, ffn_names=MOONVIT_MLP, norm_names=("norm0", "norm1"),
            norm_kind="layernorm", bias=True, gated=False,
        )  # fmt: skip
        if hidden % heads:  # q, k, v and o are hidden × hidden whatever the heads (such a tower cannot run)
            assert layer.attention is not None
            one_head = replace(layer.attention, num_heads=1, num_kv_heads=1, qk_head_dim=hidden, v_head_dim=hidden)
            layer = replace(layer, attention=one_head)
        extras = (
            tower_module(prefix + "encoder.patch_embed.proj", PatchEmbedding(3, (self.patch_size,) * 2, hidden, True)),
            tower_module(
                prefix + "patch_embed.pos_emb.weight", LearnedTensor((self.pos_emb_height, self.pos_emb_width, hidden))
            ),
            tower_module(prefix + "encoder.final_layernorm", Norm("layernorm", hidden, bias=True)),
        )
        rows, columns = self.merge_kernel_size[:2]
        image = ImageInput(
            self.patch_size, "patch_budget", KIMI_K25_MAX_PATCHES, merge=rows,
            max_side=KIMI_K25_MAX_PATCHES_PER_SIDE, merge_columns=columns if columns != rows else None,
        )  # fmt: skip
        return Tower((layer,) * self.num_hidden_layers, extras, hidden, image)


# --- MobileNet-V5 (Gemma 3n) ----------------------------------------------------------------------------

# timm's arch_def of mobilenetv5_300m_enc (timm/models/mobilenetv5.py, _gen_mobilenet_v5), one tuple per stage:
# er = EdgeResidual, uir = UniversalInvertedResidual, mqa = MobileAttention with multi-query attention; r repeats,
# k the (middle) depthwise kernel, a the starting one, s the stride, e the expansion, c the output channels,
# h heads, d key and value width, v the keys' and values' stride.
MOBILENETV5_300M_ENC = (
    ("er_r1_k3_s2_e4_c128", "er_r1_k3_s1_e4_c128", "er_r1_k3_s1_e4_c128"),
    ("uir_r1_a3_k5_s2_e6_c256", "uir_r1_a5_k0_s1_e4_c256", "uir_r1_a3_k0_s1_e4_c256", "uir_r1_a5_k0_s1_e4_c256",
     "uir_r1_a3_k0_s1_e4_c256"),
    ("uir_r1_a5_k5_s2_e6_c640", *("uir_r1_a5_k0_s1_e4_c640",) * 7, "uir_r1_a0_k0_s1_e1_c640",
     *("mqa_r1_k3_h12_v2_s1_d64_c640", "uir_r1_a0_k0_s1_e2_c640") * 14),
    ("uir_r1_a5_k5_s2_e6_c1280", *("mqa_r1_k3_h16_s1_d96_c1280", "uir_r1_a0_k0_s1_e2_c1280") * 19),
)  # fmt: skip
MOBILENETV5_STEM = 64  # stem_size: a 3 × 3 convolution with bias, stride 2
MOBILENETV5_FEATURES = 2048  # MobileNetV5Encoder.num_features: what the fusion adapter (msfa) puts out


def make_divisible(value: float, divisor: int = 8) -> int:
    """timm's make_divisible: VALUE to the nearest multiple of DIVISOR (at least DIVISOR), up one if that loses 10 %."""
    rounded = max(divisor, int(value + divisor / 2) // divisor * divisor)
    return rounded + divisor if rounded < 0.9 * value else rounded


def conv(module: str, out_channels: int, in_channels: int, kernel: int) -> Parameter:
    """A 2-D convolution without bias: weight [out, in (1 when depthwise), kernel, kernel]."""
    part = module.removesuffix(".conv").replace(".", "_")
    return Parameter("vision", part, module + ".weight", (out_channels, in_channels, kernel, kernel), matmul=True)


def block_options(block: str) -> tuple[str, dict[str, float]]:
    """timm's _decode_block_str for the options MobileNet-V5 uses: "uir_r1_a3_k5_s2_e6_c256" → ("uir", {"r": 1, …})."""
    kind, *settings = block.split("_")
    matches = (re.fullmatch(r"([a-z]+)(\d.*)", setting) for setting in settings)
    return kind, {match[1]: float(match[2]) for match in matches if match}


def mobilenet_block(name: str, block: str, in_channels: int, index_offset: int) -> tuple[Layer, int]:
    """One block of a timm arch_def string, with RMSNorms of one weight per channel: (its layer, its channels out).

    er: conv_exp (k × k, in → mid = make_divisible(in · e)), bn1, conv_pwl (1 × 1, mid → c), bn2.
    uir: dw_start (a × a depthwise, if a), pw_exp (1 × 1, in → mid), dw_mid (k × k depthwise, if k), pw_proj
    (1 × 1, mid → c), each with its norm; layer_scale.gamma (c).
    mqa: a norm (in), attn.query.proj (in → h · d), attn.key.proj and attn.value.proj (in → d), each after a k × k
    depthwise down_conv and its norm when v > 1, attn.output.proj (h · d → c); layer_scale.gamma (c).
    """
    kind, options = block_options(block)
    out = int(options["c"])
    norms: list[tuple[str, Norm]] = []
    convs: list[Parameter] = []

    def conv_norm(module: str, channels_out: int, channels_in: int, kernel: int) -> None:
        convs.append(conv(module + ".conv", channels_out, channels_in, kernel))
        norms.append((module + ".bn", Norm("rmsnorm", channels_out)))

    if kind == "er":
        mid, kernel = make_divisible(in_channels * options["e"]), int(options["k"])
        convs += [conv("conv_exp", mid, in_channels, kernel), conv("conv_pwl", out, mid, 1)]
        norms += [("bn1", Norm("rmsnorm", mid)), ("bn2", Norm("rmsnorm", out))]
    elif kind == "uir":
        mid, start, middle = make_divisible(in_channels * options["e"]), int(options.get("a", 0)), int(options["k"])
        if start:
            conv_norm("dw_start", in_channels, 1, start)
        conv_norm("pw_exp", mid, in_channels, 1)
        if middle:
            conv_norm("dw_mid", mid, 1, middle)
        conv_norm("pw_proj", out, mid, 1)
    else:  # mqa
        heads, width, kernel = int(options["h"]), int(options["d"]), int(options["k"])
        norms.append(("norm", Norm("rmsnorm", in_channels)))
        convs.append(conv("attn.query.proj", heads * width, in_channels, 1))
        for branch in ("key", "value"):
            if options.get("v", 1) > 1:
                convs.append(conv(f"attn.{branch}.down_conv", in_channels, 1, kernel))
                norms.append((f"attn.{branch}.norm", Norm("rmsnorm", in_channels)))
            convs.append(conv(f"attn.{branch}.proj", width, in_channels, 1))
        convs.append(conv("attn.output.proj", out, heads * width, 1))
    if kind != "er":  # layer_scale_init_value = 1e-5
        convs.append(Parameter("vision", "layer_scale", "layer_scale.gamma", (out,)))
    layer = Layer(name, None, None, tuple(norms), stack="vision", parameters=tuple(convs), index_offset=index_offset)
    return layer, out


@tower(
    "gemma3n_vision",
    transformers="Gemma3nVisionConfig",
    other_names={"timm_architecture": "the config's architecture key (HFConfig.architecture names the family)"},
)
class Gemma3nVisionConfig(TowerConfig):
    """configuration_gemma3n.py (Gemma3nVisionConfig): a timm model (TimmWrapperModel, timm.create_model(architecture,
    num_classes=0, **model_args)), saved under timm_model. ffncalc counts timm's mobilenetv5_300m_enc (MobileNet-V5, as
    timm/models/mobilenetv5.py builds it): a stem convolution, the blocks of MOBILENETV5_300M_ENC, and the multi-scale
    fusion adapter (msfa: a pointwise FFN over the last two stages' channels side by side, in → 2 · in → 2048,
    and a norm). Another architecture, or model_args, is left uncounted. hidden_size and vocab_size shape the wrapper's
    embedder; the tower's FLOPs are not counted (a convolutional network)."""

    timm_architecture: Name = Field(validation_alias=AliasChoices("architecture", "timm_architecture"))
    model_args: dict[str, Any] | None
    hidden_size: Width
    vocab_size: Width

    def uncounted(self) -> str | None:
        if self.timm_architecture != "mobilenetv5_300m_enc":
            return f"timm's {self.timm_architecture!r} (ffncalc knows timm's mobilenetv5_300m_enc only)"
        if self.model_args:
            return "model_args change the timm model (ffncalc knows mobilenetv5_300m_enc as timm defines it)"
        return None

    def tower(self, prefix: str) -> Tower:
        root = prefix + "timm_model."
        layers: list[Layer] = []
        # the stem's output is a feature (the first block strides), then each stage's
        channels, features = MOBILENETV5_STEM, [MOBILENETV5_STEM]
        for stage, blocks in enumerate(MOBILENETV5_300M_ENC):
            offset = len(layers)
            for block in blocks:
                for _ in range(int(block_options(block)[1]["r"])):
                    layer, channels = mobilenet_block(f"{root}blocks.{stage}.{{i}}", block, channels, offset)
                    layers.append(layer)
            features.append(channels)
        fused, expanded = sum(features[-2:]), make_divisible(2 * sum(features[-2:]))
        stem, msfa = root + "conv_stem.", root + "msfa."
        extras = (
            tower_module(stem + "conv.weight", LearnedTensor((MOBILENETV5_STEM, 3, 3, 3), matmul=True)),
            tower_module(stem + "conv.bias", LearnedTensor((MOBILENETV5_STEM,))),
            tower_module(stem + "bn", Norm("rmsnorm", MOBILENETV5_STEM)),
            tower_module(msfa + "ffn.pw_exp.conv.weight", LearnedTensor((expanded, fused, 1, 1), matmul=True)),
            tower_module(msfa + "ffn.pw_exp.bn", Norm("rmsnorm", expanded)),
            tower_module(
                msfa + "ffn.pw_proj.conv.weight", LearnedTensor((MOBILENETV5_FEATURES, expanded, 1, 1), matmul=True)
            ),
            tower_module(msfa + "ffn.pw_proj.bn", Norm("rmsnorm", MOBILENETV5_FEATURES)),
            tower_module(msfa + "norm", Norm("rmsnorm", MOBILENETV5_FEATURES)),
        )
        return Tower(tuple(layers), extras, self.hidden_size, None)
