"""Mistral (a sliding window, no biases), Ministral (windows by layer_types), Ministral 3, Mixtral (its MoE)
and Mistral 3 (a multimodal wrapper: Magistral, Devstral)."""

from __future__ import annotations

from typing import Literal

from pydantic import AliasChoices, Field

from ..schema import (
    ExpertCount,
    ExpertCountOrZero,
    Flag,
    HeadCount,
    LayerCount,
    LayerIndex,
    PositionCount,
    Width,
    derives,
)
from ..spec import CheckpointExtra, Extra, ImageInput, Layer, Linear, Norm, names
from ..values import replace
from .base import DecoderConfig, FfnWidth, HeadDim, HiddenAct, HiddenLayers, TiedEmbeddings
from .blocks import required_field, windows_of_layer_types
from .deepseek import DeepseekLayers
from .multimodal import MultimodalConfig
from .registry import family
from .towers import Tower, projector_module


@family("mistral")
class MistralConfig(HeadDim, HiddenAct, TiedEmbeddings, FfnWidth, HiddenLayers, DecoderConfig):
    """configuration_mistral.py / modeling_mistral.py: no bias switches (none are read); every layer
    slides within ``sliding_window`` (4,096 unless the config says null)."""

    architecture = "Mistral"
    config_class = "MistralConfig"
    default_model_class = "MistralForCausalLM"
    heads_divide_hidden = False  # configuration_*.py floors hidden_size // num_attention_heads

    intermediate_size: Width = 14336
    num_key_value_heads: HeadCount | None = 8
    max_position_embeddings: PositionCount = 131072
    sliding_window: Width | None = 4096

    def layer_windows(self) -> list[int | None]:
        return [self.sliding_window] * self.num_hidden_layers


@family("ministral")
class MinistralConfig(MistralConfig):
    """configuration_ministral.py / modular_ministral.py: Mistral's layer; ``layer_types`` (default: every
    layer sliding while sliding_window is set) gives the sliding layers the window.

    MinistralConfig leaves head_dim None when the config omits it (its __post_init__ skips Mistral's
    hidden_size // heads), and the attention then cannot be built: transformers 5.24 refuses such a config.
    """

    architecture = "Ministral"
    config_class = "MinistralConfig"
    default_model_class = "MinistralForCausalLM"

    layer_types: list[Literal["full_attention", "sliding_attention"]] | None = None

    _check_head_dim = required_field("head_dim", "MinistralConfig")

    def layer_windows(self) -> list[int | None]:
        if self.layer_types is not None:
            return windows_of_layer_types(self.layer_types, self.sliding_window)
        return super().layer_windows()

    @derives("layer_types", "every layer sliding_attention while sliding_window is set, else full_attention")
    def window_kinds(self) -> list[str]:
        return super().window_kinds()


@family("ministral3")
class Ministral3Config(MistralConfig):
    """configuration_ministral3.py: Mistral's layer with Ministral 3's defaults (head_dim 128, no window);
    the language model of Devstral Small 2 and Mistral 3 models."""

    architecture = "Ministral 3"
    config_class = "Ministral3Config"
    default_model_class = "Ministral3ForCausalLM"

    vocab_size: Width = 131072
    num_hidden_layers: LayerCount = 34
    head_dim: Width | None = 128
    max_position_embeddings: PositionCount = 262144
    pad_token_id: int | None = Field(11, strict=True)
    sliding_window: Width | None = None


MIXTRAL_MOE = names(router="block_sparse_moe.gate", experts="block_sparse_moe.experts.{e}")
MIXTRAL_EXPERT = names(gate="w1", up="w3", down="w2")


@family("mixtral")
class MixtralConfig(HeadDim, HiddenAct, TiedEmbeddings, FfnWidth, HiddenLayers, DecoderConfig):
    """configuration_mixtral.py / modeling_mixtral.py: Mistral's attention (window off by default);
    every FFN a block-sparse MoE of gated experts, stored one module per expert (w1 gate, w3 up, w2 down)."""

    architecture = "Mixtral"
    config_class = "MixtralConfig"
    default_model_class = "MixtralForCausalLM"
    heads_divide_hidden = False  # configuration_*.py floors hidden_size // num_attention_heads
    moe_names = MIXTRAL_MOE
    expert_names = MIXTRAL_EXPERT

    intermediate_size: Width = 14336
    num_key_value_heads: HeadCount | None = 8
    max_position_embeddings: PositionCount = 131072
    sliding_window: Width | None = None
    num_local_experts: ExpertCount = 8
    num_experts_per_tok: ExpertCount = 2
    routing_fields = ("num_experts_per_tok", "num_local_experts")

    def layer_windows(self) -> list[int | None]:
        return [self.sliding_window] * self.num_hidden_layers

    def build_layer(self, index: int, window: int | None) -> Layer:
        moe = self.moe_ffn(self.num_local_experts, self.num_experts_per_tok, self.intermediate_size)
        return self.layer(self.attention(window), moe)


@family("mistral3")
class Mistral3Config(MultimodalConfig):
    """configuration_mistral3.py: a Pixtral vision tower and a projector around a Mistral (or Ministral 3)
    language model; the top-level tie_word_embeddings (default true) decides tying."""

    architecture = "Mistral 3"
    config_class = "Mistral3Config"
    default_model_class = "Mistral3ForConditionalGeneration"
    text_model_type = "mistral"
    text_defaults = {  # Mistral3Config.sub_configs_defaults: a Mistral-Small-sized language model
        "model_type": "mistral",
        "head_dim": 128,
        "hidden_act": "silu",
        "hidden_size": 5120,
        "intermediate_size": 32768,
        "max_position_embeddings": 131072,
        "num_attention_heads": 32,
        "num_hidden_layers": 40,
        "num_key_value_heads": 8,
        "sliding_window": None,
        "vocab_size": 131072,
    }
    vision_model_type = "pixtral"
    vision_defaults = {"model_type": "pixtral", "image_size": 1540, "patch_size": 14}  # its sub_configs_defaults
    informational_fields = frozenset({"projector_hidden_act"})
    tie_word_embeddings: Flag = True
    spatial_merge_size: Width = 2
    multimodal_projector_bias: Flag = False
    vision_feature_layer: int | list[int] = -1

    def image_input(self, tower: Tower) -> ImageInput | None:
        """Pixtral's patches, spatial_merge_size² of them merged into one token by the projector."""
        return None if tower.image is None else replace(tower.image, merge=self.spatial_merge_size)

    def projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        """Mistral3MultiModalProjector: an RMSNorm (vision hidden), the patch merger (spatial_merge_size² patches side
        by side → vision hidden, no bias), linear_1 (vision hidden × the feature layers read → text hidden) and
        linear_2 (text → text), with biases when multimodal_projector_bias."""
        width, merged = tower.hidden_size, tower.hidden_size * self.spatial_merge_size**2
        layers_read = 1 if isinstance(self.vision_feature_layer, int) else len(self.vision_feature_layer)
        bias = self.multimodal_projector_bias
        return tuple(
            projector_module("multi_modal_projector." + name, module)
            for name, module in (
                ("norm", Norm("rmsnorm", width)),
                ("patch_merger.merging_layer", Linear(merged, width)),
                ("linear_1", Linear(width * layers_read, text_hidden, bias)),
                ("linear_2", Linear(text_hidden, text_hidden, bias)),
            )
        )


@family("mistral4")
class Mistral4Config(TiedEmbeddings, DeepseekLayers):
    """configuration_mistral4.py / modeling_mistral4.py (Mistral 4): DeepSeek-V3's MLA and dense-then-MoE stack with
    Mistral 4's defaults; the router (softmax) has no correction bias, there are no multi-token-prediction layers, and
    transformers saves the routed experts stacked, gate and up fused (Mistral4Experts: mlp.experts.gate_up_proj
    [E, 2I, H], down_proj [E, H, I]; conversion_mapping.py has no entry for mistral4)."""

    architecture = "Mistral 4"
    config_class = "Mistral4Config"
    default_model_class = "Mistral4ForCausalLM"
    moe_names = names(router="mlp.gate", experts="mlp.experts")
    expert_names = names(gate="gate_up_proj", up="gate_up_proj", down="down_proj", parameters=True)

    vocab_size: Width = 131072
    hidden_size: Width = 4096
    intermediate_size: Width = 12288
    moe_intermediate_size: Width = 2048
    num_hidden_layers: LayerCount = 36
    num_attention_heads: HeadCount = 32
    num_key_value_heads: HeadCount | None = 32
    n_routed_experts: ExpertCountOrZero = Field(
        128, validation_alias=AliasChoices("n_routed_experts", "num_local_experts")
    )
    kv_lora_rank: Width = 256
    q_lora_rank: Width | None = 1024
    qk_nope_head_dim: Width = 64
    num_experts_per_tok: ExpertCount | None = 4
    first_k_dense_replace: LayerIndex = 0
    max_position_embeddings: PositionCount = 1048576
    pad_token_id: int | None = Field(11, strict=True)
    routing_fields = ("num_experts_per_tok", "n_routed_experts")

    def checkpoint_extras(self) -> tuple[CheckpointExtra, ...]:
        return self.rotary_extras()


@family("lighton_ocr")
class LightOnOcrConfig(MultimodalConfig):
    """configuration_lighton_ocr.py / modeling_lighton_ocr.py: Mistral 3's shape under other names, saved as built
    (no conversion_mapping.py entry): a Pixtral tower (model.vision_encoder.), LightOnOcrMultiModalProjector
    (model.vision_projection.: an RMSNorm of the vision width, the patch merger spatial_merge_size² patches side by
    side → vision hidden, linear_1 vision → text, linear_2 text → text, none biased) and a Qwen3 language model
    (model.language_model., lm_head); the top-level tie_word_embeddings (default true) decides tying. No image rule:
    LightOnOcrProcessor resizes to whole patches of the image processor's own patch_size (preprocessor_config.json,
    not config.json), not to whole merges as Mistral 3's does; the model is counted by parameter."""

    architecture = "LightOnOCR"
    config_class = "LightOnOcrConfig"
    default_model_class = "LightOnOcrForConditionalGeneration"
    text_model_type = "qwen3"
    text_defaults = {  # LightOnOcrConfig.sub_configs_defaults' text init_kwargs (the keys a Qwen3 reads)
        "model_type": "qwen3",
        "head_dim": 128,
        "hidden_act": "silu",
        "hidden_size": 1024,
        "intermediate_size": 3072,
        "max_position_embeddings": 40960,
        "num_attention_heads": 16,
        "num_hidden_layers": 28,
        "num_key_value_heads": 8,
        "sliding_window": None,
        "vocab_size": 151936,
    }
    vision_model_type = "pixtral"
    vision_defaults = {  # its vision init_kwargs (the keys a Pixtral tower reads)
        "model_type": "pixtral",
        "head_dim": 64,
        "hidden_act": "silu",
        "hidden_size": 1024,
        "image_size": 1540,
        "intermediate_size": 4096,
        "num_attention_heads": 16,
        "num_channels": 3,
        "num_hidden_layers": 24,
        "patch_size": 14,
    }
    language_model_prefix = "model.language_model."
    lm_head_name = "lm_head"
    vision_prefix = "model.vision_encoder."

    tie_word_embeddings: Flag = True
    spatial_merge_size: Width = 2

    def image_input(self, tower: Tower) -> ImageInput | None:
        return None

    def projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        width, merged = tower.hidden_size, tower.hidden_size * self.spatial_merge_size**2
        return tuple(
            projector_module("model.vision_projection." + name, module)
            for name, module in (
                ("norm", Norm("rmsnorm", width)),
                ("patch_merger.merging_layer", Linear(merged, width)),
                ("linear_1", Linear(width, text_hidden)),
                ("linear_2", Linear(text_hidden, text_hidden)),
            )
        )

    def notes(self) -> list[str]:
        return super().notes() + [
            "no image rule: its processor resizes to whole patches of the image processor's own patch size, which "
            "config.json does not hold; counted by parameter only (flops --image refuses)"
        ]
