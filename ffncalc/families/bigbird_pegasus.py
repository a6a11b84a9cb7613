"""BigBird-Pegasus (google/bigbird-pegasus-large-arxiv): Pegasus's pre-LN stacks with learned positions, whose encoder's
self-attention is BigBird's block-sparse attention (blocks of block_size queries reading their neighbouring blocks,
the first and last blocks and num_random_blocks random ones, over the input padded to whole blocks)."""

from __future__ import annotations

from typing import ClassVar, Literal

from ..schema import Flag, PositionCount, Width, WidthOrZero
from ..spec import Attention, BlockSparse, Layer, ModelSpec, Names, names
from ..values import replace
from .bart import BartLayout, Kind
from .big_bird import block_sparse_spec
from .registry import family

# BigBirdPegasusEncoderAttention: BigBird's self-attention (self: query, key, value) and its output projection (output)
ENCODER_ATTENTION = names(
    q="self_attn.self.query", k="self_attn.self.key", v="self_attn.self.value", o="self_attn.output"
)


@family(
    "bigbird_pegasus",
    transformers="BigBirdPegasusConfig",
    architecture="BigBird-Pegasus",
    model_class="BigBirdPegasusForConditionalGeneration",
    read_beyond={"num_labels": "no field: PreTrainedConfig turns a num_labels key into id2label"},
)
class BigBirdPegasusConfig(BartLayout):
    """configuration_bigbird_pegasus.py / modeling_bigbird_pegasus.py (transformers 5.24): BART's stacks and heads under
    model.* as Pegasus lays them out (pre-LN layers, no LayerNorm on the embeddings, a LayerNorm at the end of each stack,
    which BigBird-Pegasus stores as layernorm_embedding although it runs after the last layer), learned position tables
    of max_position_embeddings rows a stack (no offset), the seq2seq LM's head tied to shared and its final_logits_bias
    buffer; a sequence classifier (2 labels unless the config says) and a span predictor (qa_outputs, 2). Every
    attention's q, k, v and output projection is biased with use_bias (default false), fc1 and fc2 always.

    The encoder's self-attention is BigBirdPegasusEncoderAttention: BigBird's (self_attn.self: query, key, value) and
    self_attn.output. With attention_type "block_sparse" (the default) it is BigBird's block-sparse attention
    (Attention.block_sparse, as big_bird's): an input of at most (5 + 2 · num_random_blocks) · block_size tokens is
    attended fully (BigBirdPegasusEncoder switches to original_full, unpadded); a longer one is padded to a multiple of
    block_size (the padding's embeddings, no positions), the layers and the final norm run over the padded positions,
    and the padding is dropped before the decoder's cross-attention reads the encoder's output (its keys and values
    over the input's positions). The decoder's attention is always full.

    BigBirdPegasusForCausalLM is the decoder alone (model.decoder.*) with a head of its own: it declares no tied
    weights, so its lm_head is a tensor of its own whatever tie_word_embeddings says."""

    class_prefix = "BigBirdPegasus"
    classes: ClassVar[dict[str, Kind]] = {
        "Model": "model",
        "ForConditionalGeneration": "generation",
        "ForSequenceClassification": "sequence",
        "ForQuestionAnswering": "question",
        "ForCausalLM": "causal",
    }
    default_labels = 2  # BigBirdPegasusConfig sets no num_labels: PreTrainedConfig's 2
    position_offset = 0
    embedding_norm = False
    final_norms = True
    final_norm_module = "layernorm_embedding"

    max_position_embeddings: PositionCount
    attention_type: Literal["original_full", "block_sparse"]
    block_size: Width
    num_random_blocks: WidthOrZero
    use_bias: Flag

    def position_rows(self, kind: Literal["encoder", "decoder"]) -> int:
        return self.max_position_embeddings

    def block_sparse(self) -> BlockSparse | None:
        """The encoder's self-attention blocks, when block-sparse (attention_type "block_sparse") and built."""
        if self.attention_type != "block_sparse" or self.kind == "causal":
            return None
        return BlockSparse(block_size=self.block_size, random_blocks=self.num_random_blocks)

    def unused_fields(self) -> set[str]:
        unused = super().unused_fields() | (set() if self.block_sparse() else {"block_size", "num_random_blocks"})
        if self.kind == "causal":
            unused |= {"attention_type", "tie_word_embeddings"}
        return unused

    def attention(self, heads: int, attention_names: Names) -> Attention:
        head_dim, bias = self.d_model // heads, self.use_bias
        return Attention(self.d_model, heads, heads, head_dim, head_dim, attention_names, bias, bias, bias, bias)

    def stack(self, kind: Literal["encoder", "decoder"], root: str) -> tuple[Layer, ...]:
        layers = super().stack(kind, root)
        if kind == "decoder":
            return layers
        layer = layers[0]
        assert layer.attention is not None
        return (replace(layer, attention=replace(layer.attention, names=ENCODER_ATTENTION)),) * len(layers)

    def notes(self) -> list[str]:
        notes = super().notes()
        if self.kind == "causal" and self.tie_word_embeddings:
            notes.append(
                "BigBirdPegasusForCausalLM declares no tied weights: its lm_head is its own, though "
                "tie_word_embeddings is true."
            )
        return notes

    def to_spec(self) -> ModelSpec:
        spec = super().to_spec()
        if self.kind == "causal":
            spec = replace(spec, tie_word_embeddings=False)
        sparse = self.block_sparse()
        return spec if sparse is None else block_sparse_spec(spec, sparse)
