"""Microsoft's Phi-4-multimodal: a Phi-3-style language model whose config carries a SigLIP image tower and a
Conformer speech encoder, each with its projections, under model.embed_tokens_extend."""

from __future__ import annotations

import math
from functools import cached_property
from typing import Any

from pydantic import Field, ValidationError, model_validator

from ..schema import (
    METADATA_FIELDS,
    Flag,
    HeadCount,
    HFConfig,
    LayerCount,
    Name,
    PositionCount,
    Width,
    describe_validation_error,
)
from ..spec import CheckpointExtra, Extra, LearnedTensor, Linear, Norm, PatchEmbedding, StoredTensor, Table
from .multimodal import MultimodalLayers
from .phi import Phi3Config
from .registry import family, tower
from .towers import Tower, TowerConfig, audio_module, projector_module
from .vision import SiglipFields

EXTENSION = "model.embed_tokens_extend."


class Phi4MultimodalTextConfig(Phi3Config):
    """The language model Phi4MultimodalConfig's own keys describe: Phi-3's layers (qkv_proj, gate_up_proj, RMSNorms),
    with Phi4MultimodalConfig's defaults (read by the wrapper, not a model_type of its own)."""

    architecture = "Phi-4-multimodal"
    config_class = "Phi4MultimodalConfig"
    default_model_class = "Phi4MultimodalForCausalLM"

    vocab_size: Width = 200064
    num_key_value_heads: HeadCount | None = 8
    max_position_embeddings: PositionCount = 131072
    pad_token_id: int | None = Field(199999, strict=True)


@tower("phi4_multimodal_vision", transformers="Phi4MultimodalVisionConfig")
class Phi4MultimodalVisionConfig(SiglipFields):
    """configuration_phi4_multimodal.py (Phi4MultimodalVisionConfig) / Phi4MultimodalVisionModel: SigLIP's tower at
    448 px in patches of 14, with its attention-pooling head (built, never fed to the language model: the features are
    feature_layer's hidden states, pooled 2 × 2). Its image processor cuts dynamic crops (crop_size, not all in
    config.json): no image rule."""

    informational_fields = frozenset({"crop_size", "image_token_id", "feature_layer"})

    crop_size: Width
    image_token_id: int
    feature_layer: int

    def tower(self, prefix: str) -> Tower:
        siglip = self.siglip_tower(prefix, None, head=True)
        return Tower(siglip.layers, siglip.extras, siglip.hidden_size, None)


@tower("phi4_multimodal_audio", transformers="Phi4MultimodalAudioConfig")
class Phi4MultimodalAudioConfig(TowerConfig):
    """configuration_phi4_multimodal.py (Phi4MultimodalAudioConfig) / Phi4MultimodalAudioModel: the input's mean and
    inverse deviation (saved buffers of input_size), NeMo's subsampling (a biased 3 × 3 convolution 1 → nemo_conv_channels,
    then per further halving of log2(time_reduction) a depthwise 3 × 3 and a 1 × 1 convolution, biased; out, a biased
    linear from the channels · the mel bins left), a relative-attention bias table (bias_max_distance buckets, twice
    that unless bias_symmetric, one value per head) and num_blocks Conformer blocks: feed_forward_in and
    feed_forward_out (a LayerNorm, a biased gate_up_proj → 2 · intermediate_size, a biased down_proj), attention (q, k,
    v, o biased), the convolution module (a LayerNorm; glu: a biased 1 × 1 convolution → 2 · ext_pw_out_channel and
    its two biases b1, b2; dw_sep_conv_1d: a depthwise convolution of kernel_size · depthwise_multiplier channels and a
    1 × 1 one → depthwise_separable_out_channel; ext_pw_conv_1d, 1 × 1 → ext_pw_out_channel; all biased),
    layer_norm_att and layer_norm. Counted by parameter: a clip's FLOPs are not counted."""

    informational_fields = frozenset({"audio_token_id", "feature_layer", "chunk_size", "left_chunk"})

    hidden_size: Width
    intermediate_size: Width
    num_blocks: LayerCount
    num_attention_heads: HeadCount
    ext_pw_out_channel: Width
    depthwise_separable_out_channel: Width
    depthwise_multiplier: Width
    kernel_size: Width
    input_size: Width
    time_reduction: Width
    bias_max_distance: Width
    bias_symmetric: Flag
    nemo_conv_channels: Width
    downsample_rate: Width
    activation: Name
    audio_token_id: int
    feature_layer: int
    chunk_size: int
    left_chunk: int

    @model_validator(mode="after")
    def _check_shapes(self) -> Phi4MultimodalAudioConfig:
        if self.time_reduction % 2:
            raise ValueError("time_reduction should be a multiple of 2 (Phi4MultimodalAudioConfig requires it)")
        if self.hidden_size % self.num_attention_heads:
            raise ValueError("hidden_size must be a multiple of num_attention_heads (the attention splits it)")
        return self

    @property
    def halvings(self) -> int:
        """NeMo's subsampling: int(log2(time_reduction)) stride-2 convolutions (math.log2, as transformers)."""
        return int(math.log2(self.time_reduction))

    def tower(self, prefix: str) -> Tower:
        hidden, channels, inner = self.hidden_size, self.nemo_conv_channels, self.intermediate_size
        bins = self.input_size
        for _ in range(self.halvings):  # Phi4MultimodalAudioConfig.__post_init__'s nemo_final_size
            bins = math.floor((bins - 1) / 2 + 1)
        modules: list[tuple[str, Linear | Norm | LearnedTensor | Table | PatchEmbedding]] = [
            ("embed.conv.0", PatchEmbedding(1, (3, 3), channels, True))
        ]
        for step in range(self.halvings - 1):  # the Sequential's indices skip each activation
            modules += [
                (f"embed.conv.{2 + 3 * step}", PatchEmbedding(1, (3, 3), channels, True)),
                (f"embed.conv.{3 + 3 * step}", PatchEmbedding(channels, (1, 1), channels, True)),
            ]
        buckets = self.bias_max_distance * (1 if self.bias_symmetric else 2)
        modules += [
            ("embed.out", Linear(channels * bins, hidden, True)),
            ("relative_attention_bias_layer.bias_values", Table(buckets, self.num_attention_heads)),
        ]
        ext, depthwise, separable = (
            self.ext_pw_out_channel,
            hidden * self.depthwise_multiplier,
            self.depthwise_separable_out_channel,
        )
        layer_norm = Norm("layernorm", hidden, bias=True)
        for block in range(self.num_blocks):
            name = f"encoders.{block}."
            for ffn in ("feed_forward_in", "feed_forward_out"):
                modules += [
                    (f"{name}{ffn}.layer_norm", layer_norm),
                    (f"{name}{ffn}.gate_up_proj", Linear(hidden, 2 * inner, True)),
                    (f"{name}{ffn}.down_proj", Linear(inner, hidden, True)),
                ]
            modules += [(f"{name}self_attn.{p}_proj", Linear(hidden, hidden, True)) for p in ("q", "k", "v", "o")]
            conv = name + "conv."
            modules += [
                (conv + "layer_norm", layer_norm),
                (conv + "glu.ext_pw_conv_1d.weight", LearnedTensor((2 * ext, hidden, 1), matmul=True)),
                (conv + "glu.ext_pw_conv_1d.bias", LearnedTensor((2 * ext,))),
                (conv + "glu.b1", LearnedTensor((1, ext, 1))),
                (conv + "glu.b2", LearnedTensor((1, ext, 1))),
                (conv + "dw_sep_conv_1d.dw_conv.weight", LearnedTensor((depthwise, 1, self.kernel_size), matmul=True)),
                (conv + "dw_sep_conv_1d.dw_conv.bias", LearnedTensor((depthwise,))),
                (conv + "dw_sep_conv_1d.pw_conv.weight", LearnedTensor((separable, depthwise, 1), matmul=True)),
                (conv + "dw_sep_conv_1d.pw_conv.bias", LearnedTensor((separable,))),
                (conv + "ext_pw_conv_1d.weight", LearnedTensor((ext, hidden, 1), matmul=True)),
                (conv + "ext_pw_conv_1d.bias", LearnedTensor((ext,))),
                (name + "layer_norm_att", layer_norm),
                (name + "layer_norm", layer_norm),
            ]
        extras = tuple(audio_module(prefix + name, module) for name, module in modules)
        statistics = tuple(
            StoredTensor(prefix + f"encoder_embedding.{name}", (self.input_size,))
            for name in ("global_mean", "global_invstd")
        )
        saved = CheckpointExtra(
            "input statistics",
            "the mean and inverse deviation each mel bin is normalized by: buffers",
            statistics,
            buffer=True,
        )
        return Tower((), extras, hidden, None, checkpoint_extras=(saved,))


# Phi4MultimodalConfig's own fields: its other keys are its language model's.
WRAPPER_FIELDS = frozenset({"vision_config", "audio_config", "text_config", "model_type"})


@family(
    "phi4_multimodal",
    transformers="Phi4MultimodalConfig",
    architecture="Phi-4-multimodal",
    model_class="Phi4MultimodalForCausalLM",
    read_beyond={
        "text_config": "Not a field of Phi4MultimodalConfig: the block the language model's own keys are gathered into, to be read by the wrapper's machinery as any text_config is (a text_config key in a config is replaced by them)."
    },
)
class Phi4MultimodalConfig(MultimodalLayers):
    """configuration_phi4_multimodal.py / modeling_phi4_multimodal.py (Phi4MultimodalForCausalLM): one config for the
    language model (its own keys: Phi-3's layers, under model. and lm_head, tied where tie_word_embeddings says,
    default false) and its two towers, under model.embed_tokens_extend.: image_embed (the SigLIP tower as img_processor,
    img_projection_up → the text width and img_projection_down, square, biased, and the global and sub-image separator
    vectors) and audio_embed (the Conformer as encoder, then two projection pairs, up_proj_for_speech and
    down_proj_for_speech, up_proj_for_vision_speech and down_proj_for_vision_speech, biased: one pair runs per clip, as
    the prompt mixes speech with images or not)."""

    vision_model_type = "phi4_multimodal_vision"
    audio_model_type = "phi4_multimodal_audio"
    language_model_prefix = "model."
    lm_head_name = "lm_head"
    vision_prefix = EXTENSION + "image_embed.img_processor."
    audio_prefix = EXTENSION + "audio_embed.encoder."

    vision_config: dict[str, Any] | None
    audio_config: dict[str, Any] | None
    tie_word_embeddings: Flag

    @model_validator(mode="before")
    @classmethod
    def _own_keys_are_the_language_models(cls, raw: Any) -> Any:
        """The language model is the config's own keys (Phi4MultimodalConfig is one flat config)."""
        if isinstance(raw, dict):
            keys = set(Phi4MultimodalTextConfig.model_fields) - METADATA_FIELDS - WRAPPER_FIELDS
            return {**raw, "text_config": {key: value for key, value in raw.items() if key in keys}}
        return raw

    @cached_property
    def text(self) -> HFConfig:
        """The language model, read from the config's own keys with Phi4MultimodalConfig's defaults."""
        try:
            return Phi4MultimodalTextConfig.model_validate({**(self.text_config or {}), "model_type": self.model_type})
        except ValidationError as error:
            raise describe_validation_error(error, "") from None

    def tied(self) -> bool:
        return self.tie_word_embeddings

    def projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        image, width = EXTENSION + "image_embed.", tower.hidden_size
        return (
            projector_module(image + "img_projection_up", Linear(width, text_hidden, True)),
            projector_module(image + "img_projection_down", Linear(text_hidden, text_hidden, True)),
            projector_module(image + "global_img_feature_extensor", LearnedTensor((1, 1, width))),
            projector_module(image + "sub_img_feature_extensor", LearnedTensor((1, 1, 1, width))),
        )

    def audio_projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        audio = self.audio
        rate = audio.downsample_rate if isinstance(audio, Phi4MultimodalAudioConfig) else 1
        base = EXTENSION + "audio_embed."
        return tuple(
            audio_module(base + name, module, "projector", "per_audio_token")
            for mode in ("speech", "vision_speech")
            for name, module in (
                (f"up_proj_for_{mode}", Linear(tower.hidden_size * rate, text_hidden, True)),
                (f"down_proj_for_{mode}", Linear(text_hidden, text_hidden, True)),
            )
        )
