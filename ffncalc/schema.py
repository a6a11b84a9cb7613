"""The border guard: pydantic types for the raw fields of a Hugging Face config.json.

Family adapters (``ffncalc.families``) declare their fields with these types. Integers
are strict: JSON ``true`` and ``"4096"`` are not sizes (pydantic's default mode would read
them as 1 and 4096), and every size has a ceiling far above any published model, so a
10^30 or a negative width is rejected with the field's name instead of being counted.
Unknown keys are ignored: configs carry dozens of fields that do not change the count.
"""

from __future__ import annotations

import json
import re
from typing import Annotated, Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .errors import InvalidConfigError
from .spec import ModelSpec

# Ceilings: generous (16× the largest published value or more), so only nonsense trips them.
MAX_WIDTH = 1 << 24  # hidden, FFN, head and vocabulary sizes: 16,777,216
MAX_LAYERS = 1 << 14  # 16,384 layers
MAX_HEADS = 1 << 16
MAX_EXPERTS = 1 << 16
MAX_POSITIONS = 1 << 26  # learned position tables (GPT-2's n_positions)

Width = Annotated[int, Field(strict=True, ge=1, le=MAX_WIDTH)]
WidthOrZero = Annotated[int, Field(strict=True, ge=0, le=MAX_WIDTH)]
LayerCount = Annotated[int, Field(strict=True, ge=1, le=MAX_LAYERS)]
LayerIndex = Annotated[int, Field(strict=True, ge=0, le=MAX_LAYERS)]
HeadCount = Annotated[int, Field(strict=True, ge=1, le=MAX_HEADS)]
ExpertCount = Annotated[int, Field(strict=True, ge=1, le=MAX_EXPERTS)]
ExpertCountOrZero = Annotated[int, Field(strict=True, ge=0, le=MAX_EXPERTS)]
PositionCount = Annotated[int, Field(strict=True, ge=1, le=MAX_POSITIONS)]
Flag = Annotated[bool, Field(strict=True)]
Name = Annotated[str, Field(strict=True, max_length=200)]


class HFConfig(BaseModel):
    """Fields every family shares; each family adapter subclasses it and implements ``to_spec``."""

    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True, defer_build=True)

    model_type: Name
    torch_dtype: Name | None = None
    dtype: Name | None = None  # transformers ≥ 4.56 writes `dtype` instead of `torch_dtype`
    quantization_config: dict[str, Any] | None = None
    transformers_version: Name | None = None  # the version that wrote the config (and the checkpoint)

    #: A readable family name for tables.
    architecture: ClassVar[str] = ""

    @property
    def stored_dtype(self) -> str | None:
        """The dtype the checkpoint declares, whichever key it uses."""
        return self.torch_dtype or self.dtype

    def written_before(self, major: int, minor: int) -> bool:
        """Whether the config says it was saved by a transformers older than major.minor."""
        match = re.match(r"(\d+)\.(\d+)", self.transformers_version or "")
        return bool(match) and (int(match[1]), int(match[2])) < (major, minor)

    def make_spec(self, **fields) -> ModelSpec:
        """A ModelSpec with this config's model_type, family name and dtype filled in."""
        return ModelSpec(model_type=self.model_type, architecture=self.architecture, torch_dtype=self.stored_dtype, **fields)

    def to_spec(self) -> ModelSpec:  # pragma: no cover - every adapter overrides it
        raise NotImplementedError


def describe_validation_error(error: ValidationError, source: str) -> InvalidConfigError:
    """One line naming each offending field: ``field: message; field: message``."""
    problems = []
    for item in error.errors(include_url=False):
        location = ".".join(str(part) for part in item["loc"])
        message = item["msg"].removeprefix("Value error, ")
        if item["type"] == "missing":
            message = "required field is missing"
        elif "input" in item and item["type"] != "value_error" and not isinstance(item["input"], (dict, list)):
            message = f"{message} (got {_short(item['input'])})"
        message = message.replace("Input should be", "must be")
        problems.append(f"{location}: {message}" if location else message)
    shown = "; ".join(problems[:5]) + (f"; and {len(problems) - 5} more" if len(problems) > 5 else "")
    return InvalidConfigError(f"{source}: {shown}")


def _short(value: Any) -> str:
    try:
        text = json.dumps(value)  # show values as they look in config.json: true, "64", 1e+30, NaN
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."
