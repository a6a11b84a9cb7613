"""Ant Group's Ling 3 hybrid (bailing_hybrid): Kimi-style delta-attention layers with a full MLA layer every
layer_group_size, a head-wise output gate on the MLA, and DeepSeek-V3's MoE after the first dense layers."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from ..schema import (
    MAX_LAYERS,
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
from ..spec import (
    Attention,
    CheckpointExtra,
    Conv,
    Layer,
    Mixer,
    Mla,
    ModelNames,
    MoeFfn,
    Norm,
    Parameter,
    Projection,
    names,
)
from .base import DecoderConfig
from .blocks import MlpLayerTypes, entries_check
from .deepseek import correction_bias_extra
from .registry import family

# As its checkpoints name the modules (conversion_mapping.py's bailing_hybrid, reverted on save): attention.,
# o_proj as dense, the three convolutions apart, the router's correction bias expert_bias, word_embeddings.
ATTENTION = "attention."
BAILING_MLA = names(
    q=ATTENTION + "q_proj",
    q_a=ATTENTION + "q_a_proj",
    q_a_layernorm=ATTENTION + "q_a_layernorm",
    q_b=ATTENTION + "q_b_proj",
    kv_a=ATTENTION + "kv_a_proj_with_mqa",
    kv_a_layernorm=ATTENTION + "kv_a_layernorm",
    kv_b=ATTENTION + "kv_b_proj",
    o=ATTENTION + "dense",
)


@family(
    "bailing_hybrid",
    transformers="BailingHybridConfig",
    architecture="Ling-3 hybrid",
    model_class="BailingHybridForCausalLM",
    heads_divide_hidden=False,  # the MLA's widths come from its own fields
    routing=("num_experts_per_tok", "num_local_experts"),
)
class BailingHybridConfig(MlpLayerTypes, DecoderConfig):
    """configuration_bailing_hybrid.py / modular_bailing_hybrid.py (Ling 3). layer_types (default: full_attention
    every layer_group_size-th layer, linear_attention the others) picks per layer:

    - BailingHybridAttention: DeepSeek-V3's MLA (queries through q_proj, or the q_lora_rank latent when set; kv_a to
      kv_lora_rank + qk_rope_head_dim and its RMSNorm, kv_b, o; attention_bias on q_a, kv_a and o) and g_proj, one
      sigmoid gate per head (hidden → heads, no bias);
    - BailingHybridDeltaAttention (Glm5Next's linear attention with a forget gate): num_attention_heads heads of
      head_dim (the config's, read before __post_init__ sets head_dim to qk_rope_head_dim); q, k, v projections and
      a depthwise convolution over each (short_conv_kernel_size taps, no bias), f_proj (hidden → heads · head_dim)
      with dt_bias per channel and A_log per head, b_proj (hidden → heads), g_proj (hidden → heads · head_dim), a gated
      RMSNorm over each head, o_proj. Its state: a head_dim × head_dim matrix per head, updated as Kimi Delta
      Attention's (7 FLOPs an element).

    mlp_layer_types (default: first_k_dense_replace dense layers, then sparse) picks a SwiGLU of intermediate_size
    or DeepSeek-V3's MoE: num_local_experts experts of moe_intermediate_size (the router's correction bias a buffer),
    a shared MLP of n_shared_experts · moe_intermediate_size. Checkpoints also store num_mtp_layers
    multi-token-prediction layers after the last, which transformers skips on load: not listed."""

    mlp_names = names(gate="mlp.gate_proj", up="mlp.up_proj", down="mlp.down_proj")
    moe_names = names(router="mlp.gate", experts="mlp.experts.{e}")
    model_names = ModelNames(embed_tokens="model.word_embeddings", final_norm="model.norm")
    informational_fields = DecoderConfig.informational_fields | {"num_mtp_layers"}

    tie_word_embeddings: Flag
    attention_bias: Flag
    hidden_act: Name
    intermediate_size: Width
    moe_intermediate_size: Width
    num_hidden_layers: LayerCount
    num_key_value_heads: HeadCount | None  # MLA: every head has its keys and values
    n_shared_experts: ExpertCountOrZero
    num_local_experts: ExpertCountOrZero
    num_experts_per_tok: ExpertCount
    kv_lora_rank: Width
    q_lora_rank: Width | None
    qk_rope_head_dim: Width
    v_head_dim: Width
    qk_nope_head_dim: Width
    first_k_dense_replace: LayerIndex
    max_position_embeddings: PositionCount
    num_mtp_layers: LayerIndex
    head_dim: Width
    short_conv_kernel_size: Width
    layer_group_size: LayerCount
    layer_types: Annotated[list[Literal["full_attention", "linear_attention"]], Field(max_length=MAX_LAYERS)] | None
    mlp_layer_types: Annotated[list[Literal["dense", "sparse"]], Field(max_length=MAX_LAYERS)] | None

    _check_layer_types = entries_check("layer_types", exact=True)  # validate_layer_type: one per layer
    _check_mlp_layer_types = entries_check("mlp_layer_types", exact=True)

    @derives("layer_types", "full_attention every layer_group_size-th layer, linear_attention the others")
    def kinds(self) -> list[str]:
        if self.layer_types is not None:
            return list(self.layer_types)
        group = self.layer_group_size
        return ["full_attention" if (i + 1) % group == 0 else "linear_attention" for i in range(self.num_hidden_layers)]

    @derives("mlp_layer_types", "first_k_dense_replace dense layers, then sparse")
    def default_mlp_kinds(self) -> list[str]:
        dense = min(self.first_k_dense_replace, self.num_hidden_layers)
        return ["dense"] * dense + ["sparse"] * (self.num_hidden_layers - dense)

    def unused_fields(self) -> set[str]:
        unused = {"first_k_dense_replace"} if self.mlp_layer_types is not None else set()
        return unused | ({"layer_group_size"} if self.layer_types is not None else set())

    def mla_attention(self) -> Attention:
        mla = Mla(
            q_lora_rank=self.q_lora_rank,
            kv_lora_rank=self.kv_lora_rank,
            qk_nope_head_dim=self.qk_nope_head_dim,
            qk_rope_head_dim=self.qk_rope_head_dim,
            v_head_dim=self.v_head_dim,
        )
        biased = self.attention_biased  # q_a, kv_a and o only
        heads = self.num_attention_heads
        return Attention(
            self.hidden_size,
            heads,
            heads,
            self.qk_nope_head_dim + self.qk_rope_head_dim,
            self.v_head_dim,
            BAILING_MLA,
            q_bias=biased,
            k_bias=biased,
            o_bias=biased,
            mla=mla,
        )

    def delta_attention(self) -> Mixer:
        """The linear-attention layer's mixer, stored in its attention module (its weights count as attention)."""
        hidden, heads, head_dim = self.hidden_size, self.num_attention_heads, self.head_dim
        inner = heads * head_dim
        state = heads * head_dim * head_dim
        widths = {"q_proj": inner, "k_proj": inner, "v_proj": inner, "f_proj": inner, "b_proj": heads, "g_proj": inner}
        projections = tuple(Projection(part, ATTENTION + part, hidden, width) for part, width in widths.items())
        return Mixer(
            kind="bailing_delta_attention",
            projections=projections + (Projection("o_proj", ATTENTION + "dense", inner, hidden),),
            convs=tuple(
                Conv(ATTENTION + f"{part}_conv1d", inner, self.short_conv_kernel_size, bias=False) for part in "qkv"
            ),
            parameters=(
                Parameter("mixer", "dt_bias, A_log", ATTENTION + "dt_bias", (inner,)),
                Parameter("mixer", "dt_bias, A_log", ATTENTION + "A_log", (heads,)),
            ),
            norms=((ATTENTION + "o_norm", Norm("rmsnorm", head_dim)),),
            state_elements=state,
            state_update_flops=7 * state,
            component="attention",
        )

    def moe(self) -> MoeFfn:
        return self.shared_experts_moe(
            self.num_local_experts, self.num_experts_per_tok, self.moe_intermediate_size, self.n_shared_experts
        )

    def build_layers(self) -> tuple[Layer, ...]:
        built: dict[tuple[str, bool], Layer] = {}
        layers = []
        for index, kind in enumerate(self.kinds()):
            key = (kind, self.sparse(index) and self.num_local_experts > 0)
            if key not in built:
                ffn = self.moe() if key[1] else self.gated_ffn()
                if kind == "full_attention":
                    heads = self.num_attention_heads
                    gate = Projection("g_proj", ATTENTION + "g_proj", self.hidden_size, heads, component="attention")
                    built[key] = self.layer(self.mla_attention(), ffn, projections=(gate,))
                else:
                    built[key] = self.layer(None, ffn, mixer=self.delta_attention())
            layers.append(built[key])
        return tuple(layers)

    def checkpoint_extras(self) -> tuple[CheckpointExtra, ...]:
        sparse = tuple(i for i in range(self.num_hidden_layers) if self.sparse(i) and self.num_local_experts)
        if not sparse:
            return self.rotary_extras()
        bias = correction_bias_extra(self.layer_name, sparse, self.num_local_experts, "mlp.gate", "expert_bias")
        return self.rotary_extras() + (bias,)
