"""Quantisation as engines run it: `--dtype int4` with `--group-size N` (inputs per group) and `--quantize-head`.

The layout is GPTQ's, as AutoGPTQ and GPTQModel pack it (auto_gptq/nn_modules/qlinear/qlinear_cuda_old.py;
ffncalc/storage.py cites it): for a linear weight of `out` × `in`,
- qweight int32 [in / 32 · 4, out]: 4 bits a weight, out · in / 2 bytes;
- scales float16 [groups, out]: 2 bytes per group per output;
- qzeros int32 [groups, out / 32 · 4]: a 4-bit zero per group per output, out / 2 bytes per group;
- g_idx int32 [in]: 4 bytes per input;
with groups = in / group size. gpt-fast's own int4 (quantize.py WeightOnlyInt4Linear: weight int32
[out / 8, in / (inner_k_tiles · 16), 32, inner_k_tiles / 2], scales_and_zeros bfloat16 [in / groupsize, out, 2])
keeps a 16-bit zero, not a 4-bit one, and no g_idx: at group 32 that is 5.0 bits a weight where GPTQ's is 4.625
plus g_idx. Every byte below is derived from Llama-3.1-8B's config: hidden 4,096, intermediate 14,336, 32 layers,
32 query and 8 KV heads of 128, vocab 128,256, untied head.
"""

import pytest

from ffncalc.api import memory, speed

from .conftest import run_main

LLAMA = "meta-llama/Llama-3.1-8B"
# (out, in) of each layer's linear weights: q, k, v, o, gate, up, down
MATRICES = [(4096, 4096), (1024, 4096), (1024, 4096), (4096, 4096), (14336, 4096), (14336, 4096), (4096, 14336)]
NORMS = (32 * 2 + 1) * 4096 * 2  # two RMSNorms a layer and the final one, BF16
EMBEDDING = 128_256 * 4096 * 2  # BF16 whatever is asked
BF16_HEAD = 128_256 * 4096 * 2


def gptq(out, inputs, group):
    groups = inputs // group
    return out * inputs // 2 + groups * out * 2 + groups * out // 2 + 4 * inputs


def llama_int4(group, head_quantized):
    layers = 32 * sum(gptq(out, inputs, group) for out, inputs in MATRICES)
    head = gptq(128_256, 4096, group) if head_quantized else BF16_HEAD
    return layers + NORMS + EMBEDDING + head


def test_int4_group_128_is_the_default_and_its_bytes_are_gptqs():
    assert llama_int4(128, False) == 5_732_835_328
    assert memory(LLAMA, dtype="int4").weights.bytes == llama_int4(128, False)
    assert memory(LLAMA, dtype="int4", quant_group_size=128).weights.bytes == llama_int4(128, False)


def test_group_32_reads_more_and_a_quantized_head_less():
    # Group 32: 4 + 16/32 + 4/32 = 4.625 bits a weight (+ g_idx) against 4.156 at group 128.
    assert llama_int4(32, False) == 6_141_779_968
    assert memory(LLAMA, dtype="int4", quant_group_size=32).weights.bytes == llama_int4(32, False)
    # The head of 128,256 × 4,096: BF16 1,050,673,152 bytes; int4 at group 32 the GPTQ sum.
    assert llama_int4(32, True) == 5_394_833_408
    found = memory(LLAMA, dtype="int4", quant_group_size=32, quantize_head=True)
    assert found.weights.bytes == llama_int4(32, True)
    assert BF16_HEAD - gptq(128_256, 4096, 32) == 6_141_779_968 - 5_394_833_408


def test_speed_reads_the_quantized_heads_bytes_at_each_decode_step():
    # The head's operator at batch 1: its stored bytes, the hidden state in and the logits out (16-bit).
    activations = (4096 + 128_256) * 2
    for head_quantized, stored_head in ((False, BF16_HEAD), (True, gptq(128_256, 4096, 32))):
        (report,) = speed(
            LLAMA, "h100", context=1024, batches="1", dtype="int4", quant_group_size=32, quantize_head=head_quantized
        ).reports
        (head,) = [c for c in report.decode.components if c.name == "lm_head"]
        assert head.bytes == stored_head + activations


def test_what_is_assumed_is_stated():
    run = run_main("speed", LLAMA, "--dtype", "int4", "--group-size", "32", "--quantize-head")
    assert run.exit_code == 0, run.stderr
    text = " ".join(run.stdout.split())
    assert "per group of 32 inputs" in text and "the output head quantized so too" in text
    tied = run_main("memory", "meta-llama/Llama-3.2-1B", "--dtype", "int4", "--quantize-head")
    assert "the output head is tied to the embedding table, which stays in BF16" in " ".join(tied.stdout.split())


@pytest.mark.parametrize(
    ("command", "args", "message"),
    [
        ("memory", ["--group-size", "32"], "Error: --group-size sets the groups of --dtype int4"),
        ("speed", ["--dtype", "fp8", "--group-size", "32"], "Error: --group-size sets the groups of --dtype int4"),
        ("speed", ["--dtype", "int4", "--group-size", "48"], "Error: --group-size must be one of 16, 32, 64"),
        ("memory", ["--quantize-head"], "Error: --quantize-head quantizes the output head"),
        ("speed", ["--dtype", "bf16", "--quantize-head"], "Error: --quantize-head quantizes the output head"),
    ],
)
def test_the_options_refuse_what_they_cannot_mean_in_one_line(command, args, message):
    run = run_main(command, LLAMA, *args)
    assert run.exit_code == 2
    assert run.stderr.startswith(message) and run.stderr.count("\n") == 1
