"""I-BERT (integer-only BERT): RoBERTa's model built from quantization-aware modules, whose integer copies and
scaling factors are persistent buffers that every checkpoint stores beside the parameters."""

from __future__ import annotations

from ..schema import Flag, Name
from ..spec import CheckpointExtra, ModelSpec, StoredTensor
from ..values import replace
from .bert import ROBERTA_HEADS, RobertaLayout
from .registry import family


def quant_act(module: str) -> list[StoredTensor]:
    """QuantAct: the activation range seen (x_min, x_max) and its scaling factor, one value each."""
    return [StoredTensor(f"{module}.{name}", (1,)) for name in ("x_min", "x_max", "act_scaling_factor")]


def quant_linear(module: str, out_features: int, in_features: int) -> list[StoredTensor]:
    """QuantLinear (with its bias): the weight's and the bias's integer copies, a scaling factor per output."""
    return [
        StoredTensor(f"{module}.weight_integer", (out_features, in_features)),
        StoredTensor(f"{module}.fc_scaling_factor", (out_features,)),
        StoredTensor(f"{module}.bias_integer", (out_features,)),
    ]


def int_layer_norm(module: str) -> list[StoredTensor]:
    """IntLayerNorm: its shift, and the QuantAct of its output."""
    return [StoredTensor(f"{module}.shift", (1,)), *quant_act(f"{module}.activation")]


def quant_embedding(module: str, rows: int, dim: int) -> list[StoredTensor]:
    """QuantEmbedding: the table's scaling factor and its integer copy."""
    return [
        StoredTensor(f"{module}.weight_scaling_factor", (1,)),
        StoredTensor(f"{module}.weight_integer", (rows, dim)),
    ]


@family("ibert", transformers="IBertConfig", architecture="I-BERT", model_class="IBertForMaskedLM")
class IBertConfig(RobertaLayout):
    """configuration_ibert.py / modeling_ibert.py, quant_modules.py (kssteven/ibert-roberta-*).

    RoBERTa's parameters under ibert.*, module for module (no decoder, no causal LM): the tables are QuantEmbeddings,
    the layers' linear maps QuantLinears, their LayerNorms IntLayerNorms, and QuantActs watch the activations. Every
    one of them keeps buffers whatever quant_mode and force_dequant say, all persistent: an integer copy of each
    quantized weight (as large as the weight) and bias, a scaling factor per output of each linear map, one for each
    table, and each QuantAct's range and scale. They are listed as the checkpoint's buffers; the pooler and the heads
    are plain modules, as RoBERTa's.
    """

    class_prefix = "IBert"
    base_model_prefix = "ibert"
    classes = frozenset(ROBERTA_HEADS) - {"ForCausalLM"}

    quant_mode: Flag
    force_dequant: Name

    def unused_fields(self) -> set[str]:
        # neither changes a shape: the quantization modules build the same buffers either way
        return super().unused_fields() | {"quant_mode", "force_dequant"}

    def quantization_buffers(self) -> tuple[CheckpointExtra, ...]:
        """The embeddings' buffers, once, and each layer's."""
        hidden, ffn, root = self.hidden_size, self.intermediate_size, self.root
        embeddings = f"{root}embeddings"
        model = [
            *quant_embedding(f"{embeddings}.word_embeddings", self.vocab_size, hidden),
            *quant_embedding(f"{embeddings}.token_type_embeddings", self.type_vocab_size, hidden),
            *quant_embedding(f"{embeddings}.position_embeddings", self.max_position_embeddings, hidden),
            *quant_act(f"{embeddings}.embeddings_act1"),
            *quant_act(f"{embeddings}.embeddings_act2"),
            *int_layer_norm(f"{embeddings}.LayerNorm"),
            *quant_act(f"{embeddings}.output_activation"),
        ]
        layer = f"{root}encoder.layer.{{i}}"
        attention, output = f"{layer}.attention.self", f"{layer}.attention.output"
        per_layer = [
            *(t for part in ("query", "key", "value") for t in quant_linear(f"{attention}.{part}", hidden, hidden)),
            *(t for act in ("query", "key", "value", "output") for t in quant_act(f"{attention}.{act}_activation")),
            *quant_act(f"{attention}.softmax.act"),
            *quant_linear(f"{output}.dense", hidden, hidden),
            *quant_act(f"{output}.ln_input_act"),
            *int_layer_norm(f"{output}.LayerNorm"),
            *quant_act(f"{output}.output_activation"),
            *quant_linear(f"{layer}.intermediate.dense", ffn, hidden),
            *quant_act(f"{layer}.intermediate.output_activation"),
            *quant_linear(f"{layer}.output.dense", hidden, ffn),
            *quant_act(f"{layer}.output.ln_input_act"),
            *int_layer_norm(f"{layer}.output.LayerNorm"),
            *quant_act(f"{layer}.output.output_activation"),
            *quant_act(f"{layer}.pre_intermediate_act"),
            *quant_act(f"{layer}.pre_output_act"),
        ]
        reason = "integer copies and scaling factors of I-BERT's quantization modules: persistent buffers"
        return (
            CheckpointExtra("embeddings' quantization buffers", reason, tuple(model), buffer=True),
            CheckpointExtra(
                "layers' quantization buffers",
                reason,
                tuple(per_layer),
                per_layer=tuple(range(self.num_hidden_layers)),
                buffer=True,
            ),
        )

    def to_spec(self) -> ModelSpec:
        spec = super().to_spec()
        return replace(spec, checkpoint_extras=spec.checkpoint_extras + self.quantization_buffers())
