"""Cosmos3-Edge (NVIDIA): a SigLIP-2-style tower (a linear patch embedding, a learned position grid resized to each
image), a patch merger over 2 × 2 patches, and a language model of Llama's attention with a plain squared-ReLU MLP
(fc1, fc2); the head is never tied."""

from __future__ import annotations

from typing import Any

from pydantic import model_validator

from ..schema import Flag, HeadCount, LayerCount, Name, PositionCount, Width
from ..spec import DenseFfn, Extra, ImageInput, Layer, Linear, ModelSpec, Norm, Table, names
from ..values import replace
from .base import DecoderConfig
from .multimodal import MultimodalConfig, relocate, saved_spec
from .qwen import TextOfWrapper
from .registry import family, tower
from .towers import Tower, projector_module, tower_module
from .vision import SiglipLayers

COSMOS3_EDGE_ATTENTION = names(q="self_attn.q_proj", k="self_attn.k_proj", v="self_attn.v_proj", o="self_attn.o_proj")
COSMOS3_EDGE_MLP = names(up="mlp.fc1", down="mlp.fc2")

#: conversion_mapping.py's "cosmos3_edge" renamings (transformers 5.24), reverted: the names the checkpoints keep,
#: as (pattern over ".module.", its saved spelling). The language model sits at the top level (no prefix).
SAVED_MODULES = (
    (r"\.self_attn\.q_proj\.", ".self_attn.to_q."),
    (r"\.self_attn\.k_proj\.", ".self_attn.to_k."),
    (r"\.self_attn\.v_proj\.", ".self_attn.to_v."),
    (r"\.self_attn\.o_proj\.", ".self_attn.to_out."),
    (r"\.mlp\.fc1\.", ".mlp.up_proj."),
    (r"\.mlp\.fc2\.", ".mlp.down_proj."),
)


@family(
    "cosmos3_edge_text",
    transformers="Cosmos3EdgeTextConfig",
    architecture="Cosmos3-Edge",
    model_class="Cosmos3EdgeTextModel",
)
class Cosmos3EdgeTextConfig(TextOfWrapper, DecoderConfig):
    """configuration_cosmos3_edge.py (Cosmos3EdgeTextConfig) / modeling_cosmos3_edge.py (Cosmos3EdgeTextModel): Llama's
    attention (head_dim 128, an int: null refused; attention_bias on q, k, v and o), a plain MLP fc1 → fc2 (relu2
    by default, mlp_bias), RMSNorms; multimodal rotary positions (an mrope_section, no weights); no head of its own."""

    attention_names = COSMOS3_EDGE_ATTENTION
    mlp_names = COSMOS3_EDGE_MLP

    num_hidden_layers: LayerCount
    intermediate_size: Width
    tie_word_embeddings: Flag
    num_key_value_heads: HeadCount | None
    mlp_bias: Flag
    attention_bias: Flag
    hidden_act: Name
    head_dim: Width
    max_position_embeddings: PositionCount
    rope_parameters: dict[str, Any] | None

    @model_validator(mode="after")
    def _check_rope(self) -> Cosmos3EdgeTextConfig:
        # Cosmos3EdgeTextConfig.validate_architecture: rope_type "default", three mrope sections summing to head_dim / 2
        rope = self.rope_parameters or {"mrope_section": [24, 20, 20]}  # __post_init__'s default
        if rope.get("rope_type", "default") != "default":
            raise ValueError(f"rope_parameters.rope_type: Cosmos3-Edge requires 'default', got {rope['rope_type']!r}")
        sections = rope.get("mrope_section")
        if not (isinstance(sections, list) and len(sections) == 3 and all(isinstance(s, int) for s in sections)):
            raise ValueError(f"rope_parameters.mrope_section: must be three integers, got {sections!r}")
        if sum(sections) != self.head_dim // 2:
            raise ValueError(
                f"rope_parameters.mrope_section: its sections sum to {sum(sections)}, not head_dim / 2 "
                f"({self.head_dim // 2}); transformers refuses it"
            )
        return self

    def build_layer(self, index: int, window: int | None) -> Layer:
        ffn = DenseFfn(self.hidden_size, self.dense_width, False, self.activation, self.mlp_names, self.mlp_biased)
        return self.layer(self.attention(window), ffn)


@tower("cosmos3_edge_vision", transformers="Cosmos3EdgeVisionConfig")
class Cosmos3EdgeVisionConfig(SiglipLayers):
    """configuration_cosmos3_edge.py (Cosmos3EdgeVisionConfig) / modeling_cosmos3_edge.py (Cosmos3EdgeVisionModel):
    SigLIP 2's NaFlex embeddings (patches of patch_size² pixels projected by a biased linear, a learned grid of
    num_patches positions resized to each image: looked up, no matmul), SigLIP's LayerNorm layers with biases and a
    plain FFN, post_layernorm, no pooling head. Its image processor resizes an image to sides that are multiples of
    patch_size · spatial_merge_size (smart_resize; its min and max pixels are not in config.json)."""

    num_patches: Width
    spatial_merge_size: Width

    def tower(self, prefix: str) -> Tower:
        embeddings = (
            tower_module(
                prefix + "embeddings.patch_embedding",
                Linear(self.num_channels * self.patch_size**2, self.hidden_size, True),
            ),
            tower_module(prefix + "embeddings.position_embedding", Table(self.num_patches, self.hidden_size)),
        )
        merge = self.spatial_merge_size
        image = ImageInput(self.patch_size, "multiple", self.patch_size * merge, merge=merge)
        return self.encoder_tower(prefix, image, embeddings, head=False)


@family(
    "cosmos3_edge",
    transformers="Cosmos3EdgeConfig",
    architecture="Cosmos3-Edge",
    model_class="Cosmos3EdgeForConditionalGeneration",
)
class Cosmos3EdgeConfig(MultimodalConfig):
    """configuration_cosmos3_edge.py / modeling_cosmos3_edge.py (Cosmos3EdgeForConditionalGeneration): the tower
    (model.visual.), the projector (Cosmos3EdgePatchMerger: norm, a LayerNorm with bias over each patch, then
    linear_fc1 over spatial_merge_size² patches side by side → projector_hidden_size and linear_fc2 into the text
    width, both biased, GELU between) and the language model, saved as the checkpoints name them
    (conversion_mapping.py's "cosmos3_edge", reverted: the language model at the top level, q/k/v/o as to_q, to_k,
    to_v, to_out and fc1/fc2 as up_proj/down_proj, in the tower's layers too). Never tied: the class declares no tied
    weights (_tied_weights_keys = {}), whatever tie_word_embeddings says."""

    text_model_type = "cosmos3_edge_text"
    vision_model_type = "cosmos3_edge_vision"
    vision_defaults = {"model_type": "cosmos3_edge_vision"}
    language_model_prefix = ""  # the checkpoints keep it at the top level
    lm_head_name = "lm_head"
    vision_prefix = "model.visual."

    projector_hidden_size: Width

    def tied(self) -> bool:
        """Cosmos3EdgeForConditionalGeneration._tied_weights_keys is empty: the head is its own."""
        return False

    def wrapped_spec(self) -> ModelSpec:
        spec = getattr(self.text, "language_model_spec", self.text.to_spec)()
        spec = replace(spec, model_type=self.model_type, tie_word_embeddings=False)
        return saved_spec(self.whole(relocate(spec, self.language_model_prefix, self.lm_head_name)), SAVED_MODULES)

    def projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        merge = self.vision.spatial_merge_size if isinstance(self.vision, Cosmos3EdgeVisionConfig) else 1
        merged = tower.hidden_size * merge**2
        return (
            tower_module("model.projector.norm", Norm("layernorm", tower.hidden_size, bias=True), "projector"),
            projector_module("model.projector.linear_fc1", Linear(merged, self.projector_hidden_size, True)),
            projector_module("model.projector.linear_fc2", Linear(self.projector_hidden_size, text_hidden, True)),
        )
