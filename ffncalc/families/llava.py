"""LLaVA (a CLIP tower, a two-layer projector, any language model transformers' AutoModel builds) and LLaVA-NeXT
(the same, with a learned image_newline that ends each row of an image's features)."""

from __future__ import annotations

from typing import Any, Literal

from ..schema import Flag
from ..spec import Extra, ImageInput, LearnedTensor, Linear, ModelSpec
from ..values import replace
from .multimodal import MultimodalConfig, relocate
from .registry import family
from .towers import Tower, projector_module, tower_module

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


@family("llava")
class LlavaConfig(MultimodalConfig):
    """configuration_llava.py / modeling_llava.py: a vision tower (CLIP by default; AutoModel builds whatever
    vision_config names), LlavaMultiModalProjector and a language model (Llama by default) built by AutoModel;
    tie_word_embeddings (default false) turns true when text_config's is."""

    architecture = "LLaVA"
    config_class = "LlavaConfig"
    default_model_class = "LlavaForConditionalGeneration"
    text_model_type = "llama"
    text_defaults = {"model_type": "llama"}
    vision_model_type = "clip_vision_model"
    vision_defaults = CLIP_VIT_L_336
    informational_fields = frozenset({"projector_hidden_act", "image_seq_length"})

    tie_word_embeddings: Flag = False
    vision_feature_select_strategy: Literal["default", "full"] = "default"
    vision_feature_layer: int | list[int] = -2
    multimodal_projector_bias: Flag = True

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


@family("llava_next")
class LlavaNextConfig(LlavaConfig):
    """configuration_llava_next.py / modeling_llava_next.py: LLaVA's wrapper and projector with image_newline (a
    learned vector of the text width, appended after each row of features). An image is read as tiles of the
    tower's image_size ("anyres": a base view and the tiles of the best of image_grid_pinpoints); ffncalc counts
    the FLOPs of one tile."""

    architecture = "LLaVA-NeXT"
    config_class = "LlavaNextConfig"
    default_model_class = "LlavaNextForConditionalGeneration"
    informational_fields = frozenset({"projector_hidden_act", "image_seq_length", "image_grid_pinpoints"})

    image_grid_pinpoints: list[Any] | None = None

    def image_input(self, tower: Tower) -> ImageInput | None:
        image = super().image_input(tower)
        return None if image is None else replace(image, resize="tiles") if image.resize == "fixed" else image

    def projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        # transformers files it under no module (its meta_count "other"); it is added to the features, not multiplied
        newline = tower_module("image_newline", LearnedTensor((text_hidden,)), "other", "per_image_token")
        return super().projector(tower, text_hidden) + (newline,)
