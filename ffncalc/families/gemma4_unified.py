"""Gemma 4 unified (transformers 5.24, modular_gemma4_unified.py): Gemma 4's wrapper without towers. An image's merged
patches are projected straight into the language model (Gemma4UnifiedVisionEmbedder: LayerNorm, one linear, LayerNorm,
a factorized 2-D position table, LayerNorm), and so are an audio clip's raw waveform frames; each through a multimodal
embedder (a norm without weight, one linear into the text width). Its language model is gemma4_unified_text
(families/gemma.py)."""

from __future__ import annotations

from ..schema import Width
from ..spec import Extra, ImageInput, LearnedTensor, Linear, Norm
from .gemma import Gemma4Config
from .registry import family, tower
from .towers import Tower, TowerConfig, audio_module, projector_module, tower_module

#: Gemma4UnifiedImageProcessor.max_soft_tokens: every image is padded to this many merged patches, all computed.
GEMMA4_UNIFIED_SOFT_TOKENS = 280


@tower("gemma4_unified_vision", transformers="Gemma4UnifiedVisionConfig")
class Gemma4UnifiedVisionConfig(TowerConfig):
    """configuration_gemma4_unified.py (Gemma4UnifiedVisionConfig) / Gemma4UnifiedVisionEmbedder: no layers. Each
    model patch (patch_size · pooling_kernel_size pixels square, 3 channels) passes patch_ln1, patch_dense (with bias,
    → mm_embed_dim) and patch_ln2, gets a row of pos_embedding [mm_posemb_size, 2, mm_embed_dim] per axis (looked up,
    no matmul) and passes pos_norm: all LayerNorms with biases. It hands output_proj_dims on to the embedder."""

    patch_size: Width
    pooling_kernel_size: Width
    mm_embed_dim: Width
    mm_posemb_size: Width
    output_proj_dims: Width

    def tower(self, prefix: str) -> Tower:
        """patch_ln1 (3·(p·k)² with bias), patch_dense (3·(p·k)² → mm_embed_dim, bias), patch_ln2, pos_embedding,
        pos_norm; all count as the projector, as transformers keeps them under embed_vision."""
        model_patch = self.patch_size * self.pooling_kernel_size
        pixels, width = 3 * model_patch**2, self.mm_embed_dim
        modules = (
            ("patch_ln1", Norm("layernorm", pixels, bias=True)),
            ("patch_dense", Linear(pixels, width, True)),
            ("patch_ln2", Norm("layernorm", width, bias=True)),
            ("pos_embedding", LearnedTensor((self.mm_posemb_size, 2, width))),
            ("pos_norm", Norm("layernorm", width, bias=True)),
        )
        extras = tuple(tower_module(prefix + name, module, "projector") for name, module in modules)
        # The processor pads every image to max_soft_tokens merged patches; each is one soft token.
        image = ImageInput(model_patch, "budget", GEMMA4_UNIFIED_SOFT_TOKENS)
        return Tower((), extras, self.output_proj_dims, image)


@tower("gemma4_unified_audio", transformers="Gemma4UnifiedAudioConfig")
class Gemma4UnifiedAudioConfig(TowerConfig):
    """configuration_gemma4_unified.py (Gemma4UnifiedAudioConfig): no tower and no module of its own; each token is a
    frame of audio_embed_dim raw samples, which the wrapper's audio embedder projects."""

    audio_embed_dim: Width

    def tower(self, prefix: str) -> Tower:
        """Nothing: it hands the raw frames (audio_embed_dim wide) to the embedder."""
        return Tower((), (), self.audio_embed_dim, None)


@family(
    "gemma4_unified",
    transformers="Gemma4UnifiedConfig",
    architecture="Gemma-4 unified",
    model_class="Gemma4UnifiedForConditionalGeneration",
)
class Gemma4UnifiedConfig(Gemma4Config):
    """configuration_gemma4_unified.py / modeling_gemma4_unified.py (Gemma4UnifiedForConditionalGeneration): Gemma 4's
    wrapper (its fields and defaults: optional vision and audio blocks, none by default; tie_word_embeddings true),
    its language model gemma4_unified_text under model.language_model., the vision embedder saved as
    model.vision_embedder. (conversion_mapping.py's names, reverted) and the two embedders' projections
    (model.embed_vision. and model.embed_audio.embedding_projection, no bias)."""

    text_model_type = "gemma4_unified_text"
    vision_model_type = "gemma4_unified_vision"
    vision_prefix = "model.vision_embedder."
    audio_model_type = "gemma4_unified_audio"
    audio_prefix = "model.embed_audio."

    def projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        """Gemma4UnifiedMultimodalEmbedder: a norm without weight, one linear output_proj_dims → text hidden."""
        return (projector_module("model.embed_vision.embedding_projection", Linear(tower.hidden_size, text_hidden)),)

    def audio_projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        """The same embedder on the raw frames: one linear audio_embed_dim → text hidden, once per audio token."""
        projection = Linear(tower.hidden_size, text_hidden)
        return (audio_module("model.embed_audio.embedding_projection", projection, "projector", "per_audio_token"),)
