"""NeoMME: a bidirectional encoder of text and image patches (each patch one token of its sequence), with a
factorised token table, sigmoid-gated attention outputs, value embeddings and windows of two widths."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import Field, model_validator

from ..schema import Flag, HeadCount, HFConfig, LayerCount, PositionCount, Width, derives
from ..spec import (
    Attention,
    DenseFfn,
    Extra,
    Layer,
    Linear,
    ModelNames,
    ModelSpec,
    Norm,
    Parameter,
    Projection,
    Table,
    names,
)
from .registry import family

NEOMME_ATTENTION = names(
    q="self_attn.q_proj", k="self_attn.k_proj", v="self_attn.v_proj", o="self_attn.output_projection.o_proj"
)
NEOMME_MLP = names(up="mlp.up_proj", down="mlp.down_proj")
# Each class: (the masked-LM head, the retrieval head).
NEOMME_HEADS: dict[str, tuple[bool, bool]] = {
    "NeoMMEModel": (False, False),
    "NeoMMEForMaskedLM": (True, False),
    "NeoMMEForRetrieval": (False, True),
}


@family(
    "neomme",
    transformers="NeoMMEConfig",
    architecture="NeoMME",
    model_class="NeoMMEForMaskedLM",
    read_beyond={"per_layer_config": "PreTrainedConfig's, which __post_init__ derives when absent"},
)
class NeoMMEConfig(HFConfig):
    """configuration_neomme.py / modeling_neomme.py.

    Embeddings: a token table embedding_rank wide, then embedding_projection to hidden_size (no bias); an image's
    patches (3 · patch_size² values each) pass through patch_embeddings (a LayerNorm of the patch, up_proj to
    2 · hidden_size without bias, down_proj back with a bias) and take the place of image tokens in the sequence; a
    value table (value_embeddings, vocab × num_key_value_heads · head_dim) is looked up and added to the values of the
    first and last full-attention layers. Layers (pre-norm, RMSNorms without a scale: no parameters): q, k, v (GQA,
    head_dim, biased by attention_bias) with unscaled q and k norms; one alpha a head (exclusive self-attention: an
    elementwise correction); the output through output_projection (gate_proj: hidden → heads · head_dim, no bias,
    its sigmoid multiplying the attention's output, then o_proj, biased by attention_bias); an MLP up and down
    (relu2, biased by mlp_bias); two lambdas mixing the layer's input with the embeddings. Windows: a
    sliding-attention layer attends to keys within sliding_window either side (2 · sliding_window + 1), every
    second one within 1,024 instead (by default: __post_init__'s per_layer_config), the others to every key; a given
    per_layer_config sets each listed layer's sliding_window (null: every key), the config's for the others.

    Heads: the masked LM multiplies the final state by unembedding_projection's weight (hidden → embedding_rank) and
    then by lm_head (embedding_rank → vocab), both tied by tie_word_embeddings to embedding_projection and the token
    table; the retrieval model projects each token to embedding_dim (multi_vector_head.proj, no bias).

    ffncalc counts an image's patches by parameter only: they are tokens of the encoder's sequence, which the
    context already counts; the patch embedding's FLOPs per patch are not given (no `image`).
    """

    informational_fields = frozenset({"pad_token_id"})
    long_window: ClassVar[int] = 1024  # NeoMMEConfig.default_long_sliding_window

    vocab_size: Width
    embedding_rank: Width
    hidden_size: Width
    intermediate_size: Width
    hidden_act: Literal["relu2"]
    mlp_bias: Flag
    num_hidden_layers: LayerCount
    num_attention_heads: HeadCount
    num_key_value_heads: HeadCount
    head_dim: Width
    max_position_embeddings: PositionCount
    attention_bias: Flag
    layer_types: list[Literal["full_attention", "sliding_attention"]] | None
    sliding_window: Width | None
    per_layer_config: dict[str, dict[str, Any]] | None = None
    patch_size: Width
    embedding_dim: Width
    pad_token_id: Annotated[int | None, Field(strict=True)]
    tie_word_embeddings: Flag

    @model_validator(mode="after")
    def _check_layers(self) -> NeoMMEConfig:
        if self.num_attention_heads % self.num_key_value_heads:
            raise ValueError(
                f"num_key_value_heads ({self.num_key_value_heads}) does not divide num_attention_heads "
                f"({self.num_attention_heads}); transformers refuses it"
            )
        if self.layer_types is not None and len(self.layer_types) != self.num_hidden_layers:
            raise ValueError(f"layer_types has {len(self.layer_types)} entries for {self.num_hidden_layers} layers")
        if "full_attention" not in self.kinds():
            raise ValueError("layer_types: at least one layer must be full_attention (transformers refuses it)")
        self.layer_windows()  # a per_layer_config naming no layer, or a bad window, is refused here
        return self

    def model_class(self) -> str:
        named = (self.architectures or [""])[0]
        return named if named in NEOMME_HEADS else self.default_model_class

    @derives("layer_types", "every sixth layer and the last full attention, the others sliding")
    def kinds(self) -> list[str]:
        if self.layer_types is not None:
            return list(self.layer_types)
        last = self.num_hidden_layers - 1
        return [
            "full_attention" if (i + 1) % 6 == 0 or i == last else "sliding_attention"
            for i in range(self.num_hidden_layers)
        ]

    @derives(
        "per_layer_config",
        "each sliding layer's reach either side: 1,024 on every second one, sliding_window on the others (full layers "
        "read every key)",
    )
    def derived_radii(self) -> dict[str, int]:
        """__post_init__'s per_layer_config, as each sliding layer's index → how far either side it attends."""
        return {str(i): radius for i, radius in enumerate(self.layer_radii()) if radius is not None}

    def layer_radii(self) -> list[int | None]:
        """How far either side each layer attends (None: every key): per_layer_config's sliding_window where it lists
        the layer, else the config's sliding_window; without per_layer_config, __post_init__'s."""
        radii: list[int | None] = [self.sliding_window] * self.num_hidden_layers
        if self.per_layer_config is None:
            sliding = 0
            for index, kind in enumerate(self.kinds()):
                if kind == "full_attention":
                    radii[index] = None
                else:
                    radii[index] = self.long_window if sliding % 2 else self.sliding_window
                    sliding += 1
            return radii
        for key, overrides in self.per_layer_config.items():
            index = int(key) if key.strip().isdigit() else -1
            if not 0 <= index < self.num_hidden_layers:
                raise ValueError(f"per_layer_config: {key!r} is not a layer index (0 to {self.num_hidden_layers - 1})")
            radius = overrides.get("sliding_window", radii[index])
            if radius is not None and (not isinstance(radius, int) or isinstance(radius, bool) or radius <= 0):
                raise ValueError(f"per_layer_config[{key!r}].sliding_window must be a positive integer or null")
            radii[index] = radius
        return radii

    def layer_windows(self) -> list[int | None]:
        """The keys each layer attends to: 2 · its radius + 1 (|query − key| ≤ radius), or all of them."""
        return [None if radius is None else 2 * radius + 1 for radius in self.layer_radii()]

    def notes(self) -> list[str]:
        notes = []
        if self.architectures and self.architectures[0] not in NEOMME_HEADS:
            notes.append(
                f"{self.architectures[0]} is not a NeoMME class ffncalc knows; counted as {self.model_class()}."
            )
        notes.append(
            "An image's patches are tokens of NeoMME's sequence (patch_embeddings maps each into it): ffncalc counts "
            "the patch embeddings' parameters, and an image's tokens as context, not what `image` would cost."
        )
        return notes

    def unused_fields(self) -> set[str]:
        mlm, retrieval = NEOMME_HEADS[self.model_class()]
        unused = set() if retrieval else {"embedding_dim"}
        return unused | (set() if mlm else {"tie_word_embeddings"})

    def layers(self, root: str) -> tuple[Layer, ...]:
        hidden, heads, kv_heads, head_dim = (
            self.hidden_size,
            self.num_attention_heads,
            self.num_key_value_heads,
            self.head_dim,
        )
        bias = self.attention_bias
        ffn = DenseFfn(hidden, self.intermediate_size, False, self.hidden_act, NEOMME_MLP, bias=self.mlp_bias)
        parameters = (
            Parameter("attention", "exclusive_self_attention", "self_attn.exclusive_self_attention.alpha", (heads,)),
            Parameter("other", "lambdas", "lambdas", (2,)),
        )
        gate = Projection(
            "output_gate", "self_attn.output_projection.gate_proj", hidden, heads * head_dim, False, "attention"
        )
        built = []
        for window in self.layer_windows():
            attention = Attention(
                hidden, heads, kv_heads, head_dim, head_dim, NEOMME_ATTENTION, bias, bias, bias, bias, window=window
            )
            built.append(
                Layer(
                    f"{root}layers.{{i}}",
                    attention,
                    ffn,
                    (),
                    stack="encoder",
                    parameters=parameters,
                    projections=(gate,),
                )
            )
        return tuple(built)

    def to_spec(self) -> ModelSpec:
        mlm, retrieval = NEOMME_HEADS[self.model_class()]
        root = "" if self.model_class() == "NeoMMEModel" else "model."
        hidden, rank = self.hidden_size, self.embedding_rank
        patch = 3 * self.patch_size**2
        extras = [
            Extra("embedding", f"{root}embed_tokens.embedding_projection", Linear(rank, hidden)),
            Extra("other", f"{root}value_embeddings", Table(self.vocab_size, self.num_key_value_heads * self.head_dim)),
            Extra("norm", f"{root}patch_embeddings.norm", Norm("layernorm", patch, bias=True), "per_patch"),
            Extra("other", f"{root}patch_embeddings.up_proj", Linear(patch, 2 * hidden), "per_patch"),
            Extra("other", f"{root}patch_embeddings.down_proj", Linear(2 * hidden, hidden, bias=True), "per_patch"),
        ]
        if mlm:  # the final state times unembedding_projection's weight (tied: embedding_projection's), hidden → rank
            unembedding = Linear(rank, hidden)
            extras.append(Extra("lm_head", "unembedding_projection", unembedding, borrowed=self.tie_word_embeddings))
        if retrieval:
            extras.append(Extra("other", "multi_vector_head.proj", Linear(hidden, self.embedding_dim)))
        return ModelSpec(
            model_type=self.model_type,
            hidden_size=hidden,
            vocab_size=self.vocab_size,
            layers=self.layers(root),
            final_norm=None,
            tie_word_embeddings=self.tie_word_embeddings,
            names=ModelNames(f"{root}embed_tokens.word_embeddings", "", lm_head="lm_head", base_model_prefix="model"),
            embedding_dim=rank if rank != hidden else None,
            lm_head=mlm,
            extras=tuple(extras),
        )
