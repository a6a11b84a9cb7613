"""`verify` of a GGUF: every tensor of the file matched by name and shape to the model its metadata maps to.

The expected tensors are the mapped config's parameters (storage.parameter_layout, the same list `params` counts)
under the names llama.cpp's converter gives them: gguf-py's TensorNameMap (gguf/tensor_mapping.py, the table
convert_hf_to_gguf.py's map_tensor_name reads: ``model.layers.0.self_attn.q_proj.weight`` →
``blk.0.attn_q.weight``). The converter stacks an MoE layer's experts into one tensor per projection
(``model.layers.N.mlp.experts.{gate,up,down}_proj`` → ``blk.N.ffn_{gate,up,down}_exps.weight``, shape
(n_expert, out, in)), and ggml writes shapes innermost first, so the expected GGUF shape is the torch shape
reversed. Rotary tables llama.cpp stores as tensors (``rope_freqs``, ``rope_factors_*``) and DeepSeek V3's router
bias (``exp_probs_b``, a buffer in transformers) are extras, not parameters. Every other tensor is unexpected; a
parameter the file lacks is missing (a tied head: no
``output.weight``, and the model has none to expect).
"""

from __future__ import annotations

import re
from typing import Any

from .verification import ExtraGroup, TensorVerdict, VerifyReport

EXPERT = re.compile(r"^(?P<stem>.+\.experts)\.(?P<index>\d+)\.(?P<leaf>.+)\.(?P<kind>weight|bias)$")
ROPE_TABLES = re.compile(r"^rope_(freqs|factors_long|factors_short)\.weight$")
ROPE_REASON = "a rotary frequency table llama.cpp stores as a tensor (transformers computes it; not a parameter)"
ROUTER_BIAS = re.compile(r"^blk\.\d+\.exp_probs_b\.bias$")
ROUTER_BIAS_REASON = (
    "the router's score-correction bias (DeepSeek V3's e_score_correction_bias), a buffer in transformers, not a "
    "parameter"
)


def expected_tensors(loaded: Any) -> tuple[dict[str, tuple[tuple[int, ...], int]], list[str]]:
    """GGUF name → (shape in ggml's order, parameters) for the mapped model; and the parameters with no llama.cpp
    name (said as missing)."""
    import gguf

    from .storage import parameter_layout

    arch = loaded.gguf.architecture
    by_name = {name: arch_id for arch_id, name in gguf.MODEL_ARCH_NAMES.items()}
    blocks = loaded.spec.num_layers if hasattr(loaded.spec, "num_layers") else 0
    blocks = loaded.gguf.get(f"{arch}.block_count", blocks)
    table = gguf.get_tensor_name_map(by_name[arch], blocks)
    found: dict[str, tuple[tuple[int, ...], int]] = {}
    experts: dict[str, list[Any]] = {}  # GGUF name → [torch shape of one, count, parameters]
    unnamed: list[str] = []
    stored_names = {tensor.name for tensor in loaded.gguf.tensors}
    for stored in parameter_layout(loaded.spec, "F32", None):
        match = EXPERT.match(stored.name)
        if match is not None:
            merged = f"{match['stem']}.{match['leaf']}.{match['kind']}"
            name = table.get_name(merged, try_suffixes=(".weight", ".bias"))
            if name is None:
                unnamed.append(stored.name)
                continue
            entry = experts.setdefault(name, [stored.shape, 0, 0])
            entry[1] += 1
            entry[2] += stored.parameters
            continue
        if arch == "gpt-oss":
            special = _gpt_oss_tensor(stored.name, stored.shape)
            if special is not None:
                found.update(special)
                continue
        # the converter renames DeepSeek V3's router bias before mapping it (→ exp_probs_b.bias)
        hf_name = stored.name.replace("e_score_correction_bias", "e_score_correction.bias")
        name = table.get_name(hf_name, try_suffixes=(".weight", ".bias"))
        if name is None:
            unnamed.append(stored.name)
            continue
        if name.endswith(".attn_kv_b.weight") and name.replace("attn_kv_b", "attn_k_b") in stored_names:
            found.update(_split_kv_b(loaded.raw.data, name, stored.shape))
            continue
        found[name] = (tuple(reversed(stored.shape)), stored.parameters)
    for name, (shape, count, parameters) in experts.items():
        found[name] = ((*reversed(shape), count), parameters)
    return found, unnamed


GPT_OSS_LAYER = re.compile(r"^model\.layers\.(\d+)\.(mlp\.experts\.\w+|self_attn\.sinks)$")


def _gpt_oss_tensor(name: str, shape: tuple[int, ...]) -> dict[str, tuple[tuple[int, ...], int]] | None:
    """gpt-oss's fused experts as llama.cpp's converter writes them (convert_hf_to_gguf.py GptOssModel: gate_up_proj
    split into gate and up, each (hidden, ff, E) in ggml's order; down_proj, which transformers holds as
    (E, ff, hidden), as (ff, hidden, E); biases per expert; the sinks as attn_sinks.weight); None for the others."""
    match = GPT_OSS_LAYER.match(name)
    if match is None:
        return None
    block, leaf = f"blk.{match[1]}", match[2]
    if leaf == "self_attn.sinks":
        return {f"{block}.attn_sinks.weight": ((shape[0],), shape[0])}
    if leaf == "mlp.experts.gate_up_proj":
        experts, hidden, both = shape
        half = ((hidden, both // 2, experts), experts * hidden * both // 2)
        return {f"{block}.ffn_gate_exps.weight": half, f"{block}.ffn_up_exps.weight": half}
    if leaf == "mlp.experts.gate_up_proj_bias":
        experts, both = shape
        bias: tuple[tuple[int, ...], int] = ((both // 2, experts), experts * both // 2)
        return {f"{block}.ffn_gate_exps.bias": bias, f"{block}.ffn_up_exps.bias": bias}
    if leaf == "mlp.experts.down_proj":
        experts, width, hidden = shape
        return {f"{block}.ffn_down_exps.weight": ((width, hidden, experts), experts * width * hidden)}
    if leaf == "mlp.experts.down_proj_bias":
        experts, hidden = shape
        return {f"{block}.ffn_down_exps.bias": ((hidden, experts), experts * hidden)}
    return None


def _split_kv_b(config: Any, name: str, shape: tuple[int, ...]) -> dict[str, tuple[tuple[int, ...], int]]:
    """MLA's kv_b_proj as llama.cpp's converter splits it for weight absorption (convert_hf_to_gguf.py
    DeepseekV2Model.modify_tensors: kv_b viewed as (n_head, nope + v, kv_lora), split, k_b transposed): attn_k_b
    of torch shape (n_head, kv_lora, nope) and attn_v_b of (n_head, v, kv_lora), in ggml's order reversed."""
    heads, nope, value = config.get("num_attention_heads"), config.get("qk_nope_head_dim"), config.get("v_head_dim")
    rank = shape[1]
    return {
        name.replace("attn_kv_b", "attn_k_b"): ((nope, rank, heads), heads * rank * nope),
        name.replace("attn_kv_b", "attn_v_b"): ((rank, value, heads), heads * value * rank),
    }


def verify_gguf(loaded: Any, report: Any) -> VerifyReport:
    """The GGUF of LOADED (gguf_models.GgufModel) against its count REPORT (api.account), tensor by tensor."""
    from .ggml import component
    from .results import ModelInfo
    from .values import field_names

    gguf = loaded.gguf
    expected, unnamed = expected_tensors(loaded)
    verdicts: list[TensorVerdict] = []
    seen: set[str] = set()
    by_dtype: dict[str, int] = {}
    by_component: dict[str, int] = {}
    extras: dict[str, list[Any]] = {}  # kind → [tensors, elements, reason]
    params = 0
    for tensor in gguf.tensors:
        by_dtype[tensor.type_name] = by_dtype.get(tensor.type_name, 0) + tensor.bytes
        shape = list(tensor.shape)
        if tensor.name in expected:
            seen.add(tensor.name)
            want, parameters = expected[tensor.name]
            if tuple(tensor.shape) == want:
                params += parameters
                part = component(tensor.name)
                by_component[part] = by_component.get(part, 0) + tensor.bytes
                verdicts.append(
                    TensorVerdict(name=tensor.name, verdict="parameter", dtype=tensor.type_name, shape=shape)
                )
            else:
                by_component["unexplained"] = by_component.get("unexplained", 0) + tensor.bytes
                verdicts.append(
                    TensorVerdict(
                        name=tensor.name, verdict="wrong shape", dtype=tensor.type_name, shape=shape,
                        expected_shape=list(want), reason="the model's tensor has another shape (ggml's order)",
                    )
                )  # fmt: skip
        elif ROPE_TABLES.match(tensor.name) or ROUTER_BIAS.match(tensor.name):
            rope = ROPE_TABLES.match(tensor.name) is not None
            kind = "rotary tables" if rope else "router score-correction biases"
            reason = ROPE_REASON if rope else ROUTER_BIAS_REASON
            group = extras.setdefault(kind, [0, 0, reason])
            group[0] += 1
            group[1] += tensor.elements
            by_component["not parameters"] = by_component.get("not parameters", 0) + tensor.bytes
            verdicts.append(
                TensorVerdict(name=tensor.name, verdict="extra", dtype=tensor.type_name, shape=shape, reason=reason)
            )
        else:
            by_component["unexplained"] = by_component.get("unexplained", 0) + tensor.bytes
            verdicts.append(
                TensorVerdict(
                    name=tensor.name, verdict="unexpected", dtype=tensor.type_name, shape=shape,
                    reason="no tensor of the model has this llama.cpp name",
                )
            )  # fmt: skip
    for name, (want, _) in expected.items():
        if name not in seen:
            verdicts.append(
                TensorVerdict(
                    name=name, verdict="missing", dtype=None, shape=list(want),
                    reason="the model has this tensor; the GGUF does not store it",
                )
            )  # fmt: skip
    for name in unnamed:
        verdicts.append(
            TensorVerdict(
                name=name, verdict="missing", dtype=None, shape=None,
                reason="a parameter of the model with no llama.cpp name (gguf-py's TensorNameMap has none)",
            )
        )  # fmt: skip
    counts: dict[str, int] = {}
    for verdict in verdicts:
        counts[verdict.verdict] = counts.get(verdict.verdict, 0) + 1
    bad = sum(counts.get(kind, 0) for kind in ("missing", "unexpected", "wrong shape"))
    listed = [v for v in verdicts if v.verdict != "parameter"] + [v for v in verdicts if v.verdict == "parameter"]
    return VerifyReport(
        **{name: getattr(report, name) for name in field_names(ModelInfo)},
        checkpoint=gguf.location,
        files=list(gguf.files),
        missing_files=[],
        index_problems=[],
        ignored=[],
        index_only=False,
        stored_bytes=gguf.data_bytes,
        stored_bytes_by_dtype=dict(sorted(by_dtype.items())),
        stored_bytes_by_component=dict(sorted(by_component.items())),
        index_total_size=None,
        expected_bytes=None,
        stored_elements=sum(tensor.elements for tensor in gguf.tensors),
        checkpoint_params=params,
        ffncalc_params=report.total_params,
        counts=counts,
        extras=[ExtraGroup(kind=kind, tensors=n, elements=e, reason=why) for kind, (n, e, why) in extras.items()],
        tensors=listed,
        ok=not bad and params == report.total_params,
    )
