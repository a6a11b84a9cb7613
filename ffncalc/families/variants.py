"""Llama-shaped variants: Granite, Granite-MoE, PhiMoE, OLMo-2, ERNIE-4.5-MoE, MiMo."""

from __future__ import annotations

from dataclasses import replace

from ..schema import ExpertCount, ExpertCountOrZero, Flag, LayerCount, LayerIndex, Width
from ..spec import CheckpointExtra, Layer, MoeFfn, Norm
from .base import DecoderConfig, experts_check
from .llama import MixtralConfig
from .qwen import Qwen2Config


class GraniteConfig(DecoderConfig):
    """configuration_granite.py: Llama's modules; its embedding, attention, residual and logits
    multipliers scale activations, not parameters."""

    architecture = "Granite"


class GraniteMoeConfig(MixtralConfig):
    """configuration_granitemoe.py: Mixtral's layout (fused expert tensors, the same counts); its
    multipliers scale activations, not parameters."""

    architecture = "Granite-MoE"


class PhimoeConfig(GraniteMoeConfig):
    """configuration_phimoe.py: Mixtral's layout with LayerNorms (weight and bias) instead of
    RMSNorms, biased attention (attention_bias) and a head bias (lm_head_bias)."""

    architecture = "PhiMoE"
    num_local_experts: ExpertCount = 16
    lm_head_bias: Flag = False

    def layer_norm(self) -> Norm:
        return Norm("layernorm", self.hidden_size, bias=True)

    def pre_norms(self):
        return (("input_layernorm", self.layer_norm()), ("post_attention_layernorm", self.layer_norm()))

    def to_spec(self):
        return replace(super().to_spec(), final_norm=self.layer_norm(), lm_head_bias=self.lm_head_bias)


class Olmo2Config(DecoderConfig):
    """configuration_olmo2.py: RMSNorm over all query heads together (heads · head_dim) and over
    all key heads; norms after attention and after the FFN instead of before."""

    architecture = "OLMo-2"

    def build_layer(self, index: int, window: int | None) -> Layer:
        head_dim = self.resolved_head_dim
        attention = self.attention(
            window,
            q_norm=self.rms_norm(self.num_attention_heads * head_dim),
            k_norm=self.rms_norm(self.kv_heads * head_dim),
        )
        norm = self.rms_norm()
        norms = (("post_attention_layernorm", norm), ("post_feedforward_layernorm", norm))
        return Layer(attention, self.gated_ffn(), norms)


class Ernie45MoeConfig(DecoderConfig):
    """configuration_ernie4_5_moe.py: layer i is sparse when (i + 1) % moe_layer_interval == 0 and
    moe_layer_start_index ≤ i ≤ moe_layer_end_index (-1: the last); shared experts of width
    moe_num_shared_experts × moe_intermediate_size. The router's e_score_correction_bias is an
    nn.Parameter here (unlike DeepSeek's buffer), so it counts, as the router's bias."""

    architecture = "ERNIE-4.5-MoE"
    tie_word_embeddings: Flag = True
    use_bias: Flag = False
    moe_num_experts: ExpertCount = 64
    moe_k: ExpertCount = 2
    moe_intermediate_size: Width = 1536
    moe_num_shared_experts: ExpertCountOrZero = 0
    moe_layer_start_index: LayerIndex = 1
    moe_layer_end_index: int = -1
    moe_layer_interval: LayerCount = 1
    _check_experts = experts_check("moe_k", "moe_num_experts")

    def is_sparse(self, index: int) -> bool:
        end = self.num_hidden_layers - 1 if self.moe_layer_end_index == -1 else self.moe_layer_end_index
        return (index + 1) % self.moe_layer_interval == 0 and self.moe_layer_start_index <= index <= end

    def build_layer(self, index: int, window: int | None) -> Layer:
        bias = self.use_bias
        attention = self.attention(window, q_bias=bias, k_bias=bias, v_bias=bias, o_bias=bias)
        if not self.is_sparse(index):
            return Layer(attention, self.gated_ffn(bias=bias), self.pre_norms())
        width = self.moe_intermediate_size
        shared = self.gated_ffn(width * self.moe_num_shared_experts, bias=bias) if self.moe_num_shared_experts else None
        moe = MoeFfn(
            self.hidden_size,
            self.moe_num_experts,
            self.moe_k,
            self.gated_ffn(width, bias=False),
            shared=shared,
            num_shared_experts=self.moe_num_shared_experts,
            router_bias=True,
        )
        return Layer(attention, moe, self.pre_norms())

    def to_spec(self):
        return replace(super().to_spec(), lm_head_bias=self.use_bias)


class MimoConfig(Qwen2Config):
    """XiaomiMiMo/MiMo (custom code, read as data): Qwen2's layers, plus num_nextn_predict_layers
    multi-token-prediction layers that the causal LM does not run. Each MTP layer, as MiMo's
    modeling_mimo.py lays it out: a Qwen2 decoder layer, token and hidden RMSNorms, input_proj
    (2H → H) and a final RMSNorm."""

    architecture = "MiMo"
    num_nextn_predict_layers: LayerIndex = 0

    def checkpoint_extras(self):
        extras = super().checkpoint_extras()
        if not self.num_nextn_predict_layers:
            return extras
        hidden = self.hidden_size
        count = self.num_nextn_predict_layers
        return extras + (
            CheckpointExtra(
                name="multi-token-prediction layers",
                reason=f"num_nextn_predict_layers = {count}: a decoder layer, 3 RMSNorms and input_proj (2H → H) each",
                elements=count * (3 * hidden + 2 * hidden * hidden),
                layers=(self.build_layer(0, None),) * count,
            ),
        )
