"""YituTech's ConvBERT: ELECTRA's embeddings and generator head around BERT's post-LN layers, whose self-attention
gives half of each layer's width to span-based dynamic convolution (fewer heads, head_ratio, each half as wide)."""

from __future__ import annotations

from pydantic import model_validator

from ..schema import Flag, HeadCount, Name, Width
from ..spec import Attention, Component, DenseFfn, Layer, Names, Norms, Parameter, Projection, names
from .bert import BERT_ATTENTION, BERT_CROSS_ATTENTION, ELECTRA_HEADS, ElectraConfig
from .registry import family

# ConvBERT's classes: ELECTRA's (generator head, —, classifier), with neither a discriminator nor a causal LM.
CONVBERT_HEADS = {name: heads for name, heads in ELECTRA_HEADS.items() if name not in ("ForPreTraining", "ForCausalLM")}


@family(
    "convbert",
    transformers="ConvBertConfig",
    architecture="ConvBERT",
    model_class="ConvBertForMaskedLM",
    read_beyond={
        "num_labels": "ConvBertSequenceSummary reads them with getattr / hasattr: ConvBertConfig declares none of them",
        "summary_type": "ConvBertSequenceSummary reads them with getattr / hasattr: ConvBertConfig declares none of them",
        "summary_use_proj": "ConvBertSequenceSummary reads them with getattr / hasattr: ConvBertConfig declares none of them",
        "summary_proj_to_labels": "ConvBertSequenceSummary reads them with getattr / hasattr: ConvBertConfig declares none of them",
    },
)
class ConvBertConfig(ElectraConfig):
    """configuration_convbert.py / modeling_convbert.py (YituTech/conv-bert-base): ELECTRA's embeddings (word,
    position and token-type tables and a LayerNorm, embedding_size wide; embeddings_project to hidden_size when the
    two differ) under convbert.*, no pooler, and BERT's post-LN layers, whose self-attention keeps
    h = num_attention_heads // head_ratio heads (1 when that is 0) of d = hidden_size / h / 2: query, key and value
    (hidden → h · d, biased) attend as usual; beside them a separable convolution of the input (key_conv_attn_layer:
    depthwise, conv_kernel_size wide, then pointwise to h · d, one bias) is multiplied by the query, and
    conv_kernel_layer (h · d → h · conv_kernel_size, biased) turns it into a softmaxed kernel for each token and
    head, which weighs conv_kernel_size neighbouring rows of conv_out_layer (hidden → h · d, biased); the two halves,
    concatenated, pass through attention.output.dense (hidden → hidden). The MLP's two linears are block-diagonal when
    num_groups > 1 (GroupedLinearLayer: weight [groups, in / groups, out / groups], bias [out]). A decoder with
    add_cross_attention has a second such attention (crossattention). Heads: ELECTRA's generator (generator_predictions,
    generator_lm_head tied to the word table, with its bias) and classifiers; sequence_summary projects only when the
    config sets summary_use_proj (ConvBertConfig declares none of the summary keys)."""

    class_prefix = "ConvBert"
    base_model_prefix = "convbert"
    classes = frozenset(CONVBERT_HEADS)
    head_table = CONVBERT_HEADS

    pad_token_id: int | None
    head_ratio: HeadCount
    conv_kernel_size: Width
    num_groups: Width
    summary_type: Name = "last"
    summary_use_proj: Flag = False

    @model_validator(mode="after")
    def _check_heads(self) -> ConvBertConfig:  # replaces BERT's: the heads that divide hidden_size are h, not all
        hidden, heads = self.hidden_size, self.attention_heads()
        if hidden % heads:
            raise ValueError(
                f"hidden_size ({hidden}) is not a multiple of num_attention_heads // head_ratio ({heads}); "
                "transformers refuses it"
            )
        if (hidden // heads) % 2:
            raise ValueError(
                f"hidden_size / (num_attention_heads // head_ratio) ({hidden // heads}) is odd: each head gives half "
                "its width to the convolution, and transformers' forward fails on an odd one"
            )
        for field in ("hidden_size", "intermediate_size"):
            if getattr(self, field) % self.num_groups:
                raise ValueError(
                    f"num_groups ({self.num_groups}) does not divide {field} ({getattr(self, field)}): "
                    "the grouped linear layers cannot split it"
                )
        return self

    def attention_heads(self) -> int:
        """h = num_attention_heads // head_ratio, or 1 when that is 0 (ConvBertSelfAttention)."""
        return max(self.num_attention_heads // self.head_ratio, 1)

    def convolution_flops(self) -> int:
        """The dynamic convolution, a matmul with no weight: each of h · d channels sums conv_kernel_size rows,
        2 · h · d · conv_kernel_size per token."""
        width = self.hidden_size // 2  # h · d
        return 2 * width * self.conv_kernel_size

    def convolution(self, module: str, component: Component) -> tuple[tuple[Parameter, ...], tuple[Projection, ...]]:
        """The attention's convolution half under MODULE: the separable convolution's depthwise [hidden, 1, kernel]
        and pointwise [h · d, hidden, 1] weights (each a token multiplies by) and its bias [h · d, 1];
        conv_kernel_layer and conv_out_layer."""
        hidden, kernel, width = self.hidden_size, self.conv_kernel_size, self.hidden_size // 2
        separable = f"{module}.key_conv_attn_layer"
        parameters = (
            Parameter(component, "key_conv", f"{separable}.depthwise.weight", (hidden, 1, kernel), matmul=True),
            Parameter(component, "key_conv", f"{separable}.pointwise.weight", (width, hidden, 1), matmul=True),
            Parameter(component, "key_conv", f"{separable}.bias", (width, 1)),
        )
        heads = self.attention_heads()
        projections = (
            Projection("conv_kernel", f"{module}.conv_kernel_layer", width, heads * kernel, True, component),
            Projection("conv_out", f"{module}.conv_out_layer", hidden, width, True, component),
        )
        return parameters, projections

    def attention(self, stored: Names) -> Attention:
        """h heads of d for the attention half; attention.output.dense reads both halves (hidden)."""
        hidden, heads = self.hidden_size, self.attention_heads()
        head_dim = hidden // heads // 2
        return Attention(hidden, heads, heads, head_dim, head_dim, stored, True, True, True, True, o_input=hidden)

    def encoder_layer(self) -> Layer:
        hidden, groups = self.hidden_size, self.num_groups
        mlp = names(
            transposed=("up", "down") if groups > 1 else (),
            groups=(("up", groups), ("down", groups)),
            up="intermediate.dense",
            down="output.dense",
        )
        ffn = DenseFfn(hidden, self.intermediate_size, False, self.hidden_act, mlp, bias=True)
        norms: Norms = ((self.attention_norm, self.layer_norm()), (self.ffn_norm, self.layer_norm()))
        parameters, projections = self.convolution("attention.self", "attention")
        cross = None
        if self.cross_attends():
            cross = self.attention(BERT_CROSS_ATTENTION)
            norms += ((self.cross_attention_norm, self.layer_norm()),)
            cross_parameters, cross_projections = self.convolution("crossattention.self", "cross_attention")
            parameters += cross_parameters
            projections += cross_projections
        return Layer(
            f"{self.root}encoder.layer.{{i}}",
            self.attention(BERT_ATTENTION),
            ffn,
            norms,
            cross_attention=cross,
            stack="encoder",
            parameters=parameters,
            projections=projections,
            other_flops=self.convolution_flops() * (2 if cross is not None else 1),
        )
