"""The Swiss AI Initiative's Apertus: Llama's attention with per-head q/k norms, a plain MLP whose xIELU
activation learns two scalars per layer; Apertus 1.5's language model, whose head may be pruned to the text tokens,
and Apertus 1.5 itself, which reads images and audio as tokens of its vocabulary made by two tokenizers (a VQ-GAN
encoder, WavTokenizer's encoder) kept beside the language model."""

from __future__ import annotations

from typing import Annotated, Any, ClassVar

from pydantic import Field, model_validator

from ..schema import Flag, HeadCount, LayerCount, Name, PositionCount, Width
from ..spec import CheckpointExtra, DenseFfn, ImageInput, Layer, Linear, ModelSpec, Parameter, StoredTensor
from ..values import replace
from .base import DecoderConfig
from .chameleon import conv, group_norm, groups_check, vq_attention_block, vq_resnet_block
from .multimodal import MultimodalConfig, relocate
from .registry import family, tower
from .towers import Module, Tower, TowerConfig, tower_module
from .wavtokenizer import WavTokenizerEncoderConfig


@family(
    "apertus",
    transformers="ApertusConfig",
    architecture="Apertus",
    model_class="ApertusForCausalLM",
    heads_divide_hidden=False,  # configuration_*.py floors hidden_size // num_attention_heads
    read_beyond={"head_dim": "read by the modeling code with getattr"},
)
class ApertusConfig(DecoderConfig):
    """configuration_apertus.py / modular_apertus.py: q/k RMSNorms per head; norms before attention
    (attention_layernorm) and before the MLP (feedforward_layernorm); a plain up/down MLP without bias.

    Its xIELU activation (the default hidden_act) is a module of each MLP with two learned scalars,
    alpha_p and alpha_n ([1] each), and two constant buffers, beta and eps ([] each), that
    transformers saves with the weights.
    """

    num_hidden_layers: LayerCount
    intermediate_size: Width
    tie_word_embeddings: Flag
    attention_bias: Flag
    num_key_value_heads: HeadCount | None
    head_dim: Width | None = None
    hidden_act: Name
    max_position_embeddings: PositionCount
    pad_token_id: Annotated[int | None, Field(strict=True)]

    @property
    def xielu(self) -> bool:
        return self.hidden_act == "xielu"

    def build_layer(self, index: int, window: int | None) -> Layer:
        mlp = DenseFfn(self.hidden_size, self.intermediate_size, False, self.hidden_act, self.mlp_names)
        norm = self.rms_norm()
        norms = (("attention_layernorm", norm), ("feedforward_layernorm", norm))
        scalars = tuple(Parameter("ffn", "activation", f"mlp.act_fn.{name}", (1,)) for name in ("alpha_p", "alpha_n"))
        return self.layer(
            self.attention(window, **self.per_head_norms()), mlp, norms, parameters=scalars if self.xielu else ()
        )

    def checkpoint_extras(self) -> tuple[CheckpointExtra, ...]:
        if not self.xielu:
            return super().checkpoint_extras()
        return super().checkpoint_extras() + (
            CheckpointExtra(
                name="xIELU beta and eps buffers",
                reason=f"two constants per layer × {self.num_hidden_layers} layers; buffers of the activation, saved with the weights",
                tensors=tuple(StoredTensor(f"{self.layer_name}.mlp.act_fn.{name}", ()) for name in ("beta", "eps")),
                per_layer=tuple(range(self.num_hidden_layers)),
                buffer=True,
            ),
        )


@family(
    "apertus1p5_text",
    transformers="Apertus1p5TextConfig",
    architecture="Apertus 1.5",
    model_class="Apertus1p5TextForCausalLM",
)
class Apertus1p5TextConfig(ApertusConfig):
    """configuration_apertus1p5.py / modeling_apertus1p5.py (Apertus1p5TextForCausalLM): Apertus's layers with an
    extended vocabulary (text, then image and audio codes: vocab_size 266,752) and a head that output_vocab_size may
    prune to its first rows (None, or vocab_size itself: unpruned); the token table keeps vocab_size rows."""

    output_vocab_size: Width | None

    @model_validator(mode="after")
    def _check_output_vocab(self) -> Apertus1p5TextConfig:
        if self.output_vocab_size is not None and self.output_vocab_size > self.vocab_size:
            raise ValueError(
                f"output_vocab_size ({self.output_vocab_size}) must be in [1, vocab_size] (vocab_size is "
                f"{self.vocab_size}), as transformers requires"
            )
        return self

    @property
    def pruned(self) -> bool:
        """A head of fewer rows than the table; tied, transformers makes the head the table itself, every row."""
        return (
            self.output_vocab_size is not None
            and self.output_vocab_size < self.vocab_size
            and not self.tie_word_embeddings
        )

    def notes(self) -> list[str]:
        notes = super().notes()
        if self.tie_word_embeddings and self.output_vocab_size is not None and self.output_vocab_size < self.vocab_size:
            notes.append(
                f"output_vocab_size ({self.output_vocab_size}) with tie_word_embeddings true: transformers ties the "
                f"head to the token table, whose {self.vocab_size:,} rows it then computes; counted so (released "
                "checkpoints are untied)"
            )
        return notes

    def to_spec(self) -> ModelSpec:
        spec = super().to_spec()
        return replace(spec, lm_head_rows=self.output_vocab_size) if self.pruned else spec


@tower("apertus1p5_vision_tokenizer", transformers="Apertus1p5VisionTokenizerConfig")
class Apertus1p5VisionTokenizerConfig(TowerConfig):
    """configuration_apertus1p5.py (Apertus1p5VisionTokenizerConfig) / Apertus1p5VisionTokenizerModel: a VQ-GAN
    encoder (conv_in; per entry of channel_multiplier a stage of num_res_blocks blocks, each a ResNet block of two
    GroupNorms and 3 × 3 convolutions, a 1 × 1 nin_shortcut where the channels change, and an attention block of
    1 × 1 q, k, v, proj_out where the stage's resolution is in attn_resolutions; a strided downsample between stages;
    a middle of two blocks around one attention block; norm_out, conv_out to latent_channels), quant_conv (1 × 1 to
    embed_dim) and the codebook scored by quantize.embedding (embed_dim → codebook_size, no bias). An image becomes
    codes that the language model reads as tokens from image_token_offset."""

    codebook_size: Width
    embed_dim: Width
    latent_channels: Width
    in_channels: Width
    base_channels: Width
    channel_multiplier: Annotated[list[Width], Field(min_length=1, max_length=16)]
    num_res_blocks: LayerCount
    attn_resolutions: Annotated[list[int], Field(max_length=64)]
    resolution: Width

    _check_groups = groups_check()

    def encoder(self) -> list[tuple[str, Module]]:
        """Apertus1p5VisionTokenizerEncoder's modules, in its order."""
        base, multipliers = self.base_channels, self.channel_multiplier
        found: list[tuple[str, Module]] = [("encoder.conv_in", conv(self.in_channels, base, 3))]
        for stage, multiplier in enumerate(multipliers):
            block_in, block_out = base * ([1, *multipliers][stage]), base * multiplier
            attends = self.resolution // 2**stage in self.attn_resolutions
            for index in range(self.num_res_blocks):
                block = f"encoder.stages.{stage}.layers.{index}."
                found += vq_resnet_block(block + "resnet.", block_in, block_out)
                if attends:
                    found += vq_attention_block(block + "attention.", block_out)
                block_in = block_out
            if stage != len(multipliers) - 1:
                found.append((f"encoder.stages.{stage}.downsample.conv", conv(block_out, block_out, 3)))
        out = base * multipliers[-1]
        found += vq_resnet_block("encoder.mid.block_1.", out, out)
        found += vq_attention_block("encoder.mid.attn_1.", out)
        found += vq_resnet_block("encoder.mid.block_2.", out, out)
        return found + [("encoder.norm_out", group_norm(out)), ("encoder.conv_out", conv(out, self.latent_channels, 3))]

    def tower(self, prefix: str) -> Tower:
        modules = [
            *self.encoder(),
            ("quant_conv", conv(self.latent_channels, self.embed_dim, 1)),
            ("quantize.embedding", Linear(self.embed_dim, self.codebook_size)),
        ]
        extras = tuple(tower_module(prefix + name, module) for name, module in modules)
        return Tower((), extras, self.embed_dim, None)  # no image rule: a convolutional tokenizer


@family(
    "apertus1p5",
    transformers="Apertus1p5Config",
    architecture="Apertus 1.5",
    model_class="Apertus1p5ForConditionalGeneration",
)
class Apertus1p5Config(MultimodalConfig):
    """configuration_apertus1p5.py (Apertus1p5Config) / Apertus1p5ForConditionalGeneration: the language model under
    model.language_model. and lm_head, the vision tokenizer under model.vision_tokenizer. and WavTokenizer's encoder
    under model.audio_tokenizer.; no projector: both hand the language model token ids. The wrapper's
    tie_word_embeddings (default false) ties, text_config's does not; tied, the head is the whole token table
    whatever output_vocab_size says. transformers keeps both tokenizers in float32 (_keep_in_fp32_modules_strict)."""

    text_model_type = "apertus1p5_text"
    text_defaults: ClassVar[dict[str, Any]] = {"model_type": "apertus1p5_text"}
    vision_model_type = "apertus1p5_vision_tokenizer"
    vision_defaults: ClassVar[dict[str, Any]] = {"model_type": "apertus1p5_vision_tokenizer"}
    audio_model_type = "wavtokenizer_encoder"
    audio_defaults: ClassVar[dict[str, Any]] = {"model_type": "wavtokenizer_encoder"}
    language_model_prefix = "model.language_model."
    lm_head_name = "lm_head"
    vision_prefix = "model.vision_tokenizer."
    audio_prefix = "model.audio_tokenizer."
    informational_fields = frozenset({"image_token_id", "audio_token_id"})

    audio_config: dict[str, Any] | None
    image_token_offset: Annotated[int, Field(strict=True)]
    audio_token_offset: Annotated[int, Field(strict=True)]

    @model_validator(mode="after")
    def _check_token_ranges(self) -> Apertus1p5Config:
        # Apertus1p5Config.validate_architecture: the image codes end where the audio codes begin, inside the vocabulary
        vision, audio, text = self.vision, self.audio, self.text
        if not isinstance(vision, Apertus1p5VisionTokenizerConfig) or not isinstance(audio, WavTokenizerEncoderConfig):
            return self  # pragma: no cover - both tokenizers are always built
        if self.image_token_offset + vision.codebook_size != self.audio_token_offset:
            raise ValueError(
                f"image_token_offset + vision_config.codebook_size ({self.image_token_offset} + {vision.codebook_size}) "
                f"must equal audio_token_offset ({self.audio_token_offset}), as transformers requires"
            )
        vocab = getattr(text, "vocab_size", None)
        if isinstance(vocab, int) and self.audio_token_offset + audio.codebook_size > vocab:
            raise ValueError(
                f"audio_token_offset + audio_config.codebook_size ({self.audio_token_offset} + {audio.codebook_size}) "
                f"is beyond text_config.vocab_size ({vocab}), which transformers refuses"
            )
        return self

    def image_input(self, tower: Tower) -> ImageInput | None:
        return None

    def wrapped_spec(self) -> ModelSpec:
        """The language model as the wrapper's flag ties it (a tied head is the whole table), then the tokenizers."""
        text = self.text.model_copy(update={"tie_word_embeddings": self.tie_word_embeddings})
        spec = replace(text.to_spec(), model_type=self.model_type, tie_word_embeddings=self.tie_word_embeddings)
        return self.whole(relocate(spec, self.language_model_prefix, self.lm_head_name))

    def notes(self) -> list[str]:
        return [
            "apertus1p5 reads images and audio as tokens of its vocabulary: the vision tokenizer (a VQ-GAN encoder and "
            "its codebook) and WavTokenizer's encoder are counted as the vision and audio towers and run once per "
            "image or clip, never for a text token; no image or audio rule (flops `image`, `audio`); transformers "
            "keeps both in float32, which ffncalc's memory counts at the model's dtype"
        ] + self.text.notes()
