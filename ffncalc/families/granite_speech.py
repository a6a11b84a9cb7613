"""Granite Speech (modeling_granite_speech.py, transformers 5.24): a Conformer encoder (``families/conformer.py``),
a windowed Q-Former projector (BLIP-2's, ``families/blip.py``) and a Granite language model."""

from __future__ import annotations

from typing import Any, ClassVar

from ..errors import InvalidConfigError
from ..schema import Flag, Width
from ..spec import Extra, LearnedTensor, Linear
from .blip import QFormerLayers
from .conformer import GraniteSpeechPlusEncoderConfig
from .multimodal import MultimodalLayers
from .registry import family
from .towers import Tower, TowerConfig, audio_module


@family(
    "granite_speech",
    transformers="GraniteSpeechConfig",
    architecture="Granite Speech",
    model_class="GraniteSpeechForConditionalGeneration",
)
class GraniteSpeechConfig(MultimodalLayers):
    """configuration_granite_speech.py / modeling_granite_speech.py (transformers 5.24): GraniteSpeechCTCEncoder (a
    Conformer), GraniteSpeechEncoderProjector and a language model built by AutoModel (Granite by default; a given
    text_config is read alone). The projector cuts the encoder's output into windows of window_size frames, which
    window_size // downsample_rate learned queries (query, [1, queries, Q-Former width]) read through a Q-Former
    (Blip2QFormerModel, projector_config; its cross-attention reads the block's own encoder_hidden_size), then linear
    (Q-Former width → text hidden, with bias). tie_word_embeddings (default true) ties lm_head to the token table.
    Saved in transformers 4's layout (conversion mapping "granite_speech": encoder., projector., language_model.).

    No clip rule: the encoder's relative-position scores and the Q-Former's attention are FLOPs ffncalc's clip
    arithmetic does not state."""

    text_model_type = "granite"
    text_defaults: ClassVar[dict[str, Any]] = {"model_type": "granite"}
    audio_model_type = "granite_speech_encoder"
    audio_defaults: ClassVar[dict[str, Any]] = {"model_type": "granite_speech_encoder"}
    audio_prefix = "encoder."
    informational_fields = frozenset({"audio_token_index", "has_lora_adapter", "initializer_range"})

    encoder_config: dict[str, Any] | None
    projector_config: dict[str, Any] | None
    downsample_rate: Width
    window_size: Width
    tie_word_embeddings: Flag

    def tied(self) -> bool:
        return self.tie_word_embeddings

    def tower_blocks(self) -> tuple[tuple[str, str, dict[str, Any]], ...]:
        return (
            ("encoder_config", self.audio_model_type, self.audio_defaults),
            ("projector_config", "blip_2_qformer", {"model_type": "blip_2_qformer"}),
        )

    @property
    def audio(self) -> TowerConfig | None:
        """The Conformer encoder, which encoder_config configures."""
        return self.towers.get("encoder_config")

    @property
    def qformer(self) -> QFormerLayers:
        block = self.towers["projector_config"]
        if not isinstance(block, QFormerLayers):
            raise InvalidConfigError(
                f"projector_config.model_type: {block.model_type!r} is not a Q-Former; give 'blip_2_qformer' or leave "
                "it out"
            )
        return block

    def validate_nested(self) -> None:
        super().validate_nested()
        self.qformer  # noqa: B018 - a Q-Former, or an error naming the field

    def audio_projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        qformer = self.qformer
        queries = self.window_size // self.downsample_rate
        modules = (
            ("projector.query", LearnedTensor((1, queries, qformer.hidden_size))),
            *qformer.modules("projector.qformer.", qformer.encoder_hidden_size),
            ("projector.linear", Linear(qformer.hidden_size, text_hidden, True)),
        )
        return tuple(audio_module(name, module, "projector", "per_audio_token") for name, module in modules)


@family(
    "granite_speech_plus",
    transformers="GraniteSpeechPlusConfig",
    architecture="Granite Speech Plus",
    model_class="GraniteSpeechPlusForConditionalGeneration",
)
class GraniteSpeechPlusConfig(GraniteSpeechConfig):
    """configuration_granite_speech_plus.py / modeling_granite_speech_plus.py (transformers 5.24): Granite Speech's
    layout and defaults, its encoder a GraniteSpeechPlusEncoderConfig (conversion mapping "granite_speech" too).
    Where encoder_config.cat_hidden_layers is set, transformers refuses a projector_config whose encoder_hidden_size
    is not hidden_dim · (len(cat_hidden_layers) + 1), and so does ffncalc."""

    audio_model_type = "granite_speech_plus_encoder"
    audio_defaults: ClassVar[dict[str, Any]] = {"model_type": "granite_speech_plus_encoder"}

    def validate_nested(self) -> None:
        super().validate_nested()
        encoder = self.audio
        if isinstance(encoder, GraniteSpeechPlusEncoderConfig) and encoder.cat_hidden_layers is not None:
            for index in encoder.cat_hidden_layers:
                if not 0 <= index < encoder.num_layers:
                    raise InvalidConfigError(
                        f"encoder_config.cat_hidden_layers: {index} is not a block index below num_layers "
                        f"({encoder.num_layers})"
                    )
            width = encoder.hidden_dim * (len(encoder.cat_hidden_layers) + 1)
            if self.qformer.encoder_hidden_size != width:
                raise InvalidConfigError(
                    f"projector_config.encoder_hidden_size: {self.qformer.encoder_hidden_size} must equal "
                    f"encoder_config.hidden_dim · (len(cat_hidden_layers) + 1) = {width}; set it so"
                )
