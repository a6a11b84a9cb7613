"""Meta's Muse Glimmer and Muse Spark. Muse Glimmer: a Gemma-2-style language model with an output gate on its attention (AFMoE's) and weightless
q/k norms, a MoonViT-style tower (Kimi-K2.5's layers after a linear patch embedding and a learned position table),
and an adapter and projection into the text width. Muse Spark: the same wrapper and tower around an MoE language
model (latent experts, residual gates), with a convolutional audio tower over the raw waveform."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AliasChoices, Field, model_validator

from ..schema import ExpertCount, Flag, HeadCount, LayerCount, Name, Width, derives
from ..spec import (
    CheckpointExtra,
    Extra,
    Layer,
    LearnedTensor,
    Linear,
    ModelSpec,
    Norm,
    Parameter,
    Projection,
    Table,
    names,
)
from ..values import replace
from .blocks import MlpLayerTypes, encoder_layer, entries_check, windows_of_layer_types
from .deepseek import correction_bias_extra
from .gemma import STACKED_EXPERTS, Gemma2Config
from .multimodal import MultimodalLayers, relocate
from .qwen import TextOfWrapper
from .registry import family, tower
from .towers import Tower, TowerConfig, audio_module, projector_module, tower_module

MUSE_VISION_ATTENTION = names(q="attn.q_proj", k="attn.k_proj", v="attn.v_proj", o="attn.proj")
MUSE_VISION_MLP = names(up="mlp.fc1", down="mlp.fc2")


@family(
    "muse_glimmer_text",
    transformers="MuseGlimmerTextConfig",
    architecture="Muse Glimmer",
    model_class="MuseGlimmerTextModel",
)
class MuseGlimmerTextConfig(TextOfWrapper, Gemma2Config):
    """configuration_muse_glimmer.py (MuseGlimmerTextConfig) / modeling_muse_glimmer.py (MuseGlimmerTextModel):
    Gemma-2's four norms a layer and gated MLP; AFMoE's attention without its q/k norm weights (qk_norm is a
    weightless RMSNorm) and with its output gate (gate_proj: hidden → heads · head_dim, a sigmoid over the attention's
    output); layer_types by default: full attention on every fourth layer counted back from the last (those have no
    rotary positions), sliding_window on the others; the embedding's norm and the final norm's epsilon aside, a
    weighted final RMSNorm. No head of its own (the wrapper's lm_head)."""

    hidden_act: Name = Field(validation_alias=AliasChoices("hidden_activation", "hidden_act"))

    @derives("layer_types", "full_attention on every fourth layer counted back from the last, sliding the others")
    def window_kinds(self) -> list[str]:
        if self.layer_types is not None:
            return list(self.layer_types)
        last = self.num_hidden_layers - 1
        return ["full_attention" if (last - i) % 4 == 0 else "sliding_attention" for i in range(last + 1)]

    def layer_windows(self) -> list[int | None]:
        return windows_of_layer_types(self.window_kinds(), self.window)

    def build_layer(self, index: int, window: int | None) -> Layer:
        width = self.num_attention_heads * self.resolved_head_dim
        gate = Projection("gate_proj", "self_attn.gate_proj", self.hidden_size, width, component="attention")
        return self.layer(self.attention(window), self.gated_ffn(), self.sandwich_norms(), projections=(gate,))


@tower("muse_glimmer_vision", transformers="MuseGlimmerVisionConfig")
class MuseGlimmerVisionConfig(TowerConfig):
    """configuration_muse_glimmer.py (MuseGlimmerVisionConfig) / MuseGlimmerVisionModel: patches of patch_temporal
    frames of patch_size² pixels projected by a linear without bias (patch_embedder.patch_embedding), a learned table
    of pos_emb_height · pos_emb_width positions interpolated to each image (looked up, no matmul), ln_pre, Kimi-K2.5's
    layers (LayerNorms with biases; q, k, v and proj hidden → hidden, biased; a plain biased FFN), windowed within
    pos_emb_height patches a side on window_attention layers (layer_types), ln_post; merge_size² patches are then
    shuffled into one token. Its image processor (GLM-4.1V's smart resize, whose limits are not in config.json) has no
    rule here: the tower is counted by parameter."""

    informational_fields = frozenset({"max_position_embeddings"})

    hidden_size: Width
    num_hidden_layers: LayerCount
    num_attention_heads: HeadCount
    intermediate_size: Width
    hidden_act: Name
    patch_size: Width
    patch_temporal: Width
    merge_size: Width
    pos_emb_height: Width
    pos_emb_width: Width
    max_position_embeddings: Width
    layer_types: Annotated[list[Literal["full_attention", "window_attention"]] | None, Field(max_length=1 << 12)]

    @model_validator(mode="after")
    def _check_heads(self) -> MuseGlimmerVisionConfig:
        if self.hidden_size % self.num_attention_heads:
            raise ValueError(
                f"hidden_size ({self.hidden_size}) is not a multiple of num_attention_heads ({self.num_attention_heads})"
            )
        if self.layer_types is not None and len(self.layer_types) < self.num_hidden_layers:
            raise ValueError(f"layer_types has {len(self.layer_types)} entries for {self.num_hidden_layers} layers")
        return self

    def tower(self, prefix: str) -> Tower:
        hidden = self.hidden_size
        layer = encoder_layer(
            prefix + "layers.{i}", hidden, self.num_attention_heads, self.intermediate_size, self.hidden_act,
            attention_names=MUSE_VISION_ATTENTION, ffn_names=MUSE_VISION_MLP, norm_names=("norm1", "norm2"),
            norm_kind="layernorm", bias=True, gated=False,
        )  # fmt: skip
        norm = Norm("layernorm", hidden, bias=True)
        patch = self.patch_temporal * 3 * self.patch_size**2
        extras = (
            tower_module(prefix + "patch_embedder.patch_embedding", Linear(patch, hidden)),
            tower_module(
                prefix + "patch_embedder.position_embedding_table",
                Table(self.pos_emb_height * self.pos_emb_width, hidden),
            ),
            tower_module(prefix + "ln_pre", norm),
            tower_module(prefix + "ln_post", norm),
        )
        return Tower((layer,) * self.num_hidden_layers, extras, hidden * self.merge_size**2, None)


@family(
    "muse_glimmer",
    transformers="MuseGlimmerConfig",
    architecture="Muse Glimmer",
    model_class="MuseGlimmerForConditionalGeneration",
    read_beyond={
        "tie_word_embeddings": "no field of MuseGlimmerConfig: a key PreTrainedModel.tie_weights reads (absent: false); "
        "text_config's own ties nothing"
    },
)
class MuseGlimmerConfig(MultimodalLayers):
    """configuration_muse_glimmer.py / modeling_muse_glimmer.py (MuseGlimmerForConditionalGeneration): the language
    model (model.language_model.), the tower (model.vision_tower.), the adapter (vision_adapter: fc1 out_hidden_size →
    projector_hidden_size and fc2 square, no biases) and vision_projection (→ the text width, no bias; a weightless
    norm after it), and lm_head, tied to the token table only where the config's top level says tie_word_embeddings
    (PreTrainedModel.tie_weights reads the wrapper's config, whose class has no such field: false when absent)."""

    text_model_type = "muse_glimmer_text"
    vision_model_type = "muse_glimmer_vision"
    language_model_prefix = "model.language_model."
    vision_prefix = "model.vision_tower."
    lm_head_name = "lm_head"

    vision_config: dict[str, Any] | None
    tie_word_embeddings: Flag = False
    out_hidden_size: Width
    projector_hidden_size: Width
    projector_hidden_act: Name

    def tied(self) -> bool:
        """Whether lm_head is the token table: the top-level tie_word_embeddings key, false when absent."""
        return self.tie_word_embeddings

    def wrapped_spec(self) -> ModelSpec:
        assert isinstance(self.text, MuseGlimmerTextConfig)
        spec = replace(self.text.language_model_spec(), model_type=self.model_type, tie_word_embeddings=self.tied())
        return self.whole(relocate(spec, self.language_model_prefix, self.lm_head_name))

    def projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        inner = self.projector_hidden_size
        return (
            projector_module("model.vision_adapter.fc1", Linear(self.out_hidden_size, inner)),
            projector_module("model.vision_adapter.fc2", Linear(inner, inner)),
            projector_module("model.vision_projection", Linear(inner, text_hidden)),
        )


# --- Muse Spark: Muse Glimmer's wrapper and tower around an MoE language model, with a waveform audio tower ---------

MUSE_SPARK_MOE = names(
    router="mlp.gate", experts="mlp.experts", latent_in="mlp.pre_expert_proj", latent_out="mlp.post_expert_proj"
)


@family(
    "muse_spark_text",
    transformers="MuseSparkTextConfig",
    architecture="Muse Spark",
    model_class="MuseSparkTextModel",
    routing=("num_experts_per_tok", "num_local_experts"),
)
class MuseSparkTextConfig(MlpLayerTypes, MuseGlimmerTextConfig):
    """configuration_muse_spark.py (MuseSparkTextConfig) / modeling_muse_spark.py (MuseSparkTextModel): Muse Glimmer's
    attention (its output also normed, without weights), the norm after attention without weights, two residual
    gates a layer (post_attention_residual_gate, post_feedforward_residual_gate: one scalar per channel each), and on
    sparse layers (mlp_layer_types; all by default) an MoE whose router (with its correction-bias buffer) reads the
    hidden state while its num_local_experts stacked experts run at moe_hidden_size, between pre_expert_proj (with
    pre_expert_norm after it) and post_expert_proj, their outputs normed by one post_expert_norm; dense layers keep
    Glimmer's SwiGLU of intermediate_size. No head of its own (the wrapper's lm_head)."""

    moe_names = MUSE_SPARK_MOE
    expert_names = STACKED_EXPERTS
    informational_fields = frozenset(
        {"max_position_embeddings", "pad_token_id", "residual_gate_temperature", "routed_scaling_factor"}
    )

    hidden_act: Name
    moe_intermediate_size: Width
    num_local_experts: ExpertCount
    num_experts_per_tok: ExpertCount
    moe_hidden_size: Width
    routed_scaling_factor: float
    residual_gate_temperature: float
    mlp_layer_types: Annotated[list[Literal["dense", "sparse"]] | None, Field(max_length=1 << 14)]

    _check_mlp_layer_types = entries_check("mlp_layer_types", exact=False)

    @derives("mlp_layer_types", "sparse on every layer")
    def default_mlp_kinds(self) -> list[str]:
        return ["sparse"] * self.num_hidden_layers

    def unused_fields(self) -> set[str]:
        sparse = {"moe_intermediate_size", "num_local_experts", "num_experts_per_tok", "moe_hidden_size"}
        return self.unused_ffn_fields(sparse)

    def build_layer(self, index: int, window: int | None) -> Layer:
        width = self.num_attention_heads * self.resolved_head_dim
        gate = Projection("gate_proj", "self_attn.gate_proj", self.hidden_size, width, component="attention")
        norm = self.rms_norm()
        norms = (("input_layernorm", norm), ("pre_feedforward_layernorm", norm), ("post_feedforward_layernorm", norm))
        gates = [
            Parameter("other", name, f"{name}.gate", (self.hidden_size,))
            for name in ("post_attention_residual_gate", "post_feedforward_residual_gate")
        ]
        if not self.sparse(index):
            return self.layer(
                self.attention(window), self.gated_ffn(), norms, projections=(gate,), parameters=tuple(gates)
            )
        latent = self.moe_hidden_size
        moe = self.moe_ffn(
            self.num_local_experts, self.num_experts_per_tok, self.moe_intermediate_size, latent_size=latent
        )
        gates += [
            Parameter("norm", "pre_expert_norm", "mlp.pre_expert_norm.weight", (latent,)),
            Parameter("norm", "post_expert_norm", "mlp.experts.post_expert_norm.weight", (latent,)),
        ]
        return self.layer(self.attention(window), moe, norms, projections=(gate,), parameters=tuple(gates))

    def checkpoint_extras(self) -> tuple[CheckpointExtra, ...]:
        sparse = tuple(i for i in range(self.num_hidden_layers) if self.sparse(i))
        extras = super().checkpoint_extras()
        return extras + (correction_bias_extra(self.layer_name, sparse, self.num_local_experts),) if sparse else extras


@tower("muse_spark_vision", transformers="MuseSparkVisionConfig")
class MuseSparkVisionConfig(MuseGlimmerVisionConfig):
    """configuration_muse_spark.py (MuseSparkVisionConfig): Muse Glimmer's tower, fields and defaults."""


@tower("muse_spark_audio", transformers="MuseSparkAudioConfig")
class MuseSparkAudioConfig(TowerConfig):
    """configuration_muse_spark.py (MuseSparkAudioConfig) / MuseSparkAudioModel: a causal convolutional pyramid over
    the raw waveform, no attention — per stage (num_hidden_layers of them) a patch embedding (patch_sizes[s] samples
    or positions of the stage before, side by side, through a biased linear into hidden_sizes[s], then an RMSNorm)
    and depths[s] blocks (a biased depthwise causal convolution of conv_kernel_size taps, an RMSNorm, a biased FFN
    int(width · mlp_ratio) wide); a final RMSNorm, proj (biased) into out_hidden_size and an RMSNorm after it. Counted
    by parameter: an audio clip's FLOPs are not counted (no audio rule for a convolutional tower)."""

    patch_sizes: Annotated[list[Width], Field(min_length=1, max_length=64)]
    hidden_sizes: Annotated[list[Width], Field(min_length=1, max_length=64)]
    depths: Annotated[list[int], Field(min_length=1, max_length=64)]
    num_hidden_layers: LayerCount
    mlp_ratio: Annotated[float, Field(gt=0, le=64)]
    conv_kernel_size: Width
    hidden_act: Name
    out_hidden_size: Width

    @model_validator(mode="after")
    def _check_stages(self) -> MuseSparkAudioConfig:
        for field in ("patch_sizes", "hidden_sizes", "depths"):  # MuseSparkAudioModel reads them by stage
            if len(getattr(self, field)) < self.num_hidden_layers:
                raise ValueError(f"{field} has fewer entries than num_hidden_layers ({self.num_hidden_layers})")
        if any(depth < 0 for depth in self.depths):
            raise ValueError("depths: a stage cannot have fewer than 0 blocks")
        return self

    def tower(self, prefix: str) -> Tower:
        modules: list[tuple[str, Linear | Norm | LearnedTensor]] = []
        channels = 1  # the mono waveform
        for stage in range(self.num_hidden_layers):
            width, stage_name = self.hidden_sizes[stage], f"layers.{stage}."
            modules += [
                (stage_name + "patch_embedder.proj", Linear(channels * self.patch_sizes[stage], width, True)),
                (stage_name + "patch_embedder.norm", Norm("rmsnorm", width)),
            ]
            inner = int(width * self.mlp_ratio)  # CLIPMLP's width, the same float product as transformers'
            for block in range(self.depths[stage]):
                name = f"{stage_name}conv_blocks.{block}."
                modules += [
                    (name + "conv.weight", LearnedTensor((width, 1, self.conv_kernel_size), matmul=True)),
                    (name + "conv.bias", LearnedTensor((width,))),
                    (name + "norm", Norm("rmsnorm", width)),
                    (name + "mlp.fc1", Linear(width, inner, True)),
                    (name + "mlp.fc2", Linear(inner, width, True)),
                ]
            channels = width
        modules += [
            ("norm", Norm("rmsnorm", channels)),
            ("proj", Linear(channels, self.out_hidden_size, True)),
            ("post_proj_norm", Norm("rmsnorm", self.out_hidden_size)),
        ]
        extras = tuple(audio_module(prefix + name, module) for name, module in modules)
        return Tower((), extras, self.out_hidden_size, None)


@family(
    "muse_spark",
    transformers="MuseSparkConfig",
    architecture="Muse Spark",
    model_class="MuseSparkForConditionalGeneration",
)
class MuseSparkConfig(MuseGlimmerConfig):
    """configuration_muse_spark.py / modeling_muse_spark.py (MuseSparkForConditionalGeneration): Muse Glimmer's
    wrapper (the tower, vision_adapter, vision_projection; lm_head never tied: the class declares no tied weights, so
    neither tie_word_embeddings key ties it) around Muse Spark's language model, with the audio tower (model.audio_tower.), whose output is already the
    text width: no projector of its own."""

    text_model_type = "muse_spark_text"
    vision_model_type = "muse_spark_vision"
    audio_model_type = "muse_spark_audio"
    audio_prefix = "model.audio_tower."

    audio_config: dict[str, Any] | None

    def tied(self) -> bool:
        """Never: MuseSparkForConditionalGeneration declares no tied weights, whatever tie_word_embeddings says."""
        return False

    def unused_fields(self) -> set[str]:
        return {"tie_word_embeddings"}
