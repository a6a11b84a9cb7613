"""NLLB-MoE (Meta's No Language Left Behind, 54B): M2M-100's pre-LN encoder-decoder in which every few layers' MLP is
a mixture of experts with a top-2 router."""

from __future__ import annotations

from typing import Literal

from ..schema import Flag, Name, Width, WidthOrZero
from ..spec import DenseFfn, Layer, MoeFfn, Norms, names
from .bart import M2M100Config
from .registry import family

SELF_ATTENTION = names(q="self_attn.q_proj", k="self_attn.k_proj", v="self_attn.v_proj", o="self_attn.out_proj")
CROSS_ATTENTION = names(
    q="cross_attention.q_proj", k="cross_attention.k_proj", v="cross_attention.v_proj", o="cross_attention.out_proj"
)


@family(
    "nllb-moe", transformers="NllbMoeConfig", architecture="NLLB-MoE", model_class="NllbMoeForConditionalGeneration"
)
class NllbMoeConfig(M2M100Config):
    """configuration_nllb_moe.py / modeling_nllb_moe.py (transformers 5.24).

    M2M-100's model (pre-LN layers, a final layer_norm on each stack, sinusoidal positions in a buffer that is neither
    a parameter nor saved, one shared table, no final_logits_bias), its modules named its own way: cross_attention,
    self_attn_layer_norm, cross_attention_layer_norm, ff_layer_norm, and the MLP under ffn (fc1, fc2, biased). Layer i
    of a stack is sparse when (i + 1) % *_sparse_step == 0 (none with a step of 0): its ffn is a router
    (ffn.router.classifier, bias with router_bias) and num_experts MLPs as wide as the dense ones
    (ffn.experts.expert_{e}). The router is NLLB's top-2 gate: each token through its two best experts.
    second_expert_policy "sampling" or "random" drops the second expert for some tokens, and expert_capacity for
    the tokens past it: ffncalc counts each token through both (an upper bound then).
    """

    class_prefix = "NllbMoe"
    informational_fields = frozenset({"pad_token_id", "second_expert_policy", "expert_capacity"})

    encoder_sparse_step: WidthOrZero
    decoder_sparse_step: WidthOrZero
    num_experts: Width
    router_bias: Flag
    second_expert_policy: Name
    expert_capacity: WidthOrZero

    def sparse(self, kind: Literal["encoder", "decoder"], index: int) -> bool:
        """Whether layer INDEX of a stack routes its tokens to experts (NllbMoeEncoder's and NllbMoeDecoder's rule)."""
        step = self.encoder_sparse_step if kind == "encoder" else self.decoder_sparse_step
        return step > 0 and (index + 1) % step == 0

    def ffn(self, kind: Literal["encoder", "decoder"], index: int) -> DenseFfn | MoeFfn:
        width = self.encoder_ffn_dim if kind == "encoder" else self.decoder_ffn_dim
        act = self.activation_function
        if not self.sparse(kind, index):
            return DenseFfn(self.d_model, width, False, act, names(up="ffn.fc1", down="ffn.fc2"), bias=True)
        return MoeFfn(
            hidden_size=self.d_model,
            num_experts=self.num_experts,
            # NLLB's top-2 gate (NllbMoeTop2Router). transformers 5.24's NllbMoeExperts one-hot encodes the router's
            # one-hot top_1_mask again, so expert_0 and expert_1 take every token instead; ffncalc counts the design.
            experts_per_token=min(2, self.num_experts),
            expert=DenseFfn(self.d_model, width, False, act, names(up="fc1", down="fc2"), bias=True),
            names=names(router="ffn.router.classifier", experts="ffn.experts.expert_{e}"),
            router_bias=self.router_bias,
        )

    def stack(self, kind: Literal["encoder", "decoder"], root: str) -> tuple[Layer, ...]:
        """A stack's layers: self-attention, (decoder) cross-attention and the MLP or experts, each after its LayerNorm."""
        norm = self.layer_norm()
        name = f"{root}{kind}.layers.{{i}}"
        layers = []
        if kind == "encoder":
            attention = self.attention(self.encoder_attention_heads, SELF_ATTENTION)
            norms: Norms = (("self_attn_layer_norm", norm), ("ff_layer_norm", norm))
            for index in range(self.encoder_layers):
                layers.append(Layer(name, attention, self.ffn(kind, index), norms, stack="encoder"))
            return tuple(layers)
        heads = self.decoder_attention_heads
        attention, cross = self.attention(heads, SELF_ATTENTION), self.attention(heads, CROSS_ATTENTION)
        norms = (("self_attn_layer_norm", norm), ("cross_attention_layer_norm", norm), ("ff_layer_norm", norm))
        for index in range(self.decoder_layers):
            ffn = self.ffn(kind, index)
            layers.append(Layer(name, attention, ffn, norms, cross_attention=cross, stack="decoder"))
        return tuple(layers)
