"""DeepSeek-VL: a SigLIP tower (by default), a two-layer aligner and a Llama language model, laid out as transformers
builds them; DeepSeek-VL hybrid adds SAM's ViT at high resolution beside it."""

from __future__ import annotations

from typing import Any

from ..errors import InvalidConfigError
from ..spec import Extra, ImageInput, LearnedTensor, Linear, ModelSpec, Norm, PatchEmbedding
from .got_ocr2 import SamVisionConfig
from .multimodal import MultimodalConfig, with_tower
from .registry import family
from .towers import Tower, after, projector_module, tower_module


@family(
    "deepseek_vl",
    transformers="DeepseekVLConfig",
    architecture="DeepSeek-VL",
    model_class="DeepseekVLForConditionalGeneration",
)
class DeepseekVLConfig(MultimodalConfig):
    """configuration_deepseek_vl.py / modeling_deepseek_vl.py: a vision tower built by AutoModel (SigLIP with
    SiglipVisionConfig's own defaults, its pooling head included), DeepseekVLAligner (linear1: vision hidden → text
    hidden, linear2: text → text, both biased, over every patch's feature) and a language model built by AutoModel
    (Llama by default), saved as transformers builds them (model.vision_model., model.aligner., model.language_model.,
    lm_head); the top-level tie_word_embeddings (default true) decides tying. DeepseekVLImageProcessor pads an image
    to a square and resizes it to the tower's image_size: the tower's fixed rule."""

    text_model_type = "llama"
    text_defaults = {"model_type": "llama"}
    vision_model_type = "siglip_vision_model"
    vision_defaults = {"model_type": "siglip_vision_model"}
    language_model_prefix = "model.language_model."
    lm_head_name = "lm_head"
    vision_prefix = "model.vision_model."

    def projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        return (
            projector_module("model.aligner.linear1", Linear(tower.hidden_size, text_hidden, True)),
            projector_module("model.aligner.linear2", Linear(text_hidden, text_hidden, True)),
        )


# DeepseekVLHybridModel's modules of the high-resolution side: high_res_vision_model, _neck, _proj, _alpha.
HIGH_RES_PREFIX = "model.high_res_vision_"


@family(
    "deepseek_vl_hybrid",
    transformers="DeepseekVLHybridConfig",
    architecture="DeepSeek-VL (hybrid)",
    model_class="DeepseekVLHybridForConditionalGeneration",
)
class DeepseekVLHybridConfig(DeepseekVLConfig):
    """configuration_deepseek_vl_hybrid.py / modeling_deepseek_vl_hybrid.py: DeepSeek-VL's SigLIP tower (low
    resolution), language model and layout, beside a second tower at high resolution: SAM's ViT (SamVisionModel,
    SamVisionConfig's own defaults) under model.high_res_vision_model., then high_res_vision_neck (a second copy of
    SAM's neck, over the first global layer's output), high_res_vision_proj (two 3 × 3 convolutions of stride 2,
    output_channels → 2 · → 4 · output_channels, no biases) and high_res_vision_alpha (one learned scalar);
    DeepseekVLHybridAligner maps each tower's features to half the text width (vision_proj, high_res_vision_proj) and
    joins them (proj, text → text), all biased. No image rule: the high-resolution tower's padded windows and
    relative-position terms, and the interpolation and strided convolutions after it, are FLOPs the image arithmetic
    does not express; the model is counted by parameter."""

    high_res_vision_config: dict[str, Any] | None

    def tower_blocks(self) -> tuple[tuple[str, str, dict[str, Any]], ...]:
        high_res = ("high_res_vision_config", "sam_vision_model", {"model_type": "sam_vision_model"})
        return super().tower_blocks() + (high_res,)

    @property
    def high_res(self) -> SamVisionConfig:
        tower = self.towers["high_res_vision_config"]
        if not isinstance(tower, SamVisionConfig):
            raise InvalidConfigError(
                f"high_res_vision_config.model_type: {tower.model_type!r} is not SAM's vision model, the one tower "
                "ffncalc counts at high resolution (sam_vision_model)"
            )
        return tower

    def validate_nested(self) -> None:
        super().validate_nested()
        if not self.high_res.global_attn_indexes:  # DeepseekVLHybridModel reads global_attn_indexes[0]
            raise InvalidConfigError(
                "high_res_vision_config.global_attn_indexes: must name at least one layer; transformers' "
                "DeepseekVLHybridModel reads the first global layer's output"
            )

    def image_input(self, tower: Tower) -> ImageInput | None:
        return None

    def projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        half, high_res = text_hidden // 2, 4 * self.high_res.output_channels
        return (
            projector_module("model.aligner.vision_proj", Linear(tower.hidden_size, half, True)),
            projector_module("model.aligner.high_res_vision_proj", Linear(high_res, half, True)),
            projector_module("model.aligner.proj", Linear(text_hidden, text_hidden, True)),
        )

    def whole(self, spec: ModelSpec) -> ModelSpec:
        """DeepSeek-VL's model, then the high-resolution tower (numbered from 0 after SigLIP's layers) and what reads
        its output: the second neck, the strided convolutions and the scalar gate, counted with the tower."""
        spec = super().whole(spec)
        sam, prefix = self.high_res, HIGH_RES_PREFIX
        tower = after(sam.tower(prefix + "model."), sum(layer.stack == "vision" for layer in spec.layers))
        hidden, out = sam.hidden_size, sam.output_channels
        modules = (
            tower_module(prefix + "neck.conv1", PatchEmbedding(hidden, (1, 1), out)),
            tower_module(prefix + "neck.layer_norm1", Norm("layernorm", out, bias=True)),
            tower_module(prefix + "neck.conv2", PatchEmbedding(out, (3, 3), out)),
            tower_module(prefix + "neck.layer_norm2", Norm("layernorm", out, bias=True)),
            tower_module(prefix + "proj.conv1", PatchEmbedding(out, (3, 3), 2 * out)),
            tower_module(prefix + "proj.conv2", PatchEmbedding(2 * out, (3, 3), 4 * out)),
            tower_module(prefix + "alpha", LearnedTensor((1,))),
        )
        return with_tower(spec, tower, modules, image=spec.image)

    def notes(self) -> list[str]:
        return super().notes() + [
            "no image rule: the high-resolution SAM tower's windows and relative positions, and the strided "
            "convolutions after it, are counted by parameter only (flops with an `image` refuses)"
        ]
