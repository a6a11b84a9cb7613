"""The library's front door: name a model, get its spec and its accounting."""

from __future__ import annotations

from dataclasses import dataclass

from .accounting import ParamsReport, Result, count_params
from .families import load_spec
from .flops import CrossoverReport, FlopsReport, Measure, MlaForm, count_crossover, count_flops
from .source import bundled_models, load_raw_config
from .spec import ModelSpec
from .units import bytes_per_element, parse_context


@dataclass(frozen=True)
class LoadedModel:
    """A model's spec with the name and source it was loaded under."""

    name: str
    source: str  # "bundled", "file" or "hub"
    spec: ModelSpec


def load_config(model: str, revision: str | None = None, token: str | None = None) -> LoadedModel:
    """Find MODEL's config.json (path, folder, bundled config or Hub id) and turn it into a spec."""
    raw = load_raw_config(model, revision=revision, token=token)
    return LoadedModel(name=raw.name, source=raw.source, spec=load_spec(raw.data, raw.name))


def account(model: str | LoadedModel, revision: str | None = None, token: str | None = None) -> ParamsReport:
    """Every parameter of MODEL, by component and by layer."""
    loaded = model if isinstance(model, LoadedModel) else load_config(model, revision=revision, token=token)
    return count_params(loaded.spec, model=loaded.name, source=loaded.source)


def flops(
    model: str | LoadedModel,
    context: int | str,
    mla_form: MlaForm = "plain",
    causal: bool = True,
    revision: str | None = None,
    token: str | None = None,
) -> FlopsReport:
    """FLOPs per token at CONTEXT (e.g. 8192 or "8k"), prefill of that many tokens, and training."""
    tokens = parse_context(context)
    loaded = model if isinstance(model, LoadedModel) else load_config(model, revision=revision, token=token)
    return count_flops(loaded.spec, tokens, model=loaded.name, mla_form=mla_form, causal=causal)


def crossover(
    model: str | LoadedModel,
    max_context: int | str = "128k",
    measure: Measure = "flops",
    mla_form: MlaForm = "plain",
    dtype: str | None = None,
    revision: str | None = None,
    token: str | None = None,
) -> CrossoverReport:
    """Where attention's context-dependent cost (FLOPs or KV-cache bytes) overtakes the FFN's."""
    tokens = parse_context(max_context)
    loaded = model if isinstance(model, LoadedModel) else load_config(model, revision=revision, token=token)
    element_bytes = None
    if measure == "bytes":
        dtype = dtype or loaded.spec.torch_dtype
        element_bytes = bytes_per_element(dtype)
    return count_crossover(
        loaded.spec,
        tokens,
        model=loaded.name,
        measure=measure,
        mla_form=mla_form,
        dtype=dtype,
        bytes_per_element=element_bytes,
    )


class BundledModel(Result):
    """One bundled config with its totals, as `ffncalc models` lists it."""

    model: str
    architecture: str
    model_type: str
    total_params: int
    active_params: int | None


def list_bundled() -> list[BundledModel]:
    """Every bundled config, counted."""
    rows = []
    for name in bundled_models():
        report = account(name)
        rows.append(
            BundledModel(
                model=name,
                architecture=report.architecture,
                model_type=report.model_type,
                total_params=report.total_params,
                active_params=report.active_params,
            )
        )
    return rows
