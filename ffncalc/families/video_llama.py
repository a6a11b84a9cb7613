"""VideoLLaMA 3 (DAMO): a SigLIP-shaped tower without a position table (2-D rotary positions instead), a two-layer
projector and a language model (Qwen2 by default)."""

from __future__ import annotations

from ..spec import Extra, ImageInput, Linear, PatchEmbedding
from .multimodal import MultimodalConfig
from .registry import family, tower
from .towers import Tower, projector_module, tower_module
from .vision import SiglipLayers


@tower("video_llama_3_vision", transformers="VideoLlama3VisionConfig")
class VideoLlama3VisionConfig(SiglipLayers):
    """configuration_video_llama_3.py (VideoLlama3VisionConfig) / modeling_video_llama_3.py (VideoLlama3VisionModel):
    a biased patch convolution, SigLIP's LayerNorm layers with biases and a plain FFN, post_layernorm; no position
    table (2-D rotary positions, no weights) and no pooling head. Its image processor resizes an image to sides that
    are multiples of patch_size (smart_resize with merge_size 1 for images; the processor's min_pixels and max_pixels
    are not in config.json), and every patch becomes one token (pixel_unshuffle interpolates by that merge size)."""

    def tower(self, prefix: str) -> Tower:
        patch = PatchEmbedding(self.num_channels, (self.patch_size,) * 2, self.hidden_size, True)
        embeddings = (tower_module(prefix + "embeddings.patch_embedding", patch),)
        image = ImageInput(self.patch_size, "multiple", self.patch_size)
        return self.encoder_tower(prefix, image, embeddings, head=False)


@family(
    "video_llama_3",
    transformers="VideoLlama3Config",
    architecture="VideoLLaMA 3",
    model_class="VideoLlama3ForConditionalGeneration",
)
class VideoLlama3Config(MultimodalConfig):
    """configuration_video_llama_3.py / modeling_video_llama_3.py (VideoLlama3ForConditionalGeneration): the tower
    (model.vision_model.), VideoLlama3Projector (readout.0, vision hidden → text hidden, and readout.2, text → text,
    both biased) and a language model built by AutoModel (Qwen2 by default), saved as model.language_model. and
    lm_head. VideoLlama3Config.__post_init__ ties the head when the wrapper or text_config says so."""

    text_model_type = "qwen2"
    text_defaults = {"model_type": "qwen2"}
    vision_model_type = "video_llama_3_vision"
    vision_defaults = {"model_type": "video_llama_3_vision"}
    language_model_prefix = "model.language_model."
    lm_head_name = "lm_head"
    vision_prefix = "model.vision_model."

    def tied(self) -> bool:
        """VideoLlama3Config.__post_init__: the wrapper ties when it says so or when its language model does."""
        return self.tie_word_embeddings or getattr(self.text, "tie_word_embeddings", False) is True

    def projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        """readout.0 (vision hidden → text hidden) and readout.2 (text → text), with biases, once per image token."""
        return (
            projector_module("model.projector.readout.0", Linear(tower.hidden_size, text_hidden, True)),
            projector_module("model.projector.readout.2", Linear(text_hidden, text_hidden, True)),
        )
