"""Molmo2 (Ai2; transformers 5.24, configuration_molmo2.py / modeling_molmo2.py): a ViT over image crops, an adapter
that pools patches by attention and projects them with a gated MLP, and an OLMo-style language model (q/k RMSNorms
per head or across heads) whose token table holds additional_vocab_size rows more than its head.

Its checkpoints keep the original Molmo names, which transformers renames on load and back on save
(conversion_mapping.py's "molmo2" and "Molmo2TextModel"): model.transformer.blocks. with q, k and v fused in att_proj
and up and gate in ff_proj, model.transformer.wte.embedding and .new_embedding for the token table's two parts,
model.vision_backbone.image_vit. for the tower, model.vision_backbone.image_pooling_2d. and .image_projector. for
the adapter. ffncalc names them so."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import AliasChoices, Field, model_validator

from ..schema import Flag, HeadCount, LayerCount, Name, Nested, PositionCount, Width, WidthOrZero, derives
from ..spec import (
    Attention,
    DenseFfn,
    Extra,
    ImageInput,
    Layer,
    LearnedTensor,
    Linear,
    ModelNames,
    ModelSpec,
    Norm,
    names,
)
from ..values import replace
from .base import DecoderConfig
from .multimodal import MultimodalConfig, relocate
from .qwen import TextOfWrapper
from .registry import family, tower
from .towers import Tower, TowerConfig, projector_module, tower_module

MOLMO2_ATTENTION = names(
    q="self_attn.att_proj",
    k="self_attn.att_proj",
    v="self_attn.att_proj",
    o="self_attn.attn_out",
    q_norm="self_attn.q_norm",
    k_norm="self_attn.k_norm",
)
MOLMO2_MLP = names(up="mlp.ff_proj", gate="mlp.ff_proj", down="mlp.ff_out")
VIT_ATTENTION = names(q="attention.wq", k="attention.wk", v="attention.wv", o="attention.wo")
VIT_MLP = names(up="feed_forward.w1", down="feed_forward.w2")


@family(
    "molmo2_text",
    transformers="Molmo2TextConfig",
    architecture="Molmo2",
    model_class="Molmo2TextModel",
    heads_divide_hidden=False,  # head_dim is its own field
    read_beyond={
        "pad_token_id": "Molmo2TextConfig declares no pad_token_id (its table has no padding row): one a config gives is kept as a plain attribute, which DecoderConfig reads and checks against the table"
    },
)
class Molmo2TextConfig(TextOfWrapper, DecoderConfig):
    """configuration_molmo2.py (Molmo2TextConfig) / Molmo2TextModel: q, k, v (biased by attention_bias, qkv_bias in
    the released configs) and o without bias, RMSNorms over each query and key head (qk_norm_type "qwen3") or over
    all of them ("olmo"), a SwiGLU MLP without biases, two RMSNorms a layer (before the sublayers, or after them with
    norm_after: the same weights); a token table of vocab_size + additional_vocab_size rows, stored in two parts. No
    head of its own; the wrapper's has vocab_size rows and is never tied."""

    informational_fields = frozenset({"max_position_embeddings", "norm_after"})
    layer_name = "model.blocks.{i}"
    attention_names = MOLMO2_ATTENTION
    mlp_names = MOLMO2_MLP
    model_names = ModelNames(embed_tokens="model.wte.embedding", final_norm="model.ln_f", embedding_parameter=True)

    num_hidden_layers: LayerCount
    intermediate_size: Width
    hidden_act: Name
    additional_vocab_size: WidthOrZero
    num_key_value_heads: HeadCount
    head_dim: Width
    attention_bias: Flag
    qk_norm_type: Literal["qwen3", "olmo"]  # Molmo2TextConfig.validate_architecture refuses any other
    max_position_embeddings: PositionCount
    norm_after: Flag

    def pre_norms(self) -> tuple[tuple[str, Norm], ...]:
        norm = self.rms_norm()
        return (("attn_norm", norm), ("ff_norm", norm))

    def build_layer(self, index: int, window: int | None) -> Layer:
        heads, kv_heads, head_dim = self.num_attention_heads, self.kv_heads, self.head_dim
        if self.qk_norm_type == "qwen3":
            norms = self.per_head_norms()
        else:
            norms = {"q_norm": self.rms_norm(heads * head_dim), "k_norm": self.rms_norm(kv_heads * head_dim)}
        return self.layer(self.attention(window, o_bias=False, **norms), self.gated_ffn())

    def language_model_spec(self) -> ModelSpec:
        """The layers, the table's vocab_size rows (wte.embedding) and its additional rows apart (wte.new_embedding)."""
        spec = super().language_model_spec()
        extra = (
            (
                Extra(
                    "embedding",
                    "model.wte.new_embedding",
                    LearnedTensor((self.additional_vocab_size, self.hidden_size)),
                ),
            )
            if self.additional_vocab_size
            else ()
        )
        return replace(spec, extras=spec.extras + extra, tie_word_embeddings=False)


@tower(
    "molmo2_vision",
    transformers="Molmo2VisionConfig",
    other_names={
        "image_size": "the released configs name it image_default_input_size (no attribute_map entry)",
        "patch_size": "the released configs name it image_patch_size (no attribute_map entry)",
        "num_position_embeddings": "the released configs name it image_num_pos (no attribute_map entry)",
    },
)
class Molmo2VisionConfig(TowerConfig):
    """configuration_molmo2.py (Molmo2VisionConfig) / Molmo2VisionModel: patch_embedding (a linear over a patch's
    patch_size² · num_channels pixels, biased), a learned position per patch (positional_embedding), layers of
    LayerNorms (attention_norm, ffn_norm), q, k, v, o (num_key_value_heads, head_dim; biased by attention_bias) and a
    biased w1/w2 MLP; no final norm. The released configs name image_size, patch_size and num_position_embeddings
    image_default_input_size, image_patch_size and image_num_pos."""

    informational_fields = frozenset({"image_size"})

    hidden_size: Width
    intermediate_size: Width
    num_hidden_layers: LayerCount
    num_attention_heads: HeadCount
    num_key_value_heads: HeadCount
    head_dim: Width
    hidden_act: Name
    image_size: list[Width] | None = Field(
        min_length=2, max_length=2, validation_alias=AliasChoices("image_size", "image_default_input_size")
    )
    patch_size: Width = Field(validation_alias=AliasChoices("patch_size", "image_patch_size"))
    num_position_embeddings: Width | None = Field(
        validation_alias=AliasChoices("num_position_embeddings", "image_num_pos")
    )
    num_channels: Width
    attention_bias: Flag

    @property
    @derives("num_position_embeddings", "(image_size[0] // patch_size) · (image_size[1] // patch_size)")
    def positions(self) -> int:
        """The learned positions: num_position_embeddings, else one per patch of image_size ([378, 378] if None)."""
        if self.num_position_embeddings is not None:
            return self.num_position_embeddings
        height, width = self.image_size or [378, 378]
        return (height // self.patch_size) * (width // self.patch_size)

    def tower(self, prefix: str) -> Tower:
        hidden, bias = self.hidden_size, self.attention_bias
        heads, kv_heads, head_dim = self.num_attention_heads, self.num_key_value_heads, self.head_dim
        layer_norm = Norm("layernorm", hidden, bias=True)
        layer = Layer(
            prefix + "transformer.resblocks.{i}",
            Attention(hidden, heads, kv_heads, head_dim, head_dim, VIT_ATTENTION, bias, bias, bias, bias),
            DenseFfn(hidden, self.intermediate_size, False, self.hidden_act, VIT_MLP, bias=True),
            (("attention_norm", layer_norm), ("ffn_norm", layer_norm)),
            stack="vision",
        )
        pixels = self.patch_size**2 * self.num_channels
        extras = (
            tower_module(prefix + "patch_embedding", Linear(pixels, hidden, True)),
            tower_module(prefix + "positional_embedding", LearnedTensor((self.positions, hidden))),
        )
        return Tower((layer,) * self.num_hidden_layers, extras, hidden, None)


class Molmo2AdapterConfig(Nested):
    """configuration_molmo2.py (Molmo2AdapterConfig): the pooling attention (reading the features of the
    vision_feature_layer layers side by side) and the projector's sizes; vit_layers in the released configs."""

    vision_feature_layer: list[int] | None = Field(
        None, max_length=1024, validation_alias=AliasChoices("vision_feature_layer", "vit_layers")
    )
    hidden_size: Width = 1152
    num_attention_heads: HeadCount = 16
    num_key_value_heads: HeadCount = 16
    head_dim: Width = 72
    attention_bias: Flag = True
    intermediate_size: Width = 18944
    text_hidden_size: Width = 3584
    mlp_bias: Flag = False

    @property
    def feature_layers(self) -> list[int]:
        """The tower's layers the pooling reads (Molmo2AdapterConfig: [24, 18] when None)."""
        return list(self.vision_feature_layer) if self.vision_feature_layer is not None else [24, 18]


@family(
    "molmo2",
    transformers="Molmo2Config",
    architecture="Molmo2",
    model_class="Molmo2ForConditionalGeneration",
    own_defaults={
        "adapter_config": "the record holds None; __post_init__ builds the block from Molmo2AdapterConfig's defaults"
    },
)
class Molmo2Config(MultimodalConfig):
    """configuration_molmo2.py (Molmo2Config) / Molmo2ForConditionalGeneration: the tower, the adapter (the
    projector: image_pooling_2d, q, k, v reading hidden · len(vision_feature_layer), o back to hidden, biased by
    attention_bias; image_projector, w1 (gate) and w3 (up) hidden → intermediate_size biased by mlp_bias, w2 →
    text_hidden_size without bias), the language model and lm_head (vocab_size rows; never tied: the class ties
    nothing). Each image token pools a few patches by attention over crops whose count the processor decides: no
    image rule (flops with an `image` refuses)."""

    text_model_type = "molmo2_text"
    text_defaults: ClassVar[dict[str, Any]] = {"model_type": "molmo2_text"}
    vision_model_type = "molmo2_vision"
    vision_defaults: ClassVar[dict[str, Any]] = {"model_type": "molmo2_vision"}
    language_model_prefix = "model.transformer."
    lm_head_name = "lm_head"
    vision_prefix = "model.vision_backbone.image_vit."

    adapter_config: Molmo2AdapterConfig = Field(default_factory=lambda: Molmo2AdapterConfig.model_validate({}))

    @model_validator(mode="before")
    @classmethod
    def _legacy_blocks(cls, raw: Any) -> Any:
        """Molmo2Config.__post_init__: vit_config is vision_config's old name; a null adapter_config the defaults."""
        if not isinstance(raw, dict):
            return raw
        raw = dict(raw)
        if raw.get("vision_config") is None and raw.get("vit_config") is not None:
            raw["vision_config"] = raw["vit_config"]
        if "adapter_config" in raw and raw["adapter_config"] is None:
            del raw["adapter_config"]
        return raw

    @model_validator(mode="after")
    def _check_feature_layers(self) -> Molmo2Config:
        # Molmo2Config.validate_architecture: each layer the adapter reads indexes the tower's
        vision = self.vision
        layers = vision.num_hidden_layers if isinstance(vision, Molmo2VisionConfig) else None
        if layers is not None and not all(-layers <= index < layers for index in self.adapter_config.feature_layers):
            raise ValueError(
                f"adapter_config.vision_feature_layer {self.adapter_config.feature_layers} must index the {layers} "
                "layers of vision_config, as transformers requires"
            )
        return self

    def tied(self) -> bool:
        return False

    def image_input(self, tower: Tower) -> ImageInput | None:
        return None

    def wrapped_spec(self) -> ModelSpec:
        spec = getattr(self.text, "language_model_spec", self.text.to_spec)()
        spec = replace(spec, model_type=self.model_type, tie_word_embeddings=False)
        return self.whole(relocate(spec, self.language_model_prefix, self.lm_head_name))

    def projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        adapter, base = self.adapter_config, "model.vision_backbone."
        features = adapter.hidden_size * len(adapter.feature_layers)
        heads, kv_heads, head_dim, bias = (
            adapter.num_attention_heads,
            adapter.num_key_value_heads,
            adapter.head_dim,
            adapter.attention_bias,
        )
        modules = (
            ("image_pooling_2d.wq", Linear(features, heads * head_dim, bias)),
            ("image_pooling_2d.wk", Linear(features, kv_heads * head_dim, bias)),
            ("image_pooling_2d.wv", Linear(features, kv_heads * head_dim, bias)),
            ("image_pooling_2d.wo", Linear(heads * head_dim, adapter.hidden_size, bias)),
            ("image_projector.w1", Linear(adapter.hidden_size, adapter.intermediate_size, adapter.mlp_bias)),
            ("image_projector.w3", Linear(adapter.hidden_size, adapter.intermediate_size, adapter.mlp_bias)),
            ("image_projector.w2", Linear(adapter.intermediate_size, adapter.text_hidden_size)),
        )
        return tuple(projector_module(base + name, module) for name, module in modules)
