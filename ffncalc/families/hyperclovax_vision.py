"""HyperCLOVA X SEED Vision v2 (NAVER; transformers 5.24, modeling_hyperclovax_vision_v2.py): Qwen2.5-VL's vision
tower and merger, a biased linear projector, and a HyperCLOVA X language model."""

from __future__ import annotations

from typing import Any, ClassVar

from ..spec import Extra, Linear
from .multimodal import MultimodalConfig
from .registry import family
from .towers import Tower, projector_module


@family(
    "hyperclovax_vision_v2",
    transformers="HyperCLOVAXVisionV2Config",
    architecture="HyperCLOVA X SEED Vision",
    model_class="HyperCLOVAXVisionV2ForConditionalGeneration",
)
class HyperCLOVAXVisionV2Config(MultimodalConfig):
    """configuration_hyperclovax_vision_v2.py (HyperCLOVAXVisionV2Config) / HyperCLOVAXVisionV2ForConditionalGeneration:
    the tower AutoModel builds from vision_config (Qwen2.5-VL's by default; a block named qwen2_5_vl is read as its
    tower) under model.vision_model., projector (the tower's out_hidden_size → the language model's width, biased),
    the language model AutoModel builds from text_config (HyperCLOVA X by default) under model.language_model., and
    lm_head, tied to the token table by tie_word_embeddings (default true). Named as the released checkpoints store
    them: the projector as model.vision_projector and the head as model.language_model.lm_head (transformers renames
    them model.projector and lm_head on load)."""

    text_model_type = "hyperclovax"
    text_defaults: ClassVar[dict[str, Any]] = {"model_type": "hyperclovax"}
    vision_model_type = "qwen2_5_vl_vision"
    vision_defaults: ClassVar[dict[str, Any]] = {"model_type": "qwen2_5_vl_vision"}
    language_model_prefix = "model.language_model."
    vision_prefix = "model.vision_model."
    # The released checkpoints' names, which transformers renames on load (conversion_mapping.py, "hyperclovax_vision_v2")
    lm_head_name = "model.language_model.lm_head"
    informational_fields = frozenset({"image_token_id", "video_token_id"})

    def projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        return (projector_module("model.vision_projector", Linear(tower.hidden_size, text_hidden, True)),)
