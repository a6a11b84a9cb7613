"""MiniCPM-V 4.6 and 4.7 (OpenBMB; transformers 5.24, modeling_minicpmv4_6.py, modular_minicpmv4_7.py): a Qwen3.5
language model (qwen3_5_text) around a SigLIP tower with a window-attention merger inside it (after layer
insert_layer_id, 2 × 2 patches become one), and a merger that merges 2 × 2 again into the text width.

An image's FLOPs are not counted: the tower's layers after the merger carry a quarter of the patches, and the image
processor slices an image into a grid of slices and a thumbnail; ffncalc's image rule expresses neither yet."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from ..schema import Width
from ..spec import Extra, Linear, ModelSpec, Norm
from ..values import replace
from .multimodal import MultimodalConfig, relocate
from .registry import family, tower
from .towers import Tower, projector_module, tower_module
from .vision import SiglipFields


@tower("minicpmv4_6_vision", transformers="MiniCPMV4_6VisionConfig")
class MiniCPMV46VisionConfig(SiglipFields):
    """configuration_minicpmv4_6.py (MiniCPMV4_6VisionConfig) / MiniCPMV4_6VisionModel: SigLIP's embeddings (a biased
    patch convolution, a position per patch of an image_size square, looked up by nearest position), its LayerNorm
    layers and post_layernorm, and vit_merger: a LayerNorm and a biased attention (q, k, v, out_proj, hidden → hidden)
    within each window of window_kernel_size patches, then pre_norm over the window's patches side by side (k_h · k_w ·
    hidden, biased), linear_1 to k_h · k_w · intermediate and linear_2 back to hidden, both biased."""

    window_kernel_size: Annotated[list[Width], Field(min_length=2, max_length=2)]

    def tower(self, prefix: str) -> Tower:
        """SigLIP's tower (no image rule: see the module) and vit_merger's seven modules."""
        siglip = self.siglip_tower(prefix, None)
        hidden, window = self.hidden_size, self.window_kernel_size[0] * self.window_kernel_size[1]
        merger = prefix + "vit_merger."
        modules: tuple[tuple[str, Linear | Norm], ...] = (
            *(
                (f"self_attn.{name}", Linear(hidden, hidden, True))
                for name in ("q_proj", "k_proj", "v_proj", "out_proj")
            ),
            ("layer_norm1", Norm("layernorm", hidden, bias=True)),
            ("pre_norm", Norm("layernorm", window * hidden, bias=True)),
            ("linear_1", Linear(window * hidden, window * self.intermediate_size, True)),
            ("linear_2", Linear(window * self.intermediate_size, hidden, True)),
        )
        extras = tuple(tower_module(merger + name, module) for name, module in modules)
        return replace(siglip, extras=siglip.extras + extras)


@tower("minicpmv4_7_vision", transformers="MiniCPMV4_7VisionConfig")
class MiniCPMV47VisionConfig(MiniCPMV46VisionConfig):
    """configuration_minicpmv4_7.py (MiniCPMV4_7VisionConfig): MiniCPM-V 4.6's tower, its fields and defaults."""


@family(
    "minicpmv4_6",
    transformers="MiniCPMV4_6Config",
    architecture="MiniCPM-V 4.6",
    model_class="MiniCPMV4_6ForConditionalGeneration",
)
class MiniCPMV46Config(MultimodalConfig):
    """configuration_minicpmv4_6.py / modeling_minicpmv4_6.py (MiniCPMV4_6ForConditionalGeneration): the tower under
    model.vision_tower., the language model (AutoModel of text_config, Qwen3.5's by default) under
    model.language_model., and model.merger: merger_times MLPs over 4 merged features (pre_norm, linear_1 4·H → 4·H
    and linear_2 to H, all biased; H the tower's width, the last one's linear_2 into the text width). Its own
    tie_word_embeddings (default false) decides tying."""

    text_model_type = "qwen3_5_text"
    text_defaults = {"model_type": "qwen3_5_text"}
    vision_model_type = "minicpmv4_6_vision"
    language_model_prefix = "model.language_model."
    vision_prefix = "model.vision_tower."
    lm_head_name = "lm_head"

    merger_times: Width

    def notes(self) -> list[str]:
        return super().notes() + [
            "an image's FLOPs (`image`) are not counted: the tower's layers after vit_merger carry a quarter of its "
            "patches, and the processor slices an image; ffncalc's image rule expresses neither yet"
        ]

    def wrapped_spec(self) -> ModelSpec:
        """The language model as transformers' AutoModel builds it (Qwen3.5's mtp. modules left out), relocated."""
        spec = getattr(self.text, "language_model_spec", self.text.to_spec)()
        spec = replace(spec, model_type=self.model_type, tie_word_embeddings=self.tied())
        return self.whole(relocate(spec, self.language_model_prefix, self.lm_head_name))

    def projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        """MiniCPMV4_6Merger: merger_times DownsampleMLPs, each over 4 merged features (4 · H), the last into the text
        width."""
        hidden = tower.hidden_size
        merged = 4 * hidden
        modules: list[Extra] = []
        for index in range(self.merger_times):
            out = text_hidden if index == self.merger_times - 1 else hidden
            mlp = f"model.merger.mlp.{index}."
            modules += [
                tower_module(mlp + "pre_norm", Norm("layernorm", merged, bias=True), "projector"),
                projector_module(mlp + "linear_1", Linear(merged, merged, True)),
                projector_module(mlp + "linear_2", Linear(merged, out, True)),
            ]
        return tuple(modules)


@family(
    "minicpmv4_7",
    transformers="MiniCPMV4_7Config",
    architecture="MiniCPM-V 4.7",
    model_class="MiniCPMV4_7ForConditionalGeneration",
)
class MiniCPMV47Config(MiniCPMV46Config):
    """configuration_minicpmv4_7.py / modular_minicpmv4_7.py (MiniCPMV4_7ForConditionalGeneration): MiniCPM-V 4.6's
    model (its language model's positions a canvas M-RoPE: no weights)."""

    vision_model_type = "minicpmv4_7_vision"


@tower("minicpm_ocr_vision", transformers="MiniCPMOcrVisionConfig")
class MiniCPMOcrVisionConfig(MiniCPMV46VisionConfig):
    """configuration_minicpm_ocr.py (MiniCPMOcrVisionConfig): MiniCPM-V 4.6's tower, its fields and defaults."""


@family(
    "minicpm_ocr",
    transformers="MiniCPMOcrConfig",
    architecture="MiniCPM-OCR",
    model_class="MiniCPMOcrForConditionalGeneration",
)
class MiniCPMOcrConfig(MiniCPMV46Config):
    """configuration_minicpm_ocr.py / modular_minicpm_ocr.py (MiniCPMOcrForConditionalGeneration): MiniCPM-V 4.6's
    model, tied by default (tie_word_embeddings true); downsample_mode "4x" by default skips the tower's vit_merger
    at run time, which is built all the same."""

    vision_model_type = "minicpm_ocr_vision"
