"""The GPT lineage: OpenAI's GPT-1 (openai-gpt: post-norm) and GPT-2 (learned positions, Conv1D; GPT-SW3 reads
as it), EleutherAI's GPT-Neo (local attention on alternate layers), GPT-J (parallel blocks), GPT-NeoX (Pythia) and its
Japanese port (gpt_neox_japanese: no biases but one), Salesforce's CodeGen (GPT-J's block with a
fused qkv_proj), and BigCode's StarCoder (gpt_bigcode: multi-query attention in a fused c_attn) and StarCoder2
(a Llama-shaped decoder with LayerNorms and biases)."""

from __future__ import annotations

from typing import Literal

from pydantic import AliasChoices, model_validator

from ..schema import Flag, HeadCount, LayerCount, LayerIndex, Name, PositionCount, Width, WidthOrZero, derives
from ..spec import (
    Attention,
    CheckpointExtra,
    DenseFfn,
    Layer,
    ModelNames,
    ModelSpec,
    Norm,
    Norms,
    Parameter,
    StoredTensor,
    names,
)
from ..values import replace
from .base import DecoderConfig, LayerNormDecoder
from .blocks import heads_divide
from .registry import family

GPT2_ATTENTION = names(q="attn.c_attn", k="attn.c_attn", v="attn.c_attn", o="attn.c_proj", transposed=True)
GPT2_MLP = names(up="mlp.c_fc", down="mlp.c_proj", transposed=True)
GPTJ_ATTENTION = names(q="attn.q_proj", k="attn.k_proj", v="attn.v_proj", o="attn.out_proj")
GPTJ_MLP = names(up="mlp.fc_in", down="mlp.fc_out")
NEOX_ATTENTION = names(
    q="attention.query_key_value", k="attention.query_key_value", v="attention.query_key_value", o="attention.dense"
)
NEOX_MLP = names(up="mlp.dense_h_to_4h", down="mlp.dense_4h_to_h")
NEO_ATTENTION = names(
    q="attn.attention.q_proj", k="attn.attention.k_proj", v="attn.attention.v_proj", o="attn.attention.out_proj"
)
LINEAR_MLP = names(
    up="mlp.c_fc", down="mlp.c_proj"
)  # GPT-2's names on nn.Linear, not Conv1D (GPT-Neo, StarCoder 1 and 2)
CODEGEN_ATTENTION = names(q="attn.qkv_proj", k="attn.qkv_proj", v="attn.qkv_proj", o="attn.out_proj")
BIGCODE_ATTENTION = names(q="attn.c_attn", k="attn.c_attn", v="attn.c_attn", o="attn.c_proj")
BIGCODE_CROSS_ATTENTION = names(
    q="crossattention.q_attn", k="crossattention.c_attn", v="crossattention.c_attn", o="crossattention.c_proj"
)


def aliases(*keys: str) -> AliasChoices:
    return AliasChoices(*keys)


@family("gpt2", transformers="GPT2Config", architecture="GPT-2", model_class="GPT2LMHeadModel")
class Gpt2Config(LayerNormDecoder):
    """configuration_gpt2.py / modeling_gpt2.py: n_embd / n_layer / n_head / n_positions (hidden_size
    etc. accepted too); ``n_inner: null`` means 4 · n_embd. Conv1D stores weights [in, out]; c_attn
    is q, k, v side by side. Older checkpoints also store each layer's causal mask."""

    context_field = "n_positions"

    vocab_size: Width
    n_positions: PositionCount
    n_embd: Width
    n_layer: LayerCount
    n_head: HeadCount
    n_inner: Width | None
    activation_function: Name
    tie_word_embeddings: Flag
    _check_heads = heads_divide("n_embd", "n_head")

    @property
    def width(self) -> int:
        return self.n_embd

    @property
    @derives("n_inner", "4 · n_embd")
    def ffn_width(self) -> int:
        return self.n_inner or 4 * self.n_embd

    def to_spec(self) -> ModelSpec:
        norm = self.layer_norm()
        ffn = self.plain_ffn(self.ffn_width, self.activation_function, True, GPT2_MLP)
        layer = Layer(
            self.layer_name, self.mha(self.n_head, True, GPT2_ATTENTION), ffn, (("ln_1", norm), ("ln_2", norm))
        )
        n = self.n_positions
        masks = CheckpointExtra(
            name="attn.bias causal-mask buffers",
            reason=f"{self.n_layer} layers × {n}² mask entries, saved by older transformers (e.g. openai-community/gpt2)",
            tensors=(StoredTensor(self.layer_name + ".attn.bias", (1, 1, n, n)),),
            per_layer=tuple(range(self.n_layer)),
        )
        masked_bias = CheckpointExtra(
            name="attn.masked_bias buffers",
            reason="one scalar per layer, saved by some older transformers",
            tensors=(StoredTensor(self.layer_name + ".attn.masked_bias", ()),),
            per_layer=tuple(range(self.n_layer)),
            likely=False,
        )
        return self.decoder_spec(
            layer,
            self.n_layer,
            norm,
            self.tie_word_embeddings,
            vocab_size=self.vocab_size,
            position_embeddings=n,
            names=ModelNames(
                "transformer.wte",
                "transformer.ln_f",
                position_embeddings="transformer.wpe",
                base_model_prefix="transformer",
            ),
            checkpoint_extras=(masks, masked_bias),
        )


@family("gpt-sw3", transformers="GPT2Config", architecture="GPT-SW3")
class GptSw3Config(Gpt2Config):
    """GPT-SW3 (AI Sweden): transformers reads its model_type as a GPT2Config and builds GPT2LMHeadModel
    (configuration_auto.py maps "gpt-sw3" to GPT2Config)."""


@family("openai-gpt", transformers="OpenAIGPTConfig", architecture="GPT-1", model_class="OpenAIGPTLMHeadModel")
class OpenAIGPTConfig(LayerNormDecoder):
    """configuration_openai.py / modeling_openai.py (GPT-1): GPT-2's Conv1D blocks (c_attn with q, k, v side by
    side, c_proj; mlp.c_fc, mlp.c_proj; all with biases) in post-norm order (ln_1 after attention, ln_2 after the
    MLP), no final norm; learned positions (positions_embed); the head tied to tokens_embed unless the config
    says otherwise."""

    context_field = "n_positions"

    vocab_size: Width
    n_positions: PositionCount
    n_embd: Width
    n_layer: LayerCount
    n_head: HeadCount
    afn: Name
    tie_word_embeddings: Flag
    _check_heads = heads_divide("n_embd", "n_head")

    @property
    def width(self) -> int:
        return self.n_embd

    def to_spec(self) -> ModelSpec:
        norm = self.layer_norm()
        ffn = self.plain_ffn(4 * self.width, self.afn, True, GPT2_MLP)
        layer = Layer(
            self.layer_name, self.mha(self.n_head, True, GPT2_ATTENTION), ffn, (("ln_1", norm), ("ln_2", norm))
        )
        return self.decoder_spec(
            layer,
            self.n_layer,
            None,
            self.tie_word_embeddings,
            vocab_size=self.vocab_size,
            position_embeddings=self.n_positions,
            names=ModelNames(
                "transformer.tokens_embed",
                "",
                position_embeddings="transformer.positions_embed",
                base_model_prefix="transformer",
            ),
        )


@family("gptj", transformers="GPTJConfig", architecture="GPT-J", model_class="GPTJForCausalLM")
class GptjConfig(LayerNormDecoder):
    """configuration_gptj.py / modeling_gptj.py: attention and FFN in parallel after one LayerNorm;
    q, k, v, out without biases; fc_in and fc_out with; an untied head with a bias."""

    attention_names = GPTJ_ATTENTION
    informational_fields = frozenset({"n_positions"})
    context_field = "n_positions"

    vocab_size: Width
    n_positions: PositionCount
    n_embd: Width
    n_layer: LayerCount
    n_head: HeadCount
    n_inner: Width | None
    activation_function: Name
    tie_word_embeddings: Flag
    _check_heads = heads_divide("n_embd", "n_head")

    @property
    def width(self) -> int:
        return self.n_embd

    @property
    @derives("n_inner", "4 · n_embd")
    def ffn_width(self) -> int:
        return self.n_inner or 4 * self.n_embd

    def to_spec(self) -> ModelSpec:
        ffn = self.plain_ffn(self.ffn_width, self.activation_function, True, GPTJ_MLP)
        attention = self.mha(self.n_head, False, self.attention_names)
        layer = Layer(self.layer_name, attention, ffn, (("ln_1", self.layer_norm()),))
        return self.decoder_spec(
            layer,
            self.n_layer,
            self.layer_norm(),
            self.tie_word_embeddings,
            vocab_size=self.vocab_size,
            lm_head_bias=True,
            checkpoint_extras=self.checkpoint_extras(),
        )

    def checkpoint_extras(self) -> tuple[CheckpointExtra, ...]:
        return ()

    def notes(self) -> list[str]:
        """GPT-J-6B's model card gives n_parameters as mesh-transformer-jax counted them, over 8 shards."""
        shards, hidden, layers = 8, self.width, self.n_layer
        copies = (shards - 1) * layers * (2 * hidden + hidden) + (shards - 1) * 2 * hidden + shards * hidden
        return [
            "mesh-transformer-jax, where GPT-J was trained, counts parameters over its 8 model-parallel shards: "
            "each shard keeps its own copy of every layer norm, of fc_out's bias and of the final norm, and an "
            f"embedding bias of {hidden:,}; for this config that is {copies:,} more than the modules hold "
            "(the GPT-J-6B model card's n_parameters = this total + that)."
        ]


@family("gpt_neox", transformers="GPTNeoXConfig", architecture="GPT-NeoX", model_class="GPTNeoXForCausalLM")
class GptNeoxConfig(LayerNormDecoder):
    """configuration_gpt_neox.py / modeling_gpt_neox.py: fused query_key_value and dense with biases
    (attention_bias), two LayerNorms a layer, an untied embed_out head; use_parallel_residual changes
    the order only."""

    informational_fields = frozenset({"max_position_embeddings"})
    layer_name = "gpt_neox.layers.{i}"

    vocab_size: Width
    hidden_size: Width
    num_hidden_layers: LayerCount
    num_attention_heads: HeadCount
    intermediate_size: Width
    hidden_act: Name
    max_position_embeddings: PositionCount
    tie_word_embeddings: Flag
    attention_bias: Flag
    _check_heads = heads_divide("hidden_size", "num_attention_heads")

    @property
    def width(self) -> int:
        return self.hidden_size

    def to_spec(self) -> ModelSpec:
        ffn = self.plain_ffn(self.intermediate_size, self.hidden_act, True, NEOX_MLP)
        norms = (("input_layernorm", self.layer_norm()), ("post_attention_layernorm", self.layer_norm()))
        layer = Layer(
            self.layer_name, self.mha(self.num_attention_heads, self.attention_bias, NEOX_ATTENTION), ffn, norms
        )
        return self.decoder_spec(
            layer,
            self.num_hidden_layers,
            self.layer_norm(),
            self.tie_word_embeddings,
            vocab_size=self.vocab_size,
            names=ModelNames(
                "gpt_neox.embed_in", "gpt_neox.final_layer_norm", lm_head="embed_out", base_model_prefix="gpt_neox"
            ),
        )


@family(
    "gpt_neox_japanese",
    transformers="GPTNeoXJapaneseConfig",
    architecture="GPT-NeoX-Japanese",
    model_class="GPTNeoXJapaneseForCausalLM",
)
class GptNeoxJapaneseConfig(LayerNormDecoder):
    """configuration_gpt_neox_japanese.py / modeling_gpt_neox_japanese.py: GPT-NeoX's fused query_key_value and
    dense, without biases, except a bias on the last layer's attention output kept apart (attention.dense_bias,
    added with the residual); an MLP intermediate_multiple_size × hidden_size wide, without biases; the head
    embed_out tied to embed_in by default."""

    informational_fields = frozenset({"max_position_embeddings"})
    layer_name = "gpt_neox_japanese.layers.{i}"

    vocab_size: Width
    hidden_size: Width
    num_hidden_layers: LayerCount
    num_attention_heads: HeadCount
    intermediate_multiple_size: Width
    hidden_act: Name
    max_position_embeddings: PositionCount
    tie_word_embeddings: Flag
    # transformers builds heads of hidden_size // heads and reshapes the fused projection to them
    _check_heads = heads_divide("hidden_size", "num_attention_heads")

    @property
    def width(self) -> int:
        return self.hidden_size

    def to_spec(self) -> ModelSpec:
        width = self.hidden_size * self.intermediate_multiple_size
        ffn = self.plain_ffn(width, self.hidden_act, False, NEOX_MLP)
        norms = (("input_layernorm", self.layer_norm()), ("post_attention_layernorm", self.layer_norm()))
        layer = Layer(self.layer_name, self.mha(self.num_attention_heads, False, NEOX_ATTENTION), ffn, norms)
        dense_bias = Parameter("attention", "dense_bias", "attention.dense_bias", (self.hidden_size,))
        last = replace(layer, parameters=(dense_bias,))
        spec = self.decoder_spec(
            layer,
            self.num_hidden_layers,
            self.layer_norm(),
            self.tie_word_embeddings,
            vocab_size=self.vocab_size,
            names=ModelNames(
                "gpt_neox_japanese.embed_in",
                "gpt_neox_japanese.final_layer_norm",
                lm_head="embed_out",
                base_model_prefix="gpt_neox_japanese",
            ),
        )
        return replace(spec, layers=spec.layers[:-1] + (last,))


@family(
    "gpt_neo",
    transformers="GPTNeoConfig",
    architecture="GPT-Neo",
    model_class="GPTNeoForCausalLM",
    read_beyond={"attention_layers": "__post_init__ expands attention_types into it; a key overrides"},
)
class GptNeoConfig(LayerNormDecoder):
    """configuration_gpt_neo.py / modeling_gpt_neo.py: GPT-2's layout with nn.Linear projections (q, k, v
    without biases, out_proj with), learned positions, a tied head. Each layer's attention is "global" or
    "local": a local layer attends to the last window_size keys (its own included). The kinds come from
    ``attention_layers`` when the config carries it (transformers sets it from the config's keys after
    expanding ``attention_types``), else from ``attention_types``: [[kinds, repeat], …]."""

    layer_name = "transformer.h.{i}"

    vocab_size: Width
    max_position_embeddings: PositionCount
    hidden_size: Width
    num_layers: LayerCount
    attention_types: list[tuple[list[Literal["global", "local"]], LayerIndex]] | None  # [[kinds, repeat], …]
    attention_layers: list[Literal["global", "local"]] | None = None
    num_heads: HeadCount
    intermediate_size: Width | None
    window_size: WidthOrZero
    activation_function: Name
    tie_word_embeddings: Flag
    _check_heads = heads_divide("hidden_size", "num_heads")

    @model_validator(mode="after")
    def _check_layer_kinds(self) -> GptNeoConfig:
        if len(self.layer_kinds()) != self.num_layers:
            source = "attention_layers" if self.attention_layers is not None else "attention_types"
            raise ValueError(
                f"{source} gives {len(self.layer_kinds())} layer kinds for {self.num_layers} layers (num_layers)"
            )
        return self

    @property
    def width(self) -> int:
        return self.hidden_size

    @property
    @derives("intermediate_size", "4 · hidden_size")
    def ffn_width(self) -> int:
        return self.intermediate_size or 4 * self.hidden_size

    @derives("attention_types", "[[['global', 'local'], 12]]: 24 layers, global and local alternating")
    def layer_kinds(self) -> list[str]:
        """ "global" or "local" for each layer: attention_layers, or attention_types expanded."""
        if self.attention_layers is not None:
            return list(self.attention_layers)
        types = self.attention_types if self.attention_types is not None else [(["global", "local"], 12)]
        return [kind for kinds, repeat in types for _ in range(repeat) for kind in kinds]

    def unused_fields(self) -> set[str]:
        unused = {"attention_types"} if self.attention_layers is not None else set()
        return unused if "local" in self.layer_kinds() else unused | {"window_size"}

    def to_spec(self) -> ModelSpec:
        norm = self.layer_norm()
        width = self.hidden_size // self.num_heads
        ffn = self.plain_ffn(self.ffn_width, self.activation_function, True, LINEAR_MLP)
        norms = (("ln_1", norm), ("ln_2", norm))

        def layer(window: int | None) -> Layer:
            heads = self.num_heads
            attention = Attention(self.width, heads, heads, width, width, NEO_ATTENTION, o_bias=True, window=window)
            return Layer(self.layer_name, attention, ffn, norms)

        local, full = layer(self.window_size), layer(None)
        n = self.max_position_embeddings
        masks = CheckpointExtra(
            name="attn.attention.bias and masked_bias buffers",
            reason=(
                f"per layer a {n}² causal (or local) mask and a scalar: persistent buffers in the transformers that "
                "converted the first GPT-Neo checkpoints, non-persistent since"
            ),
            tensors=(
                StoredTensor(self.layer_name + ".attn.attention.bias", (1, 1, n, n)),
                StoredTensor(self.layer_name + ".attn.attention.masked_bias", ()),
            ),
            per_layer=tuple(range(self.num_layers)),
            likely=False,
        )
        return ModelSpec(
            model_type=self.model_type,
            hidden_size=self.width,
            vocab_size=self.vocab_size,
            layers=tuple(local if kind == "local" else full for kind in self.layer_kinds()),
            final_norm=norm,
            tie_word_embeddings=self.tie_word_embeddings,
            names=ModelNames(
                "transformer.wte",
                "transformer.ln_f",
                position_embeddings="transformer.wpe",
                base_model_prefix="transformer",
            ),
            position_embeddings=n,
            checkpoint_extras=(masks,),
        )


@family("codegen", transformers="CodeGenConfig", architecture="CodeGen", model_class="CodeGenForCausalLM")
class CodeGenConfig(GptjConfig):
    """configuration_codegen.py / modeling_codegen.py: GPT-J's parallel block (one LayerNorm, attention and
    MLP side by side) with q, k, v fused in qkv_proj (interleaved over 4 model-parallel shards: the shape is
    [3 · n_embd, n_embd] all the same); no attention biases; fc_in, fc_out and the untied head with biases."""

    attention_names = CODEGEN_ATTENTION

    def notes(self) -> list[str]:
        return LayerNormDecoder.notes(self)  # not GPT-J-6B's card

    def checkpoint_extras(self) -> tuple[CheckpointExtra, ...]:
        n = self.n_positions
        masks = CheckpointExtra(
            name="attn.causal_mask buffers",
            reason=(
                f"{self.n_layer} layers × {n}² mask entries: a persistent buffer when the Salesforce checkpoints "
                "were converted (transformers now ignores attn.causal_mask on loading)"
            ),
            tensors=(StoredTensor(self.layer_name + ".attn.causal_mask", (1, 1, n, n)),),
            per_layer=tuple(range(self.n_layer)),
        )
        return (masks,)


@family("gpt_bigcode", transformers="GPTBigCodeConfig", architecture="GPT-BigCode", model_class="GPTBigCodeForCausalLM")
class GptBigCodeConfig(LayerNormDecoder):
    """configuration_gpt_bigcode.py / modeling_gpt_bigcode.py (SantaCoder, StarCoder): GPT-2's layout with
    nn.Linear projections; c_attn holds q (n_embd) and one key and value head (multi_query, the default) or a
    key and value per head, with biases; learned positions; a tied head. With add_cross_attention (not with
    multi_query, which transformers refuses) each layer also attends to an encoder's states: q_attn, c_attn (k
    and v), c_proj and a LayerNorm ln_cross_attn."""

    context_field = "n_positions"

    vocab_size: Width
    n_positions: PositionCount
    n_embd: Width
    n_layer: LayerCount
    n_head: HeadCount
    n_inner: Width | None
    activation_function: Name
    multi_query: Flag
    add_cross_attention: Flag
    tie_word_embeddings: Flag
    _check_heads = heads_divide("n_embd", "n_head")

    @model_validator(mode="after")
    def _check_cross_attention(self) -> GptBigCodeConfig:
        if self.add_cross_attention and self.multi_query:
            raise ValueError("add_cross_attention: transformers has no cross-attention for multi_query models")
        return self

    @property
    def width(self) -> int:
        return self.n_embd

    @property
    @derives("n_inner", "4 · n_embd")
    def ffn_width(self) -> int:
        return self.n_inner or 4 * self.n_embd

    def to_spec(self) -> ModelSpec:
        norm = self.layer_norm()
        kv_heads = 1 if self.multi_query else self.n_head
        ffn = self.plain_ffn(self.ffn_width, self.activation_function, True, LINEAR_MLP)
        norms: Norms = (("ln_1", norm), ("ln_2", norm))
        cross = None
        if self.add_cross_attention:
            cross = self.mha(self.n_head, True, BIGCODE_CROSS_ATTENTION)
            norms += (("ln_cross_attn", norm),)
        layer = Layer(
            self.layer_name, self.mha(self.n_head, True, BIGCODE_ATTENTION, kv_heads), ffn, norms, cross_attention=cross
        )
        return self.decoder_spec(
            layer,
            self.n_layer,
            norm,
            self.tie_word_embeddings,
            vocab_size=self.vocab_size,
            position_embeddings=self.n_positions,
            names=ModelNames(
                "transformer.wte",
                "transformer.ln_f",
                position_embeddings="transformer.wpe",
                base_model_prefix="transformer",
            ),
        )


@family(
    "starcoder2",
    transformers="Starcoder2Config",
    architecture="StarCoder2",
    model_class="Starcoder2ForCausalLM",
    heads_divide_hidden=False,  # no check: head_dim is floored
    read_beyond={"head_dim": "read by the modeling code with getattr"},
)
class Starcoder2Config(DecoderConfig):
    """configuration_starcoder2.py / modeling_starcoder2.py: Llama's layout (GQA, rotary, model.layers) with
    LayerNorms (weight and bias) and a plain MLP (c_fc, c_proj); q, k, v, o and the MLP biased by use_bias;
    every layer slides within sliding_window when one is set; a tied head."""

    mlp_names = LINEAR_MLP

    num_hidden_layers: LayerCount
    intermediate_size: Width
    tie_word_embeddings: Flag
    head_dim: Width | None = None
    num_key_value_heads: HeadCount
    hidden_act: Name
    max_position_embeddings: PositionCount
    sliding_window: Width | None
    use_bias: Flag

    def layer_windows(self) -> list[int | None]:
        return [self.sliding_window] * self.num_hidden_layers

    def layer_norm(self) -> Norm:
        return Norm("layernorm", self.hidden_size, bias=True)

    def pre_norms(self) -> tuple[tuple[str, Norm], ...]:
        return (("input_layernorm", self.layer_norm()), ("post_attention_layernorm", self.layer_norm()))

    def build_layer(self, index: int, window: int | None) -> Layer:
        bias = self.use_bias
        attention = self.attention(window, q_bias=bias, k_bias=bias, v_bias=bias, o_bias=bias)
        ffn = DenseFfn(self.hidden_size, self.intermediate_size, False, self.hidden_act, self.mlp_names, bias)
        return self.layer(attention, ffn)

    def to_spec(self) -> ModelSpec:
        return replace(super().to_spec(), final_norm=self.layer_norm())
