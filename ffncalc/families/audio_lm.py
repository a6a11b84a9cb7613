"""Audio-language models: Whisper's encoder as an audio tower, a projector, and a language model that reads the
clip's tokens among its text (Voxtral, Qwen2-Audio). Their checkpoints keep transformers 4's layout (conversion
mapping "qwen2_audio"): language_model.model., language_model.lm_head, audio_tower., multi_modal_projector."""

from __future__ import annotations

from typing import Any, ClassVar

from ..schema import Flag, Width
from ..spec import AudioInput, Extra, Layer, Linear, ModelSpec, Parameter
from ..values import replace
from .mistral import MistralConfig
from .multimodal import MultimodalLayers, relocate
from .qwen import TextOfWrapper
from .registry import family
from .towers import Tower, audio_module

# VoxtralConfig.sub_configs_defaults["text_config"].init_kwargs (transformers 5.24): Voxtral-Mini-3B's Llama.
VOXTRAL_TEXT = {
    "model_type": "llama",
    "vocab_size": 131072,
    "hidden_size": 3072,
    "intermediate_size": 8192,
    "num_hidden_layers": 30,
    "num_key_value_heads": 8,
    "max_position_embeddings": 131072,
    "rms_norm_eps": 1e-05,
    "use_cache": True,
    "rope_theta": 100000000.0,
    "head_dim": 128,
}
# Qwen2AudioConfig.sub_configs_defaults["audio_config"].init_kwargs: Qwen2-Audio-7B's encoder.
QWEN2_AUDIO_ENCODER = {
    "model_type": "qwen2_audio_encoder",
    "d_model": 1280,
    "encoder_attention_heads": 20,
    "encoder_ffn_dim": 5120,
    "encoder_layers": 32,
    "num_mel_bins": 128,
    "max_source_positions": 1500,
    "activation_function": "gelu",
}


class AudioLanguageConfig(MultimodalLayers):
    """A wrapper with an audio tower and no vision tower, whose configuration class has no tie_word_embeddings and
    whose ForConditionalGeneration declares no tied weights: its lm_head is its own."""

    audio_config: dict[str, Any] | None


@family("voxtral", transformers="VoxtralConfig", architecture="Voxtral", model_class="VoxtralForConditionalGeneration")
class VoxtralConfig(AudioLanguageConfig):
    """configuration_voxtral.py / modeling_voxtral.py (transformers 5.24): VoxtralEncoder (Whisper's encoder), a
    language model built by AutoModel (Llama by default; a given text_config is read over the defaults, as
    VoxtralConfig.__post_init__ merges them) and VoxtralMultiModalProjector, which reads the encoder's output
    regrouped into rows of the encoder's intermediate_size (4 positions of 1,280 become one row of 5,120):
    linear_1 (intermediate_size → text hidden) and linear_2 (text → text), no biases. The head is never tied
    (VoxtralForConditionalGeneration declares no tied weights)."""

    text_model_type = "llama"
    text_defaults = VOXTRAL_TEXT
    text_defaults_under_given = True
    audio_model_type = "voxtral_encoder"
    audio_defaults = {"model_type": "voxtral_encoder"}
    informational_fields = frozenset({"projector_hidden_act", "audio_token_id"})

    def audio_projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        inner = self.audio_width()
        return (
            audio_module("multi_modal_projector.linear_1", Linear(inner, text_hidden), "projector", "per_audio_token"),
            audio_module("multi_modal_projector.linear_2", Linear(text_hidden, text_hidden), "projector", "per_audio_token"),
        )  # fmt: skip

    def audio_width(self) -> int:
        """The width of the rows the projector reads: the encoder's intermediate_size."""
        from .audio import GlmAsrEncoderConfig, VoxtralEncoderConfig

        assert isinstance(self.audio, VoxtralEncoderConfig | GlmAsrEncoderConfig)
        return self.audio.intermediate_size

    def audio_input(self, tower: Tower) -> AudioInput | None:
        """A window's positions · hidden values regrouped into rows of intermediate_size: its tokens (375 for
        1,500 positions of 1,280 and rows of 5,120); none where they do not divide (the reshape would mix windows)."""
        rule = tower.audio
        values = None if rule is None else rule.positions * tower.hidden_size
        if rule is None or values is None or values % self.audio_width():
            return None
        return replace(rule, tokens=values // self.audio_width())


@family(
    "qwen2_audio",
    transformers="Qwen2AudioConfig",
    architecture="Qwen2-Audio",
    model_class="Qwen2AudioForConditionalGeneration",
)
class Qwen2AudioConfig(AudioLanguageConfig):
    """configuration_qwen2_audio.py / modeling_qwen2_audio.py (transformers 5.24): Qwen2AudioEncoder (Whisper's
    encoder, its output average-pooled two positions into one), Qwen2AudioMultiModalProjector (one linear, the
    encoder's d_model → text hidden, with bias) and a language model built by AutoModel (Qwen2 by default). The head
    is never tied (Qwen2AudioForConditionalGeneration declares no tied weights)."""

    text_model_type = "qwen2"
    text_defaults: ClassVar[dict[str, Any]] = {"model_type": "qwen2"}
    audio_model_type = "qwen2_audio_encoder"
    audio_defaults = QWEN2_AUDIO_ENCODER
    informational_fields = frozenset({"audio_token_index"})

    def audio_projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        linear = Linear(tower.hidden_size, text_hidden, True)
        return (audio_module("multi_modal_projector.linear", linear, "projector", "per_audio_token"),)


@family(
    "audioflamingo3",
    transformers="AudioFlamingo3Config",
    architecture="Audio Flamingo 3",
    model_class="AudioFlamingo3ForConditionalGeneration",
)
class AudioFlamingo3Config(AudioLanguageConfig):
    """configuration_audioflamingo3.py / modular_audioflamingo3.py (transformers 5.24): AudioFlamingo3Encoder
    (Whisper's encoder, its output average-pooled two positions into one), a language model built by AutoModel
    (Qwen2 by default; a given text_config is read alone) and AudioFlamingo3MultiModalProjector: linear_1 (the
    encoder's hidden → text hidden) and linear_2 (text → text), biased where projector_bias (default true). The head
    is never tied (_tied_weights_keys = None). Saved in transformers 4's layout (conversion mapping "qwen2_audio")."""

    text_model_type = "qwen2"
    text_defaults: ClassVar[dict[str, Any]] = {"model_type": "qwen2"}
    audio_model_type = "audioflamingo3_encoder"
    audio_defaults: ClassVar[dict[str, Any]] = {"model_type": "audioflamingo3_encoder"}
    informational_fields = frozenset({"projector_hidden_act", "audio_token_id"})

    projector_bias: Flag

    def audio_projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        bias = self.projector_bias
        return (
            audio_module("multi_modal_projector.linear_1", Linear(tower.hidden_size, text_hidden, bias), "projector", "per_audio_token"),
            audio_module("multi_modal_projector.linear_2", Linear(text_hidden, text_hidden, bias), "projector", "per_audio_token"),
        )  # fmt: skip


@family(
    "musicflamingo",
    transformers="MusicFlamingoConfig",
    architecture="Music Flamingo",
    model_class="MusicFlamingoForConditionalGeneration",
)
class MusicFlamingoConfig(AudioFlamingo3Config):
    """configuration_musicflamingo.py / modeling_musicflamingo.py (transformers 5.24): Audio Flamingo 3's encoder
    (an audio_config named musicflamingo_encoder is read as audioflamingo3_encoder), projector and Qwen2, plus a rotary
    time embedding of the encoder's output (pos_emb: unsaved buffers, no weights; its elementwise rotation adds no
    matmul FLOPs). The head is never tied (_tied_weights_keys = None)."""

    informational_fields = frozenset(
        {"projector_hidden_act", "audio_token_id", "audio_bos_token_id", "audio_eos_token_id", "audio_frame_step",
         "rope_parameters"}
    )  # fmt: skip


# GlmAsrConfig.sub_configs_defaults["text_config"].init_kwargs (transformers 5.24): GLM-ASR-Nano-2512's Llama, less
# its rope_parameters ({"rope_theta": 10000.0, "rope_type": "default"}: Llama's own default, and no count reads it).
GLMASR_TEXT = {
    "model_type": "llama",
    "vocab_size": 59264,
    "hidden_size": 2048,
    "intermediate_size": 6144,
    "num_hidden_layers": 28,
    "num_attention_heads": 16,
    "num_key_value_heads": 4,
    "max_position_embeddings": 8192,
    "rms_norm_eps": 1e-05,
    "use_cache": True,
    "eos_token_id": [59246, 59253, 59255],
}


@family("glmasr", transformers="GlmAsrConfig", architecture="GLM-ASR", model_class="GlmAsrForConditionalGeneration")
class GlmAsrConfig(VoxtralConfig):
    """configuration_glmasr.py / modeling_glmasr.py (transformers 5.24): GlmAsrEncoder, a language model built by
    AutoModel (Llama by default; a given text_config is read over the defaults, as __post_init__ merges them) and
    GlmAsrMultiModalProjector, which reads the encoder's output regrouped into rows of its intermediate_size (as
    Voxtral's): linear_1 (intermediate_size → 2 · text hidden) and linear_2 (2 · text hidden → text hidden), with
    biases. tie_word_embeddings (default true) ties lm_head to the token table. Saved in transformers 4's layout
    (conversion mapping "qwen2_audio")."""

    text_defaults = GLMASR_TEXT
    audio_model_type = "glmasr_encoder"
    audio_defaults = {"model_type": "glmasr_encoder"}
    informational_fields = frozenset({"projector_hidden_act", "audio_token_id"})

    tie_word_embeddings: Flag

    def tied(self) -> bool:
        return self.tie_word_embeddings

    def audio_projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        inner, wide = self.audio_width(), 2 * text_hidden
        return (
            audio_module("multi_modal_projector.linear_1", Linear(inner, wide, True), "projector", "per_audio_token"),
            audio_module("multi_modal_projector.linear_2", Linear(wide, text_hidden, True), "projector", "per_audio_token"),
        )  # fmt: skip


# Qwen3ASRConfig.sub_configs_defaults["text_config"].init_kwargs (transformers 5.24): Qwen3-ASR-1.7B's Qwen3.
QWEN3_ASR_TEXT = {
    "model_type": "qwen3",
    "hidden_size": 2048,
    "intermediate_size": 6144,
    "num_hidden_layers": 28,
    "num_attention_heads": 16,
    "num_key_value_heads": 8,
    "head_dim": 128,
    "max_position_embeddings": 65536,
    "tie_word_embeddings": True,
}


@family(
    "qwen3_asr", transformers="Qwen3ASRConfig", architecture="Qwen3-ASR", model_class="Qwen3ASRForConditionalGeneration"
)
class Qwen3ASRConfig(AudioLanguageConfig):
    """configuration_qwen3_asr.py / modeling_qwen3_asr.py (transformers 5.24): Qwen3ASREncoder, a language model
    built by AutoModel (Qwen3 by default; a given text_config is read alone) and Qwen3ASRMultiModalProjector
    (linear_1 d_model → d_model, linear_2 d_model → the encoder's output_dim, both with bias), stored in
    transformers 5's layout (model.audio_tower., model.language_model., model.multi_modal_projector., lm_head).
    The wrapper's tie_word_embeddings (default true) ties lm_head to the token table."""

    text_model_type = "qwen3"
    text_defaults = QWEN3_ASR_TEXT
    audio_model_type = "qwen3_asr_encoder"
    audio_defaults = {"model_type": "qwen3_asr_encoder"}
    language_model_prefix = "model.language_model."
    audio_prefix = "model.audio_tower."
    lm_head_name = "lm_head"
    informational_fields = frozenset({"audio_token_id", "timestamp_token_id", "token_classification_bias"})

    tie_word_embeddings: Flag

    def tied(self) -> bool:
        return self.tie_word_embeddings

    def audio_projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        from .audio import Qwen3ASREncoderConfig

        assert isinstance(self.audio, Qwen3ASREncoderConfig)
        hidden, output = tower.hidden_size, self.audio.output_dim
        return (
            audio_module("model.multi_modal_projector.linear_1", Linear(hidden, hidden, True), "projector", "per_audio_token"),
            audio_module("model.multi_modal_projector.linear_2", Linear(hidden, output, True), "projector", "per_audio_token"),
        )  # fmt: skip


# OmniASRConfig.sub_configs_defaults["text_config"].init_kwargs (transformers 5.24): omniASR-LLM-300M's Llama.
OMNIASR_TEXT = {
    "model_type": "llama",
    "vocab_size": 11984,
    "hidden_size": 4096,
    "intermediate_size": 2816,
    "max_position_embeddings": 8192,
    "num_hidden_layers": 12,
    "num_attention_heads": 8,
    "num_key_value_heads": 8,
    "rms_norm_eps": 1e-05,
}


@family("omniasr", transformers="OmniASRConfig", architecture="omniASR", model_class="OmniASRForConditionalGeneration")
class OmniASRConfig(AudioLanguageConfig):
    """configuration_omniasr.py / modeling_omniasr.py (transformers 5.24): OmniASRAudioModel (wav2vec 2.0's encoder), a
    language model built by AutoModel (Llama by default; a given text_config is read alone) and multi_modal_projector,
    one linear (audio hidden → text hidden, with bias). Stored in transformers 5's layout (no conversion mapping); the
    head is never tied (OmniASRForConditionalGeneration declares no tied weights)."""

    text_model_type = "llama"
    text_defaults = OMNIASR_TEXT
    audio_model_type = "omniasr_audio"
    audio_defaults = {"model_type": "omniasr_audio"}
    language_model_prefix = "model.language_model."
    audio_prefix = "model.audio_tower."
    lm_head_name = "lm_head"
    informational_fields = frozenset({"audio_token_id", "initializer_range"})

    def audio_projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        linear = Linear(tower.hidden_size, text_hidden, True)
        return (audio_module("model.multi_modal_projector", linear, "projector", "per_audio_token"),)


# VoxtralRealtimeConfig.sub_configs_defaults["text_config"].init_kwargs (transformers 5.24): Voxtral-Mini-4B-Realtime's.
VOXTRAL_REALTIME_TEXT = {
    "model_type": "voxtral_realtime_text",
    "vocab_size": 131072,
    "hidden_size": 3072,
    "intermediate_size": 9216,
    "num_hidden_layers": 26,
    "num_attention_heads": 32,
    "num_key_value_heads": 8,
    "max_position_embeddings": 131072,
    "rms_norm_eps": 1e-05,
    "use_cache": True,
    "rope_theta": 1000000.0,
    "head_dim": 128,
    "tie_word_embeddings": True,
    "sliding_window": 8192,
}
# VoxtralRealtimeTextAdaRmsNorm: linear1 hidden → 32 and linear2 32 → hidden, whatever the config says.
ADA_RMS_NORM_WIDTH = 32


@family(
    "voxtral_realtime_text",
    transformers="VoxtralRealtimeTextConfig",
    architecture="Voxtral Realtime",
    model_class="VoxtralRealtimeTextModel",
    read_beyond={
        "tie_word_embeddings": "not a field of VoxtralRealtimeTextConfig: the wrapper's text defaults pass it and PreTrainedConfig keeps it as an attribute; it ties nothing in the text model (no head) and the wrapper's own flag ties the whole model's"
    },
)
class VoxtralRealtimeTextConfig(TextOfWrapper, MistralConfig):
    """configuration_voxtral_realtime.py (VoxtralRealtimeTextConfig) / modeling_voxtral_realtime.py: Mistral's
    layer (no biases, every layer within sliding_window) and Mistral's defaults, plus ada_rms_norm (linear1 hidden →
    32, linear2 32 → hidden, no biases), which scales the FFN's input by what it makes of the time embedding: it reads
    that one vector once per forward, not each token, so its weights add no FLOPs per token. No head of its own
    (VoxtralRealtimeTextModel)."""

    def build_layer(self, index: int, window: int | None) -> Layer:
        hidden = self.hidden_size
        ada = (
            Parameter("other", "ada_rms_norm_in", "ada_rms_norm.linear1.weight", (ADA_RMS_NORM_WIDTH, hidden)),
            Parameter("other", "ada_rms_norm_out", "ada_rms_norm.linear2.weight", (hidden, ADA_RMS_NORM_WIDTH)),
        )
        return self.layer(self.attention(window), self.gated_ffn(), parameters=ada)


@family(
    "voxtral_realtime",
    transformers="VoxtralRealtimeConfig",
    architecture="Voxtral Realtime",
    model_class="VoxtralRealtimeForConditionalGeneration",
)
class VoxtralRealtimeConfig(AudioLanguageConfig):
    """configuration_voxtral_realtime.py / modeling_voxtral_realtime.py (transformers 5.24): VoxtralRealtimeEncoder,
    VoxtralRealtimeTextModel (a given text_config is read over the defaults, as __post_init__ merges them) and
    VoxtralRealtimeMultiModalProjector, which reads downsample_factor encoder positions as one row: linear_1
    (audio hidden · downsample_factor → text hidden) and linear_2 (text → text), no biases. The time embedding is an
    unsaved buffer. Saved in transformers 4's layout (conversion mapping "qwen2_audio", as Voxtral); the wrapper's
    tie_word_embeddings (default true) ties the head to the token table."""

    text_model_type = "voxtral_realtime_text"
    text_defaults = VOXTRAL_REALTIME_TEXT
    text_defaults_under_given = True
    audio_model_type = "voxtral_realtime_encoder"
    audio_defaults = {"model_type": "voxtral_realtime_encoder"}
    informational_fields = frozenset(
        {"projector_hidden_act", "audio_length_per_tok", "default_num_delay_tokens", "use_cache"}
    )

    downsample_factor: Width
    tie_word_embeddings: Flag

    def tied(self) -> bool:
        return self.tie_word_embeddings

    def wrapped_spec(self) -> ModelSpec:
        """The language model read without its head (VoxtralRealtimeTextModel) and relocated, with the tower."""
        spec = getattr(self.text, "language_model_spec", self.text.to_spec)()
        spec = replace(spec, model_type=self.model_type, tie_word_embeddings=self.tied())
        return self.whole(relocate(spec, self.language_model_prefix, self.lm_head_name))

    def audio_projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        rows = tower.hidden_size * self.downsample_factor
        return (
            audio_module("multi_modal_projector.linear_1", Linear(rows, text_hidden), "projector", "per_audio_token"),
            audio_module("multi_modal_projector.linear_2", Linear(text_hidden, text_hidden), "projector", "per_audio_token"),
        )  # fmt: skip
