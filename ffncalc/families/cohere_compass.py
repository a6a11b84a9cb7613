"""Cohere Compass (transformers 5.24, modeling_cohere_compass.py): Qwen3-VL's vision tower and mergers around a
Cohere Compass language model (Cohere2's parallel layers, rotary positions per layer kind)."""

from __future__ import annotations

from .qwen import Qwen3VLConfig
from .registry import family, tower
from .vision import Qwen3VLVisionConfig


@tower("cohere_compass_vision", transformers="CohereCompassVisionConfig")
class CohereCompassVisionConfig(Qwen3VLVisionConfig):
    """configuration_cohere_compass.py (CohereCompassVisionConfig) / CohereCompassVisionModel: Qwen3-VL's tower, its
    merger and deepstack_merger_list, with Qwen3-VL's defaults."""


@family(
    "cohere_compass",
    transformers="CohereCompassConfig",
    architecture="Cohere Compass",
    model_class="CohereCompassForConditionalGeneration",
)
class CohereCompassConfig(Qwen3VLConfig):
    """configuration_cohere_compass.py (CohereCompassConfig) / CohereCompassForConditionalGeneration: the tower
    (model.visual.), the language model AutoModel builds from text_config (CohereCompassTextModel, under
    model.language_model.) and lm_head, tied to the token table by the wrapper's tie_word_embeddings (default
    false). Its default text_config gives no rope_parameters per layer kind, so transformers cannot build the default
    model; neither does ffncalc count it."""

    text_model_type = "cohere_compass_text"
    vision_model_type = "cohere_compass_vision"
    informational_fields = frozenset(
        {"image_token_id", "video_token_id", "vision_start_token_id", "vision_end_token_id"}
    )
