"""Ovis2 (AIDC-AI; transformers 5.24, modeling_ovis2.py): a language model (Qwen2's by default) around an RMSNorm
vision transformer whose head turns each merged patch into a probability over a visual vocabulary, and a visual
embedding table that the probabilities multiply (a soft lookup) into the language model's width."""

from __future__ import annotations

from ..schema import Flag, HeadCount, LayerCount, Name, Width
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
from .multimodal import MultimodalConfig
from .registry import family, tower
from .towers import Tower, TowerConfig, tower_module

OVIS2_ATTENTION = names(q="attention.q_proj", k="attention.k_proj", v="attention.v_proj", o="attention.out_proj")
OVIS2_MLP = names(gate="ffn.gate_proj", up="ffn.up_proj", down="ffn.down_proj")


@tower("ovis2_vision", transformers="Ovis2VisionConfig")
class Ovis2VisionConfig(TowerConfig):
    """configuration_ovis2.py (Ovis2VisionConfig) / Ovis2VisionModel, under transformer.: a patch convolution with bias,
    an RMSNorm, a learned position per patch of an image_size square; layers of RMSNorms (rms_norm1, rms_norm2),
    attention (q, k, v, out_proj; biased with qkv_bias) and a gated MLP (biased with mlp_bias); a final RMSNorm. Then
    hidden_stride² patches side by side pass head_linear (no bias) into vocab_size − num_visual_indicator_tokens
    logits and head_norm (a LayerNorm with bias over them). The positions fit image_size only: every image (or crop)
    the processor hands it is image_size square."""

    hidden_size: Width
    intermediate_size: Width
    num_hidden_layers: LayerCount
    num_attention_heads: HeadCount
    num_channels: Width
    image_size: Width
    patch_size: Width
    qkv_bias: Flag
    mlp_bias: Flag
    hidden_act: Name
    vocab_size: Width
    hidden_stride: Width
    num_visual_indicator_tokens: Width

    @property
    def visual_logits(self) -> int:
        """head_linear's outputs: vocab_size − num_visual_indicator_tokens."""
        return self.vocab_size - self.num_visual_indicator_tokens

    def tower(self, prefix: str) -> Tower:
        hidden, heads, bias = self.hidden_size, self.num_attention_heads, self.qkv_bias
        head_dim = hidden // heads
        attention = Attention(hidden, heads, heads, head_dim, head_dim, OVIS2_ATTENTION, bias, bias, bias, bias)
        ffn = DenseFfn(hidden, self.intermediate_size, True, self.hidden_act, OVIS2_MLP, self.mlp_bias)
        norm = Norm("rmsnorm", hidden)
        body = prefix + "transformer."
        layer = Layer(
            body + "encoder.layers.{i}", attention, ffn, (("rms_norm1", norm), ("rms_norm2", norm)), stack="vision"
        )
        side = self.image_size // self.patch_size
        stride = self.hidden_stride
        merged = stride**2 * hidden
        extras = (
            tower_module(
                body + "embeddings.patch_embedding",
                PatchEmbedding(self.num_channels, (self.patch_size,) * 2, hidden, True),
            ),
            tower_module(body + "embeddings.rms_norm", norm),
            tower_module(body + "embeddings.position_embedding", Table(side**2, hidden)),
            tower_module(body + "rms_norm", norm),
            tower_module(prefix + "head_linear", Linear(merged, self.visual_logits), runs="per_image_token"),
            tower_module(
                prefix + "head_norm", Norm("layernorm", self.visual_logits, bias=True), runs="per_image_token"
            ),
        )
        # Each side of patches is padded to a multiple of hidden_stride before the merge (Ovis2VisionModel.forward).
        tokens = (-(-side // stride)) ** 2
        image = ImageInput(self.patch_size, "fixed", self.image_size, merge=stride, pooled_tokens=tokens)
        return Tower((layer,) * self.num_hidden_layers, extras, merged, image)


@family("ovis2", transformers="Ovis2Config", architecture="Ovis2", model_class="Ovis2ForConditionalGeneration")
class Ovis2Config(MultimodalConfig):
    """configuration_ovis2.py / Ovis2ForConditionalGeneration: the tower under model.vision_tower., the language model
    (AutoModel of text_config, Qwen2's by default) under model.language_model., model.visual_embeddings_table
    [vision vocab_size, hidden_size] (an nn.Embedding the tower's probabilities multiply) and lm_head
    [vocab_size, hidden_size]: both the wrapper's own fields, not text_config's. tie_word_embeddings (default true)
    makes lm_head the token table."""

    text_model_type = "qwen2"
    text_defaults = {"model_type": "qwen2"}
    vision_model_type = "ovis2_vision"
    vision_defaults = {"num_visual_indicator_tokens": 5}
    language_model_prefix = "model.language_model."
    vision_prefix = "model.vision_tower."
    lm_head_name = "lm_head"

    vocab_size: Width
    hidden_size: Width

    def projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        """The visual embedding table, multiplied by each image token's probabilities: 2 · vision vocab · hidden."""
        rows = self.vision.vocab_size if isinstance(self.vision, Ovis2VisionConfig) else 0
        table = LearnedTensor((rows, self.hidden_size), matmul=True)
        return (Extra("other", "model.visual_embeddings_table.weight", table, runs="per_image_token"),)

    def wrapped_spec(self) -> ModelSpec:
        """Untied, lm_head is the wrapper's vocab_size × hidden_size, whatever text_config's table is."""
        spec = super().wrapped_spec()
        if spec.tie_word_embeddings:
            return spec
        return replace(spec, lm_head_rows=self.vocab_size, lm_head_dim=self.hidden_size)
