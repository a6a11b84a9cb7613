"""PaddleOCR-VL (Baidu): an ERNIE-4.5 language model (its own model_type, paddleocr_vl_text) around a SigLIP tower
whose position table is resampled to each image, and a projector that merges 2 × 2 patches."""

from __future__ import annotations

from typing import Any

from pydantic import model_validator

from ..schema import METADATA_FIELDS, Width
from ..spec import Extra, ImageInput, Linear, ModelSpec, Norm
from ..values import replace
from .ernie import Ernie45Config
from .multimodal import MultimodalConfig, relocate
from .qwen import TextOfWrapper
from .registry import family, tower
from .towers import Tower, projector_module, tower_module
from .vision import SiglipFields


@family(
    "paddleocr_vl_text",
    transformers="PaddleOCRTextConfig",
    architecture="PaddleOCR-VL",
    model_class="PaddleOCRTextModel",
)
class PaddleOCRTextConfig(TextOfWrapper, Ernie45Config):
    """configuration_paddleocr_vl.py (PaddleOCRTextConfig) / modeling_paddleocr_vl.py (PaddleOCRTextModel): ERNIE-4.5's
    layer, fields and defaults (use_bias on q, k, v, o and the MLP; head_dim 128, hidden_size // heads when null); no
    head of its own."""


@tower("paddleocr_vl_vision", transformers="PaddleOCRVisionConfig")
class PaddleOCRVisionConfig(SiglipFields):
    """configuration_paddleocr_vl.py (PaddleOCRVisionConfig) / modeling_paddleocr_vl.py (PaddleOCRVisionModel):
    SigLIP's tower without its head, kept one level down (vision_model.): a biased patch convolution, a learned
    position per patch of an image_size square (bilinearly resampled to each image's grid: looked up, no matmul),
    LayerNorm layers with biases and a plain FFN (2-D rotary positions, no weights), post_layernorm. Its image
    processor resizes an image to sides that are multiples of patch_size · spatial_merge_size (smart_resize, which
    first scales a side shorter than that up; min_pixels and max_pixels are not in config.json)."""

    spatial_merge_size: Width

    def tower(self, prefix: str) -> Tower:
        merge = self.spatial_merge_size
        image = ImageInput(self.patch_size, "multiple", self.patch_size * merge, merge=merge)
        return self.siglip_tower(prefix + "vision_model.", image)


@family(
    "paddleocr_vl",
    transformers="PaddleOCRVLConfig",
    architecture="PaddleOCR-VL",
    model_class="PaddleOCRVLForConditionalGeneration",
)
class PaddleOCRVLConfig(MultimodalConfig):
    """configuration_paddleocr_vl.py / modeling_paddleocr_vl.py (PaddleOCRVLForConditionalGeneration): the tower, the
    projector (PaddleOCRProjector: pre_norm, a LayerNorm with bias over each patch, then linear_1 over
    spatial_merge_size² patches side by side, merged → merged, and linear_2 into the text width, both biased) and the
    language model, saved as the original checkpoints name them (conversion_mapping.py's "paddleocr_vl", reverted):
    visual., mlp_AR., model. and lm_head. Without text_config the language model's keys are the config's own
    (PaddleOCRVLConfig.__post_init__, as the Hub's flat configs are written). tie_word_embeddings (default true) ties,
    and so does text_config's when true."""

    text_model_type = "paddleocr_vl_text"
    vision_model_type = "paddleocr_vl_vision"
    vision_defaults = {"model_type": "paddleocr_vl_vision"}
    language_model_prefix = "model."
    lm_head_name = "lm_head"
    vision_prefix = "visual."

    @model_validator(mode="before")
    @classmethod
    def _flat_text_config(cls, raw: Any) -> Any:
        """Without text_config, the language model's keys are the config's own, the wrapper's fields left to it."""
        if isinstance(raw, dict) and raw.get("text_config") is None:
            keys = set(PaddleOCRTextConfig.model_fields) - METADATA_FIELDS - {"model_type", "tie_word_embeddings"}
            return {**raw, "text_config": {key: value for key, value in raw.items() if key in keys}}
        return raw

    def tied(self) -> bool:
        """PaddleOCRVLConfig.__post_init__: the wrapper ties when it says so or when text_config does."""
        return self.tie_word_embeddings or getattr(self.text, "tie_word_embeddings", False) is True

    def wrapped_spec(self) -> ModelSpec:
        spec = getattr(self.text, "language_model_spec", self.text.to_spec)()
        spec = replace(spec, model_type=self.model_type, tie_word_embeddings=self.tied())
        return self.whole(relocate(spec, self.language_model_prefix, self.lm_head_name))

    def projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        merge = self.vision.spatial_merge_size if isinstance(self.vision, PaddleOCRVisionConfig) else 1
        merged = tower.hidden_size * merge**2
        return (
            tower_module("mlp_AR.pre_norm", Norm("layernorm", tower.hidden_size, bias=True), "projector"),
            projector_module("mlp_AR.linear_1", Linear(merged, merged, True)),
            projector_module("mlp_AR.linear_2", Linear(merged, text_hidden, True)),
        )
