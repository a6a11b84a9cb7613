"""I-BERT: RoBERTa's parameters in quantization-aware modules, whose buffers every checkpoint stores.

Totals, components and tensors (buffers included) are held to transformers 5.24 by
tests/test_transformers_agreement.py, a dequantized model's FLOPs to FlopCounterMode by tests/test_flops.py; here each
expected figure is derived by hand from the config's numbers.
"""

from ffncalc import account

# IBertConfig()'s shapes: BERT-base's (30,522 words, 512 positions, 2 token types, 12 layers of 768, MLP 3,072)
VOCAB, HIDDEN, FFN, LAYERS, TABLE_ROWS = 30522, 768, 3072, 12, 30522 + 512 + 2


def test_ibert_parameters_are_robertas(write_config):
    # IBertForMaskedLM: RoBERTa's masked LM, module for module (the head's decoder tied, with lm_head.bias)
    layer = 4 * (HIDDEN * HIDDEN + HIDDEN) + 2 * HIDDEN * FFN + FFN + HIDDEN + 2 * 2 * HIDDEN
    head = HIDDEN * HIDDEN + HIDDEN + 2 * HIDDEN + VOCAB
    total = TABLE_ROWS * HIDDEN + 2 * HIDDEN + LAYERS * layer + head
    assert total == 109_514_298
    assert account(str(write_config({"model_type": "ibert"}))).total_params == total


def test_ibert_checkpoints_store_quantization_buffers_beside_the_parameters(write_config):
    # embeddings: each table's integer copy and scaling factor, 4 QuantActs of 3 values (act1, act2, the LayerNorm's,
    # output), the LayerNorm's shift. A layer: each QuantLinear's integer weight, its bias's integer copy and a
    # scaling factor per output (q, k, v, o, intermediate, output); 14 QuantActs of 3 values (q, k, v and output
    # activations and the softmax's; ln_input_act, the LayerNorm's and output_activation after attention and after the
    # MLP; the intermediate's output; pre_intermediate_act, pre_output_act); 2 LayerNorm shifts.
    def linear(outputs, inputs):
        return outputs * inputs + 2 * outputs

    embeddings = TABLE_ROWS * HIDDEN + 3 + 4 * 3 + 1
    layer = 4 * linear(HIDDEN, HIDDEN) + linear(FFN, HIDDEN) + linear(HIDDEN, FFN) + 14 * 3 + 2
    report = account(str(write_config({"model_type": "ibert"})))
    buffers = {extra.name: extra.elements for extra in report.checkpoint_extras if "quantization" in extra.name}
    assert buffers == {
        "embeddings' quantization buffers": embeddings,
        "layers' quantization buffers": LAYERS * layer,
    }
    assert embeddings + LAYERS * layer == 108_936_736
