"""The GPTs of OpenAI and EleutherAI: GPT-2 (learned positions, Conv1D), GPT-J (parallel blocks) and GPT-NeoX (Pythia)."""

from __future__ import annotations

from pydantic import AliasChoices, Field, model_validator

from ..schema import Flag, HeadCount, LayerCount, Name, PositionCount, Width
from ..spec import CheckpointExtra, Layer, ModelNames, ModelSpec, StoredTensor, names
from .base import LayerNormDecoder

GPT2_ATTENTION = names(q="attn.c_attn", k="attn.c_attn", v="attn.c_attn", o="attn.c_proj", transposed=True)
GPT2_MLP = names(up="mlp.c_fc", down="mlp.c_proj", transposed=True)
GPTJ_ATTENTION = names(q="attn.q_proj", k="attn.k_proj", v="attn.v_proj", o="attn.out_proj")
GPTJ_MLP = names(up="mlp.fc_in", down="mlp.fc_out")
NEOX_ATTENTION = names(
    q="attention.query_key_value", k="attention.query_key_value", v="attention.query_key_value", o="attention.dense"
)
NEOX_MLP = names(up="mlp.dense_h_to_4h", down="mlp.dense_4h_to_h")


def aliases(*keys: str) -> AliasChoices:
    return AliasChoices(*keys)


def heads_divide(width_field: str, heads_field: str):
    """transformers refuses a hidden size that is not a multiple of the heads (these families have no head_dim)."""

    def check(self):
        width, heads = getattr(self, width_field), getattr(self, heads_field)
        if width % heads:
            raise ValueError(f"{width_field} ({width}) is not a multiple of {heads_field} ({heads})")
        return self

    return model_validator(mode="after")(check)


class Gpt2Config(LayerNormDecoder):
    """configuration_gpt2.py / modeling_gpt2.py: n_embd / n_layer / n_head / n_positions (hidden_size
    etc. accepted too); ``n_inner: null`` means 4 · n_embd. Conv1D stores weights [in, out]; c_attn
    is q, k, v side by side. Older checkpoints also store each layer's causal mask."""

    architecture = "GPT-2"
    config_class = "GPT2Config"
    default_model_class = "GPT2LMHeadModel"
    derived_defaults = {"n_inner": "4 · n_embd"}
    context_field = "n_positions"

    vocab_size: Width = 50257
    n_positions: PositionCount = Field(1024, validation_alias=aliases("n_positions", "max_position_embeddings"))
    n_embd: Width = Field(768, validation_alias=aliases("n_embd", "hidden_size"))
    n_layer: LayerCount = Field(12, validation_alias=aliases("n_layer", "num_hidden_layers"))
    n_head: HeadCount = Field(12, validation_alias=aliases("n_head", "num_attention_heads"))
    n_inner: Width | None = None
    activation_function: Name = "gelu_new"
    tie_word_embeddings: Flag = True
    _check_heads = heads_divide("n_embd", "n_head")

    @property
    def width(self) -> int:
        return self.n_embd

    def resolved(self, field: str):
        return self.n_inner or 4 * self.n_embd if field == "n_inner" else super().resolved(field)

    def to_spec(self) -> ModelSpec:
        norm = self.layer_norm()
        ffn = self.plain_ffn(self.n_inner or 4 * self.width, self.activation_function, True, GPT2_MLP)
        layer = Layer(self.layer_name, self.mha(self.n_head, True, GPT2_ATTENTION), ffn, (("ln_1", norm), ("ln_2", norm)))
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
            names=ModelNames("transformer.wte", "transformer.ln_f", position_embeddings="transformer.wpe", base_model_prefix="transformer"),
            checkpoint_extras=(masks, masked_bias),
        )


class GptjConfig(LayerNormDecoder):
    """configuration_gptj.py / modeling_gptj.py: attention and FFN in parallel after one LayerNorm;
    q, k, v, out without biases; fc_in and fc_out with; an untied head with a bias."""

    architecture = "GPT-J"
    config_class = "GPTJConfig"
    default_model_class = "GPTJForCausalLM"
    derived_defaults = {"n_inner": "4 · n_embd"}
    informational_fields = frozenset({"n_positions"})
    context_field = "n_positions"

    vocab_size: Width = 50400
    n_positions: PositionCount = Field(2048, validation_alias=aliases("n_positions", "max_position_embeddings"))
    n_embd: Width = Field(4096, validation_alias=aliases("n_embd", "hidden_size"))
    n_layer: LayerCount = Field(28, validation_alias=aliases("n_layer", "num_hidden_layers"))
    n_head: HeadCount = Field(16, validation_alias=aliases("n_head", "num_attention_heads"))
    n_inner: Width | None = None
    activation_function: Name = "gelu_new"
    tie_word_embeddings: Flag = False
    _check_heads = heads_divide("n_embd", "n_head")

    @property
    def width(self) -> int:
        return self.n_embd

    def resolved(self, field: str):
        return self.n_inner or 4 * self.n_embd if field == "n_inner" else super().resolved(field)

    def to_spec(self) -> ModelSpec:
        ffn = self.plain_ffn(self.n_inner or 4 * self.width, self.activation_function, True, GPTJ_MLP)
        layer = Layer(self.layer_name, self.mha(self.n_head, False, GPTJ_ATTENTION), ffn, (("ln_1", self.layer_norm()),))
        return self.decoder_spec(
            layer, self.n_layer, self.layer_norm(), self.tie_word_embeddings, vocab_size=self.vocab_size, lm_head_bias=True
        )

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


class GptNeoxConfig(LayerNormDecoder):
    """configuration_gpt_neox.py / modeling_gpt_neox.py: fused query_key_value and dense with biases
    (attention_bias), two LayerNorms a layer, an untied embed_out head; use_parallel_residual changes
    the order only."""

    architecture = "GPT-NeoX"
    config_class = "GPTNeoXConfig"
    default_model_class = "GPTNeoXForCausalLM"
    informational_fields = frozenset({"max_position_embeddings"})
    layer_name = "gpt_neox.layers.{i}"

    vocab_size: Width = 50432
    hidden_size: Width = 6144
    num_hidden_layers: LayerCount = 44
    num_attention_heads: HeadCount = 64
    intermediate_size: Width = 24576
    hidden_act: Name = "gelu"
    max_position_embeddings: PositionCount = 2048
    tie_word_embeddings: Flag = False
    attention_bias: Flag = True
    _check_heads = heads_divide("hidden_size", "num_attention_heads")

    @property
    def width(self) -> int:
        return self.hidden_size

    def to_spec(self) -> ModelSpec:
        ffn = self.plain_ffn(self.intermediate_size, self.hidden_act, True, NEOX_MLP)
        norms = (("input_layernorm", self.layer_norm()), ("post_attention_layernorm", self.layer_norm()))
        layer = Layer(self.layer_name, self.mha(self.num_attention_heads, self.attention_bias, NEOX_ATTENTION), ffn, norms)
        return self.decoder_spec(
            layer,
            self.num_hidden_layers,
            self.layer_norm(),
            self.tie_word_embeddings,
            vocab_size=self.vocab_size,
            names=ModelNames("gpt_neox.embed_in", "gpt_neox.final_layer_norm", lm_head="embed_out", base_model_prefix="gpt_neox"),
        )
