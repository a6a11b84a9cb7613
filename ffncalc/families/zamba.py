"""Zyphra's Zamba: Mamba layers (with per-head x_proj and dt_proj), and hybrid layers that also run the one shared
transformer block before their own Mamba; Zamba2: Mamba-2 layers, and hybrid layers that also run one of num_mem_blocks shared transformer blocks
(attention over the hidden state concatenated with the input embeddings, and a gated MLP) before their own Mamba-2.

A shared block's weights are held once, by the first hybrid layer that runs it, and run at every hybrid layer
that uses it: its parameters count once, its FLOPs at every use (``Layer.borrowed``). Each use adds low-rank
adapters of its own, stored in the block beside the others.
"""

from __future__ import annotations

import math
from typing import Annotated, Literal, cast

from pydantic import AliasChoices, Field, model_validator

from ..schema import Flag, HeadCount, LayerCount, Name, PositionCount, Width, derives, per_config
from ..spec import Attention, Component, DenseFfn, Layer, ModelNames, Names, Norm, Parameter, Projection, names
from .base import DecoderConfig
from .mixers import mamba2, mamba2_names, multi_head_mamba
from .registry import family

ZambaBlock = Literal["linear_attention", "mamba", "hybrid"]
SHARED = "shared_transformer."
ZAMBA_ATTENTION = names(
    q=SHARED + "self_attn.q_proj",
    k=SHARED + "self_attn.k_proj",
    v=SHARED + "self_attn.v_proj",
    o=SHARED + "self_attn.o_proj",
)
ZAMBA_MLP = names(
    gate=SHARED + "feed_forward.gate_up_proj",
    up=SHARED + "feed_forward.gate_up_proj",
    down=SHARED + "feed_forward.down_proj",
)


# transformers' default layers_block_type (54 layers).
DEFAULT_BLOCKS = cast(
    "list[ZambaBlock]",
    ["linear_attention"]
    + (["linear_attention"] * 5 + ["hybrid"]) * 7
    + ["linear_attention"] * 4
    + ["hybrid"]
    + ["linear_attention"] * 3
    + ["hybrid"]
    + ["linear_attention"] * 2,
)


@family(
    "zamba2",
    transformers="Zamba2Config",
    architecture="Zamba2",
    model_class="Zamba2ForCausalLM",
    heads_divide_hidden=False,  # configuration_zamba2.py floors 2 · hidden_size // num_attention_heads
    read_beyond=dict.fromkeys(
        ("attention_hidden_size", "attention_head_dim", "mamba_headdim"),
        "no field of Zamba2Config: __post_init__ derives it, and a config's key overrides it",
    ),
)
class Zamba2Config(DecoderConfig):
    """configuration_zamba2.py / modeling_zamba2.py.

    layers_block_type names each layer: a Mamba-2 layer ("mamba" or "linear_attention": an RMSNorm and a mixer of
    mamba_expand · hidden_size in n_mamba_heads heads, add_bias_linear on its projections, the conv always
    biased) or a hybrid layer: shared block h mod num_mem_blocks for the h-th hybrid layer, a linear map
    (hidden → hidden), then a Mamba-2 layer of its own (mamba_decoder). A shared block is an RMSNorm over the
    hidden state and the embeddings concatenated (attention_hidden_size, 2 · hidden_size), attention reading that
    width (heads of attention_head_dim, 2 · hidden_size / heads), an RMSNorm and a gated MLP (gate_up_proj fused,
    add_bias_linear). Each hybrid layer adds a rank-adapter_rank adapter to the MLP's gate_up input and, with
    use_shared_attention_adapter, to q, k and v.

    attention_hidden_size, attention_head_dim (or head_dim) and mamba_headdim are not fields: __post_init__ derives
    them, and a config that carries the keys overrides them, as transformers' Zamba2 configs do.
    """

    model_names = ModelNames(embed_tokens="model.embed_tokens", final_norm="model.final_layernorm")

    num_hidden_layers: LayerCount
    tie_word_embeddings: Flag
    max_position_embeddings: PositionCount
    layers_block_type: Annotated[list[ZambaBlock] | None, Field(max_length=1 << 14)]
    mamba_d_state: Width
    mamba_d_conv: Width
    mamba_expand: Width
    mamba_ngroups: HeadCount
    n_mamba_heads: HeadCount
    use_conv_bias: Flag  # declared, but transformers' Zamba2 convolution always has a bias
    add_bias_linear: Flag
    intermediate_size: Width | None
    hidden_act: Name
    num_key_value_heads: HeadCount | None
    num_mem_blocks: LayerCount
    use_shared_attention_adapter: Flag
    adapter_rank: Width
    attention_hidden_size: Width | None = None
    attention_head_dim: Width | None = Field(None, validation_alias=AliasChoices("attention_head_dim", "head_dim"))
    mamba_headdim: Width | None = None

    @model_validator(mode="after")
    def _check_blocks(self) -> Zamba2Config:
        if len(self.blocks()) != self.num_hidden_layers:
            raise ValueError(f"layers_block_type has {len(self.blocks())} entries for {self.num_hidden_layers} layers")
        return self

    def unused_fields(self) -> set[str]:
        unused = {"use_conv_bias"}  # read by no module
        if "hybrid" not in self.blocks():  # no shared block, no attention, no MLP
            unused |= {
                "intermediate_size",
                "hidden_act",
                "num_attention_heads",
                "num_key_value_heads",
                "num_mem_blocks",
                "use_shared_attention_adapter",
                "adapter_rank",
                "attention_hidden_size",
                "attention_head_dim",
            }
        return unused

    def notes(self) -> list[str]:
        if self.tie_word_embeddings or "hybrid" not in self.blocks():
            return []
        return [
            "tie_word_embeddings is false: transformers 5.24 then ties nothing, the shared transformer blocks included, "
            "and builds an independent copy of a shared block for every hybrid layer (a checkpoint stores one). "
            "ffncalc counts each shared block once, as the architecture and its checkpoints hold it."
        ]

    @derives("layers_block_type", "transformers' 54-layer pattern: a hybrid layer every sixth, then at 47 and 51")
    def blocks(self) -> list[str]:
        return list(self.layers_block_type) if self.layers_block_type is not None else list(DEFAULT_BLOCKS)

    @derives("intermediate_size", "4 · hidden_size")
    def ffn_width(self) -> int:
        return self.intermediate_size or 4 * self.hidden_size

    @derives("attention_hidden_size", "2 · hidden_size")
    def attention_input(self) -> int:
        return self.attention_hidden_size or 2 * self.hidden_size

    @derives("attention_head_dim", "2 · hidden_size // num_attention_heads")
    def attention_head_width(self) -> int:
        return self.attention_head_dim or 2 * self.hidden_size // self.num_attention_heads

    @derives("mamba_headdim", "mamba_expand · hidden_size // n_mamba_heads")
    def mamba_head_width(self) -> int:
        return self.mamba_headdim or self.mamba_expand * self.hidden_size // self.n_mamba_heads

    def mamba_layer(self, prefix: str):
        """A Mamba-2 mixer under PREFIX, and its RMSNorm."""
        mixer = mamba2(
            self.hidden_size,
            self.n_mamba_heads,
            self.mamba_head_width(),
            self.mamba_ngroups,
            self.mamba_d_state,
            self.mamba_d_conv,
            mamba2_names(prefix + "mamba."),
            proj_bias=self.add_bias_linear,
            conv_bias=True,
            inner=self.mamba_expand * self.hidden_size,
        )
        return mixer, (prefix + "input_layernorm", self.rms_norm())

    def adapters(self, use: int) -> list[tuple[Component, str, int, int, int]]:
        """The hybrid layer USE's adapters: (component, module, input, rank, output) of each."""
        mlp: list[tuple[Component, str, int, int, int]] = [
            (
                "ffn",
                f"{SHARED}feed_forward.gate_up_proj_adapter_list.{use}",
                self.hidden_size,
                self.adapter_rank,
                2 * self.ffn_width(),
            )
        ]
        if not self.use_shared_attention_adapter:
            return mlp
        width = self.attention_input()
        attention: list[tuple[Component, str, int, int, int]] = [
            ("attention", f"{SHARED}self_attn.linear_{x}_adapter_list.{use}", width, self.adapter_rank, width)
            for x in "qkv"
        ]
        return attention + mlp

    def hybrid_layer(self, use: int, uses_of_block: list[int]) -> Layer:
        """The USE-th hybrid layer. The first use of a block holds it with every use's adapters; the others borrow it."""
        attention = Attention(
            hidden_size=self.hidden_size,
            num_heads=self.num_attention_heads,
            num_kv_heads=self.kv_heads,
            qk_head_dim=self.attention_head_width(),
            v_head_dim=self.attention_head_width(),
            names=ZAMBA_ATTENTION,
            input_size=self.attention_input(),
        )
        mlp = DenseFfn(self.hidden_size, self.ffn_width(), True, self.hidden_act, ZAMBA_MLP, self.add_bias_linear)
        mixer, mamba_norm = self.mamba_layer("mamba_decoder.")
        norms = (
            (SHARED + "input_layernorm", Norm("rmsnorm", self.attention_input())),
            (SHARED + "pre_ff_layernorm", self.rms_norm()),
            mamba_norm,
        )
        projections = [Projection("linear", "linear", self.hidden_size, self.hidden_size, component="other")]
        for component, module, width, rank, out in self.adapters(use):
            projections.append(Projection("adapter", module + ".0", width, rank, component=component))
            projections.append(Projection("adapter", module + ".1", rank, out, component=component))
        holder = use == uses_of_block[0]
        parameters = []
        if holder:  # the other uses' adapters: stored here, run (and multiplied) at their own layers
            for other in uses_of_block[1:]:
                for component, module, width, rank, out in self.adapters(other):
                    parameters.append(Parameter(component, "adapter", module + ".0.weight", (rank, width)))
                    parameters.append(Parameter(component, "adapter", module + ".1.weight", (out, rank)))
        return Layer(
            self.layer_name,
            attention,
            mlp,
            norms,
            mixer=mixer,
            parameters=tuple(parameters),
            projections=tuple(projections),
            borrowed=() if holder else (SHARED,),
        )

    def build_layers(self) -> tuple[Layer, ...]:
        blocks = self.blocks()
        hybrids = [index for index, block in enumerate(blocks) if block == "hybrid"]
        uses = {b: [h for h in range(len(hybrids)) if h % self.num_mem_blocks == b] for b in range(self.num_mem_blocks)}
        mixer, norm = self.mamba_layer("")
        mamba_only = Layer(self.layer_name, None, None, (norm,), mixer=mixer)
        layers, use = [], 0
        for block in blocks:
            if block == "hybrid":
                layers.append(self.hybrid_layer(use, uses[use % self.num_mem_blocks]))
                use += 1
            else:
                layers.append(mamba_only)
        return tuple(layers)


ZambaV1Block = Literal["linear_attention", "hybrid"]
TRANSFORMER = "shared_transf."


@family(
    "zamba",
    transformers="ZambaConfig",
    architecture="Zamba",
    model_class="ZambaForCausalLM",
    heads_divide_hidden=False,  # configuration_zamba.py floors 2 · hidden_size // num_attention_heads
)
class ZambaConfig(DecoderConfig):
    """configuration_zamba.py / modeling_zamba.py (Zamba-7B).

    layers_block_type names each layer: a Mamba layer ("linear_attention", legacy "mamba": an RMSNorm and a mixer of
    mamba_expand · hidden_size channels in n_mamba_heads heads, each head its own x_proj and dt_proj, mamba_proj_bias
    on in_proj and out_proj, mamba_conv_bias on the conv) or a hybrid layer: the shared transformer block, a linear
    map (hidden → hidden, no bias), then a Mamba layer of its own (mamba_decoder). The block is an RMSNorm over the
    hidden state and the embeddings concatenated (attention_hidden_size, default 2 · hidden_size), attention reading
    that width (num_attention_heads and num_key_value_heads heads of attention_head_dim, default 2 · hidden_size //
    heads; no biases), an RMSNorm and a gated MLP of intermediate_size (gate_proj, up_proj, down_proj; hidden_act).
    Default layers: two Mamba, a hybrid, then a hybrid where (i − 3) % attn_layer_period == attn_layer_offset.

    transformers builds the block in every hybrid layer and ties them to the first one's (a checkpoint stores it
    once): its parameters count once, its FLOPs at every hybrid layer (``Layer.borrowed``).
    """

    model_names = ModelNames(embed_tokens="model.embed_tokens", final_norm="model.final_layernorm")

    num_hidden_layers: LayerCount
    intermediate_size: Width
    tie_word_embeddings: Flag
    attention_hidden_size: Width | None
    attention_head_dim: Width | None
    num_key_value_heads: HeadCount
    hidden_act: Name
    max_position_embeddings: PositionCount
    attn_layer_period: Width
    attn_layer_offset: Annotated[int, Field(strict=True)]
    mamba_d_state: Width
    mamba_d_conv: Width
    mamba_expand: Width
    n_mamba_heads: HeadCount
    mamba_dt_rank: Width | Literal["auto"]
    mamba_conv_bias: Flag
    mamba_proj_bias: Flag
    layers_block_type: Annotated[list[ZambaV1Block] | None, Field(max_length=1 << 14)]

    @model_validator(mode="after")
    def _check_zamba(self) -> ZambaConfig:
        if len(self.blocks()) != self.num_hidden_layers:  # validate_layer_type
            raise ValueError(f"layers_block_type has {len(self.blocks())} entries for {self.num_hidden_layers} layers")
        if self.mamba_expand * self.hidden_size % self.n_mamba_heads:  # ZambaConfig.validate_architecture
            raise ValueError(
                f"n_mamba_heads ({self.n_mamba_heads}) must divide mamba_expand · hidden_size "
                f"({self.mamba_expand * self.hidden_size}), as transformers requires"
            )
        return self

    def unused_fields(self) -> set[str]:
        unused = {"attn_layer_period", "attn_layer_offset"} if self.layers_block_type is not None else set()
        if "hybrid" not in self.blocks():  # no shared block, no attention, no MLP
            unused |= {
                "intermediate_size",
                "hidden_act",
                "num_attention_heads",
                "num_key_value_heads",
                "attention_hidden_size",
                "attention_head_dim",
            }
        return unused

    def notes(self) -> list[str]:
        if self.tie_word_embeddings or self.blocks().count("hybrid") < 2:
            return []
        return [
            "tie_word_embeddings is false: transformers 5.24 then ties nothing, the shared transformer block included, "
            "and builds an independent copy of it for every hybrid layer (a checkpoint stores one). ffncalc counts "
            "the block once, as the architecture and its checkpoints hold it."
        ]

    @derives(
        "layers_block_type", "two Mamba layers, a hybrid, then a hybrid every attn_layer_period from attn_layer_offset"
    )
    @per_config
    def blocks(self) -> list[str]:
        if self.layers_block_type is not None:
            return list(self.layers_block_type)
        rest = range(self.num_hidden_layers - 3)
        return ["linear_attention", "linear_attention", "hybrid"] + [
            "hybrid" if i % self.attn_layer_period == self.attn_layer_offset else "linear_attention" for i in rest
        ]

    @derives("attention_hidden_size", "2 · hidden_size")
    def attention_input(self) -> int:
        return self.attention_hidden_size or 2 * self.hidden_size

    @derives("attention_head_dim", "2 · hidden_size // num_attention_heads")
    def attention_head_width(self) -> int:
        return self.attention_head_dim or 2 * self.hidden_size // self.num_attention_heads

    @derives("mamba_dt_rank", "ceil(hidden_size / 16)", when="auto")
    def dt_rank(self) -> int:
        return math.ceil(self.hidden_size / 16) if self.mamba_dt_rank == "auto" else self.mamba_dt_rank

    def mamba_layer(self, prefix: str):
        """A Mamba mixer under PREFIX, and its RMSNorm."""
        mixer = multi_head_mamba(
            self.hidden_size,
            self.n_mamba_heads,
            self.mamba_expand * self.hidden_size,
            self.mamba_d_state,
            self.dt_rank(),
            self.mamba_d_conv,
            prefix + "mamba.",
            self.mamba_proj_bias,
            self.mamba_conv_bias,
        )
        return mixer, (prefix + "input_layernorm", self.rms_norm())

    def hybrid_layer(self, holder: bool) -> Layer:
        head_dim = self.attention_head_width()
        attention_names = Names(tuple((part, f"{TRANSFORMER}self_attn.{part}_proj") for part in "qkvo"))
        attention = Attention(
            hidden_size=self.hidden_size,
            num_heads=self.num_attention_heads,
            num_kv_heads=self.kv_heads,
            qk_head_dim=head_dim,
            v_head_dim=head_dim,
            names=attention_names,
            input_size=self.attention_input(),
        )
        mlp_names = Names(tuple((part, f"{TRANSFORMER}feed_forward.{part}_proj") for part in ("gate", "up", "down")))
        mlp = DenseFfn(self.hidden_size, self.intermediate_size, True, self.hidden_act, mlp_names)
        mixer, mamba_norm = self.mamba_layer("mamba_decoder.")
        norms = (
            (TRANSFORMER + "input_layernorm", Norm("rmsnorm", self.attention_input())),
            (TRANSFORMER + "pre_ff_layernorm", self.rms_norm()),
            mamba_norm,
        )
        linear = Projection("linear", "linear", self.hidden_size, self.hidden_size, component="other")
        return Layer(
            self.layer_name,
            attention,
            mlp,
            norms,
            mixer=mixer,
            projections=(linear,),
            borrowed=() if holder else (TRANSFORMER,),
        )

    def build_layers(self) -> tuple[Layer, ...]:
        mixer, norm = self.mamba_layer("")
        mamba_only = Layer(self.layer_name, None, None, (norm,), mixer=mixer)
        blocks = self.blocks()
        first = blocks.index("hybrid") if "hybrid" in blocks else -1
        holder, user = self.hybrid_layer(True), self.hybrid_layer(False)
        return tuple(
            mamba_only if block != "hybrid" else holder if index == first else user
            for index, block in enumerate(blocks)
        )
