"""RWKV-4 (rwkv): a recurrent time mix (key, value, receptance, output and a decaying weighted sum per channel) and a
channel mix gated by its receptance, each reading the token shifted in by one position."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from ..schema import Flag, HFConfig, LayerCount, PositionCount, Width, derives
from ..spec import DenseFfn, Layer, Mixer, ModelNames, ModelSpec, Norm, Norms, Parameter, Projection, names
from .registry import family

BLOCK = "rwkv.blocks.{i}"
CHANNEL_MIX = names(up="feed_forward.key", down="feed_forward.value")


@family("rwkv", transformers="RwkvConfig", architecture="RWKV-4", model_class="RwkvForCausalLM")
class RwkvConfig(HFConfig):
    """configuration_rwkv.py / modeling_rwkv.py: num_hidden_layers blocks under rwkv.blocks, each two LayerNorms
    (ln1, ln2; block 0 also pre_ln, on the embeddings) around

    - the time mix (RwkvSelfAttention): key, value and receptance (hidden → attention_hidden_size) and output (back),
      no biases; time_decay and time_first (one per attention channel) and time_mix_key, _value, _receptance (one per
      hidden channel). Per channel it carries a numerator, a denominator and a running maximum, and each mix keeps
      the previous token's hidden state: 3 · attention_hidden_size + 2 · hidden_size numbers a sequence and layer.
      Its update per channel: the output's numerator and denominator, e1 · num + e2 · v and e1 · den + e2, the
      division, and the same two for the state (11 FLOPs; the exponentials and maxima are not counted);
    - the channel mix (RwkvFeedForward): key (hidden → intermediate_size), squared ReLU, value (back), scaled by
      sigmoid(receptance(x)) (hidden → hidden); time_mix_key and time_mix_receptance.

    attention_hidden_size defaults to hidden_size, intermediate_size to 4 · hidden_size. ln_out after the last
    block; the head (head, untied by default) is tied to rwkv.embeddings with tie_word_embeddings."""

    context_field = "context_length"
    informational_fields = frozenset({"context_length", "rescale_every"})

    vocab_size: Width
    context_length: PositionCount
    hidden_size: Width
    num_hidden_layers: LayerCount
    attention_hidden_size: Width | None
    intermediate_size: Width | None
    rescale_every: Annotated[int, Field(strict=True)]
    tie_word_embeddings: Flag

    @property
    @derives("attention_hidden_size", "hidden_size")
    def attention_width(self) -> int:
        return self.attention_hidden_size or self.hidden_size

    @property
    @derives("intermediate_size", "4 · hidden_size")
    def channel_mix_width(self) -> int:
        return self.intermediate_size or 4 * self.hidden_size

    def layer_norm(self) -> Norm:
        return Norm("layernorm", self.hidden_size, bias=True)

    def time_mix(self) -> Mixer:
        hidden, width = self.hidden_size, self.attention_width
        mixes = ("time_mix_key", "time_mix_value", "time_mix_receptance")
        return Mixer(
            kind="rwkv",
            projections=tuple(
                Projection(part, f"attention.{part}", hidden, width) for part in ("key", "value", "receptance")
            )
            + (Projection("output", "attention.output", width, hidden),),
            parameters=tuple(
                Parameter("mixer", "time_decay, time_first", f"attention.{name}", (width,))
                for name in ("time_decay", "time_first")
            )
            + tuple(Parameter("mixer", "time_mix", f"attention.{name}", (1, 1, hidden)) for name in mixes),
            state_elements=3 * width + 2 * hidden,
            state_update_flops=11 * width,
            component="attention",
        )

    def block(self, first: bool) -> Layer:
        hidden = self.hidden_size
        ffn = DenseFfn(hidden, self.channel_mix_width, gated=False, activation="relu2", names=CHANNEL_MIX)
        norms: Norms = (("pre_ln", self.layer_norm()),) if first else ()
        norms += (("ln1", self.layer_norm()), ("ln2", self.layer_norm()))
        return Layer(
            BLOCK,
            None,
            ffn,
            norms,
            mixer=self.time_mix(),
            projections=(Projection("receptance", "feed_forward.receptance", hidden, hidden, component="ffn"),),
            parameters=tuple(
                Parameter("ffn", "time_mix", f"feed_forward.{name}", (1, 1, hidden))
                for name in ("time_mix_key", "time_mix_receptance")
            ),
        )

    def to_spec(self) -> ModelSpec:
        rest = self.block(first=False)
        return ModelSpec(
            model_type=self.model_type,
            hidden_size=self.hidden_size,
            vocab_size=self.vocab_size,
            layers=(self.block(first=True),) + (rest,) * (self.num_hidden_layers - 1),
            final_norm=self.layer_norm(),
            tie_word_embeddings=self.tie_word_embeddings,
            names=ModelNames(
                embed_tokens="rwkv.embeddings", final_norm="rwkv.ln_out", lm_head="head", base_model_prefix="rwkv"
            ),
        )
