"""Microsoft's Phi: phi-1, phi-1.5 and phi-2 (attention and a plain MLP side by side behind one LayerNorm),
Phi-3 / Phi-3.5 / Phi-4 (Llama's shapes, fused qkv_proj and gate_up_proj) and PhiMoE."""

from __future__ import annotations

from ..schema import ExpertCount, Flag, HeadCount, LayerCount, Name, PositionCount, Width
from ..spec import DenseFfn, Layer, ModelNames, ModelSpec, Norm, names
from ..values import replace
from .base import DecoderConfig
from .mistral import MIXTRAL_EXPERT, MIXTRAL_MOE
from .registry import family

PHI_ATTENTION = names(
    q="self_attn.q_proj",
    k="self_attn.k_proj",
    v="self_attn.v_proj",
    o="self_attn.dense",
    q_norm="self_attn.q_layernorm",
    k_norm="self_attn.k_layernorm",
)
PHI_MLP = names(up="mlp.fc1", down="mlp.fc2")
PHI3_ATTENTION = names(q="self_attn.qkv_proj", k="self_attn.qkv_proj", v="self_attn.qkv_proj", o="self_attn.o_proj")
PHI3_MLP = names(gate="mlp.gate_up_proj", up="mlp.gate_up_proj", down="mlp.down_proj")


@family(
    "phi",
    transformers="PhiConfig",
    architecture="Phi",
    model_class="PhiForCausalLM",
    heads_divide_hidden=False,  # no check: head_dim is floored
    read_beyond={"head_dim": "read by the modeling code with getattr"},
)
class PhiConfig(DecoderConfig):
    """configuration_phi.py / modeling_phi.py (phi-1, phi-1.5, phi-2): one LayerNorm before attention and a
    plain MLP (fc1, fc2) that run side by side; q, k, v, dense, fc1, fc2 and the untied head all with biases.
    With qk_layernorm, a LayerNorm (weight and bias) over each query and key head, of width
    hidden_size // num_attention_heads whatever head_dim says. Partial rotary: no parameters."""

    attention_names = PHI_ATTENTION
    model_names = ModelNames(embed_tokens="model.embed_tokens", final_norm="model.final_layernorm")

    num_hidden_layers: LayerCount
    intermediate_size: Width
    tie_word_embeddings: Flag
    max_position_embeddings: PositionCount
    num_key_value_heads: HeadCount | None
    head_dim: Width | None = None
    hidden_act: Name
    qk_layernorm: Flag

    @property
    def attention_biased(self) -> bool:
        """q, k, v and dense always carry biases (no attention_bias switch in its configuration class)."""
        return True

    @property
    def mlp_biased(self) -> bool:
        """The MLP's projections always carry biases (no mlp_bias switch in its configuration class)."""
        return True

    def layer_norm(self, dim: int | None = None) -> Norm:
        return Norm("layernorm", self.hidden_size if dim is None else dim, bias=True)

    def build_layer(self, index: int, window: int | None) -> Layer:
        head_norms = {}
        if self.qk_layernorm:
            norm = self.layer_norm(self.hidden_size // self.num_attention_heads)
            head_norms = {"q_norm": norm, "k_norm": norm}
        ffn = DenseFfn(self.hidden_size, self.intermediate_size, False, self.hidden_act, PHI_MLP, bias=True)
        return self.layer(self.attention(window, **head_norms), ffn, (("input_layernorm", self.layer_norm()),))

    def to_spec(self) -> ModelSpec:
        return replace(super().to_spec(), final_norm=self.layer_norm(), lm_head_bias=True)


@family(
    "phi3",
    transformers="Phi3Config",
    architecture="Phi-3",
    model_class="Phi3ForCausalLM",
    heads_divide_hidden=False,  # configuration_*.py floors hidden_size // num_attention_heads
    read_beyond={"head_dim": "read by the modeling code with getattr"},
)
class Phi3Config(DecoderConfig):
    """configuration_phi3.py / modeling_phi3.py: q, k, v fused in qkv_proj and gate, up in gate_up_proj
    (names, not counts, change); no bias switches, so none are read. Windows: every layer slides
    within sliding_window when one is set."""

    attention_names = PHI3_ATTENTION
    mlp_names = PHI3_MLP

    num_hidden_layers: LayerCount
    intermediate_size: Width
    tie_word_embeddings: Flag
    num_key_value_heads: HeadCount | None
    hidden_act: Name
    head_dim: Width | None = None
    max_position_embeddings: PositionCount
    sliding_window: Width | None

    def layer_windows(self) -> list[int | None]:
        return [self.sliding_window] * self.num_hidden_layers


@family(
    "phimoe",
    transformers="PhimoeConfig",
    architecture="PhiMoE",
    model_class="PhimoeForCausalLM",
    heads_divide_hidden=False,  # configuration_*.py floors hidden_size // num_attention_heads
    routing=("num_experts_per_tok", "num_local_experts"),
    read_beyond={"head_dim": "read by the modeling code with getattr"},
)
class PhimoeConfig(DecoderConfig):
    """configuration_phimoe.py: Mixtral's layout with LayerNorms (weight and bias) instead of RMSNorms,
    biased attention (attention_bias) and a head bias (lm_head_bias)."""

    moe_names = MIXTRAL_MOE
    expert_names = MIXTRAL_EXPERT

    num_hidden_layers: LayerCount
    intermediate_size: Width
    tie_word_embeddings: Flag
    hidden_act: Name
    head_dim: Width | None = None
    num_key_value_heads: HeadCount | None
    max_position_embeddings: PositionCount
    sliding_window: Width | None
    num_local_experts: ExpertCount
    num_experts_per_tok: ExpertCount
    attention_bias: Flag
    lm_head_bias: Flag

    def layer_windows(self) -> list[int | None]:
        return [self.sliding_window] * self.num_hidden_layers

    def layer_norm(self) -> Norm:
        return Norm("layernorm", self.hidden_size, bias=True)

    def pre_norms(self) -> tuple[tuple[str, Norm], ...]:
        return (("input_layernorm", self.layer_norm()), ("post_attention_layernorm", self.layer_norm()))

    def build_layer(self, index: int, window: int | None) -> Layer:
        moe = self.moe_ffn(self.num_local_experts, self.num_experts_per_tok, self.intermediate_size)
        return self.layer(self.attention(window), moe)

    def to_spec(self) -> ModelSpec:
        return replace(super().to_spec(), final_norm=self.layer_norm(), lm_head_bias=self.lm_head_bias)
