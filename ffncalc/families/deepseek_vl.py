"""DeepSeek-VL: a SigLIP tower (by default), a two-layer aligner and a Llama language model, laid out as transformers
builds them."""

from __future__ import annotations

from ..schema import Flag
from ..spec import Extra, Linear
from .multimodal import MultimodalConfig
from .registry import family
from .towers import Tower, projector_module


@family("deepseek_vl")
class DeepseekVLConfig(MultimodalConfig):
    """configuration_deepseek_vl.py / modeling_deepseek_vl.py: a vision tower built by AutoModel (SigLIP with
    SiglipVisionConfig's own defaults, its pooling head included), DeepseekVLAligner (linear1: vision hidden → text
    hidden, linear2: text → text, both biased, over every patch's feature) and a language model built by AutoModel
    (Llama by default), saved as transformers builds them (model.vision_model., model.aligner., model.language_model.,
    lm_head); the top-level tie_word_embeddings (default true) decides tying. DeepseekVLImageProcessor pads an image
    to a square and resizes it to the tower's image_size: the tower's fixed rule."""

    architecture = "DeepSeek-VL"
    config_class = "DeepseekVLConfig"
    default_model_class = "DeepseekVLForConditionalGeneration"
    text_model_type = "llama"
    text_defaults = {"model_type": "llama"}
    vision_model_type = "siglip_vision_model"
    vision_defaults = {"model_type": "siglip_vision_model"}
    language_model_prefix = "model.language_model."
    lm_head_name = "lm_head"
    vision_prefix = "model.vision_model."

    tie_word_embeddings: Flag = True

    def projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        return (
            projector_module("model.aligner.linear1", Linear(tower.hidden_size, text_hidden, True)),
            projector_module("model.aligner.linear2", Linear(text_hidden, text_hidden, True)),
        )
