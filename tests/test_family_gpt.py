"""The GPT lineage's later members: GPT-Neo's local layers, CodeGen's fused qkv_proj, StarCoder's multi-query c_attn
(gpt_bigcode) and StarCoder2's LayerNorms and windows.

Every expected figure is derived by hand from the config's numbers, or is a published count.
"""

from ffncalc import account, flops

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"
NEO_125M = "EleutherAI/gpt-neo-125m"
CODEGEN_350M = "Salesforce/codegen-350M-mono"


def test_gpt_neo_125m_by_hand_is_its_published_count():
    # H 768, 12 layers, FFN 4 · H, vocabulary 50,257, 2,048 learned positions, a tied head.
    # A layer: q, k, v H² each (no biases), out_proj H² + H, c_fc H · 4H + 4H, c_proj 4H · H + H, ln_1 and ln_2 2H each.
    hidden, vocab, positions = 768, 50257, 2048
    layer = 3 * hidden * hidden + hidden * hidden + hidden + 8 * hidden * hidden + 4 * hidden + hidden + 4 * hidden
    total = 12 * layer + vocab * hidden + positions * hidden + 2 * hidden
    assert total == 125_198_592  # a third-party table of model.num_parameters() (tests/reference/ground_truth.json)
    assert account(NEO_125M).total_params == total


def test_gpt_neo_alternates_global_and_local_layers():
    # attention_types [[["global", "local"], 6]]: even layers global, odd layers local within window_size 256.
    groups = {group.window: group.indices for group in account(NEO_125M).layers}
    assert groups == {None: [0, 2, 4, 6, 8, 10], 256: [1, 3, 5, 7, 9, 11]}


def test_gpt_neo_attention_layers_key_wins_over_attention_types():
    # attention_types asks for 3 global layers; the attention_layers key (local, global, local) is what transformers builds.
    groups = {
        group.window: group.indices
        for group in account(str(CONFIGS / "synthetic__gpt_neo_attention_layers.json")).layers
    }
    assert groups == {8: [0, 2], None: [1]}


def test_gpt_neo_local_layers_read_at_most_256_keys():
    # 2 · 12 heads · (64 + 64) = 3,072 FLOPs per key; at 512, six global layers read 512 keys and six local ones 256.
    per_key = 2 * 12 * (64 + 64)
    assert flops(NEO_125M, 512).per_token.attention_scores == per_key * (6 * 512 + 6 * 256)


def test_gpt_neo_eager_attention_computes_the_masked_scores_that_the_window_saves():
    # torch's FlopCounterMode over one eager forward of 512 tokens (tools/flop_count.py) counts 136,160,477,184 FLOPs:
    # eager attention scores every key, masked or not. Non-causal, ffncalc charges the six local layers 256 keys per
    # token instead of 512: 6 layers · 512 tokens · 256 keys · 3,072 FLOPs less.
    flop_counter_mode = 136_160_477_184
    saved = 6 * 512 * 256 * (2 * 12 * (64 + 64))
    assert flops(NEO_125M, 512, causal=False).prefill.total == flop_counter_mode - saved


def test_codegen_350m_by_hand():
    # H 1,024, 20 layers, FFN 4 · H, vocabulary 51,200, an untied head with a bias.
    # A layer: qkv_proj 3H · H and out_proj H · H without biases, fc_in H · 4H + 4H, fc_out 4H · H + H, ln_1 2H.
    hidden, vocab = 1024, 51200
    layer = 3 * hidden * hidden + hidden * hidden + 8 * hidden * hidden + 4 * hidden + hidden + 2 * hidden
    total = 20 * layer + vocab * hidden + (vocab * hidden + vocab) + 2 * hidden
    assert account(CODEGEN_350M).total_params == total == 356_712_448


def test_codegen_checkpoints_store_a_causal_mask_per_layer():
    # attn.causal_mask: [1, 1, n_positions, n_positions] in each of the 20 layers.
    (extra,) = account(CODEGEN_350M).checkpoint_extras
    assert extra.name == "attn.causal_mask buffers"
    assert extra.elements == 20 * 2048 * 2048


def test_starcoder_c_attn_holds_queries_and_one_key_and_value_head():
    # n_embd 64 over 4 heads of 16; multi_query: c_attn emits 64 queries, then one key and one value head of 16.
    (layer,) = account(str(CONFIGS / "synthetic__gpt_bigcode.json")).layers
    assert (layer.parts["attention.q"], layer.parts["attention.k"], layer.parts["attention.v"]) == (
        64 * 64 + 64,
        64 * 16 + 16,
        64 * 16 + 16,
    )
    assert layer.attention_kind == "mqa"


def test_starcoder_with_cross_attention_by_hand(write_config):
    # multi_query off (transformers has no multi-query cross-attention): n_embd 64, 2 layers, n_inner 4 · 64, 128 positions,
    # vocabulary 1,000, tied. A layer: c_attn 64 · 192 + 192, c_proj 64 · 64 + 64; crossattention q_attn 64 · 64 + 64,
    # c_attn (keys and values) 64 · 128 + 128, c_proj 64 · 64 + 64; c_fc 64 · 256 + 256, c_proj 256 · 64 + 64;
    # ln_1, ln_2, ln_cross_attn 128 each.
    config = {
        "model_type": "gpt_bigcode",
        "vocab_size": 1000,
        "n_embd": 64,
        "n_layer": 2,
        "n_head": 4,
        "n_positions": 128,
        "multi_query": False,
        "add_cross_attention": True,
    }
    attention = 64 * 192 + 192 + 64 * 64 + 64
    cross = 64 * 64 + 64 + 64 * 128 + 128 + 64 * 64 + 64
    layer = attention + cross + 64 * 256 + 256 + 256 * 64 + 64 + 3 * 128
    total = 2 * layer + 1000 * 64 + 128 * 64 + 128
    report = account(str(write_config(config)))
    assert report.total_params == total == 205_824  # transformers builds 205,824 (on the meta device)
    assert report.components.cross_attention == 2 * cross


def test_starcoder_refuses_cross_attention_with_multi_query(ffncalc, write_config):
    config = {"model_type": "gpt_bigcode", "n_layer": 1, "add_cross_attention": True}
    run = ffncalc("params", str(write_config(config)))
    assert run.exit_code != 0
    assert "add_cross_attention" in run.stderr


def test_starcoder2_layer_by_hand():
    # hidden 64, 4 heads of 24 (head_dim key), 1 KV head, FFN 128, use_bias false: q 64 · 96, k and v 64 · 24,
    # o 96 · 64, c_fc 64 · 128, c_proj 128 · 64, and two LayerNorms that keep their biases (2 · 64 each).
    (layer,) = account(str(CONFIGS / "synthetic__starcoder2.json")).layers
    assert layer.params == 64 * 96 + 2 * 64 * 24 + 96 * 64 + 2 * 64 * 128 + 2 * 2 * 64
    assert layer.window == 32


def test_starcoder2_every_layer_slides_within_its_window():
    # 3 layers of 2 · 4 heads · (24 + 24) = 384 FLOPs per key; past 32 tokens each reads 32 keys.
    report = flops(str(CONFIGS / "synthetic__starcoder2.json"), 512)
    assert report.per_token.attention_scores == 3 * 384 * 32


def test_starcoder2_defaults_are_starcoder2_3b(write_config):
    # Starcoder2Config's defaults: H 3,072, 30 layers, 24 heads of 128, 2 KV heads, FFN 12,288, vocabulary 49,152, tied.
    hidden, ffn, vocab, kv = 3072, 12288, 49152, 2 * 128
    layer = (
        (hidden * hidden + hidden) * 2
        + (hidden * kv + kv) * 2
        + hidden * ffn
        + ffn
        + ffn * hidden
        + hidden
        + 2 * 2 * hidden
    )
    total = 30 * layer + vocab * hidden + 2 * hidden
    assert account(str(write_config({"model_type": "starcoder2"}))).total_params == total


def test_openai_gpt_default_model_by_hand(write_config):
    # OpenAIGPTConfig(): n_embd 768, 12 layers, MLP 4 · 768, vocabulary 40,478, 512 positions, head tied to
    # tokens_embed. A layer: c_attn 768 × 2,304 and c_proj 768², c_fc and c_proj 768 × 3,072, all with biases, and
    # two LayerNorms (post-norm); no final norm.
    hidden = 768
    layer = hidden * 3 * hidden + 3 * hidden + hidden * hidden + hidden
    layer += 2 * hidden * 4 * hidden + 4 * hidden + hidden + 2 * 2 * hidden
    report = account(str(write_config({"model_type": "openai-gpt"})))
    assert report.total_params == 12 * layer + 40478 * hidden + 512 * hidden == 116_534_784
    assert report.components.norm == 12 * 2 * 2 * hidden


def test_gpt_sw3_is_read_as_gpt2(write_config):
    # transformers maps "gpt-sw3" to GPT2Config: its default model is GPT-2 small, 124,439,808 parameters
    assert account(str(write_config({"model_type": "gpt-sw3"}))).total_params == 124_439_808
