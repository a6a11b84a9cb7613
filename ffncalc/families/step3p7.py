"""Step 3.7 (StepFun; transformers 5.24, configuration_step3p7.py / modeling_step3p7.py): a ViT with layer scale and two
strided convolutions after it, a linear projector, and a MoE language model whose attention gates each head's output
(g_proj) and whose sliding-window layers may have fewer heads.

Its checkpoints keep the original names, which transformers renames on load and back on save
(conversion_mapping.py's "step3p7" and "step3p5_vision"): model.layers. with the MoE under moe. (gate, router_bias,
gate_proj, up_proj and down_proj stacked over the experts) and the shared expert under share_expert., vision_model.
with PyTorch's fused in_proj_weight, and vit_large_projector. ffncalc names them so."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import AliasChoices, Field, model_validator

from ..schema import ExpertCount, Flag, HeadCount, LayerCount, Name, PositionCount, Width, derives, per_config
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
    Norm,
    Parameter,
    PatchEmbedding,
    Projection,
    StoredTensor,
    names,
)
from ..values import replace
from .base import DecoderConfig
from .multimodal import MultimodalLayers, relocate
from .qwen import TextOfWrapper
from .registry import family, tower
from .towers import Tower, TowerConfig, projector_module, tower_module

STEP_MOE = names(router="moe.gate", experts="moe")
STEP_EXPERT = names(gate="gate_proj", up="up_proj", down="down_proj")
STEP_SHARED = names(gate="share_expert.gate_proj", up="share_expert.up_proj", down="share_expert.down_proj")
# PyTorch's nn.MultiheadAttention layout, as the original checkpoints store the tower's attention: q, k and v fused in
# one raw tensor, in_proj_weight (its bias in_proj_bias, a parameter of the layer), and out_proj.weight (its bias too).
VISION_ATTENTION = names(
    q="attn.in_proj_weight", k="attn.in_proj_weight", v="attn.in_proj_weight", o="attn.out_proj.weight", parameters=True
)
VISION_MLP = names(up="mlp.c_fc", down="mlp.c_proj")


@family(
    "step3p5",
    transformers="Step3p7TextConfig",
    architecture="Step 3.7",
    model_class="Step3p7TextModel",
    heads_divide_hidden=False,  # head_dim is its own field
    routing=("num_experts_per_tok", "n_routed_experts"),
)
class Step3p7TextConfig(TextOfWrapper, DecoderConfig):
    """configuration_step3p7.py (Step3p7TextConfig, model_type step3p5) / Step3p7TextModel: q, k, v, o (biased by
    attention_bias) with RMSNorms over each query and key head and g_proj, a sigmoid gate per head (hidden_size →
    heads); layers whose layer_types entry is sliding_attention attend within sliding_window with
    num_sliding_attention_heads heads (per_layer_config). mlp_layer_types (default: dense for layers 0-2, sparse
    after) picks a SwiGLU MLP of intermediate_size or the MoE: a router over n_routed_experts with a bias buffer
    (router_bias), num_experts_per_tok experts of moe_intermediate_size a token (no biases), and a shared expert of
    share_expert_dim (biased, as the dense MLP, by mlp_bias). No head of its own (the wrapper's lm_head); the released
    configs' multi-token-prediction layers are not built (transformers drops them on load)."""

    informational_fields = frozenset({"max_position_embeddings", "pad_token_id", "hidden_act"})
    moe_names = STEP_MOE
    expert_names = STEP_EXPERT

    num_hidden_layers: LayerCount
    intermediate_size: Width
    num_key_value_heads: HeadCount
    head_dim: Width
    max_position_embeddings: PositionCount
    num_experts_per_tok: ExpertCount
    # num_local_experts is a field of its own that attribute_map sends to n_routed_experts, whose default is then
    # assigned after it: alone it changes nothing (Step3p7TextConfig(num_local_experts=7).n_routed_experts is 288)
    n_routed_experts: ExpertCount
    moe_intermediate_size: Width
    share_expert_dim: Width
    sliding_window: Width | None
    num_sliding_attention_heads: HeadCount | None
    attention_bias: Flag
    mlp_bias: Flag
    layer_types: Annotated[list[Literal["full_attention", "sliding_attention"]] | None, Field(max_length=4096)]
    mlp_layer_types: Annotated[list[Literal["dense", "sparse"]] | None, Field(max_length=4096)]
    hidden_act: Name  # Step3p7TextConfig sets silu whatever the config says (its SwiGLU is inline)

    @model_validator(mode="after")
    def _check_lists(self) -> Step3p7TextConfig:
        for field in ("layer_types", "mlp_layer_types"):
            entries = getattr(self, field)
            if entries is not None and len(entries) != self.num_hidden_layers:
                raise ValueError(f"{field} has {len(entries)} entries for {self.num_hidden_layers} layers")
        return self

    @property
    def activation(self) -> str:
        return "silu"

    @derives("mlp_layer_types", "dense for layers 0-2, sparse after")
    @per_config
    def mlp_kinds(self) -> list[str]:
        if self.mlp_layer_types is not None:
            return list(self.mlp_layer_types)
        return ["sparse" if index >= 3 else "dense" for index in range(self.num_hidden_layers)]

    @derives("layer_types", "full_attention in every layer")
    @per_config
    def attention_kinds(self) -> list[str]:
        return list(self.layer_types) if self.layer_types is not None else ["full_attention"] * self.num_hidden_layers

    @property
    @derives("num_sliding_attention_heads", "num_attention_heads")
    def sliding_heads(self) -> int:
        return self.num_sliding_attention_heads or self.num_attention_heads

    def layer_windows(self) -> list[int | None]:
        return [self.sliding_window if kind == "sliding_attention" else None for kind in self.attention_kinds()]

    def unused_fields(self) -> set[str]:
        kinds = set(self.mlp_kinds())
        sparse = {"n_routed_experts", "num_experts_per_tok", "moe_intermediate_size", "share_expert_dim"}
        return (set() if "dense" in kinds else {"intermediate_size"}) | (set() if "sparse" in kinds else sparse)

    def build_layer(self, index: int, window: int | None) -> Layer:
        sliding = self.attention_kinds()[index] == "sliding_attention"
        heads = self.sliding_heads if sliding else self.num_attention_heads
        attention = self.attention(window, num_heads=heads, **self.per_head_norms())
        gate = Projection("g", "self_attn.g_proj", self.hidden_size, heads, component="attention")
        if self.mlp_kinds()[index] == "dense":
            ffn: Any = self.gated_ffn()
        else:
            ffn = self.moe_ffn(
                self.n_routed_experts,
                self.num_experts_per_tok,
                self.moe_intermediate_size,
                shared_width=self.share_expert_dim,
                shared_names=STEP_SHARED,
                shared_bias=self.mlp_bias,  # the stacked experts have no biases, whatever mlp_bias says
            )
        return self.layer(attention, ffn, projections=(gate,))

    def checkpoint_extras(self) -> tuple[CheckpointExtra, ...]:
        sparse = tuple(index for index, kind in enumerate(self.mlp_kinds()) if kind == "sparse")
        if not sparse:
            return super().checkpoint_extras()
        return super().checkpoint_extras() + (
            CheckpointExtra(
                name="router bias buffers",
                reason="each MoE router's score-correction bias (e_score_correction_bias): a buffer, saved with the weights",
                tensors=(StoredTensor(self.layer_name + ".moe.router_bias", (self.n_routed_experts,)),),
                per_layer=sparse,
                buffer=True,
            ),
        )


@tower(
    "step3p5_vision",
    transformers="Step3p7VisionConfig",
    other_names=dict.fromkeys(
        ("hidden_size", "num_hidden_layers", "num_attention_heads"),
        "also read under the name Step3p7's vision configs give it (width, layers, heads; no attribute_map entry)",
    ),
)
class Step3p7VisionConfig(TowerConfig):
    """configuration_step3p7.py (Step3p7VisionConfig) / Step3p7VisionModel: a patch convolution without bias (conv1),
    a learned position per patch of an image_size image (positional_embedding), ln_pre, layers of LayerNorms (ln_1,
    ln_2), biased q, k, v (stored fused, in_proj_weight) and out_proj, layer-scale vectors (ls_1.gamma, ls_2.gamma)
    and a biased c_fc/c_proj MLP of int(hidden_size · mlp_ratio); then two biased 3 × 3 convolutions with stride 2
    (vit_downsampler1: hidden → 2 · hidden, vit_downsampler2: → 4 · hidden). The released configs name hidden_size,
    num_hidden_layers and num_attention_heads width, layers and heads."""

    informational_fields = frozenset({"intermediate_size", "max_position_embeddings"})

    hidden_size: Width = Field(validation_alias=AliasChoices("hidden_size", "width"))
    intermediate_size: Width  # overwritten: int(hidden_size · mlp_ratio)
    num_hidden_layers: LayerCount = Field(validation_alias=AliasChoices("num_hidden_layers", "layers"))
    num_attention_heads: HeadCount = Field(validation_alias=AliasChoices("num_attention_heads", "heads"))
    num_channels: Width
    image_size: Width
    patch_size: Width
    hidden_act: Name
    mlp_ratio: Annotated[float, Field(gt=0, le=1024)]
    max_position_embeddings: PositionCount

    @property
    @derives("intermediate_size", "int(hidden_size · mlp_ratio)")
    def mlp_width(self) -> int:
        """Step3p7VisionConfig.__post_init__ overwrites intermediate_size with int(hidden_size · mlp_ratio)."""
        return int(self.hidden_size * self.mlp_ratio)

    def tower(self, prefix: str) -> Tower:
        hidden, heads = self.hidden_size, self.num_attention_heads
        head_dim = hidden // heads
        layer_norm = Norm("layernorm", hidden, bias=True)
        biases = (("attn.in_proj_bias", (3 * hidden,)), ("attn.out_proj.bias", (hidden,)))
        scales = (("ls_1.gamma", (hidden,)), ("ls_2.gamma", (hidden,)))
        layer = Layer(
            prefix + "transformer.resblocks.{i}",
            Attention(hidden, heads, heads, head_dim, head_dim, VISION_ATTENTION, q_width=hidden, o_input=hidden),
            DenseFfn(hidden, self.mlp_width, False, self.hidden_act, VISION_MLP, bias=True),
            (("ln_1", layer_norm), ("ln_2", layer_norm)),
            stack="vision",
            parameters=tuple(Parameter("vision", name, name, shape) for name, shape in biases + scales),
        )
        patches = (self.image_size // self.patch_size) ** 2
        extras = (
            tower_module(prefix + "conv1", PatchEmbedding(self.num_channels, (self.patch_size,) * 2, hidden)),
            tower_module(prefix + "positional_embedding", LearnedTensor((patches, hidden))),
            tower_module(prefix + "ln_pre", layer_norm),
            tower_module(prefix + "vit_downsampler1", PatchEmbedding(hidden, (3, 3), 2 * hidden, True)),
            tower_module(prefix + "vit_downsampler2", PatchEmbedding(2 * hidden, (3, 3), 4 * hidden, True)),
        )
        return Tower((layer,) * self.num_hidden_layers, extras, 4 * hidden, None)


@family(
    "step3p7",
    transformers="Step3p7Config",
    architecture="Step 3.7",
    model_class="Step3p7ForConditionalGeneration",
    read_beyond={"tie_word_embeddings": "PreTrainedConfig keeps it; the class ties by it"},
)
class Step3p7Config(MultimodalLayers):
    """configuration_step3p7.py (Step3p7Config) / Step3p7ForConditionalGeneration: the tower (vision_model.), the
    projector (vit_large_projector: 4 · the tower's width → the text width, biased by projector_bias) and the language
    model (model., lm_head), tied only by a tie_word_embeddings key at the top level (Step3p7Config declares none:
    default untied). The processor's crops decide an image's tokens: no image rule (flops with an `image` refuses)."""

    text_model_type = "step3p5"
    text_defaults: ClassVar[dict[str, Any]] = {"model_type": "step3p5"}
    vision_model_type = "step3p5_vision"
    vision_defaults: ClassVar[dict[str, Any]] = {"model_type": "step3p5_vision"}
    language_model_prefix = "model."
    lm_head_name = "lm_head"
    vision_prefix = "vision_model."
    informational_fields = frozenset({"image_token_id"})

    vision_config: dict[str, Any] | None
    projector_bias: Flag
    tie_word_embeddings: Flag = False

    @model_validator(mode="before")
    @classmethod
    def _own_blocks(cls, raw: Any) -> Any:
        """Step3p7Config.__post_init__ drops the model_type its blocks name (the Hub's remote-code configs)."""
        if not isinstance(raw, dict):
            return raw
        raw = dict(raw)
        for key in ("text_config", "vision_config"):
            if isinstance(raw.get(key), dict):
                raw[key] = {k: v for k, v in raw[key].items() if k != "model_type"}
        return raw

    def tied(self) -> bool:
        return self.tie_word_embeddings

    def image_input(self, tower: Tower) -> ImageInput | None:
        return None

    def projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        return (projector_module("vit_large_projector", Linear(tower.hidden_size, text_hidden, self.projector_bias)),)

    def wrapped_spec(self) -> ModelSpec:
        spec = getattr(self.text, "language_model_spec", self.text.to_spec)()
        spec = replace(spec, model_type=self.model_type, tie_word_embeddings=self.tied())
        return self.whole(relocate(spec, self.language_model_prefix, self.lm_head_name))
