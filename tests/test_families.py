"""Family rules: the defaults transformers applies and each family's module layout, on small configs.

Every expected figure is derived by hand in the test from the config's numbers.
"""

from ffncalc import account
from ffncalc.results import DefaultUsed

from .conftest import tiny_llama

H, I, V, L, HEADS = 64, 128, 1000, 2, 4  # the tiny_llama sizes


def params_of(write_config, config):
    return account(str(write_config(config)))


def test_missing_num_key_value_heads_means_as_many_as_attention_heads(write_config):
    (group,) = params_of(write_config, tiny_llama()).layers
    assert group.attention_kind == "mha"
    assert group.parts["attention.k"] == H * H
    assert group.parts["attention.v"] == H * H


def test_missing_head_dim_means_hidden_over_heads(write_config):
    (group,) = params_of(write_config, tiny_llama(num_key_value_heads=1)).layers
    assert group.attention_kind == "mqa"
    assert group.parts["attention.k"] == H * (H // HEADS)  # one KV head of 16


def test_an_explicit_head_dim_wins(write_config):
    (group,) = params_of(write_config, tiny_llama(head_dim=32)).layers
    assert group.parts["attention.q"] == H * HEADS * 32
    assert group.parts["attention.o"] == HEADS * 32 * H


def test_llama_biases_follow_attention_bias_and_mlp_bias(write_config):
    (group,) = params_of(write_config, tiny_llama(attention_bias=True, mlp_bias=True)).layers
    assert group.parts["attention.q"] == H * H + H
    assert group.parts["attention.o"] == H * H + H
    assert group.parts["ffn.gate"] == H * I + I
    assert group.parts["ffn.down"] == I * H + H


def test_llama_unties_by_default_and_ties_when_told(write_config):
    assert params_of(write_config, tiny_llama()).components.lm_head == V * H
    tied = params_of(write_config, tiny_llama(tie_word_embeddings=True))
    assert tied.components.lm_head == 0
    assert tied.components.embedding == V * H


def test_gemma_ties_unless_told_otherwise_and_defaults_head_dim_to_256(write_config):
    report = params_of(write_config, tiny_llama(model_type="gemma", num_key_value_heads=4))
    assert report.tie_word_embeddings
    assert report.components.lm_head == 0
    assert report.layers[0].parts["attention.q"] == H * HEADS * 256


def test_gemma2_has_four_norms_per_layer_and_even_layers_slide(write_config):
    report = params_of(write_config, tiny_llama(model_type="gemma2", num_hidden_layers=4, head_dim=16))
    sliding, full = report.layers
    assert sliding.indices == [0, 2] and sliding.window == 4096
    assert full.indices == [1, 3] and full.window is None
    assert sliding.components.norm == 4 * H
    assert report.components.norm == 4 * 4 * H + H


def test_gemma3_makes_every_sixth_layer_global_and_adds_qk_norms(write_config):
    config = tiny_llama(model_type="gemma3_text", num_hidden_layers=12, head_dim=16, sliding_window=512)
    sliding, full = params_of(write_config, config).layers
    assert full.indices == [5, 11]
    assert sliding.window == 512
    assert sliding.parts["norm.q_norm"] == 16 and sliding.parts["norm.k_norm"] == 16


def test_layer_types_override_the_family_rule(write_config):
    config = tiny_llama(model_type="gemma2", head_dim=16, layer_types=["full_attention", "sliding_attention"])
    full, sliding = params_of(write_config, config).layers
    assert full.indices == [0] and full.window is None
    assert sliding.indices == [1] and sliding.window == 4096


def test_layer_types_of_the_wrong_length_are_refused(ffncalc, write_config):
    config = tiny_llama(model_type="gemma2", num_key_value_heads=4, layer_types=["full_attention"])
    run = ffncalc("params", str(write_config(config)))
    assert run.exit_code == 3
    assert "layer_types has 1 entries for 2 layers" in run.stderr


def test_mistral_slides_4096_by_default_and_not_when_null(write_config):
    assert params_of(write_config, tiny_llama(model_type="mistral", num_key_value_heads=4)).layers[0].window == 4096
    assert (
        params_of(write_config, tiny_llama(model_type="mistral", num_key_value_heads=4, sliding_window=None))
        .layers[0]
        .window
        is None
    )


def test_qwen2_biases_q_k_v_but_not_o(write_config):
    (group,) = params_of(write_config, tiny_llama(model_type="qwen2", num_key_value_heads=2)).layers
    kv_width = 2 * (H // HEADS)
    assert group.parts["attention.q"] == H * H + H
    assert group.parts["attention.k"] == H * kv_width + kv_width
    assert group.parts["attention.v"] == H * kv_width + kv_width
    assert group.parts["attention.o"] == H * H


def test_qwen2_windows_only_layers_from_max_window_layers_when_enabled(write_config):
    config = tiny_llama(
        model_type="qwen2",
        num_key_value_heads=4,
        num_hidden_layers=4,
        use_sliding_window=True,
        max_window_layers=2,
        sliding_window=256,
    )
    full, sliding = params_of(write_config, config).layers
    assert full.indices == [0, 1] and sliding.indices == [2, 3] and sliding.window == 256


def test_qwen3_defaults_head_dim_to_128_and_norms_each_head(write_config):
    (group,) = params_of(write_config, tiny_llama(model_type="qwen3", num_key_value_heads=4)).layers
    assert group.parts["attention.q"] == H * HEADS * 128
    assert group.parts["norm.q_norm"] == 128
    assert group.parts["norm.k_norm"] == 128


def test_qwen3_moe_keeps_mlp_only_layers_dense_and_follows_the_sparse_step(write_config):
    config = tiny_llama(
        model_type="qwen3_moe",
        num_hidden_layers=6,
        head_dim=16,
        num_experts=4,
        num_experts_per_tok=2,
        moe_intermediate_size=32,
        decoder_sparse_step=2,
        mlp_only_layers=[3],
    )
    dense, sparse = sorted(params_of(write_config, config).layers, key=lambda group: group.ffn_kind)
    assert dense.indices == [0, 2, 3, 4]  # 1 and 5 are sparse: (i + 1) % 2 == 0, and 3 is listed as dense
    assert sparse.indices == [1, 5]
    assert sparse.parts["ffn.routed_experts"] == 4 * 3 * H * 32
    assert sparse.parts["ffn.router"] == H * 4


def test_gpt2_reads_its_own_field_names_and_n_inner_null_is_four_times_n_embd(write_config):
    config = {
        "model_type": "gpt2",
        "vocab_size": V,
        "n_embd": H,
        "n_layer": L,
        "n_head": HEADS,
        "n_positions": 32,
        "n_inner": None,
    }
    report = params_of(write_config, config)
    (group,) = report.layers
    assert group.parts["ffn.up"] == H * 4 * H + 4 * H
    assert group.parts["ffn.down"] == 4 * H * H + H
    assert group.parts["norm.ln_1"] == 2 * H  # LayerNorm: weight and bias
    assert report.components.embedding == (V + 32) * H  # token and learned position tables
    assert report.components.lm_head == 0  # tied by default


def test_gpt2_accepts_hidden_size_spelling(write_config):
    config = {
        "model_type": "gpt2",
        "vocab_size": V,
        "hidden_size": H,
        "num_hidden_layers": L,
        "num_attention_heads": HEADS,
    }
    assert params_of(write_config, config).components.embedding == (V + 1024) * H


def test_gpt2_small_stores_causal_mask_buffers_beside_its_parameters():
    # HF API: F32 137,022,720 = 124,439,808 parameters + 12 × 1024 × 1024 attn.bias buffers.
    report = account("openai-community/gpt2")
    (mask,) = report.checkpoint_extras  # attn.masked_bias, stored by fewer checkpoints, is explained by verify
    assert mask.elements == 12 * 1024 * 1024
    assert report.total_params + mask.elements == 137_022_720


def test_phi3_fused_projections_count_as_q_k_v_and_gate_up(write_config):
    (group,) = params_of(write_config, tiny_llama(model_type="phi3", attention_bias=True, pad_token_id=None)).layers
    assert group.parts["attention.q"] == H * H  # modeling_phi3 has no biases
    assert group.parts["ffn.gate"] + group.parts["ffn.up"] == H * 2 * I


def test_deepseek_mla_without_q_lora_projects_queries_directly(write_config):
    config = tiny_llama(
        model_type="deepseek_v3",
        q_lora_rank=None,
        kv_lora_rank=16,
        qk_nope_head_dim=8,
        qk_rope_head_dim=4,
        v_head_dim=8,
        n_routed_experts=4,
        num_experts_per_tok=2,
        n_shared_experts=1,
        moe_intermediate_size=32,
        first_k_dense_replace=1,
        num_nextn_predict_layers=0,
    )
    dense, sparse = params_of(write_config, config).layers
    assert dense.parts["attention.q"] == H * HEADS * (8 + 4)
    assert dense.parts["attention.kv_a"] == H * (16 + 4)
    assert dense.parts["norm.kv_a_layernorm"] == 16
    assert dense.parts["attention.kv_b"] == 16 * HEADS * (8 + 8)
    assert dense.parts["attention.o"] == HEADS * 8 * H
    assert sparse.parts["ffn.shared_experts"] == 3 * H * 32


def test_deepseek_v3_shows_router_buffers_and_mtp_layers_as_checkpoint_extras():
    report = account("deepseek-ai/DeepSeek-V3")
    extras = {extra.name: extra.elements for extra in report.checkpoint_extras}
    assert extras["router e_score_correction_bias"] == 58 * 256 == 14_848
    # A MoE layer by hand: MLA (q_a 7168→1536 + its norm, q_b 1536→128·192, kv_a 7168→512+64 + its norm,
    # kv_b 512→128·(128+128), o 128·128→7168), 256 routed + 1 shared expert of 3·7168·2048, the router, 2 norms.
    attention = 7168 * 1536 + 1536 + 1536 * 128 * 192 + 7168 * 576 + 512 + 512 * 128 * 256 + 128 * 128 * 7168
    moe_layer = attention + 257 * 3 * 7168 * 2048 + 256 * 7168 + 2 * 7168
    assert moe_layer == report.layers[1].params
    # One MTP module: a MoE layer (with its router's 256-expert correction bias), enorm + hnorm, eh_proj
    # 2·7168 → 7168, a norm, embed and head copies.
    mtp = moe_layer + 256 + 2 * 7168 + 2 * 7168 * 7168 + 7168 + 2 * 129280 * 7168
    assert extras["multi-token-prediction layers"] == mtp
    assert any("FP8" in note for note in report.notes)


def test_kimi_k2_is_read_as_data_with_a_note_that_its_custom_code_did_not_run():
    report = account("moonshotai/Kimi-K2-Instruct")
    assert report.model_type == "kimi_k2"
    assert any("ran none of it" in note for note in report.notes)
    assert "multi-token-prediction layers" not in {extra.name for extra in report.checkpoint_extras}


def test_gpt_oss_20b_stores_its_experts_in_mxfp4_as_the_hub_counts_them():
    # The Hub's safetensors counts (tests/reference/ground_truth.json): BF16 1,804,459,584 elements and
    # U8 19,707,494,400, where the Hub counts each byte of packed 4-bit blocks as two parameters: the
    # 19,110,297,600 expert weights (24 layers × 32 experts × 3 × 2,880 × 2,880) and one UE8M0 scale per 32.
    from ffncalc.api import load_config
    from ffncalc.storage import parameter_layout, parse_scheme

    loaded = load_config("openai/gpt-oss-20b")
    stored = parameter_layout(loaded.spec, "BF16", parse_scheme(loaded.config.quantization))
    weights = 24 * 32 * 3 * 2880 * 2880
    assert weights == 19_110_297_600
    bf16 = sum(t.elements for t in stored if t.dtype == "BF16")
    blocks = sum(t.elements for t in stored if t.name.endswith("_blocks"))
    scales = sum(t.elements for t in stored if t.name.endswith("_scales"))
    assert (bf16, blocks, scales) == (1_804_459_584, weights // 2, weights // 32)
    assert 2 * blocks + scales == 19_707_494_400
    assert any("MXFP4" in note for note in account("openai/gpt-oss-20b").notes)


def test_llama2_7b_inv_freq_buffers_explain_the_f32_part_of_its_checkpoint():
    # HF API: F16 6,738,415,616 + F32 2,048; the F32 tensors are 32 layers × 64 inv_freq entries.
    report = account("meta-llama/Llama-2-7b-hf")
    (inv_freq,) = report.checkpoint_extras
    assert inv_freq.elements == 2_048
    assert report.total_params == 6_738_415_616


def test_a_multimodal_wrapper_counts_its_text_model_its_tower_and_projector_and_says_so(write_config):
    text = tiny_llama(model_type="gemma3_text", head_dim=16)
    wrapper = {"model_type": "gemma3", "text_config": text, "vision_config": {"hidden_size": 1152}}
    report = params_of(write_config, wrapper)
    assert report.language_model_params == params_of(write_config, text).total_params
    # the projector: an RMSNorm of the tower's 1152 and a 1152 × 64 (text hidden) matrix
    assert report.components.projector == 1152 + 1152 * 64
    assert report.total_params == report.language_model_params + report.components.vision + report.components.projector
    assert any("the vision tower (SiglipVisionConfig) and the projector are counted" in note for note in report.notes)


def test_a_wrapper_whose_text_config_lacks_model_type_uses_the_wrappers_text_family(write_config):
    text = tiny_llama(head_dim=16)
    del text["model_type"]
    report = params_of(write_config, {"model_type": "mistral3", "text_config": text})
    assert report.model_type == "mistral3"
    assert report.layers[0].window == 4096  # MistralConfig's sliding_window default: a Mistral text model
    assert DefaultUsed(field="text_config.sliding_window", value=4096, rule=None) in report.defaults_used


def test_unknown_keys_are_ignored(write_config):
    plain = params_of(write_config, tiny_llama())
    noisy = params_of(write_config, tiny_llama(rope_scaling={"factor": 8.0}, something_new=[1, 2], use_cache=True))
    assert plain.total_params == noisy.total_params


def test_identical_layers_built_one_index_at_a_time_are_one_object():
    # Qwen3-30B-A3B builds each layer by its index (which layers are sparse); all 48 are the same MoE layer, and the
    # builders hand out one block per distinct call, so accounting groups them without walking 48 structures.
    from ffncalc.api import load_config

    layers = load_config("Qwen/Qwen3-30B-A3B").spec.layers
    assert len(layers) == 48 and len({id(layer) for layer in layers}) == 1
