"""Doge (SmallDoge): Llama's layout with dynamic-mask attention, where each query reads the keep_window_size keys a
gate computed from the values ranks highest, and learned residual scales."""

from __future__ import annotations

from pydantic import model_validator

from ..schema import Flag, HeadCount, LayerCount, Name, PositionCount, Width
from ..spec import Layer, Parameter, Projection
from .base import DecoderConfig
from .registry import family


@family(
    "doge",
    transformers="DogeConfig",
    architecture="Doge",
    model_class="DogeForCausalLM",
    heads_divide_hidden=False,  # DogeConfig does not check it; the heads are head_dim (else hidden_size // heads) wide
    read_beyond={"head_dim": "no field of DogeConfig: DogeAttention reads it with getattr, else hidden_size // heads"},
)
class DogeConfig(DecoderConfig):
    """configuration_doge.py / modeling_doge.py (DogeAttention, DogeDecoderLayer): Llama's q, k, v and o projections
    (attention_bias on all), an RMSNorm on each query and key head (q_norm, k_norm), and the dynamic mask: dt_proj
    maps each key's values (num_key_value_heads · head_dim) to one gate a KV head (attention_bias), A (one a KV head)
    scales it, and once a query may read more than keep_window_size keys it reads the keep_window_size keys whose
    gates are largest (a top-k, no matmul), among the sliding_window last where a window is set; every key stays
    cached. The MLP is Llama's (mlp_bias); input_residual and post_attention_residual (hidden_size each) scale the
    residual stream around attention and the MLP. With is_moe the MLP is DogeCDMoE, whose experts are rows of two
    tables picked by product keys: ffncalc refuses it.

    transformers recomputes the gates of every cached key at each step (dt_proj over the whole cache); a gate depends
    on its key alone, so ffncalc counts dt_proj once a token, as a forward pass over a prompt runs it."""

    num_hidden_layers: LayerCount
    intermediate_size: Width
    tie_word_embeddings: Flag
    attention_bias: Flag
    mlp_bias: Flag
    max_position_embeddings: PositionCount
    num_key_value_heads: HeadCount | None
    hidden_act: Name
    sliding_window: Width | None
    keep_window_size: Width
    is_moe: Flag
    head_dim: Width | None = None  # read beyond the class (see the decorator)

    @model_validator(mode="after")
    def _check_mlp(self) -> DogeConfig:
        if self.is_moe:
            raise ValueError(
                "is_moe: Doge's CDMoE routes each token through product keys to experts that are single rows of two "
                "embedding tables (down_embed, up_embed) beside a dense MLP, which ffncalc does not count yet"
            )
        return self

    def layer_windows(self) -> list[int | None]:
        return [self.sliding_window] * self.layer_count

    def build_layer(self, index: int, window: int | None) -> Layer:
        head_dim, kv_heads = self.resolved_head_dim, self.kv_heads
        attention = self.attention(window, picked_keys=self.keep_window_size, **self.per_head_norms())
        gate = Projection(
            "dt_proj", "self_attn.dt_proj", kv_heads * head_dim, kv_heads, self.attention_bias, component="attention"
        )
        parameters = (
            Parameter("attention", "A", "self_attn.A", (kv_heads,)),
            Parameter("other", "input_residual", "input_residual", (self.hidden_size,)),
            Parameter("other", "post_attention_residual", "post_attention_residual", (self.hidden_size,)),
        )
        return self.layer(attention, self.gated_ffn(), projections=(gate,), parameters=parameters)
