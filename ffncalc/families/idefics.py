"""Idefics3 and SmolVLM: a SigLIP-shaped tower over tiles of an image, a connector that pixel-shuffles
scale_factor² patches into one token and projects them, and any language model transformers' AutoModel builds,
all under ``model.`` (``model.vision_model.``, ``model.connector.``, ``model.text_model.``)."""

from __future__ import annotations

from ..schema import Flag, Width
from ..spec import Extra, ImageInput, Linear
from ..values import replace
from .multimodal import MultimodalConfig
from .registry import family
from .towers import Tower, projector_module


@family("idefics3")
class Idefics3Config(MultimodalConfig):
    """configuration_idefics3.py / modeling_idefics3.py: Idefics3VisionTransformer, Idefics3Connector (pixel
    shuffle by scale_factor, then modality_projection.proj: vision hidden · scale_factor² → text hidden, no bias)
    and a Llama (by default) language model; the top-level tie_word_embeddings (default false) decides tying."""

    architecture = "Idefics3"
    config_class = "Idefics3Config"
    default_model_class = "Idefics3ForConditionalGeneration"
    text_model_type = "llama"
    text_defaults = {"model_type": "llama"}
    vision_model_type = "idefics3_vision"
    language_model_prefix = "model.text_model."
    lm_head_name = "lm_head"
    vision_prefix = "model.vision_model."

    tie_word_embeddings: Flag = False
    scale_factor: Width = 2

    def image_input(self, tower: Tower) -> ImageInput | None:
        """The processor's tiles of image_size square (ffncalc counts one), each tile's patches merged scale_factor ×
        scale_factor into one token by the pixel shuffle."""
        return None if tower.image is None else replace(tower.image, merge=self.scale_factor)

    def projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        merged = tower.hidden_size * self.scale_factor**2
        return (projector_module("model.connector.modality_projection.proj", Linear(merged, text_hidden)),)


@family("smolvlm")
class SmolVLMConfig(Idefics3Config):
    """configuration_smolvlm.py / modeling_smolvlm.py: Idefics3's layout and defaults under SmolVLM's names."""

    architecture = "SmolVLM"
    config_class = "SmolVLMConfig"
    default_model_class = "SmolVLMForConditionalGeneration"
    vision_model_type = "smolvlm_vision"
