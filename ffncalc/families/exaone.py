"""LG AI Research's EXAONE: EXAONE 3 and 3.5 (Llama's layer under GPT-2-style names), EXAONE 4.0 (per-head q/k
norms, norms after the sublayers, three sliding-window layers in four), K-EXAONE (exaone_moe: its MoE, with
DeepSeek-V3's router) and EXAONE 4.5 (exaone4_5: EXAONE 4.0 with Qwen2.5-VL's tower, its attention grouped)."""

from __future__ import annotations

from functools import cached_property
from typing import Any, Literal

from pydantic import model_validator

from ..schema import (
    ExpertCount,
    ExpertCountOrZero,
    Flag,
    HeadCount,
    LayerCount,
    LayerIndex,
    Name,
    PositionCount,
    Width,
    derives,
)
from ..spec import CheckpointExtra, DenseFfn, Layer, ModelNames, MoeFfn, Norm, StoredTensor, names
from .base import (
    DecoderConfig,
)
from .blocks import periodic_layer_types, windows_of_layer_types
from .qwen import Qwen3VLConfig
from .registry import family

# EXAONE 3's checkpoints keep the names of its remote code; transformers 5.24 renames them on load to Llama's
# (conversion_mapping.py, "exaone") and back on save.
EXAONE3_ATTENTION = names(
    q="attn.attention.q_proj", k="attn.attention.k_proj", v="attn.attention.v_proj", o="attn.attention.out_proj"
)
EXAONE3_MLP = names(gate="mlp.c_fc_0", up="mlp.c_fc_1", down="mlp.c_proj")
EXAONE_MOE = names(router="mlp.gate", experts="mlp.experts.{e}")
EXAONE_SHARED = names(
    gate="mlp.shared_experts.gate_proj", up="mlp.shared_experts.up_proj", down="mlp.shared_experts.down_proj"
)


@family("exaone", transformers="ExaoneConfig", architecture="EXAONE-3", model_class="LlamaForCausalLM")
class ExaoneConfig(DecoderConfig):
    """configuration_exaone.py / modular_exaone.py (EXAONE 3.0, 3.5): transformers builds LlamaForCausalLM;
    its configs name the layers num_layers and the activation activation_function (the attribute_map). The
    checkpoint keeps GPT-2-style module names: transformer.h.{i} with attn.attention.{q,k,v,out}_proj,
    mlp.c_fc_0 (gate), c_fc_1 (up), c_proj (down), ln_1 and ln_2; transformer.wte and transformer.ln_f."""

    layer_name = "transformer.h.{i}"
    attention_names = EXAONE3_ATTENTION
    mlp_names = EXAONE3_MLP
    model_names = ModelNames(
        embed_tokens="transformer.wte", final_norm="transformer.ln_f", base_model_prefix="transformer"
    )

    num_hidden_layers: LayerCount
    intermediate_size: Width
    tie_word_embeddings: Flag
    mlp_bias: Flag
    attention_bias: Flag
    head_dim: Width | None
    num_key_value_heads: HeadCount | None
    hidden_act: Name
    max_position_embeddings: PositionCount

    def pre_norms(self) -> tuple[tuple[str, Norm], ...]:
        norm = self.rms_norm()
        return (("ln_1", norm), ("ln_2", norm))


@family(
    "exaone4",
    transformers="Exaone4Config",
    architecture="EXAONE-4.0",
    model_class="Exaone4ForCausalLM",
    heads_divide_hidden=False,  # configuration_*.py floors hidden_size // num_attention_heads
    read_beyond={"head_dim": "read by the modeling code with getattr"},
)
class Exaone4Config(DecoderConfig):
    """configuration_exaone4.py / modular_exaone4.py: no biases; RMSNorm on each query and key head; OLMo-2's
    norms after attention and after the FFN. ``layer_types`` (default: every sliding_window_pattern-th layer
    full, the others sliding) gives the sliding layers a window of sliding_window.

    transformers builds the default layer_types from an integer sliding_window_pattern only: with the
    pattern a string ("LLLG", as EXAONE 4.0 publishes it) or sliding_window null, a config must give
    layer_types, or transformers fails.
    """

    num_hidden_layers: LayerCount
    intermediate_size: Width
    tie_word_embeddings: Flag
    max_position_embeddings: PositionCount
    hidden_act: Name
    head_dim: Width | None = None
    num_key_value_heads: HeadCount | None
    sliding_window: Width | None
    sliding_window_pattern: LayerCount | Name | None
    layer_types: list[Literal["full_attention", "sliding_attention"]] | None

    @model_validator(mode="after")
    def _check_pattern(self) -> Exaone4Config:
        if self.layer_types is None:
            if self.sliding_window is None:
                raise ValueError(
                    "layer_types: required when sliding_window is null (transformers divides by a pattern of 0)"
                )
            if not isinstance(self.sliding_window_pattern, int):
                raise ValueError(
                    f"layer_types: required when sliding_window_pattern is not an integer "
                    f"(got {self.sliding_window_pattern!r}; transformers builds layer_types from an integer only)"
                )
        return self

    def unused_fields(self) -> set[str]:
        return {"sliding_window_pattern"} if self.layer_types is not None else set()

    @derives("layer_types", "every sliding_window_pattern-th layer full, the others sliding")
    def kinds(self) -> list[str]:
        if self.layer_types is not None:
            return list(self.layer_types)
        assert isinstance(self.sliding_window_pattern, int)  # _check_pattern refuses the rest
        return periodic_layer_types(self.num_hidden_layers, self.sliding_window_pattern)

    def layer_windows(self) -> list[int | None]:
        return windows_of_layer_types(self.kinds(), self.sliding_window)

    def build_layer(self, index: int, window: int | None) -> Layer:
        norm = self.rms_norm()
        norms = (("post_attention_layernorm", norm), ("post_feedforward_layernorm", norm))
        return self.layer(self.attention(window, **self.per_head_norms()), self.gated_ffn(), norms)


@family(
    "exaone_moe",
    transformers="ExaoneMoeConfig",
    architecture="K-EXAONE",
    routing=("num_experts_per_tok", "num_experts"),
    model_class="ExaoneMoeForCausalLM",
)
class ExaoneMoeConfig(Exaone4Config):
    """configuration_exaone_moe.py / modular_exaone_moe.py: EXAONE 4.0's attention and windows, Llama's norms
    before the sublayers. ``mlp_layer_types`` (default: the first first_k_dense_replace layers dense) picks a
    dense MLP or a MoE: routed experts of moe_intermediate_size (saved one module per expert) and one
    shared MLP of num_shared_experts × moe_intermediate_size. The router's e_score_correction_bias is a
    persistent buffer, saved as mlp.e_score_correction_bias."""

    moe_names = EXAONE_MOE

    mlp_layer_types: list[Literal["dense", "sparse"]] | None
    first_k_dense_replace: LayerIndex
    moe_intermediate_size: Width
    num_experts: ExpertCount
    num_experts_per_tok: ExpertCount
    num_shared_experts: ExpertCountOrZero

    @model_validator(mode="after")
    def _check_mlp_layer_types(self) -> ExaoneMoeConfig:
        if self.mlp_layer_types is not None and len(self.mlp_layer_types) != self.num_hidden_layers:
            raise ValueError(
                f"mlp_layer_types has {len(self.mlp_layer_types)} entries for {self.num_hidden_layers} layers"
            )
        return self

    def unused_fields(self) -> set[str]:
        return super().unused_fields() | ({"first_k_dense_replace"} if self.mlp_layer_types is not None else set())

    @cached_property
    @derives("mlp_layer_types", "dense for the first first_k_dense_replace layers, then sparse")
    def mlp_kinds(self) -> list[str]:
        if self.mlp_layer_types is not None:
            return list(self.mlp_layer_types)
        return ["dense" if i < self.first_k_dense_replace else "sparse" for i in range(self.num_hidden_layers)]

    def ffn(self, index: int) -> DenseFfn | MoeFfn:
        if self.mlp_kinds[index] == "dense":
            return self.gated_ffn()
        width = self.moe_intermediate_size
        return self.moe_ffn(
            self.num_experts,
            self.num_experts_per_tok,
            width,
            shared_width=width * self.num_shared_experts,
            num_shared_experts=self.num_shared_experts,
            shared_names=EXAONE_SHARED,
        )

    def build_layer(self, index: int, window: int | None) -> Layer:
        return self.layer(self.attention(window, **self.per_head_norms()), self.ffn(index))

    def checkpoint_extras(self) -> tuple[CheckpointExtra, ...]:
        sparse = tuple(i for i, kind in enumerate(self.mlp_kinds) if kind == "sparse")
        if not sparse:
            return ()
        return (
            CheckpointExtra(
                name="router e_score_correction_bias",
                reason=f"{len(sparse)} MoE layers × {self.num_experts} experts; a buffer set by load balancing, not trained",
                tensors=(StoredTensor(self.layer_name + ".mlp.e_score_correction_bias", (self.num_experts,)),),
                per_layer=sparse,
                buffer=True,
            ),
        )


@family(
    "exaone4_5",
    transformers="Exaone4_5_Config",
    architecture="EXAONE-4.5",
    model_class="Exaone4_5_ForConditionalGeneration",
)
class Exaone45Config(Qwen3VLConfig):
    """configuration_exaone4_5.py / modular_exaone4_5.py (Exaone4_5_ForConditionalGeneration): a Qwen2.5-VL tower with
    grouped attention (exaone4_5_vision) at model.visual., an EXAONE 4.0 language model built by AutoModel at
    model.language_model., lm_head; the top-level tie_word_embeddings (default false) decides tying. A text_config
    still naming the first release's exaone4_5_text is read as exaone4 (Exaone4_5_Config.__post_init__)."""

    text_model_type = "exaone4"
    vision_model_type = "exaone4_5_vision"

    @model_validator(mode="before")
    @classmethod
    def _first_release_text(cls, raw: Any) -> Any:
        text = raw.get("text_config") if isinstance(raw, dict) else None
        if isinstance(text, dict) and text.get("model_type") == "exaone4_5_text":
            return {**raw, "text_config": {**text, "model_type": "exaone4"}}
        return raw
