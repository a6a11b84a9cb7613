"""JSON Schemas of the documents the commands print as JSON; their field names are a stable interface."""

from __future__ import annotations

from collections.abc import Callable

from pydantic import TypeAdapter

from .accounting import ParamsReport
from .api import BundledModel
from .comparison import CompareRow
from .compute import CrossoverReport, FlopsReport
from .ffn_width import DeriveDimReport
from .footprint import MemoryReport
from .results import json_list_schema, json_model
from .roofline import SpeedRun
from .training import TrainReport
from .verification import VerifyReport

JSON_DOCUMENTS: dict[str, Callable[[], dict]] = {
    "params": json_model(ParamsReport).model_json_schema,
    "models": lambda: json_list_schema(BundledModel),
    "flops": json_model(FlopsReport).model_json_schema,
    "crossover": json_model(CrossoverReport).model_json_schema,
    "derive-dim": json_model(DeriveDimReport).model_json_schema,
    "compare": lambda: json_list_schema(CompareRow),
    "verify": json_model(VerifyReport).model_json_schema,
    "memory": json_model(MemoryReport).model_json_schema,
    "families": TypeAdapter(dict[str, list[str]]).json_schema,  # models --families
    # one document; several accelerators or batches print a list of them
    "speed": json_model(SpeedRun).model_json_schema,
    "train": json_model(TrainReport).model_json_schema,
}
