"""Write the bundled header-only GGUF (fixtures/gguf/) with the gguf package's own writer.

fixtures/gguf/qwen2.5-0.5b-instruct-q4_k_m.header.gguf is SYNTHESISED, not cut from a downloaded file (this
machine has no access to the Hub): its metadata and tensor table are what llama.cpp writes for
Qwen/Qwen2.5-0.5B-Instruct (the bundled fixtures/configs/Gensyn__Qwen2.5-0.5B-Instruct.json, the same
architecture) quantized as Q4_K_M:

- tensor names and shapes: llama.cpp's qwen2 tensors (token_embd, blk.N.attn_{norm,q,k,v,output}, the q/k/v
  biases, blk.N.ffn_{norm,gate,up,down}, output_norm; no output.weight: the head is tied), shapes in ggml order;
- types: llama.cpp's Q4_K_M rules (src/llama-quant.cpp llama_tensor_get_type): attn_v and ffn_down Q6_K on the
  "use_more_bits" layers (i < n/8, i ≥ 7n/8, (i − n/8) % 3 == 2), Q4_K elsewhere; the tied token_embd as the
  output (Q6_K); rows of 896 are not a whole number of 256-weight K blocks, so Q4_K falls back to Q5_0 and Q6_K
  to Q8_0 there. The result has exactly the type counts llama.cpp printed loading Ollama's qwen2.5:0.5b (a
  Q4_K_M of this model) in ollama/ollama#9031: f32 121, q5_0 132, q8_0 13, q4_K 12, q6_K 12 tensors;
- metadata: the qwen2.* keys llama.cpp's converter writes from that config; the tokenizer arrays are left out
  (they are not read for counting, and would make the file 5 MB).

Run: .venv/bin/python tools/write_gguf_fixture.py (needs the gguf package: pip install -e '.[gguf]').
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


def write_gguf(
    path: Path,
    arch: str,
    metadata: dict[str, tuple[str, Any]],
    tensors: list[tuple[str, tuple[int, ...], str]],
    data: bool = False,
    split_max_tensors: int = 0,
) -> list[Path]:
    """A GGUF at PATH with METADATA (key → (kind, value), kind one of uint32, float32, string, bool, array) and
    TENSORS (name, ggml shape with ne[0] first, ggml type name); with DATA, zero bytes for every tensor (a complete
    file), else the header alone. SPLIT_MAX_TENSORS writes a split set (the writer names the parts)."""
    import gguf
    import numpy as np

    writer = gguf.GGUFWriter(path, arch, split_max_tensors=split_max_tensors)
    for key, (kind, value) in metadata.items():
        if kind == "array":
            writer.add_array(key, value)
        else:
            getattr(writer, f"add_{kind}")(key, value)
    for name, shape, type_name in tensors:
        kind = gguf.GGMLQuantizationType[type_name.upper()]
        block, size = gguf.GGML_QUANT_SIZES[kind]
        rows = 1
        for size_of in shape[1:]:
            rows *= size_of
        nbytes = rows * (shape[0] // block) * size
        if data:
            byte_shape = (*reversed(shape[1:]), shape[0] // block * size)
            writer.add_tensor(name, np.zeros(byte_shape, dtype=np.uint8), raw_dtype=kind)
        else:
            writer.add_tensor_info(name, tuple(reversed(shape)), np.dtype(np.float32), nbytes, raw_dtype=kind)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    if data:
        writer.write_tensors_to_file()
    else:
        writer.write_ti_data_to_file()
    paths = [Path(handle.name) for handle in writer.fout or []]
    writer.close()
    return paths


def use_more_bits(layer: int, layers: int) -> bool:
    """llama.cpp's use_more_bits (src/llama-quant.cpp)."""
    return layer < layers // 8 or layer >= 7 * layers // 8 or (layer - layers // 8) % 3 == 2


def k_type(wanted: str, row: int) -> str:
    """A K type, or llama.cpp's fallback where a row is not a whole number of 256-weight blocks."""
    if row % 256 == 0:
        return wanted
    return {"q4_K": "q5_0", "q5_K": "q5_1", "q6_K": "q8_0"}[wanted]


def qwen25_05b_q4_k_m() -> tuple[dict[str, tuple[str, Any]], list[tuple[str, tuple[int, ...], str]]]:
    """Qwen2.5-0.5B-Instruct's Q4_K_M metadata and tensor table, as llama.cpp writes them (see the docstring)."""
    hidden, ffn, layers, heads, kv_heads, vocab = 896, 4864, 24, 14, 2, 151936
    head_dim = hidden // heads
    kv = kv_heads * head_dim
    metadata: dict[str, tuple[str, Any]] = {
        "general.type": ("string", "model"),
        "general.name": ("string", "Qwen2.5 0.5B Instruct"),
        "general.finetune": ("string", "Instruct"),
        "general.basename": ("string", "Qwen2.5"),
        "general.size_label": ("string", "0.5B"),
        "qwen2.block_count": ("uint32", layers),
        "qwen2.context_length": ("uint32", 32768),
        "qwen2.embedding_length": ("uint32", hidden),
        "qwen2.feed_forward_length": ("uint32", ffn),
        "qwen2.attention.head_count": ("uint32", heads),
        "qwen2.attention.head_count_kv": ("uint32", kv_heads),
        "qwen2.rope.freq_base": ("float32", 1000000.0),
        "qwen2.attention.layer_norm_rms_epsilon": ("float32", 1e-6),
        "general.file_type": ("uint32", 15),  # LLAMA_FTYPE_MOSTLY_Q4_K_M
        "general.quantization_version": ("uint32", 2),
        "tokenizer.ggml.model": ("string", "gpt2"),
        "tokenizer.ggml.pre": ("string", "qwen2"),
    }
    tensors: list[tuple[str, tuple[int, ...], str]] = [("token_embd.weight", (hidden, vocab), k_type("q6_K", hidden))]
    for i in range(layers):
        more = use_more_bits(i, layers)
        tensors += [
            (f"blk.{i}.attn_norm.weight", (hidden,), "f32"),
            (f"blk.{i}.attn_q.weight", (hidden, hidden), k_type("q4_K", hidden)),
            (f"blk.{i}.attn_q.bias", (hidden,), "f32"),
            (f"blk.{i}.attn_k.weight", (hidden, kv), k_type("q4_K", hidden)),
            (f"blk.{i}.attn_k.bias", (kv,), "f32"),
            (f"blk.{i}.attn_v.weight", (hidden, kv), k_type("q6_K" if more else "q4_K", hidden)),
            (f"blk.{i}.attn_v.bias", (kv,), "f32"),
            (f"blk.{i}.attn_output.weight", (hidden, hidden), k_type("q4_K", hidden)),
            (f"blk.{i}.ffn_norm.weight", (hidden,), "f32"),
            (f"blk.{i}.ffn_gate.weight", (hidden, ffn), k_type("q4_K", hidden)),
            (f"blk.{i}.ffn_up.weight", (hidden, ffn), k_type("q4_K", hidden)),
            (f"blk.{i}.ffn_down.weight", (ffn, hidden), k_type("q6_K" if more else "q4_K", ffn)),
        ]
    tensors.append(("output_norm.weight", (hidden,), "f32"))
    return metadata, tensors


def main() -> None:
    folder = ROOT / "fixtures" / "gguf"
    folder.mkdir(parents=True, exist_ok=True)
    metadata, tensors = qwen25_05b_q4_k_m()
    write_gguf(folder / "qwen2.5-0.5b-instruct-q4_k_m.header.gguf", "qwen2", metadata, tensors)


if __name__ == "__main__":
    main()
