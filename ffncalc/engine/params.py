"""The parameters engine: every parameter of a model by component and by layer (accounting.py), with the published
active count it matches, if one is recorded (published.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..loading import LoadedModel
from ..values import replace
from .inputs import loaded_model

if TYPE_CHECKING:
    from ..accounting import ParamsReport


def account(model: str | LoadedModel) -> ParamsReport:
    """Every parameter of MODEL, by component and by layer."""
    loaded = loaded_model(model)
    from ..accounting import count_params

    report = count_params(loaded.spec, loaded.info)
    from ..published import PUBLISHED_ACTIVE, matching

    figure = PUBLISHED_ACTIVE.get(loaded.name) if not loaded.info.overrides else None
    if figure is not None and report.active_params is not None and report.active_params_without_embedding is not None:
        match = matching(figure, report.active_params, report.active_params_without_embedding)
        report = replace(
            report,
            published_active=f"{figure.billions}B",
            published_active_source=figure.source,
            published_active_matches=match,
        )
    published = getattr(loaded.config, "published_params", None)
    if published:
        source = getattr(loaded.config, "published_source", None) or None
        report = replace(report, published_params=published, published_source=source)
    return report
