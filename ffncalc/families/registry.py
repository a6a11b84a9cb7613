"""Which adapter class reads which model_type: each class says so itself, with ``@family("llama")``.

A family module registers its adapters where it defines them; adding a family is adding its module. A command
reads one config, and creating every adapter class to learn which one it needs would cost half a second (pydantic
classes are costly to make), so the decorators are also read from the modules' bytes, without importing them: an
index of model_type → "module:Class" from each top-level ``@family(...)`` or ``@tower(...)`` line (string
literals only) and the class it decorates. Reading all the modules takes a few milliseconds, and finding one
model_type reads the likeliest modules first, so nothing is cached and nothing is written. A test imports every
module and checks that the classes register exactly this index.
This module imports nothing of ffncalc's at import time, so tools can read the index without pydantic; registering
a declared class (``transformers=``) imports declaration.py then, when a family module makes its classes.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Literal, TypedDict, TypeVar

from typing_extensions import Unpack  # typing has it from Python 3.11

C = TypeVar("C", bound=type)
Kind = Literal["families", "towers"]

FOLDER = Path(__file__).parent
NOT_FAMILY_MODULES = frozenset({"__init__.py", "registry.py"})

DECORATOR_KINDS: dict[str, Kind] = {"family": "families", "tower": "towers"}

# Filled as family modules are imported: (kind, model_type) → the class that registered it.
registered: dict[tuple[Kind, str], type] = {}


class Declaration(TypedDict, total=False):
    """What a family declares beside its model_types (declaration.declare says what each does)."""

    transformers: str  # its transformers configuration class, whose record gives the fields' defaults and names
    read_beyond: dict[str, str]  # field → why it is read although the class has no such field
    own_defaults: dict[str, str]  # field → why its written default differs from the record's
    other_names: dict[str, str]  # field → why it is read under more names than the attribute_map gives
    architecture: str
    model_class: str
    heads_divide_hidden: bool
    informational: frozenset[str]
    routing: tuple[str, str]


def family(*model_types: str, **declaration: Unpack[Declaration]) -> Callable[[C], C]:
    """Register the decorated adapter class as the reader of MODEL_TYPES' configs.

    With TRANSFORMERS (its configuration class's name) the class's fields take their defaults and other names from
    transformers' record, and the rest is the family's metadata (declaration.declare says each). A module not yet
    declared that way writes its defaults and class data by hand, and names no TRANSFORMERS."""
    return _register("families", model_types, declaration)


def tower(*model_types: str, **declaration: Unpack[Declaration]) -> Callable[[C], C]:
    """Register the decorated adapter class as the tower a multimodal wrapper's vision or audio config names (the
    declaration as for ``family``)."""
    return _register("towers", model_types, declaration)


def _register(kind: Kind, model_types: tuple[str, ...], declaration: Declaration) -> Callable[[C], C]:
    def register(cls: C) -> C:
        if "transformers" in declaration:
            # Imported here, when a family module makes its classes: the index above is read without pydantic.
            from .declaration import declare

            cls = declare(cls, **declaration)
        elif declaration:
            raise TypeError(f"{cls.__name__}: the family's metadata goes with its transformers configuration class")
        for model_type in model_types:
            registered[kind, model_type] = cls
        return cls

    return register


# --- the index, read from the source ----------------------------------------------------------------------

# A decorator, on one line or as the formatter wraps it, up to the class it decorates; its model_types are the
# string literals before its first keyword argument (the declaration, which the index does not read).
DECORATED = re.compile(rb"@(family|tower)\((.*?)\)\nclass (\w+)", re.DOTALL)
LITERAL = re.compile(rb'\s*"([\w.-]+)"\s*(?:,|$)')
KEYWORD = re.compile(rb"\s*(?:#[^\n]*\n\s*)*\w+=")


def module_names(folder: Path = FOLDER) -> list[str]:
    """The family modules' file names, sorted."""
    return sorted(name for name in os.listdir(folder) if name.endswith(".py") and name not in NOT_FAMILY_MODULES)


def registrations(name: str, folder: Path = FOLDER) -> list[tuple[Kind, str, str]]:
    """(kind, model_type, "module:Class") for each top-level ``@family(...)`` or ``@tower(...)`` of module NAME, read
    from its bytes; a decorator with anything but string literals is refused naming the module."""
    with open(os.path.join(folder, name), "rb") as source:
        data = b"\n" + source.read()
    found = []
    start = data.find(b"\n@")
    while start != -1:
        match = DECORATED.match(data, start + 1)
        start = data.find(b"\n@", start + 1)
        if match is None:
            continue
        decorator, arguments, cls = match[1].decode(), match[2], match[3].decode()
        model_types, at = [], 0
        while literal := LITERAL.match(arguments, at):
            model_types.append(literal[1].decode())
            at = literal.end()
        if not model_types or (arguments[at:].strip() and not KEYWORD.match(arguments, at)):
            raise ValueError(f"{name}: @{decorator} on {cls} takes model_types as string literals")
        found += [(DECORATOR_KINDS[decorator], model_type, f"{name[:-3]}:{cls}") for model_type in model_types]
    return found


def scan(folder: Path = FOLDER) -> dict[Kind, dict[str, str]]:
    """Every top-level ``@family(...)`` and ``@tower(...)`` in FOLDER's modules: kind → model_type → "module:Class".
    Nothing is imported or run; a model_type registered twice is refused naming the module."""
    found: dict[Kind, dict[str, str]] = {"families": {}, "towers": {}}
    for name in module_names(folder):
        for kind, model_type, target in registrations(name, folder):
            if model_type in found[kind]:
                raise ValueError(
                    f"{name}: {target.split(':')[1]} registers {model_type!r}, already registered by {found[kind][model_type]}"
                )
            found[kind][model_type] = target
    return found


@cache
def index(kind: Kind = "families") -> dict[str, str]:
    """Every model_type of KIND and its "module:Class" (read once a process)."""
    return scan()[kind]


@cache
def lookup(model_type: str, kind: Kind = "families") -> str | None:
    """The "module:Class" registered for MODEL_TYPE, or None.

    A command needs one model_type, so the modules most likely to register it are read first (those whose name
    shares the longest prefix with it: "qwen3_moe" → qwen.py) and reading stops at the first that does; a
    model_type no module registers reads them all. (index() reads every module; the tests hold the two to agree.)"""
    for name in sorted(module_names(), key=lambda name: -_shared_prefix(name[:-3], model_type)):
        for found_kind, found_type, target in registrations(name):
            if found_kind == kind and found_type == model_type:
                return target
    return None


def _shared_prefix(first: str, second: str) -> int:
    """How many leading characters FIRST and SECOND share."""
    shared = 0
    for one, other in zip(first, second):
        if one != other:
            break
        shared += 1
    return shared


def is_registered(cls: type, model_type: str, kind: Kind = "families") -> bool:
    """Whether CLS, once its module is imported, registered MODEL_TYPE."""
    return registered.get((kind, model_type)) is cls
