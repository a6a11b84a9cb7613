"""llama.cpp's memory for a GGUF: the KV cache as it allocates it, and what sits in VRAM and in RAM with `gpu_layers` (llama.cpp's -ngl).

The arithmetic follows ggml-org/llama.cpp's source (mainline, 2025–2026; the lines are quoted as found with the
search tool across llama.cpp snapshots, their commit not pinned):

- the context is padded to 256 cells: GGML_PAD(n_ctx, 256) in src/llama-context.cpp (older builds: 32 without
  flash attention, llama_kv_cache::get_padding);
- each attention layer caches, per cell, K of n_head_kv · n_embd_head_k and V of n_head_kv · n_embd_head_v
  elements in the cache type (llama.cpp's cache_type_k / cache_type_v: f16 by default, q8_0, q4_0 …), ggml_row_size each
  (src/llama-kv-cache.cpp);
- sliding-window layers (Gemma 2: every other layer; Gemma 3: five of six) hold
  GGML_PAD(min(n_ctx, n_swa · n_seq + n_ubatch), 256) cells (src/llama-kv-cache-iswa.cpp; n_ubatch 512, one
  sequence, without llama.cpp's swa_full);
- with -ngl N, i_gpu_start = max(n_layer + 1 − N, 0): repeating layers il ≥ i_gpu_start, and the output layer
  (output_norm, output) when N ≥ 1, go to the GPU; the input layer (token_embd) always stays on the CPU
  (src/llama-model.cpp load_tensors); a tied head is loaded as a copy of token_embd on the output layer's device;
- the KV cache of a layer sits on that layer's device (offload_kqv, the default).

- the compute buffer is the peak of the worst-case graph at its output stage, n_ubatch × (n_embd + n_vocab) × 4
  bytes (COMPUTE_BUFFER_NOTE: derived, matching published logs, and assumed to be the peak; llama.cpp sizes it by
  building that graph and asking the scheduler, so a layer's intermediates can make it larger).

Not modelled: CPU repacking buffers (CPU_REPACK), the CPU's small compute buffer beside an offloaded model, and
multi-GPU splits (llama.cpp's tensor_split).
"""

from __future__ import annotations

from typing import Any

from .errors import UsageError
from .results import Result

CTX_PAD = 256
N_UBATCH = 512
CACHE_TYPES = ("f32", "f16", "bf16", "q8_0", "q5_1", "q5_0", "q4_1", "q4_0", "iq4_nl")  # llama.cpp's --cache-type-k
LLAMACPP_SOURCE = (
    "ggml-org/llama.cpp src/llama-context.cpp (n_ctx padded to 256), src/llama-kv-cache.cpp, "
    "src/llama-kv-cache-iswa.cpp (SWA cells), src/llama-model.cpp load_tensors (i_gpu_start = max(n_layer + 1 − "
    "ngl, 0); token_embd on the CPU)"
)
COMPUTE_BUFFER_NOTE = (
    "compute buffer: the peak of llama.cpp's worst-case graph at its output stage, derived: graph_reserve "
    "(src/llama-context.cpp) builds the graph for one n_ubatch of 512 tokens, every one an output, so output_norm's "
    "result and the F32 logits are live together: 512 × (n_embd + n_vocab) × 4 bytes on the output layer's device. "
    "Published load logs print exactly this where that stage is the peak (Qwen2.5-0.5B 298.50 MiB, Llama 3 8B "
    "258.50 MiB). ASSUMED to be the whole buffer: a layer's intermediates can be larger (the attention scores "
    "without flash attention at long contexts, n_kv × 512 × n_head × 4 bytes; a wide FFN with a small vocabulary), "
    "and the CPU's few MiB beside an offloaded model are not counted"
)


class LlamaCppDevice(Result):
    """What one device holds: weights and KV cache."""

    device: str  # "GPU" or "CPU"
    weights: int
    kv_cache: int
    compute_buffer: int  # assumed (COMPUTE_BUFFER_NOTE): on the output layer's device
    total: int


class LlamaCppFit(Result):
    """One accelerator under llama.cpp at this context: its usable memory, and the most layers it holds."""

    name: str
    memory: int
    usable: int  # after the runtime reserve (a Mac: of the share macOS wires for the GPU)
    gpu_layers: int  # -ngl that fits (n_layer + 1: every layer and the output layer)
    fits_all: bool  # every layer offloaded fits
    gpu_bytes: int  # what sits on it at that -ngl


class LlamaCppMemory(Result):
    """llama.cpp's memory for this GGUF at a context: KV cache, and the split between GPU and CPU."""

    source: str
    context: int  # n_ctx asked
    kv_cells: int  # n_ctx padded to 256: the cells of a full-attention layer
    swa_cells: int | None  # cells of a sliding-window layer
    cache_type_k: str
    cache_type_v: str
    layers: int
    gpu_layers: int  # -ngl, clamped to n_layer + 1 (the output layer counts as one)
    gpu_layers_solved: bool  # the most that fit the GPU (--gpu-layers not given and a --gpu named)
    kv_cache: int  # all layers
    kv_cache_per_layer: list[int]
    compute_buffer: int  # n_ubatch × (n_embd + n_vocab) × 4 bytes: the output stage, assumed the peak (the note)
    compute_buffer_assumed: bool
    weights_file: int  # Σ ggml_nbytes of the file
    tied_head_copy: int  # token_embd loaded again as the output on the GPU (a tied head with the output offloaded)
    devices: list[LlamaCppDevice]
    gpu: str | None
    gpu_memory: int | None
    gpu_usable: int | None  # after the runtime reserve (and, on a Mac, the share macOS lets the GPU wire)
    fits: bool | None
    notes: list[str]
    all_offloaded: int = 0  # what the GPU holds with every layer offloaded: weights + KV + compute buffer
    file_type: str | None = None  # general.file_type as llama.cpp names it (Q4_K_M)
    accelerators: list[LlamaCppFit] = []  # the local machines, each with the layers it holds


def cache_type(name: str, option: str) -> int:
    """A `cache_type` as ggml's type id; the types llama.cpp accepts for its KV cache."""
    from .ggml import type_id

    if name.lower() not in CACHE_TYPES:
        raise UsageError(f"{option} {name!r}: use one of llama.cpp's cache types: {', '.join(CACHE_TYPES)}")
    return type_id(name)


def swa_layers(architecture: str, layers: int, gguf: Any) -> tuple[list[bool], int]:
    """Which layers slide, and the window, as llama.cpp's hparams set them (set_swa_pattern) for the mapped archs."""
    window = gguf.get(f"{architecture}.attention.sliding_window")
    if not isinstance(window, int) or window <= 0:
        return [False] * layers, 0
    if architecture == "gemma2":  # LLM_ARCH_GEMMA2: set_swa_pattern(2): even layers slide
        return [il % 2 == 0 for il in range(layers)], window
    if architecture == "gpt-oss":  # LLM_ARCH_OPENAI_MOE: set_swa_pattern(2): even layers slide
        return [il % 2 == 0 for il in range(layers)], window
    if architecture == "gemma3":  # LLM_ARCH_GEMMA3: set_swa_pattern(6): five of six slide
        return [il % 6 < 5 for il in range(layers)], window
    return [False] * layers, 0


def _kv_dims(gguf: Any) -> tuple[int, int, int]:
    arch = gguf.architecture
    heads = gguf.get(f"{arch}.attention.head_count")
    kv_heads = gguf.get(f"{arch}.attention.head_count_kv", heads)
    hidden = gguf.get(f"{arch}.embedding_length")
    key = gguf.get(f"{arch}.attention.key_length", hidden // heads)
    value = gguf.get(f"{arch}.attention.value_length", key)
    if gguf.get(f"{arch}.attention.kv_lora_rank") is not None and gguf.get(f"{arch}.attention.key_length_mla"):
        # MLA stored as MQA (deepseek2 files since llama.cpp's MLA conversion): each cell holds the latent and the
        # rope key, key_length = kv_lora_rank + rope; V is a view of K, so no V cache ("K (f16): … MiB, V (f16):
        # 0.00 MiB, n_embd_head_k_all = 576" in llama_kv_cache's log lines for such models)
        value = 0
    return kv_heads, key, value


def llamacpp_memory(
    gguf: Any,
    context: int,
    cache_k: str = "f16",
    cache_v: str | None = None,
    gpu_layers: int | None = None,
    gpu: Any = None,
    reserve: int = 0,
    sequences: int = 1,
) -> LlamaCppMemory:
    """KV cache and the GPU/CPU split of GGUF at CONTEXT; GPU (an accelerator entry) to solve -ngl or check fit."""
    from .ggml import component, layer_of, nbytes, type_name

    kind_k = cache_type(cache_k, "`cache_type`")
    kind_v = cache_type(cache_v or cache_k, "`cache_type` (values)")
    arch = gguf.architecture
    layers = gguf.get(f"{arch}.block_count")
    kv_heads, key, value = _kv_dims(gguf)
    cells = -(-context // CTX_PAD) * CTX_PAD
    sliding, window = swa_layers(arch, layers, gguf)
    swa_cells = -(-min(cells, window * sequences + N_UBATCH) // CTX_PAD) * CTX_PAD if window else None
    per_layer = []
    for index in range(layers):
        n = swa_cells if sliding[index] and swa_cells is not None else cells
        per_layer.append(nbytes(kind_k, (kv_heads * key, n)) + nbytes(kind_v, (kv_heads * value, n)))
    layer_weights = [0] * layers
    output = embedding = other = 0
    tied = not any(tensor.name == "output.weight" for tensor in gguf.tensors)
    for tensor in gguf.tensors:
        il = layer_of(tensor.name)
        if il is not None and il < layers:
            layer_weights[il] += tensor.bytes
        elif tensor.name == "token_embd.weight":
            embedding += tensor.bytes
        elif tensor.name.startswith(("output", "output_norm")) or component(tensor.name) == "lm_head":
            output += tensor.bytes
        else:
            other += tensor.bytes  # rope tables and the like: with the input layer, on the CPU
    table = next((t.shape for t in gguf.tensors if t.name == "token_embd.weight" and len(t.shape) == 2), (0, 0))
    compute = N_UBATCH * (table[0] + table[1]) * 4  # output_norm's result and the logits, F32 (the note)
    usable = None
    if gpu is not None:
        usable = gpu_usable(gpu, reserve)

    def split(ngl: int) -> tuple[list[LlamaCppDevice], int]:
        start = max(layers + 1 - ngl, 0)
        on_gpu = [il >= start for il in range(layers)]
        output_on_gpu = ngl >= 1
        copy = embedding if tied and output_on_gpu else 0
        gpu_weights = sum(w for w, g in zip(layer_weights, on_gpu) if g) + (output + copy if output_on_gpu else 0)
        cpu_weights = embedding + other + sum(w for w, g in zip(layer_weights, on_gpu) if not g)
        cpu_weights += 0 if output_on_gpu else output
        gpu_kv = sum(k for k, g in zip(per_layer, on_gpu) if g)
        cpu_kv = sum(per_layer) - gpu_kv
        gpu_compute, cpu_compute = (compute, 0) if output_on_gpu else (0, compute)
        return [
            LlamaCppDevice(
                device="GPU", weights=gpu_weights, kv_cache=gpu_kv, compute_buffer=gpu_compute,
                total=gpu_weights + gpu_kv + gpu_compute,
            ),
            LlamaCppDevice(
                device="CPU", weights=cpu_weights, kv_cache=cpu_kv, compute_buffer=cpu_compute,
                total=cpu_weights + cpu_kv + cpu_compute,
            ),
        ], copy  # fmt: skip

    solved = gpu_layers is None and usable is not None
    if gpu_layers is None:
        if usable is None:
            ngl = layers + 1
        else:
            ngl = next((n for n in range(layers + 1, -1, -1) if split(n)[0][0].total <= usable), 0)
    else:
        if gpu_layers < 0:
            raise UsageError(f"`gpu_layers` must be 0 or more (got {gpu_layers}); -1 in llama.cpp means all: give 999")
        ngl = min(gpu_layers, layers + 1)
    devices, copy = split(ngl)
    notes = [COMPUTE_BUFFER_NOTE]
    heads = gguf.get(f"{arch}.attention.head_count")
    scores = cells * N_UBATCH * heads * 4 if isinstance(heads, int) else 0
    if scores > compute:
        notes.append(
            f"without flash attention the scores of one layer alone take {scores / (1 << 20):,.2f} MiB at "
            f"{cells:,} cells, more than the compute buffer counted: llama.cpp's is then larger (-fa on avoids them)"
        )
    if cells != context:
        notes.append(f"n_ctx {context:,} is padded to {cells:,} cells, as llama.cpp pads it (to 256)")
    if tied and ngl >= 1:
        notes.append("the tied head is loaded as a copy of token_embd on the GPU (the input layer stays on the CPU)")
    return LlamaCppMemory(
        source=LLAMACPP_SOURCE,
        context=context,
        kv_cells=cells,
        swa_cells=swa_cells,
        cache_type_k=type_name(kind_k).lower(),
        cache_type_v=type_name(kind_v).lower(),
        layers=layers,
        gpu_layers=ngl,
        gpu_layers_solved=solved,
        kv_cache=sum(per_layer),
        kv_cache_per_layer=per_layer,
        compute_buffer=compute,
        compute_buffer_assumed=True,
        weights_file=gguf.data_bytes,
        tied_head_copy=copy,
        devices=devices,
        gpu=None if gpu is None else gpu.name,
        gpu_memory=None if gpu is None else gpu.memory,
        gpu_usable=usable,
        fits=None if usable is None else devices[0].total <= usable,
        notes=notes,
        all_offloaded=split(layers + 1)[0][0].total,
    )


# The machines people run GGUFs on, as `memory` lists them for a GGUF (names in accelerators.ACCELERATOR_TABLE).
LOCAL_MACHINES = (
    "rtx3060", "rtx4060ti", "rtx4070", "rtx4080", "rtx5080", "rtx3090", "rtx4090", "rx7900xtx", "rtx5090",
    "rtx6000ada", "rtxpro6000", "m1", "m4", "m3-pro", "m4-pro", "m4-max", "m3-ultra",
)  # fmt: skip


def local_fits(gguf: Any, context: int, cache_k: str, reserve: int) -> list[LlamaCppFit]:
    """For each of LOCAL_MACHINES, the most layers llama.cpp can offload at CONTEXT and what they take."""
    from .accelerators import accelerator

    rows = []
    for name in LOCAL_MACHINES:
        chip = accelerator(name)
        solved = llamacpp_memory(gguf, context, cache_k, gpu=chip, reserve=reserve)
        rows.append(
            LlamaCppFit(
                name=chip.name,
                memory=chip.memory,
                usable=solved.gpu_usable or 0,
                gpu_layers=solved.gpu_layers,
                fits_all=solved.gpu_layers == solved.layers + 1,
                gpu_bytes=solved.devices[0].total,
            )
        )
    return rows


def gpu_usable(gpu: Any, reserve: int) -> int:
    """The memory llama.cpp can fill on GPU: its memory less RESERVE; on a Mac, the share macOS wires by default."""
    share = getattr(gpu, "gpu_share", None)
    memory = gpu.memory if share is None else int(gpu.memory * share)
    return max(memory - reserve, 0)


# --- what a GGUF puts into `speed`'s roofline --------------------------------------------------------------------

# The roofline operator each llama.cpp tensor is read by (roofline._weights_by_operator's keys): by the component
# ggml.component gives its name; routed experts (…_exps) apart, as the roofline reads the share a batch touches.
_OPERATOR_OF_COMPONENT = {
    "attention": "attention_projections",
    "ffn": "ffn",
    "lm_head": "lm_head",
    "embedding": "embedding_table",
}


def weights_by_operator(gguf: Any) -> dict[str, int]:
    """The GGUF's tensor bytes (ggml_nbytes, as stored: Q4_K, Q6_K, F32 …) by roofline operator, one device."""
    from .ggml import component

    found = dict.fromkeys(
        ("attention_projections", "attention_scores", "ffn", "mixers", "lm_head", "embedding", "other"), 0
    )
    found |= {"routed_experts": 0, "embedding_table": 0}
    for tensor in gguf.tensors:
        if "_exps." in tensor.name:  # ffn_gate_exps, ffn_up_exps, ffn_down_exps (and their biases)
            found["routed_experts"] += tensor.bytes
        else:
            found[_OPERATOR_OF_COMPONENT.get(component(tensor.name), "other")] += tensor.bytes
    return found


class LlamaCppStore:
    """A GGUF under llama.cpp as `speed` reads it: its tensors' bytes by operator, and the KV cache in llama.cpp's
    cache type (`cache_type`), row by row as ggml stores it (ggml_row_size: a q8_0 row of 128 is 4 blocks of 34 B)."""

    def __init__(self, gguf: Any, cache_k: str = "f16", cache_v: str | None = None, file_type: str | None = None):
        self.gguf, self.file_type = gguf, file_type
        self.cache_k, self.cache_v = cache_k, cache_v or cache_k
        self.kind_k = cache_type(self.cache_k, "`cache_type`")
        self.kind_v = cache_type(self.cache_v, "`cache_type` (values)")
        arch = gguf.architecture
        self.layers = gguf.get(f"{arch}.block_count")
        self.kv_heads, self.key, self.value = _kv_dims(gguf)
        self.sliding, self.window = swa_layers(arch, self.layers, gguf)
        self.weights = weights_by_operator(gguf)
        self.conventions = LLAMACPP_SPEED_CONVENTIONS

    @property
    def cache_name(self) -> str:
        from .ggml import type_name

        k, v = type_name(self.kind_k), type_name(self.kind_v)
        return k if k == v else f"K {k}, V {v}"

    def _tokens_bytes(self, tokens: int) -> int:
        """K and V of TOKENS cells of one layer in the cache types."""
        from .ggml import nbytes

        return nbytes(self.kind_k, (self.kv_heads * self.key, tokens)) + nbytes(
            self.kind_v, (self.kv_heads * self.value, tokens)
        )

    def kv_read(self, context: int, batch: int) -> int:
        """The cache a step reads: each of BATCH sequences' CONTEXT cells per layer (a sliding layer its window)."""
        return sum(
            self._tokens_bytes(min(context, self.window) if slides else context) * batch for slides in self.sliding
        )

    def kv_token(self) -> int:
        """What one new token writes to the cache: its K and V row in every layer."""
        return self._tokens_bytes(1) * self.layers

    def resident(self, context: int, batch: int, reserve: int) -> tuple[int, int, int]:
        """(weights, KV cache, compute buffer) on the GPU with every layer offloaded, BATCH sequences of CONTEXT
        (llama.cpp's -np BATCH with -c BATCH × CONTEXT cells)."""
        memory = llamacpp_memory(self.gguf, context * batch, self.cache_k, self.cache_v, sequences=batch)
        gpu = memory.devices[0]
        return gpu.weights, gpu.kv_cache, memory.compute_buffer

    def usable(self, gpu: Any, reserve: int) -> int:
        """The memory llama.cpp can fill on GPU (roofline.GpuFigures): a Mac of the table wires only its share."""
        from .accelerators import ACCELERATOR_TABLE

        entry = next((chip for chip in ACCELERATOR_TABLE if chip.name == gpu.name and chip.memory == gpu.memory), None)
        return gpu_usable(entry, reserve) if entry is not None else max(gpu.memory - reserve, 0)


LLAMACPP_SPEED_CONVENTIONS = [
    "a GGUF under llama.cpp: the weights each operator reads are the file's tensors as stored (Σ ggml_nbytes of its "
    "Q4_K, Q6_K, F32 … tensors by operator), not the mapped config's 16-bit weights; the KV cache is read and "
    "written in llama.cpp's cache type (f16 by default, q8_0, q4_0 … in ggml's blocks); one device "
    "(llama.cpp splits a model over GPUs by layers, which run one after another); matmuls at the chip's 16-bit peak",
    "a GGUF's fit: what llama.cpp puts on the GPU with every layer offloaded (the repeating layers and the output "
    "layer; token_embd stays on the CPU) + its KV cache of batch × context cells padded to 256 + the compute buffer "
    "assumed as ffncalc memory states it, against the memory after the runtime reserve",
]
