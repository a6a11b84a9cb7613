"""Nemotron-3 Nano Omni (nemotron_h_omni): a RADIO vision transformer (C-RADIO: class and register tokens, a
position grid cropped to each image, layer scales), a pixel-shuffle projector, an optional Parakeet audio encoder and
a Nemotron-H language model, saved under the names of NVIDIA's checkpoints."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field, model_validator

from ..schema import Flag, HeadCount, LayerCount, Name, Width
from ..spec import (
    Attention,
    CheckpointExtra,
    DenseFfn,
    Extra,
    Layer,
    LearnedTensor,
    Linear,
    ModelSpec,
    Norm,
    Parameter,
    StoredTensor,
    names,
)
from ..values import replace
from .multimodal import MultimodalLayers, nest
from .nemotron import NemotronHConfig
from .registry import family, tower
from .towers import Tower, TowerConfig, audio_module, projector_module, tower_module

# The names RADIO's checkpoints keep (conversion_mapping.py's "radio", transformers 5.24, reverted): q, k and v
# fused in attn.qkv, o as attn.proj, the blocks as model.blocks.
RADIO_ATTENTION = names(q="attn.qkv", k="attn.qkv", v="attn.qkv", o="attn.proj")
RADIO_MLP = names(up="mlp.fc1", down="mlp.fc2")
RADIO_SWIGLU = names(gate="mlp.gate_proj", up="mlp.up_proj", down="mlp.down_proj")


@tower("radio", transformers="RadioConfig")
class RadioConfig(TowerConfig):
    """configuration_radio.py (RadioConfig) / modeling_radio.py (RadioModel): patches of patch_size² pixels
    projected by a linear without bias (patch_generator.embedder; a second one, video_embedder, over
    video_temporal_patch_size stacked frames where that is set), a learned grid of (max_img_size / patch_size)²
    positions interpolated to each image (looked up, no matmul), num_cls_tokens + num_registers learned tokens before
    the patches (cls_token.token), and ViT blocks: two LayerNorms with biases, q, k, v (qkv_bias) and a biased output
    projection, an FFN of int(hidden_size · mlp_ratio) (fc1/fc2, biased; use_swiglu_ffn: a biased SwiGLU two thirds as
    wide, rounded up to a multiple of 8), and two layer-scale vectors. summary_idxs is a saved buffer. The input
    conditioner's norm_mean/norm_std buffers are left out: Nemotron-H Omni, the one wrapper that reads this tower,
    detaches it (make_preprocessor_external)."""

    informational_fields = frozenset({"image_size"})  # patch_dim and video_patch_dim: __post_init__ derives them

    hidden_size: Width
    num_hidden_layers: LayerCount
    num_attention_heads: HeadCount
    mlp_ratio: Annotated[float, Field(gt=0, le=64)]
    hidden_act: Name
    use_swiglu_ffn: Flag
    qkv_bias: Flag
    num_channels: Width
    patch_size: Width
    image_size: Width
    max_img_size: Width
    num_cls_tokens: Annotated[int, Field(strict=True, ge=0, le=1024)]
    num_registers: Annotated[int, Field(strict=True, ge=0, le=1024)]
    video_temporal_patch_size: Width | None
    summary_idxs: Annotated[list[int] | None, Field(max_length=1024)]

    @model_validator(mode="after")
    def _check_geometry(self) -> RadioConfig:
        if self.hidden_size % self.num_attention_heads:
            raise ValueError(
                f"hidden_size ({self.hidden_size}) is not a multiple of num_attention_heads ({self.num_attention_heads})"
            )
        if self.video_temporal_patch_size is not None and self.video_temporal_patch_size < 2:
            raise ValueError("video_temporal_patch_size must be at least 2 or null (RadioConfig requires it)")
        if self.ffn_width() < 1:
            raise ValueError(f"mlp_ratio ({self.mlp_ratio}) leaves the FFN no width")
        return self

    def ffn_width(self) -> int:
        """RadioMLP's int(hidden_size · mlp_ratio), or RadioSwiGLUFFN's two thirds of it rounded up to a multiple of 8
        (the same float arithmetic as modeling_radio.py, so the width is the module's)."""
        width = int(self.hidden_size * self.mlp_ratio)
        return (int(width * 2 / 3) + 7) // 8 * 8 if self.use_swiglu_ffn else width

    def tower(self, prefix: str) -> Tower:
        hidden, heads = self.hidden_size, self.num_attention_heads
        head_dim = hidden // heads
        bias = self.qkv_bias
        attention = Attention(hidden, heads, heads, head_dim, head_dim, RADIO_ATTENTION, bias, bias, bias, True)
        swiglu = self.use_swiglu_ffn
        ffn = DenseFfn(
            hidden, self.ffn_width(), swiglu, "silu" if swiglu else self.hidden_act, RADIO_SWIGLU if swiglu else RADIO_MLP, True
        )  # fmt: skip
        norm = Norm("layernorm", hidden, bias=True)
        scales = tuple(
            Parameter("vision", f"layer_scale{n}", f"layer_scale{n}.lambda1", (hidden,)) for n in (1, 2)
        )  # fmt: skip
        layer = Layer(
            prefix + "model.blocks.{i}", attention, ffn, (("norm1", norm), ("norm2", norm)),
            stack="vision", parameters=scales,
        )  # fmt: skip
        generator = prefix + "model.patch_generator."
        side = self.max_img_size // self.patch_size
        patch = self.num_channels * self.patch_size**2
        extras = [
            tower_module(generator + "embedder", Linear(patch, hidden)),
            tower_module(generator + "pos_embed", LearnedTensor((1, side * side, hidden))),
            tower_module(generator + "cls_token.token", LearnedTensor((self.num_cls_tokens + self.num_registers, hidden))),
        ]  # fmt: skip
        if self.video_temporal_patch_size is not None:  # run over video patches only, never an image's
            video = Linear(self.video_temporal_patch_size * patch, hidden)
            extras.append(tower_module(generator + "video_embedder", video, runs="per_video_frame"))
        summary = len(self.summary_idxs) if self.summary_idxs is not None else 2  # __post_init__'s [0, 1]
        saved = CheckpointExtra(
            "summary_idxs",
            "the indices of the class tokens RadioModel gathers into its summary: a persistent buffer",
            (StoredTensor(prefix + "summary_idxs", (summary,)),),
            buffer=True,
        )
        # Its image processor resizes each image to a patch grid of its own rule (between min_num_patches and
        # max_num_patches, not in config.json): no image rule here.
        return Tower((layer,) * self.num_hidden_layers, tuple(extras), hidden, None, checkpoint_extras=(saved,))


# NemotronH_Omni_Reasoning_V3_Config.__post_init__: a given audio_config is read over these.
AUDIO_DEFAULTS = {"attention_bias": False, "scale_input": False}


@family(
    "nemotron_h_omni",
    transformers="NemotronH_Omni_Reasoning_V3_Config",
    architecture="Nemotron-H Omni",
    model_class="NemotronH_Omni_Reasoning_V3",
)
class NemotronHOmniConfig(MultimodalLayers):
    """configuration_nemotron_h_omni.py / modeling_nemotron_h_omni.py (NemotronH_Omni_Reasoning_V3): the whole
    NemotronHForCausalLM built from text_config (its head tied as text_config says), a RADIO tower (by default with
    video_temporal_patch_size 2), a projector over 1 / downsample_ratio squared patches pixel-shuffled together (an
    RMSNorm over vision_hidden_size of each, then linear_1 → projector_hidden_size, relu², linear_2 into the text
    width, no biases), a LayerNorm over the tower's features before it where the language model has multi-token
    prediction layers (num_nextn_predict_layers), and, where audio_config is given, a Parakeet encoder (read over
    attention_bias and scale_input false) with its projector embed_audio (an RMSNorm, linear_1 → the block's
    projection_hidden_size and linear_2, biased where its projection_bias says). Saved as the checkpoints name them
    (conversion_mapping.py's "NemotronH_Omni_Reasoning_V3" and "radio", reverted): the projector as mlp1.0/1/3, the
    tower under vision_model.radio_model., the audio encoder as sound_encoder.encoder. and its projector as
    sound_projection."""

    text_model_type = "nemotron_h"
    text_ties = True
    vision_model_type = "radio"
    vision_defaults = {"model_type": "radio", "video_temporal_patch_size": 2}
    vision_prefix = "vision_model.radio_model."
    audio_model_type = "parakeet_encoder"
    audio_prefix = "sound_encoder.encoder."
    optional_towers = frozenset({"audio_config"})

    vision_config: dict[str, Any] | None
    audio_config: dict[str, Any] | None
    downsample_ratio: Annotated[float, Field(gt=0, le=1)]
    projector_hidden_size: Width
    vision_hidden_size: Width
    video_temporal_patch_size: Width

    @model_validator(mode="before")
    @classmethod
    def _read_the_audio_block_over_its_defaults(cls, data: Any) -> Any:
        audio = data.get("audio_config") if isinstance(data, dict) else None
        if isinstance(audio, dict):
            return {**data, "audio_config": {**AUDIO_DEFAULTS, **audio}}
        return data

    @model_validator(mode="after")
    def _check_towers(self) -> NemotronHOmniConfig:
        video = (self.vision_config or self.vision_defaults).get("video_temporal_patch_size")
        if video != self.video_temporal_patch_size:
            raise ValueError(
                f"vision_config.video_temporal_patch_size ({video}) must equal video_temporal_patch_size "
                f"({self.video_temporal_patch_size}), as transformers requires"
            )
        if self.audio_config is not None:
            width, bias = self.audio_config.get("projection_hidden_size"), self.audio_config.get("projection_bias")
            if not (isinstance(width, int) and not isinstance(width, bool) and width > 0 and isinstance(bias, bool)):
                raise ValueError(
                    "audio_config: give projection_hidden_size (a positive integer) and projection_bias (true or "
                    "false), embed_audio's width and biases; transformers cannot build the model without them"
                )
        return self

    def tied(self) -> bool:
        """Whether the language model's head is its token table: text_config decides (it is built whole)."""
        return self.text.to_spec().tie_word_embeddings

    def wrapped_spec(self) -> ModelSpec:
        """NemotronHForCausalLM under language_model. (its head too), with the towers and projectors."""
        return self.whole(nest(replace(self.text.to_spec(), model_type=self.model_type), "language_model."))

    def projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        width = self.vision_hidden_size
        merged = width * int(1 / self.downsample_ratio) ** 2
        modules: list[Extra] = []
        if isinstance(self.text, NemotronHConfig) and self.text.num_nextn_predict_layers > 0:
            final = Norm("layernorm", width, bias=True)
            modules.append(tower_module("vision_projector.vision_final_layernorm", final, "norm"))
        return (
            *modules,
            projector_module("mlp1.0", Norm("rmsnorm", merged)),
            projector_module("mlp1.1", Linear(merged, self.projector_hidden_size)),
            projector_module("mlp1.3", Linear(self.projector_hidden_size, text_hidden)),
        )

    def audio_projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        block = self.audio_config or {}
        inner, bias = block["projection_hidden_size"], block["projection_bias"]
        return (
            audio_module("sound_projection.norm", Norm("rmsnorm", tower.hidden_size), "projector", "per_audio_token"),
            audio_module("sound_projection.linear1", Linear(tower.hidden_size, inner, bias), "projector", "per_audio_token"),
            audio_module("sound_projection.linear2", Linear(inner, text_hidden, bias), "projector", "per_audio_token"),
        )  # fmt: skip
