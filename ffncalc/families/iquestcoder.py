"""IQuestCoder: a Llama (transformers builds LlamaForCausalLM) with IQuestCoderConfig's defaults."""

from __future__ import annotations

from typing import Any

from pydantic import model_validator

from ..schema import HeadCount, LayerCount, PositionCount, Width
from .base import AttentionBias, DecoderConfig, FfnWidth, HiddenAct, HiddenLayers, MlpBias, TiedEmbeddings
from .registry import family


@family("iquestcoder")
class IQuestCoderConfig(HiddenAct, AttentionBias, MlpBias, TiedEmbeddings, FfnWidth, HiddenLayers, DecoderConfig):
    """configuration_iquestcoder.py: LlamaConfig's fields with IQuestCoder's defaults (head_dim 128, GQA of 8);
    the model is Llama's. transformers refuses clip_qkv and use_sliding_window, which the remote code read and
    no released checkpoint enables."""

    architecture = "IQuestCoder"
    config_class = "IQuestCoderConfig"
    default_model_class = "LlamaForCausalLM"

    vocab_size: Width = 76800
    hidden_size: Width = 5120
    intermediate_size: Width = 27648
    num_hidden_layers: LayerCount = 80
    num_attention_heads: HeadCount = 40
    num_key_value_heads: HeadCount | None = 8
    head_dim: Width | None = 128
    max_position_embeddings: PositionCount = 131072

    @model_validator(mode="before")
    @classmethod
    def _refuse_remote_options(cls, raw: Any) -> Any:
        if isinstance(raw, dict):
            if raw.get("clip_qkv") is not None:
                raise ValueError("clip_qkv: transformers' IQuestCoder does not support it (set it to null)")
            if raw.get("use_sliding_window"):
                raise ValueError("use_sliding_window: transformers' IQuestCoder does not support it (set it to false)")
        return raw
