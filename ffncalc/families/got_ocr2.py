"""GOT-OCR 2.0: SAM's ViT image encoder (windowed attention with relative positions, a convolutional neck), a
projector of two strided convolutions and a linear, and a Qwen2 language model, in LLaVA's layout
(conversion_mapping.py: "got_ocr2" → "llava")."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, model_validator

from ..schema import Flag, HeadCount, LayerCount, LayerIndex, Name, Width, derives
from ..spec import (
    Attention,
    DenseFfn,
    Extra,
    ImageInput,
    Layer,
    LearnedTensor,
    Linear,
    Norm,
    Parameter,
    PatchEmbedding,
    names,
)
from .multimodal import MultimodalConfig
from .registry import family, tower
from .towers import Tower, TowerConfig, projector_module, tower_module

SAM_ATTENTION = names(q="attn.qkv", k="attn.qkv", v="attn.qkv", o="attn.proj")
SAM_MLP = names(up="mlp.lin1", down="mlp.lin2")


class _SamEncoderFields(TowerConfig):
    """SAM's ViT image encoder as GOT-OCR2 (GotOcr2VisionEncoder) and SAM (SamVisionEncoder) build it: a biased patch
    convolution, a learned position per patch of an image_size square (use_abs_pos); LayerNorm layers with fused qkv
    (qkv_bias), a biased proj and a plain biased FFN (``mlp_width``); each layer's attention holds relative position
    tables rel_pos_h and rel_pos_w (use_rel_pos), 2 · window_size − 1 rows of head_dim, or 2 · (image_size /
    patch_size) − 1 for the global layers (global_attn_indexes, which attend over the whole image); then the neck:
    a 1 × 1 convolution into output_channels, a LayerNorm, a 3 × 3 convolution, a LayerNorm (no biases on either
    convolution)."""

    hidden_size: Width
    output_channels: Width
    num_hidden_layers: LayerCount
    num_attention_heads: HeadCount
    num_channels: Width
    image_size: Width
    patch_size: Width
    hidden_act: Name
    qkv_bias: Flag
    use_abs_pos: Flag
    use_rel_pos: Flag
    window_size: Annotated[int, Field(ge=0)]
    global_attn_indexes: list[LayerIndex]

    @model_validator(mode="after")
    def _check_heads(self) -> _SamEncoderFields:
        if self.hidden_size % self.num_attention_heads:  # qkv is split into heads of hidden // heads: it fails
            raise ValueError(
                f"hidden_size ({self.hidden_size}) is not a multiple of num_attention_heads "
                f"({self.num_attention_heads}); transformers' SAM vision attention cannot split it"
            )
        return self

    @property
    def mlp_width(self) -> int:  # pragma: no cover - each encoder says how it sizes its FFN
        raise NotImplementedError

    def layer(self, name: str, span: int) -> Layer:
        """One layer whose attention spans SPAN patches a side (its window, or the whole grid)."""
        hidden, heads = self.hidden_size, self.num_attention_heads
        head_dim, bias = hidden // heads, self.qkv_bias
        attention = Attention(hidden, heads, heads, head_dim, head_dim, SAM_ATTENTION, bias, bias, bias, True)
        ffn = DenseFfn(hidden, self.mlp_width, False, self.hidden_act, SAM_MLP, True)
        norm = Norm("layernorm", hidden, bias=True)
        tables = (
            tuple(
                Parameter("vision", "relative_positions", f"attn.rel_pos_{axis}", (2 * span - 1, head_dim))
                for axis in ("h", "w")
            )
            if self.use_rel_pos
            else ()
        )
        norms = (("layer_norm1", norm), ("layer_norm2", norm))
        return Layer(name, attention, ffn, norms, stack="vision", parameters=tables)

    def tower(self, prefix: str) -> Tower:
        hidden, grid, out = self.hidden_size, self.image_size // self.patch_size, self.output_channels
        name = prefix + "layers.{i}"
        # window_size 0 makes every layer global (GotOcr2VisionLayer partitions into windows only when it is positive)
        windowed, whole = self.layer(name, self.window_size or grid), self.layer(name, grid)
        layers = tuple(whole if i in self.global_attn_indexes else windowed for i in range(self.num_hidden_layers))
        extras: list[Extra] = [
            tower_module(
                prefix + "patch_embed.projection",
                PatchEmbedding(self.num_channels, (self.patch_size,) * 2, hidden, True),
            )
        ]
        if self.use_abs_pos:
            extras.append(tower_module(prefix + "pos_embed", LearnedTensor((1, grid, grid, hidden))))
        extras += [
            tower_module(prefix + "neck.conv1", PatchEmbedding(hidden, (1, 1), out)),
            tower_module(prefix + "neck.layer_norm1", Norm("layernorm", out, bias=True)),
            tower_module(prefix + "neck.conv2", PatchEmbedding(out, (3, 3), out)),
            tower_module(prefix + "neck.layer_norm2", Norm("layernorm", out, bias=True)),
        ]
        # No image rule: windows padded to whole windows, relative-position terms and strided convolutions over the
        # grid are FLOPs ffncalc's image arithmetic does not express; the tower is counted by parameter.
        image: ImageInput | None = None
        return Tower(layers, tuple(extras), out, image)


@tower("got_ocr2_vision", transformers="GotOcr2VisionConfig")
class GotOcr2VisionConfig(_SamEncoderFields):
    """configuration_got_ocr2.py (GotOcr2VisionConfig) / modeling_got_ocr2.py (GotOcr2VisionEncoder, SAM's ViT), its
    FFN mlp_dim wide."""

    mlp_dim: Width

    @property
    def mlp_width(self) -> int:
        return self.mlp_dim


@tower("sam_vision_model", transformers="SamVisionConfig")
class SamVisionConfig(_SamEncoderFields):
    """configuration_sam.py (SamVisionConfig) / modeling_sam.py (SamVisionModel: SamVisionEncoder under
    vision_encoder.), its FFN mlp_dim wide, or int(hidden_size · mlp_ratio) when mlp_dim is absent or null
    (SamVisionConfig.__post_init__). num_pos_feats sizes SAM's prompt encoder, which a tower alone does not build."""

    informational_fields = frozenset({"num_pos_feats"})

    mlp_ratio: Annotated[float, Field(gt=0)]
    mlp_dim: Width | None

    @property
    @derives("mlp_dim", "int(hidden_size × mlp_ratio)")
    def mlp_width(self) -> int:
        return self.mlp_dim or int(self.hidden_size * self.mlp_ratio)  # transformers' float product, truncated

    def tower(self, prefix: str) -> Tower:
        return super().tower(prefix + "vision_encoder.")


# GotOcr2Config.sub_configs_defaults' text init_kwargs (the keys a Qwen2 reads for its size and tying).
GOT_OCR2_TEXT = {
    "model_type": "qwen2",
    "vocab_size": 151860,
    "hidden_size": 1024,
    "intermediate_size": 2816,
    "num_hidden_layers": 24,
    "num_attention_heads": 16,
    "num_key_value_heads": 16,
    "hidden_act": "silu",
    "max_position_embeddings": 32768,
    "tie_word_embeddings": True,
    "use_sliding_window": False,
    "sliding_window": 4096,
    "max_window_layers": 21,
}


@family(
    "got_ocr2", transformers="GotOcr2Config", architecture="GOT-OCR2", model_class="GotOcr2ForConditionalGeneration"
)
class GotOcr2Config(MultimodalConfig):
    """configuration_got_ocr2.py / modeling_got_ocr2.py: GotOcr2VisionEncoder, GotOcr2MultiModalProjector
    (conv_upsampler1: a 3 × 3 convolution of stride 2, output_channels → 2 · output_channels; conv_upsampler2: the
    same into the text width; both without bias; then multimodal_projector, a biased linear text → text) and a
    language model built by AutoModel (Qwen2 by default); the top-level tie_word_embeddings (default true) decides
    tying."""

    text_model_type = "qwen2"
    text_defaults = GOT_OCR2_TEXT
    vision_model_type = "got_ocr2_vision"
    informational_fields = frozenset({"image_seq_length"})

    def projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        channels = tower.hidden_size  # the neck's output_channels
        return (
            projector_module("multi_modal_projector.conv_upsampler1", PatchEmbedding(channels, (3, 3), 2 * channels)),
            projector_module(
                "multi_modal_projector.conv_upsampler2", PatchEmbedding(2 * channels, (3, 3), text_hidden)
            ),
            projector_module("multi_modal_projector.multimodal_projector", Linear(text_hidden, text_hidden, True)),
        )


@tower("pp_chart2table_vision", transformers="PPChart2TableVisionConfig")
class PPChart2TableVisionConfig(GotOcr2VisionConfig):
    """configuration_pp_chart2table.py (PPChart2TableVisionConfig): GOT-OCR2's tower, fields and defaults."""


@family("pp_chart2table", transformers="PPChart2TableConfig", architecture="PP-Chart2Table")
class PPChart2TableConfig(GotOcr2Config):
    """configuration_pp_chart2table.py (PPChart2TableConfig): PP-Chart2Table, which transformers builds as
    GotOcr2ForConditionalGeneration (the image-text-to-text mapping) with GOT-OCR2's default Qwen2 and layout
    (conversion_mapping.py: "pp_chart2table" → "llava")."""

    vision_model_type = "pp_chart2table_vision"
