"""InternVL (the transformers port, "-hf" checkpoints): InternViT, a pixel-shuffle projector and a Qwen2 (by default)
language model, in LLaVA's layout."""

from __future__ import annotations

from pydantic import Field

from ..schema import Flag
from ..spec import Extra, ImageInput, Linear, Norm
from ..values import replace
from .multimodal import MultimodalConfig
from .registry import family
from .towers import Tower, projector_module


@family("internvl")
class InternVLConfig(MultimodalConfig):
    """configuration_internvl.py / modeling_internvl.py: InternVLVisionModel, InternVLMultiModalProjector (the tower's
    features pixel-shuffled by downsample_ratio: (1 / ratio)² patches side by side, a LayerNorm over them,
    linear_1 into the text width, linear_2, all biased) and a language model built by AutoModel; the top-level
    tie_word_embeddings (default true) decides tying."""

    architecture = "InternVL"
    config_class = "InternVLConfig"
    default_model_class = "InternVLForConditionalGeneration"
    text_model_type = "qwen2"
    text_defaults = {"model_type": "qwen2"}
    vision_model_type = "internvl_vision"
    informational_fields = frozenset({"projector_hidden_act", "image_seq_length"})

    tie_word_embeddings: Flag = True
    downsample_ratio: float = Field(0.5, gt=0, le=1, allow_inf_nan=False)

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
        return tuple(
            projector_module("multi_modal_projector." + name, module)
            for name, module in (
                ("layer_norm", Norm("layernorm", merged, bias=True)),
                ("linear_1", Linear(merged, text_hidden, True)),
                ("linear_2", Linear(text_hidden, text_hidden, True)),
            )
        )
