"""Llama 3.2 Vision (transformers 5.24, configuration_mllama.py / modeling_mllama.py): a Llama decoder some of whose
layers cross-attend to an image instead of attending to the text, and a two-stage ViT over the image's tiles.

The image reaches the text as cross-attention keys, not as tokens: every cross-attention layer reads the projected
output of the tower, max_num_tiles tiles of (image_size / patch_size)² + 1 positions each (the processor packs every
image into max_num_tiles tiles, padding tiles masked). ffncalc counts a text token's cross-attention over one image's
keys, as it does BLIP's; without an image, MllamaTextModel skips the cross-attention layers whole."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from pydantic import Field, model_validator

from ..schema import HeadCount, LayerCount, LayerIndex, Name, PositionCount, Width, derives, per_config
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
    Parameter,
    PatchEmbedding,
    Table,
    names,
)
from ..values import replace
from .base import DecoderConfig
from .multimodal import MultimodalLayers
from .registry import family, tower
from .towers import Tower, TowerConfig, projector_module, tower_module
from .vision import LLAMA4_VISION_ATTENTION, LLAMA4_VISION_MLP

CROSS_ATTENTION = names(
    q="cross_attn.q_proj",
    k="cross_attn.k_proj",
    v="cross_attn.v_proj",
    o="cross_attn.o_proj",
    q_norm="cross_attn.q_norm",
    k_norm="cross_attn.k_norm",
)
# MllamaTextConfig.__post_init__: the cross-attention layers when the config names none.
DEFAULT_CROSS_ATTENTION_LAYERS = (3, 8, 13, 18, 23, 28, 33, 38)
EXTRA_TOKEN_ROWS = 8  # MllamaTextModel.embed_tokens: vocab_size + 8 rows (the image token among them)


@family(
    "mllama_text_model",
    transformers="MllamaTextConfig",
    architecture="Llama 3.2 Vision",
    model_class="MllamaForCausalLM",
    heads_divide_hidden=False,  # MllamaTextSelfAttention floors hidden_size // num_attention_heads
)
class MllamaTextConfig(DecoderConfig):
    """configuration_mllama.py (MllamaTextConfig) / MllamaTextModel: Llama's layers (no biases, head_dim =
    hidden_size // heads, floored), except at the indices in cross_attention_layers, where a layer holds
    cross_attn (q, k, v, o with RMSNorms over each query and key head; k and v read the projected image) and two
    scalar tanh gates (cross_attn_attn_gate, cross_attn_mlp_gate) instead of self_attn. Its token table has
    vocab_size + 8 rows and its head vocab_size: never tied (no class of the family ties them, whatever
    tie_word_embeddings says)."""

    informational_fields = frozenset({"max_position_embeddings", "pad_token_id"})

    max_position_embeddings: PositionCount
    num_hidden_layers: LayerCount
    intermediate_size: Width
    hidden_act: Name
    num_key_value_heads: HeadCount
    cross_attention_layers: Annotated[list[LayerIndex] | None, Field(max_length=4096)]

    @property
    def token_rows(self) -> int:
        """vocab_size + 8: MllamaTextModel's embed_tokens."""
        return self.vocab_size + EXTRA_TOKEN_ROWS

    @derives("cross_attention_layers", "[3, 8, 13, 18, 23, 28, 33, 38]")
    @per_config
    def cross_layers(self) -> list[int]:
        """The indices whose layer cross-attends (an index past the last layer names none)."""
        listed = self.cross_attention_layers
        return list(DEFAULT_CROSS_ATTENTION_LAYERS if listed is None else listed)

    def build_layer(self, index: int, window: int | None) -> Layer:
        if index not in self.cross_layers():
            return self.layer(self.attention(None), self.gated_ffn())
        cross = self.attention(None, names=CROSS_ATTENTION, **self.per_head_norms())
        gates = tuple(Parameter("other", gate, gate, (1,)) for gate in ("cross_attn_attn_gate", "cross_attn_mlp_gate"))
        return self.layer(None, self.gated_ffn(), cross_attention=cross, parameters=gates)

    def to_spec(self) -> ModelSpec:
        """Llama's model with the longer token table and a head of vocab_size rows, never tied."""
        spec = super().to_spec()
        return replace(spec, vocab_size=self.token_rows, lm_head_rows=self.vocab_size, tie_word_embeddings=False)

    def notes(self) -> list[str]:
        if not any(index < self.num_hidden_layers for index in self.cross_layers()):
            return []
        return [
            "its cross-attention layers read an image's keys, counted per text token as many as the context here "
            "(the wrapper, mllama, counts one image's); a text token without an image skips them whole"
        ]


@tower("mllama_vision_model", transformers="MllamaVisionConfig")
class MllamaVisionConfig(TowerConfig):
    """configuration_mllama.py (MllamaVisionConfig) / MllamaVisionModel: a patch convolution without bias, a class
    token, learned tile embeddings by aspect ratio before and after the local layers (pre_ and
    post_tile_positional_embedding: a table of max_num_tiles · hidden per aspect ratio, and a gate), a gated
    position embedding (a position per patch and the class token, a table of max_num_tiles · positions · hidden per
    aspect ratio, a gate), LayerNorms before and after the local layers; num_hidden_layers local layers
    (transformer.) and num_global_layers gated ones (global_transformer.: gate_attn, gate_ffn), each with LayerNorms,
    q, k, v, o without bias and a biased fc1/fc2 MLP. It hands on vision_output_dim features a position: the last
    layer's and the local layers' at intermediate_layers_indices, concatenated."""

    informational_fields = frozenset({"intermediate_layers_indices"})

    hidden_size: Width
    hidden_act: Name
    num_hidden_layers: LayerCount
    num_global_layers: LayerCount
    attention_heads: HeadCount
    num_channels: Width
    intermediate_size: Width
    vision_output_dim: Width
    image_size: Width
    patch_size: Width
    max_num_tiles: Width
    intermediate_layers_indices: Annotated[list[LayerIndex] | None, Field(max_length=4096)]
    supported_aspect_ratios: Annotated[list[list[Width]] | None, Field(max_length=4096)]

    @model_validator(mode="after")
    def _check_tiles(self) -> MllamaVisionConfig:
        # MllamaVisionConfig.validate_architecture: the default aspect ratios are those of 4 tiles
        if self.supported_aspect_ratios is None and self.max_num_tiles != 4:
            raise ValueError(
                "max_num_tiles must be 4 for the default supported_aspect_ratios, as transformers requires"
            )
        return self

    @property
    @derives("supported_aspect_ratios", "the 8 arrangements of at most 4 tiles")
    def aspect_ratios(self) -> int:
        """The aspect ratios the tile tables hold a row for, besides row 0 (no image): 8 by default."""
        return 8 if self.supported_aspect_ratios is None else len(self.supported_aspect_ratios)

    @property
    def positions(self) -> int:
        """A tile's positions: its patches and the class token, (image_size // patch_size)² + 1."""
        return (self.image_size // self.patch_size) ** 2 + 1

    def encoder_layer(self, name: str, gated: bool) -> Layer:
        """A pre-LN layer: q, k, v, o without bias, a biased fc1/fc2 MLP; the global layers' two scalar gates."""
        hidden, heads = self.hidden_size, self.attention_heads
        head_dim = hidden // heads
        layer_norm = Norm("layernorm", hidden, bias=True)
        gates = tuple(Parameter("vision", gate, gate, (1,)) for gate in ("gate_attn", "gate_ffn")) if gated else ()
        return Layer(
            name,
            Attention(hidden, heads, heads, head_dim, head_dim, LLAMA4_VISION_ATTENTION),
            DenseFfn(hidden, self.intermediate_size, False, self.hidden_act, LLAMA4_VISION_MLP, bias=True),
            (("input_layernorm", layer_norm), ("post_attention_layernorm", layer_norm)),
            stack="vision",
            parameters=gates,
        )

    def tower(self, prefix: str) -> Tower:
        hidden, rows, tiles, positions = self.hidden_size, self.aspect_ratios + 1, self.max_num_tiles, self.positions
        local = self.encoder_layer(prefix + "transformer.layers.{i}", gated=False)
        # the global layers follow the local ones in the vision stack, each stored from index 0 under its module
        global_layer = replace(
            self.encoder_layer(prefix + "global_transformer.layers.{i}", gated=True),
            index_offset=self.num_hidden_layers,
        )
        layer_norm = Norm("layernorm", hidden, bias=True)
        gate = LearnedTensor((1,))
        patches = PatchEmbedding(self.num_channels, (self.patch_size,) * 2, hidden)
        extras = (
            tower_module(prefix + "patch_embedding", patches),
            tower_module(prefix + "class_embedding", LearnedTensor((hidden,))),
            tower_module(prefix + "gated_positional_embedding.embedding", LearnedTensor((positions, hidden))),
            tower_module(prefix + "gated_positional_embedding.gate", gate),
            tower_module(prefix + "gated_positional_embedding.tile_embedding", Table(rows, tiles * positions * hidden)),
            tower_module(prefix + "pre_tile_positional_embedding.embedding", Table(rows, tiles * hidden)),
            tower_module(prefix + "pre_tile_positional_embedding.gate", gate),
            tower_module(prefix + "post_tile_positional_embedding.embedding", Table(rows, tiles * hidden)),
            tower_module(prefix + "post_tile_positional_embedding.gate", gate),
            tower_module(prefix + "layernorm_pre", layer_norm),
            tower_module(prefix + "layernorm_post", layer_norm),
        )
        # No image rule: the layers attend across all of an image's tiles at once (each padded to a multiple of 8
        # positions), which ffncalc's image arithmetic (per tile, or per image) does not state.
        layers = (local,) * self.num_hidden_layers + (global_layer,) * self.num_global_layers
        return Tower(layers, extras, self.vision_output_dim, None)


@family(
    "mllama", transformers="MllamaConfig", architecture="Llama 3.2 Vision", model_class="MllamaForConditionalGeneration"
)
class MllamaConfig(MultimodalLayers):
    """configuration_mllama.py (MllamaConfig) / MllamaForConditionalGeneration: the tower under vision_model., the
    language model under language_model.model. (its head language_model.lm_head, as transformers saves them), and
    multi_modal_projector (vision_output_dim → the text width, biased) over every position the tower hands on. The
    projected positions are the cross-attention layers' keys: one image's, max_num_tiles · ((image_size /
    patch_size)² + 1), whatever the context. MllamaConfig has no tie_word_embeddings: the head is never tied.
    MllamaForCausalLM (architectures) is the language model alone, under model. and lm_head."""

    text_model_type = "mllama_text_model"
    text_defaults: ClassVar[dict[str, Any]] = {"model_type": "mllama_text_model"}
    vision_model_type = "mllama_vision_model"
    vision_defaults: ClassVar[dict[str, Any]] = {"model_type": "mllama_vision_model"}
    vision_prefix = "vision_model."
    text_only_classes = frozenset({"MllamaForCausalLM"})
    informational_fields = frozenset({"image_token_index"})

    vision_config: dict[str, Any] | None
    image_token_index: Annotated[int, Field(strict=True)]

    def image_input(self, tower: Tower) -> ImageInput | None:
        return None

    def projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        """multi_modal_projector: vision_output_dim → the text width, biased, once per position of the image."""
        return (projector_module("multi_modal_projector", Linear(tower.hidden_size, text_hidden, True)),)

    def image_keys(self) -> int | None:
        """The keys one image gives every cross-attention layer: max_num_tiles tiles of their positions."""
        vision = self.vision
        if not isinstance(vision, MllamaVisionConfig):  # pragma: no cover - MllamaConfig always has its tower
            return None
        return vision.max_num_tiles * vision.positions

    def to_spec(self) -> ModelSpec:
        """The whole model (or the language model alone), its cross-attention reading one image's keys."""
        return replace(super().to_spec(), cross_attention_keys=self.image_keys())

    def notes(self) -> list[str]:
        if self.text_only:
            lead = (
                f"{self.model_class()} is the language model alone: transformers builds {self.text.model_type} from "
                "text_config, without the tower"
            )
        else:
            lead = (
                f"{self.model_type} is multimodal: the language model ({self.text.model_type}), the vision tower "
                "(MllamaVisionConfig) and the projector are counted"
            )
        return [
            f"{lead}. Its cross-attention layers read one image's {self.image_keys() or 0:,} keys (max_num_tiles "
            "tiles of patches and a class token), counted per text token; the image reaches the text as those keys, "
            "not as tokens, so flops `image` has no rule for it; a text token without an image skips those layers"
        ]
