"""FNet (google/fnet-base): BERT's embeddings, post-LN layers and heads, with a Fourier transform in place of
attention."""

from __future__ import annotations

from pydantic import model_validator

from ..schema import Flag, LayerCount, Name, PositionCount, Width
from ..spec import DenseFfn, Extra, Layer, LearnedTensor, Linear, Mixer, ModelNames, ModelSpec, Norm, Table
from .bert import BERT_MLP, EncoderClasses
from .registry import family

# FNet's classes: (pooler, masked-LM head, next-sentence head, classifier outputs). FNetModel always builds its pooler
# (add_pooling_layer defaults to True and no class passes False), so every class holds it.
FNET_HEADS: dict[str, tuple[bool, bool, bool, int | str | None]] = {
    "Model": (True, False, False, None),
    "ForPreTraining": (True, True, True, None),
    "ForMaskedLM": (True, True, False, None),
    "ForNextSentencePrediction": (True, False, True, None),
    "ForSequenceClassification": (True, False, False, "labels"),
    "ForMultipleChoice": (True, False, False, 1),
    "ForTokenClassification": (True, False, False, "labels"),
    "ForQuestionAnswering": (True, False, False, "labels"),
}
FOURIER_NOT_COUNTED = (
    "FNet's token mixing: a 2-D FFT over the sequence and the hidden width (torch.fft.fftn), no matrix "
    "multiplication, so not counted (as torch's FlopCounterMode counts it); its cost grows as log n per token"
)


@family("fnet", transformers="FNetConfig", architecture="FNet", model_class="FNetForPreTraining")
class FNetConfig(EncoderClasses):
    """configuration_fnet.py / modeling_fnet.py (Google's FNet, google/fnet-base): BERT's embeddings under fnet.*
    (word, position and type_vocab_size token-type tables, a LayerNorm) followed by a projection (dense hidden →
    hidden, biased); post-LN layers (encoder.layer.{i}) whose token mixing is the real part of a 2-D Fourier
    transform over the sequence and hidden dimensions, without weights, then its LayerNorm (fourier.output.LayerNorm),
    and BERT's MLP (intermediate.dense, output.dense, biased) and its LayerNorm; no final norm. Every class holds the
    pooler (fnet.pooler.dense); the masked LM adds BERT's cls.predictions (a dense transform and LayerNorm, a decoder
    tied to the word table, its bias); classifiers num_labels wide (one output for multiple choice).

    With use_tpu_fourier_optimizations the transform is a product with two DFT matrices (buffers) when SciPy is
    installed and max_position_embeddings ≤ 4,096, else the same FFT: ffncalc counts the FFT path only."""

    class_prefix = "FNet"
    base_model_prefix = "fnet"
    classes = frozenset(FNET_HEADS)

    vocab_size: Width
    hidden_size: Width
    num_hidden_layers: LayerCount
    intermediate_size: Width
    hidden_act: Name
    max_position_embeddings: PositionCount
    type_vocab_size: Width
    use_tpu_fourier_optimizations: Flag
    tie_word_embeddings: Flag

    @model_validator(mode="after")
    def _check_fourier_path(self) -> FNetConfig:
        if self.use_tpu_fourier_optimizations:
            # FNetBasicFourierTransform: DFT matrices (complex matmuls) only when SciPy is importable, so what runs
            # depends on the machine, not the config
            raise ValueError(
                "use_tpu_fourier_optimizations: transformers multiplies by DFT matrices or runs the FFT depending on "
                "whether SciPy is installed; ffncalc counts FNet with the FFT (use_tpu_fourier_optimizations false)"
            )
        return self

    def layer_norm(self) -> Norm:
        return Norm("layernorm", self.hidden_size, bias=True)

    def linear(self, name: str, in_features: int, out_features: int) -> Extra:
        return Extra("other", name, Linear(in_features, out_features, bias=True), "not_generating")

    def encoder_layer(self) -> Layer:
        fourier = Mixer("fourier", (), not_counted=FOURIER_NOT_COUNTED)
        ffn = DenseFfn(self.hidden_size, self.intermediate_size, False, self.hidden_act, BERT_MLP, bias=True)
        norms = (("fourier.output.LayerNorm", self.layer_norm()), ("output.LayerNorm", self.layer_norm()))
        return Layer(f"{self.root}encoder.layer.{{i}}", None, ffn, norms, mixer=fourier, stack="encoder")

    def extras(self, mlm: bool) -> list[Extra]:
        """The token-type table, the embeddings' LayerNorm and projection; the pooler and the class's heads."""
        root, hidden = self.root, self.hidden_size
        nsp, classifier = FNET_HEADS[self.head_class()][2], self.classifier_width()
        extras = [
            Extra("embedding", f"{root}embeddings.token_type_embeddings", Table(self.type_vocab_size, hidden)),
            Extra("norm", f"{root}embeddings.LayerNorm", self.layer_norm()),
            Extra("embedding", f"{root}embeddings.projection", Linear(hidden, hidden, bias=True)),
            self.linear(f"{root}pooler.dense", hidden, hidden),
        ]
        if mlm:
            extras += [
                Extra("lm_head", "cls.predictions.transform.dense", Linear(hidden, hidden, bias=True)),
                Extra("norm", "cls.predictions.transform.LayerNorm", self.layer_norm()),
            ]
            if not self.tie_word_embeddings:  # untied, the decoder keeps a bias of its own beside the head's
                extras.append(Extra("lm_head", "cls.predictions.decoder.bias", LearnedTensor((self.vocab_size,))))
        if nsp:
            extras.append(self.linear("cls.seq_relationship", hidden, 2))
        if classifier is not None:
            module = "qa_outputs" if self.head_class() == "ForQuestionAnswering" else "classifier"
            extras.append(self.linear(module, hidden, classifier))
        return extras

    def classifier_width(self) -> int | None:
        """The classifier's outputs in the class counted: num_labels, one (multiple choice), or none."""
        width = FNET_HEADS[self.head_class()][3]
        return self.labels() if width == "labels" else width if isinstance(width, int) else None

    def to_spec(self) -> ModelSpec:
        mlm = FNET_HEADS[self.head_class()][1]
        return ModelSpec(
            model_type=self.model_type,
            hidden_size=self.hidden_size,
            vocab_size=self.vocab_size,
            layers=(self.encoder_layer(),) * self.num_hidden_layers,
            final_norm=None,
            tie_word_embeddings=self.tie_word_embeddings,
            names=ModelNames(
                f"{self.root}embeddings.word_embeddings",
                "",
                lm_head="cls.predictions.decoder",
                position_embeddings=f"{self.root}embeddings.position_embeddings",
                base_model_prefix=self.base_model_prefix,
                lm_head_bias="cls.predictions.bias",
            ),
            position_embeddings=self.max_position_embeddings,
            lm_head=mlm,
            lm_head_bias=mlm,
            extras=tuple(self.extras(mlm)),
            checkpoint_extras=(self.position_ids(self.max_position_embeddings),),
        )
