"""A GGUF's metadata as the config.json ffncalc's families read, and a GGUF loaded as a model.

llama.cpp's converter (convert_hf_to_gguf.py) writes a model's hyperparameters under ``{arch}.…`` keys
(gguf-py/gguf/constants.py ``Keys.LLM``, ``Keys.Attention``, ``Keys.Rope``): block_count, embedding_length,
feed_forward_length, attention.head_count(_kv), attention.key_length … Each mapped architecture turns them back
into the fields of the transformers config the converter read, so the family that counts that config counts the
GGUF. Where the tensor table answers a question more surely than a key (the vocabulary: token_embd's rows; a tied
head: no ``output.weight``, as llama.cpp then uses token_embd; biases: ``attn_q.bias`` present), the table is
read. The count is then held to the file: Σ elements of the file's parameter tensors must equal the family's
count, or a warning says by how much they differ.
"""

from __future__ import annotations

from typing import Any

from .errors import CheckpointError, UnsupportedModelError
from .gguf_source import GgufFile
from .loading import LoadedModel, loaded_from
from .source import RawConfig

# llama.cpp architecture → (model_type, transformers class). MoE variants of llama are mixtral (below).
MAPPED: dict[str, tuple[str, str]] = {
    "llama": ("llama", "LlamaForCausalLM"),
    "qwen2": ("qwen2", "Qwen2ForCausalLM"),
    "qwen3": ("qwen3", "Qwen3ForCausalLM"),
    "qwen2moe": ("qwen2_moe", "Qwen2MoeForCausalLM"),
    "qwen3moe": ("qwen3_moe", "Qwen3MoeForCausalLM"),
    "gemma": ("gemma", "GemmaForCausalLM"),
    "gemma2": ("gemma2", "Gemma2ForCausalLM"),
    "gemma3": ("gemma3_text", "Gemma3ForCausalLM"),
    "phi3": ("phi3", "Phi3ForCausalLM"),
    "deepseek2": ("deepseek_v3", "DeepseekV3ForCausalLM"),  # V2's softmax routing without exp_probs_b: deepseek_v2
    "gpt-oss": ("gpt_oss", "GptOssForCausalLM"),
    "mistral3": ("mistral", "MistralForCausalLM"),  # Ministral 3's language model (its vision tower is an mmproj)
}

# Architectures llama.cpp and ffncalc both know that are not mapped, and why (refused with the reason).
NOT_MAPPED: dict[str, str] = {
    "gemma3n": "per-layer embeddings and AltUp are stored in tensors ffncalc's gemma3n family does not name alike",
    "falcon-h1": "hybrid Mamba-2 layers: the recurrent state's GGUF keys are not mapped yet",
    "mamba": "recurrent: llama.cpp's ssm.* keys are not mapped yet",
    "mamba2": "recurrent: llama.cpp's ssm.* keys are not mapped yet",
    "rwkv6": "recurrent: not mapped",
    "rwkv7": "recurrent: not mapped",
    "bert": "an encoder: llama.cpp's embeddings models are not mapped",
    "nomic-bert": "an encoder: not mapped",
    "t5": "encoder–decoder: not mapped",
    "clip": "a multimodal projector (mmproj) file, not a language model",
}


def _int(gguf: GgufFile, key: str, required: bool = True) -> int | None:
    """An integer key of the file's architecture (a per-layer array must hold one value throughout)."""
    full = f"{gguf.architecture}.{key}"
    value = gguf.get(full)
    if isinstance(value, list) and value and all(item == value[0] for item in value):
        value = value[0]
    if value is None and not required:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        shown = "absent" if value is None else repr(value)[:40]
        raise CheckpointError(
            f"{gguf.location}: metadata {full} is {shown}, not a whole number ≥ 0 (a per-layer array of different "
            "values is not mapped); the file is incomplete or not a language model"
        )
    return value


def _float(gguf: GgufFile, key: str) -> float | None:
    value = gguf.get(f"{gguf.architecture}.{key}")
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def gguf_config(gguf: GgufFile) -> dict[str, Any]:
    """The transformers config.json the GGUF's metadata and tensor table stand for."""
    arch = gguf.architecture
    if arch not in MAPPED:
        reason = NOT_MAPPED.get(arch, "ffncalc does not map this llama.cpp architecture")
        mapped = ", ".join(sorted(MAPPED))
        raise UnsupportedModelError(
            f"{gguf.location}: GGUF architecture {arch or '(none: general.architecture is missing)'!r} is not mapped "
            f"({reason}); mapped: {mapped}"
        )
    names = {tensor.name: tensor for tensor in gguf.tensors}
    embedding = names.get("token_embd.weight")
    if embedding is None or len(embedding.shape) != 2:
        raise CheckpointError(f"{gguf.location}: no 2-D token_embd.weight tensor; not a language model's GGUF")
    hidden = _int(gguf, "embedding_length")
    heads = _int(gguf, "attention.head_count")
    assert hidden is not None and heads is not None
    if embedding.shape[0] != hidden:
        raise CheckpointError(
            f"{gguf.location}: token_embd.weight has rows of {embedding.shape[0]:,}, but {arch}.embedding_length "
            f"is {hidden:,}; the file is inconsistent"
        )
    if heads == 0:
        raise CheckpointError(f"{gguf.location}: {arch}.attention.head_count is 0; not a transformer's GGUF")
    model_type, class_name = MAPPED[arch]
    if arch == "deepseek2":
        return _deepseek2_config(gguf, names, hidden, heads, embedding.shape[1])
    if arch == "gpt-oss":
        return _gpt_oss_config(gguf, names, hidden, heads, embedding.shape[1])
    if arch == "mistral3" and _int(gguf, "expert_count", required=False):
        raise UnsupportedModelError(f"{gguf.location}: a mistral3 GGUF with experts is not mapped (only the dense one)")
    experts = _int(gguf, "expert_count", required=False) or 0
    if arch == "llama" and experts:
        model_type, class_name = "mixtral", "MixtralForCausalLM"
    kv_heads = _int(gguf, "attention.head_count_kv", required=False)
    config: dict[str, Any] = {
        "architectures": [class_name],
        "model_type": model_type,
        "hidden_size": hidden,
        "num_hidden_layers": _int(gguf, "block_count"),
        # an all-MoE model's dense width is unused; its config still needs one (the expert width stands in)
        "intermediate_size": _int(gguf, "feed_forward_length", required=not experts or arch == "qwen2moe")
        or _int(gguf, "expert_feed_forward_length", required=False)
        or 0,
        "num_attention_heads": heads,
        "num_key_value_heads": heads if kv_heads is None else kv_heads,
        "vocab_size": embedding.shape[1],
        "tie_word_embeddings": "output.weight" not in names,
        "torch_dtype": "float16",
    }
    key_length = _int(gguf, "attention.key_length", required=False)
    if key_length is not None:
        config["head_dim"] = key_length
    context = _int(gguf, "context_length", required=False)
    if context:
        config["max_position_embeddings"] = context
    theta = _float(gguf, "rope.freq_base")
    if theta is not None:
        config["rope_theta"] = theta
    epsilon = _float(gguf, "attention.layer_norm_rms_epsilon")
    if epsilon is not None:
        config["rms_norm_eps"] = epsilon
    window = _int(gguf, "attention.sliding_window", required=False)
    if arch == "llama":
        config["attention_bias"] = "blk.0.attn_q.bias" in names
        config["mlp_bias"] = "blk.0.ffn_up.bias" in names
    if experts:
        used = _int(gguf, "expert_used_count")
        if model_type == "mixtral":
            config |= {"num_local_experts": experts, "num_experts_per_tok": used}
        else:
            config |= {
                "num_experts": experts,
                "num_experts_per_tok": used,
                "moe_intermediate_size": _int(gguf, "expert_feed_forward_length"),
                "decoder_sparse_step": 1,
                "mlp_only_layers": [],
            }
            shared = _int(gguf, "expert_shared_feed_forward_length", required=False)
            if model_type == "qwen2_moe":
                config["shared_expert_intermediate_size"] = shared or 0
            norm = gguf.get(f"{arch}.expert_weights_norm")
            if isinstance(norm, bool):
                config["norm_topk_prob"] = norm
    if model_type in ("gemma2", "gemma3_text") and window:
        config["sliding_window"] = window
        if model_type == "gemma3_text":
            config["sliding_window_pattern"] = 6  # llama.cpp sets it for gemma3 (llama-model.cpp, LLM_ARCH_GEMMA3)
    elif model_type == "phi3" and window:
        config["sliding_window"] = window
    return config


def _deepseek2_config(gguf: GgufFile, names: dict[str, Any], hidden: int, heads: int, vocab: int) -> dict[str, Any]:
    """DeepSeek V2/V3 (llama.cpp's deepseek2) back to its config, as convert_hf_to_gguf.py DeepseekV2Model wrote it
    (set_gguf_parameters): MLA as MQA with larger heads in newer files (head_count_kv 1, key_length kv_lora + rope,
    value_length kv_lora, the per-head sizes under key_length_mla / value_length_mla), MHA sizes in older ones
    (key_length nope + rope, value_length v); leading_dense_block_count = first_k_dense_replace; sigmoid gating
    (expert_gating_func 2) with exp_probs_b is V3's, softmax without it V2's."""
    rope = _int(gguf, "rope.dimension_count")
    assert rope is not None
    key_mla = _int(gguf, "attention.key_length_mla", required=False)
    value_mla = _int(gguf, "attention.value_length_mla", required=False)
    key = key_mla if key_mla is not None else _int(gguf, "attention.key_length")
    value = value_mla if value_mla is not None else _int(gguf, "attention.value_length")
    assert key is not None and value is not None
    if key <= rope:
        raise CheckpointError(
            f"{gguf.location}: deepseek2 key length {key} is not more than rope.dimension_count {rope}; the file is "
            "inconsistent"
        )
    experts = _int(gguf, "expert_count", required=False) or 0
    gating = _int(gguf, "expert_gating_func", required=False)
    v3 = gating == 2 or "blk.0.exp_probs_b.bias" in names or any(name.endswith("exp_probs_b.bias") for name in names)
    layers = _int(gguf, "block_count")
    config: dict[str, Any] = {
        "architectures": ["DeepseekV3ForCausalLM" if v3 else "DeepseekV2ForCausalLM"],
        "model_type": "deepseek_v3" if v3 else "deepseek_v2",
        "hidden_size": hidden,
        "num_hidden_layers": layers,
        "intermediate_size": _int(gguf, "feed_forward_length"),
        "num_attention_heads": heads,
        "num_key_value_heads": heads,
        "vocab_size": vocab,
        "tie_word_embeddings": "output.weight" not in names,
        "torch_dtype": "bfloat16",
        "q_lora_rank": _int(gguf, "attention.q_lora_rank", required=False) or None,
        "kv_lora_rank": _int(gguf, "attention.kv_lora_rank"),
        "qk_rope_head_dim": rope,
        "qk_nope_head_dim": key - rope,
        "v_head_dim": value,
        "first_k_dense_replace": _int(gguf, "leading_dense_block_count", required=False) or 0,
        "moe_layer_freq": 1,
        "num_nextn_predict_layers": 0,  # a GGUF's layers are block_count; an MTP layer kept is one of them
    }
    if experts:
        config |= {
            "n_routed_experts": experts,
            "num_experts_per_tok": _int(gguf, "expert_used_count"),
            "moe_intermediate_size": _int(gguf, "expert_feed_forward_length"),
            "n_shared_experts": _int(gguf, "expert_shared_count", required=False) or 0,
            "n_group": _int(gguf, "expert_group_count", required=False) or 1,
            "topk_group": _int(gguf, "expert_group_used_count", required=False) or 1,
            "scoring_func": "sigmoid" if v3 else "softmax",
        }
        scale = _float(gguf, "expert_weights_scale")
        if scale is not None:
            config["routed_scaling_factor"] = scale
        norm = gguf.get(f"{gguf.architecture}.expert_weights_norm")
        if isinstance(norm, bool):
            config["norm_topk_prob"] = norm
    context = _int(gguf, "context_length", required=False)
    if context:
        config["max_position_embeddings"] = context
    epsilon = _float(gguf, "attention.layer_norm_rms_epsilon")
    if epsilon is not None:
        config["rms_norm_eps"] = epsilon
    return config


def _gpt_oss_config(gguf: GgufFile, names: dict[str, Any], hidden: int, heads: int, vocab: int) -> dict[str, Any]:
    """gpt-oss (llama.cpp's gpt-oss, LLM_ARCH_OPENAI_MOE) back to its config, as convert_hf_to_gguf.py GptOssModel
    wrote it: every layer MoE, expert_feed_forward_length the experts' width, sliding-window attention on every
    other layer from the first (llama.cpp: set_swa_pattern(2)), biases on attention and experts, attention sinks."""
    layers = _int(gguf, "block_count")
    assert layers is not None
    width = _int(gguf, "expert_feed_forward_length")
    window = _int(gguf, "attention.sliding_window", required=False)
    config: dict[str, Any] = {
        "architectures": ["GptOssForCausalLM"],
        "model_type": "gpt_oss",
        "hidden_size": hidden,
        "num_hidden_layers": layers,
        "intermediate_size": width,
        "num_attention_heads": heads,
        "num_key_value_heads": _int(gguf, "attention.head_count_kv"),
        "head_dim": _int(gguf, "attention.key_length"),
        "num_local_experts": _int(gguf, "expert_count"),
        "num_experts_per_tok": _int(gguf, "expert_used_count"),
        "experts_per_token": _int(gguf, "expert_used_count"),
        "vocab_size": vocab,
        "tie_word_embeddings": "output.weight" not in names,
        "attention_bias": True,
        "torch_dtype": "bfloat16",
        "layer_types": ["sliding_attention" if il % 2 == 0 else "full_attention" for il in range(layers)]
        if window
        else ["full_attention"] * layers,
    }
    if window:
        config["sliding_window"] = window
    context = _int(gguf, "context_length", required=False)
    if context:
        config["max_position_embeddings"] = context
    return config


class GgufModel(LoadedModel):
    """A model loaded from a GGUF: the config its metadata stands for, and the file's header."""

    gguf: GgufFile


def load_gguf(gguf: GgufFile, name: str, source: str) -> GgufModel:
    """The GGUF's config counted by its family; a note says where it came from and how it was mapped."""
    config = gguf_config(gguf)
    shown = name + ("" if len(gguf.files) == 1 else f" ({len(gguf.files)} split parts)")
    note = (
        f"read from the GGUF header of {shown}: general.architecture {gguf.architecture!r} counted as "
        f"{config['model_type']} from its {gguf.architecture}.* metadata and tensor table"
        + (" (a header-only copy: the tensor data is not in the file)" if gguf.header_only else "")
    )
    raw = RawConfig(config, name, source, gguf.location, note)
    loaded = loaded_from(raw)
    fields = {field: getattr(loaded, field) for field in ("name", "source", "config", "spec", "info", "raw")}
    return GgufModel(**fields, gguf=gguf)


def open_gguf(model: str, file: str | None = None, revision: str | None = None, token: str | None = None) -> GgufModel:
    """MODEL a local .gguf (or a split set's part), or a Hub repo with FILE the .gguf in it: its header, counted."""
    from .errors import ConfigNotFoundError, UsageError
    from .gguf_source import read_local_gguf
    from .source import display_path, is_repo_id, local_path

    if file is None:
        from .source import find_bundled_gguf

        bundled = find_bundled_gguf(model)
        if revision is not None:
            raise UsageError(f"`revision` applies to Hub repos; {display_path(model)} is a local file")
        if bundled is not None:  # a short name: the header bundled with ffncalc
            return load_gguf(read_local_gguf(bundled[1]), bundled[0], "bundled")
        path = local_path(model)
        return load_gguf(read_local_gguf(path), display_path(path), "file")
    if not file.lower().endswith(".gguf") or file.startswith(("/", ".")) or "\\" in file or ".." in file:
        raise UsageError(f"`file` {file[:80]!r}: name a .gguf file inside the repo, e.g. model-Q4_K_M.gguf")
    if not is_repo_id(model):
        raise ConfigNotFoundError(f"`file` reads a GGUF from a Hub repo; {display_path(model)[:80]!r} is not a Hub id")
    from .hub import hub_gguf

    label = f"{model}/{file}" if revision is None else f"{model}@{revision}/{file}"
    return load_gguf(hub_gguf(model, file, revision, token), label, "hub")


def with_gguf(account: Any) -> Any:
    """ACCOUNT (api.account) that adds a GGUF's stored bytes to the report of a model loaded from one."""
    from .ggml import gguf_weights
    from .values import replace

    def counted(loaded: Any) -> Any:
        report = account(loaded)
        if not isinstance(loaded, GgufModel):
            return report
        weights = gguf_weights(loaded.gguf, report.total_params)
        if not weights.parameters_match:
            difference = weights.parameters - report.total_params
            report = replace(
                report,
                warnings=[
                    *report.warnings,
                    f"the GGUF's parameter tensors hold {weights.parameters:,} weights, {difference:+,} against the "
                    f"count of the config its metadata maps to ({report.total_params:,}): the mapping misses "
                    "something of this file",
                ],
            )
        return replace(report, gguf=weights)

    return counted


def llamacpp_report(
    loaded: GgufModel, report: Any, options: Any, gpu_layers: int | None, cache_type: str | None
) -> Any:
    """`memory` of a GGUF, one answer: what llama.cpp holds (llamacpp): the weights as the file stores them (exact
    bytes by ggml type), its KV cache in its cache type, the compute buffer (assumed), split between GPU and CPU by
    `gpu_layers` (or solved for `gpu`); the accelerators compared on that figure with every layer offloaded."""
    from .accelerators import accelerator
    from .footprint import AcceleratorFit, WeightBytes
    from .ggml import gguf_weights
    from .llamacpp import gpu_usable, llamacpp_memory, local_fits
    from .values import replace

    stored = gguf_weights(loaded.gguf, 0)
    weights = WeightBytes(
        dtype="GGUF",
        quantization=stored.file_type,
        bytes=stored.bytes,
        by_dtype={row.type: row.bytes for row in stored.by_type},
        by_component=stored.by_component,
        unquantized_linear_bytes=0,
    )
    reserve = report.runtime_reserve  # --runtime-reserve, as memory took it
    gpu = accelerator(options.gpu) if options.gpu else None
    context = report.kv_cache.context
    cache = llamacpp_memory(loaded.gguf, context, cache_type or "f16", gpu_layers=gpu_layers, gpu=gpu, reserve=reserve)
    local = local_fits(loaded.gguf, context, cache_type or "f16", reserve)
    cache = replace(cache, file_type=stored.file_type, accelerators=local)
    total = sum(device.total for device in cache.devices)
    full = cache.all_offloaded
    rows = []
    for row in local:
        chip = accelerator(row.name)
        fits = full <= gpu_usable(chip, reserve)
        rows.append(
            AcceleratorFit(
                name=row.name,
                memory=row.memory,
                fits_on_one=fits,
                tensor_parallel=1 if fits else None,
                per_gpu_bytes=full if fits else None,
            )
        )
    if gpu is not None and gpu.name not in {row.name for row in rows}:
        fits = full <= gpu_usable(gpu, reserve)
        rows.append(AcceleratorFit(name=gpu.name, memory=gpu.memory, fits_on_one=fits, tensor_parallel=1 if fits else None,
                                per_gpu_bytes=full if fits else None))  # fmt: skip
    return replace(
        report,
        weights=weights,
        total_inference=total,
        per_gpu_inference=cache.devices[0].total,
        needed_per_gpu=cache.devices[0].total,
        asked=None if gpu is None else gpu.name,
        accelerators=rows,
        llamacpp=cache,
        notes=[
            *report.notes,
            "a GGUF under llama.cpp: weights as the file stores them (Σ ggml_nbytes by ggml type), the KV cache as "
            "llama.cpp allocates it, the compute buffer assumed; the accelerators are compared on what llama.cpp "
            "puts on the GPU with every layer offloaded (the KV cache and activations of a transformers run are "
            "under kv_cache and activations in JSON only)",
        ],
    )
