"""JetMoE (jetmoe/jetmoe-8b): a mixture of attention heads (each expert its own q and o over shared keys and values)
and a mixture of MLP experts, both routed top-k in every layer."""

from __future__ import annotations

from typing import Any

from pydantic import model_validator

from ..schema import ExpertCount, Flag, HeadCount, LayerCount, Name, PositionCount, Width
from ..spec import Attention, Layer, Parameter, Projection, names
from .base import DecoderConfig
from .registry import family

MOA = "self_attention.experts"


@family(
    "jetmoe",
    transformers="JetMoeConfig",
    architecture="JetMoE",
    model_class="JetMoeForCausalLM",
    heads_divide_hidden=False,  # the heads are kv_channels wide, whatever hidden_size is
    routing=("num_experts_per_tok", "num_local_experts"),
    read_beyond={
        "num_attention_heads": "no field: JetMoeConfig.__post_init__ sets it to num_key_value_heads × "
        "num_experts_per_tok, whatever the config says (its default here is the default config's)",
    },
)
class JetMoeConfig(DecoderConfig):
    """configuration_jetmoe.py / modeling_jetmoe.py. Attention (self_attention, JetMoeMoA): a router (experts.router.
    layer, hidden → num_local_experts, no bias) picks num_experts_per_tok experts a token; each expert's q
    (experts.input_linear, stacked [E, kv_channels · num_key_value_heads, hidden]) emits num_key_value_heads heads of
    kv_channels, which attend over the keys and values of one kv_proj shared by all (hidden → 2 · kv_channels ·
    num_key_value_heads, no bias; keys and values repeated per expert picked: num_key_value_heads × num_experts_per_tok
    heads a token in all); each expert's o (experts.output_linear [E, hidden, kv_channels · num_key_value_heads]) maps
    its heads back, weighted by the router, plus one bias of hidden_size (experts.bias). The MLP (JetMoeMoE) routes
    the same way: a router (mlp.router.layer), experts stacked with gate and up fused (mlp.input_linear [E, 2 ·
    intermediate_size, hidden], mlp.output_linear [E, hidden, intermediate_size]), activation_function on the gate,
    one bias of hidden_size (mlp.bias). Two RMSNorms a layer, the final norm; the head tied by default. transformers
    refuses num_experts_per_tok above num_local_experts."""

    moe_names = names(router="mlp.router.layer", experts="mlp")
    expert_names = names(gate="input_linear", up="input_linear", down="output_linear")
    attention_names = names(
        q=f"{MOA}.input_linear", k="self_attention.kv_proj", v="self_attention.kv_proj", o=f"{MOA}.output_linear"
    )

    num_attention_heads: HeadCount = 32
    num_hidden_layers: LayerCount
    intermediate_size: Width
    tie_word_embeddings: Flag
    max_position_embeddings: PositionCount
    num_key_value_heads: HeadCount
    kv_channels: Width
    activation_function: Name
    num_local_experts: ExpertCount
    num_experts_per_tok: ExpertCount

    @model_validator(mode="before")
    @classmethod
    def _heads_as_transformers_sets_them(cls, raw: Any) -> Any:
        # JetMoeConfig.__post_init__: num_attention_heads = num_key_value_heads * num_experts_per_tok
        if not isinstance(raw, dict):
            return raw
        fields = cls.model_fields
        kv_heads = raw.get("num_key_value_heads", fields["num_key_value_heads"].default)
        per_token = raw.get("num_experts_per_tok", fields["num_experts_per_tok"].default)
        if isinstance(kv_heads, int) and isinstance(per_token, int):
            return {**raw, "num_attention_heads": kv_heads * per_token}
        return raw

    @model_validator(mode="after")
    def _check_routing(self) -> JetMoeConfig:
        if self.num_experts_per_tok > self.num_local_experts:  # JetMoeConfig.validate_architecture
            raise ValueError(
                f"num_experts_per_tok ({self.num_experts_per_tok}) exceeds num_local_experts "
                f"({self.num_local_experts}); transformers refuses it"
            )
        return self

    @property
    def activation(self) -> str:
        return self.activation_function

    @property
    def resolved_head_dim(self) -> int:
        return self.kv_channels

    def build_layer(self, index: int, window: int | None) -> Layer:
        hidden, experts, per_token = self.hidden_size, self.num_local_experts, self.num_experts_per_tok
        attention: Attention = self.attention(window, q_o_experts=(experts, per_token))
        moe = self.moe_ffn(experts, per_token, self.intermediate_size)
        router = Projection("router", f"{MOA}.router.layer", hidden, experts, component="attention")
        biases = (
            Parameter("attention", "bias", f"{MOA}.bias", (hidden,)),
            Parameter("ffn", "bias", "mlp.bias", (hidden,)),
        )
        return self.layer(attention, moe, projections=(router,), parameters=biases)
