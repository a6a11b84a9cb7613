"""Each command-line option's help, by its flag: one flag, one meaning, one help. Three flags still say something
else in one command, keyed by that command: `--engine` names the serving engine in both, spelled alike (vllm,
vllm@VERSION, sglang, none), but speed also takes trtllm and llama.cpp, whose fitted profiles it has and whose
KV-cache arithmetic memory does not model;
`speed --gpu-memory` is a custom chip's memory beside --gpu-flops where `memory --gpu-memory` is a what-if size or a
table name; `train --compute-dtype` defaults to bf16 (mixed-precision training) where speed's follows the weights.
cli/commands.py declares each option's type, flag, default and metavar; this is the text typer shows for it."""

OPTION_HELP = {
    "--dtype": "What if every weight were stored as fp32, bf16, fp16, fp8, int8, int4, nf4 or mxfp4 "
    "(default: as the checkpoint stores them: the config's dtype and quantization_config).",
    "--kv-dtype": "The KV cache's element type, e.g. fp8 (default: the weights' dtype).",
    "--group-size": "With --dtype int4: inputs per group sharing a 16-bit scale and a 4-bit zero point (GPTQ's layout), "
    "e.g. 32 as gpt-fast quantizes (default 128).",
    "--quantize-head": "With a quantized --dtype: the output head quantized as the other linear weights are (as gpt-fast "
    "does); default: it stays in BF16.",
    "--batch": "Sequences decoded together, e.g. 8; speed takes several and sweeps them, e.g. 1,8,64,256.",
    "--gpus": (
        "All the GPUs, e.g. 8 or 16384: serving, one copy's, over --pp stages of --gpus ÷ --pp tensor-parallel GPUs "
        "each; training, the job's (data-parallel ranks: --gpus ÷ (--tp × --pp × --cp))."
    ),
    "--gpu-memory": "Another accelerator's memory with its unit, e.g. 96GB (GB = 10^9 bytes) or 80GiB (GiB = 2^30 bytes; "
    "a bare number is refused), or a name from the accelerator table, e.g. h200.",
    "--engine": "Size the KV cache as a serving engine does: vllm, vllm@0.11 (an older version's arithmetic), "
    "sglang, or none.",
    "--gpu": (
        "The accelerator by its name in the table, e.g. h100, h200, b200, l40s, mi300x (default h100); speed takes "
        "several, comma-separated, side by side; memory sizes --engine's budget and --solve on it."
    ),
    "--kv-budget": "The KV-cache memory per GPU your engine printed, e.g. 40GiB (skips estimating the budget).",
    "--gpu-memory-utilization": "vLLM's gpu_memory_utilization (SGLang's mem_fraction_static), e.g. 0.9 (the default).",
    "--max-num-batched-tokens": "vLLM's max_num_batched_tokens, e.g. 2048 (default: vLLM's for the --gpu).",
    "--block-size": "vLLM's block size in tokens (default 16; 64 for MLA).",
    "--solve": "The largest that fits on --gpu × --tp: ctx, batch or concurrency (with --engine).",
    "--chunk": "Prefill chunk for the activation buffer, in tokens.",
    "--train": "Also training: gradients, optimizer states, activations.",
    "--optimizer": "With --train: adamw, adamw-8bit or sgd.",
    "--lora-rank": "With --train: LoRA adapters of rank R on the attention and FFN projections, the base frozen as stored.",
    "--prompt": "Prefill prompt length, e.g. 8k (default: --ctx).",
    "--compute-dtype": "Peak the matmuls run at: bf16, fp8, int8 or fp4 (default: the weights').",
    "--compute-efficiency": "Share of peak FLOP/s reached, e.g. 0.7.",
    "--bandwidth-efficiency": "Share of peak bandwidth reached, e.g. 0.8.",
    "--gpu-flops": "Another chip's dense peak, e.g. 989e12.",
    "--gpu-bandwidth": "Another chip's bandwidth, e.g. 3.35e12.",
    "speed --gpu-memory": "With --gpu-flops: its memory with its unit, e.g. 96GB (10^9 bytes) or 80GiB (2^30 bytes).",
    "--gpu-interconnect": "With --gpu-flops and --tp: its interconnect per direction, e.g. 450e9 (NVLink 4: 900 GB/s both ways).",
    "--gpu-name": "With --gpu-flops: what to call the chip, e.g. 'H20'.",
    "speed --engine": "The serving engine whose fitted profile gives the expected (≈) times: vllm, sglang, trtllm or "
    "llama.cpp, spelled as memory's (vllm@0.11: vLLM's one profile; none or left out: typical of current engines).",
    "--output": "Tokens each request generates, e.g. 1024: adds the request end to end (TTFT + the decode steps "
    "over the growing context) and the batch's tokens/s.",
    "--measured-tpot": "A TPOT you measured, in milliseconds, e.g. 6.5: the share of the ceiling reached and the modelled "
    "term that explains most of the gap.",
    "--measured-ttft": "A TTFT you measured, in milliseconds, e.g. 45.",
    "--price": (
        "Price per GPU-hour in US dollars, e.g. 2.50: speed, the cost per million input (prefill) and output (decode) "
        "tokens at the expected throughput; train, the run's cost."
    ),
    "--tokens": "Training tokens, e.g. 15T, 300B or 2e12 (decimal). Default: what --compute buys, else 1T.",
    "--seq": "Sequence length, e.g. 8k (k = 1024). Default 8k.",
    "train --compute-dtype": "The matmuls' dtype, whose dense peak counts: bf16, fp8, … (as in speed)",
    "--mfu": "Model FLOPs utilisation assumed (default 0.4).",
    "--days": "Finish in D days: the GPUs needed (not with --gpus).",
    "--plan": "Rank the layouts of --gpus that fit, by expected tokens/s per GPU (--global-batch).",
    "--measured-tokens-per-second": "A measured run's tokens/s (the whole job's; --per-gpu for one GPU's): its MFU by each convention.",
    "--per-gpu": "--measured-tokens-per-second is per GPU.",
    "--compute": "Compute-optimal size for this budget, e.g. 5.76e23.",
    "--revision": "Hub branch, tag or commit, e.g. main; fetches from the Hub even for bundled ids.",
    "--token": "Hub token for gated or private repos (default: HF_TOKEN or your saved login).",
    "--file": "A GGUF in the Hub repo MODEL, e.g. Qwen2.5-7B-Instruct-Q4_K_M.gguf: only its header is read (byte "
    "ranges). A local .gguf is given as MODEL itself.",
    "--as": "Count a config whose model_type ffncalc does not know with a known family's rules, e.g. --as llama.",
    "--json": "Print one JSON document (exact integers) instead of tables.",
    "--svg": "Also save the tables as an SVG picture, e.g. out.svg.",
    "--html": "Also save the tables as an HTML page, e.g. out.html.",
    "--width": "With --svg/--html: the picture's width in columns (default: wide enough that no table splits).",
    "--cache-type": "A GGUF under llama.cpp: the KV cache's type, f16 (default), q8_0 or q4_0 (--cache-type-k/-v).",
    "--set": "What if: change a config field before counting, e.g. --set intermediate_size=16384 (VALUE is JSON or "
    "a word; dotted keys reach nested configs, e.g. text_config.num_hidden_layers=40; repeatable).",
    "--sweep": "One row of headline figures per value: KEY=1,2,4,8, KEY=START:STOP:STEP or KEY=1:64:x2 (doubling); "
    "twice for a grid.",
    "--sequence-parallel": "With --tp in training: also split the norms' and dropouts' activations (Megatron's sequence "
    "parallelism).",
    "--tp": "Tensor parallelism: each matrix split across N GPUs, e.g. 8 (default: 1; memory without --train: --gpus).",
    "--pp": "Pipeline parallelism: the layers split into N stages, each over its own --tp GPUs, e.g. 16 (default 1).",
    "--ep": "Expert parallelism: the routed experts split over N GPUs, E/N whole experts each, e.g. 8 (serving: N "
    "of the --tp GPUs, an all-to-all dispatch and combine per MoE layer; training: N of the data-parallel ranks).",
    "--dp-attention": "Serving: attention data-parallel over the --tp GPUs, each GPU whole attention and its own requests' "
    "KV cache (SGLang's --enable-dp-attention; vLLM's --data-parallel-size with --enable-expert-parallel).",
    "--runtime-reserve": "Memory the runtime keeps on each GPU (CUDA context, allocator), e.g. 2GiB or 0 (default 1GiB, assumed).",
    "--disaggregate": "Serving: prefill on P GPUs, decode on D, e.g. 8:24: each pool's requests, the KV cache each request "
    "moves between them, and the split that balances them (speed: with --output).",
    "--cp": "Training: context parallelism, each sequence split across N GPUs.",
    "--dp": "Training: data-parallel ranks (default: --gpus ÷ (--tp × --pp × --cp)).",
    "--vpp": "Training: interleaved 1F1B, N model chunks per pipeline stage.",
    "--micro-batch": "Training: sequences per GPU per forward, e.g. 2 (default 1; memory --train: --batch).",
    "--global-batch": (
        "Training: sequences per optimizer step, e.g. 1024 (default: --micro-batch × data-parallel ranks; with --plan "
        "DeepSeek LLM's optimal batch for the run's FLOPs, a power of two)."
    ),
    "--attention": "flash (FlashAttention-style: no s×s score matrix stored or read, the default) or eager (scores written "
    "and read; memory --train then counts them as Korthikanti et al. do).",
    "--zero": "Training: ZeRO stage 0–3 over the data-parallel ranks (1 shards the optimizer states, 2 the gradients "
    "too, 3 the weights too). Default 1 (0 with --lora-rank).",
    "--recompute": "Training: activation recomputation, none, selective or full.",
    "--recompute-modules": "Training, with --recompute selective: what it recomputes, as Megatron-LM's recompute_modules, e.g. "
    "layernorm,mla_up_proj (core_attn, layernorm, mla_up_proj; default core_attn).",
    "--explain": "Also say how each figure is counted (the conventions).",
    "--brief": "Only the headline figures, in one short block (with --json: just those).",
    "--chart": "With --sweep: the figure to chart, by its --json name, e.g. active_params for params or "
    "tokens_per_second for speed (default: the first).",
    "--format": "With --sweep: table, csv (raw values), markdown or json (as --json).",
    "--mla": "MLA attention (DeepSeek): 'plain' as the model is written (the default), or 'absorbed' as inference "
    "engines run it (scores over the kv_lora_rank latent).",
    "RowsFormatOpt": "table, csv (raw values) or markdown; json is --json.",
}
