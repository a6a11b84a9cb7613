"""The pure state-space models of the Mamba lineage: Mamba (the selective scan), Falcon-Mamba (Mamba with
weightless RMSNorms on dt, B and C) and Mamba-2 (the SSD layer). Each layer is one RMSNorm and one mixer:
no attention and no FFN, so nothing grows with the context."""

from __future__ import annotations

import math
from typing import Literal

from pydantic import model_validator

from ..schema import Flag, HeadCount, HFConfig, LayerCount, Width, derives
from ..spec import Layer, Mixer, ModelNames, ModelSpec, Norm, names
from .mixers import mamba, mamba2, mamba2_names
from .registry import family

MAMBA_LAYER = "backbone.layers.{i}"
MAMBA_MODEL = ModelNames("backbone.embeddings", "backbone.norm_f", base_model_prefix="backbone")
MAMBA_MIXER = names(
    in_proj="mixer.in_proj",
    conv1d="mixer.conv1d",
    x_proj="mixer.x_proj",
    dt_proj="mixer.dt_proj",
    A_log="mixer.A_log",
    D="mixer.D",
    out_proj="mixer.out_proj",
)
MAMBA2_MIXER = mamba2_names("mixer.")


class _StateSpaceStack(HFConfig):
    """A backbone of identical layers, each an RMSNorm ("norm") before one mixer; the head tied or not."""

    vocab_size: Width
    hidden_size: Width
    num_hidden_layers: LayerCount
    tie_word_embeddings: Flag

    def mixer(self) -> Mixer:  # pragma: no cover - each family builds its own
        raise NotImplementedError

    def to_spec(self) -> ModelSpec:
        norm = Norm("rmsnorm", self.hidden_size)
        layer = Layer(MAMBA_LAYER, None, None, (("norm", norm),), mixer=self.mixer())
        return ModelSpec(
            model_type=self.model_type,
            hidden_size=self.hidden_size,
            vocab_size=self.vocab_size,
            layers=(layer,) * self.num_hidden_layers,
            final_norm=norm,
            tie_word_embeddings=self.tie_word_embeddings,
            names=MAMBA_MODEL,
        )


@family(
    "mamba",
    transformers="MambaConfig",
    architecture="Mamba",
    model_class="MambaForCausalLM",
    read_beyond={"intermediate_size": "set by __post_init__, overridden by the config's key"},
)
class MambaConfig(_StateSpaceStack):
    """configuration_mamba.py / modeling_mamba.py: Mamba's selective-scan mixer of width intermediate_size.

    intermediate_size is not a field: __post_init__ sets expand · hidden_size, and a config that carries the
    key overrides it (Falcon-Mamba-7B: expand 16, intermediate_size 8192). time_step_rank "auto" is
    ceil(hidden_size / 16). in_proj and out_proj follow use_bias, the conv use_conv_bias.
    """

    vocab_size: Width
    hidden_size: Width
    state_size: Width
    num_hidden_layers: LayerCount
    expand: Width
    conv_kernel: Width
    use_bias: Flag
    use_conv_bias: Flag
    time_step_rank: Width | Literal["auto"]
    tie_word_embeddings: Flag
    intermediate_size: Width | None = None  # not a field of MambaConfig: see the class docstring

    @derives("intermediate_size", "expand · hidden_size")
    def inner(self) -> int:
        """The mixer's width: the config's intermediate_size key, else expand · hidden_size."""
        return self.intermediate_size or self.expand * self.hidden_size

    @derives("time_step_rank", "ceil(hidden_size / 16)", when="auto")
    def dt_rank(self) -> int:
        """time_step_rank, or ceil(hidden_size / 16) for "auto"."""
        return math.ceil(self.hidden_size / 16) if self.time_step_rank == "auto" else self.time_step_rank

    def mixer(self) -> Mixer:
        return mamba(
            self.hidden_size,
            self.inner(),
            self.state_size,
            self.dt_rank(),
            self.conv_kernel,
            MAMBA_MIXER,
            proj_bias=self.use_bias,
            conv_bias=self.use_conv_bias,
        )


@family(
    "falcon_mamba", transformers="FalconMambaConfig", architecture="Falcon-Mamba", model_class="FalconMambaForCausalLM"
)
class FalconMambaConfig(MambaConfig):
    """configuration_falcon_mamba.py / modeling_falcon_mamba.py: Mamba's layers; the RMSNorms on dt, B and C
    (dt_layernorm, b_layernorm, c_layernorm) have no weights (non-persistent buffers of ones)."""


@family("mamba2", transformers="Mamba2Config", architecture="Mamba-2", model_class="Mamba2ForCausalLM")
class Mamba2Config(_StateSpaceStack):
    """configuration_mamba2.py / modeling_mamba2.py: Mamba-2 mixers of num_heads × head_dim, which
    transformers requires to equal expand · hidden_size; n_groups groups of B and C; untied by default."""

    num_heads: HeadCount
    head_dim: Width
    vocab_size: Width
    hidden_size: Width
    state_size: Width
    num_hidden_layers: LayerCount
    expand: Width
    conv_kernel: Width
    n_groups: HeadCount
    use_bias: Flag
    use_conv_bias: Flag
    tie_word_embeddings: Flag

    @model_validator(mode="after")
    def _check_heads(self) -> Mamba2Config:
        if self.hidden_size * self.expand != self.num_heads * self.head_dim:
            raise ValueError(
                f"num_heads × head_dim ({self.num_heads} × {self.head_dim}) must equal hidden_size × expand "
                f"({self.hidden_size} × {self.expand}), as transformers requires"
            )
        return self

    def mixer(self) -> Mixer:
        return mamba2(
            self.hidden_size,
            self.num_heads,
            self.head_dim,
            self.n_groups,
            self.state_size,
            self.conv_kernel,
            MAMBA2_MIXER,
            proj_bias=self.use_bias,
            conv_bias=self.use_conv_bias,
        )
