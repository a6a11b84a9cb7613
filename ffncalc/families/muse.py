"""Meta's Muse Glimmer: a Gemma-2-style language model with an output gate on its attention (AFMoE's) and weightless
q/k norms, a MoonViT-style tower (Kimi-K2.5's layers after a linear patch embedding and a learned position table),
and an adapter and projection into the text width."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import AliasChoices, Field, model_validator

from ..schema import Flag, HeadCount, LayerCount, Name, PositionCount, Width, derives
from ..spec import Extra, Layer, Linear, ModelSpec, Norm, Projection, Table, names
from ..values import replace
from .blocks import windows_of_layer_types
from .gemma import Gemma2Config
from .multimodal import MultimodalLayers, relocate
from .qwen import TextOfWrapper
from .registry import family, tower
from .towers import Tower, TowerConfig, projector_module, tower_module
from .vision import vit_layer

MUSE_VISION_ATTENTION = names(q="attn.q_proj", k="attn.k_proj", v="attn.v_proj", o="attn.proj")
MUSE_VISION_MLP = names(up="mlp.fc1", down="mlp.fc2")


@family("muse_glimmer_text")
class MuseGlimmerTextConfig(TextOfWrapper, Gemma2Config):
    """configuration_muse_glimmer.py (MuseGlimmerTextConfig) / modeling_muse_glimmer.py (MuseGlimmerTextModel):
    Gemma-2's four norms a layer and gated MLP; AFMoE's attention without its q/k norm weights (qk_norm is a
    weightless RMSNorm) and with its output gate (gate_proj: hidden → heads · head_dim, a sigmoid over the attention's
    output); layer_types by default: full attention on every fourth layer counted back from the last (those have no
    rotary positions), sliding_window on the others; the embedding's norm and the final norm's epsilon aside, a
    weighted final RMSNorm. No head of its own (the wrapper's lm_head)."""

    architecture = "Muse Glimmer"
    config_class = "MuseGlimmerTextConfig"
    default_model_class = "MuseGlimmerTextModel"

    vocab_size: Width = 202048
    hidden_size: Width = 6656
    intermediate_size: Width = 19968
    num_hidden_layers: LayerCount = 52
    num_attention_heads: HeadCount = 32
    num_key_value_heads: HeadCount | None = 2
    head_dim: Width | None = 128
    hidden_act: Name = Field(default="silu", validation_alias=AliasChoices("hidden_activation", "hidden_act"))
    max_position_embeddings: PositionCount = 131072
    tie_word_embeddings: Flag = False
    pad_token_id: int | None = Field(None, strict=True)
    sliding_window: Width | None = 2048

    @derives("layer_types", "full_attention on every fourth layer counted back from the last, sliding the others")
    def window_kinds(self) -> list[str]:
        if self.layer_types is not None:
            return list(self.layer_types)
        last = self.num_hidden_layers - 1
        return ["full_attention" if (last - i) % 4 == 0 else "sliding_attention" for i in range(last + 1)]

    def layer_windows(self) -> list[int | None]:
        return windows_of_layer_types(self.window_kinds(), self.window)

    def build_layer(self, index: int, window: int | None) -> Layer:
        width = self.num_attention_heads * self.resolved_head_dim
        gate = Projection("gate_proj", "self_attn.gate_proj", self.hidden_size, width, component="attention")
        return self.layer(self.attention(window), self.gated_ffn(), self.sandwich_norms(), projections=(gate,))


@tower("muse_glimmer_vision")
class MuseGlimmerVisionConfig(TowerConfig):
    """configuration_muse_glimmer.py (MuseGlimmerVisionConfig) / MuseGlimmerVisionModel: patches of patch_temporal
    frames of patch_size² pixels projected by a linear without bias (patch_embedder.patch_embedding), a learned table
    of pos_emb_height · pos_emb_width positions interpolated to each image (looked up, no matmul), ln_pre, Kimi-K2.5's
    layers (LayerNorms with biases; q, k, v and proj hidden → hidden, biased; a plain biased FFN), windowed within
    pos_emb_height patches a side on window_attention layers (layer_types), ln_post; merge_size² patches are then
    shuffled into one token. Its image processor (GLM-4.1V's smart resize, whose limits are not in config.json) has no
    rule here: the tower is counted by parameter."""

    config_class = "MuseGlimmerVisionConfig"
    informational_fields = frozenset({"max_position_embeddings"})

    hidden_size: Width = 1536
    num_hidden_layers: LayerCount = 50
    num_attention_heads: HeadCount = 16
    intermediate_size: Width = 8960
    hidden_act: Name = "gelu"
    patch_size: Width = 14
    patch_temporal: Width = 2
    merge_size: Width = 2
    pos_emb_height: Width = 32
    pos_emb_width: Width = 32
    max_position_embeddings: Width = 1024
    layer_types: list[Literal["full_attention", "window_attention"]] | None = Field(None, max_length=1 << 12)

    @model_validator(mode="after")
    def _check_heads(self) -> MuseGlimmerVisionConfig:
        if self.hidden_size % self.num_attention_heads:
            raise ValueError(
                f"hidden_size ({self.hidden_size}) is not a multiple of num_attention_heads ({self.num_attention_heads})"
            )
        if self.layer_types is not None and len(self.layer_types) < self.num_hidden_layers:
            raise ValueError(f"layer_types has {len(self.layer_types)} entries for {self.num_hidden_layers} layers")
        return self

    def tower(self, prefix: str) -> Tower:
        hidden = self.hidden_size
        layer = vit_layer(
            prefix + "layers.{i}", hidden, self.num_attention_heads, self.intermediate_size, self.hidden_act,
            attention_names=MUSE_VISION_ATTENTION, ffn_names=MUSE_VISION_MLP, norm_names=("norm1", "norm2"),
            norm_kind="layernorm", bias=True, gated=False,
        )  # fmt: skip
        norm = Norm("layernorm", hidden, bias=True)
        patch = self.patch_temporal * 3 * self.patch_size**2
        extras = (
            tower_module(prefix + "patch_embedder.patch_embedding", Linear(patch, hidden)),
            tower_module(
                prefix + "patch_embedder.position_embedding_table",
                Table(self.pos_emb_height * self.pos_emb_width, hidden),
            ),
            tower_module(prefix + "ln_pre", norm),
            tower_module(prefix + "ln_post", norm),
        )
        return Tower((layer,) * self.num_hidden_layers, extras, hidden * self.merge_size**2, None)


@family("muse_glimmer")
class MuseGlimmerConfig(MultimodalLayers):
    """configuration_muse_glimmer.py / modeling_muse_glimmer.py (MuseGlimmerForConditionalGeneration): the language
    model (model.language_model.), the tower (model.vision_tower.), the adapter (vision_adapter: fc1 out_hidden_size →
    projector_hidden_size and fc2 square, no biases) and vision_projection (→ the text width, no bias; a weightless
    norm after it), and lm_head, tied to the token table only where the config's top level says tie_word_embeddings
    (PreTrainedModel.tie_weights reads the wrapper's config, whose class has no such field: false when absent)."""

    architecture = "Muse Glimmer"
    config_class = "MuseGlimmerConfig"
    default_model_class = "MuseGlimmerForConditionalGeneration"
    text_model_type = "muse_glimmer_text"
    vision_model_type = "muse_glimmer_vision"
    language_model_prefix = "model.language_model."
    vision_prefix = "model.vision_tower."
    lm_head_name = "lm_head"

    undeclared_keys = frozenset({"tie_word_embeddings"})

    vision_config: dict[str, Any] | None = None
    # Not a field of MuseGlimmerConfig: a key the config may carry, which PreTrainedModel.tie_weights reads (absent:
    # false). text_config's own tie_word_embeddings ties nothing.
    tie_word_embeddings: Flag = False
    out_hidden_size: Width = 6144
    projector_hidden_size: Width = 4096
    projector_hidden_act: Name = "gelu"

    def tied(self) -> bool:
        """Whether lm_head is the token table: the top-level tie_word_embeddings key, false when absent."""
        return self.tie_word_embeddings

    def wrapped_spec(self) -> ModelSpec:
        assert isinstance(self.text, MuseGlimmerTextConfig)
        spec = replace(self.text.language_model_spec(), model_type=self.model_type, tie_word_embeddings=self.tied())
        return self.whole(relocate(spec, self.language_model_prefix, self.lm_head_name))

    def projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        inner = self.projector_hidden_size
        return (
            projector_module("model.vision_adapter.fc1", Linear(self.out_hidden_size, inner)),
            projector_module("model.vision_adapter.fc2", Linear(inner, inner)),
            projector_module("model.vision_projection", Linear(inner, text_hidden)),
        )
