"""LongT5 (google/long-t5-local-base, google/long-t5-tglobal-base): T5's stacks, whose encoder attends locally, each
query to the keys within local_radius of it, scored in blocks of local_radius + 1 against its own block and the two
beside it; with transient-global attention also to one summary of every global_block_size tokens."""

from __future__ import annotations

from typing import Literal

from pydantic import model_validator

from ..schema import Name, Width
from ..spec import Attention, CheckpointExtra, Layer, Norm, Parameter, names
from ..values import replace
from .registry import family
from .t5 import T5Config

MODULES = {"local": "layer.0.LocalSelfAttention", "transient-global": "layer.0.TransientGlobalSelfAttention"}


@family("longt5", transformers="LongT5Config", architecture="LongT5", model_class="LongT5ForConditionalGeneration")
class LongT5Config(T5Config):
    """configuration_longt5.py / modeling_longt5.py (transformers 5.24): T5's stacks, blocks, norms, feed-forward
    sublayers and tied head, the decoder's self- and cross-attention T5's; each encoder block's self-attention is
    layer.0.LocalSelfAttention, or layer.0.TransientGlobalSelfAttention with encoder_attention_type
    "transient-global" (q, k, v, o, no biases; the first block's relative_attention_bias, buckets × heads).

    encoder_attention_type "local" (the default, LongT5LocalAttention): a query reads the keys within local_radius of
    it, its window 2 · local_radius + 1. The projections run over the input's n tokens; the scores in blocks of
    block_len = local_radius + 1: the queries, keys and values padded with zeros to P_b, a multiple of block_len, each
    block's queries scored against the keys of its block and the two beside it (3 · block_len, zeros past the ends),
    all of them, the window and the padding masked after, and the values likewise (Attention.scored_blocks); the output
    is cut back to n before o.

    "transient-global" (LongT5TransientGlobalAttention) scores the same blocks, and every query also reads
    S = n // global_block_size summary keys and values (Attention.summary_every): each the sum of its tokens' inputs
    (_create_global_aggregates, a one-hot einsum; the tokens past the last whole group join it), normed by the block's
    own global_input_layer_norm and projected by k and v. The first block also holds global_relative_attention_bias
    (buckets × heads), the bias of a query's distance to each summary."""

    local_radius: Width
    global_block_size: Width
    encoder_attention_type: Name

    @model_validator(mode="after")
    def _check_attention_type(self) -> LongT5Config:
        if self.encoder_attention_type not in MODULES:
            raise ValueError(
                f"encoder_attention_type: {self.encoder_attention_type!r} is neither 'local' nor 'transient-global', "
                "which transformers refuses"
            )
        return self

    def unused_fields(self) -> set[str]:
        return super().unused_fields() | ({"global_block_size"} if self.encoder_attention_type == "local" else set())

    @property
    def block_len(self) -> int:
        """LongT5LocalAttention.block_len: the local_radius keys either side of a query fit its block and the two
        beside it."""
        return self.local_radius + 1

    @property
    def transient_global(self) -> bool:
        return self.encoder_attention_type == "transient-global"

    def encoder_attention(self, attention: Attention) -> Attention:
        module = MODULES[self.encoder_attention_type]
        return replace(
            attention,
            names=names(
                q=f"{module}.q",
                k=f"{module}.k",
                v=f"{module}.v",
                o=f"{module}.o",
                relative_position_bias=f"{module}.relative_attention_bias",
            ),
            window=2 * self.local_radius + 1,
            scored_blocks=(self.block_len, 3),
            summary_every=self.global_block_size if self.transient_global else 0,
        )

    def stack(self, kind: Literal["encoder", "decoder"], count: int) -> tuple[Layer, ...]:
        """T5's; with transient-global each encoder block also holds global_input_layer_norm, and the first
        global_relative_attention_bias."""
        layers = super().stack(kind, count)
        if kind == "decoder" or not self.transient_global:
            return layers
        module = MODULES["transient-global"]
        norm = (f"{module}.global_input_layer_norm", Norm("rmsnorm", self.d_model))
        bias = Parameter(
            "attention",
            "global_relative_position_bias",
            f"{module}.global_relative_attention_bias.weight",
            (self.relative_attention_num_buckets, self.num_heads),
        )
        return tuple(
            replace(layer, norms=(*layer.norms, norm), parameters=(bias,) if index == 0 else ())
            for index, layer in enumerate(layers)
        )

    def stored_extras(self) -> tuple[CheckpointExtra, ...]:
        """T5's, but an untied lm_head is not likely: configuration_longt5.py says LongT5's checkpoints store
        shared.weight only, tie_word_embeddings false or not (it marks v1.1's unscaled decoder output)."""
        return tuple(
            replace(extra, likely=False) if extra.name == "untied lm_head" else extra
            for extra in super().stored_extras()
        )
