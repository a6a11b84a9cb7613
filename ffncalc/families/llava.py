"""LLaVA (a CLIP tower, a two-layer projector, any language model transformers' AutoModel builds), LLaVA-NeXT
(the same, with a learned image_newline that ends each row of an image's features) and its descendants:
LLaVA-NeXT-Video (an optional convolutional pooler for video frames), Video-LLaVA (a second tower for videos),
LLaVA-OneVision (SigLIP and Qwen2 by default)
and ViP-LLaVA (a LayerNorm over several feature layers before the projector)."""

from __future__ import annotations

from typing import Any, Literal

from ..schema import Flag, Width, derives
from ..spec import Extra, ImageInput, LearnedTensor, Linear, ModelSpec, Norm, PatchEmbedding
from ..values import replace
from .multimodal import MultimodalConfig, relocate, with_tower
from .registry import family
from .towers import Tower, projector_module, tower_module, video_tower

# LlavaConfig.sub_configs_defaults: the CLIP ViT-L/14 at 336 px of llava-1.5 (the keys its tower reads).
CLIP_VIT_L_336 = {
    "model_type": "clip_vision_model",
    "intermediate_size": 4096,
    "hidden_size": 1024,
    "patch_size": 14,
    "image_size": 336,
    "num_hidden_layers": 24,
    "num_attention_heads": 16,
}


@family("llava", transformers="LlavaConfig", architecture="LLaVA", model_class="LlavaForConditionalGeneration")
class LlavaConfig(MultimodalConfig):
    """configuration_llava.py / modeling_llava.py: a vision tower (CLIP by default; AutoModel builds whatever
    vision_config names), LlavaMultiModalProjector and a language model (Llama by default) built by AutoModel;
    tie_word_embeddings (default false) turns true when text_config's is."""

    text_model_type = "llama"
    text_defaults = {"model_type": "llama"}
    vision_model_type = "clip_vision_model"
    vision_defaults = CLIP_VIT_L_336
    informational_fields = frozenset({"projector_hidden_act", "image_seq_length"})

    vision_feature_select_strategy: Literal["default", "full"]
    vision_feature_layer: int | list[int]
    multimodal_projector_bias: Flag

    def tied(self) -> bool:
        """LlavaConfig.__post_init__: the wrapper ties when it says so or when its language model does."""
        return self.tie_word_embeddings or getattr(self.text, "tie_word_embeddings", False) is True

    def wrapped_spec(self) -> ModelSpec:
        spec = replace(self.text.to_spec(), model_type=self.model_type, tie_word_embeddings=self.tied())
        return self.whole(relocate(spec, self.language_model_prefix, self.lm_head_name, self.language_model_renames))

    def image_input(self, tower: Tower) -> ImageInput | None:
        """The tower's patches and class token; the "default" strategy drops the first feature (the class token of
        CLIP), "full" keeps every one: the projector runs over what is kept."""
        image = tower.image
        if image is None or image.resize != "fixed":
            return image
        features = (image.size // image.patch_size) ** 2 + image.extra_tokens
        kept = features - 1 if self.vision_feature_select_strategy == "default" else features
        return replace(image, pooled_tokens=kept)

    def projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        """LlavaMultiModalProjector: linear_1 (vision hidden × the feature layers read → text hidden) and linear_2
        (text → text), with biases when multimodal_projector_bias."""
        layers_read = 1 if isinstance(self.vision_feature_layer, int) else len(self.vision_feature_layer)
        bias = self.multimodal_projector_bias
        return (
            projector_module(
                "multi_modal_projector.linear_1", Linear(tower.hidden_size * layers_read, text_hidden, bias)
            ),
            projector_module("multi_modal_projector.linear_2", Linear(text_hidden, text_hidden, bias)),
        )


@family(
    "llava_next",
    transformers="LlavaNextConfig",
    architecture="LLaVA-NeXT",
    model_class="LlavaNextForConditionalGeneration",
)
class LlavaNextConfig(LlavaConfig):
    """configuration_llava_next.py / modeling_llava_next.py: LLaVA's wrapper and projector with image_newline (a
    learned vector of the text width, appended after each row of features). An image is read as tiles of the
    tower's image_size ("anyres": a base view and the tiles of the best of image_grid_pinpoints); ffncalc counts
    the FLOPs of one tile."""

    informational_fields = frozenset({"projector_hidden_act", "image_seq_length", "image_grid_pinpoints"})

    image_grid_pinpoints: list[Any] | None

    def image_input(self, tower: Tower) -> ImageInput | None:
        image = super().image_input(tower)
        return None if image is None else replace(image, resize="tiles") if image.resize == "fixed" else image

    def projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        # transformers files it under no module (its meta_count "other"); it is added to the features, not multiplied
        newline = tower_module("image_newline", LearnedTensor((text_hidden,)), "other", "per_image_token")
        return super().projector(tower, text_hidden) + (newline,)


@family(
    "llava_next_video",
    transformers="LlavaNextVideoConfig",
    architecture="LLaVA-NeXT-Video",
    model_class="LlavaNextVideoForConditionalGeneration",
    read_beyond={"spatial_pool_out_channels": "read with getattr by LlavaNextVideoPooler (default: the vision width)"},
)
class LlavaNextVideoConfig(LlavaNextConfig):
    """configuration_llava_next_video.py / modeling_llava_next_video.py: LLaVA-NeXT's model, defaults and layout
    (conversion_mapping.py: "llava_next_video" → "llava_next"), and vision_resampler (LlavaNextVideoPooler), which
    pools a video frame's features spatial_pool_stride² into one: average or max pooling hold no weights; "conv" is
    a convolution with a bias, vision hidden → spatial_pool_out_channels (a key read with getattr; default: the
    vision hidden), that runs for videos only."""

    informational_fields = frozenset(
        {"projector_hidden_act", "image_seq_length", "video_seq_length", "image_grid_pinpoints"}
    )

    spatial_pool_mode: Literal["average", "max", "conv"]
    spatial_pool_stride: Width
    spatial_pool_out_channels: Width | None = None

    @derives("spatial_pool_out_channels", "vision_config.hidden_size")
    def pool_channels(self) -> int | None:
        """The conv pool's output width: spatial_pool_out_channels, else the vision tower's width (None without one)."""
        vision = self.vision
        return self.spatial_pool_out_channels or (vision.tower("").hidden_size if vision is not None else None)

    def projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        modules = super().projector(tower, text_hidden)
        if self.spatial_pool_mode != "conv":
            return modules
        stride, out = self.spatial_pool_stride, self.pool_channels() or tower.hidden_size  # TOWER is the vision's
        # transformers files it under no module (meta_count's "other") and saves it as it builds it, under model.
        # (conversion_mapping.py's "llava_next" renames no vision_resampler); an image never runs it
        pool = PatchEmbedding(tower.hidden_size, (stride, stride), out, True)
        return modules + (Extra("other", "model.vision_resampler.pool", pool, runs="not_generating"),)


# VideoLlavaConfig.sub_configs_defaults: the CLIP ViT-L/14 at 224 px (the keys its tower reads).
CLIP_VIT_L_224 = {**CLIP_VIT_L_336, "image_size": 224}


@family(
    "video_llava",
    transformers="VideoLlavaConfig",
    architecture="Video-LLaVA",
    model_class="VideoLlavaForConditionalGeneration",
)
class VideoLlavaConfig(LlavaConfig):
    """configuration_video_llava.py / modeling_video_llava.py: two towers built alike from vision_config (CLIP at
    224 px by default), image_tower for images and video_tower for videos, LLaVA's projector and a language model
    (Llama by default), saved as transformers 4 laid them out (conversion_mapping.py's "video_llava": image_tower.,
    video_tower., multi_modal_projector., language_model.model., language_model.lm_head). An image runs the image
    tower only; the video tower counts with the vision tower's parameters. Only the wrapper's tie_word_embeddings
    (default false) decides tying: VideoLlavaConfig has no __post_init__ that reads text_config's."""

    vision_defaults = CLIP_VIT_L_224
    vision_prefix = "image_tower."
    informational_fields = frozenset({"projector_hidden_act", "image_seq_length", "video_seq_length"})

    def tied(self) -> bool:
        return self.tie_word_embeddings

    def whole(self, spec: ModelSpec) -> ModelSpec:
        """LLaVA's model with the image tower, then the video tower: the same tower again, run for videos only."""
        spec = super().whole(spec)
        if self.vision is None:  # pragma: no cover - CLIP is always counted
            return spec
        return with_tower(spec, video_tower(self.vision.tower("video_tower.")), (), image=spec.image)


# LlavaOnevisionConfig.sub_configs_defaults: the SigLIP so400m tower at 384 px without its pooling head.
SIGLIP_SO400M_384 = {
    "model_type": "siglip_vision_model",
    "hidden_size": 1152,
    "intermediate_size": 4304,
    "patch_size": 14,
    "image_size": 384,
    "num_hidden_layers": 26,
    "num_attention_heads": 16,
    "vision_use_head": False,
}


@family(
    "llava_onevision",
    transformers="LlavaOnevisionConfig",
    architecture="LLaVA-OneVision",
    model_class="LlavaOnevisionForConditionalGeneration",
)
class LlavaOnevisionConfig(LlavaNextConfig):
    """configuration_llava_onevision.py / modeling_llava_onevision.py: LLaVA-NeXT's model and layout
    (conversion_mapping.py: "llava_onevision" → "llava_next") with a SigLIP tower and a Qwen2 language model by
    default, every feature kept ("full") from the last layer (-1). An image is read as tiles of the tower's
    image_size ("anyres_max_9"); ffncalc counts the FLOPs of one tile."""

    text_model_type = "qwen2"
    text_defaults = {"model_type": "qwen2"}
    vision_model_type = "siglip_vision_model"
    vision_defaults = SIGLIP_SO400M_384
    informational_fields = frozenset(
        {"projector_hidden_act", "image_seq_length", "image_grid_pinpoints", "vision_aspect_ratio"}
    )


@family(
    "vipllava", transformers="VipLlavaConfig", architecture="ViP-LLaVA", model_class="VipLlavaForConditionalGeneration"
)
class VipLlavaConfig(MultimodalConfig):
    """configuration_vipllava.py / modeling_vipllava.py: LLaVA's tower and layout (conversion_mapping.py: "vipllava" →
    "llava") whose projector reads several layers' features side by side (vision_feature_layer, also
    vision_feature_layers), each without the class token, through a LayerNorm (projector_layernorm, with a bias),
    linear_1 (vision hidden × layers → text hidden) and linear_2 (text → text), both biased. Only the wrapper's
    tie_word_embeddings (default false) decides tying."""

    text_model_type = "llama"
    text_defaults = {"model_type": "llama"}
    vision_model_type = "clip_vision_model"
    vision_defaults = CLIP_VIT_L_336
    informational_fields = frozenset({"projector_hidden_act", "image_seq_length"})

    vision_feature_layer: int | list[int]

    def image_input(self, tower: Tower) -> ImageInput | None:
        """Every layer's features without the first (CLIP's class token), as "default" selects."""
        image = tower.image
        if image is None or image.resize != "fixed":
            return image
        return replace(image, pooled_tokens=(image.size // image.patch_size) ** 2 + image.extra_tokens - 1)

    def projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        layers_read = 1 if isinstance(self.vision_feature_layer, int) else len(self.vision_feature_layer)
        width = tower.hidden_size * layers_read
        return tuple(
            projector_module("multi_modal_projector." + name, module)
            for name, module in (
                ("projector_layernorm", Norm("layernorm", width, bias=True)),
                ("linear_1", Linear(width, text_hidden, True)),
                ("linear_2", Linear(text_hidden, text_hidden, True)),
            )
        )
