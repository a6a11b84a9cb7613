"""NVIDIA's Nemotron 3.5 Transcribe (nemo_speechlm; modeling_nemotron3_5_transcribe.py, transformers 5.24): a speech
recognition encoder and a speaker diarization model over log-mel frames, a projector into Nemotron-H, and a word
timestamp encoder and head over the recognition encoder's states; saved in NeMo's layout."""

from __future__ import annotations

from functools import cached_property
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..schema import HeadCount, LayerCount, Width, read_block
from ..spec import Layer, LearnedTensor, Linear, ModelSpec, Norm
from ..values import replace
from .multimodal import MultimodalLayers, moved
from .registry import family
from .towers import Module, audio_module

# Nemotron3_5TranscribeConfig.sub_configs_defaults["text_config"]: the released model's language model
TRANSCRIBE_TEXT = {
    "model_type": "nemotron_h",
    "hidden_size": 2688,
    "intermediate_size": 1856,
    "hybrid_override_pattern": "MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME",
    "mamba_num_heads": 64,
    "max_position_embeddings": 262144,
    "moe_intermediate_size": 1856,
    "moe_shared_expert_intermediate_size": 3712,
    "n_routed_experts": 128,
    "num_experts_per_tok": 6,
    "num_key_value_heads": 2,
    "routed_scaling_factor": 2.5,
}
# NeMo keeps the Mamba-2 parameters in float32 under a module of their own (conversion_mapping's nemo_speechlm)
FP32_PARAMETERS = ("mixer.A_log", "mixer.D", "mixer.dt_bias")


class AudioEncoderBlock(BaseModel):
    """The fields of a NeMo transformer encoder over stacked log-mel frames (Nemotron3_5TranscribeAsrAudioConfig's
    defaults; the diarization model's and the word timestamp encoder's blocks derive from it)."""

    model_config = ConfigDict(extra="ignore", frozen=True)
    qk_norm: ClassVar[bool] = True  # q_norm and k_norm over each head (not in the diarization model's encoder)

    hidden_size: Width = 1280
    intermediate_size: Width = 5120
    num_hidden_layers: LayerCount = 32
    num_attention_heads: HeadCount = 10
    num_key_value_heads: HeadCount | None = None
    num_mel_bins: Width = 128
    subsampling_factor: Width = 8

    @model_validator(mode="after")
    def _check_heads(self) -> AudioEncoderBlock:
        if self.hidden_size % self.num_attention_heads:
            raise ValueError(
                f"hidden_size ({self.hidden_size}) is not a multiple of num_attention_heads ({self.num_attention_heads})"
            )
        return self

    def layers(self, prefix: str) -> list[tuple[str, Module]]:
        """Each layer as NeMo saves it: w_qkv (q, k, v rows; v has as many heads as q), out_proj with bias, q_norm
        and k_norm (LayerNorms of head_dim), ffn.net.0 and ffn.net.3 with biases, norm1 and norm2."""
        d, heads = self.hidden_size, self.num_attention_heads
        head = d // heads
        kv = self.num_key_value_heads or heads
        found: list[tuple[str, Module]] = []
        for index in range(self.num_hidden_layers):
            layer = f"{prefix}layers.{index}."
            found += [(layer + "attn.w_qkv", Linear(d, (2 * heads + kv) * head))]
            found += [(layer + "attn.out_proj", Linear(heads * head, d, True))]
            if self.qk_norm:
                found += [(layer + f"attn.{norm}", Norm("layernorm", head, bias=True)) for norm in ("q_norm", "k_norm")]
            found += [
                (layer + "ffn.net.0", Linear(d, self.intermediate_size, True)),
                (layer + "ffn.net.3", Linear(self.intermediate_size, d, True)),
                (layer + "norm1", Norm("layernorm", d, bias=True)),
                (layer + "norm2", Norm("layernorm", d, bias=True)),
            ]
        return found

    def encoder(self, prefix: str) -> list[tuple[str, Module]]:
        """pre_encode.proj (subsampling_factor stacked frames → hidden, no bias), embed_norm, the layers, final_norm."""
        d = self.hidden_size
        return [
            (prefix + "pre_encode.proj", Linear(self.subsampling_factor * self.num_mel_bins, d)),
            (prefix + "embed_norm", Norm("layernorm", d, bias=True)),
            *self.layers(prefix),
            (prefix + "final_norm", Norm("layernorm", d, bias=True)),
        ]


class DiarizationEncoderBlock(AudioEncoderBlock):
    """Nemotron3DiarizationAudioConfig's fields: the same encoder without q_norm and k_norm."""

    qk_norm = False

    hidden_size: Width = 512
    intermediate_size: Width = 2048
    num_hidden_layers: LayerCount = 31
    num_attention_heads: HeadCount = 8


class DiarizationHeadBlock(BaseModel):
    """Nemotron3DiarizationHeadConfig's fields."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    hidden_size: Width = 192
    num_speakers: Width = 8
    audio_hidden_size: Width = 512
    subsampling_factor: Width = 8


class DiarizationBlock(BaseModel):
    """Nemotron3DiarizationConfig's blocks that shape its modules."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    audio_config: DiarizationEncoderBlock = Field(default_factory=DiarizationEncoderBlock)
    head_config: DiarizationHeadBlock = Field(default_factory=DiarizationHeadBlock)
    streaming_config: dict[str, Any] | None = None

    @model_validator(mode="after")
    def _check_head(self) -> DiarizationBlock:
        """Nemotron3DiarizationConfig.validate_architecture's checks of the head against the encoder."""
        audio, head = self.audio_config, self.head_config
        if head.audio_hidden_size != audio.hidden_size:
            raise ValueError(
                f"head_config.audio_hidden_size ({head.audio_hidden_size}) must be audio_config.hidden_size "
                f"({audio.hidden_size})"
            )
        if head.subsampling_factor != audio.subsampling_factor:
            raise ValueError(
                f"head_config.subsampling_factor ({head.subsampling_factor}) must be audio_config.subsampling_factor "
                f"({audio.subsampling_factor})"
            )
        speakers = (self.streaming_config or {}).get("num_speakers", 8)  # Nemotron3DiarizationStreamingConfig's
        if speakers != head.num_speakers:
            raise ValueError(
                f"streaming_config.num_speakers ({speakers}) must be head_config.num_speakers ({head.num_speakers})"
            )
        return self


class TranscribeAudioBlock(BaseModel):
    """Nemotron3_5TranscribeAudioConfig's blocks: the recognition encoder and the diarization model."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    asr_config: AudioEncoderBlock = Field(default_factory=AudioEncoderBlock)
    diarization_config: DiarizationBlock = Field(default_factory=DiarizationBlock)

    @model_validator(mode="after")
    def _check_frame_rates(self) -> TranscribeAudioBlock:
        asr, diarization = self.asr_config, self.diarization_config.audio_config
        if asr.subsampling_factor != diarization.subsampling_factor:
            raise ValueError(
                f"asr_config.subsampling_factor ({asr.subsampling_factor}) must be diarization_config.audio_config's "
                f"({diarization.subsampling_factor}): both read the same frames"
            )
        return self


class WordTimestampBlock(AudioEncoderBlock):
    """Nemotron3_5TranscribeWordTimestampConfig's fields: an encoder of its own over the recognition encoder's states
    (no pre_encode), an upsampler and a CTC head of vocab_size classes."""

    intermediate_size: Width = 640
    num_hidden_layers: LayerCount = 2
    num_attention_heads: HeadCount = 16
    vocab_size: Width = 23863
    blank_token_id: int = Field(23862, strict=True)
    upsampling_factor: Width = 2

    @model_validator(mode="after")
    def _check_blank(self) -> WordTimestampBlock:
        if not 0 <= self.blank_token_id < self.vocab_size:
            raise ValueError(
                f"blank_token_id ({self.blank_token_id}) must be a class below vocab_size ({self.vocab_size})"
            )
        return self


@family(
    "nemo_speechlm",
    transformers="Nemotron3_5TranscribeConfig",
    architecture="Nemotron 3.5 Transcribe",
    model_class="Nemotron3_5TranscribeForConditionalGeneration",
)
class Nemotron3_5TranscribeConfig(MultimodalLayers):
    """configuration_nemotron3_5_transcribe.py / modeling_nemotron3_5_transcribe.py
    (Nemotron3_5TranscribeForConditionalGeneration, transformers 5.24), as its checkpoints store it (conversion_mapping's
    nemo_speechlm, reverted on save).

    perception.encoder (the audio tower): asr_encoder (asr_config: pre_encode.proj stacking subsampling_factor mel
    frames, embed_norm, layers of fused w_qkv, out_proj, q_norm, k_norm, ffn.net.0 and .3, norm1, norm2, final_norm),
    diarization_model (its own encoder of that kind without q_norm and k_norm, then sortformer_modules: encoder_proj
    audio_hidden_size → hidden, subpixel_upsample a 3-tap convolution hidden → hidden · subsampling_factor,
    first_hidden_to_hidden, single_hidden_to_spks → num_speakers, all biased, and learnable_sil_emb), asr_norm and
    diar_norm (LayerNorms of the recognition width and of num_speakers). perception.proj (with bias) carries the
    recognition encoder's states into the language model, Nemotron-H (text_config, the released model's when absent;
    a given text_config is read alone), saved as llm.model. with its Mamba-2 A_log, D and dt_bias under
    mixer._fp32_params; llm.lm_head is never tied (_tied_weights_keys None). ctc_timestamp.decoder: the word
    timestamp encoder (upsample, a transposed convolution of upsampling_factor taps and stride with bias, then
    embed_norm, layers and final_norm as the recognition encoder's) and its head decoder_layers.0, a 1-tap convolution
    to vocab_size with bias. The speakers' sinusoidal embeddings are an unsaved buffer."""

    text_model_type = "nemotron_h"
    text_defaults: ClassVar[dict[str, Any]] = TRANSCRIBE_TEXT
    informational_fields = frozenset({"audio_token_id"})

    audio_config: dict[str, Any] | None
    word_timestamp_config: dict[str, Any] | None

    def tower_blocks(self) -> tuple[tuple[str, str, dict[str, Any]], ...]:
        return ()  # the audio side is read here, block by block (none of its blocks is a tower of its own)

    @cached_property
    def audio_blocks(self) -> TranscribeAudioBlock:
        return read_block(TranscribeAudioBlock, self.audio_config or {}, "audio_config")

    @cached_property
    def word_timestamp(self) -> WordTimestampBlock:
        return read_block(WordTimestampBlock, self.word_timestamp_config or {}, "word_timestamp_config")

    def validate_nested(self) -> None:
        super().validate_nested()
        self.audio_blocks  # noqa: B018 - each block, or an error naming its field
        self.word_timestamp  # noqa: B018

    def audio_modules(self, text_hidden: int) -> list[tuple[str, Module]]:
        """The audio tower, the projector and the word timestamp encoder and head, as saved."""
        asr, diarization = self.audio_blocks.asr_config, self.audio_blocks.diarization_config
        head, speakers = diarization.head_config, diarization.head_config.num_speakers
        sortformer = "perception.encoder.diarization_model.sortformer_modules."
        wide = head.hidden_size * head.subsampling_factor
        timestamp = self.word_timestamp
        w, factor = timestamp.hidden_size, timestamp.upsampling_factor
        return [
            *asr.encoder("perception.encoder.asr_encoder."),
            *diarization.audio_config.encoder("perception.encoder.diarization_model.encoder."),
            (sortformer + "encoder_proj", Linear(head.audio_hidden_size, head.hidden_size, True)),
            (sortformer + "subpixel_upsample.weight", LearnedTensor((wide, head.hidden_size, 3), matmul=True)),
            (sortformer + "subpixel_upsample.bias", LearnedTensor((wide,))),
            (sortformer + "first_hidden_to_hidden", Linear(head.hidden_size, head.hidden_size, True)),
            (sortformer + "single_hidden_to_spks", Linear(head.hidden_size, speakers, True)),
            (sortformer + "learnable_sil_emb", LearnedTensor((diarization.audio_config.hidden_size,))),
            ("perception.encoder.asr_norm", Norm("layernorm", asr.hidden_size, bias=True)),
            ("perception.encoder.diar_norm", Norm("layernorm", speakers, bias=True)),
            ("ctc_timestamp.decoder.upsample.weight", LearnedTensor((w, w, factor), matmul=True)),
            ("ctc_timestamp.decoder.upsample.bias", LearnedTensor((w,))),
            ("ctc_timestamp.decoder.transformer.embed_norm", Norm("layernorm", w, bias=True)),
            *timestamp.layers("ctc_timestamp.decoder.transformer."),
            ("ctc_timestamp.decoder.transformer.final_norm", Norm("layernorm", w, bias=True)),
            ("ctc_timestamp.decoder.decoder_layers.0.weight", LearnedTensor((timestamp.vocab_size, w, 1), matmul=True)),
            ("ctc_timestamp.decoder.decoder_layers.0.bias", LearnedTensor((timestamp.vocab_size,))),
        ]

    def wrapped_spec(self) -> ModelSpec:
        """Nemotron-H under NeMo's names, the audio side and the projector."""
        spec = self.text.to_spec()

        def move(name: str) -> str:
            if name == "backbone.embeddings":
                return "llm.model.embed_tokens"
            if name == "backbone.norm_f":
                return "llm.model.norm"
            return "llm.model." + name.removeprefix("backbone.") if name.startswith("backbone.") else name

        spec = moved(replace(spec, model_type=self.model_type, tie_word_embeddings=False), move, "llm.lm_head")
        spec = replace(spec, layers=tuple(fp32_parameters(layer) for layer in spec.layers))
        hidden = spec.hidden_size
        extras = [audio_module(name, module, runs="per_audio_position") for name, module in self.audio_modules(hidden)]
        projector = audio_module(
            "perception.proj", Linear(self.audio_blocks.asr_config.hidden_size, hidden, True), "projector",
            "per_audio_token",
        )  # fmt: skip
        return replace(spec, extras=spec.extras + tuple(extras) + (projector,))

    def notes(self) -> list[str]:
        return [
            f"{self.model_type} is multimodal: the language model ({self.text.model_type}), the audio side (the "
            "speech recognition encoder, the diarization model, the word timestamp encoder and head) and the "
            "projector are counted; a text token runs the language model only. Audio FLOPs are not counted: its "
            "encoders read clips of any length, no fixed window.",
            "transformers keeps the audio tower and the projector in float32 whatever the model's dtype "
            "(_keep_in_fp32_modules_strict); ffncalc's byte figures count them at the model's dtype.",
        ] + self.text.notes()


def fp32_parameters(layer: Layer) -> Layer:
    """LAYER with its Mamba-2 A_log, D and dt_bias under mixer._fp32_params, as NeMo saves them."""
    mixer = layer.mixer
    if mixer is None:
        return layer
    parameters = tuple(
        replace(parameter, name=parameter.name.replace("mixer.", "mixer._fp32_params.", 1))
        if parameter.name in FP32_PARAMETERS
        else parameter
        for parameter in mixer.parameters
    )
    return replace(layer, mixer=replace(mixer, parameters=parameters))
