"""The base of every result ffncalc returns, and what a report says about the model it describes.

Results are frozen pydantic models: typed fields with exact integers, rendered as tables by
``render`` and printed as one JSON document by ``--json``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypeVar

from pydantic import BaseModel, ConfigDict


class Result(BaseModel):
    model_config = ConfigDict(frozen=True, defer_build=True)


class DefaultUsed(Result):
    """A field the config left out, and the value transformers' configuration class gives it."""

    field: str
    value: int | float | str | bool | list[int] | list[str] | list[list[int]] | dict[str, int] | None
    rule: str | None = None  # how a derived default is computed, e.g. "hidden_size // num_attention_heads"


class ModelInfo(Result):
    """Who the model is: its name, where its config came from, its family, and every assumption made."""

    model: str = ""
    source: str = ""  # "bundled", "preset", "file" or "hub"
    model_type: str = ""
    architecture: str = ""  # the family, as people name it, e.g. "Llama"
    model_class: str | None = None  # the transformers class counted, e.g. "LlamaForCausalLM"
    counted_as: str | None = None  # --as: the family whose rules were applied to another model_type
    overrides: list[str] = []  # --set: the fields changed from the config as read, as KEY=VALUE (VALUE in JSON)
    defaults_used: list[DefaultUsed] = []
    notes: list[str] = []
    warnings: list[str] = []  # the model transformers builds from this config cannot work as one


Report = TypeVar("Report", bound=ModelInfo)


@dataclass
class Remarks:
    """What a command says about its answer beyond what loading the model said: the notes and warnings it gathers
    as it works (a context past the model's limit, a scheme not read, a model that does not fit), given to the
    finished report in one place (results are frozen)."""

    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def about(self, report: Report) -> Report:
        """REPORT with these remarks after its own."""
        if not (self.notes or self.warnings):
            return report
        return report.model_copy(
            update={"notes": [*report.notes, *self.notes], "warnings": [*report.warnings, *self.warnings]}
        )
