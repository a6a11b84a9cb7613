"""xLSTM: blocks of an mLSTM layer (a matrix memory per head) and a SwiGLU, each after an RMSNorm.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/defaults__xlstm.json, synthetic__xlstm.json, synthetic__xlstm_fused.json).
"""

from ffncalc import account, memory


def test_xlstm_default_model_by_hand(write_config):
    # xLSTMConfig(): H 4,096, 32 blocks, 8 heads; q and k H × 2,048, v and ogate_preact H × 4,096, igate and fgate
    # H × 8 + 8, multihead_norm 4,096, out_proj 4,096 × H; SwiGLU of round_up(4,096 · 2.667 = 10,924.03, 64) = 10,944;
    # two RMSNorms H; out_norm H; vocabulary 50,304, lm_head apart.
    hidden, vocab = 4096, 50304
    block = 2 * hidden * 2048 + 2 * hidden * 4096 + 2 * (hidden * 8 + 8) + 4096 + 4096 * hidden + 2 * hidden
    block += 3 * hidden * 10944
    report = account(str(write_config({"model_type": "xlstm"})))
    assert report.total_params == 32 * block + 2 * vocab * hidden + hidden == 6_865_424_896


def test_xlstm_builds_num_blocks_and_never_ties_its_head(write_config):
    # num_blocks 3 (num_hidden_layers left at its 32); fused weights; v_dim_factor 0.75: v 48; SwiGLU
    # round_up(64 · 2.667, 32) = 192; tie_word_embeddings true, yet lm_head is its own 300 × 64
    config = {"model_type": "xlstm", "vocab_size": 300, "hidden_size": 64, "num_blocks": 3, "num_heads": 4}
    config |= {"weight_mode": "fused", "v_dim_factor": 0.75, "ffn_round_up_to_multiple_of": 32}
    config |= {"tie_word_embeddings": True, "pad_token_id": 1}
    block = 64 * (2 * 32 + 2 * 48) + 64 * 8 + 8 + 48 + 48 * 64 + 2 * 64 + 3 * 64 * 192
    report = account(str(write_config(config)))
    assert report.total_params == 3 * block + 2 * 300 * 64 + 64 == 191_080


def test_xlstm_memory_is_a_matrix_per_head(write_config):
    # 32 blocks × 8 heads × (256 × 512 memory + 256 normaliser + 1 stabiliser), BF16, at any context
    report = memory(str(write_config({"model_type": "xlstm"})), context=8192)
    assert report.kv_cache.bytes == 2 * 32 * 8 * (256 * 512 + 256 + 1)
