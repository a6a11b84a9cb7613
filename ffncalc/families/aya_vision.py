"""Aya Vision and Command A Vision (Cohere): a SigLIP tower, a pixel-shuffle projector with a SwiGLU, and a Cohere 2
language model (by default); Aya Vision in LLaVA's layout, Command A Vision as transformers builds it."""

from __future__ import annotations

from typing import Literal

from ..schema import Flag, Width, derives
from ..spec import Extra, ImageInput, Linear, Norm
from ..values import replace
from .multimodal import MultimodalConfig
from .registry import family
from .towers import Tower, projector_module


@family(
    "aya_vision",
    transformers="AyaVisionConfig",
    architecture="Aya Vision",
    model_class="AyaVisionForConditionalGeneration",
    read_beyond={"alignment_intermediate_size": "the projector reads it with getattr (default: the text width)"},
)
class AyaVisionConfig(MultimodalConfig):
    """configuration_aya_vision.py / modeling_aya_vision.py: a vision tower (SigLIP by default; AutoModel builds what
    vision_config names), AyaVisionMultiModalProjector (the features pixel-shuffled downsample_factor² side by side, a
    LayerNorm over them, linear_1 into alignment_intermediate_size (a key read with getattr; default: the text width),
    a SwiGLU halving it, linear_2 into the text width, both biased) and a language model built by AutoModel; saved as
    LLaVA saves (conversion_mapping.py: "aya_vision" → "llava"); the top-level tie_word_embeddings (default true)
    decides tying."""

    text_model_type = "cohere2"
    text_defaults = {"model_type": "cohere2"}
    vision_model_type = "siglip_vision_model"
    # AyaVisionConfig.sub_configs_defaults' init_kwargs (SigLIP's 1152 over 14 heads: transformers refuses to build it)
    vision_defaults = {
        "model_type": "siglip_vision_model",
        "hidden_size": 1152,
        "intermediate_size": 4304,
        "patch_size": 14,
        "image_size": 384,
        "num_hidden_layers": 26,
        "num_attention_heads": 14,
        "vision_use_head": False,
    }

    tie_word_embeddings: Flag
    vision_feature_select_strategy: Literal["default", "full"]
    vision_feature_layer: int | list[int]
    downsample_factor: Width
    alignment_intermediate_size: Width | None = None

    @derives("alignment_intermediate_size", "text_config.hidden_size")
    def alignment_width(self) -> int:
        """The projector's inner width: alignment_intermediate_size, else the language model's width."""
        return self.alignment_intermediate_size or self.text.to_spec().hidden_size

    def image_input(self, tower: Tower) -> ImageInput | None:
        """One tile of image_size square (GotOcr2ImageProcessor's crop_to_patches cuts an image into such tiles and
        a global view), its patches merged downsample_factor² into one token."""
        if tower.image is None:
            return None
        return replace(tower.image, resize="tiles", merge=self.downsample_factor)

    def projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        merged = tower.hidden_size * self.downsample_factor**2
        inner = self.alignment_width()
        return tuple(
            projector_module("multi_modal_projector." + name, module)
            for name, module in (
                ("layernorm", Norm("layernorm", merged, bias=True)),
                ("linear_1", Linear(merged, inner, True)),
                ("linear_2", Linear(inner // 2, text_hidden, True)),
            )
        )


@family(
    "cohere2_vision",
    transformers="Cohere2VisionConfig",
    architecture="Command A Vision",
    model_class="Cohere2VisionForConditionalGeneration",
)
class Cohere2VisionConfig(MultimodalConfig):
    """configuration_cohere2_vision.py / modeling_cohere2_vision.py (Command A Vision): a vision tower (SigLIP by
    default; AutoModel builds what vision_config names), Cohere2VisionMultiModalProjector (the features
    pixel-shuffled downsample_factor² side by side, linear_1 into alignment_intermediate_size, a SwiGLU halving it,
    linear_2 into the text width, both biased, no LayerNorm) and a Cohere 2 language model (by default), saved as
    transformers builds them (model.vision_tower., model.multi_modal_projector., model.language_model., lm_head);
    the top-level tie_word_embeddings (default true) decides tying."""

    text_model_type = "cohere2"
    text_defaults = {"model_type": "cohere2"}
    vision_model_type = "siglip_vision_model"
    # Cohere2VisionConfig.sub_configs_defaults' init_kwargs (vision_use_head left to SigLIP's default: the head is built)
    vision_defaults = {
        "model_type": "siglip_vision_model",
        "hidden_size": 1152,
        "intermediate_size": 3072,
        "image_size": 512,
        "num_hidden_layers": 27,
        "num_attention_heads": 12,
    }
    language_model_prefix = "model.language_model."
    lm_head_name = "lm_head"
    vision_prefix = "model.vision_tower."

    tie_word_embeddings: Flag
    downsample_factor: Width
    alignment_intermediate_size: Width

    def image_input(self, tower: Tower) -> ImageInput | None:
        """One tile of image_size square (Cohere2VisionImageProcessor's crop_to_patches cuts an image into such tiles
        and a thumbnail), its patches merged downsample_factor² into one token."""
        if tower.image is None:
            return None
        return replace(tower.image, resize="tiles", merge=self.downsample_factor)

    def projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        merged = tower.hidden_size * self.downsample_factor**2
        inner = self.alignment_intermediate_size
        return (
            projector_module("model.multi_modal_projector.linear_1", Linear(merged, inner, True)),
            projector_module("model.multi_modal_projector.linear_2", Linear(inner // 2, text_hidden, True)),
        )
