"""IQuestCoder: a Llama (transformers builds LlamaForCausalLM) with IQuestCoderConfig's defaults."""

from __future__ import annotations

from typing import Any

from pydantic import model_validator

from ..schema import Flag, HeadCount, LayerCount, Name, PositionCount, Width
from .base import DecoderConfig
from .registry import family


@family("iquestcoder", transformers="IQuestCoderConfig", architecture="IQuestCoder", model_class="LlamaForCausalLM")
class IQuestCoderConfig(DecoderConfig):
    """configuration_iquestcoder.py: LlamaConfig's fields with IQuestCoder's defaults (head_dim 128, GQA of 8);
    the model is Llama's. transformers refuses clip_qkv and use_sliding_window, which the remote code read and
    no released checkpoint enables."""

    num_hidden_layers: LayerCount
    intermediate_size: Width
    tie_word_embeddings: Flag
    mlp_bias: Flag
    attention_bias: Flag
    hidden_act: Name
    num_key_value_heads: HeadCount | None
    head_dim: Width | None
    max_position_embeddings: PositionCount

    @model_validator(mode="before")
    @classmethod
    def _refuse_remote_options(cls, raw: Any) -> Any:
        if isinstance(raw, dict):
            if raw.get("clip_qkv") is not None:
                raise ValueError("clip_qkv: transformers' IQuestCoder does not support it (set it to null)")
            if raw.get("use_sliding_window"):
                raise ValueError("use_sliding_window: transformers' IQuestCoder does not support it (set it to false)")
        return raw
