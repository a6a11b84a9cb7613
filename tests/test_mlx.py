"""mlx-lm's "quantization" block is read as mlx stores its weights: every Linear and Embedding whose input width
divides by group_size is affine-quantized, weight packed in uint32 [out, in · bits / 32], scales and biases
[out, in / group_size] in the model's dtype (mlx-lm mlx_lm/utils.py quantize_model; mlx.nn.QuantizedLinear)."""

from __future__ import annotations

import json

import pytest

from ffncalc.api import memory

from .conftest import run_main

AYA = "mlx-community/aya-23-8B-8bit"  # "quantization": {"group_size": 64, "bits": 8}, float16, tied embeddings


def test_aya_23_8b_8bit_weights_as_mlx_stores_them():
    # Cohere's layer: q, o 4096 × 4096; k, v 1024 × 4096; gate, up, down 14336 × 4096; one LayerNorm weight.
    linear_per_layer = 2 * 4096 * 4096 + 2 * 1024 * 4096 + 3 * 14336 * 4096
    quantized = 32 * linear_per_layer + 256_000 * 4096  # and the (tied) embedding table
    packed = quantized * 8 // 8  # 8 bits a value, in uint32 words
    scales_and_biases = 2 * (quantized // 64) * 2  # two float16 tensors of one value per 64
    norms = (32 + 1) * 4096 * 2  # each layer's LayerNorm and the final one, float16
    weights = memory(AYA).weights
    assert weights.by_dtype == {"F16": scales_and_biases + norms, "U32": packed}
    assert weights.bytes == packed + scales_and_biases + norms == 8_529_911_808


@pytest.mark.parametrize(("field", "value"), [("bits", 7), ("group_size", 48), ("bits", "8")])
def test_a_value_mlx_cannot_quantize_with_is_refused_naming_the_field(tmp_path, field, value):
    config = json.loads(run_main("config", AYA).stdout)
    config["quantization"][field] = value
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    run = run_main("memory", str(path))
    assert run.exit_code == 3
    assert run.stderr.startswith(f"Error: {path}: quantization.{field}: ")


def test_a_newer_mlx_config_with_the_same_block_as_quantization_config_is_read_alike(tmp_path):
    config = json.loads(run_main("config", AYA).stdout)
    config["quantization_config"] = dict(config["quantization"])
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    assert memory(str(path)).weights.bytes == memory(AYA).weights.bytes
