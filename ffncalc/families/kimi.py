"""Moonshot AI's Kimi Linear: Kimi Delta Attention (a Gated DeltaNet with a decay per channel) in most
layers, DeepSeek-V3's MLA in the others, and DeepSeek-V3's MoE; and Kimi-K2.5, Kimi-K2's language model
with the MoonViT vision tower.

Kimi-K2 declares DeepSeek-V3's architecture and is read by the DeepSeek adapter; Kimi Linear brings a
mixer of its own, so its lineage is Moonshot's, built on DeepSeek's blocks.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import model_validator

from ..schema import (
    ExpertCount,
    ExpertCountOrZero,
    HeadCount,
    LayerIndex,
    Width,
    derives,
)
from ..spec import CheckpointExtra, Extra, Layer, Linear, Mixer, MoeFfn, Norm, names
from .blocks import MlpLayerTypes, entries_check
from .deepseek import DeepseekLayers, correction_bias_extra
from .mixers import kimi_delta_attention
from .multimodal import MultimodalConfig
from .registry import family
from .towers import Tower, projector_module, tower_module

# transformers saves every FFN under block_sparse_moe (its conversion renames mlp → block_sparse_moe), dense ones too.
KIMI_MLP = names(gate="block_sparse_moe.gate_proj", up="block_sparse_moe.up_proj", down="block_sparse_moe.down_proj")
KIMI_MOE = names(router="block_sparse_moe.gate", experts="block_sparse_moe.experts.{e}")
KIMI_EXPERT = names(gate="w1", up="w3", down="w2")
KIMI_SHARED = names(
    gate="block_sparse_moe.shared_experts.gate_proj",
    up="block_sparse_moe.shared_experts.up_proj",
    down="block_sparse_moe.shared_experts.down_proj",
)
# Where linear_attn_config keeps each KDA width (it wins over the field).
LINEAR_ATTN_KEYS = {
    "linear_head_dim": "head_dim",
    "linear_num_heads": "num_heads",
    "linear_conv_kernel_dim": "short_conv_kernel_size",
}
KIMI_DELTA_ATTENTION = names(
    q_proj="self_attn.q_proj",
    k_proj="self_attn.k_proj",
    v_proj="self_attn.v_proj",
    q_conv1d="self_attn.q_conv1d",
    k_conv1d="self_attn.k_conv1d",
    v_conv1d="self_attn.v_conv1d",
    f_a_proj="self_attn.f_a_proj",
    f_b_proj="self_attn.f_b_proj",
    dt_bias="self_attn.dt_bias",
    A_log="self_attn.A_log",
    b_proj="self_attn.b_proj",
    g_a_proj="self_attn.g_a_proj",
    g_b_proj="self_attn.g_b_proj",
    o_norm="self_attn.o_norm",
    o_proj="self_attn.o_proj",
)


@family(
    "kimi_linear",
    transformers="KimiLinearConfig",
    architecture="Kimi Linear",
    model_class="KimiLinearForCausalLM",
    read_beyond=dict.fromkeys(
        ("linear_attn_config", "first_k_dense_replace"),
        "no field of KimiLinearConfig: __post_init__ reads it from the config's keys",
    ),
    routing=("num_experts_per_tok", "num_local_experts"),
)
class KimiLinearConfig(MlpLayerTypes, DeepseekLayers):
    """configuration_kimi_linear.py / modeling_kimi_linear.py.

    layer_types picks MLA (DeepSeek-V3's, no rotary) or Kimi Delta Attention per layer; without it, the
    config's linear_attn_config lists full_attn_layers and kda_layers (1-indexed), else every fourth layer
    from layer 4 is MLA. linear_attn_config's head_dim, num_heads and short_conv_kernel_size override
    linear_head_dim, linear_num_heads and linear_conv_kernel_dim. mlp_layer_types picks a dense MLP or
    DeepSeek-V3's MoE (default: dense below the config's first_k_dense_replace, 1).
    """

    mlp_names = KIMI_MLP
    moe_names = KIMI_MOE
    expert_names = KIMI_EXPERT

    num_local_experts: ExpertCountOrZero
    num_experts_per_tok: ExpertCount | None
    mlp_layer_types: list[Literal["dense", "sparse"]] | None
    layer_types: list[Literal["full_attention", "linear_attention"]] | None
    linear_head_dim: Width
    linear_num_heads: HeadCount
    linear_conv_kernel_dim: Width
    linear_attn_config: dict[str, Any] | None = None
    first_k_dense_replace: LayerIndex = 1
    # No tie_word_embeddings: KimiLinearForCausalLM ties nothing (its _tied_weights_keys is empty).
    # KimiLinearConfig has none of DeepseekV3Config's n_routed_experts and num_nextn_predict_layers: DeepseekLayers
    # reads them as absent.
    _check_mlp_layer_types = entries_check("mlp_layer_types", exact=True)  # validate_layer_type: one per layer

    @model_validator(mode="after")
    def _check_linear_layers(self):
        """linear_attn_config numbers its layers from 1: each must be one of the model's, and without layer_types
        the two lists must name every layer (transformers refuses a layer type left None)."""
        listed = self.linear_attn_config or {}
        if self.layer_types is not None or "full_attn_layers" not in listed or "kda_layers" not in listed:
            return self
        named = set()
        for key in ("full_attn_layers", "kda_layers"):
            for layer in listed[key] or []:
                if not isinstance(layer, int) or not 1 <= layer <= self.num_hidden_layers:
                    raise ValueError(
                        f"linear_attn_config.{key}: {layer!r} is not a layer between 1 and {self.num_hidden_layers}"
                    )
                named.add(layer)
        missing = sorted(set(range(1, self.num_hidden_layers + 1)) - named)
        if missing:
            raise ValueError(f"linear_attn_config: layers {missing} are in neither full_attn_layers nor kda_layers")
        return self

    def linear(self, field: str) -> int:
        """A KDA width: linear_attn_config's key for it, else the field."""
        return (self.linear_attn_config or {}).get(LINEAR_ATTN_KEYS[field], getattr(self, field))

    @derives("layer_types", "linear_attn_config's full_attn_layers and kda_layers, else MLA where i > 0 and i % 4 == 0")
    def kinds(self) -> list[str]:
        if self.layer_types is not None:
            return list(self.layer_types)
        listed = self.linear_attn_config or {}
        if "full_attn_layers" in listed and "kda_layers" in listed:
            kinds = [""] * self.num_hidden_layers  # the validator saw the two lists name every layer
            for key, kind in (("full_attn_layers", "full_attention"), ("kda_layers", "linear_attention")):
                for layer in listed[key]:
                    kinds[layer - 1] = kind  # a layer in both lists is KDA, as transformers assigns them in turn
            return kinds
        return ["full_attention" if i and i % 4 == 0 else "linear_attention" for i in range(self.num_hidden_layers)]

    @derives("mlp_layer_types", "dense below first_k_dense_replace (default 1), then sparse")
    def default_mlp_kinds(self) -> list[str]:
        return ["dense" if i < self.first_k_dense_replace else "sparse" for i in range(self.num_hidden_layers)]

    def moe(self) -> MoeFfn:
        return self.shared_experts_moe(
            self.num_local_experts,
            self.num_experts_per_tok or 0,
            self.moe_intermediate_size,
            self.n_shared_experts,
            KIMI_SHARED,
        )

    def kda(self) -> Mixer:
        # Stored in self_attn, where transformers' module tree puts it: its weights count as attention.
        return kimi_delta_attention(
            self.hidden_size,
            self.linear("linear_num_heads"),
            self.linear("linear_head_dim"),
            self.linear("linear_conv_kernel_dim"),
            KIMI_DELTA_ATTENTION,
            "attention",
        )

    def build_layers(self) -> tuple[Layer, ...]:
        built: dict[tuple[str, bool], Layer] = {}
        layers = []
        for index, kind in enumerate(self.kinds()):
            key = (kind, self.sparse(index))
            if key not in built:
                ffn = self.moe() if key[1] else self.gated_ffn()
                if kind == "full_attention":
                    built[key] = self.layer(self.mla_attention(None), ffn)
                else:
                    built[key] = self.layer(None, ffn, mixer=self.kda())
            layers.append(built[key])
        return tuple(layers)

    def checkpoint_extras(self) -> tuple[CheckpointExtra, ...]:
        sparse = tuple(i for i in range(self.num_hidden_layers) if self.sparse(i))
        if not sparse:
            return self.rotary_extras()
        bias = correction_bias_extra(self.layer_name, sparse, self.num_local_experts, KIMI_MOE["router"])
        return self.rotary_extras() + (bias,)


@family(
    "kimi_k25", transformers="Kimi_K25Config", architecture="Kimi-K2.5", model_class="Kimi_K25ForConditionalGeneration"
)
class KimiK25Config(MultimodalConfig):
    """configuration_kimi_k25.py / modeling_kimi_k25.py: a DeepSeek-V3 language model (text_config's kimi_k2 is read
    as deepseek_v3), the MoonViT vision tower (Kimi_K25VisionConfig) and a projector; the top-level
    tie_word_embeddings (default true) decides tying. transformers saves it as Moonshot's checkpoints name it
    (its conversion reverted), the reversal renaming every "layers" to "blocks", the language model's too."""

    text_model_type = "deepseek_v3"
    vision_model_type = "kimi_k25_vision"
    language_model_renames = (("language_model.model.layers.", "language_model.model.blocks."),)
    projection_hidden_size: Width  # the projector's LayerNorm (None: transformers cannot build it)

    def projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        """Kimi_K25MultimodalProjection: a LayerNorm of projection_hidden_size over each patch, then the merge's
        patches side by side (merged = hidden · kernel rows · kernel columns) through in_proj (merged → merged) and
        out_proj (merged → text hidden), with biases."""
        from .vision import KimiK25VisionConfig

        assert isinstance(self.vision, KimiK25VisionConfig)
        rows, columns = self.vision.merge_kernel_size[:2]
        merged = tower.hidden_size * rows * columns
        pre_norm = Norm("layernorm", self.projection_hidden_size, bias=True)  # per patch, before the merge
        return (
            tower_module("model.mm_projector.pre_norm", pre_norm, "projector"),
            projector_module("mm_projector.proj.0", Linear(merged, merged, True)),
            projector_module("mm_projector.proj.2", Linear(merged, text_hidden, True)),
        )
