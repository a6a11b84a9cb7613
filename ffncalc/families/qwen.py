"""Qwen: Qwen2 (q/k/v biases), Qwen3 (per-head q/k norms), their MoEs (Qwen's sparse-layer rule),
Qwen3-Next and Qwen3.5 (Gated DeltaNet linear attention beside gated full attention), and the language
models of Qwen2.5-VL, Qwen3-VL and Qwen3.5 inside their multimodal wrappers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import Field, model_validator

from ..schema import (
    METADATA_FIELDS,
    ExpertCount,
    ExpertCountOrZero,
    Flag,
    HeadCount,
    HFConfig,
    LayerCount,
    LayerIndex,
    Name,
    PositionCount,
    Width,
    WidthOrZero,
    derives,
)
from ..spec import CheckpointExtra, DenseFfn, Layer, Mixer, ModelSpec, MoeFfn, Names, StoredTensor, names
from ..units import safetensors_dtype
from ..values import replace
from .base import DecoderConfig
from .blocks import SHARED_EXPERTS, is_sparse, mtp_extra, windows_of_layer_types
from .deepseek import correction_bias_extra
from .mixers import gated_deltanet
from .multimodal import MultimodalConfig, relocate, saved_spec
from .registry import family

QWEN_MOE = names(router="mlp.gate", experts="mlp.experts.{e}", shared_expert_gate="mlp.shared_expert_gate")
SHARED_EXPERT = names(
    gate="mlp.shared_expert.gate_proj", up="mlp.shared_expert.up_proj", down="mlp.shared_expert.down_proj"
)
GATED_DELTANET = names(
    in_proj_qkv="linear_attn.in_proj_qkvz",
    in_proj_z="linear_attn.in_proj_qkvz",
    in_proj_b="linear_attn.in_proj_ba",
    in_proj_a="linear_attn.in_proj_ba",
    conv1d="linear_attn.conv1d",
    dt_bias="linear_attn.dt_bias",
    A_log="linear_attn.A_log",
    norm="linear_attn.norm",
    out_proj="linear_attn.out_proj",
)


class QwenWindows:
    """Qwen's windows: only with use_sliding_window, then on the layers ≥ max_window_layers (or as
    ``layer_types`` says); transformers drops sliding_window when use_sliding_window is false."""

    num_hidden_layers: int
    use_sliding_window: bool
    sliding_window: int | None
    max_window_layers: int | None  # Qwen2.5-VL's language model may leave it null
    layer_types: Sequence[str] | None  # each family narrows it to its own layer types

    def layer_windows(self) -> list[int | None]:
        window = self.sliding_window if self.use_sliding_window else None
        if self.layer_types is not None:
            return windows_of_layer_types(self.layer_types, window)
        return [
            window if window is not None and i >= (self.max_window_layers or 0) else None
            for i in range(self.num_hidden_layers)
        ]

    def unused_fields(self) -> set[str]:
        return set() if self.use_sliding_window else {"sliding_window", "max_window_layers", "layer_types"}


class Qwen2Layers(QwenWindows, DecoderConfig):
    """configuration_qwen2.py / modeling_qwen2.py: q, k and v carry biases, o and the MLP none. The layers alone:
    Qwen2 adds head_dim (a key read with getattr) and tie_word_embeddings; Qwen2.5-VL's language model has neither."""

    architecture = "Qwen2"
    config_class = "Qwen2Config"
    default_model_class = "Qwen2ForCausalLM"
    heads_divide_hidden = False  # configuration_*.py floors hidden_size // num_attention_heads

    num_hidden_layers: LayerCount
    intermediate_size: Width
    use_sliding_window: Flag
    sliding_window: Width | None
    layer_types: list[Literal["full_attention", "sliding_attention"]] | None
    hidden_act: Name
    num_key_value_heads: HeadCount | None
    max_position_embeddings: PositionCount

    @property
    def attention_biased(self) -> bool:
        """q, k and v always carry biases (o never has one): Qwen2's configuration class has no attention_bias."""
        return True

    def build_layer(self, index: int, window: int | None) -> Layer:
        return self.layer(self.attention(window, o_bias=False), self.gated_ffn())


@family(
    "qwen2",
    transformers="Qwen2Config",
    architecture="Qwen2",
    model_class="Qwen2ForCausalLM",
    read_beyond={"head_dim": "no field of Qwen2Config: the modeling code reads it with getattr"},
)
class Qwen2Config(Qwen2Layers):
    """configuration_qwen2.py: Qwen2's layers, head_dim read with getattr, and the tying switch."""

    tie_word_embeddings: Flag
    head_dim: Width | None = None
    max_window_layers: LayerIndex


@family(
    "qwen3",
    transformers="Qwen3Config",
    architecture="Qwen3",
    model_class="Qwen3ForCausalLM",
    heads_divide_hidden=False,  # configuration_*.py floors hidden_size // num_attention_heads
)
class Qwen3Config(QwenWindows, DecoderConfig):
    """configuration_qwen3.py: Qwen2's windows; head_dim 128; attention_bias on q, k, v and o; RMSNorm on each query and key head."""

    num_hidden_layers: LayerCount
    intermediate_size: Width
    tie_word_embeddings: Flag
    attention_bias: Flag
    hidden_act: Name
    num_key_value_heads: HeadCount | None
    head_dim: Width | None
    max_position_embeddings: PositionCount
    use_sliding_window: Flag
    sliding_window: Width | None
    max_window_layers: LayerIndex
    layer_types: list[Literal["full_attention", "sliding_attention"]] | None

    def build_layer(self, index: int, window: int | None) -> Layer:
        return self.layer(self.attention(window, **self.per_head_norms()), self.gated_ffn())


class QwenMoeRule:
    """Qwen's sparse-layer rule (Qwen2-MoE, Qwen3-MoE, Qwen3-Next): layer i is MoE unless listed in
    mlp_only_layers, when there are experts and (i + 1) is a multiple of decoder_sparse_step."""

    num_experts: int
    decoder_sparse_step: int
    mlp_only_layers: list[int] | None  # Qwen3-VL-MoE's language model may leave it null

    def sparse(self, index: int) -> bool:
        step = self.decoder_sparse_step
        return self.num_experts > 0 and is_sparse(index, every=step, phase=step - 1, exclude=self.mlp_only_layers or [])


class _SharedExpertMoe:
    """Qwen's MoE block with a shared expert (Qwen2-MoE, Qwen3-Next, Qwen3.5-MoE): routed experts of
    moe_intermediate_size, and a shared expert of shared_expert_intermediate_size behind a one-unit sigmoid
    gate (no gate without a shared expert, unless the family always builds it)."""

    num_experts: int
    num_experts_per_tok: int
    moe_intermediate_size: int
    shared_expert_intermediate_size: int
    gate_without_shared_expert: ClassVar[bool] = False

    def moe(self) -> MoeFfn:
        width = self.shared_expert_intermediate_size
        return self.moe_ffn(  # type: ignore[attr-defined]
            self.num_experts,
            self.num_experts_per_tok,
            self.moe_intermediate_size,
            shared_width=width,
            shared_names=SHARED_EXPERT,
            shared_expert_gate=bool(width) or self.gate_without_shared_expert,
        )


@family(
    "qwen3_moe",
    transformers="Qwen3MoeConfig",
    architecture="Qwen3-MoE",
    model_class="Qwen3MoeForCausalLM",
    heads_divide_hidden=False,  # configuration_*.py floors hidden_size // num_attention_heads
    routing=("num_experts_per_tok", "num_experts"),
    read_beyond={"head_dim": "read by the modeling code with getattr"},
    own_defaults={
        "mlp_only_layers": "the record holds None; __post_init__ makes it [], the list transformers builds with"
    },
)
class Qwen3MoeConfig(QwenMoeRule, DecoderConfig):
    """configuration_qwen3_moe.py: Qwen3 attention (q/k norms; head_dim hidden / heads unless given);
    Qwen's sparse rule; routed experts only (no shared expert, whatever the config says: Qwen3-Coder
    has 0). With use_sliding_window every layer slides."""

    moe_names = QWEN_MOE

    num_hidden_layers: LayerCount
    intermediate_size: Width
    tie_word_embeddings: Flag
    attention_bias: Flag
    hidden_act: Name
    head_dim: Width | None = None
    num_key_value_heads: HeadCount | None
    max_position_embeddings: PositionCount
    use_sliding_window: Flag
    sliding_window: Width | None
    num_experts: ExpertCountOrZero
    num_experts_per_tok: ExpertCount
    moe_intermediate_size: Width
    decoder_sparse_step: LayerCount
    mlp_only_layers: list[LayerIndex] = Field(default_factory=list)

    def layer_windows(self) -> list[int | None]:
        return [self.sliding_window if self.use_sliding_window else None] * self.num_hidden_layers

    def unused_fields(self) -> set[str]:
        return set() if self.use_sliding_window else {"sliding_window"}

    def build_layer(self, index: int, window: int | None) -> Layer:
        ffn = (
            self.moe_ffn(self.num_experts, self.num_experts_per_tok, self.moe_intermediate_size)
            if self.sparse(index)
            else self.gated_ffn()
        )
        return self.layer(self.attention(window, **self.per_head_norms()), ffn)


@family(
    "kolibri1",
    transformers="Kolibri1Config",
    architecture="Kolibri-1",
    model_class="Kolibri1ForCausalLM",
    heads_divide_hidden=False,  # head_dim is a field; nothing checks hidden_size against the heads
    routing=("num_experts_per_tok", "num_experts"),
)
class Kolibri1Config(DecoderConfig):
    """configuration_kolibri1.py / modular_kolibri1.py (Kolibri-1): Exaone4Attention (no biases, an RMSNorm over
    each query and key head) within sliding_window on the layers layer_types marks sliding (default: every fifth layer
    full), and an MoE in every layer: a sigmoid router with an e_score_correction_bias buffer, routed experts of
    moe_intermediate_size and a shared MLP of shared_expert_intermediate_size (DeepseekV3MoE's shared_experts).
    Glm4's four norms per layer. Its checkpoints keep the names conversion_mapping.py's kolibri1 renames from:
    post_attn_norm and post_ffn_norm (post_self_attn_layernorm, post_mlp_layernorm) and moe.router.expert_bias.
    Kolibri1Config has no intermediate_size (no layer is dense)."""

    moe_names = names(router="mlp.gate", experts="mlp.experts.{e}")

    num_hidden_layers: LayerCount
    tie_word_embeddings: Flag
    hidden_act: Name
    num_key_value_heads: HeadCount
    head_dim: Width
    max_position_embeddings: PositionCount
    sliding_window: Width | None
    moe_intermediate_size: Width
    shared_expert_intermediate_size: Width
    num_experts_per_tok: ExpertCount
    num_experts: ExpertCount
    layer_types: list[Literal["full_attention", "sliding_attention"]] | None

    @model_validator(mode="after")
    def _check_window(self) -> Kolibri1Config:
        if self.sliding_window is None and "sliding_attention" in self.attention_kinds():
            raise ValueError("sliding_window is null, but a layer is sliding_attention (Kolibri1Config refuses it)")
        return self

    @derives("layer_types", "full_attention on every fifth layer ((i + 1) % 5 == 0), else sliding_attention")
    def attention_kinds(self) -> list[str]:
        """layer_types, or Kolibri1Config.__post_init__'s default: every fifth layer full."""
        if self.layer_types is not None:
            return list(self.layer_types)
        return ["full_attention" if (i + 1) % 5 == 0 else "sliding_attention" for i in range(self.num_hidden_layers)]

    def layer_windows(self) -> list[int | None]:
        return windows_of_layer_types(self.attention_kinds(), self.sliding_window)

    def build_layer(self, index: int, window: int | None) -> Layer:
        moe = self.moe_ffn(
            self.num_experts,
            self.num_experts_per_tok,
            self.moe_intermediate_size,
            shared_width=self.shared_expert_intermediate_size,
            shared_names=SHARED_EXPERTS,
        )
        norm = self.rms_norm()
        norms = tuple((name, norm) for name in ("input_layernorm", "post_attn_norm", "post_attention_layernorm"))
        return self.layer(self.attention(window, **self.per_head_norms()), moe, (*norms, ("post_ffn_norm", norm)))

    def checkpoint_extras(self) -> tuple[CheckpointExtra, ...]:
        every = tuple(range(self.num_hidden_layers))
        bias = correction_bias_extra(self.layer_name, every, self.num_experts, "moe.router", "expert_bias")
        return (*super().checkpoint_extras(), bias)


@family(
    "qwen2_moe",
    transformers="Qwen2MoeConfig",
    architecture="Qwen2-MoE",
    model_class="Qwen2MoeForCausalLM",
    routing=("num_experts_per_tok", "num_experts"),
    own_defaults={
        "mlp_only_layers": "the record holds None; __post_init__ makes it [], the list transformers builds with"
    },
)
class Qwen2MoeConfig(_SharedExpertMoe, QwenMoeRule, Qwen2Config):
    """configuration_qwen2_moe.py: Qwen2 attention (q/k/v biases from qkv_bias); Qwen's sparse rule with
    one shared expert behind a sigmoid gate. Windows: on the odd-numbered layers (i + 1 odd) below
    max_window_layers, with use_sliding_window."""

    moe_names = QWEN_MOE

    qkv_bias: Flag
    num_experts: ExpertCountOrZero
    num_experts_per_tok: ExpertCount
    moe_intermediate_size: Width
    shared_expert_intermediate_size: WidthOrZero
    decoder_sparse_step: LayerCount
    mlp_only_layers: list[LayerIndex] = Field(default_factory=list)

    def layer_windows(self) -> list[int | None]:
        window = self.sliding_window if self.use_sliding_window else None
        if self.layer_types is not None:
            return windows_of_layer_types(self.layer_types, window)
        return [window if (i + 1) % 2 and i < self.max_window_layers else None for i in range(self.num_hidden_layers)]

    def build_layer(self, index: int, window: int | None) -> Layer:
        bias = self.qkv_bias
        attention = self.attention(window, q_bias=bias, k_bias=bias, v_bias=bias, o_bias=False)
        return self.layer(attention, self.qwen_ffn(index))

    def qwen_ffn(self, index: int) -> DenseFfn | MoeFfn:
        return self.moe() if self.sparse(index) else self.gated_ffn()


class Qwen3NextLayers(DecoderConfig):
    """Qwen3-Next's hybrid layers (Qwen3-Next, Qwen3.5 and Qwen3.5-MoE): ``layer_types`` (default: every
    full_attention_interval-th layer full, the rest linear) picks gated full attention (q_proj doubled for the output
    gate, per-head q/k RMSNorms) or Gated DeltaNet linear attention. Whether a layer's FFN is a dense MLP or an MoE
    is each config's (``sparse``, ``moe``), with the fields its configuration class has."""

    heads_divide_hidden = False  # configuration_*.py floors hidden_size // num_attention_heads
    read_beyond = {"full_attention_interval": "__post_init__ reads it to build layer_types"}
    moe_names = QWEN_MOE

    num_hidden_layers: LayerCount
    tie_word_embeddings: Flag
    attention_bias: Flag
    hidden_act: Name
    num_key_value_heads: HeadCount | None
    head_dim: Width | None
    max_position_embeddings: PositionCount
    linear_conv_kernel_dim: Width
    linear_key_head_dim: Width
    linear_value_head_dim: Width
    linear_num_key_heads: HeadCount
    linear_num_value_heads: HeadCount
    layer_types: list[Literal["full_attention", "linear_attention"]] | None
    # Not a field of the configuration classes: read from the config's keys to build layer_types.
    full_attention_interval: LayerCount = 4
    deltanet_names: ClassVar[Names] = GATED_DELTANET

    def sparse(self, index: int) -> bool:  # pragma: no cover - each config says
        raise NotImplementedError

    def moe(self) -> MoeFfn:  # pragma: no cover - each config with experts builds its MoE
        raise NotImplementedError

    @property
    def has_experts(self) -> bool:
        """Whether the model has routed experts (num_experts, where the configuration class has it)."""
        return int(getattr(self, "num_experts", 0)) > 0

    def unused_fields(self) -> set[str]:
        return {"full_attention_interval"} if self.layer_types is not None else set()

    @derives("layer_types", "every full_attention_interval-th layer (default 4) full, the rest linear")
    def kinds(self) -> list[str]:
        if self.layer_types is not None:
            return list(self.layer_types)
        period = self.full_attention_interval
        return [
            "full_attention" if (i + 1) % period == 0 else "linear_attention" for i in range(self.num_hidden_layers)
        ]

    def build_layers(self) -> tuple[Layer, ...]:
        kinds = self.kinds()
        built: dict[tuple[str, bool], Layer] = {}
        layers = []
        for index, kind in enumerate(kinds):
            key = (kind, self.sparse(index))
            if key not in built:
                built[key] = self.next_layer(kind, key[1])
            layers.append(built[key])
        return tuple(layers)

    def next_layer(self, kind: str, sparse: bool) -> Layer:
        ffn = self.moe() if sparse else self.gated_ffn()
        if kind == "full_attention":
            return self.layer(self.attention(None, q_gate=True, **self.per_head_norms()), ffn)
        return self.layer(None, ffn, mixer=self.gated_deltanet())

    def gated_deltanet(self) -> Mixer:
        return gated_deltanet(
            self.hidden_size,
            self.linear_num_key_heads,
            self.linear_num_value_heads,
            self.linear_key_head_dim,
            self.linear_value_head_dim,
            self.linear_conv_kernel_dim,
            self.deltanet_names,
            state_dtype=self.recurrent_state_dtype(),
        )

    def recurrent_state_dtype(self) -> str | None:
        """The Gated DeltaNet state's element type where the config names one; Qwen3-Next's names none."""
        return None

    def checkpoint_extras(self) -> tuple[CheckpointExtra, ...]:
        return (self.mtp(1),)

    def mtp(self, count: int) -> CheckpointExtra:
        """The checkpoints store COUNT multi-token-prediction modules under ``mtp.``: each a full-attention
        decoder layer (MoE where the model has experts) at ``mtp.layers.{i}``, and once RMSNorms on the
        embedding and the hidden state, fc (2H → H) and a final norm."""
        hidden = self.hidden_size
        layer = self.next_layer("full_attention", self.has_experts)
        layer = Layer("mtp.layers.{i}", layer.attention, layer.ffn, layer.norms)
        tensors = (
            StoredTensor("mtp.pre_fc_norm_embedding.weight", (hidden,)),
            StoredTensor("mtp.pre_fc_norm_hidden.weight", (hidden,)),
            StoredTensor("mtp.fc.weight", (hidden, 2 * hidden)),
            StoredTensor("mtp.norm.weight", (hidden,)),
        )
        extra = mtp_extra(
            count,
            0,
            layer,
            tensors,
            f"{count} multi-token-prediction module(s) (a full-attention layer each; two norms, fc 2H → H and a "
            "final norm), used for speculative decoding, not by the causal LM",
        )
        return CheckpointExtra(extra.name, extra.reason, extra.tensors, (), extra.layers)


@family(
    "qwen3_next",
    transformers="Qwen3NextConfig",
    architecture="Qwen3-Next",
    model_class="Qwen3NextForCausalLM",
    routing=("num_experts_per_tok", "num_experts"),
    own_defaults={
        "mlp_only_layers": "the record holds None; __post_init__ makes it [], the list transformers builds with"
    },
)
class Qwen3NextConfig(_SharedExpertMoe, QwenMoeRule, Qwen3NextLayers):
    """configuration_qwen3_next.py / modeling_qwen3_next.py: the hybrid layers, their FFNs by Qwen's sparse rule,
    with a gated shared expert."""

    intermediate_size: Width
    num_experts: ExpertCountOrZero
    num_experts_per_tok: ExpertCount
    moe_intermediate_size: Width
    shared_expert_intermediate_size: WidthOrZero
    decoder_sparse_step: LayerCount
    mlp_only_layers: list[LayerIndex] = Field(default_factory=list)


# --- Qwen3.5: Qwen3-Next's hybrid layers with the Gated DeltaNet's input projections apart ---------

QWEN3_5_GATED_DELTANET = names(
    in_proj_qkv="linear_attn.in_proj_qkv",
    in_proj_z="linear_attn.in_proj_z",
    in_proj_b="linear_attn.in_proj_b",
    in_proj_a="linear_attn.in_proj_a",
    conv1d="linear_attn.conv1d",
    dt_bias="linear_attn.dt_bias",
    A_log="linear_attn.A_log",
    norm="linear_attn.norm",
    out_proj="linear_attn.out_proj",
)


if TYPE_CHECKING:  # a mixin: it relies on what its model class has
    _Qwen35MtpBase = Qwen3NextLayers
else:
    _Qwen35MtpBase = object


class _Qwen35Mtp(_Qwen35MtpBase):
    """Qwen3.5's checkpoints keep ``mtp_num_hidden_layers`` multi-token-prediction modules under ``mtp.``, a key
    transformers does not read (its causal LM skips ``^mtp.*``): each a full-attention layer, laid out as Qwen3-Next's.
    Their configs also name the Gated DeltaNet state's type, ``mamba_ssm_dtype`` (float32 in every published one),
    which vLLM keeps the recurrent state in (vllm/model_executor/models/config.py, Qwen3_5ForConditionalGenerationConfig:
    mamba_ssm_cache_dtype "auto" takes the config's mamba_ssm_dtype; mamba_utils.gated_delta_net_state_dtype: the
    convolution's window stays in the model's dtype)."""

    mtp_num_hidden_layers: int
    mtp_use_dedicated_embeddings: bool
    mamba_ssm_dtype: Literal["float32", "bfloat16", "float16"] | None

    def recurrent_state_dtype(self) -> str | None:
        return None if self.mamba_ssm_dtype is None else safetensors_dtype(self.mamba_ssm_dtype)

    def checkpoint_extras(self) -> tuple[CheckpointExtra, ...]:
        return (self.mtp(self.mtp_num_hidden_layers),) if self.mtp_num_hidden_layers else ()

    def notes(self) -> list[str]:
        if not self.mtp_use_dedicated_embeddings:
            return []
        return [
            "mtp_use_dedicated_embeddings is true: the multi-token-prediction module's own embedding is not in "
            "the layout ffncalc expects of the checkpoint (transformers does not build it)"
        ]


@family(
    "qwen3_5_text",
    transformers="Qwen3_5TextConfig",
    architecture="Qwen3.5",
    model_class="Qwen3_5ForCausalLM",
    read_beyond={
        **dict.fromkeys(
            ("mtp_num_hidden_layers", "mtp_use_dedicated_embeddings"),
            "the checkpoint's multi-token-prediction modules, no field of its configuration class",
        ),
        "mamba_ssm_dtype": "the recurrent state's type, no field of its configuration class: vLLM reads it with getattr",
    },
)
class Qwen35TextConfig(_Qwen35Mtp, Qwen3NextLayers):
    """configuration_qwen3_5.py / modeling_qwen3_5.py: Qwen3-Next's layers (gated full attention every
    full_attention_interval-th layer, Gated DeltaNet elsewhere) with in_proj_qkv, in_proj_z, in_proj_b and
    in_proj_a apart, and a dense MLP in every layer."""

    deltanet_names = QWEN3_5_GATED_DELTANET
    informational_fields = DecoderConfig.informational_fields | {
        "mtp_num_hidden_layers",
        "mtp_use_dedicated_embeddings",
    }

    intermediate_size: Width
    mtp_num_hidden_layers: LayerIndex = 0
    mtp_use_dedicated_embeddings: Flag = False
    mamba_ssm_dtype: Literal["float32", "bfloat16", "float16"] | None = None

    def sparse(self, index: int) -> bool:
        return False  # Qwen3_5TextConfig has none of Qwen3-Next's MoE fields: every layer has a dense MLP


@family(
    "qwen3_5_moe_text",
    transformers="Qwen3_5MoeTextConfig",
    architecture="Qwen3.5-MoE",
    model_class="Qwen3_5MoeForCausalLM",
    read_beyond={
        **dict.fromkeys(
            ("mtp_num_hidden_layers", "mtp_use_dedicated_embeddings"),
            "the checkpoint's multi-token-prediction modules, no field of its configuration class",
        ),
        "mamba_ssm_dtype": "the recurrent state's type, no field of its configuration class: vLLM reads it with getattr",
    },
)
class Qwen35MoeTextConfig(_Qwen35Mtp, _SharedExpertMoe, Qwen3NextLayers):
    """configuration_qwen3_5_moe.py / modeling_qwen3_5_moe.py: Qwen3.5's layers with an MoE block in every
    layer (routed experts, and a shared expert behind a sigmoid gate, whatever its width)."""

    deltanet_names = QWEN3_5_GATED_DELTANET
    informational_fields = Qwen35TextConfig.informational_fields

    num_experts: ExpertCountOrZero
    num_experts_per_tok: ExpertCount
    moe_intermediate_size: Width
    shared_expert_intermediate_size: WidthOrZero
    mtp_num_hidden_layers: LayerIndex = 0
    mtp_use_dedicated_embeddings: Flag = False
    mamba_ssm_dtype: Literal["float32", "bfloat16", "float16"] | None = None
    # Qwen3_5MoeTextConfig has neither a dense width nor a sparse-layer rule: every layer is MoE (sparse).

    gate_without_shared_expert: ClassVar[bool] = True

    def sparse(self, index: int) -> bool:
        return True


# --- Qwen-VL language models ---------------------------------------------------------------------


def base_model(spec: ModelSpec) -> ModelSpec:
    """The model without its head, named as transformers' base model saves it (no ``model.`` prefix)."""
    return relocate(replace(spec, lm_head=False), "", spec.names.lm_head)


if TYPE_CHECKING:  # a mixin: it relies on what its model class has
    _TextOfWrapperBase = HFConfig
else:
    _TextOfWrapperBase = object


class TextOfWrapper(_TextOfWrapperBase):
    """A language model that transformers builds with a head only inside its multimodal wrapper: alone, its
    model_type builds the base model (no head); the wrapper reads ``language_model_spec``."""

    def language_model_spec(self) -> ModelSpec:
        return super().to_spec()

    def to_spec(self) -> ModelSpec:
        return base_model(self.language_model_spec())


@family(
    "qwen3_vl_text",
    transformers="Qwen3VLTextConfig",
    architecture="Qwen3-VL",
    model_class="Qwen3VLTextModel",
    heads_divide_hidden=False,
)
class Qwen3VLTextConfig(TextOfWrapper, DecoderConfig):
    """configuration_qwen3_vl.py / modeling_qwen3_vl.py: Qwen3's attention (per-head q/k RMSNorms, head_dim
    128, attention_bias on q, k, v and o) without windows; no head of its own (Qwen3VLTextModel)."""

    num_hidden_layers: LayerCount
    intermediate_size: Width
    attention_bias: Flag
    hidden_act: Name
    num_key_value_heads: HeadCount | None
    head_dim: Width | None
    max_position_embeddings: PositionCount

    def build_layer(self, index: int, window: int | None) -> Layer:
        return self.layer(self.attention(window, **self.per_head_norms()), self.gated_ffn())


@family(
    "qwen3_vl_moe_text",
    transformers="Qwen3VLMoeTextConfig",
    architecture="Qwen3-VL-MoE",
    model_class="Qwen3VLMoeTextModel",
    heads_divide_hidden=False,
    routing=("num_experts_per_tok", "num_experts"),
)
class Qwen3VLMoeTextConfig(
    TextOfWrapper,
    QwenMoeRule,
    DecoderConfig,
):
    """configuration_qwen3_vl_moe.py: Qwen3-VL's attention (head_dim hidden / heads unless given) and Qwen's
    sparse rule; the routed experts stacked, gate and up fused (mlp.experts.gate_up_proj [E, 2I, H])."""

    moe_names = names(router="mlp.gate", experts="mlp.experts")
    expert_names = names(gate="gate_up_proj", up="gate_up_proj", down="down_proj", parameters=True)

    num_hidden_layers: LayerCount
    intermediate_size: Width
    tie_word_embeddings: Flag
    attention_bias: Flag
    hidden_act: Name
    head_dim: Width | None
    num_key_value_heads: HeadCount | None
    max_position_embeddings: PositionCount
    decoder_sparse_step: LayerCount
    moe_intermediate_size: Width
    num_experts_per_tok: ExpertCount
    num_experts: ExpertCountOrZero
    mlp_only_layers: list[LayerIndex] | None

    def sparse(self, index: int) -> bool:
        step = self.decoder_sparse_step
        return self.num_experts > 0 and is_sparse(index, every=step, phase=step - 1, exclude=self.mlp_only_layers or ())

    def build_layer(self, index: int, window: int | None) -> Layer:
        sparse = self.sparse(index)
        ffn = (
            self.moe_ffn(self.num_experts, self.num_experts_per_tok, self.moe_intermediate_size)
            if sparse
            else self.gated_ffn()
        )
        return self.layer(self.attention(window, **self.per_head_norms()), ffn)

    def language_model_spec(self) -> ModelSpec:
        # Published checkpoints store the experts [E, H, 2I] and [E, I, H]; transformers transposes them on load
        # (conversion_mapping.py, "qwen3_vl_moe"), and saves them [E, 2I, H] and [E, H, I].
        spec = super().language_model_spec()
        return replace(spec, transposed_on_load=("mlp.experts.gate_up_proj", "mlp.experts.down_proj"))


@family(
    "qwen2_5_vl_text",
    transformers="Qwen2_5_VLTextConfig",
    architecture="Qwen2.5-VL",
    model_class="Qwen2_5_VLTextModel",
    heads_divide_hidden=True,  # Qwen2_5_VLAttention raises when head_dim · heads != hidden_size
)
class Qwen25VLTextConfig(TextOfWrapper, Qwen2Layers):
    """configuration_qwen2_5_vl.py / modeling_qwen2_5_vl.py: Qwen2's layers (q, k, v biases; Qwen's windows);
    head_dim is always hidden / heads, which must divide it (the attention refuses otherwise)."""

    max_window_layers: LayerIndex | None
    # No head_dim (hidden_size // num_attention_heads) and no tie_word_embeddings: the wrapper's flag decides.

    def layer_windows(self) -> list[int | None]:
        window = self.sliding_window if self.use_sliding_window else None
        if self.layer_types is not None:
            return windows_of_layer_types(self.layer_types, window)
        start = self.max_window_layers
        if window is None or start is None:
            return [None] * self.num_hidden_layers
        return [window if i >= start else None for i in range(self.num_hidden_layers)]


@family(
    "qwen3_vl", transformers="Qwen3VLConfig", architecture="Qwen3-VL", model_class="Qwen3VLForConditionalGeneration"
)
class Qwen3VLConfig(MultimodalConfig):
    """configuration_qwen3_vl.py: a vision tower around a Qwen3-VL language model, stored under
    ``model.language_model.``; the top-level tie_word_embeddings (default false) decides tying."""

    text_model_type = "qwen3_vl_text"
    vision_model_type = "qwen3_vl_vision"
    language_model_prefix = "model.language_model."
    vision_prefix = "model.visual."
    lm_head_name = "lm_head"

    def wrapped_spec(self) -> ModelSpec:
        spec = getattr(self.text, "language_model_spec", self.text.to_spec)()
        spec = replace(spec, model_type=self.model_type, tie_word_embeddings=self.tied())
        return self.whole(relocate(spec, self.language_model_prefix, self.lm_head_name))

    def tied(self) -> bool:
        return self.tie_word_embeddings


#: conversion_mapping.py's "cosmos3_omni" renamings of the language model's attention (transformers 5.24), reverted:
#: the Diffusers-style names its checkpoints keep.
COSMOS3_OMNI_SAVED_MODULES = (
    (r"\.self_attn\.q_proj\.", ".self_attn.to_q."),
    (r"\.self_attn\.k_proj\.", ".self_attn.to_k."),
    (r"\.self_attn\.v_proj\.", ".self_attn.to_v."),
    (r"\.self_attn\.o_proj\.", ".self_attn.to_out."),
    (r"\.self_attn\.q_norm\.", ".self_attn.norm_q."),
    (r"\.self_attn\.k_norm\.", ".self_attn.norm_k."),
)


@family(
    "cosmos3_omni",
    transformers="Cosmos3OmniConfig",
    architecture="Cosmos3-Omni",
    model_class="Cosmos3OmniForConditionalGeneration",
)
class Cosmos3OmniConfig(Qwen3VLConfig):
    """configuration_cosmos3_omni.py / modular_cosmos3_omni.py: Cosmos3-Nano's reasoner is Qwen3-VL's wrapper as it
    is (Cosmos3OmniForConditionalGeneration derives from Qwen3VLForConditionalGeneration and adds no module): a Qwen3-VL
    tower (a tower config of another model_type is read as qwen3_vl_vision, as __post_init__ rewrites it) around a
    Qwen3-VL language model. Saved as the checkpoints name them (conversion_mapping.py's "cosmos3_omni", reverted):
    the language model and the tower at the top level, q/k/v/o as to_q, to_k, to_v, to_out and q_norm/k_norm as
    norm_q/norm_k. The unified checkpoints' generator, sound and action modules are dropped on load."""

    language_model_prefix = ""  # the checkpoints keep the language model and the tower at the top level
    vision_prefix = ""

    @model_validator(mode="before")
    @classmethod
    def _read_the_tower_as_qwen3_vl(cls, data: Any) -> Any:
        # Cosmos3OmniConfig.__post_init__: a vision_config of any other model_type (old checkpoints) is Qwen3-VL's
        vision = data.get("vision_config") if isinstance(data, dict) else None
        if isinstance(vision, dict) and vision.get("model_type") != "qwen3_vl_vision":
            return {**data, "vision_config": {**vision, "model_type": "qwen3_vl_vision"}}
        return data

    def wrapped_spec(self) -> ModelSpec:
        return saved_spec(super().wrapped_spec(), COSMOS3_OMNI_SAVED_MODULES)


@family(
    "qwen3_vl_moe",
    transformers="Qwen3VLMoeConfig",
    architecture="Qwen3-VL-MoE",
    model_class="Qwen3VLMoeForConditionalGeneration",
)
class Qwen3VLMoeConfig(Qwen3VLConfig):
    """configuration_qwen3_vl_moe.py: the same wrapper around a Qwen3-VL-MoE language model."""

    text_model_type = "qwen3_vl_moe_text"
    vision_model_type = "qwen3_vl_moe_vision"


@family("qwen3_5", transformers="Qwen3_5Config", architecture="Qwen3.5", model_class="Qwen3_5ForConditionalGeneration")
class Qwen35Config(Qwen3VLConfig):
    """configuration_qwen3_5.py: a vision tower around a Qwen3.5 language model, laid out as Qwen3-VL's
    (``model.language_model.``; the top-level tie_word_embeddings, default false, decides tying)."""

    text_only_classes = frozenset({"Qwen3_5ForCausalLM"})
    text_model_type = "qwen3_5_text"
    vision_model_type = "qwen3_5_vision"


@family(
    "qwen3_5_moe",
    transformers="Qwen3_5MoeConfig",
    architecture="Qwen3.5-MoE",
    model_class="Qwen3_5MoeForConditionalGeneration",
)
class Qwen35MoeConfig(Qwen35Config):
    """configuration_qwen3_5_moe.py: the same wrapper around a Qwen3.5-MoE language model."""

    text_only_classes = frozenset({"Qwen3_5MoeForCausalLM"})
    text_model_type = "qwen3_5_moe_text"
    vision_model_type = "qwen3_5_moe_vision"


@family(
    "qwen2_5_vl",
    transformers="Qwen2_5_VLConfig",
    architecture="Qwen2.5-VL",
    model_class="Qwen2_5_VLForConditionalGeneration",
)
class Qwen25VLConfig(Qwen3VLConfig):
    """configuration_qwen2_5_vl.py: Qwen2.5-VL's language model, whose fields a config may keep at the top
    level: without text_config, transformers takes the text model's keys from there. The language model's
    tie_word_embeddings, when true, ties the wrapper too (a backward-compatibility rule of the wrapper)."""

    text_model_type = "qwen2_5_vl_text"
    vision_model_type = "qwen2_5_vl_vision"
    language_model_prefix = (
        "model."  # its checkpoints predate the model.language_model. layout, as transformers saves them
    )
    vision_prefix = "visual."

    @model_validator(mode="before")
    @classmethod
    def _flat_text_config(cls, raw: Any) -> Any:
        """Without text_config, the text model's keys are the config's own (Qwen2_5_VLConfig.__post_init__)."""
        if isinstance(raw, dict) and raw.get("text_config") is None:
            keys = set(Qwen25VLTextConfig.model_fields) - METADATA_FIELDS - {"model_type"}
            return {**raw, "text_config": {key: value for key, value in raw.items() if key in keys}}
        return raw

    def tied(self) -> bool:
        return self.tie_word_embeddings or (self.text_config or {}).get("tie_word_embeddings") is True


@family("qwen2_vl_text", transformers="Qwen2VLTextConfig", architecture="Qwen2-VL", model_class="Qwen2VLTextModel")
class Qwen2VLTextConfig(Qwen25VLTextConfig):
    """configuration_qwen2_vl.py (Qwen2VLTextConfig): the fields and defaults of Qwen2.5-VL's language model."""


@family(
    "qwen2_vl", transformers="Qwen2VLConfig", architecture="Qwen2-VL", model_class="Qwen2VLForConditionalGeneration"
)
class Qwen2VLConfig(Qwen25VLConfig):
    """configuration_qwen2_vl.py: Qwen2.5-VL's wrapper (a flat config's top-level keys are the language model's;
    its tie_word_embeddings, when true, ties the wrapper) around Qwen2-VL's tower and merger."""

    text_model_type = "qwen2_vl_text"
    vision_model_type = "qwen2_vl_vision"
