"""Mistral 3 (a Pixtral tower, a patch-merging projector and a Mistral language model: Magistral, Devstral) and
LightOnOCR (the same shape under other names, around Qwen3)."""

from __future__ import annotations

from ..schema import Flag, Width
from ..spec import Extra, ImageInput, Linear, Norm
from ..values import replace
from .multimodal import MultimodalConfig
from .registry import family
from .towers import Tower, projector_module


@family(
    "mistral3", transformers="Mistral3Config", architecture="Mistral 3", model_class="Mistral3ForConditionalGeneration"
)
class Mistral3Config(MultimodalConfig):
    """configuration_mistral3.py: a Pixtral vision tower and a projector around a Mistral (or Ministral 3)
    language model; the top-level tie_word_embeddings (default true) decides tying."""

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
    spatial_merge_size: Width
    multimodal_projector_bias: Flag
    vision_feature_layer: int | list[int]

    def image_input(self, tower: Tower) -> ImageInput | None:
        """Pixtral's patches, spatial_merge_size² of them merged into one token by the projector."""
        return None if tower.image is None else replace(tower.image, merge=self.spatial_merge_size)

    def projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        """Mistral3MultiModalProjector: an RMSNorm (vision hidden), the patch merger (spatial_merge_size² patches side
        by side → vision hidden, no bias), linear_1 (vision hidden × the feature layers read → text hidden) and
        linear_2 (text → text), with biases when multimodal_projector_bias."""
        layers_read = 1 if isinstance(self.vision_feature_layer, int) else len(self.vision_feature_layer)
        return patch_merging_projector(
            "multi_modal_projector.",
            tower.hidden_size,
            text_hidden,
            self.spatial_merge_size,
            layers_read,
            self.multimodal_projector_bias,
        )


@family(
    "lighton_ocr",
    transformers="LightOnOcrConfig",
    architecture="LightOnOCR",
    model_class="LightOnOcrForConditionalGeneration",
)
class LightOnOcrConfig(MultimodalConfig):
    """configuration_lighton_ocr.py / modeling_lighton_ocr.py: Mistral 3's shape under other names, saved as built
    (no conversion_mapping.py entry): a Pixtral tower (model.vision_encoder.), LightOnOcrMultiModalProjector
    (model.vision_projection.: an RMSNorm of the vision width, the patch merger spatial_merge_size² patches side by
    side → vision hidden, linear_1 vision → text, linear_2 text → text, none biased) and a Qwen3 language model
    (model.language_model., lm_head); the top-level tie_word_embeddings (default true) decides tying. No image rule:
    LightOnOcrProcessor resizes to whole patches of the image processor's own patch_size (preprocessor_config.json,
    not config.json), not to whole merges as Mistral 3's does; the model is counted by parameter."""

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

    spatial_merge_size: Width

    def image_input(self, tower: Tower) -> ImageInput | None:
        return None

    def projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        return patch_merging_projector(
            "model.vision_projection.", tower.hidden_size, text_hidden, self.spatial_merge_size
        )

    def notes(self) -> list[str]:
        return super().notes() + [
            "no image rule: its processor resizes to whole patches of the image processor's own patch size, which "
            "config.json does not hold; counted by parameter only (flops with an `image` refuses)"
        ]


def patch_merging_projector(
    prefix: str, width: int, text_hidden: int, merge: int, layers_read: int = 1, bias: bool = False
) -> tuple[Extra, ...]:
    """Mistral 3's projector (LightOnOCR's under another prefix): an RMSNorm (vision width), the patch merger
    (merge² patches side by side → width, no bias), linear_1 (width × layers_read → text hidden), linear_2 (text →
    text); linear_1 and linear_2 biased when BIAS."""
    return tuple(
        projector_module(prefix + name, module)
        for name, module in (
            ("norm", Norm("rmsnorm", width)),
            ("patch_merger.merging_layer", Linear(width * merge**2, width)),
            ("linear_1", Linear(width * layers_read, text_hidden, bias)),
            ("linear_2", Linear(text_hidden, text_hidden, bias)),
        )
    )
