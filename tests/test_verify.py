"""`ffncalc verify`: a checkpoint's stored tensors against the count, every difference explained or named.

The checkpoints are written by the tests (tests/checkpoints.py): headers only, names and shapes by hand.
"""

import json

import pytest

from ffncalc.api import verify

from .checkpoints import llama_tensors, safetensors_header, write_checkpoint
from .conftest import tiny_llama


def qwen3_config():
    return tiny_llama(model_type="qwen3", head_dim=16, tie_word_embeddings=True, num_key_value_heads=2)


def qwen3_tensors(config):
    tensors = llama_tensors(config)
    for i in range(config["num_hidden_layers"]):
        tensors[f"model.layers.{i}.self_attn.q_norm.weight"] = ("BF16", [16])
        tensors[f"model.layers.{i}.self_attn.k_norm.weight"] = ("BF16", [16])
    return tensors  # lm_head.weight is stored although tied, as in Qwen/Qwen3-0.6B


def test_a_tied_head_that_is_stored_too_is_explained(tmp_path):
    config = qwen3_config()
    folder = write_checkpoint(tmp_path / "qwen3", config, qwen3_tensors(config))
    report = verify(str(folder))
    assert report.ok
    (extra,) = report.extras
    assert extra.kind == "tied head stored again"
    assert extra.elements == 1000 * 64
    assert report.stored_elements == report.ffncalc_params + 1000 * 64
    assert report.checkpoint_params == report.ffncalc_params


def test_gpt2_causal_mask_buffers_are_explained(tmp_path):
    config = {"model_type": "gpt2", "vocab_size": 100, "n_embd": 32, "n_layer": 2, "n_head": 4, "n_positions": 16}
    tensors = {"wte.weight": ("F32", [100, 32]), "wpe.weight": ("F32", [16, 32])}
    for i in range(2):
        for name, shape in {
            "ln_1.weight": [32], "ln_1.bias": [32], "attn.c_attn.weight": [32, 96], "attn.c_attn.bias": [96],
            "attn.c_proj.weight": [32, 32], "attn.c_proj.bias": [32], "ln_2.weight": [32], "ln_2.bias": [32],
            "mlp.c_fc.weight": [32, 128], "mlp.c_fc.bias": [128], "mlp.c_proj.weight": [128, 32], "mlp.c_proj.bias": [32],
            "attn.bias": [1, 1, 16, 16],
        }.items():
            tensors[f"h.{i}.{name}"] = ("F32", shape)
    tensors.update({"ln_f.weight": ("F32", [32]), "ln_f.bias": ("F32", [32])})
    report = verify(str(write_checkpoint(tmp_path / "gpt2", config, tensors)))
    assert report.ok, report
    (extra,) = report.extras
    assert (extra.kind, extra.tensors, extra.elements) == ("causal-mask buffers", 2, 2 * 16 * 16)


def test_mxfp4_blocks_count_two_values_per_byte_and_scales_are_explained(tmp_path):
    # a gpt-oss layout: E experts, gate_up (2I × H) and down (H × I) packed as 16-byte blocks of 32 values
    hidden, width, experts, vocab, heads, kv, head_dim = 64, 64, 4, 100, 4, 2, 16
    config = {
        "model_type": "gpt_oss", "vocab_size": vocab, "hidden_size": hidden, "intermediate_size": width,
        "num_hidden_layers": 1, "num_attention_heads": heads, "num_key_value_heads": kv, "head_dim": head_dim,
        "num_local_experts": experts, "num_experts_per_tok": 2, "quantization_config": {"quant_method": "mxfp4"},
    }
    layer = "model.layers.0."
    tensors = {
        "model.embed_tokens.weight": ("BF16", [vocab, hidden]),
        layer + "self_attn.q_proj.weight": ("BF16", [heads * head_dim, hidden]), layer + "self_attn.q_proj.bias": ("BF16", [heads * head_dim]),
        layer + "self_attn.k_proj.weight": ("BF16", [kv * head_dim, hidden]), layer + "self_attn.k_proj.bias": ("BF16", [kv * head_dim]),
        layer + "self_attn.v_proj.weight": ("BF16", [kv * head_dim, hidden]), layer + "self_attn.v_proj.bias": ("BF16", [kv * head_dim]),
        layer + "self_attn.o_proj.weight": ("BF16", [hidden, heads * head_dim]), layer + "self_attn.o_proj.bias": ("BF16", [hidden]),
        layer + "self_attn.sinks": ("BF16", [heads]),
        layer + "mlp.router.weight": ("BF16", [experts, hidden]), layer + "mlp.router.bias": ("BF16", [experts]),
        layer + "mlp.experts.gate_up_proj_blocks": ("U8", [experts, 2 * width, hidden // 32, 16]),
        layer + "mlp.experts.gate_up_proj_scales": ("U8", [experts, 2 * width, hidden // 32]),
        layer + "mlp.experts.gate_up_proj_bias": ("BF16", [experts, 2 * width]),
        layer + "mlp.experts.down_proj_blocks": ("U8", [experts, hidden, width // 32, 16]),
        layer + "mlp.experts.down_proj_scales": ("U8", [experts, hidden, width // 32]),
        layer + "mlp.experts.down_proj_bias": ("BF16", [experts, hidden]),
        layer + "input_layernorm.weight": ("BF16", [hidden]), layer + "post_attention_layernorm.weight": ("BF16", [hidden]),
        "model.norm.weight": ("BF16", [hidden]), "lm_head.weight": ("BF16", [vocab, hidden]),
    }
    report = verify(str(write_checkpoint(tmp_path / "gpt-oss", config, tensors)))
    assert report.ok, report
    (scales,) = report.extras
    assert scales.kind == "MXFP4 scales"
    assert scales.elements == experts * 3 * width * hidden // 32
    assert report.stored_by_dtype["U8"] == experts * 3 * width * hidden // 2 + scales.elements


def test_fp8_scales_and_router_biases_and_mtp_layers_are_explained(tmp_path):
    # A tiny DeepSeek-V3: layer 0 dense, layer 1 MoE, and one multi-token-prediction layer stored as layer 2.
    config = tiny_llama(
        model_type="deepseek_v3", q_lora_rank=None, kv_lora_rank=16, qk_nope_head_dim=8, qk_rope_head_dim=4,
        v_head_dim=8, n_routed_experts=2, num_experts_per_tok=1, n_shared_experts=1, moe_intermediate_size=32,
        first_k_dense_replace=1, num_nextn_predict_layers=1,
    )
    hidden, heads = 64, 4

    def mla(layer):
        return {
            layer + "self_attn.q_proj.weight": ("F8_E4M3", [heads * 12, hidden]),
            layer + "self_attn.q_proj.weight_scale_inv": ("F32", [1, 1]),
            layer + "self_attn.kv_a_proj_with_mqa.weight": ("F8_E4M3", [16 + 4, hidden]),
            layer + "self_attn.kv_a_layernorm.weight": ("BF16", [16]),
            layer + "self_attn.kv_b_proj.weight": ("F8_E4M3", [heads * 16, 16]),
            layer + "self_attn.o_proj.weight": ("F8_E4M3", [hidden, heads * 8]),
            layer + "input_layernorm.weight": ("BF16", [hidden]),
            layer + "post_attention_layernorm.weight": ("BF16", [hidden]),
        }

    def mlp(prefix, width):
        return {
            prefix + "gate_proj.weight": ("F8_E4M3", [width, hidden]),
            prefix + "up_proj.weight": ("F8_E4M3", [width, hidden]),
            prefix + "down_proj.weight": ("F8_E4M3", [hidden, width]),
        }

    tensors = {"model.embed_tokens.weight": ("BF16", [1000, hidden])}
    tensors.update(mla("model.layers.0.") | mlp("model.layers.0.mlp.", 128))
    for layer in ("model.layers.1.", "model.layers.2."):
        tensors.update(mla(layer) | mlp(layer + "mlp.shared_experts.", 32))
        tensors.update(mlp(layer + "mlp.experts.0.", 32) | mlp(layer + "mlp.experts.1.", 32))
        tensors[layer + "mlp.gate.weight"] = ("BF16", [2, hidden])
        tensors[layer + "mlp.gate.e_score_correction_bias"] = ("F32", [2])
    tensors.update({"model.norm.weight": ("BF16", [hidden]), "lm_head.weight": ("BF16", [1000, hidden])})
    report = verify(str(write_checkpoint(tmp_path / "deepseek", config, tensors)))
    assert report.ok, report
    kinds = {extra.kind: extra for extra in report.extras}
    assert kinds["FP8 block scales"].tensors == 2  # layers 0 and 1; layer 2 is the MTP module
    assert kinds["router correction biases"].elements == 2  # layer 1's
    # every model.layers.2.* tensor: 8 attention and norm, 3 shared expert, 2 × 3 routed, router weight and bias
    assert kinds["layers past the last one"].tensors == 8 + 3 + 6 + 2


def test_a_missing_tensor_is_named_by_its_layer_and_fails(tmp_path, ffncalc):
    config = tiny_llama()
    tensors = llama_tensors(config)
    del tensors["model.layers.1.mlp.up_proj.weight"]
    folder = write_checkpoint(tmp_path / "broken", config, tensors)
    report = verify(str(folder))
    assert not report.ok
    (mismatch,) = report.mismatches
    assert (mismatch.where, mismatch.expected - mismatch.stored) == ("layer 1", 128 * 64)
    run = ffncalc("verify", str(folder))
    assert run.exit_code == 1
    assert "NOT OK" in run.stdout


def test_an_unknown_tensor_is_named(tmp_path):
    config = tiny_llama()
    tensors = llama_tensors(config) | {"score.weight": ("BF16", [2, 64])}
    report = verify(str(write_checkpoint(tmp_path / "extra", config, tensors)))
    assert not report.ok
    assert report.unexplained_tensors == ["score.weight"]


def test_a_complete_checkpoint_is_ok_and_exits_zero(tmp_path, ffncalc):
    config = tiny_llama()
    folder = write_checkpoint(tmp_path / "llama", config, llama_tensors(config))
    run = ffncalc("verify", str(folder / "config.json"))
    assert run.exit_code == 0, run.stdout + run.stderr
    assert "OK: every stored element is a counted parameter or explained above." in run.stdout
    document = ffncalc("verify", str(folder), "--json").json()
    assert document["ok"] is True
    assert document["stored_by_dtype"] == {"BF16": document["ffncalc_params"]}


def test_an_index_alone_is_compared_by_total_size(tmp_path):
    config = tiny_llama(torch_dtype="bfloat16")
    folder = tmp_path / "indexed"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(config))
    names = list(llama_tensors(config))
    total = 2 * (2 * 64_000 + 2 * (16_384 + 24_576 + 128) + 64)  # bytes of the hand count in BF16
    index = {"metadata": {"total_size": total}, "weight_map": {name: "model-00001-of-00001.safetensors" for name in names}}
    (folder / "model.safetensors.index.json").write_text(json.dumps(index))
    report = verify(str(folder))
    assert report.index_only and report.ok
    assert report.stored_elements == total // 2


def test_a_folder_without_weights_is_a_one_line_error(ffncalc, write_config):
    run = ffncalc("verify", str(write_config(tiny_llama()).parent))
    assert run.exit_code == 2
    assert "no *.safetensors files and no model.safetensors.index.json" in run.stderr
    assert run.stderr.count("\n") == 1


def test_a_corrupt_header_is_a_one_line_error(ffncalc, tmp_path):
    folder = tmp_path / "corrupt"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(tiny_llama()))
    (folder / "model.safetensors").write_bytes((10**12).to_bytes(8, "little"))
    run = ffncalc("verify", str(folder))
    assert run.exit_code == 3
    assert "exceeds the format's 100 MB limit" in run.stderr


@pytest.mark.parametrize("header", [b"not json", b"[1, 2]", json.dumps({"x": {"dtype": "F32"}}).encode()])
def test_a_malformed_header_is_a_one_line_error(ffncalc, tmp_path, header):
    folder = tmp_path / "malformed"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(tiny_llama()))
    (folder / "model.safetensors").write_bytes(len(header).to_bytes(8, "little") + header)
    run = ffncalc("verify", str(folder))
    assert run.exit_code == 3
    assert run.stderr.startswith("Error: ") and run.stderr.count("\n") == 1


def test_safetensors_header_helper_round_trips():
    blob = safetensors_header({"a": ("F32", [2, 3])})
    length = int.from_bytes(blob[:8], "little")
    assert json.loads(blob[8 : 8 + length]) == {"a": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}}


def test_t5_encoder_and_decoder_blocks_are_matched_to_their_own_stack(tmp_path):
    # t5-small's layout, written by hand: shared table, encoder and decoder blocks numbered from 0 each,
    # relative bias in block 0 of each stack (and, as the original checkpoints do, in decoder block 0's
    # cross-attention too, which no module uses).
    config = {"model_type": "t5", "vocab_size": 100, "d_model": 16, "d_kv": 4, "d_ff": 32, "num_layers": 2,
              "num_decoder_layers": 2, "num_heads": 4, "relative_attention_num_buckets": 8, "feed_forward_proj": "relu"}
    attention = {name: ("F32", [16, 16]) for name in ("q.weight", "k.weight", "v.weight")} | {"o.weight": ("F32", [16, 16])}
    tensors = {"shared.weight": ("F32", [100, 16])}
    for stack in ("encoder", "decoder"):
        for block in range(2):
            prefix = f"{stack}.block.{block}.layer."
            tensors |= {prefix + "0.SelfAttention." + name: shape for name, shape in attention.items()}
            tensors[prefix + "0.layer_norm.weight"] = ("F32", [16])
            if block == 0:
                tensors[prefix + "0.SelfAttention.relative_attention_bias.weight"] = ("F32", [8, 4])
            ffn_layer = "1"
            if stack == "decoder":
                tensors |= {prefix + "1.EncDecAttention." + name: shape for name, shape in attention.items()}
                tensors[prefix + "1.layer_norm.weight"] = ("F32", [16])
                if block == 0:
                    tensors[prefix + "1.EncDecAttention.relative_attention_bias.weight"] = ("F32", [8, 4])
                ffn_layer = "2"
            tensors[prefix + ffn_layer + ".DenseReluDense.wi.weight"] = ("F32", [32, 16])
            tensors[prefix + ffn_layer + ".DenseReluDense.wo.weight"] = ("F32", [16, 32])
            tensors[prefix + ffn_layer + ".layer_norm.weight"] = ("F32", [16])
        tensors[f"{stack}.final_layer_norm.weight"] = ("F32", [16])
    report = verify(str(write_checkpoint(tmp_path / "t5", config, tensors)))
    assert report.ok, report
    (extra,) = report.extras
    assert (extra.kind, extra.elements) == ("unused cross-attention relative bias", 8 * 4)
