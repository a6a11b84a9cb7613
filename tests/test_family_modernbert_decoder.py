"""ModernBERT's decoder: ModernBERT's layers run causally, q, k and v apart, a prediction head before the decoder.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/defaults__modernbert-decoder.json, synthetic__modernbert-decoder.json,
synthetic__modernbert-decoder_sequence_classification.json).
"""

from ffncalc import account


def test_modernbert_decoder_default_model_by_hand(write_config):
    # ModernBertDecoderConfig(): H 768, 22 layers of 12 heads, GeGLU 1,152, vocabulary 50,368, tied, no biases but
    # the decoder's. Embeddings: the token table and a LayerNorm (weight only). Layers: q, k, v and Wo H × H, Wi
    # H × 2 · 1,152, Wo 1,152 × H, mlp_norm, and attn_norm in all but layer 0. final_norm; the causal LM's lm_head
    # (dense H × H, a norm) and the decoder's bias (50,368).
    hidden, vocab = 768, 50368
    layers = 22 * (4 * hidden * hidden + 3 * hidden * 1152) + 21 * hidden + 22 * hidden
    head = hidden * hidden + hidden + vocab
    report = account(str(write_config({"model_type": "modernbert-decoder"})))
    assert report.total_params == vocab * hidden + hidden + layers + hidden + head == 149_655_232


def test_modernbert_decoder_sliding_layers_attend_to_half_local_attention(write_config):
    # ModernBertDecoderConfig.__post_init__: sliding_window = local_attention // 2; layers 1 and 2 of 3 slide
    config = {"model_type": "modernbert-decoder", "num_hidden_layers": 3, "local_attention": 64}
    report = account(str(write_config(config)))
    windows = {i: group.window for group in report.layers for i in group.indices}
    assert windows == {0: None, 1: 32, 2: 32}
