"""Meituan's LongCat-Flash: each layer runs two MLA blocks, each followed by a dense MLP, and a "shortcut" MoE
beside the first MLP whose router may also pick zero experts (identity experts that hold and cost nothing)."""

from __future__ import annotations

from ..schema import (
    ExpertCount,
    ExpertCountOrZero,
    Flag,
    HeadCount,
    LayerCount,
    Name,
    PositionCount,
    Width,
    derives,
    unroutable,
)
from ..spec import Attention, CheckpointExtra, Ffn, Layer, Mla, Names, StoredTensor, names
from ..values import replace
from .base import DecoderConfig
from .deepseek import correction_bias_extra, even_rope_check
from .registry import family

LONGCAT_MOE = names(router="mlp.router.classifier", experts="mlp.experts.{e}")


def sublayer_names(block: int) -> tuple[Names, Names]:
    """Where the checkpoint keeps a layer's attention block BLOCK (self_attn.{block}) and its MLP (mlps.{block})."""
    attention = f"self_attn.{block}."
    mla = names(
        q_a=attention + "q_a_proj",
        q_a_layernorm=attention + "q_a_layernorm",
        q_b=attention + "q_b_proj",
        kv_a=attention + "kv_a_proj_with_mqa",
        kv_a_layernorm=attention + "kv_a_layernorm",
        kv_b=attention + "kv_b_proj",
        o=attention + "o_proj",
    )
    mlp = names(gate=f"mlps.{block}.gate_proj", up=f"mlps.{block}.up_proj", down=f"mlps.{block}.down_proj")
    return mla, mlp


@family(
    "longcat_flash",
    transformers="LongcatFlashConfig",
    architecture="LongCat-Flash",
    model_class="LongcatFlashForCausalLM",
    heads_divide_hidden=False,  # LongcatFlashConfig has no validate_architecture of its own
    routing=("moe_topk", "n_routed_experts"),
    read_beyond={
        "num_hidden_layers": "a property of LongcatFlashConfig (2 · num_layers), not a field; a config's key reaches its setter",
        "router_bias": "no field of LongcatFlashConfig: the router reads it with getattr",
    },
)
class LongcatFlashConfig(DecoderConfig):
    """configuration_longcat_flash.py / modeling_longcat_flash.py.

    A layer of the checkpoint (model.layers.{i}, num_layers of them) is two spec layers in a row, as transformers
    counts them (num_hidden_layers = 2 · num_layers, each attention block with its own KV cache): MLA block 0 and
    MLP 0 with the MoE beside that MLP (it reads the same input; counted as the MoE's shared expert), then MLA block 1
    and MLP 1, stored under the same index. The MLA is DeepSeek-V3's with a query latent always; attention_bias
    reaches q_a, kv_a and o_proj. The router (classifier) scores n_routed_experts + zero_expert_num experts and picks
    moe_topk; zero experts return their input, so a token runs at most min(moe_topk, n_routed_experts) real experts,
    which is what active parameters and FLOPs count. The router's e_score_correction_bias is a persistent buffer.

    transformers 5.24 also allocates gate_up_proj rows for the zero experts (LongcatFlashExperts: gate_up_proj of
    n_routed_experts + zero_expert_num experts, down_proj of n_routed_experts); they never run, so they are not
    counted, and a checkpoint transformers saves holds them as explained extras.
    """

    moe_names = LONGCAT_MOE

    intermediate_size: Width
    tie_word_embeddings: Flag
    attention_bias: Flag
    num_key_value_heads: HeadCount | None
    hidden_act: Name
    num_layers: LayerCount
    num_hidden_layers: LayerCount | None = None
    max_position_embeddings: PositionCount
    q_lora_rank: Width
    kv_lora_rank: Width
    qk_nope_head_dim: Width
    qk_rope_head_dim: Width
    head_dim: Width  # the rotary width; MLA's widths come from the fields above
    v_head_dim: Width
    qk_head_dim: Width | None
    moe_topk: ExpertCount
    n_routed_experts: ExpertCountOrZero
    zero_expert_num: ExpertCountOrZero
    expert_ffn_hidden_size: Width
    router_bias: Flag = False  # not a field of LongcatFlashConfig: a key the router reads

    _even_rope = even_rope_check()

    def unused_fields(self) -> set[str]:
        # MLA caches its latent whatever the KV heads; head_dim is the rotary width, which holds no weights.
        return {"num_key_value_heads", "head_dim"} | (
            {"num_layers"} if self.num_hidden_layers is not None else {"num_hidden_layers"}
        )

    def warnings(self) -> list[str]:
        # Zero experts are experts the router may pick too.
        return unroutable(
            self.moe_topk,
            self.n_routed_experts + self.zero_expert_num,
            "moe_topk",
            "n_routed_experts + zero_expert_num",
        )

    def notes(self) -> list[str]:
        if not self.zero_expert_num:
            return []
        real = min(self.moe_topk, self.n_routed_experts)
        note = (
            f"zero experts: the router picks {self.moe_topk} of {self.n_routed_experts} experts and "
            f"{self.zero_expert_num} zero (identity) experts, which cost nothing; active parameters and FLOPs count "
            f"{real} real experts, the most a token runs (fewer when it picks zero experts)"
        )
        return [note]

    @property
    def layer_count(self) -> int:
        """Two spec layers a checkpoint layer (num_hidden_layers = 2 · num_layers, as transformers counts them)."""
        return 2 * self.blocks

    @property
    def blocks(self) -> int:
        """Checkpoint layers: num_layers, or num_hidden_layers // 2 when a config sets that (the property's setter)."""
        return self.num_hidden_layers // 2 if self.num_hidden_layers is not None else self.num_layers

    @property
    @derives("qk_head_dim", "qk_nope_head_dim + qk_rope_head_dim")
    def resolved_qk_head_dim(self) -> int:
        return self.qk_head_dim or self.qk_nope_head_dim + self.qk_rope_head_dim

    def mla_attention(self, attention_names: Names) -> Attention:
        mla = Mla(self.q_lora_rank, self.kv_lora_rank, self.qk_nope_head_dim, self.qk_rope_head_dim, self.v_head_dim)
        return self.attention(
            None,
            num_kv_heads=self.num_attention_heads,
            qk_head_dim=self.resolved_qk_head_dim,
            v_head_dim=self.v_head_dim,
            names=attention_names,
            v_bias=False,
            mla=mla,
        )

    def sublayer(self, block: int, ffn: Ffn, **fields) -> Layer:
        attention_names, _ = sublayer_names(block)
        norm = self.rms_norm()
        norms = ((f"input_layernorm.{block}", norm), (f"post_attention_layernorm.{block}", norm))
        return self.layer(self.mla_attention(attention_names), ffn, norms, **fields)

    def build_layers(self) -> tuple[Layer, ...]:
        first_mlp, second_mlp = (self.gated_ffn(names=sublayer_names(block)[1]) for block in (0, 1))
        moe = self.moe_ffn(
            self.n_routed_experts,
            self.moe_topk,
            self.expert_ffn_hidden_size,
            shared_width=self.intermediate_size,
            shared_names=first_mlp.names,
            router_bias=self.router_bias,
        )
        first = self.sublayer(0, replace(moe, zero_experts=self.zero_expert_num))
        second = self.sublayer(1, second_mlp, continues=True)
        return (first, second) * self.blocks

    def checkpoint_extras(self) -> tuple[CheckpointExtra, ...]:
        if not self.blocks:
            return ()
        layers = tuple(range(self.blocks))
        extras = [
            correction_bias_extra(self.layer_name, layers, self.n_routed_experts + self.zero_expert_num, "mlp.router")
        ]
        if self.zero_expert_num and self.n_routed_experts:
            shape = (self.expert_ffn_hidden_size, self.hidden_size)
            zero = range(self.n_routed_experts, self.n_routed_experts + self.zero_expert_num)
            extras.append(
                CheckpointExtra(
                    name="zero experts' gate and up projections",
                    reason=(
                        f"{self.zero_expert_num} zero experts × 2 per layer: transformers 5.24 allocates and saves gate "
                        "and up weights for them (gate_up_proj of routed + zero experts), which never run"
                    ),
                    tensors=tuple(
                        StoredTensor(f"{self.layer_name}.mlp.experts.{e}.{part}.weight", shape)
                        for e in zero
                        for part in ("gate_proj", "up_proj")
                    ),
                    per_layer=layers,
                    likely=False,
                )
            )
        return tuple(extras)
