"""dots3 Note's text model: DeepSeek-V3.2's layers with a per-head output gate and a norm on the rotary key, indexed
full layers and sliding layers of their own widths.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/defaults__dots3_note_text.json, synthetic__dots3_note_text.json,
synthetic__dots3_note_text_per_layer.json). Its MoE layers need routing values, which FlopCounterMode on the meta
device does not have: no FLOP record.
"""

from ffncalc import account, flops


def test_dots3_note_text_default_model_by_hand(write_config):
    # Dots3NoteTextConfig(): H 5,120, 46 layers: indexed on 0, 1, 5, 9 … 45 (13), sliding on the other 33.
    # Indexed: 128 heads, q_lora_rank 1,024, kv_lora_rank 512, qk 128 + 64, v 128, g_proj H × 128,
    # k_rope_only_layernorm 64; the indexer wq_b 1,024 × 64 · 128, wk H × 128, its LayerNorm 2 · 128, weights_proj
    # H × 64. Sliding (the swa_* defaults): 64 heads, q_lora_rank and kv_lora_rank 1,024, qk 192 + 64, v 128.
    # Layer 0 dense (SwiGLU 13,824); 45 MoE layers: router 256 × H, 256 experts and a shared MLP of 3 · H · 1,536.
    hidden, vocab = 5120, 152064
    indexer = 1024 * 64 * 128 + hidden * 128 + 256 + hidden * 64
    indexed = hidden * 1024 + 1024 + 1024 * 128 * 192 + hidden * 576 + 512 + 512 * 128 * 256 + 128 * 128 * hidden
    indexed += hidden * 128 + 64 + indexer
    sliding = hidden * 1024 + 1024 + 1024 * 64 * 256 + hidden * 1088 + 1024 + 1024 * 64 * 320 + 64 * 128 * hidden
    sliding += hidden * 64 + 64
    ffns = 3 * hidden * 13824 + 45 * (256 * hidden + 257 * 3 * hidden * 1536)
    report = account(str(write_config({"model_type": "dots3_note_text"})))
    expected = 13 * indexed + 33 * sliding + ffns + 46 * 2 * hidden + 2 * vocab * hidden + hidden
    assert report.total_params == expected == 279_551_718_016


def test_dots3_note_text_sliding_layers_read_their_window(write_config):
    # 46 layers: 13 indexed layers read min(n, 2,048) keys at 128 heads · (192 + 128); 33 sliding layers 512 keys at
    # 64 heads · (256 + 128); the indexers score all n keys: 2 · 64 · (128 + 1) each
    report = flops(str(write_config({"model_type": "dots3_note_text"})), 8192)
    indexed = 13 * 2048 * 2 * 128 * 320
    sliding = 33 * 512 * 2 * 64 * 384
    scoring = 13 * 8192 * 2 * 64 * 129
    assert report.per_token.attention_scores == indexed + sliding + scoring


def test_dots3_note_text_refuses_sliding_layers_of_unequal_widths(ffncalc, write_config):
    config = {"model_type": "dots3_note_text", "num_hidden_layers": 4}
    config["layer_types"] = ["indexed_attention", "sliding_attention", "indexed_attention", "sliding_attention"]
    config["per_layer_config"] = {"1": {"kv_lora_rank": 256, "head_dim": 192}, "3": {"head_dim": 192}}
    run = ffncalc("params", str(write_config(config)))
    assert run.exit_code != 0
    assert "the sliding_attention layers' widths differ (layer 3)" in run.stderr
