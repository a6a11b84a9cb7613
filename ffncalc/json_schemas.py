"""JSON Schemas of the documents that `--json` prints; their field names are a stable interface."""

from __future__ import annotations

from collections.abc import Callable

from pydantic import TypeAdapter

from .accounting import ParamsReport
from .api import BundledModel
from .comparison import CompareRow
from .compute import CrossoverReport, FlopsReport
from .ffn_width import DeriveDimReport
from .footprint import MemoryReport
from .roofline import SpeedReport
from .training import TrainReport
from .verification import VerifyReport

JSON_DOCUMENTS: dict[str, Callable[[], dict]] = {
    "params": ParamsReport.model_json_schema,
    "models": TypeAdapter(list[BundledModel]).json_schema,
    "flops": FlopsReport.model_json_schema,
    "crossover": CrossoverReport.model_json_schema,
    "derive-dim": DeriveDimReport.model_json_schema,
    "compare": TypeAdapter(list[CompareRow]).json_schema,
    "verify": VerifyReport.model_json_schema,
    "memory": MemoryReport.model_json_schema,
    "families": TypeAdapter(dict[str, list[str]]).json_schema,  # models --families
    "speed": SpeedReport.model_json_schema,  # one document; several accelerators or batches print a list of them
    "train": TrainReport.model_json_schema,
}
