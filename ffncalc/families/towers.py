"""The pieces of a vision or audio tower that wrappers and tower adapters share: what a built tower is, its
modules outside the layers, and the adapter every tower config derives from. Both ``multimodal`` (the wrappers)
and ``vision``/``audio`` (the towers) build on this module; neither imports the other's internals."""

from __future__ import annotations

from ..schema import HFConfig, Name
from ..spec import (
    AudioInput,
    CheckpointExtra,
    Extra,
    ImageInput,
    Layer,
    LearnedTensor,
    Linear,
    ModelSpec,
    Norm,
    PatchEmbedding,
    Table,
)
from ..values import Value, replace


class Tower(Value):
    """A tower's layers (stack "vision" or "audio") and its modules outside them, named under the wrapper's prefix."""

    layers: tuple[Layer, ...]
    extras: tuple[Extra, ...]
    hidden_size: int  # the width of what it hands on (before any projector)
    image: ImageInput | None  # how it reads an image as patches (None: an audio tower, a convolutional one)
    checkpoint_extras: tuple[CheckpointExtra, ...] = ()  # buffers its modules save
    audio: AudioInput | None = None  # how an audio tower reads a clip, where it reads fixed windows (Whisper's)


Module = Linear | Norm | Table | PatchEmbedding | LearnedTensor


def tower_module(name: str, module: Module, component: str = "vision", runs: str = "per_patch") -> Extra:
    """A module of a tower or projector outside its layers: it runs for each patch of an image, or for each token
    the image becomes (runs="per_image_token"), never for a text token."""
    return Extra(component, name, module, runs=runs)  # type: ignore[arg-type]


def projector_module(name: str, module: Module) -> Extra:
    """A module that carries the tower's merged features into the language model: once per image token."""
    return tower_module(name, module, "projector", "per_image_token")


def audio_module(name: str, module: Module, component: str = "audio", runs: str = "per_audio_frame") -> Extra:
    """A module of an audio tower outside its layers, or (component="projector") of its projector: it runs for each
    frame of a clip (runs="per_audio_position": each position its convolutions leave; "per_audio_token": each token
    the clip becomes in the language model), never for a text token."""
    return tower_module(name, module, component, runs)


def video_tower(tower: Tower) -> Tower:
    """TOWER as a tower that reads videos only (Video-LLaVA's video_tower): its layers in the "video" stack and its
    modules run per video frame, so that an image's FLOPs leave it out; its parameters count as the vision tower's."""
    return replace(
        tower,
        layers=tuple(replace(layer, stack="video") for layer in tower.layers),
        extras=tuple(replace(extra, runs="per_video_frame") for extra in tower.extras),
    )


def after(tower: Tower, layers: int) -> Tower:
    """TOWER as a second tower in the same stack after one of LAYERS layers: its layers numbered from 0 still."""
    return replace(
        tower, layers=tuple(replace(layer, index_offset=layer.index_offset + layers) for layer in tower.layers)
    )


class TowerConfig(HFConfig):
    """A vision config: its fields and transformers' defaults; ``tower(prefix)`` builds it under PREFIX."""

    model_type: Name = ""

    def tower(self, prefix: str) -> Tower:  # pragma: no cover - every tower overrides it
        raise NotImplementedError

    def uncounted(self) -> str | None:
        """Why ffncalc cannot count this tower (the wrapper then counts its language model alone); None: it can."""
        return None

    def to_spec(self) -> ModelSpec:  # pragma: no cover - towers are counted inside their wrapper
        raise NotImplementedError(f"{self.config_class} is counted inside a multimodal model")
