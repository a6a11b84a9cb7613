"""GGUF headers as a source: exact bytes by ggml type, the mapping to families, llama.cpp's memory, hostile files, and
the Hub through the fake server. Every expected figure is derived by hand here (block sizes as ggml's documentation
gives them: Q4_0 18 bytes per 32 weights, Q8_0 34 per 32, Q5_0 22 per 32, Q4_K 144 per 256, Q6_K 210 per 256), or
is a figure llama.cpp printed for the real file (cited where used)."""

from __future__ import annotations

import json
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from ffncalc.errors import CheckpointError, UnsupportedModelError
from ffncalc.gguf_source import read_local_gguf
from tools.write_gguf_fixture import qwen25_05b_q4_k_m, write_gguf

from .hub_server import FakeHub, FakeRepo
from .test_hub import run_ffncalc

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "fixtures" / "gguf" / "qwen2.5-0.5b-instruct-q4_k_m.header.gguf"
MIB = 1 << 20


def ffncalc(*args: str) -> subprocess.CompletedProcess[str]:
    """`ffncalc ARGS` through main in this process (its real error handling; a process each took the file 55 s)."""
    from .conftest import run_main

    result = run_main(*args)
    return subprocess.CompletedProcess(["ffncalc", *args], result.exit_code, result.stdout, result.stderr)


# A tiny llama: hidden 256, 2 layers, 4 heads (head_dim 64), 2 KV heads, FFN 512, vocabulary 1,000, untied head.
TINY = {
    "llama.block_count": ("uint32", 2),
    "llama.context_length": ("uint32", 4096),
    "llama.embedding_length": ("uint32", 256),
    "llama.feed_forward_length": ("uint32", 512),
    "llama.attention.head_count": ("uint32", 4),
    "llama.attention.head_count_kv": ("uint32", 2),
    "llama.rope.freq_base": ("float32", 10000.0),
    "llama.attention.layer_norm_rms_epsilon": ("float32", 1e-5),
    "general.file_type": ("uint32", 2),  # MOSTLY_Q4_0
}


def tiny_tensors(head: bool = True) -> list[tuple[str, tuple[int, ...], str]]:
    tensors = [("token_embd.weight", (256, 1000), "q8_0")]
    for i in range(2):
        tensors += [
            (f"blk.{i}.attn_norm.weight", (256,), "f32"),
            (f"blk.{i}.attn_q.weight", (256, 256), "q4_0"),
            (f"blk.{i}.attn_k.weight", (256, 128), "q4_0"),
            (f"blk.{i}.attn_v.weight", (256, 128), "q6_K"),
            (f"blk.{i}.attn_output.weight", (256, 256), "q4_0"),
            (f"blk.{i}.ffn_norm.weight", (256,), "f32"),
            (f"blk.{i}.ffn_gate.weight", (256, 512), "q4_K"),
            (f"blk.{i}.ffn_up.weight", (256, 512), "q4_K"),
            (f"blk.{i}.ffn_down.weight", (512, 256), "q6_K"),
        ]
    tensors.append(("output_norm.weight", (256,), "f32"))
    if head:
        tensors.append(("output.weight", (256, 1000), "q6_K"))
    return tensors


# By hand: Q8_0 34 B/32, Q4_0 18 B/32, Q6_K 210 B/256, Q4_K 144 B/256, F32 4 B.
TINY_EMBED = 256 * 1000 // 32 * 34  # 272,000
TINY_LAYER = (
    2 * 256 * 4  # two norms
    + 256 * 256 // 32 * 18  # q
    + 256 * 128 // 32 * 18  # k
    + 256 * 128 // 256 * 210  # v
    + 256 * 256 // 32 * 18  # o
    + 2 * 256 * 512 // 256 * 144  # gate, up
    + 512 * 256 // 256 * 210  # down
)
TINY_HEAD = 256 * 1000 // 256 * 210  # 210,000
TINY_BYTES = TINY_EMBED + 2 * TINY_LAYER + 256 * 4 + TINY_HEAD
# Parameters as transformers counts LlamaForCausalLM: embedding, head, per layer q, k, v, o, FFN, two norms; final norm.
TINY_PARAMS = 2 * 256_000 + 2 * (256 * 256 * 2 + 256 * 128 * 2 + 3 * 256 * 512 + 2 * 256) + 256


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    folder = tmp_path_factory.mktemp("gguf")
    full = folder / "tiny-Q4_0.gguf"
    write_gguf(full, "llama", TINY, tiny_tensors(), data=True)
    return full


def test_bytes_by_type_equal_ggml_block_sizes(tiny):
    gguf = read_local_gguf(tiny)
    assert gguf.data_bytes == TINY_BYTES
    assert not gguf.header_only
    by_type: dict[str, int] = {}
    for tensor in gguf.tensors:
        by_type[tensor.type_name] = by_type.get(tensor.type_name, 0) + tensor.bytes
    assert by_type == {
        "Q8_0": TINY_EMBED,
        "F32": 5 * 256 * 4,
        "Q4_0": 2 * (256 * 256 * 2 + 256 * 128) // 32 * 18,
        "Q6_K": 2 * (256 * 128 + 512 * 256) // 256 * 210 + TINY_HEAD,
        "Q4_K": 2 * 2 * 256 * 512 // 256 * 144,
    }


def test_agrees_with_gguf_reader_on_a_complete_file(tiny):
    """ggml's own reader (gguf.GGUFReader, which maps the whole file) sees the same tensors, types and bytes."""
    from gguf import GGUFReader

    reader = GGUFReader(tiny)
    ours = {t.name: (t.kind, t.shape, t.bytes) for t in read_local_gguf(tiny).tensors}
    theirs = {t.name: (int(t.tensor_type), tuple(int(n) for n in t.shape), int(t.n_bytes)) for t in reader.tensors}
    assert ours == theirs


def test_params_of_a_gguf_equal_transformers_count(tiny):
    result = ffncalc("params", str(tiny), "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["total_params"] == TINY_PARAMS
    assert report["model_type"] == "llama"
    assert report["gguf"]["bytes"] == TINY_BYTES
    assert report["gguf"]["parameters"] == TINY_PARAMS
    assert report["gguf"]["parameters_match"] is True
    assert report["gguf"]["file_type"] == "MOSTLY_Q4_0"
    assert report["gguf"]["by_component"]["lm_head"] == TINY_HEAD
    assert report["gguf"]["by_component"]["embedding"] == TINY_EMBED
    assert report["tie_word_embeddings"] is False


def test_no_output_tensor_ties_the_head(tmp_path):
    path = tmp_path / "tied.gguf"
    write_gguf(path, "llama", TINY, tiny_tensors(head=False))
    report = json.loads(ffncalc("params", str(path), "--json").stdout)
    assert report["tie_word_embeddings"] is True
    assert report["total_params"] == TINY_PARAMS - 256_000


def test_bundled_qwen_header():
    """The bundled header (synthesised, tools/write_gguf_fixture.py): Qwen2.5-0.5B's 494,032,768 parameters (its
    safetensors count: ffncalc's bundled Qwen/Qwen2.5-0.5B, tests/test_params*), and the bytes llama.cpp printed for
    its Q4_K_M: `quant size = 373.71 MiB (6.35 BPW)` (llama-quantize on Qwen2.5-0.5B-Instruct), `Vulkan0 model
    buffer size = 373.71 MiB` with -ngl 99; type counts f32 121, q5_0 132, q8_0 13, q4_K 12, q6_K 12
    (ollama/ollama#9031)."""
    result = ffncalc("params", str(FIXTURE), "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["total_params"] == 494_032_768
    weights = report["gguf"]
    assert weights["header_only"] is True
    assert round(weights["bytes"] / MIB, 2) == 373.71
    assert round(weights["bytes"] * 8 / weights["parameters"], 2) == 6.35
    assert {row["type"]: row["tensors"] for row in weights["by_type"]} == {
        "F32": 121,
        "Q5_0": 132,
        "Q8_0": 13,
        "Q4_K": 12,
        "Q6_K": 12,
    }
    _, tensors = qwen25_05b_q4_k_m()
    assert weights["tensors"] == len(tensors) == 290


def test_llamacpp_memory_of_the_bundled_header():
    """llama.cpp's load log for Qwen2.5-0.5B-Instruct Q4_K_M: with -ngl 99 at n_ctx 32768 (its n_ctx_train),
    `Vulkan0 model buffer size = 373.71 MiB`, `Vulkan0 KV buffer size = 384.00 MiB`; CPU-only at n_ctx 4096,
    `CPU KV buffer size = 48.00 MiB`. By hand: 24 layers × (K + V) × 2 KV heads × 64 × 2 bytes (f16) = 12,288 bytes a
    cell; 32,768 cells = 384 MiB, 4,096 = 48 MiB."""
    full = json.loads(ffncalc("memory", str(FIXTURE), "--ctx", "32768", "--gpu-layers", "99", "--json").stdout)
    cache = full["llamacpp"]
    gpu, cpu = cache["devices"]
    assert round(gpu["weights"] / MIB, 2) == 373.71
    assert gpu["kv_cache"] == 384 * MIB
    assert cpu["weights"] == 151936 * 896 // 32 * 34  # token_embd (Q8_0) stays on the CPU
    assert cache["gpu_layers"] == 25
    cpu_only = json.loads(ffncalc("memory", str(FIXTURE), "--ctx", "4096", "--gpu-layers", "0", "--json").stdout)
    gpu, cpu = cpu_only["llamacpp"]["devices"]
    assert cpu["kv_cache"] == 48 * MIB and gpu["total"] == 0
    assert cpu["weights"] == full["weights"]["bytes"]  # the whole file, no tied copy


def test_partial_offload_and_cache_types():
    """-ngl 13 of 24 layers: i_gpu_start = 24 + 1 − 13 = 12, so layers 12–23 and the output layer on the GPU."""
    report = json.loads(
        ffncalc("memory", str(FIXTURE), "--ctx", "8192", "--gpu-layers", "13", "--cache-type", "q8_0", "--json").stdout
    )
    cache = report["llamacpp"]
    # q8_0: 34 bytes per 32; a layer's K and V: 2 × 128 × 8192 / 32 × 34
    per_layer = 2 * 128 * 8192 // 32 * 34
    assert cache["kv_cache_per_layer"] == [per_layer] * 24
    gpu, cpu = cache["devices"]
    assert gpu["kv_cache"] == 12 * per_layer and cpu["kv_cache"] == 12 * per_layer


def test_odd_context_is_padded_to_256():
    report = json.loads(ffncalc("memory", str(FIXTURE), "--ctx", "1000", "--json").stdout)
    assert report["llamacpp"]["kv_cells"] == 1024


def test_split_set_reads_every_part(tmp_path):
    paths = write_gguf(tmp_path / "tiny.gguf", "llama", TINY, tiny_tensors(), data=True, split_max_tensors=8)
    assert len(paths) > 1
    gguf = read_local_gguf(paths[-1])
    assert gguf.data_bytes == TINY_BYTES
    assert len(gguf.files) == len(paths)
    paths[1].unlink()
    result = ffncalc("params", str(paths[0]))
    assert result.returncode != 0 and result.stderr.startswith("Error: ") and "Traceback" not in result.stderr


def test_unmapped_architecture_is_refused(tmp_path):
    path = tmp_path / "mamba.gguf"
    write_gguf(path, "mamba", {"mamba.block_count": ("uint32", 2)}, [("token_embd.weight", (256, 1000), "f16")])
    with pytest.raises(UnsupportedModelError, match="mamba"):
        from ffncalc.gguf_models import open_gguf

        open_gguf(str(path))


def preamble(tensors: int, keys: int) -> bytes:
    return struct.pack("<IIQQ", 0x46554747, 3, tensors, keys)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"PK\x03\x04" + b"\0" * 40, "not a GGUF"),
        (preamble(2**62, 0), "tensor count"),
        (preamble(0, 2**40), "metadata key count"),
        (preamble(0, 1) + struct.pack("<Q", 2**50), "length of metadata key 0"),
        (preamble(0, 1) + struct.pack("<Q", 3) + b"abc" + struct.pack("<IIQ", 9, 4, 2**45), "length of 'abc'"),
        (preamble(0, 1) + struct.pack("<Q", 3) + b"abc" + struct.pack("<I", 99), "unknown value type"),
        (preamble(1, 0)[:20], "cut short"),
        (struct.pack("<IIQQ", 0x46554747, 1, 0, 0), "version 1"),
    ],
)
def test_hostile_headers_are_one_error(tmp_path, content, message):
    path = tmp_path / "bad.gguf"
    path.write_bytes(content)
    with pytest.raises(CheckpointError, match=message):
        read_local_gguf(path)


def test_hostile_header_from_the_cli_is_one_line(tmp_path):
    path = tmp_path / "bad.gguf"
    path.write_bytes(preamble(2**62, 0))
    result = ffncalc("params", str(path))
    assert result.returncode == 6
    assert result.stderr.startswith("Error: ") and result.stderr.count("\n") == 1


def test_truncated_data_is_refused(tiny, tmp_path):
    path = tmp_path / "cut.gguf"
    path.write_bytes(tiny.read_bytes()[:-1000])
    with pytest.raises(CheckpointError, match="truncated"):
        read_local_gguf(path)


def test_bad_offset_is_refused(tmp_path):
    path = tmp_path / "tiny.gguf"
    write_gguf(path, "llama", TINY, tiny_tensors())
    data = bytearray(path.read_bytes())
    # the last tensor info ends with its u64 offset: make it point elsewhere
    data[-8:] = struct.pack("<Q", 32)
    path.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match="offset"):
        read_local_gguf(path)


def test_header_claiming_terabytes_reads_at_most_the_cap(tmp_path):
    """A string of 2^40 bytes announced is refused from its length, before anything past the cap is read."""
    from ffncalc.gguf_source import MAX_HEADER_BYTES, ByteSource, parse_header

    asked = []
    content = preamble(0, 1) + struct.pack("<Q", 3) + b"abc" + struct.pack("<IQ", 8, 2**40)

    def read(offset: int, count: int) -> bytes:
        asked.append(count)
        return content[offset : offset + count]

    with pytest.raises(CheckpointError):
        parse_header(ByteSource("x", read, None))
    assert sum(asked) <= MAX_HEADER_BYTES


def test_import_of_gguf_only_when_read():
    code = "import sys, ffncalc.cli, ffncalc.api; print('gguf' in sys.modules, 'numpy' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.stdout.split() == ["False", "False"]


@pytest.fixture(scope="module")
def gguf_hub(tiny):
    repos = {"acme/tiny-GGUF": FakeRepo(files={"tiny-Q4_0.gguf": tiny.read_bytes()})}
    with FakeHub(repos) as server:
        yield server


def test_hub_gguf_reads_only_the_header(gguf_hub, tmp_path, tiny):
    result = run_ffncalc(
        "params", "acme/tiny-GGUF", "--file", "tiny-Q4_0.gguf", "--json", endpoint=gguf_hub.url, home=tmp_path
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["total_params"] == TINY_PARAMS
    assert report["gguf"]["bytes"] == TINY_BYTES
    files = [path for method, path, _ in gguf_hub.requests if method == "GET" and "/resolve/" in path]
    assert files and all(path.endswith("/tiny-Q4_0.gguf") for path in files)


def test_hub_gguf_missing_file(gguf_hub, tmp_path):
    result = run_ffncalc("params", "acme/tiny-GGUF", "--file", "nope.gguf", endpoint=gguf_hub.url, home=tmp_path)
    assert result.returncode != 0
    assert result.stderr.startswith("Error: ") and "nope.gguf" in result.stderr and "Traceback" not in result.stderr


def test_local_machines_in_the_accelerator_table():
    """Vendor figures: RTX 3090 936 GB/s and 24 GB; RTX 5090 1,792 GB/s and 32 GB; M4 Max 546 GB/s (Apple); a
    128 GB Mac wires 75 % for the GPU, a 16 GB one two thirds (macOS's default)."""
    from ffncalc.accelerators import accelerator
    from ffncalc.llamacpp import gpu_usable

    assert accelerator("rtx3090").bandwidth == 936 * 10**9 and accelerator("rtx3090").memory == 24 * 2**30
    # the RTX 5090 entry of the data-centre part: nvidia-smi's 32,607 MiB (its driver report), 1,792 GB/s
    assert accelerator("rtx5090").bandwidth == 1792 * 10**9 and accelerator("rtx5090").memory == 32_607 * 2**20
    assert accelerator("m4-max").bandwidth == 546 * 10**9
    assert gpu_usable(accelerator("m3-max"), 0) == 96 * 2**30
    assert gpu_usable(accelerator("m1"), 0) == 16 * 2**30 * 2 // 3


def test_solved_gpu_layers_fit_the_card():
    """--gpu with no --gpu-layers: the most layers whose weights and KV cache fit the card after the reserve."""
    report = json.loads(ffncalc("memory", str(FIXTURE), "--ctx", "32k", "--gpu", "rtx3060", "--json").stdout)
    cache = report["llamacpp"]
    assert cache["gpu_layers_solved"] is True and cache["gpu_layers"] == 25 and cache["fits"] is True


# --- speed of a GGUF: the file's bytes, llama.cpp's cache --------------------------------------------------------

TINY_ATTENTION = 2 * (256 * 256 * 2 // 32 * 18 + 256 * 128 // 32 * 18 + 256 * 128 // 256 * 210)  # q, o, k; v
TINY_FFN = 2 * (2 * 256 * 512 // 256 * 144 + 512 * 256 // 256 * 210)  # gate, up (Q4_K); down (Q6_K)


def tiny_speed(path, **options):
    from ffncalc.api import speed
    from ffncalc.gguf_models import open_gguf

    return speed(open_gguf(str(path)), **{"accelerators": "rtx3090", "context": 1000, **options}).reports[0]


def components(phase) -> dict[str, int]:
    return {c.name: c.bytes for c in phase.components}


def test_speed_of_a_gguf_reads_the_file_bytes(tiny):
    """Decode at batch 1 reads each operator's tensors as the file stores them (by hand above: Q4_0, Q6_K, Q4_K),
    plus ffncalc's stated activation traffic (each operator reads its input and writes its output: 2 × 256 × 2 bytes
    a layer; the head reads 256 and writes 1,000 16-bit values)."""
    report = tiny_speed(tiny)
    read = components(report.decode)
    assert read["attention_projections"] == TINY_ATTENTION + 2 * 2 * 256 * 2
    assert read["ffn"] == TINY_FFN + 2 * 2 * 256 * 2
    assert read["lm_head"] == TINY_HEAD + (256 + 1000) * 2
    assert read["other"] == 5 * 256 * 4  # the norms, F32
    assert report.weight_dtype == "GGUF" and report.quantization == "MOSTLY_Q4_0"


def test_speed_of_a_gguf_reads_the_cache_in_its_type(tiny):
    """The KV read at context 1,000 and the new token's row: 2 layers, K and V of 2 heads × 64. f16: 2 bytes an
    element; q8_0: a row of 128 is 4 blocks of 34 bytes."""
    f16 = components(tiny_speed(tiny).decode)["attention_scores"]
    assert f16 == 2 * 2 * 128 * 2 * 1000 + 2 * 2 * 128 * 2
    q8 = tiny_speed(tiny, cache_type="q8_0")
    assert components(q8.decode)["attention_scores"] == 2 * 2 * 4 * 34 * 1000 + 2 * 2 * 4 * 34
    assert q8.kv_dtype == "Q8_0"


def test_speed_fit_is_what_llamacpp_puts_on_the_gpu(tiny):
    """Every layer offloaded: the file less token_embd (on the CPU), the cache of 1,000 cells padded to 1,024, and
    the compute buffer of the output stage (512 × (256 + 1,000) × 4 bytes)."""
    report = tiny_speed(tiny)
    assert report.weight_bytes == TINY_BYTES - TINY_EMBED
    assert report.kv_bytes == 2 * 2 * 128 * 2 * 1024
    assert report.activation_bytes == 512 * 1256 * 4
    assert report.memory_needed == TINY_BYTES - TINY_EMBED + 2 * 2 * 128 * 2 * 1024 + 512 * 1256 * 4
    mac = tiny_speed(tiny, accelerators="m1")
    assert mac.memory_usable == 16 * 2**30 * 2 // 3 - 2**30  # macOS wires two thirds of 16 GB; 1 GiB reserve


def test_speed_of_a_gguf_refuses_what_does_not_apply(tiny):
    for args, message in (
        (("--tp", "2"), "--tp does not apply to a GGUF"),
        (("--dtype", "fp8"), "--dtype does not apply to a GGUF"),
        (("--kv-dtype", "fp8"), "--kv-dtype does not apply to a GGUF"),
        (("--cache-type", "q3_k"), "--cache-type 'q3_k'"),
    ):
        result = ffncalc("speed", str(tiny), "--gpu", "rtx3090", *args)
        assert result.returncode != 0 and message in result.stderr, result.stderr
    result = ffncalc("speed", "Qwen/Qwen2.5-0.5B", "--cache-type", "q8_0")
    assert result.returncode != 0 and "--cache-type applies to a GGUF" in result.stderr


def test_speed_engine_llamacpp_says_it_uses_the_typical_profile(tiny):
    report = tiny_speed(tiny, engine="llama.cpp")
    assert report.engine_profile.name == "typical"
    assert "no fit data for llama.cpp: the typical profile" in report.engine_profile.note


def test_does_not_fit_advice_names_no_tp_without_an_interconnect():
    result = ffncalc("speed", "Qwen/Qwen2.5-0.5B", "--gpu", "m1", "--ctx", "128k", "--batch", "64")
    assert "has no interconnect for --tp" in result.stderr and "--tp to split it" not in result.stderr


# --- memory's tables answer with llama.cpp's figure ---------------------------------------------------------------

QWEN_KV_32K = 32768 * 24 * 2 * 2 * 64 * 2  # 384 MiB: llama.cpp's `KV buffer size = 384.00 MiB` (above)
# The compute buffer, llama.cpp's output stage: 512 × (896 + 151,936) × 4 bytes = 298.50 MiB, as public load logs of
# Qwen2.5-0.5B-Instruct print it (`CPU compute buffer size = 298.50 MiB` at n_ctx 2,048 without flash attention and
# at 32,768 with it; `MTL0 compute buffer size = 298.50 MiB` on Metal), found with the code search tool.
QWEN_COMPUTE = 512 * (896 + 151936) * 4


def memory_table(*args: str) -> str:
    result = subprocess.run(
        [sys.executable, "-m", "ffncalc", "memory", str(FIXTURE), *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**__import__("os").environ, "COLUMNS": "80"},
    )
    assert result.returncode == 0, result.stderr
    assert max(len(line) for line in result.stdout.splitlines()) <= 80
    return " ".join(result.stdout.split())


def test_memory_table_answers_with_llamacpp_first():
    """All layers offloaded at 32k: the file's tensors (a tied head: token_embd stays on the CPU and its copy is
    the output on the GPU, so the GPU holds the file's bytes), 384 MiB of KV, the assumed compute buffer."""
    report = json.loads(ffncalc("memory", str(FIXTURE), "--ctx", "32k", "--json").stdout)
    file_bytes = report["weights"]["bytes"]
    on_gpu = file_bytes + QWEN_KV_32K + QWEN_COMPUTE
    assert report["llamacpp"]["all_offloaded"] == on_gpu == report["needed_per_gpu"]
    assert report["llamacpp"]["compute_buffer"] == QWEN_COMPUTE and QWEN_COMPUTE / MIB == 298.50
    text = memory_table("--ctx", "32k")
    first = text.split("context 32,768 ", 1)[1]
    assert first.startswith(f"Q4_K_M at 32k: {on_gpu / 2**30:.2f} GiB on the GPU with all 24 layers offloaded")
    assert "Compute (assumed)" in text or "Compute" in text
    # the accelerator rows compare llama.cpp's figure, not a transformers run's
    for row in report["accelerators"]:
        assert row["per_gpu_bytes"] in (on_gpu, None)


def test_memory_table_with_gpu_layers_splits_vram_and_ram():
    """-ngl 13 (i_gpu_start = 24 + 1 − 13 = 12): layers 12–23 and the output layer on the GPU."""
    text = memory_table("--ctx", "32k", "--gpu-layers", "13")
    assert "-ngl 13: 12 of 24 layers and the output layer on the GPU" in text
    assert "GiB in VRAM and" in text and "GiB in RAM" in text


def test_memory_solved_layers_are_the_most_that_fit():
    """At 1M cells the RTX 3060 cannot hold every layer: the solved -ngl fits after the reserve, one more does not
    (checked against llamacpp_memory with -ngl given, and the card's 12 GiB less 1 GiB)."""
    from ffncalc.llamacpp import llamacpp_memory

    report = json.loads(ffncalc("memory", str(FIXTURE), "--ctx", "1M", "--gpu", "rtx3060", "--json").stdout)
    solved = report["llamacpp"]["gpu_layers"]
    assert report["llamacpp"]["gpu_layers_solved"] and 0 < solved < 25
    gguf = read_local_gguf(FIXTURE)
    usable = 12 * 2**30 - 2**30
    assert llamacpp_memory(gguf, 1 << 20, gpu_layers=solved).devices[0].total <= usable
    assert llamacpp_memory(gguf, 1 << 20, gpu_layers=solved + 1).devices[0].total > usable
    text = memory_table("--ctx", "1M", "--gpu", "rtx3060")
    assert f"-ngl {solved}: {solved - 1} of 24 layers and the output layer on the GPU" in text
    assert "the most that fit RTX 3060 12GB (11.00 GiB usable)" in text


# --- verify of a GGUF: every tensor by llama.cpp's name and ggml's shape ------------------------------------------


def test_verify_bundled_header_matches_every_tensor():
    """The 290 tensors of Qwen2.5-0.5B's Q4_K_M (the header's own table) are all parameters of the model, and their
    elements are its 494,032,768 parameters (the safetensors count, above)."""
    result = ffncalc("verify", str(FIXTURE), "--json")
    assert result.returncode == 0, result.stdout[-2000:]
    report = json.loads(result.stdout)
    assert report["counts"] == {"parameter": 290}
    assert report["checkpoint_params"] == 494_032_768 and report["ok"] is True
    names = {tensor["name"]: tensor["shape"] for tensor in report["tensors"]}
    assert names["blk.23.attn_k.weight"] == [896, 128]  # ggml's order: the row (896 inputs) first
    assert names["token_embd.weight"] == [896, 151936]


def test_verify_a_wrong_or_unknown_tensor_exits_1(tmp_path):
    tensors = tiny_tensors()
    renamed = [("blk.1.attn_qq.weight", shape, kind) if name == "blk.1.attn_q.weight" else (name, shape, kind)
               for name, shape, kind in tensors]  # fmt: skip
    path = tmp_path / "renamed.gguf"
    write_gguf(path, "llama", TINY, renamed)
    result = ffncalc("verify", str(path), "--json")
    assert result.returncode == 1
    report = json.loads(result.stdout)
    assert report["counts"]["unexpected"] == 1 and report["counts"]["missing"] == 1
    verdicts = {tensor["name"]: tensor["verdict"] for tensor in report["tensors"]}
    assert verdicts["blk.1.attn_qq.weight"] == "unexpected" and verdicts["blk.1.attn_q.weight"] == "missing"
    # a head of 999 rows where the model (vocabulary from token_embd: 1,000) has 1,000
    wrong = [(n, (256, 999), k) if n == "output.weight" else (n, s, k) for n, s, k in tensors if n != "rope"]
    path = tmp_path / "wrong.gguf"
    write_gguf(
        path, "llama", TINY, [(n, (256, 992), "f32") if n == "output.weight" else (n, s, k) for n, s, k in wrong]
    )
    report = json.loads(ffncalc("verify", str(path), "--json").stdout)
    wrong_rows = [t for t in report["tensors"] if t["verdict"] == "wrong shape"]
    assert [(t["name"], t["shape"], t["expected_shape"]) for t in wrong_rows] == [
        ("output.weight", [256, 992], [256, 1000])
    ]
    assert report["ok"] is False


def test_verify_moe_experts_stacked_as_llamacpp_stores_them(tmp_path):
    """A one-layer qwen3moe: 4 experts of width 32 stacked into ffn_{gate,up,down}_exps of ggml shape (in, out, 4).
    By hand: embedding and head 64 × 100 each, final norm 64; the layer's two norms 128, q 64 × 64, k and v 64 × 32,
    o 64 × 64, q/k norms 2 × 32, router 64 × 4, experts 3 × 64 × 32 × 4."""
    meta = {
        "qwen3moe.block_count": ("uint32", 1),
        "qwen3moe.context_length": ("uint32", 4096),
        "qwen3moe.embedding_length": ("uint32", 64),
        "qwen3moe.attention.head_count": ("uint32", 2),
        "qwen3moe.attention.head_count_kv": ("uint32", 1),
        "qwen3moe.attention.key_length": ("uint32", 32),
        "qwen3moe.attention.value_length": ("uint32", 32),
        "qwen3moe.expert_count": ("uint32", 4),
        "qwen3moe.expert_used_count": ("uint32", 2),
        "qwen3moe.expert_feed_forward_length": ("uint32", 32),
        "qwen3moe.attention.layer_norm_rms_epsilon": ("float32", 1e-6),
    }
    tensors = [
        ("token_embd.weight", (64, 100), "f32"),
        ("blk.0.attn_norm.weight", (64,), "f32"),
        ("blk.0.attn_q.weight", (64, 64), "f32"),
        ("blk.0.attn_k.weight", (64, 32), "f32"),
        ("blk.0.attn_v.weight", (64, 32), "f32"),
        ("blk.0.attn_output.weight", (64, 64), "f32"),
        ("blk.0.attn_q_norm.weight", (32,), "f32"),
        ("blk.0.attn_k_norm.weight", (32,), "f32"),
        ("blk.0.ffn_norm.weight", (64,), "f32"),
        ("blk.0.ffn_gate_inp.weight", (64, 4), "f32"),
        ("blk.0.ffn_gate_exps.weight", (64, 32, 4), "f32"),
        ("blk.0.ffn_up_exps.weight", (64, 32, 4), "f32"),
        ("blk.0.ffn_down_exps.weight", (32, 64, 4), "f32"),
        ("output_norm.weight", (64,), "f32"),
        ("output.weight", (64, 100), "f32"),
    ]
    path = tmp_path / "moe.gguf"
    write_gguf(path, "qwen3moe", meta, tensors)
    result = ffncalc("verify", str(path), "--json")
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr
    report = json.loads(result.stdout)
    by_hand = 2 * 6400 + 64 + 128 + 4096 + 2 * 2048 + 4096 + 64 + 256 + 3 * 64 * 32 * 4
    assert report["counts"] == {"parameter": 15} and report["checkpoint_params"] == by_hand == report["ffncalc_params"]


# --- the bundled header ships in the wheel and answers to its short name ------------------------------------------


def test_bundled_header_by_short_name():
    from ffncalc.source import bundled_ggufs, find_bundled_gguf

    assert set(bundled_ggufs()) == {"qwen2.5-0.5b-instruct-q4_k_m"}
    assert find_bundled_gguf("Qwen2.5-0.5B-Instruct-Q4_K_M")[1] == FIXTURE
    assert find_bundled_gguf("qwen2.5-0.5b-instruct-q4_k_m.gguf")[1] == FIXTURE
    assert find_bundled_gguf("Qwen/Qwen2.5-0.5B") is None and find_bundled_gguf("qwen2.5-0.5b") is None
    report = json.loads(ffncalc("params", "qwen2.5-0.5b-instruct-q4_k_m", "--json").stdout)
    assert report["total_params"] == 494_032_768 and report["source"] == "bundled"


def test_wheel_ships_the_bundled_header(tmp_path):
    """Built as pip builds it (hatchling, offline), the wheel holds ffncalc/bundled_gguf/…header.gguf, and the
    installed package (the wheel unpacked, away from the checkout) reads it by its short name."""
    pytest.importorskip("hatchling")
    import zipfile

    built = subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-build-isolation",
            "--no-deps",
            "-q",
            "-w",
            str(tmp_path),
            str(ROOT),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr[-2000:]
    (wheel,) = tmp_path.glob("ffncalc-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "ffncalc/bundled_gguf/qwen2.5-0.5b-instruct-q4_k_m.header.gguf" in names
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    result = subprocess.run(
        [sys.executable, "-m", "ffncalc", "params", "qwen2.5-0.5b-instruct-q4_k_m", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
        env={**__import__("os").environ, "PYTHONPATH": str(site)},
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["total_params"] == 494_032_768
    assert report["gguf"]["file"].startswith(str(site / "ffncalc" / "bundled_gguf"))


def test_compute_buffer_of_llama3_8b_equals_its_published_log(tmp_path):
    """Llama 3 8B's output stage: 512 × (4,096 + 128,256) × 4 bytes = 258.50 MiB, the `CUDA0 compute buffer size =
    258.50 MiB` of public llama.cpp load logs (n_ctx 512 and 4,096, flash attention off, all 33 layers offloaded;
    found with the code search tool). Only token_embd's shape and the head count matter here."""
    from ffncalc.llamacpp import llamacpp_memory

    meta = {**TINY, "llama.embedding_length": ("uint32", 4096), "llama.attention.head_count": ("uint32", 32)}
    path = tmp_path / "wide.gguf"
    write_gguf(path, "llama", meta, [("token_embd.weight", (4096, 128256), "q4_K")])
    memory = llamacpp_memory(read_local_gguf(path), 512)
    assert memory.compute_buffer / MIB == 258.50
    # its CPU buffer, token_embd in Q4_K: 128,256 × 4,096 × 144 / 256 bytes, the log's `CPU buffer size = 281.81 MiB`
    assert round(memory.devices[1].weights / MIB, 2) == 281.81


# --- deepseek2 (MLA) -----------------------------------------------------------------------------------------------

# A two-layer DeepSeek V3 as llama.cpp's converter writes it: hidden 64, 4 heads, q_lora 32, kv_lora 16, rope 8,
# nope 12, v 8; layer 0 dense (FFN 96), layer 1 MoE (4 experts of 32, 2 used, 1 shared expert, sigmoid routing with
# exp_probs_b); vocabulary 100; kv_b split into attn_k_b and attn_v_b (newer files: head_count_kv 1, key_length
# kv_lora + rope, value_length kv_lora, the per-head sizes under *_mla).
DEEPSEEK = {
    "deepseek2.block_count": ("uint32", 2),
    "deepseek2.context_length": ("uint32", 4096),
    "deepseek2.embedding_length": ("uint32", 64),
    "deepseek2.feed_forward_length": ("uint32", 96),
    "deepseek2.attention.head_count": ("uint32", 4),
    "deepseek2.attention.head_count_kv": ("uint32", 1),
    "deepseek2.attention.key_length": ("uint32", 16 + 8),
    "deepseek2.attention.value_length": ("uint32", 16),
    "deepseek2.attention.key_length_mla": ("uint32", 12 + 8),
    "deepseek2.attention.value_length_mla": ("uint32", 8),
    "deepseek2.attention.q_lora_rank": ("uint32", 32),
    "deepseek2.attention.kv_lora_rank": ("uint32", 16),
    "deepseek2.rope.dimension_count": ("uint32", 8),
    "deepseek2.leading_dense_block_count": ("uint32", 1),
    "deepseek2.expert_count": ("uint32", 4),
    "deepseek2.expert_used_count": ("uint32", 2),
    "deepseek2.expert_shared_count": ("uint32", 1),
    "deepseek2.expert_feed_forward_length": ("uint32", 32),
    "deepseek2.expert_gating_func": ("uint32", 2),
    "deepseek2.attention.layer_norm_rms_epsilon": ("float32", 1e-6),
}


def deepseek_tensors() -> list[tuple[str, tuple[int, ...], str]]:
    tensors = [("token_embd.weight", (64, 100), "f32")]
    for i in range(2):
        tensors += [
            (f"blk.{i}.attn_norm.weight", (64,), "f32"),
            (f"blk.{i}.attn_q_a.weight", (64, 32), "f32"),
            (f"blk.{i}.attn_q_a_norm.weight", (32,), "f32"),
            (f"blk.{i}.attn_q_b.weight", (32, 4 * (12 + 8)), "f32"),
            (f"blk.{i}.attn_kv_a_mqa.weight", (64, 16 + 8), "f32"),
            (f"blk.{i}.attn_kv_a_norm.weight", (16,), "f32"),
            (f"blk.{i}.attn_k_b.weight", (12, 16, 4), "f32"),  # torch (heads, kv_lora, nope), reversed
            (f"blk.{i}.attn_v_b.weight", (16, 8, 4), "f32"),  # torch (heads, v, kv_lora), reversed
            (f"blk.{i}.attn_output.weight", (4 * 8, 64), "f32"),
            (f"blk.{i}.ffn_norm.weight", (64,), "f32"),
        ]
    tensors += [("blk.0.ffn_gate.weight", (64, 96), "f32"), ("blk.0.ffn_up.weight", (64, 96), "f32"),
                ("blk.0.ffn_down.weight", (96, 64), "f32")]  # fmt: skip
    tensors += [
        ("blk.1.ffn_gate_inp.weight", (64, 4), "f32"),
        ("blk.1.exp_probs_b.bias", (4,), "f32"),
        ("blk.1.ffn_gate_exps.weight", (64, 32, 4), "f32"),
        ("blk.1.ffn_up_exps.weight", (64, 32, 4), "f32"),
        ("blk.1.ffn_down_exps.weight", (32, 64, 4), "f32"),
        ("blk.1.ffn_gate_shexp.weight", (64, 32), "f32"),
        ("blk.1.ffn_up_shexp.weight", (64, 32), "f32"),
        ("blk.1.ffn_down_shexp.weight", (32, 64), "f32"),
        ("output_norm.weight", (64,), "f32"),
        ("output.weight", (64, 100), "f32"),
    ]
    return tensors


# By hand, as transformers' DeepseekV3ForCausalLM holds them: attention per layer q_a 64·32, its norm 32, q_b
# 32·4·20, kv_a 64·24, its norm 16, kv_b 16·4·(12 + 8), o 32·64; two norms per layer; layer 0's MLP 3·64·96;
# layer 1's router 64·4, experts 4·3·64·32, shared expert 3·64·32; embedding, head, final norm. The router's
# e_score_correction_bias (exp_probs_b, 4 values) is a buffer in transformers (DeepseekV3TopkRouter register_buffer),
# not a parameter: verify calls it an extra.
DEEPSEEK_ATTENTION = 64 * 32 + 32 + 32 * 80 + 64 * 24 + 16 + 16 * 80 + 32 * 64
DEEPSEEK_PARAMS = 2 * 6400 + 64 + 2 * (DEEPSEEK_ATTENTION + 128) + 3 * 64 * 96 + (256 + 4 * 3 * 64 * 32 + 3 * 64 * 32)


def test_deepseek2_counts_and_verifies(tmp_path):
    path = tmp_path / "deepseek.gguf"
    write_gguf(path, "deepseek2", DEEPSEEK, deepseek_tensors())
    params = json.loads(ffncalc("params", str(path), "--json").stdout)
    assert params["model_type"] == "deepseek_v3"
    assert params["total_params"] == DEEPSEEK_PARAMS == params["gguf"]["parameters"] == 81_568
    assert params["gguf"]["parameters_match"] is True
    result = ffncalc("verify", str(path), "--json")
    report = json.loads(result.stdout)
    assert result.returncode == 0, [t for t in report["tensors"] if t["verdict"] != "parameter"]
    assert report["counts"] == {"parameter": len(deepseek_tensors()) - 1, "extra": 1}
    assert report["checkpoint_params"] == DEEPSEEK_PARAMS


def test_deepseek2_cache_is_the_latent_alone(tmp_path):
    """MLA as llama.cpp caches it: per cell and layer K of kv_lora + rope = 24 values (f16: 48 bytes) and no V (a
    view of K), so 1,000 tokens (1,024 cells) take 2 × 1,024 × 48 bytes. Public logs of MLA models print the same
    shape: `K (f16): 44928.00 MiB, V (f16): 0.00 MiB` for 524,288 cells × 78 layers × 576 × 2 bytes."""
    from ffncalc.llamacpp import llamacpp_memory

    path = tmp_path / "deepseek.gguf"
    write_gguf(path, "deepseek2", DEEPSEEK, deepseek_tensors())
    memory = llamacpp_memory(read_local_gguf(path), 1000)
    assert memory.kv_cache_per_layer == [1024 * 24 * 2] * 2
    # the logged model's MLA sizes (kv_lora 512 + rope 64 = 576, 78 layers) at its 524,288 cells
    big = {**DEEPSEEK, "deepseek2.block_count": ("uint32", 78), "deepseek2.attention.key_length": ("uint32", 576),
           "deepseek2.attention.value_length": ("uint32", 512), "deepseek2.attention.kv_lora_rank": ("uint32", 512),
           "deepseek2.attention.key_length_mla": ("uint32", 192), "deepseek2.rope.dimension_count": ("uint32", 64)}  # fmt: skip
    write_gguf(path, "deepseek2", big, [("token_embd.weight", (64, 100), "f32")])
    assert llamacpp_memory(read_local_gguf(path), 524288).kv_cache / MIB == 44928.00


# --- gpt-oss and mistral3 ------------------------------------------------------------------------------------------

GPT_OSS = {
    "gpt-oss.block_count": ("uint32", 2),
    "gpt-oss.context_length": ("uint32", 4096),
    "gpt-oss.embedding_length": ("uint32", 64),
    "gpt-oss.feed_forward_length": ("uint32", 32),
    "gpt-oss.expert_feed_forward_length": ("uint32", 32),
    "gpt-oss.attention.head_count": ("uint32", 4),
    "gpt-oss.attention.head_count_kv": ("uint32", 2),
    "gpt-oss.attention.key_length": ("uint32", 16),
    "gpt-oss.attention.value_length": ("uint32", 16),
    "gpt-oss.attention.sliding_window": ("uint32", 16),
    "gpt-oss.expert_count": ("uint32", 4),
    "gpt-oss.expert_used_count": ("uint32", 2),
    "gpt-oss.attention.layer_norm_rms_epsilon": ("float32", 1e-5),
}


def gpt_oss_tensors() -> list[tuple[str, tuple[int, ...], str]]:
    tensors = [("token_embd.weight", (64, 100), "f32")]
    for i in range(2):
        b = f"blk.{i}"
        tensors += [
            (f"{b}.attn_norm.weight", (64,), "f32"),
            (f"{b}.attn_q.weight", (64, 64), "f32"), (f"{b}.attn_q.bias", (64,), "f32"),
            (f"{b}.attn_k.weight", (64, 32), "f32"), (f"{b}.attn_k.bias", (32,), "f32"),
            (f"{b}.attn_v.weight", (64, 32), "f32"), (f"{b}.attn_v.bias", (32,), "f32"),
            (f"{b}.attn_output.weight", (64, 64), "f32"), (f"{b}.attn_output.bias", (64,), "f32"),
            (f"{b}.attn_sinks.weight", (4,), "f32"),
            (f"{b}.post_attention_norm.weight", (64,), "f32"),
            (f"{b}.ffn_gate_inp.weight", (64, 4), "f32"), (f"{b}.ffn_gate_inp.bias", (4,), "f32"),
            (f"{b}.ffn_gate_exps.weight", (64, 32, 4), "mxfp4"), (f"{b}.ffn_gate_exps.bias", (32, 4), "f32"),
            (f"{b}.ffn_up_exps.weight", (64, 32, 4), "mxfp4"), (f"{b}.ffn_up_exps.bias", (32, 4), "f32"),
            (f"{b}.ffn_down_exps.weight", (32, 64, 4), "mxfp4"), (f"{b}.ffn_down_exps.bias", (64, 4), "f32"),
        ]  # fmt: skip
    return [*tensors, ("output_norm.weight", (64,), "f32"), ("output.weight", (64, 100), "f32")]


# By hand (GptOssForCausalLM): per layer two norms 128; q 64·64 + 64, k and v 64·32 + 32, o 64·64 + 64, sinks 4;
# router 64·4 + 4; experts gate_up 4·64·64 + 4·64, down 4·32·64 + 4·64; embedding, head, final norm.
GPT_OSS_LAYER = 128 + (4096 + 64 + 2 * (2048 + 32) + 4096 + 64 + 4) + 260 + (4 * 64 * 64 + 256 + 4 * 32 * 64 + 256)
GPT_OSS_PARAMS = 2 * GPT_OSS_LAYER + 2 * 6400 + 64


def test_gpt_oss_counts_verifies_and_slides(tmp_path):
    """MXFP4 experts are 17 bytes per 32 weights (ggml's block: 16 bytes of 4-bit values and an E8M0 scale);
    llama.cpp slides every other layer from the first (set_swa_pattern(2)), window 16: min(1,000, 16 + 512) cells
    padded to 768."""
    path = tmp_path / "gpt-oss.gguf"
    write_gguf(path, "gpt-oss", GPT_OSS, gpt_oss_tensors())
    params = json.loads(ffncalc("params", str(path), "--json").stdout)
    assert params["model_type"] == "gpt_oss" and params["total_params"] == GPT_OSS_PARAMS == 88_784
    assert {row["type"]: row["bytes"] for row in params["gguf"]["by_type"]}["MXFP4"] == 2 * 3 * 64 * 32 * 4 // 32 * 17
    result = ffncalc("verify", str(path), "--json")
    report = json.loads(result.stdout)
    assert result.returncode == 0, [t for t in report["tensors"] if t["verdict"] != "parameter"]
    assert report["counts"] == {"parameter": len(gpt_oss_tensors())}
    from ffncalc.llamacpp import llamacpp_memory

    memory = llamacpp_memory(read_local_gguf(path), 1000)
    assert memory.swa_cells == 768
    assert memory.kv_cache_per_layer == [768 * 2 * 32 * 2, 1024 * 2 * 32 * 2]


def test_mistral3_is_counted_as_mistral(tmp_path):
    """llama.cpp's mistral3 (Ministral 3's language model) stores llama's tensors: the tiny llama above, renamed."""
    meta = {key.replace("llama.", "mistral3."): value for key, value in TINY.items()}
    path = tmp_path / "ministral.gguf"
    write_gguf(path, "mistral3", meta, tiny_tensors())
    params = json.loads(ffncalc("params", str(path), "--json").stdout)
    assert params["model_type"] == "mistral" and params["total_params"] == TINY_PARAMS
    assert ffncalc("verify", str(path)).returncode == 0


def test_memory_of_a_gguf_refuses_what_llamacpp_does_not_read():
    for args in (("--train",), ("--engine", "vllm"), ("--batch", "4"), ("--tp", "2"), ("--dtype", "fp8")):
        result = ffncalc("memory", "qwen2.5-0.5b-instruct-q4_k_m", *args)
        assert result.returncode != 0 and f"{args[0]} does not apply to a GGUF" in result.stderr, result.stderr


def test_hub_gguf_in_speed_and_verify(gguf_hub, tmp_path):
    """--file reads a Hub GGUF's header for speed and verify as for params (the fake Hub, no network)."""
    verified = run_ffncalc(
        "verify", "acme/tiny-GGUF", "--file", "tiny-Q4_0.gguf", "--json", endpoint=gguf_hub.url, home=tmp_path
    )
    assert verified.returncode == 0, verified.stderr
    assert json.loads(verified.stdout)["checkpoint_params"] == TINY_PARAMS
    fast = run_ffncalc(
        "speed", "acme/tiny-GGUF", "--file", "tiny-Q4_0.gguf", "--gpu", "rtx3090", "--ctx", "1000", "--json",
        endpoint=gguf_hub.url, home=tmp_path,
    )  # fmt: skip
    assert fast.returncode == 0, fast.stderr
    decode = json.loads(fast.stdout)["reports"][0]["decode"]["components"]
    assert {c["name"]: c["bytes"] for c in decode}["ffn"] == TINY_FFN + 2 * 2 * 256 * 2


def test_a_quantized_gguf_runs_its_matmuls_at_the_int8_peak_in_the_ceiling():
    # llama.cpp's quantized matmuls (MMQ) run on INT8 tensor cores: the RTX 3090's 284 dense TOPS (NVIDIA's Ampere
    # whitepaper), not its 71 TFLOPS of FP16 with FP32 accumulation.
    from ffncalc.api import speed

    report = speed("qwen2.5-0.5b-instruct-q4_k_m", "rtx3090", batches="1").reports[0]
    assert report.gpu.compute_dtype == "int8" and report.gpu.peak_flops == 284 * 10**12
