"""MosaicML's MPT: ALiBi instead of positions, fused Wqkv, LayerNorms without biases, no biases anywhere."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from ..schema import Flag, HeadCount, LayerCount, PositionCount, Width
from ..spec import DenseFfn, Layer, ModelNames, ModelSpec, names
from .base import LayerNormDecoder
from .blocks import heads_divide
from .registry import family

MPT_ATTENTION = names(q="attn.Wqkv", k="attn.Wqkv", v="attn.Wqkv", o="attn.out_proj")
MPT_MLP = names(up="ffn.up_proj", down="ffn.down_proj")


@family("mpt", transformers="MptConfig", architecture="MPT", model_class="MptForCausalLM")
class MptConfig(LayerNormDecoder):
    """configuration_mpt.py / modeling_mpt.py as transformers builds MPT: every layer's Wqkv ([3 · d, d]),
    out_proj, and an MLP of width 4 · d_model (up_proj, down_proj), none with biases; LayerNorms with their
    biases removed; ALiBi (no parameters, no position table); a tied head.

    transformers' modules read none of expansion_ratio, no_bias, learned_pos_emb or attn_config's attn_type
    and qk_ln: they build MPT-7B's choices (4, no biases, ALiBi, multi-head, no q/k norms) whatever the config
    says, and ffncalc counts what they build (notes() says where a config asks for more)."""

    informational_fields = frozenset({"max_seq_len"})
    context_field = "max_seq_len"
    layer_name = "transformer.blocks.{i}"
    model_names = ModelNames(
        embed_tokens="transformer.wte", final_norm="transformer.norm_f", base_model_prefix="transformer"
    )

    d_model: Width
    n_heads: HeadCount
    n_layers: LayerCount
    expansion_ratio: Annotated[int, Field(strict=True)]
    max_seq_len: PositionCount
    vocab_size: Width
    learned_pos_emb: Flag
    attn_config: dict[str, Any] | None
    no_bias: Flag
    tie_word_embeddings: Flag
    # transformers builds n_heads heads of d_model // n_heads and never checks: a remainder could not run
    _check_heads = heads_divide("d_model", "n_heads")

    @property
    def width(self) -> int:
        return self.d_model

    def unused_fields(self) -> set[str]:
        return {"expansion_ratio", "learned_pos_emb", "attn_config", "no_bias"}

    def notes(self) -> list[str]:
        ignored = []
        if self.expansion_ratio != 4:
            ignored.append(f"expansion_ratio {self.expansion_ratio} (the MLP is 4 · d_model wide)")
        if not self.no_bias:
            ignored.append("no_bias false (no module has a bias)")
        if not self.learned_pos_emb:
            ignored.append("learned_pos_emb false (MPT has no position table either way)")
        attn = self.attn_config or {}
        if attn.get("attn_type", "multihead_attention") != "multihead_attention":
            ignored.append(f"attn_type {attn['attn_type']!r} (every head has its own key and value)")
        if attn.get("qk_ln"):
            ignored.append("qk_ln (no q/k norms)")
        if not ignored:
            return []
        return ["transformers' MPT ignores " + "; ".join(ignored) + ": counted as transformers builds it."]

    def to_spec(self) -> ModelSpec:
        norm = self.layer_norm(bias=False)
        ffn = DenseFfn(self.width, 4 * self.width, False, "gelu", MPT_MLP)
        layer = Layer(
            self.layer_name, self.mha(self.n_heads, False, MPT_ATTENTION), ffn, (("norm_1", norm), ("norm_2", norm))
        )
        return self.decoder_spec(layer, self.n_layers, norm, self.tie_word_embeddings, vocab_size=self.vocab_size)
