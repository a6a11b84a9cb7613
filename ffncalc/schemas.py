"""JSON Schemas of the documents that `--json` prints; their field names are a stable interface."""

from __future__ import annotations

from collections.abc import Callable

from pydantic import TypeAdapter

from .accounting import ParamsReport
from .api import BundledModel

JSON_DOCUMENTS: dict[str, Callable[[], dict]] = {
    "params": ParamsReport.model_json_schema,
    "models": TypeAdapter(list[BundledModel]).json_schema,
}
