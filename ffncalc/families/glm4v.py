"""GLM-V (Zhipu AI / Z.ai): GLM-4.1V, GLM-4.5V and GLM-4.6V, a GLM-4.1V vision encoder around a GLM-4 language model
(GLM-4.1V) or a GLM-4.5 one (GLM-4.5V), in Qwen3-VL's layout (model.language_model., model.visual., lm_head); GLM-OCR,
GLM-4.1V's model with a smaller tower of its own and unbiased q, k and v."""

from __future__ import annotations

from ..schema import Width
from ..spec import Layer, ModelSpec, MoeFfn, names
from ..values import replace
from .glm import Glm4Layers, Glm4MoeLayers
from .multimodal import relocate
from .qwen import Qwen3VLConfig, TextOfWrapper
from .registry import family


@family(
    "glm4v_text",
    transformers="Glm4vTextConfig",
    architecture="GLM-4.1V",
    model_class="Glm4vTextModel",
    heads_divide_hidden=False,
)
class Glm4vTextConfig(TextOfWrapper, Glm4Layers):
    """configuration_glm4v.py (Glm4vTextConfig) / modeling_glm4v.py (Glm4vTextModel): GLM-4's layers (q, k and v with
    biases always, o without; gate_up_proj; four RMSNorms a layer); head_dim is hidden_size // num_attention_heads
    (floored: Glm4vTextAttention never refuses); no head of its own."""

    # No head_dim (hidden_size // num_attention_heads) and no tie_word_embeddings: the wrapper's flag decides.

    @property
    def attention_biased(self) -> bool:
        """q, k and v always carry biases (Glm4vTextAttention), whatever a config says; o never (Glm4Layers)."""
        return True


@family("glm4v", transformers="Glm4vConfig", architecture="GLM-4.1V", model_class="Glm4vForConditionalGeneration")
class Glm4vConfig(Qwen3VLConfig):
    """configuration_glm4v.py (Glm4vConfig): the top-level tie_word_embeddings (default false) decides tying, or
    text_config's when true (Glm4vConfig.__post_init__, for checkpoints saved before transformers 5)."""

    text_model_type = "glm4v_text"
    vision_model_type = "glm4v_vision"

    def tied(self) -> bool:
        return self.tie_word_embeddings or (self.text_config or {}).get("tie_word_embeddings") is True


@family(
    "glm_ocr_text",
    transformers="GlmOcrTextConfig",
    architecture="GLM-OCR",
    model_class="GlmOcrTextModel",
    read_beyond={"head_dim": "read by the modeling code with getattr"},
)
class GlmOcrTextConfig(TextOfWrapper, Glm4Layers):
    """configuration_glm_ocr.py (GlmOcrTextConfig) / modeling_glm_ocr.py (GlmOcrTextModel): GLM-4.1V's language model
    with q, k and v unbiased (GlmOcrTextAttention), head_dim read with getattr (a key the configuration class does
    not declare; hidden_size // num_attention_heads without it); no head of its own."""

    head_dim: Width | None = None
    # No tie_word_embeddings: the wrapper's flag decides.


@family("glm_ocr", transformers="GlmOcrConfig", architecture="GLM-OCR", model_class="GlmOcrForConditionalGeneration")
class GlmOcrConfig(Glm4vConfig):
    """configuration_glm_ocr.py (GlmOcrConfig) / modeling_glm_ocr.py: GLM-4.1V's wrapper, layout and tying rule around
    GLM-OCR's tower and language model."""

    text_model_type = "glm_ocr_text"
    vision_model_type = "glm_ocr_vision"


@family("glm4v_moe_text", transformers="Glm4vMoeTextConfig", architecture="GLM-4.5V", model_class="Glm4vMoeTextModel")
class Glm4vMoeTextConfig(TextOfWrapper, Glm4MoeLayers):
    """configuration_glm4v_moe.py (Glm4vMoeTextConfig) / modeling_glm4v_moe.py (Glm4vMoeTextModel): GLM-4.5's layers
    (q, k and v biased by attention_bias, default true here; o without; a config's head_dim read with getattr, else
    hidden / heads; dense below first_k_dense_replace, then routed and shared experts and the router's correction
    bias, a saved buffer) without per-head q/k norms or multi-token-prediction layers (the class drops use_qk_norm
    and num_mtp_layers); no head of its own."""

    informational_fields = Glm4MoeLayers.informational_fields - {"num_mtp_layers"}

    # None of GLM-4.5's use_qk_norm, num_mtp_layers and tie_word_embeddings: the wrapper's flag decides tying (and
    # text_config's, when true).


@family(
    "glm4v_moe", transformers="Glm4vMoeConfig", architecture="GLM-4.5V", model_class="Glm4vMoeForConditionalGeneration"
)
class Glm4vMoeConfig(Glm4vConfig):
    """configuration_glm4v_moe.py (Glm4vMoeConfig): GLM-4.1V's wrapper and tying rule around a GLM-4.5V language
    model."""

    text_model_type = "glm4v_moe_text"
    vision_model_type = "glm4v_moe_vision"


@family("glm46v", transformers="Glm46VConfig", architecture="GLM-4.6V", model_class="Glm46VForConditionalGeneration")
class Glm46VConfig(Qwen3VLConfig):
    """configuration_glm46v.py / modeling_glm46v.py (GLM-4.6V): the tower and the language model each built by
    AutoModel from its config (by default GLM-4.1V's, glm4v_vision and glm4v_text), in GLM-4.1V's layout; only the
    top-level tie_word_embeddings (default false) ties: Glm46VConfig has no rule reading text_config's."""

    text_model_type = "glm4v_text"
    vision_model_type = "glm4v_vision"

    def wrapped_spec(self) -> ModelSpec:
        spec = getattr(self.text, "language_model_spec", self.text.to_spec)()
        if self.text.model_type in SAVED_STACKED:
            spec = replace(spec, layers=tuple(stacked_experts(layer) for layer in spec.layers))
        spec = replace(spec, model_type=self.model_type, tie_word_embeddings=self.tied())
        return self.whole(relocate(spec, self.language_model_prefix, self.lm_head_name))


@family("glmga", transformers="GlmgaConfig", architecture="GLM-GA")
class GlmgaConfig(Glm46VConfig):
    """configuration_glmga.py (GlmgaConfig): GLM-4.6V's fields and defaults under a model_type of its own, built by
    GLM-4.6V's classes (Glm46VForConditionalGeneration, the image-text-to-text mapping's) in GLM-4.6V's layout."""


# transformers' conversion_mapping.py splits the stacked experts of a model (or of a sub-model) by its model_type: it
# lists glm4v_moe, not glm46v nor glm4v_moe_text, so GLM-4.6V saves a GLM-4.5V language model's experts as
# Glm4vMoeTextExperts holds them, gate and up fused: mlp.experts.gate_up_proj [E, 2I, H] and down_proj [E, H, I].
SAVED_STACKED = frozenset({"glm4v_moe_text"})
STACKED_MOE = names(router="mlp.gate", experts="mlp.experts")
STACKED_EXPERT = names(gate="gate_up_proj", up="gate_up_proj", down="down_proj", parameters=True)


def stacked_experts(layer: Layer) -> Layer:
    """LAYER with its routed experts stored stacked, as STACKED_MOE and STACKED_EXPERT name them."""
    if not isinstance(layer.ffn, MoeFfn):
        return layer
    return replace(
        layer, ffn=replace(layer.ffn, names=STACKED_MOE, expert=replace(layer.ffn.expert, names=STACKED_EXPERT))
    )
