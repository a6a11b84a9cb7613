"""Xiaomi's MiMo: Qwen2's layers plus multi-token-prediction layers (custom code, read as data); MiMo-V2-Flash:
hybrid sliding-window attention with sinks, value heads narrower than query/key heads, and a DeepSeek-style MoE."""

from __future__ import annotations

from typing import Literal

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
    WidthOrZero,
    derives,
)
from ..spec import CheckpointExtra, Layer, StoredTensor, names
from .base import DecoderConfig
from .blocks import mtp_extra
from .deepseek import MlpLayerTypes, correction_bias_extra, entries_check
from .qwen import Qwen2Config
from .registry import family


@family("mimo")
class MimoConfig(Qwen2Config):
    """XiaomiMiMo/MiMo (custom code, read as data, never run): Qwen2's layers, plus
    num_nextn_predict_layers multi-token-prediction layers that the causal LM does not run. Each, as
    MiMo's modeling_mimo.py lays it out under model.mtp_layers.{k}: a Qwen2 decoder layer, token and
    hidden RMSNorms, input_proj (2H → H) and a final RMSNorm."""

    architecture = "MiMo"
    config_class = "MiMoConfig"
    default_model_class = "MiMoForCausalLM"

    num_nextn_predict_layers: LayerIndex = 0

    def checkpoint_extras(self) -> tuple[CheckpointExtra, ...]:
        count = self.num_nextn_predict_layers
        if not count:
            return super().checkpoint_extras()
        hidden = self.hidden_size
        base = self.build_layer(0, None)
        prefix = "model.mtp_layers.{i}"
        layer = Layer(prefix, base.attention, base.ffn, base.norms)
        tensors = (
            StoredTensor(prefix + ".token_layernorm.weight", (hidden,)),
            StoredTensor(prefix + ".hidden_layernorm.weight", (hidden,)),
            StoredTensor(prefix + ".input_proj.weight", (hidden, 2 * hidden)),
            StoredTensor(prefix + ".final_layernorm.weight", (hidden,)),
        )
        reason = f"num_nextn_predict_layers = {count}: a decoder layer, 3 RMSNorms and input_proj (2H → H) each"
        return super().checkpoint_extras() + (mtp_extra(count, 0, layer, tensors, reason),)


@family(
    "mimo_v2_flash",
    transformers="MiMoV2FlashConfig",
    architecture="MiMo-V2-Flash",
    model_class="MiMoV2FlashForCausalLM",
    heads_divide_hidden=False,  # MiMoV2FlashConfig has no validate_architecture of its own
    routing=("num_experts_per_tok", "n_routed_experts"),
    read_beyond={"sliding_window_size": "__post_init__ reads it from the config's keys"},
)
class MimoV2FlashConfig(MlpLayerTypes, DecoderConfig):
    """configuration_mimo_v2_flash.py / modeling_mimo_v2_flash.py (XiaomiMiMo/MiMo-V2-Flash).

    Attention: queries and keys of head_dim (192), values of v_head_dim (128), o_proj without a bias. Sliding layers
    (by default all but the first and every sixth) have twice num_key_value_heads and a learned sink per query head
    (stored as attention_sink_bias), and attend within sliding_window (sliding_window_size + 1 when a config gives
    sliding_window_size, the reference implementation's count of previous tokens). FFN: dense in the first layer,
    MoE in the others (mlp_layer_types): n_routed_experts of moe_intermediate_size, num_experts_per_tok per token,
    no shared expert; the router's e_score_correction_bias is a persistent buffer, saved with the weights.
    """

    attention_names = names(
        q="self_attn.q_proj",
        k="self_attn.k_proj",
        v="self_attn.v_proj",
        o="self_attn.o_proj",
        sinks="self_attn.attention_sink_bias",
    )

    num_hidden_layers: LayerCount
    intermediate_size: Width
    tie_word_embeddings: Flag
    attention_bias: Flag
    hidden_act: Name
    num_key_value_heads: HeadCount
    max_position_embeddings: PositionCount
    moe_intermediate_size: Width
    num_experts_per_tok: ExpertCount
    n_routed_experts: ExpertCountOrZero
    head_dim: Width
    v_head_dim: Width
    sliding_window: Width
    sliding_window_size: WidthOrZero | None = None  # not a field of MiMoV2FlashConfig: a key its __post_init__ reads
    layer_types: list[Literal["full_attention", "sliding_attention"]] | None
    mlp_layer_types: list[Literal["dense", "sparse"]] | None

    _mlp_entries = entries_check("mlp_layer_types", exact=True)

    @derives("mlp_layer_types", "the first layer dense, the others sparse")
    def default_mlp_kinds(self) -> list[str]:
        return ["dense"] + ["sparse"] * (self.num_hidden_layers - 1)

    def unused_fields(self) -> set[str]:
        return {"sliding_window"} if self.sliding_window_size is not None else set()

    @derives("layer_types", "the first layer and every sixth global, the others sliding")
    def kinds(self) -> list[str]:
        if self.layer_types is not None:
            return list(self.layer_types)
        return [
            "full_attention" if i == 0 or (i + 1) % 6 == 0 else "sliding_attention"
            for i in range(self.num_hidden_layers)
        ]

    @property
    def window(self) -> int:
        return self.sliding_window_size + 1 if self.sliding_window_size is not None else self.sliding_window

    def layer_windows(self) -> list[int | None]:
        return [self.window if kind == "sliding_attention" else None for kind in self.kinds()]

    def build_layer(self, index: int, window: int | None) -> Layer:
        sliding = window is not None
        attention = self.attention(
            window,
            num_kv_heads=self.num_key_value_heads * (2 if sliding else 1),
            v_head_dim=self.v_head_dim,
            o_bias=False,
            sinks=sliding,
        )
        if self.sparse(index):
            return self.layer(
                attention, self.moe_ffn(self.n_routed_experts, self.num_experts_per_tok, self.moe_intermediate_size)
            )
        return self.layer(attention, self.gated_ffn())

    def checkpoint_extras(self) -> tuple[CheckpointExtra, ...]:
        sparse = tuple(i for i in range(self.num_hidden_layers) if self.sparse(i))
        return (correction_bias_extra(self.layer_name, sparse, self.n_routed_experts),) if sparse else ()
