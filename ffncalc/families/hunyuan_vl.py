"""HunYuan-VL's vision tower (transformers 5.24, modeling_hunyuan_vl.py) and Hy4-VL (modular_hy_v4_vl.py), which keeps
that tower with a merger straight into the text width around Hy4's language model (hy_v4, families/hy_v4.py)."""

from __future__ import annotations

from functools import cached_property
from typing import Any, ClassVar

from pydantic import model_validator

from ..schema import METADATA_FIELDS, HeadCount, LayerCount, Name, Width
from ..spec import (
    Attention,
    DenseFfn,
    Extra,
    ImageInput,
    Layer,
    LearnedTensor,
    Linear,
    ModelSpec,
    Norm,
    PatchEmbedding,
    Table,
    names,
)
from ..values import replace
from .blocks import required_field
from .hunyuan import HunYuanDenseV1Config
from .hy_v4 import HyV4Config
from .multimodal import MultimodalConfig, relocate
from .qwen import base_model
from .registry import family, tower
from .towers import Module, Tower, TowerConfig, tower_module

HUNYUAN_VL_ATTENTION = names(q="self_attn.q_proj", k="self_attn.k_proj", v="self_attn.v_proj", o="self_attn.o_proj")
HUNYUAN_VL_MLP = names(up="mlp.dense_h_to_4h", down="mlp.dense_4h_to_h")


class HunYuanVLVisionLayers(TowerConfig):
    """The fields HunYuan-VL's and Hy4-VL's vision configs share, and their tower before its merger (saved as the
    original checkpoints name it, under vit.): a biased patch convolution, a learned position table of
    (max_image_size / patch_size)² + 1 rows (resampled to each image: looked up, no matmul), LayerNorm layers with
    biases (input_layernorm, post_attention_layernorm), attention q, k, v, o (heads · hidden / heads, all biased;
    num_key_value_heads builds nothing) and a plain biased FFN (dense_h_to_4h, dense_4h_to_h). The image processor
    resizes each side to a multiple of patch_size · spatial_merge_size (smart_resize; its min_pixels and max_pixels
    are not in config.json); spatial_merge_size² patches become one token."""

    hidden_act: Name
    hidden_size: Width
    intermediate_size: Width
    num_attention_heads: HeadCount
    num_channels: Width
    num_hidden_layers: LayerCount
    out_hidden_size: Width
    patch_size: Width
    spatial_merge_size: Width
    max_image_size: Width

    #: The merger's RMSNorm over each patch, as the checkpoint names it under perceive.
    before_norm: ClassVar[str] = "before_rms"

    def merger(self) -> list[tuple[str, Module]]:  # pragma: no cover - every tower overrides it
        """The merger's modules after its norm, under perceive.: each runs once per merged token."""
        raise NotImplementedError

    def tower(self, prefix: str) -> Tower:
        hidden, heads = self.hidden_size, self.num_attention_heads
        head_dim = hidden // heads
        attention = Attention(hidden, heads, heads, head_dim, head_dim, HUNYUAN_VL_ATTENTION, True, True, True, True)
        ffn = DenseFfn(hidden, self.intermediate_size, False, self.hidden_act, HUNYUAN_VL_MLP, True)
        norm = Norm("layernorm", hidden, bias=True)
        norms = (("input_layernorm", norm), ("post_attention_layernorm", norm))
        layer = Layer(prefix + "layers.{i}", attention, ffn, norms, stack="vision")
        positions = (self.max_image_size // self.patch_size) ** 2 + 1
        extras = [
            tower_module(
                prefix + "embeddings.patch_embedding",
                PatchEmbedding(self.num_channels, (self.patch_size,) * 2, hidden, True),
            ),
            tower_module(prefix + "embeddings.position_embedding", Table(positions, hidden)),
            tower_module(prefix + "perceive." + self.before_norm, Norm("rmsnorm", hidden)),
        ]
        extras += [
            tower_module(prefix + "perceive." + name, module, runs="per_image_token") for name, module in self.merger()
        ]
        merge = self.spatial_merge_size
        image = ImageInput(self.patch_size, "multiple", self.patch_size * merge, merge=merge)
        return Tower((layer,) * self.num_hidden_layers, tuple(extras), self.out_hidden_size, image)


@tower("hunyuan_vl_vision", transformers="HunYuanVLVisionConfig")
class HunYuanVLVisionConfig(HunYuanVLVisionLayers):
    """configuration_hunyuan_vl.py (HunYuanVLVisionConfig) / HunYuanVLVisionTransformer: the tower and its merger
    (HunYuanVLVisionPatchMerger, under perceive.): before_rms (an RMSNorm per patch), proj.0 (a
    spatial_merge_size-square convolution of stride spatial_merge_size, hidden → 2 · hidden), proj.2 (1 × 1,
    → 4 · hidden), mlp (4 · hidden → text_hidden_size), after_rms, all biased but the norms; image_newline
    [4 · hidden] and image_begin, image_end, image_sep [text_hidden_size], added around and between rows (no matmul).
    The wrapper sets text_hidden_size to its language model's hidden_size (HunYuanVLConfig.__post_init__)."""

    text_hidden_size: Width

    def merger(self) -> list[tuple[str, Module]]:
        hidden, merge, text = self.hidden_size, self.spatial_merge_size, self.text_hidden_size
        return [
            ("proj.0", PatchEmbedding(hidden, (merge, merge), 2 * hidden, True)),
            ("proj.2", PatchEmbedding(2 * hidden, (1, 1), 4 * hidden, True)),
            ("mlp", Linear(4 * hidden, text, True)),
            ("after_rms", Norm("rmsnorm", text)),
            ("image_newline", LearnedTensor((4 * hidden,))),
            *((name, LearnedTensor((text,))) for name in ("image_begin", "image_end", "image_sep")),
        ]

    def tower(self, prefix: str) -> Tower:
        return replace(super().tower(prefix), hidden_size=self.text_hidden_size)


@family(
    "hunyuan_vl_text", transformers="HunYuanVLTextConfig", architecture="HunYuan-VL", model_class="HunYuanVLTextModel"
)
class HunYuanVLTextConfig(HunYuanDenseV1Config):
    """configuration_hunyuan_vl.py (HunYuanVLTextConfig) / HunYuanVLTextModel: HunYuan-Dense-V1's layers, fields and
    defaults but a tied head (head_dim None: transformers 5.24 cannot build the attention without it, and refuses the default
    config); its rotary positions take an mrope_section (no weights)."""

    _check_head_dim = required_field("head_dim", "HunYuanVLTextConfig")

    # HunYuanVLTextConfig.attribute_map: attention_head_dim, org_vocab_size and pad_id name the same fields.

    def language_model_spec(self) -> ModelSpec:
        """The causal LM's layout (model., lm_head), as the wrapper holds it."""
        return super().to_spec()

    def to_spec(self) -> ModelSpec:
        """Alone, transformers builds the base model (no head, no model. prefix)."""
        return base_model(self.language_model_spec())


@family(
    "hunyuan_vl",
    transformers="HunYuanVLConfig",
    architecture="HunYuan-VL",
    model_class="HunYuanVLForConditionalGeneration",
)
class HunYuanVLConfig(MultimodalConfig):
    """configuration_hunyuan_vl.py / HunYuanVLForConditionalGeneration: the tower saved under vit. (its merger
    projects into the text width), the language model under model. and lm_head. Without text_config the language
    model's keys are the config's own (HunYuanVLConfig.__post_init__, as Tencent's flat checkpoints are written). The
    head is tied when tie_word_embeddings (default true) or text_config's (default true) says so."""

    text_model_type = "hunyuan_vl_text"
    vision_model_type = "hunyuan_vl_vision"
    language_model_prefix = "model."
    vision_prefix = "vit."
    lm_head_name = "lm_head"

    @model_validator(mode="before")
    @classmethod
    def _flat_text_config(cls, raw: Any) -> Any:
        """Without text_config, the language model's keys are the config's own, the wrapper's fields left to it."""
        if isinstance(raw, dict) and raw.get("text_config") is None:
            keys = set(HunYuanVLTextConfig.model_fields) - METADATA_FIELDS - {"model_type", "tie_word_embeddings"}
            return {**raw, "text_config": {key: value for key, value in raw.items() if key in keys}}
        return raw

    def tied(self) -> bool:
        """HunYuanVLConfig.__post_init__: the wrapper ties when it says so or when text_config does."""
        return self.tie_word_embeddings or getattr(self.text, "tie_word_embeddings", False) is True

    def wrapped_spec(self) -> ModelSpec:
        return with_language_model(self)

    @cached_property
    def towers(self) -> dict[str, TowerConfig]:
        """The tower, its text_hidden_size the language model's hidden_size (HunYuanVLConfig.__post_init__)."""
        found = dict(super().towers)
        vision = found.get("vision_config")
        if vision is not None:
            hidden = self.text.hidden_size  # type: ignore[attr-defined]
            found["vision_config"] = vision.model_copy(update={"text_hidden_size": hidden})
        return found


@tower("hy_v4_vl_vision", transformers="HYV4VLVisionConfig")
class HyV4VLVisionConfig(HunYuanVLVisionLayers):
    """configuration_hy_v4_vl.py (HYV4VLVisionConfig) / HYV4VLVisionModel: HunYuan-VL's tower, wider by default, whose
    merger (HYV4VLVisionPatchMerger, saved as perceive.) projects into the text width: norm (before_rms, an RMSNorm per patch), proj.0 (a
    spatial_merge_size-square convolution of stride spatial_merge_size, hidden → hidden · merge², biased), proj.2
    (1 × 1, → out_hidden_size, biased) and image_newline [out_hidden_size], added at the end of each row (no matmul).
    The merger counts with the tower, as transformers keeps it in it."""

    before_norm = "norm"

    def merger(self) -> list[tuple[str, Module]]:
        hidden, merge = self.hidden_size, self.spatial_merge_size
        merged = hidden * merge**2
        return [
            ("proj.0", PatchEmbedding(hidden, (merge, merge), merged, True)),
            ("proj.2", PatchEmbedding(merged, (1, 1), self.out_hidden_size, True)),
            ("image_newline", LearnedTensor((self.out_hidden_size,))),
        ]


@family("hy_v4_vl_text", transformers="HYV4VLTextConfig", architecture="Hy4-VL", model_class="HYV4VLTextModel")
class HyV4VLTextConfig(HyV4Config):
    """configuration_hy_v4_vl.py (HYV4VLTextConfig): Hy4's language model, its layout and fields, with larger
    defaults; its rotary positions take an mrope_section (no weights)."""

    def language_model_spec(self) -> ModelSpec:
        """The causal LM's layout (model., lm_head), as the wrapper holds it."""
        return super().to_spec()

    def to_spec(self) -> ModelSpec:
        """Alone, transformers builds the base model (no head, no model. prefix)."""
        return base_model(self.language_model_spec())


@family("hy_v4_vl", transformers="HYV4VLConfig", architecture="Hy4-VL", model_class="HYV4VLForConditionalGeneration")
class HyV4VLConfig(MultimodalConfig):
    """configuration_hy_v4_vl.py / HYV4VLForConditionalGeneration: the tower saved under vit. and the language model
    under model. with lm_head (conversion_mapping.py's "hy_v4_vl", reverted: Hy4's own names); tie_word_embeddings
    (default false) decides tying."""

    text_model_type = "hy_v4_vl_text"
    text_defaults: ClassVar[dict[str, Any]] = {"model_type": "hy_v4_vl_text"}
    vision_model_type = "hy_v4_vl_vision"
    language_model_prefix = "model."
    vision_prefix = "vit."
    lm_head_name = "lm_head"

    def projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        """None apart from the tower's merger, which already projects into the text width."""
        return ()

    def wrapped_spec(self) -> ModelSpec:
        return with_language_model(self)


def with_language_model(wrapper: MultimodalConfig) -> ModelSpec:
    """WRAPPER's language model in the layout its causal LM has (language_model_spec), relocated, with the tower."""
    spec = getattr(wrapper.text, "language_model_spec", wrapper.text.to_spec)()
    spec = replace(spec, model_type=wrapper.model_type, tie_word_embeddings=wrapper.tied())
    return wrapper.whole(relocate(spec, wrapper.language_model_prefix, wrapper.lm_head_name))
