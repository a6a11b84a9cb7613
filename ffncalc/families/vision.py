"""Vision towers of multimodal models, counted as the language model is: per layer, by stored name.

A wrapper (``families/multimodal.py``) reads its ``vision_config`` with one of the tower adapters
here, chosen by the config's model_type (``TOWERS`` in ``families/__init__.py``) or else the
wrapper's own, and stores the tower under its prefix; the wrapper adds its projector. A tower's
layers form the "vision" stack: their parameters count under the ``vision`` component, and a
text token never runs them (``ffncalc flops --image`` does).

The towers:
- SigLIP (Gemma 3): a ViT with LayerNorms and biases, a learned position per patch, and an optional
  attention-pooling head;
- Pixtral (Mistral 3): RMSNorms, a gated FFN, no biases, rotary positions;
- the Qwen2.5-VL vision transformer (RMSNorms, gated FFN, fused qkv) and the Qwen3-VL / Qwen3.5 one
  (LayerNorms, plain FFN, a learned position table; Qwen3-VL adds "deepstack" mergers that feed
  intermediate layers to the language model), each with its patch merger;
- the Llama-4 vision encoder: a class token, a pixel-shuffle adapter;
- the Gemma 4 vision encoder: Gemma layers, a table of x and y positions, pooling into soft tokens.
Not yet: Gemma 3n's MobileNet tower and the audio towers (Gemma 3n, Gemma 4); their wrappers say so.
"""

from __future__ import annotations

from dataclasses import replace

from pydantic import AliasChoices, Field

from ..schema import Flag, HeadCount, HFConfig, LayerCount, LayerIndex, Name, Width
from ..spec import (
    Attention,
    CheckpointExtra,
    DenseFfn,
    Extra,
    ImageInput,
    Layer,
    LearnedTensor,
    Linear,
    ModelSpec,
    Names,
    Norm,
    NormKind,
    PatchEmbedding,
    StoredTensor,
    Table,
    names,
)
from .multimodal import Tower, projector_module, tower_module


class TowerConfig(HFConfig):
    """A vision config: its fields and transformers' defaults; ``tower(prefix)`` builds it under PREFIX."""

    model_type: Name = ""

    def tower(self, prefix: str) -> Tower:  # pragma: no cover - every tower overrides it
        raise NotImplementedError

    def to_spec(self) -> ModelSpec:  # pragma: no cover - towers are counted inside their wrapper
        raise NotImplementedError(f"{self.config_class} is counted inside a multimodal model")


def vit_layer(
    name: str,
    hidden: int,
    heads: int,
    intermediate: int,
    activation: str,
    *,
    attention_names: Names,
    ffn_names: Names,
    norm_names: tuple[str, str],
    norm_kind: NormKind,
    bias: bool,
    gated: bool,
) -> Layer:
    """One pre-norm encoder layer of a vision transformer: bidirectional attention over the patches, then an FFN."""
    head_dim = hidden // heads
    attention = Attention(hidden, heads, heads, head_dim, head_dim, attention_names, bias, bias, bias, bias)
    ffn = DenseFfn(hidden, intermediate, gated, activation, ffn_names, bias)
    layer_norm = Norm(norm_kind, hidden, bias=norm_kind == "layernorm")
    return Layer(name, attention, ffn, ((norm_names[0], layer_norm), (norm_names[1], layer_norm)), stack="vision")


# --- SigLIP (Gemma 3) ----------------------------------------------------------------------------

SIGLIP_ATTENTION = names(q="self_attn.q_proj", k="self_attn.k_proj", v="self_attn.v_proj", o="self_attn.out_proj")
SIGLIP_MLP = names(up="mlp.fc1", down="mlp.fc2")


class SiglipVisionConfig(TowerConfig):
    """configuration_siglip.py / modeling_siglip.py (SiglipVisionModel): a patch convolution with a bias, a
    learned position per patch, LayerNorm encoder layers with biases, a final LayerNorm and, with
    vision_use_head, an attention-pooling head (a probe token, nn.MultiheadAttention, an MLP)."""

    config_class = "SiglipVisionConfig"

    hidden_size: Width = 768
    intermediate_size: Width = 3072
    num_hidden_layers: LayerCount = 12
    num_attention_heads: HeadCount = 12
    num_channels: Width = 3
    image_size: Width = 224
    patch_size: Width = 16
    hidden_act: Name = "gelu_pytorch_tanh"
    vision_use_head: Flag = True

    def tower(self, prefix: str) -> Tower:
        hidden, inner = self.hidden_size, self.intermediate_size
        layer = vit_layer(
            prefix + "encoder.layers.{i}", hidden, self.num_attention_heads, inner, self.hidden_act,
            attention_names=SIGLIP_ATTENTION, ffn_names=SIGLIP_MLP, norm_names=("layer_norm1", "layer_norm2"),
            norm_kind="layernorm", bias=True, gated=False,
        )  # fmt: skip
        patches = (self.image_size // self.patch_size) ** 2
        layer_norm = Norm("layernorm", hidden, bias=True)
        extras = [
            tower_module(prefix + "embeddings.patch_embedding", PatchEmbedding(self.num_channels, (self.patch_size,) * 2, hidden, True)),
            tower_module(prefix + "embeddings.position_embedding", Table(patches, hidden)),
            tower_module(prefix + "post_layernorm", layer_norm),
        ]
        if self.vision_use_head:  # its pooled output feeds no language model: left out of an image's FLOPs
            head = prefix + "head."
            extras += [
                tower_module(head + name, module, runs="not_generating")
                for name, module in (
                    ("probe", LearnedTensor((1, 1, hidden))),
                    ("attention.in_proj_weight", LearnedTensor((3 * hidden, hidden), matmul=True)),
                    ("attention.in_proj_bias", LearnedTensor((3 * hidden,))),
                    ("attention.out_proj", Linear(hidden, hidden, True)),
                    ("layernorm", layer_norm),
                    ("mlp.fc1", Linear(hidden, inner, True)),
                    ("mlp.fc2", Linear(inner, hidden, True)),
                )
            ]
        image = ImageInput(self.patch_size, "fixed", self.image_size)
        return Tower((layer,) * self.num_hidden_layers, tuple(extras), hidden, image)


# --- Pixtral (Mistral 3) -------------------------------------------------------------------------

PIXTRAL_ATTENTION = names(q="attention.q_proj", k="attention.k_proj", v="attention.v_proj", o="attention.o_proj")
PIXTRAL_FFN = names(gate="feed_forward.gate_proj", up="feed_forward.up_proj", down="feed_forward.down_proj")


class PixtralVisionConfig(TowerConfig):
    """configuration_pixtral.py / modeling_pixtral.py: a patch convolution without bias, an RMSNorm before the
    layers (ln_pre), RMSNorm layers with a gated FFN and no biases; head_dim = hidden_size // heads."""

    config_class = "PixtralVisionConfig"

    hidden_size: Width = 1024
    intermediate_size: Width = 4096
    num_hidden_layers: LayerCount = 24
    num_attention_heads: HeadCount = 16
    num_channels: Width = 3
    image_size: Width = 1024
    patch_size: Width = 16
    hidden_act: Name = "gelu"

    def tower(self, prefix: str) -> Tower:
        hidden = self.hidden_size
        layer = vit_layer(
            prefix + "transformer.layers.{i}", hidden, self.num_attention_heads, self.intermediate_size, self.hidden_act,
            attention_names=PIXTRAL_ATTENTION, ffn_names=PIXTRAL_FFN, norm_names=("attention_norm", "ffn_norm"),
            norm_kind="rmsnorm", bias=False, gated=True,
        )  # fmt: skip
        extras = (
            tower_module(prefix + "patch_conv", PatchEmbedding(self.num_channels, (self.patch_size,) * 2, hidden)),
            tower_module(prefix + "ln_pre", Norm("rmsnorm", hidden)),
        )
        image = ImageInput(self.patch_size, "longest_edge", self.image_size)
        return Tower((layer,) * self.num_hidden_layers, extras, hidden, image)


# --- Qwen-VL --------------------------------------------------------------------------------------

QWEN_VL_ATTENTION = names(q="attn.qkv", k="attn.qkv", v="attn.qkv", o="attn.proj")
QWEN25_VL_MLP = names(gate="mlp.gate_proj", up="mlp.up_proj", down="mlp.down_proj")
QWEN3_VL_MLP = names(up="mlp.linear_fc1", down="mlp.linear_fc2")


class _QwenVisionFields(TowerConfig):
    """The fields the Qwen vision configs share (``num_heads`` and ``depth`` are also read as num_attention_heads
    and num_hidden_layers, their attribute_map)."""

    depth: LayerCount = Field(32, validation_alias=AliasChoices("depth", "num_hidden_layers"))
    hidden_size: Width = 3584
    hidden_act: Name = "silu"
    intermediate_size: Width = 3420
    num_heads: HeadCount = Field(16, validation_alias=AliasChoices("num_heads", "num_attention_heads"))
    in_channels: Width = 3
    patch_size: Width = 14
    spatial_merge_size: Width = 2
    temporal_patch_size: Width = 2
    out_hidden_size: Width = 3584

    def patch_embedding(self, bias: bool) -> PatchEmbedding:
        """A 3-D convolution over temporal_patch_size frames of patch_size² pixels (an image is repeated in time)."""
        return PatchEmbedding(self.in_channels, (self.temporal_patch_size, self.patch_size, self.patch_size), self.hidden_size, bias)

    def image_input(self, window_units: int | None = None) -> ImageInput:
        """smart_resize: each side rounded to a multiple of patch_size · spatial_merge_size (within the processor's
        min_pixels and max_pixels, which are not in config.json); merge² patches make one token."""
        factor = self.patch_size * self.spatial_merge_size
        return ImageInput(self.patch_size, "multiple", factor, merge=self.spatial_merge_size, window_units=window_units)

    @property
    def merged_width(self) -> int:
        """The merger reads spatial_merge_size² neighbouring patches side by side: hidden · merge²."""
        return self.hidden_size * self.spatial_merge_size**2


class Qwen25VLVisionConfig(_QwenVisionFields):
    """configuration_qwen2_5_vl.py (Qwen2_5_VLVisionConfig) / modeling_qwen2_5_vl.py: RMSNorm blocks, fused qkv
    with bias, a gated FFN with biases; window attention except in fullatt_block_indexes (no parameter
    effect); the merger: RMSNorm (ln_q), then mlp.0 (merged → merged) and mlp.2 (merged → out_hidden_size)."""

    config_class = "Qwen2_5_VLVisionConfig"
    informational_fields = frozenset({"window_size", "fullatt_block_indexes", "tokens_per_second"})

    window_size: Width = 112
    fullatt_block_indexes: list[LayerIndex] = [7, 15, 23, 31]

    def tower(self, prefix: str) -> Tower:
        layer = vit_layer(
            prefix + "blocks.{i}", self.hidden_size, self.num_heads, self.intermediate_size, self.hidden_act,
            attention_names=QWEN_VL_ATTENTION, ffn_names=QWEN25_VL_MLP, norm_names=("norm1", "norm2"),
            norm_kind="rmsnorm", bias=True, gated=True,
        )  # fmt: skip
        merged = self.merged_width
        extras = (
            tower_module(prefix + "patch_embed.proj", self.patch_embedding(bias=False)),
            tower_module(prefix + "merger.ln_q", Norm("rmsnorm", self.hidden_size), "projector"),
            projector_module(prefix + "merger.mlp.0", Linear(merged, merged, True)),
            projector_module(prefix + "merger.mlp.2", Linear(merged, self.out_hidden_size, True)),
        )
        # Layers outside fullatt_block_indexes attend within windows of window_size pixels (in merged units).
        units = self.window_size // self.spatial_merge_size // self.patch_size
        windowed = replace(layer, attention=replace(layer.attention, window=(units * self.spatial_merge_size) ** 2))
        layers = tuple(layer if i in self.fullatt_block_indexes else windowed for i in range(self.depth))
        return Tower(layers, extras, self.out_hidden_size, self.image_input(window_units=units))


class Qwen35VisionConfig(_QwenVisionFields):
    """configuration_qwen3_5.py (Qwen3_5VisionConfig) / modeling_qwen3_5.py: a patch convolution with bias, a
    learned position table (num_position_embeddings), LayerNorm blocks with fused qkv and a plain FFN, all with
    biases; the merger: LayerNorm (hidden), linear_fc1 (merged → merged), linear_fc2 (merged → out_hidden_size)."""

    config_class = "Qwen3_5VisionConfig"

    depth: LayerCount = Field(27, validation_alias=AliasChoices("depth", "num_hidden_layers"))
    hidden_size: Width = 1152
    hidden_act: Name = "gelu_pytorch_tanh"
    intermediate_size: Width = 4304
    patch_size: Width = 16
    num_position_embeddings: Width = 2304

    def merger(self, name: str, norm_width: int) -> tuple[Extra, ...]:
        """A patch merger: LayerNorm over NORM_WIDTH, then merged → merged → out_hidden_size, with biases."""
        merged = self.merged_width
        return (
            tower_module(name + ".norm", Norm("layernorm", norm_width, bias=True), "projector"),
            projector_module(name + ".linear_fc1", Linear(merged, merged, True)),
            projector_module(name + ".linear_fc2", Linear(merged, self.out_hidden_size, True)),
        )

    def tower(self, prefix: str) -> Tower:
        layer = vit_layer(
            prefix + "blocks.{i}", self.hidden_size, self.num_heads, self.intermediate_size, self.hidden_act,
            attention_names=QWEN_VL_ATTENTION, ffn_names=QWEN3_VL_MLP, norm_names=("norm1", "norm2"),
            norm_kind="layernorm", bias=True, gated=False,
        )  # fmt: skip
        extras = (
            tower_module(prefix + "patch_embed.proj", self.patch_embedding(bias=True)),
            tower_module(prefix + "pos_embed", Table(self.num_position_embeddings, self.hidden_size)),
            *self.merger(prefix + "merger", self.hidden_size),
            *self.deepstack(prefix),
        )
        return Tower((layer,) * self.depth, extras, self.out_hidden_size, self.image_input())

    def deepstack(self, prefix: str) -> tuple[Extra, ...]:
        return ()


class Qwen35MoeVisionConfig(Qwen35VisionConfig):
    """configuration_qwen3_5_moe.py (Qwen3_5MoeVisionConfig): the same tower."""

    config_class = "Qwen3_5MoeVisionConfig"


class Qwen3VLVisionConfig(Qwen35VisionConfig):
    """configuration_qwen3_vl.py (Qwen3VLVisionConfig): Qwen3.5's tower, plus one "deepstack" merger for each of
    deepstack_visual_indexes, whose LayerNorm reads the merged width (use_postshuffle_norm)."""

    config_class = "Qwen3VLVisionConfig"

    deepstack_visual_indexes: list[LayerIndex] = [8, 16, 24]

    def deepstack(self, prefix: str) -> tuple[Extra, ...]:
        mergers: tuple[Extra, ...] = ()
        for j in range(len(self.deepstack_visual_indexes)):
            mergers += self.merger(f"{prefix}deepstack_merger_list.{j}", self.merged_width)
        return mergers


class Qwen3VLMoeVisionConfig(Qwen3VLVisionConfig):
    """configuration_qwen3_vl_moe.py (Qwen3VLMoeVisionConfig): the same tower."""

    config_class = "Qwen3VLMoeVisionConfig"


# --- Llama 4 --------------------------------------------------------------------------------------

LLAMA4_VISION_ATTENTION = names(q="self_attn.q_proj", k="self_attn.k_proj", v="self_attn.v_proj", o="self_attn.o_proj")
LLAMA4_VISION_MLP = names(up="mlp.fc1", down="mlp.fc2")


class Llama4VisionConfig(TowerConfig):
    """configuration_llama4.py (Llama4VisionConfig) / modeling_llama4.py: patches unfolded and projected by one
    linear without bias, a class token and a learned position per patch (+1 for the class token), LayerNorms
    before and after the layers, LayerNorm layers with biases and a plain FFN; the pixel-shuffle adapter
    (vision_adapter.mlp: fc1 intermediate_size → projector_input_dim, fc2 projector_output_dim → itself,
    no biases) hands vision_output_dim-wide features to the wrapper's projector."""

    config_class = "Llama4VisionConfig"
    informational_fields = frozenset({"pixel_shuffle_ratio", "vision_feature_select_strategy"})

    hidden_size: Width = 768
    hidden_act: Name = "gelu"
    num_hidden_layers: LayerCount = 34
    num_attention_heads: HeadCount = 16
    num_channels: Width = 3
    intermediate_size: Width = 5632
    vision_output_dim: Width = 7680
    image_size: Width = 448
    patch_size: Width = 14
    pixel_shuffle_ratio: float = 0.5
    projector_input_dim: Width = 4096
    projector_output_dim: Width = 4096
    multi_modal_projector_bias: Flag = False

    def tower(self, prefix: str) -> Tower:
        hidden = self.hidden_size
        layer = vit_layer(
            prefix + "model.layers.{i}", hidden, self.num_attention_heads, self.intermediate_size, self.hidden_act,
            attention_names=LLAMA4_VISION_ATTENTION, ffn_names=LLAMA4_VISION_MLP,
            norm_names=("input_layernorm", "post_attention_layernorm"), norm_kind="layernorm", bias=True, gated=False,
        )  # fmt: skip
        patches = (self.image_size // self.patch_size) ** 2
        layer_norm = Norm("layernorm", hidden, bias=True)
        extras = (
            tower_module(prefix + "patch_embedding.linear", Linear(self.num_channels * self.patch_size**2, hidden)),
            tower_module(prefix + "class_embedding", LearnedTensor((hidden,))),
            tower_module(prefix + "positional_embedding_vlm", LearnedTensor((patches + 1, hidden))),
            tower_module(prefix + "layernorm_pre", layer_norm),
            tower_module(prefix + "layernorm_post", layer_norm),
            # after pixel shuffle: one token for every (1 / pixel_shuffle_ratio)² patches
            tower_module(prefix + "vision_adapter.mlp.fc1", Linear(self.intermediate_size, self.projector_input_dim), runs="per_image_token"),
            tower_module(prefix + "vision_adapter.mlp.fc2", Linear(self.projector_output_dim, self.projector_output_dim), runs="per_image_token"),
        )
        merge = round(1 / self.pixel_shuffle_ratio)
        image = ImageInput(self.patch_size, "tiles", self.image_size, merge=merge, extra_tokens=1)
        return Tower((layer,) * self.num_hidden_layers, extras, self.vision_output_dim, image)


# --- Gemma 4 ----------------------------------------------------------------------------------------

GEMMA4_VISION_ATTENTION = names(
    q="self_attn.q_proj.linear", k="self_attn.k_proj.linear", v="self_attn.v_proj.linear", o="self_attn.o_proj.linear",
    q_norm="self_attn.q_norm", k_norm="self_attn.k_norm",
)  # fmt: skip
GEMMA4_VISION_MLP = names(gate="mlp.gate_proj.linear", up="mlp.up_proj.linear", down="mlp.down_proj.linear")
GEMMA4_VISION_NORMS = ("input_layernorm", "post_attention_layernorm", "pre_feedforward_layernorm", "post_feedforward_layernorm")


class Gemma4VisionConfig(TowerConfig):
    """configuration_gemma4.py (Gemma4VisionConfig) / modeling_gemma4.py (Gemma4VisionModel): patches of patch_size²
    pixels projected by one linear without bias, a learned table of x and y positions [2, position_embedding_size,
    hidden], Gemma layers (four RMSNorms, per-head q/k RMSNorms, v normed without a weight, a gated FFN), every
    linear wrapped in a Gemma4ClippableLinear without bias (attention_bias has no effect). With use_clipped_linears
    each linear also saves four clipping bounds; with standardize the model saves std_bias and std_scale."""

    config_class = "Gemma4VisionConfig"
    informational_fields = frozenset({"max_position_embeddings", "attention_bias"})

    hidden_size: Width = 768
    intermediate_size: Width = 3072
    num_hidden_layers: LayerCount = 16
    num_attention_heads: HeadCount = 12
    num_key_value_heads: HeadCount = 12
    head_dim: Width = 64
    hidden_activation: Name = "gelu_pytorch_tanh"
    pooling_kernel_size: Width = 3
    patch_size: Width = 16
    position_embedding_size: Width = 10240
    use_clipped_linears: Flag = False
    standardize: Flag = False

    def tower(self, prefix: str) -> Tower:
        hidden, heads, kv_heads, head_dim = self.hidden_size, self.num_attention_heads, self.num_key_value_heads, self.head_dim
        head_norm = Norm("rmsnorm", head_dim)
        attention = Attention(hidden, heads, kv_heads, head_dim, head_dim, GEMMA4_VISION_ATTENTION, q_norm=head_norm, k_norm=head_norm)
        ffn = DenseFfn(hidden, self.intermediate_size, True, self.hidden_activation, GEMMA4_VISION_MLP)
        norms = tuple((name, Norm("rmsnorm", hidden)) for name in GEMMA4_VISION_NORMS)
        layer = Layer(prefix + "encoder.layers.{i}", attention, ffn, norms, stack="vision")
        extras = (
            tower_module(prefix + "patch_embedder.input_proj", Linear(3 * self.patch_size**2, hidden)),
            tower_module(
                prefix + "patch_embedder.position_embedding_table", LearnedTensor((2, self.position_embedding_size, hidden))
            ),
        )
        saved: list[CheckpointExtra] = []
        if self.use_clipped_linears:
            bounds = tuple(
                StoredTensor(f"{prefix}encoder.layers.{{i}}.{module}.{bound}", ())
                for module in ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj",
                               "mlp.gate_proj", "mlp.up_proj", "mlp.down_proj")
                for bound in ("input_min", "input_max", "output_min", "output_max")
            )  # fmt: skip
            reason = "use_clipped_linears: each linear's clipping bounds, saved as buffers"
            saved.append(CheckpointExtra("clipping bounds", reason, bounds, tuple(range(self.num_hidden_layers)), buffer=True))
        if self.standardize:
            std = (StoredTensor(prefix + "std_bias", (hidden,)), StoredTensor(prefix + "std_scale", (hidden,)))
            saved.append(CheckpointExtra("standardization", "standardize: the output's bias and scale, saved as buffers", std, buffer=True))
        # The processor pads every image to max_soft_tokens · pooling_kernel_size² patches, all computed; the pooler
        # averages each k × k of them into one soft token.
        k = self.pooling_kernel_size
        image = ImageInput(self.patch_size, "budget", GEMMA4_SOFT_TOKENS * k * k, merge=k)
        return Tower((layer,) * self.num_hidden_layers, extras, hidden, image, tuple(saved))


GEMMA4_SOFT_TOKENS = 280  # Gemma4ImageProcessor.max_soft_tokens, unless the wrapper's config says otherwise

