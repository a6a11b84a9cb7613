"""LongT5 (google/long-t5-local-base): T5's stacks, whose encoder attends locally, each query to the keys within
local_radius of it, scored in blocks of local_radius + 1 against its own block and the two beside it."""

from __future__ import annotations

from pydantic import model_validator

from ..schema import Name, Width
from ..spec import Attention, CheckpointExtra, names
from ..values import replace
from .registry import family
from .t5 import T5Config

LOCAL_ATTENTION = names(
    q="layer.0.LocalSelfAttention.q",
    k="layer.0.LocalSelfAttention.k",
    v="layer.0.LocalSelfAttention.v",
    o="layer.0.LocalSelfAttention.o",
    relative_position_bias="layer.0.LocalSelfAttention.relative_attention_bias",
)


@family("longt5", transformers="LongT5Config", architecture="LongT5", model_class="LongT5ForConditionalGeneration")
class LongT5Config(T5Config):
    """configuration_longt5.py / modeling_longt5.py (transformers 5.24): T5's stacks, blocks, norms, feed-forward
    sublayers and tied head, the decoder's self- and cross-attention T5's; each encoder block's self-attention is
    layer.0.LocalSelfAttention (q, k, v, o, no biases; the first block's relative_attention_bias, buckets × heads).

    encoder_attention_type "local" (the default, LongT5LocalAttention): a query reads the keys within local_radius of
    it, its window 2 · local_radius + 1. The projections run over the input's n tokens; the scores in blocks of
    block_len = local_radius + 1: the queries, keys and values padded with zeros to P_b, a multiple of block_len, each
    block's queries scored against the keys of its block and the two beside it (3 · block_len, zeros past the ends),
    all of them, the window and the padding masked after, and the values likewise (Attention.scored_blocks); the output
    is cut back to n before o. "transient-global" (each query also reading one summary of every global_block_size
    tokens, computed from the input in each layer) is refused: ffncalc does not count it."""

    local_radius: Width
    encoder_attention_type: Name

    @model_validator(mode="after")
    def _check_attention_type(self) -> LongT5Config:
        if self.encoder_attention_type == "transient-global":
            raise ValueError(
                "encoder_attention_type 'transient-global' is not counted (each query also reads one summary of every "
                "global_block_size tokens, computed from the input in every layer); only 'local' is"
            )
        if self.encoder_attention_type != "local":
            raise ValueError(
                f"encoder_attention_type: {self.encoder_attention_type!r} is neither 'local' nor 'transient-global', "
                "which transformers refuses"
            )
        return self

    @property
    def block_len(self) -> int:
        """LongT5LocalAttention.block_len: the local_radius keys either side of a query fit its block and the two
        beside it."""
        return self.local_radius + 1

    def encoder_attention(self, attention: Attention) -> Attention:
        return replace(
            attention,
            names=LOCAL_ATTENTION,
            window=2 * self.local_radius + 1,
            scored_blocks=(self.block_len, 3),
        )

    def stored_extras(self) -> tuple[CheckpointExtra, ...]:
        """T5's, but an untied lm_head is not likely: configuration_longt5.py says LongT5's checkpoints store
        shared.weight only, tie_word_embeddings false or not (it marks v1.1's unscaled decoder output)."""
        return tuple(
            replace(extra, likely=False) if extra.name == "untied lm_head" else extra
            for extra in super().stored_extras()
        )
