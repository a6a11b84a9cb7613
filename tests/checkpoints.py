"""Small safetensors checkpoints written by the tests: real headers, and data of the right length.

A safetensors file is an 8-byte little-endian header length, a JSON header
{name: {"dtype", "shape", "data_offsets"}}, then the data. ffncalc reads only the header, and
checks that the file is as long as the header says; the data here is a sparse run of zeros.
"""

from __future__ import annotations

import json
from pathlib import Path

DTYPE_BYTES = {"F32": 4, "BF16": 2, "F16": 2, "F8_E4M3": 1, "U8": 1, "I8": 1, "I16": 2, "I32": 4, "U32": 4, "I64": 8}


def data_bytes(tensors: dict[str, tuple[str, list[int]]]) -> int:
    total = 0
    for dtype, shape in tensors.values():
        size = DTYPE_BYTES[dtype]
        for dim in shape:
            size *= dim
        total += size
    return total


def safetensors_header(tensors: dict[str, tuple[str, list[int]]]) -> bytes:
    """The bytes of a safetensors file up to its data: length prefix and JSON header."""
    header, offset = {}, 0
    for name, (dtype, shape) in tensors.items():
        size = DTYPE_BYTES[dtype]
        for dim in shape:
            size *= dim
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    encoded = json.dumps(header).encode()
    return len(encoded).to_bytes(8, "little") + encoded


def write_safetensors(path: Path, tensors: dict[str, tuple[str, list[int]]]) -> Path:
    """A safetensors file: its header, then as many (zero) data bytes as the header describes."""
    header = safetensors_header(tensors)
    with path.open("wb") as handle:
        handle.write(header)
        handle.truncate(len(header) + data_bytes(tensors))
    return path


def write_checkpoint(folder: Path, config: dict, tensors: dict[str, tuple[str, list[int]]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(config))
    write_safetensors(folder / "model.safetensors", tensors)
    return folder


def llama_tensors(config: dict, dtype: str = "BF16", prefix: str = "model.") -> dict[str, tuple[str, list[int]]]:
    """transformers' Llama layout, written out by hand: names and [out, in] shapes."""
    hidden, width, vocab = config["hidden_size"], config["intermediate_size"], config["vocab_size"]
    heads = config["num_attention_heads"]
    kv_heads = config.get("num_key_value_heads", heads)
    head_dim = config.get("head_dim", hidden // heads)
    tensors = {f"{prefix}embed_tokens.weight": (dtype, [vocab, hidden])}
    for i in range(config["num_hidden_layers"]):
        layer = f"{prefix}layers.{i}."
        tensors.update(
            {
                layer + "self_attn.q_proj.weight": (dtype, [heads * head_dim, hidden]),
                layer + "self_attn.k_proj.weight": (dtype, [kv_heads * head_dim, hidden]),
                layer + "self_attn.v_proj.weight": (dtype, [kv_heads * head_dim, hidden]),
                layer + "self_attn.o_proj.weight": (dtype, [hidden, heads * head_dim]),
                layer + "mlp.gate_proj.weight": (dtype, [width, hidden]),
                layer + "mlp.up_proj.weight": (dtype, [width, hidden]),
                layer + "mlp.down_proj.weight": (dtype, [hidden, width]),
                layer + "input_layernorm.weight": (dtype, [hidden]),
                layer + "post_attention_layernorm.weight": (dtype, [hidden]),
            }
        )
    tensors[f"{prefix}norm.weight"] = (dtype, [hidden])
    tensors["lm_head.weight"] = (dtype, [vocab, hidden])
    return tensors


def header_entries(*entries: tuple[str, str, list, list]) -> bytes:
    """A safetensors header's JSON text from (name, dtype, shape, data_offsets) entries written as given: a name may
    repeat, and nothing is checked (for headers that break the format's rules)."""
    items = [
        f"{json.dumps(name)}: {json.dumps({'dtype': dtype, 'shape': shape, 'data_offsets': offsets})}"
        for name, dtype, shape, offsets in entries
    ]
    return ("{" + ", ".join(items) + "}").encode()


def safetensors_file(header: bytes, data: int) -> bytes:
    """A whole safetensors file: the length prefix, HEADER, and DATA zero bytes."""
    return len(header).to_bytes(8, "little") + header + bytes(data)
