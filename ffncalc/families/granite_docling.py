"""Granite-Docling (IBM; transformers 5.24, modeling_granite_docling.py): SigLIP's tower over tiles of 512 × 512,
a connector with a coarse and (optionally) a fine pixel-shuffle path, each with DeepStack mergers whose outputs are
added to the language model's hidden states at the image tokens, an optional density router that picks the path,
and Granite's language model."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import model_validator

from ..errors import InvalidConfigError
from ..schema import Flag, LayerIndex, Width
from ..spec import Extra, ImageInput, Linear, ModelSpec, Norm
from ..values import replace
from .granite import GraniteConfig
from .multimodal import MultimodalConfig, relocate
from .qwen import TextOfWrapper
from .registry import family, tower
from .towers import Tower, projector_module, tower_module
from .vision import SiglipFields

# GraniteDoclingVisionConfig.__post_init__: the layers the DeepStack mergers read when deepstack_visual_indexes is null.
DEEPSTACK_LAYERS = [3, 7, 10]


@tower("granite_docling_vision", transformers="GraniteDoclingVisionConfig")
class GraniteDoclingVisionConfig(SiglipFields):
    """configuration_granite_docling.py (GraniteDoclingVisionConfig) / GraniteDoclingVisionModel: SigLIP's tower
    without a head (a learned position per patch of an image_size tile) and the connector (connector.): ln_in over the
    patches; on each path (coarse: scale_factor; fine, with use_fine_route: scale_factor / 2) a pixel shuffle of s²
    patches into one token, projection (hidden · s² → out_hidden_size, no bias), a fixed sine-cosine position table
    (an unsaved buffer) and a DeepStack merger per tapped layer (LayerNorm over hidden · s², linear_1 → out_hidden_size
    and linear_2, biased); then ln_mid, mlp_fc2 (no bias) and ln_out, shared by both paths."""

    out_hidden_size: Width
    scale_factor: Width
    deepstack_visual_indexes: list[LayerIndex] | None
    use_fine_route: Flag

    @model_validator(mode="after")
    def _check_shuffle(self) -> GraniteDoclingVisionConfig:
        # the pixel shuffle folds a tile's side of image_size / patch_size patches by the path's factor
        side = self.image_size // self.patch_size
        factors = [self.scale_factor] + ([self.scale_factor // 2] if self.use_fine_route else [])
        if any(factor == 0 or side % factor for factor in factors):
            raise ValueError(
                f"scale_factor ({self.scale_factor}): each path's factor must divide a tile's side of {side} patches"
            )
        return self

    @property
    def deepstack_layers(self) -> list[int]:
        """deepstack_visual_indexes, or [3, 7, 10] when null."""
        return DEEPSTACK_LAYERS if self.deepstack_visual_indexes is None else self.deepstack_visual_indexes

    def path(self, prefix: str, factor: int) -> tuple[Extra, ...]:
        """One connector path: projection and a DeepStack merger per tapped layer, at pixel-shuffle FACTOR."""
        merged, out = self.hidden_size * factor**2, self.out_hidden_size
        modules: tuple[Extra, ...] = (projector_module(prefix + "projection", Linear(merged, out)),)
        for j in range(len(self.deepstack_layers)):
            merger = f"{prefix}deepstack_mergers.{j}."
            modules += (
                projector_module(merger + "layer_norm", Norm("layernorm", merged, bias=True)),
                projector_module(merger + "linear_1", Linear(merged, out, True)),
                projector_module(merger + "linear_2", Linear(out, out, True)),
            )
        return modules

    def tower(self, prefix: str) -> Tower:
        tower = self.siglip_tower(prefix, ImageInput(self.patch_size, "tiles", self.image_size))
        connector, out = prefix + "connector.", self.out_hidden_size
        layer_norm = Norm("layernorm", out, bias=True)
        modules = (
            tower_module(connector + "ln_in", Norm("layernorm", self.hidden_size, bias=True), "projector"),
            *self.path(connector + "coarse.", self.scale_factor),
            *(self.path(connector + "fine.", self.scale_factor // 2) if self.use_fine_route else ()),
            projector_module(connector + "ln_mid", layer_norm),
            projector_module(connector + "mlp_fc2", Linear(out, out)),
            projector_module(connector + "ln_out", layer_norm),
        )
        return replace(tower, extras=tower.extras + modules, hidden_size=out)


@family(
    "granite_docling_text",
    transformers="GraniteDoclingTextConfig",
    architecture="Granite-Docling",
    model_class="GraniteDoclingTextModel",
)
class GraniteDoclingTextConfig(TextOfWrapper, GraniteConfig):
    """configuration_granite_docling.py (GraniteDoclingTextConfig) / GraniteDoclingTextModel: Granite's layers (its
    multipliers scale activations, not parameters) with Granite-Docling-500M's defaults; no head of its own."""

    pad_token_id: int | None


@family(
    "granite_docling",
    transformers="GraniteDoclingConfig",
    architecture="Granite-Docling",
    model_class="GraniteDoclingForConditionalGeneration",
)
class GraniteDoclingConfig(MultimodalConfig):
    """configuration_granite_docling.py (GraniteDoclingConfig) / GraniteDoclingForConditionalGeneration: the vision
    model and its connector (model.vision_model.), the language model (model.text_model.), lm_head tied to the token
    table by tie_word_embeddings (default true), and with density_router_hidden_size a density router
    (model.density_router.: att hidden → 1, a LayerNorm, fc1 hidden → density_router_hidden_size, fc2 → 1, biased)
    that reads each image's patches to choose the fine path.

    An image's FLOPs are not counted: the router chooses a path per image from its patches, and the DeepStack mergers'
    outputs join the language model's first layers at the image tokens; the parameters are."""

    text_model_type = "granite_docling_text"
    text_defaults: ClassVar[dict[str, Any]] = {"model_type": "granite_docling_text"}
    vision_model_type = "granite_docling_vision"
    vision_defaults: ClassVar[dict[str, Any]] = {"model_type": "granite_docling_vision"}
    language_model_prefix = "model.text_model."
    vision_prefix = "model.vision_model."
    lm_head_name = "lm_head"
    informational_fields = frozenset(
        {"image_token_id", "pad_token_id", "density_router_threshold", "density_router_loss_weight"}
    )

    pad_token_id: int | None
    density_router_hidden_size: Width | None

    def validate_nested(self) -> None:
        super().validate_nested()
        vision = self.vision
        if not isinstance(vision, GraniteDoclingVisionConfig):  # pragma: no cover - its one tower
            return
        text_hidden = getattr(self.text, "hidden_size", None)
        if vision.out_hidden_size != text_hidden:  # GraniteDoclingConfig.validate_architecture
            raise InvalidConfigError(
                f"vision_config.out_hidden_size ({vision.out_hidden_size}) must equal text_config.hidden_size "
                f"({text_hidden}); transformers refuses it"
            )
        if self.density_router_hidden_size is not None and not vision.use_fine_route:
            raise InvalidConfigError(
                "density_router_hidden_size: the density router needs vision_config.use_fine_route (transformers "
                "refuses it otherwise)"
            )

    def image_input(self, tower: Tower) -> ImageInput | None:
        return None

    def projector(self, tower: Tower, text_hidden: int) -> tuple[Extra, ...]:
        """The density router, where density_router_hidden_size gives one."""
        width = self.density_router_hidden_size
        vision = self.vision
        if width is None or not isinstance(vision, GraniteDoclingVisionConfig):
            return ()
        hidden, router = vision.hidden_size, "model.density_router."
        return (
            tower_module(router + "att", Linear(hidden, 1, True), "projector"),
            tower_module(router + "norm", Norm("layernorm", hidden, bias=True), "projector"),
            tower_module(router + "fc1", Linear(hidden, width, True), "projector"),
            tower_module(router + "fc2", Linear(width, 1, True), "projector"),
        )

    def wrapped_spec(self) -> ModelSpec:
        spec = getattr(self.text, "language_model_spec", self.text.to_spec)()
        spec = replace(spec, model_type=self.model_type, tie_word_embeddings=self.tied())
        return self.whole(relocate(spec, self.language_model_prefix, self.lm_head_name))

    def notes(self) -> list[str]:
        return super().notes() + [
            "an image's FLOPs are not counted (flops with an `image` refuses): the density router chooses each image's "
            "connector path from its patches, and the DeepStack mergers' outputs join the language model's first "
            "layers; the parameters of both paths are counted"
        ]
