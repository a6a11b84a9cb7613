"""Side-by-side FFN design choices of several models: width, ratio, gating, share of parameters."""

from __future__ import annotations

from .accounting import ParamsReport, count_params, ffn_kind_name, parts_of
from .results import Result
from .spec import DenseFfn, ModelSpec, MoeFfn, names
from .tensors import ffn_tensors
from .values import field_names

# The models of the reference table (tests/reference/README.md), all bundled.
DEFAULT_MODELS = (
    "meta-llama/Llama-2-7b-hf",
    "meta-llama/Llama-3.1-8B",
    "mistralai/Mistral-7B-v0.1",
    "Qwen/Qwen3-8B",
    "Qwen/Qwen2.5-0.5B",
    "google/gemma-2-9b",
    "deepseek-ai/DeepSeek-V3",
)


class CompareRow(Result):
    """One model's FFN, or one kind of FFN layer of a model that has two (DeepSeek: dense and MoE)."""

    model: str
    family: str
    layers: str  # "all", "dense", or "MoE"
    hidden_size: int
    ffn_width: int  # the dense width, or one expert's width
    width_ratio: float  # ffn_width / hidden_size
    num_experts: int | None
    experts_per_token: int | None
    shared_experts: int | None
    activation: str  # the config's hidden_act
    ffn_kind: str  # SwiGLU, GeGLU, GELU, …
    gated: bool
    ffn_params_per_layer: int
    ffn_share: float  # FFN parameters / all parameters
    attention_share: float
    total_params: int
    active_params: int  # per token; the total for dense models
    active_params_without_embedding: int  # as model cards quote "active": without the input embedding table


COLUMNS = field_names(CompareRow)
# The table's headings (long and short, as `compare` prints them) → the field they show, for --sort.
HEADINGS = {
    "model": "model",
    "hidden": "hidden_size",
    "ffnwidth": "ffn_width",
    "width": "ffn_width",
    "×hidden": "width_ratio",
    "×h": "width_ratio",
    "ratio": "width_ratio",
    "ffn": "ffn_kind",
    "experts": "num_experts",
    "ffn/layer": "ffn_params_per_layer",
    "ffnshare": "ffn_share",
    "ffn%": "ffn_share",
    "attentionshare": "attention_share",
    "attn%": "attention_share",
    "total": "total_params",
    "active": "active_params",
}


def sort_field(column: str) -> str | None:
    """A `sort` column as people write it (a field name, or a heading of the table: -active, "FFN share") → field."""
    name = column.lstrip("-").strip()
    if name in COLUMNS:
        return name
    return HEADINGS.get("".join(name.lower().split()))


def compare_rows(name: str, spec: ModelSpec, report: ParamsReport | None = None) -> list[CompareRow]:
    """One row per kind of FFN layer the model has (dense, MoE), in layer order; a model without an FFN (a pure
    state-space model such as Mamba) gets one row of zero width, so that it is listed too."""
    report = report or count_params(spec)
    total = report.total_params
    kinds: dict[str, DenseFfn | MoeFfn] = {}
    for layer in spec.layers:
        if layer.ffn is not None:  # hybrid stacks have layers without an FFN (Nemotron-H's Mamba layers)
            kinds.setdefault("MoE" if isinstance(layer.ffn, MoeFfn) else "dense", layer.ffn)
    if not kinds:  # an FFN of width 0: no parameters, shown as "none"
        kinds["none"] = DenseFfn(spec.hidden_size, 0, False, "none", names(up="", down=""))
    rows = []
    for kind, ffn in kinds.items():
        moe = ffn if isinstance(ffn, MoeFfn) else None
        dense = ffn.expert if isinstance(ffn, MoeFfn) else ffn
        rows.append(
            CompareRow(
                model=name,
                family=report.architecture,
                layers="all" if len(kinds) == 1 else kind,
                hidden_size=dense.hidden_size,
                ffn_width=dense.intermediate_size,
                width_ratio=dense.intermediate_size / dense.hidden_size,
                num_experts=moe.num_experts if moe else None,
                experts_per_token=moe.experts_per_token if moe else None,
                shared_experts=(moe.num_shared_experts or (1 if moe.shared else 0)) if moe else None,
                activation=dense.activation,
                ffn_kind=ffn_kind_name(dense.activation, dense.gated),
                gated=dense.gated,
                ffn_params_per_layer=sum(part.params for part in parts_of(ffn_tensors(ffn))),
                ffn_share=report.components.ffn / total,
                attention_share=report.components.attention / total,
                total_params=total,
                active_params=report.active_params if report.active_params is not None else total,
                active_params_without_embedding=(
                    report.active_params_without_embedding
                    if report.active_params_without_embedding is not None
                    else total - report.components.embedding
                ),
            )
        )
    return rows


def sort_rows(rows: list[CompareRow], column: str | None) -> list[CompareRow]:
    """Sort by a column name, ascending; a leading '-' sorts descending. Rows without a value go last."""
    if not column:
        return rows
    descending = column.startswith("-")
    name = sort_field(column) or column.lstrip("-")
    present = [row for row in rows if getattr(row, name) is not None]
    missing = [row for row in rows if getattr(row, name) is None]
    return sorted(present, key=lambda row: getattr(row, name), reverse=descending) + missing
