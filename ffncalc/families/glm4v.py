"""GLM-V (Zhipu AI / Z.ai): GLM-4.1V, GLM-4.5V and GLM-4.6V, a GLM-4.1V vision encoder around a GLM-4 language model
(GLM-4.1V) or a GLM-4.5 one (GLM-4.5V), in Qwen3-VL's layout (model.language_model., model.visual., lm_head)."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from ..schema import PositionCount
from .glm import Glm4Config
from .qwen import Qwen3VLConfig, _TextOfWrapper


class Glm4vTextConfig(_TextOfWrapper, Glm4Config):
    """configuration_glm4v.py (Glm4vTextConfig) / modeling_glm4v.py (Glm4vTextModel): GLM-4's layers (q, k and v with
    biases always, o without; gate_up_proj; four RMSNorms a layer); head_dim is hidden_size // num_attention_heads
    (floored: Glm4vTextAttention never refuses); no head of its own."""

    architecture = "GLM-4.1V"
    config_class = "Glm4vTextConfig"
    default_model_class = "Glm4vTextModel"
    heads_divide_hidden = False
    derived_defaults = {"num_key_value_heads": "num_attention_heads"}

    max_position_embeddings: PositionCount = 32768
    pad_token_id: int | None = Field(None, strict=True)
    head_dim: ClassVar[None] = None
    attention_bias: ClassVar[bool] = True
    tie_word_embeddings: ClassVar[bool] = False  # not a field: the wrapper's flag decides


class Glm4vConfig(Qwen3VLConfig):
    """configuration_glm4v.py (Glm4vConfig): the top-level tie_word_embeddings (default false) decides tying, or
    text_config's when true (Glm4vConfig.__post_init__, for checkpoints saved before transformers 5)."""

    architecture = "GLM-4.1V"
    config_class = "Glm4vConfig"
    default_model_class = "Glm4vForConditionalGeneration"
    text_model_type = "glm4v_text"
    vision_model_type = "glm4v_vision"

    def tied(self) -> bool:
        return self.tie_word_embeddings or (self.text_config or {}).get("tie_word_embeddings") is True
