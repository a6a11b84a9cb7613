"""Florence-2 (Microsoft; transformers 5.24, modeling_florence2.py): a DaViT vision backbone (convolutional stages of
spatial-window and channel attention blocks) and a projector in front of a BART encoder-decoder."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from pydantic import Field, model_validator

from ..schema import Flag, Name, Width
from ..spec import CheckpointExtra, Extra, Linear, ModelSpec, Norm, PatchEmbedding, StoredTensor, Table
from ..values import replace
from .multimodal import MultimodalConfig
from .registry import family, tower
from .towers import Module, Tower, TowerConfig, projector_module, tower_module

Stages = list[Width]


@tower("florence_vision", transformers="Florence2VisionConfig")
class Florence2VisionConfig(TowerConfig):
    """configuration_florence2.py (Florence2VisionConfig) / Florence2VisionBackbone: per stage a convolutional
    embedding (convs.{s}: conv of patch_size, biased, into embed_dim[s]; a LayerNorm over its input channels with
    patch_prenorm, else over its output) and depths[s] blocks, each a spatial block (a depthwise 3 × 3 conv1, norm1,
    window attention: qkv fused, biased with qkv_bias, and proj, biased; a depthwise conv2, norm2, an FFN fc1, fc2 of
    int(embed_dim · mlp_ratio), biased) and a channel block (the same, with channel attention). Its stages run at
    falling resolutions: an image's FLOPs are not counted (no image rule)."""

    in_channels: Width
    depths: Annotated[Stages, Field(min_length=1, max_length=16)]
    patch_size: Annotated[Stages, Field(min_length=1, max_length=16)]
    patch_stride: Annotated[Stages, Field(min_length=1, max_length=16)]
    patch_prenorm: Annotated[list[bool], Field(min_length=1, max_length=16)]
    embed_dim: Annotated[Stages, Field(min_length=1, max_length=16)]
    num_heads: Annotated[Stages, Field(min_length=1, max_length=16)]
    num_groups: Annotated[Stages, Field(min_length=1, max_length=16)]
    mlp_ratio: Annotated[float, Field(gt=0)]
    qkv_bias: Flag
    activation_function: Name
    projection_dim: Width
    max_temporal_embeddings: Width
    max_position_embeddings: Width

    @model_validator(mode="after")
    def _check_stages(self) -> Florence2VisionConfig:
        # Florence2VisionBackbone raises unless embed_dim, num_heads and num_groups are as long; the stages also read
        # depths, patch_size, patch_stride and patch_prenorm by index.
        stages = len(self.embed_dim)
        for field in ("num_heads", "num_groups", "depths", "patch_size", "patch_stride", "patch_prenorm"):
            if len(getattr(self, field)) < stages:
                raise ValueError(f"{field} has fewer entries than embed_dim ({stages} stages)")
        return self

    def block(self, name: str, dim: int, attention: str) -> list[tuple[str, Module]]:
        """A spatial or channel block of width DIM: conv1, norm1, the attention, conv2, norm2, the FFN."""
        inner = int(dim * self.mlp_ratio)
        depthwise = PatchEmbedding(1, (3, 3), dim, True)
        norm = Norm("layernorm", dim, bias=True)
        return [
            (name + "conv1", depthwise),
            (name + "norm1", norm),
            (name + attention + ".qkv", Linear(dim, 3 * dim, self.qkv_bias)),
            (name + attention + ".proj", Linear(dim, dim, True)),
            (name + "conv2", depthwise),
            (name + "norm2", norm),
            (name + "ffn.fc1", Linear(dim, inner, True)),
            (name + "ffn.fc2", Linear(inner, dim, True)),
        ]

    def tower(self, prefix: str) -> Tower:
        modules: list[tuple[str, Module]] = []
        channels = self.in_channels
        for stage, dim in enumerate(self.embed_dim):
            kernel = self.patch_size[stage]
            modules += [
                (f"convs.{stage}.conv", PatchEmbedding(channels, (kernel, kernel), dim, True)),
                (f"convs.{stage}.norm", Norm("layernorm", channels if self.patch_prenorm[stage] else dim, bias=True)),
            ]
            for index in range(self.depths[stage]):
                block = f"blocks.{stage}.{index}."
                modules += self.block(block + "spatial_block.", dim, "window_attn")
                modules += self.block(block + "channel_block.", dim, "channel_attn")
            channels = dim
        extras = tuple(tower_module(prefix + name, module) for name, module in modules)
        return Tower((), extras, self.embed_dim[-1], None)


@family(
    "florence2",
    transformers="Florence2Config",
    architecture="Florence-2",
    model_class="Florence2ForConditionalGeneration",
)
class Florence2Config(MultimodalConfig):
    """configuration_florence2.py / Florence2ForConditionalGeneration: the backbone under model.vision_tower., the
    projector (model.multi_modal_projector.: image_projection, last embed_dim → projection_dim without bias,
    image_proj_norm, a LayerNorm; row and column position tables of max_position_embeddings rows, half the last
    embed_dim each; a cosine table of max_temporal_embeddings rows saved as a buffer), and a BART encoder-decoder
    (AutoModel of text_config: BartModel, no final_logits_bias) under model.language_model.; lm_head tied to its
    shared table when tie_word_embeddings (default true) says so."""

    text_model_type = "bart"
    text_defaults: ClassVar[dict[str, Any]] = {"model_type": "bart"}
    vision_model_type = "florence_vision"
    language_model_prefix = "model.language_model."
    vision_prefix = "model.vision_tower."
    lm_head_name = "lm_head"

    def projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        vision = self.vision
        assert isinstance(vision, Florence2VisionConfig)
        last, rows = vision.embed_dim[-1], vision.max_position_embeddings
        base = "model.multi_modal_projector."
        return (
            projector_module(base + "image_projection", Linear(last, vision.projection_dim)),
            projector_module(base + "image_proj_norm", Norm("layernorm", vision.projection_dim, bias=True)),
            projector_module(base + "image_position_embed.row_embeddings", Table(rows, last // 2)),
            projector_module(base + "image_position_embed.column_embeddings", Table(rows, last - last // 2)),
        )

    def wrapped_spec(self) -> ModelSpec:
        """BART's seq2seq layout relocated, without final_logits_bias (AutoModel builds BartModel), with the cosine
        table the projector saves."""
        spec = super().wrapped_spec()
        vision = self.vision
        assert isinstance(vision, Florence2VisionConfig)
        kept = tuple(
            extra
            for extra in spec.checkpoint_extras
            if not any(tensor.name.endswith("final_logits_bias") for tensor in extra.tensors)
        )
        table = StoredTensor(
            "model.multi_modal_projector.visual_temporal_embed.pos_idx_to_embed",
            (vision.max_temporal_embeddings, vision.embed_dim[-1]),
        )
        cosine = CheckpointExtra("temporal cosine table", "a fixed sinusoid saved as a buffer", (table,), buffer=True)
        return replace(spec, checkpoint_extras=kept + (cosine,))

    def notes(self) -> list[str]:
        return super().notes() + [
            "an image's FLOPs (`image`) are not counted: the DaViT backbone's stages run at falling resolutions, "
            "which ffncalc's image rule cannot state"
        ]
