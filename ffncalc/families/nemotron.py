"""NVIDIA's Nemotron: the dense Nemotron (Nemotron-4, Minitron: LayerNorm1P, a squared-ReLU MLP) and Nemotron-H,
a hybrid stack of Mamba-2, attention, MLP and MoE layers (with a latent MoE in Nemotron 3)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import AliasChoices, Field, model_validator

from ..schema import ExpertCount, Flag, HeadCount, LayerCount, LayerIndex, Name, PositionCount, Width, derives
from ..spec import CheckpointExtra, DenseFfn, Layer, ModelNames, ModelSpec, Norm, StoredTensor, names
from ..values import replace
from .base import DecoderConfig
from .blocks import required_field
from .mixers import mamba2, mamba2_names
from .registry import family

NemotronBlock = Literal["linear_attention", "full_attention", "mlp", "moe"]
PATTERN_LETTERS: dict[str, NemotronBlock] = {"M": "linear_attention", "*": "full_attention", "-": "mlp", "E": "moe"}
NEMOTRON_ATTENTION = names(q="mixer.q_proj", k="mixer.k_proj", v="mixer.v_proj", o="mixer.o_proj")
NEMOTRON_MLP = names(up="mixer.up_proj", down="mixer.down_proj")
NEMOTRON_MAMBA = mamba2_names("mixer.")


@family(
    "nemotron",
    transformers="NemotronConfig",
    architecture="Nemotron",
    model_class="NemotronForCausalLM",
    heads_divide_hidden=False,  # configuration_*.py floors hidden_size // num_attention_heads
)
class NemotronConfig(DecoderConfig):
    """configuration_nemotron.py / modeling_nemotron.py: Llama's attention (attention_bias on q, k, v, o); a
    plain up/down MLP (squared ReLU by default, mlp_bias); LayerNorm1P (a LayerNorm with weight and bias,
    scaling by 1 + weight) before attention, before the MLP and at the end.

    num_key_value_heads has no default (None), and the attention cannot be built without it:
    transformers 5.24 refuses a config without it.
    """

    num_hidden_layers: LayerCount
    intermediate_size: Width
    tie_word_embeddings: Flag
    mlp_bias: Flag
    attention_bias: Flag
    num_key_value_heads: HeadCount | None
    head_dim: Width | None
    hidden_act: Name
    max_position_embeddings: PositionCount
    _check_kv_heads = required_field("num_key_value_heads", "NemotronConfig")

    def layer_norm(self) -> Norm:
        return Norm("layernorm", self.hidden_size, bias=True)

    def build_layer(self, index: int, window: int | None) -> Layer:
        mlp = DenseFfn(self.hidden_size, self.intermediate_size, False, self.hidden_act, self.mlp_names, self.mlp_bias)
        norm = self.layer_norm()
        return self.layer(self.attention(window), mlp, (("input_layernorm", norm), ("post_attention_layernorm", norm)))

    def to_spec(self) -> ModelSpec:
        return replace(super().to_spec(), final_norm=self.layer_norm())


@family(
    "nemotron_h",
    transformers="NemotronHConfig",
    architecture="Nemotron-H",
    model_class="NemotronHForCausalLM",
    heads_divide_hidden=False,  # configuration_*.py floors hidden_size // num_attention_heads
    routing=("num_experts_per_tok", "n_routed_experts"),
    read_beyond={
        "hybrid_override_pattern": "the older pattern of layer kinds, which __post_init__ still reads",
        "num_hidden_layers": "deprecated in NemotronHConfig (no field): the block types decide the count",
    },
    other_names=dict.fromkeys(
        ("n_groups", "conv_kernel", "use_conv_bias"),
        "also read under the mamba_ name Nemotron-H's configs give it (no attribute_map entry)",
    ),
)
class NemotronHConfig(DecoderConfig):
    """configuration_nemotron_h.py / modeling_nemotron_h.py.

    ``layers_block_type`` (or the older ``hybrid_override_pattern``: M Mamba-2, * attention, - MLP,
    E MoE) names each layer's one block, behind one RMSNorm. MLPs and experts are plain (ReLU²)
    up/down; the MoE has one shared expert of moe_shared_expert_intermediate_size, and with
    moe_latent_size its routed experts run at that width between fc1_latent_proj and
    fc2_latent_proj. Attention has no biases; Mamba's projections follow use_bias.
    """

    layer_name = "backbone.layers.{i}"
    attention_names = NEMOTRON_ATTENTION
    mlp_names = NEMOTRON_MLP
    moe_names = names(
        router="mixer.gate",
        experts="mixer.experts.{e}",
        latent_in="mixer.fc1_latent_proj",
        latent_out="mixer.fc2_latent_proj",
    )
    expert_names = names(up="up_proj", down="down_proj")
    shared_names = names(up="mixer.shared_experts.up_proj", down="mixer.shared_experts.down_proj")
    model_names = ModelNames("backbone.embeddings", "backbone.norm_f", base_model_prefix="backbone")

    intermediate_size: Width
    tie_word_embeddings: Flag
    layers_block_type: Annotated[list[NemotronBlock] | None, Field(max_length=1 << 14)]
    hybrid_override_pattern: Name | None = Field(None, max_length=1 << 14)  # the older spelling
    num_hidden_layers: LayerCount | None = None  # deprecated: the block types decide
    num_key_value_heads: HeadCount | None
    head_dim: Width | None
    max_position_embeddings: PositionCount
    mlp_hidden_act: Name
    mlp_bias: Flag
    ssm_state_size: Width
    mamba_num_heads: HeadCount
    mamba_head_dim: Width
    n_groups: HeadCount = Field(validation_alias=AliasChoices("n_groups", "mamba_n_groups"))
    conv_kernel: Width = Field(validation_alias=AliasChoices("conv_kernel", "mamba_d_conv"))
    use_conv_bias: Flag = Field(validation_alias=AliasChoices("use_conv_bias", "mamba_conv_bias"))
    use_bias: Flag
    n_routed_experts: ExpertCount
    moe_intermediate_size: Width
    moe_shared_expert_intermediate_size: Width
    moe_latent_size: Width | None
    num_experts_per_tok: ExpertCount
    num_nextn_predict_layers: LayerIndex
    mtp_layers_block_type: Annotated[list[NemotronBlock] | None, Field(max_length=64)]

    @property
    def activation(self) -> str:
        """relu2: NemotronHConfig has no hidden_act (mlp_hidden_act names the MLP's, which the blocks pass)."""
        return "relu2"

    @model_validator(mode="before")
    @classmethod
    def _pattern(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("hybrid_override_pattern"), str):
            unknown = sorted(set(data["hybrid_override_pattern"]) - set(PATTERN_LETTERS))
            if unknown:
                raise ValueError(f"hybrid_override_pattern has unknown block letters {unknown}; known: M * - E")
        return data

    @model_validator(mode="after")
    def _check_blocks(self) -> NemotronHConfig:
        if not self.blocks():
            raise ValueError("layers_block_type: the model has no layers (an empty list or pattern)")
        return self

    @property
    def ties_embeddings(self) -> bool:
        """Never: NemotronHForCausalLM declares no tied weights (_tied_weights_keys = {}, transformers 5.24), so its
        head keeps weights of its own whatever tie_word_embeddings says."""
        return False

    @property
    def layer_count(self) -> int:
        """The block types decide (num_hidden_layers is deprecated in NemotronHConfig)."""
        return len(self.blocks())

    @derives("layers_block_type", "hybrid_override_pattern if given, else [linear_attention, moe, full_attention, mlp]")
    def blocks(self) -> list[NemotronBlock]:
        """Each layer's block: layers_block_type, else the older pattern, else transformers' default four."""
        if self.layers_block_type is not None:
            return list(self.layers_block_type)
        if self.hybrid_override_pattern is not None:
            return [PATTERN_LETTERS[letter] for letter in self.hybrid_override_pattern]
        return ["linear_attention", "moe", "full_attention", "mlp"]

    def superseded_fields(self) -> dict[str, str]:
        """num_hidden_layers is deprecated in NemotronHConfig: the block types decide the count."""
        decider = "hybrid_override_pattern" if self.hybrid_override_pattern is not None else "layers_block_type"
        return {"num_hidden_layers": decider}

    def unused_fields(self) -> set[str]:
        blocks = set(self.blocks())
        unused = set()
        unused.add("hybrid_override_pattern")  # reported through layers_block_type when it is the default
        unused.add("tie_word_embeddings")  # NemotronHForCausalLM ties nothing
        if self.hybrid_override_pattern is not None:
            unused.add("layers_block_type")
        if not self.num_nextn_predict_layers:
            unused.add("mtp_layers_block_type")
        if "moe" not in blocks:
            unused |= {
                "n_routed_experts",
                "moe_intermediate_size",
                "moe_shared_expert_intermediate_size",
                "moe_latent_size",
                "num_experts_per_tok",
            }
        if "linear_attention" not in blocks:
            unused |= {
                "ssm_state_size",
                "mamba_num_heads",
                "mamba_head_dim",
                "n_groups",
                "conv_kernel",
                "use_conv_bias",
                "use_bias",
            }
        if "full_attention" not in blocks:
            unused |= {"num_attention_heads", "num_key_value_heads", "head_dim"}
        if "mlp" not in blocks:
            unused.add("intermediate_size")
        return unused

    def mlp(self, width: int, names_=None) -> DenseFfn:
        return DenseFfn(self.hidden_size, width, False, self.mlp_hidden_act, names_ or self.mlp_names, self.mlp_bias)

    def block_layer(self, block: NemotronBlock, name: str) -> Layer:
        norms = (("norm", self.rms_norm()),)
        if block == "linear_attention":
            mixer = mamba2(
                self.hidden_size,
                self.mamba_num_heads,
                self.mamba_head_dim,
                self.n_groups,
                self.ssm_state_size,
                self.conv_kernel,
                NEMOTRON_MAMBA,
                proj_bias=self.use_bias,
                conv_bias=self.use_conv_bias,
            )
            return Layer(name, None, None, norms, mixer=mixer)
        if block == "full_attention":
            return Layer(name, self.attention(None), None, norms)
        if block == "mlp":
            return Layer(name, None, self.mlp(self.intermediate_size), norms)
        moe = self.moe_ffn(
            self.n_routed_experts,
            self.num_experts_per_tok,
            self.moe_intermediate_size,
            shared_width=self.moe_shared_expert_intermediate_size,
            shared_names=self.shared_names,
            expert_bias=self.mlp_bias,
            shared_bias=self.mlp_bias,
            latent_size=self.moe_latent_size,
            gated=False,
            activation=self.mlp_hidden_act,
        )
        return Layer(name, None, moe, norms)

    def build_layers(self) -> tuple[Layer, ...]:
        built = {block: self.block_layer(block, self.layer_name) for block in set(self.blocks())}
        return tuple(built[block] for block in self.blocks())

    def checkpoint_extras(self) -> tuple[CheckpointExtra, ...]:
        moe_layers = tuple(i for i, block in enumerate(self.blocks()) if block == "moe")
        if not moe_layers:
            return ()
        return (
            CheckpointExtra(
                name="router e_score_correction_bias",
                reason=f"{len(moe_layers)} MoE layers × {self.n_routed_experts} experts; a buffer set by load balancing, not trained",
                tensors=(
                    StoredTensor(self.layer_name + ".mixer.gate.e_score_correction_bias", (self.n_routed_experts,)),
                ),
                per_layer=moe_layers,
                buffer=True,
            ),
        )
