"""`ffncalc verify`: every stored tensor matched by name and shape to a parameter, a quantization
tensor of one, or an extra explained by its reason; missing, unexpected and misshapen tensors named.

The checkpoints are written by the tests (tests/checkpoints.py): real headers, names and shapes by
hand; the real index files in tests/indexes are byte-for-byte copies of published indexes (tests/reference/SOURCE.md).
"""

import json
import math
import os
import shutil
from pathlib import Path

import pytest

from ffncalc.api import verify

from .checkpoints import llama_tensors, safetensors_header, write_checkpoint, write_safetensors
from .conftest import BUNDLED, tiny_llama

INDEXES = Path(__file__).resolve().parent / "indexes"


def names_of(report, verdict):
    return [t.name for t in report.tensors if t.verdict == verdict]


def test_a_complete_checkpoint_is_ok_and_exits_zero(tmp_path, ffncalc):
    config = tiny_llama()
    folder = write_checkpoint(tmp_path / "llama", config, llama_tensors(config))
    run = ffncalc("verify", str(folder / "config.json"))
    assert run.exit_code == 0, run.stdout + run.stderr
    assert "OK: every stored tensor is a parameter of the model or explained above." in run.stdout
    document = ffncalc("verify", str(folder), "--json").json()
    assert document["ok"] is True
    # tiny_llama: 2 · 64,000 embeddings and head + 2 layers × 41,088 + 64 = 210,240 parameters, 2 bytes each
    assert document["stored_bytes_by_dtype"] == {"BF16": 2 * 210_240}
    assert document["counts"] == {"parameter": 2 * 9 + 3}


def test_a_misnamed_tensor_is_not_ok_and_both_names_are_given(tmp_path, ffncalc):
    config = tiny_llama()
    tensors = llama_tensors(config)
    tensors["model.layers.0.mlp.up2_proj.weight"] = tensors.pop("model.layers.0.mlp.up_proj.weight")
    folder = write_checkpoint(tmp_path / "misnamed", config, tensors)
    report = verify(str(folder))
    assert not report.ok
    assert names_of(report, "unexpected") == ["model.layers.0.mlp.up2_proj.weight"]
    assert names_of(report, "missing") == ["model.layers.0.mlp.up_proj.weight"]
    run = ffncalc("verify", str(folder))
    assert run.exit_code == 1
    assert "model.layers.0.mlp.up2_proj.weight" in run.stdout and "model.layers.0.mlp.up_proj.weight" in run.stdout
    assert "NOT OK" in run.stdout


def test_a_tensor_of_the_wrong_shape_is_named_with_both_shapes(tmp_path):
    config = tiny_llama()
    tensors = llama_tensors(config) | {"model.layers.1.mlp.down_proj.weight": ("BF16", [64, 64])}
    report = verify(str(write_checkpoint(tmp_path / "shape", config, tensors)))
    assert not report.ok
    (wrong,) = [t for t in report.tensors if t.verdict == "wrong shape"]
    assert (wrong.name, wrong.shape, wrong.expected_shape) == (
        "model.layers.1.mlp.down_proj.weight",
        [64, 64],
        [64, 128],
    )


def test_an_unknown_tensor_is_named(tmp_path):
    config = tiny_llama()
    tensors = llama_tensors(config) | {"score.weight": ("BF16", [2, 64])}
    report = verify(str(write_checkpoint(tmp_path / "extra", config, tensors)))
    assert not report.ok
    assert names_of(report, "unexpected") == ["score.weight"]


def test_a_tied_head_that_is_stored_too_is_explained(tmp_path):
    # As Qwen/Qwen3-0.6B: tie_word_embeddings true, lm_head.weight stored anyway.
    config = tiny_llama(model_type="qwen3", head_dim=16, tie_word_embeddings=True, num_key_value_heads=2)
    tensors = llama_tensors(config)
    for i in range(2):
        tensors[f"model.layers.{i}.self_attn.q_norm.weight"] = ("BF16", [16])
        tensors[f"model.layers.{i}.self_attn.k_norm.weight"] = ("BF16", [16])
    report = verify(str(write_checkpoint(tmp_path / "qwen3", config, tensors)))
    assert report.ok, report.tensors[:3]
    (extra,) = report.extras
    assert (extra.kind, extra.elements) == ("tied head stored again", 1000 * 64)
    assert report.checkpoint_params == report.ffncalc_params


def gpt2_tensors(prefix=""):
    tensors = {prefix + "wte.weight": ("F32", [100, 32]), prefix + "wpe.weight": ("F32", [16, 32])}
    for i in range(2):
        for name, shape in {
            "ln_1.weight": [32],
            "ln_1.bias": [32],
            "attn.c_attn.weight": [32, 96],
            "attn.c_attn.bias": [96],
            "attn.c_proj.weight": [32, 32],
            "attn.c_proj.bias": [32],
            "ln_2.weight": [32],
            "ln_2.bias": [32],
            "mlp.c_fc.weight": [32, 128],
            "mlp.c_fc.bias": [128],
            "mlp.c_proj.weight": [128, 32],
            "mlp.c_proj.bias": [32],
        }.items():
            tensors[f"{prefix}h.{i}.{name}"] = ("F32", shape)
    return tensors | {prefix + "ln_f.weight": ("F32", [32]), prefix + "ln_f.bias": ("F32", [32])}


GPT2 = {"model_type": "gpt2", "vocab_size": 100, "n_embd": 32, "n_layer": 2, "n_head": 4, "n_positions": 16}


def test_gpt2_saved_from_the_base_model_without_its_prefix_is_read_as_transformers_reads_it(tmp_path):
    # openai-community/gpt2 stores h.0.attn.c_attn.weight (Conv1D: [in, out]), not transformer.h.0….
    tensors = gpt2_tensors() | {f"h.{i}.attn.bias": ("F32", [1, 1, 16, 16]) for i in range(2)}
    report = verify(str(write_checkpoint(tmp_path / "gpt2", GPT2, tensors)))
    assert report.ok, [t for t in report.tensors if t.verdict != "parameter"][:3]
    (extra,) = report.extras
    assert (extra.kind, extra.tensors, extra.elements) == ("attn.bias causal-mask buffers", 2, 2 * 16 * 16)


def test_gpt2_saved_with_the_prefix_is_ok_too(tmp_path):
    report = verify(str(write_checkpoint(tmp_path / "gpt2", GPT2, gpt2_tensors("transformer."))))
    assert report.ok


def test_mxfp4_blocks_and_scales_are_matched_to_the_experts_they_pack(tmp_path):
    # a gpt-oss layout: E experts, gate_up (2I × H) and down (H × I) packed as 16-byte blocks of 32 values,
    # one UE8M0 scale per block; everything else BF16.
    hidden, width, experts, vocab, heads, kv, head_dim = 64, 64, 4, 100, 4, 2, 16
    config = {
        "model_type": "gpt_oss",
        "vocab_size": vocab,
        "hidden_size": hidden,
        "intermediate_size": width,
        "num_hidden_layers": 1,
        "num_attention_heads": heads,
        "num_key_value_heads": kv,
        "head_dim": head_dim,
        "num_local_experts": experts,
        "num_experts_per_tok": 2,
        "torch_dtype": "bfloat16",
        "quantization_config": {
            "quant_method": "mxfp4",
            "modules_to_not_convert": ["model.layers.*.self_attn", "lm_head"],
        },
    }
    layer = "model.layers.0."
    tensors = {
        "model.embed_tokens.weight": ("BF16", [vocab, hidden]),
        layer + "self_attn.q_proj.weight": ("BF16", [heads * head_dim, hidden]),
        layer + "self_attn.q_proj.bias": ("BF16", [heads * head_dim]),
        layer + "self_attn.k_proj.weight": ("BF16", [kv * head_dim, hidden]),
        layer + "self_attn.k_proj.bias": ("BF16", [kv * head_dim]),
        layer + "self_attn.v_proj.weight": ("BF16", [kv * head_dim, hidden]),
        layer + "self_attn.v_proj.bias": ("BF16", [kv * head_dim]),
        layer + "self_attn.o_proj.weight": ("BF16", [hidden, heads * head_dim]),
        layer + "self_attn.o_proj.bias": ("BF16", [hidden]),
        layer + "self_attn.sinks": ("BF16", [heads]),
        layer + "mlp.router.weight": ("BF16", [experts, hidden]),
        layer + "mlp.router.bias": ("BF16", [experts]),
        layer + "mlp.experts.gate_up_proj_blocks": ("U8", [experts, 2 * width, hidden // 32, 16]),
        layer + "mlp.experts.gate_up_proj_scales": ("U8", [experts, 2 * width, hidden // 32]),
        layer + "mlp.experts.gate_up_proj_bias": ("BF16", [experts, 2 * width]),
        layer + "mlp.experts.down_proj_blocks": ("U8", [experts, hidden, width // 32, 16]),
        layer + "mlp.experts.down_proj_scales": ("U8", [experts, hidden, width // 32]),
        layer + "mlp.experts.down_proj_bias": ("BF16", [experts, hidden]),
        layer + "input_layernorm.weight": ("BF16", [hidden]),
        layer + "post_attention_layernorm.weight": ("BF16", [hidden]),
        "model.norm.weight": ("BF16", [hidden]),
        "lm_head.weight": ("BF16", [vocab, hidden]),
    }
    report = verify(str(write_checkpoint(tmp_path / "gpt-oss", config, tensors)))
    assert report.ok, [t for t in report.tensors if t.verdict != "parameter"][:4]
    weights = experts * 3 * width * hidden
    # two 4-bit values a byte, one byte of scale per 32 values
    assert report.stored_bytes_by_dtype["U8"] == weights // 2 + weights // 32
    assert report.counts["quantization"] == 2
    assert report.checkpoint_params == report.ffncalc_params


def test_fp8_scales_router_biases_and_mtp_layers_are_explained(tmp_path):
    # A tiny DeepSeek-V3: layer 0 dense, layer 1 MoE, and one multi-token-prediction module stored as layer 2.
    config = tiny_llama(
        model_type="deepseek_v3",
        q_lora_rank=None,
        kv_lora_rank=16,
        qk_nope_head_dim=8,
        qk_rope_head_dim=4,
        v_head_dim=8,
        n_routed_experts=2,
        num_experts_per_tok=1,
        n_shared_experts=1,
        moe_intermediate_size=32,
        first_k_dense_replace=1,
        num_nextn_predict_layers=1,
        num_key_value_heads=4,
        torch_dtype="bfloat16",
        quantization_config={
            "quant_method": "fp8",
            "fmt": "e4m3",
            "weight_block_size": [128, 128],
            "activation_scheme": "dynamic",
        },
    )
    hidden, heads = 64, 4

    def fp8(name, out_f, in_f):  # one F32 scale per 128 × 128 block: [ceil(out/128), ceil(in/128)]
        return {
            name + ".weight": ("F8_E4M3", [out_f, in_f]),
            name + ".weight_scale_inv": ("F32", [-(-out_f // 128), -(-in_f // 128)]),
        }

    def mla(layer):
        return (
            fp8(layer + "self_attn.q_proj", heads * 12, hidden)
            | fp8(layer + "self_attn.kv_a_proj_with_mqa", 16 + 4, hidden)
            | fp8(layer + "self_attn.kv_b_proj", heads * 16, 16)
            | fp8(layer + "self_attn.o_proj", hidden, heads * 8)
            | {
                layer + "self_attn.kv_a_layernorm.weight": ("BF16", [16]),
                layer + "input_layernorm.weight": ("BF16", [hidden]),
                layer + "post_attention_layernorm.weight": ("BF16", [hidden]),
            }
        )

    def mlp(prefix, width):
        return (
            fp8(prefix + "gate_proj", width, hidden)
            | fp8(prefix + "up_proj", width, hidden)
            | fp8(prefix + "down_proj", hidden, width)
        )

    tensors = {"model.embed_tokens.weight": ("BF16", [1000, hidden])}
    tensors.update(mla("model.layers.0.") | mlp("model.layers.0.mlp.", 128))
    for layer in ("model.layers.1.", "model.layers.2."):
        tensors.update(mla(layer) | mlp(layer + "mlp.shared_experts.", 32))
        tensors.update(mlp(layer + "mlp.experts.0.", 32) | mlp(layer + "mlp.experts.1.", 32))
        tensors[layer + "mlp.gate.weight"] = ("BF16", [2, hidden])
        tensors[layer + "mlp.gate.e_score_correction_bias"] = ("F32", [2])
    mtp = {
        "enorm.weight": [hidden],
        "hnorm.weight": [hidden],
        "eh_proj.weight": [hidden, 2 * hidden],
        "shared_head.norm.weight": [hidden],
        "shared_head.head.weight": [1000, hidden],
        "embed_tokens.weight": [1000, hidden],
    }
    tensors.update({"model.layers.2." + name: ("BF16", shape) for name, shape in mtp.items()})
    tensors.update({"model.norm.weight": ("BF16", [hidden]), "lm_head.weight": ("BF16", [1000, hidden])})
    report = verify(str(write_checkpoint(tmp_path / "deepseek", config, tensors)))
    assert report.ok, [t for t in report.tensors if t.verdict != "parameter"][:4]
    kinds = {extra.kind: extra for extra in report.extras}
    assert kinds["router e_score_correction_bias"].tensors == 1  # layer 1's; layer 2's is the MTP module's
    # every model.layers.2.* tensor: 4 FP8 projections and their scales, 3 norms, 3 + 6 expert weights and
    # their scales, the router weight and bias, and the 6 MTP tensors
    assert kinds["multi-token-prediction layers"].tensors == 8 + 3 + 18 + 2 + 6
    assert report.counts["quantization"] == 4 + 3 + 4 + 3 + 6  # layers 0 and 1: a scale per FP8 weight


def test_gptq_int4_weights_are_matched_with_their_zeros_scales_and_group_indices(tmp_path):
    config = tiny_llama(
        torch_dtype="float16", quantization_config={"quant_method": "gptq", "bits": 4, "group_size": 32}
    )
    tensors = llama_tensors(config, dtype="F16")
    for name in list(tensors):
        if ".layers." in name and name.endswith("_proj.weight"):
            _dtype, (out_f, in_f) = tensors.pop(name)
            module = name.removesuffix(".weight")
            # GPTQ: 8 int4 values per int32 along the input; a zero point and a scale per group of 32 inputs
            tensors |= {
                module + ".qweight": ("I32", [in_f // 8, out_f]),
                module + ".qzeros": ("I32", [in_f // 32, out_f // 8]),
                module + ".scales": ("F16", [in_f // 32, out_f]),
                module + ".g_idx": ("I32", [in_f]),
            }
    report = verify(str(write_checkpoint(tmp_path / "gptq", config, tensors)))
    assert report.ok, [t for t in report.tensors if t.verdict != "parameter"][:4]
    assert report.checkpoint_params == report.ffncalc_params


def test_a_mistral_folder_reads_the_shards_its_index_names_and_ignores_consolidated(tmp_path):
    config = tiny_llama()
    tensors = llama_tensors(config)
    folder = tmp_path / "mistral"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(config))
    first = {k: v for k, v in tensors.items() if ".layers.1." not in k}
    second = {k: v for k, v in tensors.items() if ".layers.1." in k}
    write_safetensors(folder / "model-00001-of-00002.safetensors", first)
    write_safetensors(folder / "model-00002-of-00002.safetensors", second)
    write_safetensors(folder / "consolidated.safetensors", tensors)  # Mistral's own format, the same weights
    weight_map = {k: "model-00001-of-00002.safetensors" for k in first} | {
        k: "model-00002-of-00002.safetensors" for k in second
    }
    (folder / "model.safetensors.index.json").write_text(
        json.dumps({"metadata": {"total_size": 2 * 210_240}, "weight_map": weight_map})
    )
    report = verify(str(folder))
    assert report.ok
    assert report.ignored == ["consolidated.safetensors"]
    assert report.files == ["model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"]


def test_a_shard_the_index_names_but_the_folder_lacks_is_named(tmp_path):
    config = tiny_llama()
    tensors = llama_tensors(config)
    folder = tmp_path / "partial"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(config))
    first = {k: v for k, v in tensors.items() if ".layers.1." not in k}
    write_safetensors(folder / "model-00001-of-00002.safetensors", first)
    weight_map = {
        k: "model-00001-of-00002.safetensors" if k in first else "model-00002-of-00002.safetensors" for k in tensors
    }
    (folder / "model.safetensors.index.json").write_text(json.dumps({"weight_map": weight_map}))
    report = verify(str(folder))
    assert not report.ok
    assert report.missing_files == ["model-00002-of-00002.safetensors"]


def test_an_index_alone_is_matched_by_name_and_by_total_size(tmp_path):
    config = tiny_llama(torch_dtype="bfloat16")
    folder = tmp_path / "indexed"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(config))
    total = 2 * 210_240  # bytes of the hand count in BF16
    index = {
        "metadata": {"total_size": total},
        "weight_map": {name: "model-00001-of-00001.safetensors" for name in llama_tensors(config)},
    }
    (folder / "model.safetensors.index.json").write_text(json.dumps(index))
    report = verify(str(folder))
    assert report.index_only and set(report.counts) == {"parameter"}
    assert report.expected_bytes == report.index_total_size == total
    # the names and the size agree, but the shard is not there: a missing file, not OK (issue 22)
    assert report.missing_files == ["model-00001-of-00001.safetensors"] and not report.ok


@pytest.mark.parametrize("index", sorted(path.stem for path in INDEXES.glob("*.json")))
def test_every_tensor_of_a_real_index_is_explained_and_its_bytes_equal_total_size(tmp_path, index):
    shutil.copy(BUNDLED / f"{index}.json", tmp_path / "config.json")
    shutil.copy(INDEXES / f"{index}.json", tmp_path / "model.safetensors.index.json")
    report = verify(str(tmp_path))
    assert set(report.counts) <= {"parameter", "extra"}
    stored = json.loads((INDEXES / f"{index}.json").read_text())
    assert report.expected_bytes == stored["metadata"]["total_size"]
    assert report.missing_files == sorted(set(stored["weight_map"].values())) and not report.ok  # no shard here


def test_falcon_7b_instruct_stores_its_tied_head_again(tmp_path):
    # The index names lm_head.weight; Falcon ties it: 65,024 × 4,544 BF16 elements stored twice.
    shutil.copy(BUNDLED / "tiiuae__falcon-7b-instruct.json", tmp_path / "config.json")
    shutil.copy(INDEXES / "tiiuae__falcon-7b-instruct.json", tmp_path / "model.safetensors.index.json")
    (extra,) = verify(str(tmp_path)).extras
    assert extra.kind == "tied head stored again"


def test_t5_encoder_and_decoder_blocks_are_matched_to_their_own_stack(tmp_path):
    # t5-small's layout, written by hand: shared table, encoder and decoder blocks numbered from 0 each,
    # relative bias in block 0 of each stack (and, as the original checkpoints do, in decoder block 0's
    # cross-attention too, which no module uses).
    config = {
        "model_type": "t5",
        "vocab_size": 100,
        "d_model": 16,
        "d_kv": 4,
        "d_ff": 32,
        "num_layers": 2,
        "num_decoder_layers": 2,
        "num_heads": 4,
        "relative_attention_num_buckets": 8,
        "feed_forward_proj": "relu",
    }
    attention = {name: ("F32", [16, 16]) for name in ("q.weight", "k.weight", "v.weight", "o.weight")}
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
    assert report.ok, [t for t in report.tensors if t.verdict != "parameter"][:4]
    (extra,) = report.extras
    assert (extra.kind, extra.elements) == ("decoder cross-attention relative_attention_bias", 8 * 4)


# --- corrupt checkpoints -----------------------------------------------------------------------
# The rules a header shares with the Hub's (dtype, shape, offsets, spans) are held on both paths with the same
# headers in tests/test_header_validation.py; here, what only a folder's file can break.


def write_header(folder, header: dict, data: int):
    folder.mkdir(exist_ok=True)
    (folder / "config.json").write_text(json.dumps(tiny_llama()))
    encoded = json.dumps(header).encode()
    path = folder / "model.safetensors"
    with path.open("wb") as handle:
        handle.write(len(encoded).to_bytes(8, "little") + encoded)
        handle.truncate(8 + len(encoded) + data)
    return folder


@pytest.mark.parametrize(
    ("entry", "data", "message"),
    [
        (
            {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]},
            8,
            "the header describes 16 bytes of data but the file holds 8",
        ),
        ({"dtype": "F32", "shape": [2, 2], "data_offsets": [-4, 12]}, 16, "not [begin, end]"),
        ({"dtype": "F32", "shape": [2, 2]}, 16, "not [begin, end]"),
        ({"dtype": "F32", "shape": [2, "2"], "data_offsets": [0, 16]}, 16, "not a list of sizes"),
    ],
)
def test_a_corrupt_header_is_refused_naming_the_tensor(ffncalc, tmp_path, entry, data, message):
    folder = write_header(tmp_path / "corrupt", {"model.embed_tokens.weight": entry}, data)
    run = ffncalc("verify", str(folder))
    assert run.exit_code == 6, run.stderr
    assert message in run.stderr
    assert run.stdout == "" and run.stderr.startswith("Error: ") and run.stderr.count("\n") == 1


def test_a_header_longer_than_the_format_allows_is_refused(ffncalc, tmp_path):
    folder = tmp_path / "huge"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(tiny_llama()))
    (folder / "model.safetensors").write_bytes((10**12).to_bytes(8, "little"))
    run = ffncalc("verify", str(folder))
    assert run.exit_code == 6
    assert "exceeds the format's 100 MB limit" in run.stderr


@pytest.mark.parametrize("header", [b"not json", b"[1, 2]", json.dumps({"x": {"dtype": "F32"}}).encode()])
def test_a_malformed_header_is_a_one_line_error(ffncalc, tmp_path, header):
    folder = tmp_path / "malformed"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(tiny_llama()))
    (folder / "model.safetensors").write_bytes(len(header).to_bytes(8, "little") + header)
    run = ffncalc("verify", str(folder))
    assert run.exit_code == 6
    assert run.stderr.startswith("Error: ") and run.stderr.count("\n") == 1


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
def test_a_fifo_in_place_of_the_checkpoint_is_refused_without_waiting(ffncalc, tmp_path):
    folder = tmp_path / "fifo"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(tiny_llama()))
    os.mkfifo(folder / "model.safetensors")
    run = ffncalc("verify", str(folder))
    assert run.exit_code == 6
    assert "not a regular file" in run.stderr


def test_a_folder_without_weights_is_a_one_line_error(ffncalc, write_config):
    run = ffncalc("verify", str(write_config(tiny_llama()).parent))
    assert run.exit_code == 2
    assert "no model.safetensors and no model.safetensors.index.json" in run.stderr
    assert run.stderr.count("\n") == 1


def test_a_preset_has_no_checkpoint_and_never_goes_to_the_hub(ffncalc):
    run = ffncalc("verify", "gpt3-175b")
    assert run.exit_code == 2
    assert "is a preset" in run.stderr


def test_safetensors_header_helper_round_trips():
    blob = safetensors_header({"a": ("F32", [2, 3])})
    length = int.from_bytes(blob[:8], "little")
    assert json.loads(blob[8 : 8 + length]) == {"a": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]}}


# --- parameters transformers does not save ----------------------------------------------------------------


def config_and_saved(stem: str) -> tuple[dict, dict[str, tuple[str, list[int]]]]:
    """A synthetic config of tests/configs, and the tensors transformers 5.24 wrote when it saved the model the
    config builds (save_pretrained in the side venv: tests/expected/saved__<stem>.json)."""
    here = Path(__file__).parent
    saved = json.loads((here / "expected" / f"saved__{stem}.json").read_text())["tensors"]
    config = json.loads((here / "configs" / f"{stem}.json").read_text())
    return config, {name: (dtype, shape) for name, (dtype, shape) in saved.items()}


MARIAN, MARIAN_SAVED = config_and_saved("synthetic__marian")  # MarianMTModel
# Each stack's sinusoidal table: max_position_embeddings 128 rows of d_model 64.
POSITION_TABLES = {f"model.{stack}.embed_positions.weight": ("F32", [128, 64]) for stack in ("encoder", "decoder")}


def test_a_marian_checkpoint_as_transformers_saves_it_is_ok_without_its_position_tables(tmp_path):
    report = verify(str(write_checkpoint(tmp_path / "m", MARIAN, MARIAN_SAVED)))
    assert report.ok
    assert report.counts["not saved"] == 2 and "missing" not in report.counts
    # transformers counts 271,216 parameters for this model (tests/expected/transformers); the checkpoint holds
    # all but the two tables of 128 × 64.
    assert report.ffncalc_params == 271_216
    assert report.checkpoint_params == 271_216 - 2 * 128 * 64 == 254_832
    assert {t.name for t in report.tensors if t.verdict == "not saved"} == set(POSITION_TABLES)


def test_a_marian_checkpoint_that_holds_its_position_tables_is_ok_too(tmp_path):
    report = verify(str(write_checkpoint(tmp_path / "m", MARIAN, {**MARIAN_SAVED, **POSITION_TABLES})))
    assert report.ok
    assert "not saved" not in report.counts
    assert report.checkpoint_params == 271_216


def test_the_base_marian_model_saves_its_position_tables_so_their_absence_is_missing(tmp_path):
    # MarianModel declares no _keys_to_ignore_on_save (modeling_marian.py); only MarianMTModel does.
    base = {**MARIAN, "architectures": ["MarianModel"]}
    saved = {name.removeprefix("model."): spec for name, spec in MARIAN_SAVED.items() if name.startswith("model.")}
    report = verify(str(write_checkpoint(tmp_path / "m", base, saved)))
    assert not report.ok
    assert report.counts["missing"] == 2


def test_an_index_of_a_marian_checkpoint_without_its_position_tables_gives_the_size_it_states(tmp_path):
    folder = tmp_path / "m"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({**MARIAN, "torch_dtype": "float32"}))
    # F32: 4 bytes an element, over every tensor transformers saved (position tables not among them).
    total = sum(4 * math.prod(shape) for _, shape in MARIAN_SAVED.values())
    index = {"metadata": {"total_size": total}, "weight_map": dict.fromkeys(MARIAN_SAVED, "model.safetensors")}
    (folder / "model.safetensors.index.json").write_text(json.dumps(index))
    report = verify(str(folder))
    assert report.index_only and report.missing_files == ["model.safetensors"] and not report.ok
    assert set(report.counts) <= {"parameter", "not saved", "extra"}
    assert report.expected_bytes == total == 4 * (254_832 + 1_000)  # the parameters saved, and final_logits_bias


# --- layouts transformers converts on load ------------------------------------------------------------------

QWEN3_VL_MOE, QWEN3_VL_MOE_SAVED = config_and_saved("synthetic__qwen3_vl_moe")  # ...ForConditionalGeneration


def published_layout(tensors):
    """The experts as published Qwen3-VL-MoE checkpoints store them: axes 1 and 2 swapped, which transformers'
    conversion_mapping.py ("qwen3_vl_moe": Transpose(1, 2, check_dims=True)) undoes on load."""
    return {
        name: (
            dtype,
            [shape[0], shape[2], shape[1]] if name.endswith(("experts.gate_up_proj", "experts.down_proj")) else shape,
        )
        for name, (dtype, shape) in tensors.items()
    }


def test_a_qwen3_vl_moe_checkpoint_as_transformers_saves_it_is_ok(tmp_path):
    report = verify(str(write_checkpoint(tmp_path / "q", QWEN3_VL_MOE, QWEN3_VL_MOE_SAVED)))
    assert report.ok
    assert report.checkpoint_params == report.ffncalc_params == 345_376  # transformers' count of the model


def test_qwen3_vl_moe_experts_stored_as_published_are_ok_as_transformers_transposes_them_on_load(tmp_path):
    report = verify(str(write_checkpoint(tmp_path / "q", QWEN3_VL_MOE, published_layout(QWEN3_VL_MOE_SAVED))))
    assert report.ok
    swapped = [t for t in report.tensors if t.reason and "transposes it on load" in t.reason]
    # two layers, each with gate_up_proj [4, 64, 96] (to [4, 96, 64]) and down_proj [4, 48, 64] (to [4, 64, 48])
    assert sorted(t.shape for t in swapped) == [[4, 48, 64], [4, 48, 64], [4, 64, 96], [4, 64, 96]]
    assert report.checkpoint_params == 345_376


def test_a_tensor_transformers_does_not_transpose_is_a_wrong_shape_when_swapped(tmp_path):
    name = "model.language_model.layers.0.self_attn.k_proj.weight"  # [2 kv heads · 16, 64]
    dtype, shape = QWEN3_VL_MOE_SAVED[name]
    tensors = {**QWEN3_VL_MOE_SAVED, name: (dtype, shape[::-1])}
    report = verify(str(write_checkpoint(tmp_path / "q", QWEN3_VL_MOE, tensors)))
    assert not report.ok
    assert [t.name for t in report.tensors if t.verdict == "wrong shape"] == [name]


# --- an index that disagrees with its shards ----------------------------------------------------------------


def two_shards(tmp_path, edit_map=None, total=None):
    """tiny_llama in two shards (layer 1 in the second) and an index naming them; EDIT_MAP changes the weight_map."""
    config = tiny_llama(torch_dtype="bfloat16")
    tensors = llama_tensors(config)
    folder = tmp_path / "sharded"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(config))
    first = {k: v for k, v in tensors.items() if ".layers.1." not in k}
    second = {k: v for k, v in tensors.items() if ".layers.1." in k}
    write_safetensors(folder / "model-00001-of-00002.safetensors", first)
    write_safetensors(folder / "model-00002-of-00002.safetensors", second)
    weight_map = dict.fromkeys(first, "model-00001-of-00002.safetensors") | dict.fromkeys(
        second, "model-00002-of-00002.safetensors"
    )
    if edit_map is not None:
        edit_map(weight_map)
    # 210,240 parameters in BF16 (the hand count of tiny_llama in this file)
    index = {"metadata": {"total_size": 2 * 210_240 if total is None else total}, "weight_map": weight_map}
    (folder / "model.safetensors.index.json").write_text(json.dumps(index))
    return folder


def test_an_index_that_agrees_with_its_shards_is_ok(tmp_path):
    report = verify(str(two_shards(tmp_path)))
    assert report.ok and report.index_problems == []


def test_a_stored_tensor_the_index_does_not_list_is_an_index_problem(tmp_path):
    report = verify(str(two_shards(tmp_path, lambda m: m.pop("model.norm.weight"))))
    assert not report.ok
    assert report.index_problems == [
        "1 stored tensor(s) the index does not list (transformers does not load them): model.norm.weight"
    ]


def test_an_index_entry_no_shard_stores_is_an_index_problem(tmp_path):
    extra = lambda m: m.update({"model.layers.0.mlp.extra.weight": "model-00001-of-00002.safetensors"})  # noqa: E731
    report = verify(str(two_shards(tmp_path, extra)))
    assert not report.ok
    assert report.index_problems == ["1 index entr(y/ies) no shard stores: model.layers.0.mlp.extra.weight"]


def test_a_tensor_listed_under_the_wrong_shard_is_an_index_problem(tmp_path):
    moved = lambda m: m.update({"model.norm.weight": "model-00002-of-00002.safetensors"})  # noqa: E731
    report = verify(str(two_shards(tmp_path, moved)))
    assert not report.ok
    assert report.index_problems == [
        "1 tensor(s) stored in another shard than the index names: model.norm.weight (model-00001-of-00002.safetensors)"
    ]


def test_a_shard_beside_the_index_that_it_does_not_name_is_an_index_problem(tmp_path):
    folder = two_shards(tmp_path)
    write_safetensors(folder / "model-00003-of-00003.safetensors", {"x.weight": ("BF16", [2])})
    report = verify(str(folder))
    assert not report.ok
    assert report.index_problems == [
        "1 shard(s) beside the index that it does not name: model-00003-of-00003.safetensors"
    ]


def test_a_total_size_off_from_the_shards_sum_is_an_index_problem(tmp_path):
    report = verify(str(two_shards(tmp_path, total=2 * 210_240 + 2)))
    assert not report.ok
    assert report.index_problems == ["metadata.total_size is 420,482 bytes; the shards' tensors hold 420,480"]


def test_verify_exits_1_on_a_folder_with_an_index_and_none_of_its_shards(tmp_path, ffncalc):
    folder = two_shards(tmp_path)
    for shard in folder.glob("model-*.safetensors"):
        shard.unlink()
    run = ffncalc("verify", str(folder))
    assert run.exit_code == 1
    assert "Missing file: model-00001-of-00002.safetensors (the index names it)" in run.stdout
