"""Meta's X-MOD: RoBERTa with a small adapter per language after each layer's MLP."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, model_validator

from ..schema import Flag, Name, Width
from ..spec import Layer, ModelSpec, Parameter
from ..values import replace
from .bert import RobertaConfig
from .registry import family


@family("xmod", transformers="XmodConfig", architecture="X-MOD", model_class="XmodForMaskedLM")
class XmodConfig(RobertaConfig):
    """configuration_xmod.py / modeling_xmod.py (facebook/xmod-base): RoBERTa's model, classes and heads under
    roberta.*, with BERT's default vocabulary size. Each layer's output holds one adapter per language of
    ``languages`` (output.adapter_modules.{language}: dense1 hidden → hidden // adapter_reduction_factor and dense2
    back, with biases), and a LayerNorm of its own before them when adapter_layer_norm. pre_norm moves each LayerNorm
    before its sublayer (the same modules) and adds one after the last layer (encoder.LayerNorm).

    A token runs only its own language's adapter (one of len(languages)): 2 · 2 · hidden · bottleneck FLOPs a layer,
    under other, where every language's adapters count their parameters.
    """

    class_prefix = "Xmod"

    pre_norm: Flag
    adapter_reduction_factor: Width
    adapter_layer_norm: Flag
    languages: Annotated[list[Name], Field(min_length=1, max_length=1024)]

    @model_validator(mode="after")
    def _check_adapters(self) -> XmodConfig:
        if self.hidden_size < self.adapter_reduction_factor:
            raise ValueError(
                f"adapter_reduction_factor ({self.adapter_reduction_factor}) exceeds hidden_size "
                f"({self.hidden_size}): the adapters would be 0 wide"
            )
        return self

    @property
    def bottleneck(self) -> int:
        """The adapters' width: hidden_size // adapter_reduction_factor."""
        return self.hidden_size // self.adapter_reduction_factor

    def encoder_layer(self) -> Layer:
        """RoBERTa's layer, with every language's adapter (and their LayerNorm) in its output."""
        hidden, width = self.hidden_size, self.bottleneck
        adapters = []
        languages = dict.fromkeys(self.languages)  # a ModuleDict keeps one adapter per name
        for language in languages:
            name = f"output.adapter_modules.{language}"
            for module, shape in (("dense1", (width, hidden)), ("dense2", (hidden, width))):
                weight = Parameter("other", "adapter", f"{name}.{module}.weight", shape, True, len(languages))
                adapters += [
                    weight,
                    Parameter("other", "adapter", f"{name}.{module}.bias", shape[:1], of=len(languages)),
                ]
        layer = super().encoder_layer()
        norms = layer.norms + ((("output.adapter_layer_norm", self.layer_norm()),) if self.adapter_layer_norm else ())
        return replace(layer, norms=norms, parameters=tuple(adapters))

    def to_spec(self) -> ModelSpec:
        spec = super().to_spec()
        if not self.pre_norm:
            return spec
        names = replace(spec.names, final_norm=f"{self.root}encoder.LayerNorm")
        return replace(spec, final_norm=self.layer_norm(), names=names)
