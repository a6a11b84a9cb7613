"""Qwen's omni models' thinkers (transformers 5.24): a vision tower, an audio tower and a language model that reads
an image's, a video's and a clip's tokens among its text. The talker and the token-to-wave models that speak its
answer are other model_types (their own configs inside the whole omni model's), not counted here."""

from __future__ import annotations

from typing import Any

from ..schema import ExpertCount, ExpertCountOrZero, Flag, HeadCount, LayerCount, LayerIndex, Name, PositionCount, Width
from ..spec import Extra, Layer, LearnedTensor, Linear, Norm, Table, names
from ..values import replace
from .audio import Qwen3ASREncoderConfig, whisper_encoder_layer
from .base import DecoderConfig
from .qwen import QWEN_MOE, Qwen3VLConfig, Qwen25VLTextConfig, QwenMoeRule, TextOfWrapper
from .registry import family, tower
from .towers import Tower, TowerConfig, audio_module, projector_module, tower_module
from .vision import Qwen3VLVisionConfig, Qwen25VLVisionConfig

QWEN25_OMNI_VISION_ATTENTION = names(q="attn.q", k="attn.k", v="attn.v", o="attn.proj")


@tower("qwen2_5_omni_audio_encoder", transformers="Qwen2_5OmniAudioEncoderConfig")
class Qwen25OmniAudioEncoderConfig(TowerConfig):
    """configuration_qwen2_5_omni.py (Qwen2_5OmniAudioEncoderConfig) / modeling_qwen2_5_omni.py
    (Qwen2_5OmniAudioEncoder): Whisper's convolutions (conv1 num_mel_bins → d_model, conv2 d_model → d_model stride 2,
    3 taps, with biases) and pre-LN layers (q, v, out_proj biased, k_proj not; fc1, fc2 biased), sinusoidal positions
    (an unsaved buffer), its output average-pooled two positions into one (no weights), then ln_post and proj
    (d_model → output_dim, biased); audio_bos_eos_token (2 × output_dim) is a table the forward never reads. It reads
    chunks of 2 · n_window frames, each attending within itself, the last one short: no fixed-window rule."""

    informational_fields = frozenset({"n_window", "max_source_positions", "scale_embedding"})

    d_model: Width
    encoder_ffn_dim: Width
    encoder_layers: LayerCount
    encoder_attention_heads: HeadCount
    activation_function: Name
    num_mel_bins: Width
    max_source_positions: PositionCount
    output_dim: Width

    def tower(self, prefix: str) -> Tower:
        hidden, heads = self.d_model, self.encoder_attention_heads
        norm = Norm("layernorm", hidden, bias=True)
        layer = whisper_encoder_layer(
            prefix + "layers.{i}", hidden, heads, self.encoder_ffn_dim, self.activation_function
        )
        per_position = "per_audio_position"
        extras = (
            audio_module(prefix + "conv1.weight", LearnedTensor((hidden, self.num_mel_bins, 3), matmul=True)),
            audio_module(prefix + "conv1.bias", LearnedTensor((hidden,))),
            audio_module(prefix + "conv2.weight", LearnedTensor((hidden, hidden, 3), matmul=True), runs=per_position),
            audio_module(prefix + "conv2.bias", LearnedTensor((hidden,)), runs=per_position),
            audio_module(prefix + "audio_bos_eos_token", Table(2, self.output_dim), runs="per_audio_token"),
            audio_module(prefix + "ln_post", norm, runs="per_audio_token"),
            audio_module(prefix + "proj", Linear(hidden, self.output_dim, True), runs="per_audio_token"),
        )
        return Tower((layer,) * self.encoder_layers, extras, self.output_dim, None)


@tower("qwen2_5_omni_vision_encoder", transformers="Qwen2_5OmniVisionEncoderConfig")
class Qwen25OmniVisionEncoderConfig(Qwen25VLVisionConfig):
    """configuration_qwen2_5_omni.py (Qwen2_5OmniVisionEncoderConfig) / modeling_qwen2_5_omni.py
    (Qwen2_5OmniVisionEncoder): Qwen2.5-VL's tower, windows and merger, its q, k and v separate linears (attn.q,
    attn.k, attn.v, with biases) where Qwen2.5-VL fuses them."""

    informational_fields = frozenset({"window_size", "fullatt_block_indexes"})

    def tower(self, prefix: str) -> Tower:
        tower = super().tower(prefix)
        split = []
        for layer in tower.layers:
            assert layer.attention is not None  # every block of Qwen2.5-VL's tower attends
            split.append(replace(layer, attention=replace(layer.attention, names=QWEN25_OMNI_VISION_ATTENTION)))
        return replace(tower, layers=tuple(split))


@family(
    "qwen2_5_omni_text",
    transformers="Qwen2_5OmniTextConfig",
    architecture="Qwen2.5-Omni",
    model_class="Qwen2_5OmniThinkerTextModel",
)
class Qwen25OmniTextConfig(Qwen25VLTextConfig):
    """configuration_qwen2_5_omni.py (Qwen2_5OmniTextConfig) / Qwen2_5OmniThinkerTextModel: Qwen2.5-VL's language
    model (q, k, v biased; head_dim hidden / heads) with Qwen2.5-Omni-7B's defaults and a tie_word_embeddings of its
    own (default true) that the thinker does not read: its own flag ties the head. No head of its own."""

    tie_word_embeddings: Flag


@family(
    "qwen2_5_omni_thinker",
    transformers="Qwen2_5OmniThinkerConfig",
    architecture="Qwen2.5-Omni",
    model_class="Qwen2_5OmniThinkerForConditionalGeneration",
)
class Qwen25OmniThinkerConfig(Qwen3VLConfig):
    """configuration_qwen2_5_omni.py (Qwen2_5OmniThinkerConfig) / Qwen2_5OmniThinkerForConditionalGeneration: the
    audio tower (audio_tower.), the vision tower and its merger (visual.), the language model (model.) and lm_head,
    as checkpoints store them, tied to the token table by the thinker's tie_word_embeddings (default
    false; the text config's own flag is not read). The audio tower's proj carries a clip into the language model:
    no projector of the wrapper's."""

    text_model_type = "qwen2_5_omni_text"
    vision_model_type = "qwen2_5_omni_vision_encoder"
    audio_model_type = "qwen2_5_omni_audio_encoder"
    # Saved in transformers 4's layout (conversion_mapping.py maps qwen2_5_omni_thinker to Qwen2.5-VL's rules)
    language_model_prefix = "model."
    vision_prefix = "visual."
    audio_prefix = "audio_tower."
    informational_fields = frozenset(
        {
            "audio_token_index",
            "image_token_index",
            "video_token_index",
            "position_id_per_seconds",
            "seconds_per_chunk",
            "audio_start_token_id",
            "audio_end_token_id",
            "user_token_id",
        }
    )

    audio_config: dict[str, Any] | None


@tower("qwen3_omni_moe_audio_encoder", transformers="Qwen3OmniMoeAudioEncoderConfig")
class Qwen3OmniMoeAudioEncoderConfig(Qwen3ASREncoderConfig):
    """configuration_qwen3_omni_moe.py (Qwen3OmniMoeAudioEncoderConfig) / modeling_qwen3_omni_moe.py
    (Qwen3OmniMoeAudioEncoder): Qwen3-ASR's encoder (three 3 × 3 stride-2 convolutions, conv_out, layers with a bias
    on every projection, ln_post) with Qwen3-Omni's defaults, then proj1 (d_model → d_model) and proj2 (d_model →
    output_dim), both biased, which carry a clip into the language model. Chunks and windows of any length: no
    fixed-window rule."""

    informational_fields = frozenset(
        {"n_window", "n_window_infer", "conv_chunksize", "max_source_positions", "scale_embedding"}
    )

    max_source_positions: PositionCount

    def tower(self, prefix: str) -> Tower:
        tower = super().tower(prefix)
        hidden, per_token = self.d_model, "per_audio_token"
        projections = (
            audio_module(prefix + "proj1", Linear(hidden, hidden, True), runs=per_token),
            audio_module(prefix + "proj2", Linear(hidden, self.output_dim, True), runs=per_token),
        )
        return replace(tower, extras=tower.extras + projections, hidden_size=self.output_dim)


@tower("qwen3_omni_moe_vision_encoder", transformers="Qwen3OmniMoeVisionEncoderConfig")
class Qwen3OmniMoeVisionEncoderConfig(Qwen3VLVisionConfig):
    """configuration_qwen3_omni_moe.py (Qwen3OmniMoeVisionEncoderConfig) / modeling_qwen3_omni_moe.py
    (Qwen3OmniMoeVisionEncoder): Qwen3-VL's tower and deepstack mergers, each merger's modules named as Qwen2.5-VL's
    (ln_q, mlp.0, mlp.2), the deepstack ones kept in merger_list."""

    def merger(self, name: str, norm_width: int) -> tuple[Extra, ...]:
        """A patch merger: LayerNorm ln_q over NORM_WIDTH, then mlp.0 (merged → merged) and mlp.2 (merged →
        out_hidden_size), with biases."""
        merged = self.merged_width
        return (
            tower_module(name + ".ln_q", Norm("layernorm", norm_width, bias=True), "projector"),
            projector_module(name + ".mlp.0", Linear(merged, merged, True)),
            projector_module(name + ".mlp.2", Linear(merged, self.out_hidden_size, True)),
        )

    def deepstack(self, prefix: str) -> tuple[Extra, ...]:
        mergers: tuple[Extra, ...] = ()
        for j in range(len(self.deepstack_visual_indexes)):
            mergers += self.merger(f"{prefix}merger_list.{j}", self.merged_width)
        return mergers


@family(
    "qwen3_omni_moe_text",
    transformers="Qwen3OmniMoeTextConfig",
    architecture="Qwen3-Omni",
    model_class="Qwen3OmniMoeThinkerTextModel",
    heads_divide_hidden=False,
    routing=("num_experts_per_tok", "num_experts"),
    read_beyond={"head_dim": "read by the modeling code with getattr"},
)
class Qwen3OmniMoeTextConfig(TextOfWrapper, QwenMoeRule, DecoderConfig):
    """configuration_qwen3_omni_moe.py (Qwen3OmniMoeTextConfig) / Qwen3OmniMoeThinkerTextModel: Qwen3-MoE's layers
    (q/k norms per head; head_dim, a key read with getattr, else hidden / heads floored; Qwen's sparse rule, routed
    experts only) without windows (the attention sets none) and without a head of its own. transformers stacks the
    experts; checkpoints store each expert apart (conversion_mapping.py), as ffncalc names them."""

    informational_fields = frozenset({"max_position_embeddings", "pad_token_id", "sliding_window"})
    moe_names = QWEN_MOE

    num_hidden_layers: LayerCount
    intermediate_size: Width
    attention_bias: Flag
    hidden_act: Name
    head_dim: Width | None = None
    num_key_value_heads: HeadCount | None
    max_position_embeddings: PositionCount
    sliding_window: Width | None
    decoder_sparse_step: LayerCount
    moe_intermediate_size: Width
    num_experts_per_tok: ExpertCount
    num_experts: ExpertCountOrZero
    mlp_only_layers: list[LayerIndex] | None

    def build_layer(self, index: int, window: int | None) -> Layer:
        ffn = (
            self.moe_ffn(self.num_experts, self.num_experts_per_tok, self.moe_intermediate_size)
            if self.sparse(index)
            else self.gated_ffn()
        )
        return self.layer(self.attention(None, **self.per_head_norms()), ffn)


@family(
    "qwen3_omni_moe_thinker",
    transformers="Qwen3OmniMoeThinkerConfig",
    architecture="Qwen3-Omni",
    model_class="Qwen3OmniMoeThinkerForConditionalGeneration",
)
class Qwen3OmniMoeThinkerConfig(Qwen25OmniThinkerConfig):
    """configuration_qwen3_omni_moe.py (Qwen3OmniMoeThinkerConfig) / Qwen3OmniMoeThinkerForConditionalGeneration:
    Qwen2.5-Omni's thinker and layout (conversion_mapping.py maps it to Qwen2.5-Omni's rules) around Qwen3-Omni's
    audio tower, vision tower and MoE language model; tied by its own tie_word_embeddings (default false)."""

    text_model_type = "qwen3_omni_moe_text"
    vision_model_type = "qwen3_omni_moe_vision_encoder"
    audio_model_type = "qwen3_omni_moe_audio_encoder"
    informational_fields = frozenset(
        {
            "audio_token_id",
            "image_token_id",
            "video_token_id",
            "position_id_per_seconds",
            "audio_start_token_id",
            "user_token_id",
        }
    )
