"""InternVL (the transformers port, "-hf" checkpoints): InternViT, a pixel-shuffle projector and a Qwen2 (by default)
language model, in LLaVA's layout; Qianfan-OCR, the same model saved in the original InternVL layout, around a Qwen3
language model by default."""

from __future__ import annotations

from typing import Annotated, ClassVar

from pydantic import Field

from ..spec import Extra, ImageInput, Linear, Norm
from ..values import replace
from .multimodal import MultimodalConfig
from .registry import family
from .towers import Module, Tower, projector_module


@family(
    "internvl", transformers="InternVLConfig", architecture="InternVL", model_class="InternVLForConditionalGeneration"
)
class InternVLConfig(MultimodalConfig):
    """configuration_internvl.py / modeling_internvl.py: InternVLVisionModel, InternVLMultiModalProjector (the tower's
    features pixel-shuffled by downsample_ratio: (1 / ratio)² patches side by side, a LayerNorm over them,
    linear_1 into the text width, linear_2, all biased) and a language model built by AutoModel; the top-level
    tie_word_embeddings (default true) decides tying."""

    text_model_type = "qwen2"
    text_defaults = {"model_type": "qwen2"}
    vision_model_type = "internvl_vision"
    informational_fields = frozenset({"projector_hidden_act", "image_seq_length"})
    #: Where the checkpoint keeps the projector's LayerNorm, linear_1 and linear_2.
    projector_names: ClassVar[tuple[str, str, str]] = (
        "multi_modal_projector.layer_norm",
        "multi_modal_projector.linear_1",
        "multi_modal_projector.linear_2",
    )

    downsample_ratio: Annotated[float, Field(gt=0, le=1, allow_inf_nan=False)]

    @property
    def merge(self) -> int:
        """int(1 / downsample_ratio): the patches along each side that the pixel shuffle merges into one token."""
        return int(1 / self.downsample_ratio)

    def image_input(self, tower: Tower) -> ImageInput | None:
        """One tile's patches (the class token dropped: vision_feature_select_strategy "default"), merged
        (1 / downsample_ratio)² into one token."""
        return None if tower.image is None else replace(tower.image, merge=self.merge)

    def projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        merged = tower.hidden_size * self.merge**2
        modules: tuple[Module, ...] = (
            Norm("layernorm", merged, bias=True),
            Linear(merged, text_hidden, True),
            Linear(text_hidden, text_hidden, True),
        )
        return tuple(projector_module(name, module) for name, module in zip(self.projector_names, modules, strict=True))


@family(
    "qianfan_ocr",
    transformers="QianfanOCRConfig",
    architecture="Qianfan-OCR",
    model_class="QianfanOCRForConditionalGeneration",
)
class QianfanOCRConfig(InternVLConfig):
    """configuration_qianfan_ocr.py / modeling_qianfan_ocr.py: InternVL's model around a Qwen3 language model (the
    default text_config) and QianfanOCRVisionModel, untied by default (tie_word_embeddings false), saved as
    conversion_mapping.py's "qianfan_ocr" renamings revert it: vision_model., mlp1.0 (the LayerNorm), mlp1.1 and mlp1.3
    (the linears), language_model.model. and language_model.lm_head."""

    text_model_type = "qwen3"
    text_defaults = {"model_type": "qwen3"}
    vision_model_type = "qianfan_ocr_vision"
    vision_prefix = "vision_model."
    projector_names = ("mlp1.0", "mlp1.1", "mlp1.3")
