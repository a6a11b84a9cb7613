"""Tencent's Youtu-LLM: DeepSeek-V3's latent attention in a dense Llama layer.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/defaults__youtu.json, synthetic__youtu.json, synthetic__youtu_direct_queries.json).
"""

from ffncalc import account


def test_youtu_default_model_by_hand(write_config):
    # YoutuConfig(): H 2,048, 32 layers of 16 heads, q_lora_rank 1,536, kv_lora_rank 512, qk 128 + 64, v 128,
    # SwiGLU 6,144, vocabulary 128,256, tied. Attention: q_a H × 1,536, q_b 1,536 × 16 · 192, kv_a H × (512 + 64),
    # kv_b 512 × 16 · (128 + 128), o 16 · 128 × H; the latents' RMSNorms 1,536 and 512; two layer norms.
    hidden, vocab = 2048, 128256
    attention = hidden * 1536 + 1536 * 16 * 192 + hidden * 576 + 512 * 16 * 256 + 16 * 128 * hidden
    layer = attention + 1536 + 512 + 3 * hidden * 6144 + 2 * hidden
    report = account(str(write_config({"model_type": "youtu"})))
    assert report.total_params == 32 * layer + vocab * hidden + hidden == 1_961_560_064


def test_youtu_attention_bias_reaches_q_a_kv_a_and_o_only(write_config):
    # attention_bias: q_a 48, kv_a 32 + 8, o 64 (DeepseekV3Attention gives q_b and kv_b none)
    small = {"model_type": "youtu", "vocab_size": 320, "hidden_size": 64, "intermediate_size": 96}
    small |= {"num_hidden_layers": 1, "num_attention_heads": 4, "num_key_value_heads": 4, "q_lora_rank": 48}
    small |= {"kv_lora_rank": 32, "qk_nope_head_dim": 16, "qk_rope_head_dim": 8, "v_head_dim": 20}
    plain = account(str(write_config(small, "plain"))).total_params
    biased = account(str(write_config(small | {"attention_bias": True}, "biased"))).total_params
    assert biased - plain == 48 + 40 + 64
