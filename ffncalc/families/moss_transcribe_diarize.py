"""MOSS-Transcribe-Diarize (moss_transcribe_diarize): Whisper's encoder as an audio tower, a projector over merged
positions, and Qwen3 as the language model, in transformers 5's layout."""

from __future__ import annotations

from ..schema import Flag, Width
from ..spec import AudioInput, Extra, Linear, Norm
from ..values import replace
from .audio import VoxtralEncoderConfig
from .audio_lm import AudioLanguageConfig
from .registry import family, tower
from .towers import Tower, audio_module

# MossTranscribeDiarizeConfig.sub_configs_defaults["text_config"].init_kwargs (transformers 5.24).
MOSS_TEXT = {
    "model_type": "qwen3",
    "hidden_size": 1024,
    "intermediate_size": 3072,
    "num_hidden_layers": 28,
    "num_attention_heads": 16,
    "num_key_value_heads": 8,
    "max_position_embeddings": 131072,
}


@tower("moss_transcribe_diarize_audio", transformers="MossTranscribeDiarizeAudioConfig")
class MossTranscribeDiarizeAudioConfig(VoxtralEncoderConfig):
    """configuration_moss_transcribe_diarize.py (MossTranscribeDiarizeAudioConfig) / modeling_…
    (MossTranscribeDiarizeAudioModel): Whisper's encoder (conv1, conv2, a learned table of max_source_positions,
    pre-LN layers with k_proj unbiased, a final LayerNorm), with its own defaults."""


@family(
    "moss_transcribe_diarize",
    transformers="MossTranscribeDiarizeConfig",
    architecture="MOSS-Transcribe-Diarize",
    model_class="MossTranscribeDiarizeForConditionalGeneration",
)
class MossTranscribeDiarizeConfig(AudioLanguageConfig):
    """configuration_moss_transcribe_diarize.py / modeling_moss_transcribe_diarize.py (transformers 5.24):
    MossTranscribeDiarizeAudioModel, a language model built by AutoModel (Qwen3 by default, 28 layers of 1,024; a
    given text_config is read alone) and MossTranscribeDiarizeMultiModalProjector, which reads audio_merge_size
    encoder positions as one row: linear_1 (audio hidden · audio_merge_size → text hidden), linear_2 (text → text),
    both biased with projector_bias, then a LayerNorm with bias. Stored as model.audio_tower.,
    model.language_model., model.multi_modal_projector., lm_head; tie_word_embeddings (default true) ties the head
    to the token table."""

    text_model_type = "qwen3"
    text_defaults = MOSS_TEXT
    audio_model_type = "moss_transcribe_diarize_audio"
    audio_defaults = {"model_type": "moss_transcribe_diarize_audio"}
    language_model_prefix = "model.language_model."
    audio_prefix = "model.audio_tower."
    lm_head_name = "lm_head"
    informational_fields = frozenset({"audio_token_id", "projector_hidden_act", "audio_chunk_size"})

    projector_bias: Flag
    audio_merge_size: Width
    tie_word_embeddings: Flag

    def tied(self) -> bool:
        return self.tie_word_embeddings

    def audio_projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        rows, bias = tower.hidden_size * self.audio_merge_size, self.projector_bias
        prefix = "model.multi_modal_projector."
        return (
            audio_module(prefix + "linear_1", Linear(rows, text_hidden, bias), "projector", "per_audio_token"),
            audio_module(prefix + "linear_2", Linear(text_hidden, text_hidden, bias), "projector", "per_audio_token"),
            audio_module(prefix + "norm", Norm("layernorm", text_hidden, bias=True), "projector", "per_audio_token"),
        )

    def audio_input(self, tower: Tower) -> AudioInput | None:
        """A window's positions in groups of audio_merge_size: its tokens (375 for 1,500 positions and groups of 4);
        none where they do not divide (get_audio_features pads each window to whole groups past its positions)."""
        rule = tower.audio
        if rule is None or rule.positions % self.audio_merge_size:
            return None
        return replace(rule, tokens=rule.positions // self.audio_merge_size)
