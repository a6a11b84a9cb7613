"""quantization_config: validated at the border as each scheme's loader validates it, and laid out as each packer
writes it (GPTQ at every bit width, MXFP4's exclusions, ModelOpt NVFP4 and FP8, a block nested under text_config)."""

import json

import pytest

from ffncalc.api import memory, verify

from .checkpoints import llama_tensors, write_checkpoint
from .conftest import BUNDLED, tiny_llama

LLAMA = json.loads((BUNDLED / "meta-llama__Llama-3.1-8B.json").read_text())

# tiny_llama's linear layers as (in_features, out_features), per layer: q, k, v, o (64 → 64), gate and up
# (64 → 128), down (128 → 64); 2 layers. Everything else (embedding 1000 × 64, untied head 1000 × 64, 5 norms of
# 64) stays in the config's dtype.
TINY_LINEARS = [(64, 64)] * 4 + [(64, 128)] * 2 + [(128, 64)]
TINY_UNQUANTIZED_ELEMENTS = 2 * 1000 * 64 + 5 * 64


def gptq_bytes(in_f: int, out_f: int, bits: int, group: int) -> int:
    """AutoGPTQ's QuantLinear buffers (auto_gptq/nn_modules/qlinear/qlinear_cuda_old.py, AutoGPTQ 0.7):
    qweight int32 [in // 32 · bits, out], qzeros int32 [ceil(in / group), out // 32 · bits],
    scales float16 [ceil(in / group), out], g_idx int32 [in]."""
    groups = -(-in_f // group)
    return 4 * (in_f // 32 * bits) * out_f + 4 * groups * (out_f // 32 * bits) + 2 * groups * out_f + 4 * in_f


def test_gptq_3_bit_weights_take_the_bytes_autogptq_packs_them_in(write_config):
    quantized = {"quant_method": "gptq", "bits": 3, "group_size": 32}
    report = memory(str(write_config(tiny_llama(torch_dtype="float16", quantization_config=quantized))))
    linear = 2 * sum(gptq_bytes(i, o, 3, 32) for i, o in TINY_LINEARS)
    # q (64 → 64): qweight 4·6·64 + qzeros 4·2·6 + scales 2·2·64 + g_idx 4·64 = 2,096 bytes; gate (64 → 128):
    # 4·6·128 + 4·2·12 + 2·2·128 + 4·64 = 3,936; down (128 → 64): 4·12·64 + 4·4·6 + 2·4·64 + 4·128 = 4,192
    assert linear == 2 * (4 * 2_096 + 2 * 3_936 + 4_192)
    assert report.weights.bytes == linear + 2 * TINY_UNQUANTIZED_ELEMENTS


def test_a_correctly_packed_3_bit_gptq_checkpoint_verifies(tmp_path):
    config = tiny_llama(torch_dtype="float16", quantization_config={"quant_method": "gptq", "bits": 3})
    tensors = llama_tensors(config, dtype="F16")
    for name in list(tensors):
        if ".layers." in name and name.endswith("_proj.weight"):
            _dtype, (out_f, in_f) = tensors.pop(name)
            module = name.removesuffix(".weight")
            groups = -(-in_f // 128)  # GPTQConfig's default group_size, 128
            tensors |= {
                module + ".qweight": ("I32", [in_f // 32 * 3, out_f]),  # 32 values in 3 words
                module + ".qzeros": ("I32", [groups, out_f // 32 * 3]),
                module + ".scales": ("F16", [groups, out_f]),
                module + ".g_idx": ("I32", [in_f]),
            }
    report = verify(str(write_checkpoint(tmp_path / "gptq3", config, tensors)))
    assert report.ok, [t for t in report.tensors if t.verdict != "parameter"][:4]


def test_mxfp4_modules_to_not_convert_naming_the_experts_keeps_them_in_bf16(write_config):
    # transformers' replace_with_mxfp4_linear asks should_convert_module(f"{mlp}.experts", modules_to_not_convert).
    # The Hub's safetensors counts for gpt-oss-20b (tests/reference/ground_truth.json): 1,804,459,584 BF16 elements
    # besides the experts' 24 × 32 × 3 × 2,880 × 2,880 = 19,110,297,600 weights; all of them in BF16 here.
    config = json.loads((BUNDLED / "openai__gpt-oss-20b.json").read_text())
    config["quantization_config"]["modules_to_not_convert"].append("model.layers.*.mlp.experts")
    report = memory(str(write_config(config)))
    assert report.weights.bytes == 2 * (1_804_459_584 + 19_110_297_600)


def test_mxfp4_without_exclusions_of_the_experts_packs_them():
    # The same Hub counts: the U8 blocks hold two 4-bit values a byte, one U8 scale per 32 values.
    report = memory("openai/gpt-oss-20b")
    weights = 19_110_297_600
    assert report.weights.bytes == 2 * 1_804_459_584 + weights // 2 + weights // 32


def test_modelopt_nvfp4_is_read_with_its_fp8_group_scales_and_global_scales(write_config):
    # vLLM's ModelOptNvFp4LinearMethod (modelopt.py): weight U8 [out, in // 2], weight_scale F8_E4M3
    # [out, in // 16], weight_scale_2 and input_scale float32 scalars, per linear layer; lm_head ignored.
    quantized = {"quant_method": "modelopt", "quant_algo": "NVFP4", "group_size": 16, "ignore": ["lm_head"]}
    report = memory(str(write_config(tiny_llama(torch_dtype="bfloat16", quantization_config=quantized))))
    per_layer = sum(o * i // 2 + o * i // 16 + 4 + 4 for i, o in TINY_LINEARS)
    assert report.weights.bytes == 2 * per_layer + 2 * TINY_UNQUANTIZED_ELEMENTS
    assert report.weights.quantization == "modelopt-nvfp4"


def test_modelopt_fp8_is_read_with_its_per_tensor_scales(write_config):
    # vLLM's ModelOptFp8LinearMethod: weight F8_E4M3 [out, in], weight_scale and input_scale float32 per module.
    quantized = {"quant_method": "modelopt", "quant_algo": "fp8", "ignore": ["lm_head"]}
    report = memory(str(write_config(tiny_llama(torch_dtype="bfloat16", quantization_config=quantized))))
    per_layer = sum(o * i + 4 + 4 for i, o in TINY_LINEARS)
    assert report.weights.bytes == 2 * per_layer + 2 * TINY_UNQUANTIZED_ELEMENTS


def test_fbgemm_fp8_stores_fp8_weights_with_a_float32_scale_per_output_row(write_config):
    # transformers 5.24 integrations/fbgemm_fp8.py, FbgemmFp8Linear's state_dict on the meta device (4,096 → 1,024):
    # weight float8_e4m3fn (1024, 4096), weight_scale float32 (1024, 1). Per linear layer: out · in + 4 · out bytes.
    quantized = {"quant_method": "fbgemm_fp8", "activation_scale_ub": 1200.0}
    report = memory(str(write_config(tiny_llama(torch_dtype="bfloat16", quantization_config=quantized))))
    per_layer = sum(o * i + 4 * o for i, o in TINY_LINEARS)
    assert report.weights.bytes == 2 * per_layer + 2 * TINY_UNQUANTIZED_ELEMENTS
    assert report.weights.quantization == "fbgemm_fp8"


def test_eetq_stores_int8_weights_input_major_with_a_float16_scale_per_output(write_config):
    # integrations/eetq.py, EetqLinear's state_dict (4,096 → 1,024): weight int8 (4096, 1024), weight_scales
    # float16 (1024,). Per linear layer: in · out + 2 · out bytes.
    quantized = {"quant_method": "eetq", "weights": "int8"}
    report = memory(str(write_config(tiny_llama(torch_dtype="bfloat16", quantization_config=quantized))))
    per_layer = sum(i * o + 2 * o for i, o in TINY_LINEARS)
    assert report.weights.bytes == 2 * per_layer + 2 * TINY_UNQUANTIZED_ELEMENTS


def test_bitnet_packs_four_ternary_weights_a_byte_with_one_scale_per_module(write_config):
    # integrations/bitnet.py, BitLinear's state_dict (4,096 → 1,024, bfloat16): weight uint8 (256, 4096),
    # weight_scale bfloat16 (1,). Per linear layer: out // 4 · in + 2 bytes.
    quantized = {"quant_method": "bitnet", "linear_class": "bitlinear", "quantization_mode": "offline"}
    report = memory(str(write_config(tiny_llama(torch_dtype="bfloat16", quantization_config=quantized))))
    per_layer = sum(o // 4 * i + 2 for i, o in TINY_LINEARS)
    assert report.weights.bytes == 2 * per_layer + 2 * TINY_UNQUANTIZED_ELEMENTS


def test_bitnets_autobitlinear_keeps_16_bit_weights_and_says_a_checkpoint_may_pack_them(write_config):
    # AutoBitLinear's state_dict (offline, bfloat16): weight bfloat16 (out, in) and weight_scale bfloat16 (1,).
    quantized = {"quant_method": "bitnet", "linear_class": "autobitlinear", "quantization_mode": "offline"}
    report = memory(str(write_config(tiny_llama(torch_dtype="bfloat16", quantization_config=quantized))))
    per_layer = sum(2 * o * i + 2 for i, o in TINY_LINEARS)
    assert report.weights.bytes == 2 * per_layer + 2 * TINY_UNQUANTIZED_ELEMENTS
    assert any("packed four to a byte" in note for note in report.notes)


@pytest.mark.parametrize(
    "books, nbits, code_bytes",
    [(1, 16, 2), (2, 8, 1)],  # aqlm/utils.py get_int_dtype: int16 codes for 16-bit codebooks, int8 for 8-bit
)
def test_aqlm_stores_codes_codebooks_and_scales_as_aqlms_quantized_linear(write_config, books, nbits, code_bytes):
    # aqlm 1.x inference.py, QuantizedLinear (in_group_size 8, out_group_size 1), per linear layer: codes
    # [out, in // 8, books] of code_bytes, codebooks [books, 2^nbits, 1, 8] and scales [out, 1, 1, 1] in bfloat16.
    quantized = {"quant_method": "aqlm", "in_group_size": 8, "out_group_size": 1, "num_codebooks": books,
                 "nbits_per_codebook": nbits, "linear_weights_not_to_quantize": ["lm_head.weight"]}  # fmt: skip
    report = memory(str(write_config(tiny_llama(torch_dtype="bfloat16", quantization_config=quantized))))
    per_layer = sum(code_bytes * o * (i // 8) * books + 2 * books * (1 << nbits) * 8 + 2 * o for i, o in TINY_LINEARS)
    assert report.weights.bytes == 2 * per_layer + 2 * TINY_UNQUANTIZED_ELEMENTS


def test_metal_packs_weights_in_uint32_with_scales_and_biases_per_group_in_the_models_dtype(write_config):
    # transformers 5.24 integrations/metal_quantization.py: MetalLinear's state_dict on the meta device (4-bit, group
    # 64, 4,096 → 1,024): weight uint32 (1024, 512), scales and qbiases (1024, 64); MetalQuantize saves scales and
    # qbiases in the model's dtype (bfloat16 on a bfloat16 tensor). Per linear layer, 4-bit, group 32, bfloat16:
    # out · in / 8 words of 4 bytes + 2 tensors · out · in / 32 · 2 bytes. Whole model, as replace_with_metal_linear on
    # tiny_llama's LlamaForCausalLM on the meta device in the side venv adds it up: 307,840 bytes.
    quantized = {"quant_method": "metal", "bits": 4, "group_size": 32}
    report = memory(str(write_config(tiny_llama(torch_dtype="bfloat16", quantization_config=quantized))))
    per_layer = sum(4 * o * i // 8 + 2 * 2 * o * (i // 32) for i, o in TINY_LINEARS)
    assert per_layer == 4 * 2_560 + 2 * 5_120 + 5_120  # q: 2,048 + 512; gate: 4,096 + 1,024; down: 4,096 + 1,024
    assert report.weights.bytes == 2 * per_layer + 2 * TINY_UNQUANTIZED_ELEMENTS == 307_840
    assert report.weights.quantization == "metal"


def test_a_metal_checkpoint_as_metal_quantize_saves_it_verifies(tmp_path):
    # MetalQuantize.convert: {name}.weight uint32 [out, in // 8] (4-bit), {name}.scales and {name}.qbiases
    # [out, in // 64] in the tensor's dtype (bfloat16 here).
    config = tiny_llama(torch_dtype="bfloat16", quantization_config={"quant_method": "metal", "bits": 4})
    tensors = llama_tensors(config, dtype="BF16")
    for name in list(tensors):
        if ".layers." in name and name.endswith("_proj.weight"):
            _dtype, (out_f, in_f) = tensors.pop(name)
            module = name.removesuffix(".weight")
            tensors |= {
                name: ("U32", [out_f, in_f // 8]),
                module + ".scales": ("BF16", [out_f, in_f // 64]),
                module + ".qbiases": ("BF16", [out_f, in_f // 64]),
            }
    report = verify(str(write_checkpoint(tmp_path / "metal", config, tensors)))
    assert report.ok, [t for t in report.tensors if t.verdict != "parameter"][:4]


def test_gemma_stores_each_module_at_the_width_its_first_matching_pattern_gives(write_config):
    # integrations/gemma_quant.py, QuantizedLinear on the meta device: int8 weight [out, in]; int4 and int2 packed in
    # uint8 [out, ⌈in / 2⌉] and [out, ⌈in / 4⌉]; weight_scale float32 [out, 1]; input_ and output_activation_scale
    # float32 scalars (8 bytes). replace_with_quant_layers searches one alternation of the patterns, so in
    # "mlp.down_proj" the earlier "mlp" (2 bits) wins over "proj$" (8 bits), listed first: attention 8-bit, the FFN
    # 2-bit. Whole model, as replace_with_quant_layers on tiny_llama's LlamaForCausalLM (meta device) adds it up:
    # 306,416 bytes.
    quantized = {"quant_method": "gemma", "num_bits": 4, "module_quant_configs": {"proj$": {"num_bits": 8},
                 "mlp": {"num_bits": 2}}}  # fmt: skip
    report = memory(str(write_config(tiny_llama(torch_dtype="bfloat16", quantization_config=quantized))))
    attention = 4 * (64 * 64 + 4 * 64 + 8)  # 8-bit
    ffn = 2 * (128 * (64 // 4) + 4 * 128 + 8) + (64 * (128 // 4) + 4 * 64 + 8)  # 2-bit gate, up and down
    assert report.weights.bytes == 2 * (attention + ffn) + 2 * TINY_UNQUANTIZED_ELEMENTS == 306_416


def test_fp_quant_nvfp4_stores_packed_values_e4m3_scales_global_scales_and_its_rotations(write_config):
    # fp_quant 0.3.2 fp_quant/module/linear.py, FPQuantLinear (built on the meta device in a side venv, 4,096 →
    # 1,024, bfloat16, NVFP4, hadamard_group_size 16): qweight uint8 (1024, 2048), scales uint8 (1024, 256),
    # weight_global_scale and act_global_scale bfloat16 (1,), forward_ and backward_hadamard_matrix bfloat16 (16, 16);
    # pre_forward drops weight and dqweight before a save. FPQuantConfig's defaults: nvfp4, hadamard 16, lm_head
    # left out. Per linear layer: out · in / 2 + out · in / 16 + 2 · 2 + 2 · 16 · 16 · 2 bytes.
    report = memory(
        str(write_config(tiny_llama(torch_dtype="bfloat16", quantization_config={"quant_method": "fp_quant"})))
    )
    per_layer = sum(o * i // 2 + o * i // 16 + 4 + 1_024 for i, o in TINY_LINEARS)
    assert report.weights.bytes == 2 * per_layer + 2 * TINY_UNQUANTIZED_ELEMENTS
    assert report.weights.quantization == "fp_quant"


def test_fp_quant_mxfp4_keeps_one_e8m0_scale_per_32_values_and_rotations_of_its_hadamard_size(write_config):
    # The same class with forward_dtype mxfp4 and hadamard_group_size 64: scales uint8 [out, in // 32], the two
    # rotation matrices 64 × 64 in bfloat16.
    quantized = {"quant_method": "fp_quant", "forward_dtype": "mxfp4", "hadamard_group_size": 64}
    report = memory(str(write_config(tiny_llama(torch_dtype="bfloat16", quantization_config=quantized))))
    per_layer = sum(o * i // 2 + o * i // 32 + 4 + 2 * 64 * 64 * 2 for i, o in TINY_LINEARS)
    assert report.weights.bytes == 2 * per_layer + 2 * TINY_UNQUANTIZED_ELEMENTS


def test_auto_round_auto_gptq_export_stores_gptqs_tensors_without_g_idx(write_config):
    # auto-round 0.16.1: export_to_autoround/export.py pack_layer builds auto_round_extension/torch/qlinear_torch_zp.py's
    # QuantLinear without g_idx; on the meta device (4-bit, group 128, 4,096 → 1,024) its buffers are qweight int32
    # (512, 1024), qzeros int32 (32, 128) and scales float16 (32, 1024). Per linear layer, 4-bit, group 32:
    # 4 · in / 32 · 4 · out + 4 · ⌈in / 32⌉ · out / 32 · 4 + 2 · ⌈in / 32⌉ · out bytes; only model.layers is quantized.
    quantized = {"quant_method": "auto-round", "bits": 4, "group_size": 32, "sym": True,
                 "packing_format": "auto_round:auto_gptq", "block_name_to_quantize": "model.layers"}  # fmt: skip
    report = memory(str(write_config(tiny_llama(torch_dtype="bfloat16", quantization_config=quantized))))
    per_layer = sum(
        4 * (i // 32 * 4) * o + 4 * -(-i // 32) * (o // 32 * 4) + 2 * -(-i // 32) * o for i, o in TINY_LINEARS
    )
    assert per_layer == 4 * 2_368 + 2 * 4_736 + 4_736  # q: 2,048 + 64 + 256; gate: 4,096 + 128 + 512; down: the same
    assert report.weights.bytes == 2 * per_layer + 2 * TINY_UNQUANTIZED_ELEMENTS


def test_auto_round_leaves_modules_outside_block_name_to_quantize_unquantized(write_config):
    quantized = {"quant_method": "auto-round", "bits": 4, "group_size": 32, "packing_format": "auto_round:auto_gptq",
                 "block_name_to_quantize": ["model.layers.1"]}  # fmt: skip
    report = memory(str(write_config(tiny_llama(torch_dtype="bfloat16", quantization_config=quantized))))
    layer_16_bit = 2 * sum(i * o for i, o in TINY_LINEARS)  # layer 0 as stored in bfloat16
    layer_4_bit = 4 * 2_368 + 2 * 4_736 + 4_736  # layer 1, as in the test above
    assert report.weights.bytes == layer_16_bit + layer_4_bit + 2 * TINY_UNQUANTIZED_ELEMENTS


TINY_MODULES = [
    f"model.layers.{layer}.{module}"
    for layer in range(2)
    for module in ("self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj", "self_attn.o_proj", "mlp.gate_proj",
                   "mlp.up_proj", "mlp.down_proj")
]  # fmt: skip


def test_higgs_stores_flute_packed_int16_words_group_scales_and_its_two_tables(write_config):
    # What transformers 4.x's HiggsHfQuantizer.create_quantized_param set on each HiggsLinear: quantize_with_higgs's
    # output (transformers 5.24 integrations/higgs.py), packed by FLUTE 0.4.2 (flute/integrations/higgs.py, utils.py):
    # weight int16 [out · bits / 16, in], scales [out, in / group_size] and tables [2^bits] in the model's dtype,
    # tables2 [2^bits, 2^bits, 2] of 16-bit halves. Per linear layer, 4-bit, group 64, hadamard_size 64 (no padding):
    # 2 · out / 4 · in + 2 · out · in / 64 + 2 · 16 + 2 · 16 · 16 · 2 bytes. HiggsLinear built by transformers 5.24's
    # replace_with_higgs_linear on tiny_llama on the meta device (bfloat16) in a side venv: 58,304 bytes in the
    # layers' linear modules at 4 bits, 37,088 at 3 bits (weight [out · 3 / 16, in], tables of 8).
    def linear(in_f: int, out_f: int, bits: int) -> int:
        codes = 1 << bits
        return 2 * (out_f * bits // 16) * in_f + 2 * out_f * (in_f // 64) + 2 * codes + 2 * codes * codes * 2

    for bits, meta_device_bytes in ((4, 58_304), (3, 37_088)):
        quantized = {"quant_method": "higgs", "bits": bits, "p": 2, "group_size": 64, "hadamard_size": 64}
        report = memory(str(write_config(tiny_llama(torch_dtype="bfloat16", quantization_config=quantized))))
        per_layer = sum(linear(i, o, bits) for i, o in TINY_LINEARS)
        assert 2 * per_layer == meta_device_bytes
        assert report.weights.bytes == 2 * per_layer + 2 * TINY_UNQUANTIZED_ELEMENTS
        assert report.weights.quantization == "higgs"


def test_higgs_pads_each_input_width_to_a_multiple_of_hadamard_size(write_config):
    # quantize_with_higgs pads the input (pad_to_block(weight, [1], hadamard_size)) before FLUTE packs it and the scales
    # are repeated per group of the padded width. hadamard_size 128: q, k, v, o and gate, up (in 64) are stored as if
    # 128 wide; down (in 128) as it is. q: 2 · 16 · 128 + 2 · 64 · 2 + 32 + 1,024 = 5,408 bytes; gate: 2 · 32 · 128 +
    # 2 · 128 · 2 + 1,056 = 9,760; down: 2 · 16 · 128 + 2 · 64 · 2 + 1,056 = 5,408.
    quantized = {"quant_method": "higgs", "bits": 4, "group_size": 64, "hadamard_size": 128}
    report = memory(str(write_config(tiny_llama(torch_dtype="bfloat16", quantization_config=quantized))))
    assert report.weights.bytes == 2 * (4 * 5_408 + 2 * 9_760 + 5_408) + 2 * TINY_UNQUANTIZED_ELEMENTS


def spqr_shapes() -> dict[str, int]:
    """quantization_config.shapes for tiny_llama's 14 linear modules, module i's lengths told apart by i."""
    shapes = {}
    for index, module in enumerate(TINY_MODULES):
        shapes |= {f"{module}.dense_weights.shape": 100 + index, f"{module}.row_offsets.shape": 65,
                   f"{module}.col_vals.shape": 30 + index, f"{module}.in_perm.shape": 32}  # fmt: skip
    return shapes


def test_spqr_stores_each_module_with_the_four_lengths_quantization_config_gives(write_config):
    # spqr_quant 0.2.0 inference.py, QuantizedLinear.create_placehodler: dense_weights int64 [n], row_offsets, col_vals
    # and in_perm int32, n from quantization_config.shapes. Module i: 8 · (100 + i) + 4 · 65 + 4 · (30 + i) + 4 · 32
    # bytes; over i = 0 … 13: 14 · 1,308 + 12 · 91 = 19,404, as the placeholders built for tiny_llama on the meta
    # device in a side venv add up.
    quantized = {"quant_method": "spqr", "bits": 3, "beta1": 16, "beta2": 16, "shapes": spqr_shapes()}
    report = memory(str(write_config(tiny_llama(torch_dtype="float16", quantization_config=quantized))))
    linear = sum(8 * (100 + i) + 4 * 65 + 4 * (30 + i) + 4 * 32 for i in range(14))
    assert linear == 19_404
    assert report.weights.bytes == linear + 2 * TINY_UNQUANTIZED_ELEMENTS


def test_spqr_without_the_lengths_of_a_module_is_refused_naming_shapes(write_config, ffncalc):
    shapes = {key: value for key, value in spqr_shapes().items() if ".layers.1.mlp.up_proj." not in key}
    config = tiny_llama(torch_dtype="float16", quantization_config={"quant_method": "spqr", "shapes": shapes})
    run = ffncalc("memory", str(write_config(config)))
    assert (run.exit_code, run.stdout) == (3, "")
    assert 'quantization_config.shapes: no "model.layers.1.mlp.up_proj.dense_weights.shape"' in run.stderr


VPTQ_MAIN = {"vector_lens": [-1, 6], "num_centroids": [-1, 256], "num_res_centroids": [-1, 16], "group_num": 1,
             "group_size": 64, "outlier_size": 0, "indices_as_float": False, "enable_norm": True, "enable_perm": True}  # fmt: skip
VPTQ_OUTLIERS = dict(VPTQ_MAIN, vector_lens=[4, 6], num_centroids=[8, 256], num_res_centroids=[-1, -1], outlier_size=3,
                     group_num=2, enable_norm=False)  # fmt: skip


def test_vptq_stores_each_layers_indices_codebooks_permutation_and_norm_as_vquantlinear(write_config):
    # vptq 0.0.5 vptq/layers/vqlinear.py, VQuantLinear (packed indices, bfloat16). The attention and gate, up: 256 main
    # and 16 residual centroids of 6 values, 8 + 4 index bits: indices int32 [1, ⌈out / 6⌉, ⌈64 · 12 / 32⌉ = 24],
    # centroids [1, 256 · 6] and res_centroids [1, 16 · 6], perm int16 [in], weight_scale and weight_bias [in].
    # q (64 → 64): 4 · 11 · 24 + 2 · 1,536 + 2 · 96 + 2 · 64 + 2 · 2 · 64 = 4,704; gate (64 → 128): 4 · 22 · 24 + 3,072
    # + 192 + 128 + 256 = 5,760. down (outliers, 2 codebooks, no residual, no norm): indices [2, 11, ⌈64 · 8 / 32⌉ =
    # 16], centroids [2, 1,536], outlier_centroids [1, 8 · 4], outlier_indices int16 [1, ⌈64 / 4⌉, 3], perm [128]:
    # 4 · 2 · 11 · 16 + 2 · 3,072 + 2 · 32 + 2 · 48 + 2 · 128 = 7,968. VQuantLinear built with these arguments for
    # tiny_llama on the meta device in a side venv: 76,608 bytes in the layers' linear modules.
    layers = {module: VPTQ_OUTLIERS if module.endswith("down_proj") else VPTQ_MAIN for module in TINY_MODULES}
    quantized = {"quant_method": "vptq", "config_for_layers": layers, "shared_layer_config": {}}
    report = memory(str(write_config(tiny_llama(torch_dtype="bfloat16", quantization_config=quantized))))
    assert 2 * (4 * 4_704 + 2 * 5_760 + 7_968) == 76_608
    assert report.weights.bytes == 76_608 + 2 * TINY_UNQUANTIZED_ELEMENTS


def test_vptq_takes_a_modules_shared_layer_config_entry_by_its_last_name_and_leaves_others_unquantized(write_config):
    # vptq 0.0.5 model_base.py make_quant_linear: config_for_layers[module], else shared_layer_config[last name part],
    # else the Linear stays. Shared entries for q_proj and down_proj only: 2 · 4,704 + 2 · 7,968 bytes quantized (as
    # above), the other 10 linear modules in bfloat16.
    quantized = {"quant_method": "vptq", "shared_layer_config": {"q_proj": VPTQ_MAIN, "down_proj": VPTQ_OUTLIERS}}
    report = memory(str(write_config(tiny_llama(torch_dtype="bfloat16", quantization_config=quantized))))
    unquantized = 2 * 2 * (3 * 64 * 64 + 2 * 64 * 128)
    assert report.weights.bytes == 2 * (4_704 + 7_968) + unquantized + 2 * TINY_UNQUANTIZED_ELEMENTS


def test_a_vptq_checkpoint_as_vquantlinear_stores_it_verifies(tmp_path):
    layers = {module: VPTQ_MAIN for module in TINY_MODULES}
    config = tiny_llama(
        torch_dtype="bfloat16", quantization_config={"quant_method": "vptq", "config_for_layers": layers}
    )
    tensors = llama_tensors(config, dtype="BF16")
    for name in list(tensors):
        if ".layers." in name and name.endswith("_proj.weight"):
            _dtype, (out_f, in_f) = tensors.pop(name)
            module = name.removesuffix(".weight")
            tensors |= {
                module + ".indices": ("I32", [1, -(-out_f // 6), 24]),
                module + ".centroids.weight": ("BF16", [1, 1536]),
                module + ".res_centroids.weight": ("BF16", [1, 96]),
                module + ".perm": ("I16", [in_f]),
                module + ".weight_scale": ("BF16", [in_f]),
                module + ".weight_bias": ("BF16", [in_f]),
            }
    report = verify(str(write_checkpoint(tmp_path / "vptq", config, tensors)))
    assert report.ok, [t for t in report.tensors if t.verdict != "parameter"][:4]


@pytest.mark.parametrize(
    "block, why",
    [
        ({"quant_method": "quanto", "weights": "int4"}, "quantizes at load time: transformers cannot save a quanto"),
        ({"quant_method": "nvfp4"}, "quantizes at load time: transformers refuses pre-quantized NVFP4"),
        ({"quant_method": "gguf"}, "the weights are in a GGUF file"),
        ({"quant_method": "torchao", "quant_type": {"default": {}}}, "torchao tensor subclass"),
        ({"quant_method": "auto-round", "packing_format": "auto_round:auto_awq"}, "auto-round's packing_format"),
        ({"quant_method": "auto-round", "packing_format": "auto_round:auto_gptq", "extra_config": {"a": {"bits": 8}}},
         "extra_config gives some layers their own settings"),
    ],
)  # fmt: skip
def test_a_scheme_not_laid_out_says_why_and_counts_the_weights_unquantized(write_config, block, why):
    report = memory(str(write_config(tiny_llama(torch_dtype="bfloat16", quantization_config=block))))
    (note,) = [note for note in report.notes if note.startswith("quantization_config: ")]
    assert why in note and "is not read by ffncalc" in note and "unquantized, in the config's dtype" in note
    assert report.weights.bytes == 2 * (2 * sum(i * o for i, o in TINY_LINEARS) + TINY_UNQUANTIZED_ELEMENTS)


def test_every_scheme_transformers_knows_is_read_or_says_why_not():
    from ffncalc.quantization import BLOCKS, READ, UNREAD, UNREAD_BECAUSE

    # transformers 5.24 utils/quantization_config.py, QuantizationMethod: 26 methods, and ModelOpt (vLLM's).
    transformers_methods = {
        "bitsandbytes", "gptq", "awq", "aqlm", "vptq", "quanto", "eetq", "higgs", "hqq", "compressed-tensors",
        "fbgemm_fp8", "torchao", "gguf", "bitnet", "spqr", "fp8", "quark", "fp_quant", "auto-round", "mxfp4", "nvfp4",
        "mxfp8", "metal", "fouroversix", "sinq", "gemma",
    }  # fmt: skip
    assert set(READ) | set(UNREAD) == transformers_methods | {"modelopt"} == set(BLOCKS)
    assert not set(READ) & set(UNREAD) and set(UNREAD) == set(UNREAD_BECAUSE)


def test_a_quantization_config_nested_under_text_config_is_read(write_config):
    # Mistral 3 with its language model's block only (as multimodal int4/fp8 releases nest it): the language model's
    # linear layers in FP8 with a float32 scale per 128 × 128 block, not the 16-bit size.
    plain = memory("mistralai/Magistral-Small-2509")
    config = json.loads((BUNDLED / "mistralai__Magistral-Small-2509.json").read_text())
    config.pop("quantization_config", None)
    config["text_config"]["quantization_config"] = {"quant_method": "fp8", "weight_block_size": [128, 128]}
    nested = memory(str(write_config(config)))
    assert nested.weights.quantization == "fp8"
    assert nested.weights.bytes < plain.weights.bytes * 6 // 10


def test_a_bad_value_in_a_nested_quantization_config_names_its_place(write_config, ffncalc):
    config = json.loads((BUNDLED / "mistralai__Magistral-Small-2509.json").read_text())
    config["text_config"]["quantization_config"] = {"quant_method": "gptq", "bits": 5}
    run = ffncalc("params", str(write_config(config)))
    assert run.exit_code == 3 and run.stdout == ""
    assert "text_config.quantization_config.bits: must be 2, 3, 4 or 8" in run.stderr


def test_a_scheme_ffncalc_does_not_lay_out_is_said_not_silently_counted_at_16_bits(write_config):
    report = memory(str(write_config(dict(LLAMA, quantization_config={"quant_method": "hqq"}))))
    assert any("quant_method 'hqq' is not read by ffncalc" in note for note in report.notes)


NVFP4_ARGS = {"num_bits": 4, "type": "float", "strategy": "tensor_group", "group_size": 16, "symmetric": True}


def test_compressed_tensors_nvfp4_packs_two_values_a_byte_with_fp8_group_scales_and_global_scales(write_config):
    # llm-compressor's NVFP4 (format nvfp4-pack-quantized), as vLLM's CompressedTensorsW4A4Fp4.create_weights
    # (compressed_tensors_w4a4_nvfp4.py) reads each module: weight_packed U8 [out, in // 2], weight_scale F8_E4M3
    # [out, in // 16], weight_global_scale and input_global_scale float32 [1]; lm_head ignored.
    group = {"targets": ["Linear"], "weights": NVFP4_ARGS, "input_activations": dict(NVFP4_ARGS, dynamic="local")}
    quantized = {
        "quant_method": "compressed-tensors",
        "format": "nvfp4-pack-quantized",
        "config_groups": {"group_0": group},
        "ignore": ["lm_head"],
    }
    report = memory(str(write_config(tiny_llama(torch_dtype="bfloat16", quantization_config=quantized))))
    per_layer = sum(o * i // 2 + o * i // 16 + 4 + 4 for i, o in TINY_LINEARS)
    assert report.weights.bytes == 2 * per_layer + 2 * TINY_UNQUANTIZED_ELEMENTS


def test_compressed_tensors_fp8_blocks_keep_one_float32_scale_per_block(write_config):
    # FP8_BLOCK (strategy block, block_structure [128, 128]): vLLM's BlockQuantScaleParameter, float32
    # [⌈out / 128⌉, ⌈in / 128⌉]. Hidden 256, FFN 512: q, k, v, o 2 × 2 blocks, gate and up 4 × 2, down 2 × 4: 40 a layer.
    weights = {"num_bits": 8, "type": "float", "strategy": "block", "block_structure": [128, 128]}
    quantized = {
        "quant_method": "compressed-tensors",
        "format": "float-quantized",
        "config_groups": {"group_0": {"targets": ["Linear"], "weights": weights}},
        "ignore": ["lm_head"],
    }
    config = tiny_llama(hidden_size=256, intermediate_size=512, torch_dtype="bfloat16", quantization_config=quantized)
    assert memory(str(write_config(config))).weights.by_dtype["F32"] == 2 * 40 * 4


def test_fp8_without_weight_block_size_takes_transformers_default_blocks(write_config):
    # FineGrainedFP8Config's default weight_block_size is (128, 128); null means one scale per tensor. With hidden
    # 256 and FFN 512: q, k, v, o are 2 × 2 blocks, gate and up (512 × 256) and down (256 × 512) 4 × 2: 40 float32
    # scales a layer, against 7 scalars.
    wide = {"hidden_size": 256, "intermediate_size": 512}
    absent = memory(str(write_config(tiny_llama(**wide, quantization_config={"quant_method": "fp8"}), "absent")))
    per_tensor = tiny_llama(**wide, quantization_config={"quant_method": "fp8", "weight_block_size": None})
    none = memory(str(write_config(per_tensor, "none")))
    assert absent.weights.by_dtype["F32"] == 2 * 40 * 4
    assert none.weights.by_dtype["F32"] == 2 * 7 * 4


REFUSED = [
    ({"quant_method": "fp8", "weight_block_size": "128"}, "quantization_config.weight_block_size"),
    ({"quant_method": "fp8", "weight_block_size": [0, 128]}, "quantization_config.weight_block_size.0"),
    ({"quant_method": "fp8", "weight_block_size": [-1, 128]}, "quantization_config.weight_block_size.0"),
    ({"quant_method": "fp8", "weight_block_size": [128.5, 128]}, "quantization_config.weight_block_size.0"),
    ({"quant_method": "fp8", "weight_block_size": {"a": 1}}, "quantization_config.weight_block_size"),
    ({"quant_method": "fp8", "activation_scheme": "sometimes"}, "quantization_config.activation_scheme"),
    ({"quant_method": "gptq", "bits": "four"}, "quantization_config.bits"),
    ({"quant_method": "gptq", "bits": 0}, "quantization_config.bits"),
    ({"quant_method": "gptq", "bits": 5}, "quantization_config.bits"),
    ({"quant_method": "gptq", "bits": 2.5}, "quantization_config.bits"),
    ({"quant_method": "gptq", "bits": True}, "quantization_config.bits"),
    ({"quant_method": "gptq", "bits": -4}, "quantization_config.bits"),
    ({"quant_method": "gptq", "bits": 64}, "quantization_config.bits"),
    ({"quant_method": "gptq", "bits": 4, "group_size": 0}, "quantization_config.group_size"),
    ({"quant_method": "gptq", "bits": 4, "group_size": -5}, "quantization_config.group_size"),
    ({"quant_method": "gptq", "bits": 4, "group_size": "four"}, "quantization_config.group_size"),
    ({"quant_method": "awq", "bits": 3}, "quantization_config.bits"),
    ({"quant_method": "eetq", "weights": "int4"}, "quantization_config.weights"),  # EetqConfig: int8 only
    ({"quant_method": "aqlm", "in_group_size": "8"}, "quantization_config.in_group_size"),  # post_init wants an int
    ({"quant_method": "aqlm", "nbits_per_codebook": 0}, "quantization_config.nbits_per_codebook"),
    ({"quant_method": "aqlm", "nbits_per_codebook": 64}, "quantization_config.nbits_per_codebook"),
    ({"quant_method": "bitnet", "linear_class": "ternary"}, "quantization_config.linear_class"),
    ({"quant_method": "bitnet", "quantization_mode": "sometimes"}, "quantization_config.quantization_mode"),
    ({"quant_method": "fbgemm_fp8", "modules_to_not_convert": "lm_head"}, "quantization_config.modules_to_not_convert"),
    ({"quant_method": "bitsandbytes", "load_in_4bit": True, "load_in_8bit": True}, "quantization_config"),
    ({"quant_method": "bitsandbytes", "load_in_4bit": True, "bnb_4bit_quant_type": "nf5"}, "bnb_4bit_quant_type"),
    ({"quant_method": "bitsandbytes", "load_in_8bit": True, "llm_int8_skip_modules": 3}, "llm_int8_skip_modules"),
    (
        {"quant_method": "bitsandbytes", "load_in_8bit": True, "llm_int8_skip_modules": ["a", 1]},
        "llm_int8_skip_modules.1",
    ),
    ({"quant_method": "compressed-tensors", "ignore": 7}, "quantization_config.ignore"),
    ({"quant_method": "compressed-tensors", "ignore": ["lm_head", 2]}, "quantization_config.ignore.1"),
    (
        {"quant_method": "compressed-tensors", "config_groups": {"g": {"weights": {"num_bits": "four"}}}},
        "config_groups.g.weights.num_bits",
    ),
    (
        {
            "quant_method": "compressed-tensors",
            "config_groups": {"g": {"weights": {"group_size": 0, "strategy": "group"}}},
        },
        "config_groups.g.weights",
    ),
    (
        {
            "quant_method": "compressed-tensors",
            "config_groups": {"g": {"weights": {"group_size": None, "strategy": "group"}}},
        },
        "config_groups.g.weights",
    ),
    (
        {"quant_method": "compressed-tensors", "config_groups": {"g": {"weights": {"group_size": -1 - 1}}}},
        "config_groups.g.weights",
    ),
    ({"quant_method": "compressed-tensors", "config_groups": {"g": {"weights": [4]}}}, "config_groups.g.weights"),
    ({"quant_method": "modelopt"}, "quantization_config.quant_algo"),
    ({"quant_method": "metal", "bits": 3}, "quantization_config.bits"),  # MetalConfig.post_init: 2, 4 or 8
    ({"quant_method": "metal", "group_size": 0}, "quantization_config.group_size"),
    ({"quant_method": "gemma", "num_bits": 3}, "quantization_config.num_bits"),
    ({"quant_method": "gemma", "module_quant_configs": {"(mlp": {"num_bits": 2}}}, "module_quant_configs"),
    ({"quant_method": "gemma", "module_quant_configs": {"mlp": {"bits": 2}}}, "module_quant_configs.mlp.bits"),
    ({"quant_method": "fp_quant", "forward_dtype": "int4"}, "quantization_config.forward_dtype"),
    ({"quant_method": "fp_quant", "hadamard_group_size": 8}, "hadamard_group_size must be one of 16, 32, 64, 128"),
    ({"quant_method": "fp_quant", "forward_method": "quest"}, "forward_method must be 'abs_max' for nvfp4"),
    ({"quant_method": "auto-round", "bits": 9}, "quantization_config.bits"),
    ({"quant_method": "auto-round", "group_size": 0}, "quantization_config.group_size"),
    ({"quant_method": "higgs", "bits": 8}, "quantization_config.bits"),  # HiggsConfig.post_init: 2, 3 or 4
    ({"quant_method": "higgs", "p": 3}, "quantization_config.p"),
    ({"quant_method": "higgs", "group_size": 100}, "quantization_config.group_size"),
    ({"quant_method": "higgs", "hadamard_size": 320}, "hadamard_size 320 must be divisible by group_size 256"),
    ({"quant_method": "higgs", "hadamard_size": 0}, "quantization_config.hadamard_size"),
    ({"quant_method": "spqr", "bits": 4}, "quantization_config.bits"),  # SpQRConfig.post_init: 3 only
    ({"quant_method": "spqr", "beta1": 8}, "quantization_config.beta1"),
    ({"quant_method": "spqr", "shapes": [1]}, "quantization_config.shapes"),
    ({"quant_method": "spqr", "shapes": {"m.dense_weights.shape": "16"}}, "quantization_config.shapes.m.dense_weights"),
    ({"quant_method": "vptq", "enable_proxy_error": True}, "quantization_config.enable_proxy_error"),
    ({"quant_method": "vptq", "config_for_layers": {"m": {"group_num": 1}}}, "config_for_layers.m.vector_lens"),
    (
        {"quant_method": "vptq", "config_for_layers": {"m": dict(VPTQ_MAIN, num_centroids=[-1, 0])}},
        "config_for_layers.m",
    ),
    ({"quant_method": "vptq", "config_for_layers": {"m": dict(VPTQ_MAIN, is_indice_packed=False)}}, "is_indice_packed"),
    ({"quant_method": "no-such-scheme"}, "quantization_config.quant_method"),
    ([4], "quantization_config"),
]


@pytest.mark.parametrize(("block", "field"), REFUSED, ids=[json.dumps(block)[:60] for block, _ in REFUSED])
@pytest.mark.parametrize("command", ["params", "memory", "verify"])
def test_a_quantization_config_its_loader_refuses_is_refused_naming_the_field(
    block, field, command, write_config, ffncalc
):
    run = ffncalc(command, str(write_config(dict(LLAMA, quantization_config=block)).parent), "--json")
    assert (run.exit_code, run.stdout) == (3, "")
    assert run.stderr.startswith("Error: ") and run.stderr.count("\n") == 1, run.stderr
    assert ": quantization_config" in run.stderr and field in run.stderr, run.stderr


def test_fp8_blocks_of_one_weight_are_counted_with_a_warning(write_config, ffncalc):
    config = dict(LLAMA, quantization_config={"quant_method": "fp8", "weight_block_size": [1, 1]})
    run = ffncalc("memory", str(write_config(config)), "--json")
    assert run.exit_code == 0
    assert "Warning: quantization_config.weight_block_size [1, 1]" in run.stderr


# --- ModelOpt MIXED_PRECISION: a quant_algo per module (NVIDIA's NVFP4 releases of 2026) -------------------------


def _mixed_llama(attention: str = "FP8", mlp: str = "W4A16_NVFP4") -> dict:
    """Llama-3.1-8B as ModelOpt's mixed-precision export lays it out: attention projections in one algo, the MLP and
    the head in another (group 16), as nvidia/Qwen3.6-27B-NVFP4's quantized_layers does."""
    layers = {}
    for i in range(32):
        for name in ("q_proj", "k_proj", "v_proj", "o_proj"):
            layers[f"model.layers.{i}.self_attn.{name}"] = {"quant_algo": attention}
        for name in ("gate_proj", "up_proj", "down_proj"):
            layers[f"model.layers.{i}.mlp.{name}"] = {"quant_algo": mlp, "group_size": 16}
    layers["lm_head"] = {"quant_algo": mlp, "group_size": 16}
    quantization = {"quant_method": "modelopt", "quant_algo": "MIXED_PRECISION", "quantized_layers": layers}
    return LLAMA | {"quantization_config": quantization}


def test_modelopt_mixed_precision_lays_out_each_module_by_its_own_algo(write_config):
    # Per layer: FP8 attention, 4096² + 1024·4096 + 1024·4096 + 4096² = 41,943,040 bytes, and a float32 weight_scale
    # and input_scale per module (4 × 8 = 32 bytes); W4A16 NVFP4 gate, up and down, 14,336 · 4,096 = 58,720,256
    # weights each: two a byte (29,360,128), an FP8 scale per 16 (3,670,016) and a float32 weight_scale_2 (4), no
    # input scale (16-bit activations): 3 × 33,030,148 = 99,090,444. The head, 128,256 · 4,096 = 525,336,576 weights:
    # 262,668,288 + 32,833,536 + 4 = 295,501,828. The embedding table in BF16, 1,050,673,152, and 65 norms of 4,096
    # in BF16, 532,480.
    per_layer = 41_943_040 + 32 + 99_090_444
    expected = 32 * per_layer + 295_501_828 + 1_050_673_152 + 532_480
    report = memory(str(write_config(_mixed_llama())), "8k")
    assert report.weights.bytes == expected == 5_859_779_972
    assert report.weights.quantization == "modelopt-mixed"


def test_modelopt_mixed_precision_notes_the_modules_it_does_not_read(write_config):
    report = memory(str(write_config(_mixed_llama(attention="FP8_PB_WO"))), "8k")
    assert any("FP8_PB_WO (128 modules) are counted unquantized" in note for note in report.notes)


def test_modelopt_mixed_precision_without_its_table_says_so(write_config):
    config = LLAMA | {"quantization_config": {"quant_method": "modelopt", "quant_algo": "MIXED_PRECISION"}}
    report = memory(str(write_config(config)), "8k")
    assert any("MIXED_PRECISION without a quantized_layers table" in note for note in report.notes)
