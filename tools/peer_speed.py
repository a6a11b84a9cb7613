"""What llm-analysis (0.2.2, from the package index) estimates for Llama-2-7b on an H100 SXM, for the README's
side-by-side with `ffncalc speed`.

A side script, in a side venv with llm-analysis (it ships its own Llama-2-7b and H100 configs; no network):

    python -m venv /tmp/llma && /tmp/llma/bin/pip install llm-analysis==0.2.2
    /tmp/llma/bin/python tools/peer_speed.py
    ffncalc speed meta-llama/Llama-2-7b-hf --gpu h100 --ctx 2048 --prompt 2048 --json

Both at 100 % of peak FLOP/s and bandwidth, batch 1, a 2,048-token prompt and one token decoded at 2,048.
"""

from __future__ import annotations

from llm_analysis.analysis import infer

result = infer(
    model_name="NousResearch_Llama-2-7b-hf",
    gpu_name="h100-sxm-80gb",
    dtype_name="w16a16e16",
    batch_size_per_gpu=1,
    seq_len=2048,
    num_tokens_to_generate=1,
    flops_efficiency=1.0,
    hbm_memory_efficiency=1.0,
    output_dir=None,
)
for key in ("weight_memory_per_gpu", "kv_cache_memory_per_gpu", "prefill_latency", "decode_latency"):
    print(key, result[key])
