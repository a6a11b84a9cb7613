"""Aria: a Llama-style MoE language model (every layer routes to experts beside shared ones) and the multimodal
wrapper whose projector reads the tower's patches through learned queries and cross-attention."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, field_validator

from ..schema import ExpertCount, Flag, HeadCount, LayerCount, Name, PositionCount, Width
from ..spec import Extra, ImageInput, Layer, LearnedTensor, Linear, Norm, names
from ..values import replace
from .base import (
    DecoderConfig,
)
from .multimodal import MultimodalConfig
from .registry import family
from .towers import Tower, projector_module


@family(
    "aria_text",
    transformers="AriaTextConfig",
    architecture="Aria",
    model_class="AriaTextForCausalLM",
    routing=("moe_topk", "moe_num_experts"),
)
class AriaTextConfig(
    DecoderConfig,
):
    """configuration_aria.py (AriaTextConfig) / modeling_aria.py: Llama's attention and norms; every layer's MLP is
    AriaTextMoELayer: a router without bias (mlp.router), moe_num_experts routed experts of intermediate_size stacked
    in two tensors and always SiLU-gated (AriaExperts), moe_topk of them a token, and the shared experts fused into one
    gated MLP moe_num_shared_experts × intermediate_size wide (mlp.shared_experts, hidden_act, mlp_bias). The
    checkpoint keeps the experts as transformers 4 did (conversion_mapping.py's "aria_text"): experts.fc1 [E, H, 2I],
    gate and up side by side, and experts.fc2 [E, I, H], both transposed."""

    moe_names = names(router="mlp.router", experts="mlp.experts")
    expert_names = names(gate="fc1", up="fc1", down="fc2", transposed=True)
    shared_names = names(
        gate="mlp.shared_experts.gate_proj", up="mlp.shared_experts.up_proj", down="mlp.shared_experts.down_proj"
    )

    num_hidden_layers: LayerCount
    intermediate_size: Width
    tie_word_embeddings: Flag
    mlp_bias: Flag
    attention_bias: Flag
    max_position_embeddings: PositionCount
    num_key_value_heads: HeadCount | None
    hidden_act: Name
    head_dim: Width | None
    pad_token_id: int | None
    moe_num_experts: ExpertCount
    moe_topk: ExpertCount
    moe_num_shared_experts: Annotated[int, Field(ge=0)]

    def build_layer(self, index: int, window: int | None) -> Layer:
        shared = self.gated_ffn(self.intermediate_size * self.moe_num_shared_experts, names=self.shared_names)
        moe = self.moe_ffn(
            self.moe_num_experts,
            self.moe_topk,
            self.intermediate_size,
            activation="silu",  # AriaExperts applies SiLU whatever hidden_act says; the shared experts use hidden_act
        )
        shared_experts = self.moe_num_shared_experts
        moe = replace(moe, shared=shared if shared_experts else None, num_shared_experts=shared_experts)
        return self.layer(self.attention(window), moe)


@family("aria", transformers="AriaConfig", architecture="Aria", model_class="AriaForConditionalGeneration")
class AriaConfig(MultimodalConfig):
    """configuration_aria.py (AriaConfig) / modeling_aria.py: a vision tower built by AutoModel (Idefics3's, with
    Idefics3VisionConfig's own defaults), AriaProjector and an Aria text model, in LLaVA's layout
    (conversion_mapping.py: "aria" → "llava"); only the wrapper's tie_word_embeddings (default false) decides tying.

    AriaProjector: query, max(projector_patch_to_query_dict's values) learned queries of the vision width; its
    cross-attention (q_proj, k_proj, v_proj without biases, torch's nn.MultiheadAttention with its fused in_proj and
    biased out_proj, a biased linear, LayerNorms over queries and keys), a LayerNorm, and a two-layer MLP without
    biases (vision → text → text). No image rule: the queries' cross-attention over the patches is FLOPs the image
    arithmetic does not express; the projector is counted by parameter."""

    text_model_type = "aria_text"
    text_defaults = {"model_type": "aria_text"}
    vision_model_type = "idefics3_vision"
    vision_defaults = {"model_type": "idefics3_vision"}
    informational_fields = frozenset({"vision_feature_layer"})

    vision_feature_layer: int | list[int]
    projector_patch_to_query_dict: dict[str, Any] | None

    @field_validator("projector_patch_to_query_dict")
    @classmethod
    def _whole_numbers(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        """AriaConfig.__post_init__ reads every key and value as an int; the largest value sizes the queries."""
        if value is None:
            return value
        if not value:
            raise ValueError("must map at least one patch count to a number of queries")
        for key, queries in value.items():
            if not str(key).isdigit() or isinstance(queries, bool) or not isinstance(queries, int) or queries < 1:
                raise ValueError(f"{key!r}: {queries!r}: each entry maps a patch count to a positive number of queries")
        return value

    @property
    def queries(self) -> int:
        """max(projector_patch_to_query_dict.values()), {1225: 128, 4900: 256} unless given."""
        return max((self.projector_patch_to_query_dict or {"1225": 128, "4900": 256}).values())

    def image_input(self, tower: Tower) -> ImageInput | None:
        return None

    def projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        vision, cross = tower.hidden_size, "multi_modal_projector.cross_attn."
        layer_norm = Norm("layernorm", vision, bias=True)
        modules: list[tuple[str, Any]] = [
            ("multi_modal_projector.query", LearnedTensor((self.queries, vision))),
            *((cross + part, Linear(vision, vision)) for part in ("q_proj", "k_proj", "v_proj")),
            (cross + "multihead_attn.in_proj_weight", LearnedTensor((3 * vision, vision), matmul=True)),
            (cross + "multihead_attn.in_proj_bias", LearnedTensor((3 * vision,))),
            (cross + "multihead_attn.out_proj", Linear(vision, vision, True)),
            (cross + "linear", Linear(vision, vision, True)),
            (cross + "layer_norm", layer_norm),
            (cross + "layer_norm_kv", layer_norm),
            ("multi_modal_projector.layer_norm", layer_norm),
            ("multi_modal_projector.feed_forward.linear_in", Linear(vision, text_hidden)),
            ("multi_modal_projector.feed_forward.linear_out", Linear(text_hidden, text_hidden)),
        ]
        return tuple(projector_module(name, module) for name, module in modules)

    def notes(self) -> list[str]:
        return super().notes() + [
            "no image rule: the projector's learned queries attend to the tower's patches (cross-attention), which "
            "ffncalc's image arithmetic does not express; counted by parameter only (flops with an `image` refuses)"
        ]
