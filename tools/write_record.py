"""Ship transformers' record of configuration classes with the package: ffncalc/transformers_defaults.json.

python tools/write_record.py

tests/expected/transformers_defaults.json (tools/config_defaults.py, transformers 5.24 in a side venv) records every
field, default and attribute_map of the configuration classes ffncalc's families register. A declared family
(families/declaration.py) takes its fields' defaults and other names from it, so the package carries it, trimmed to
what families read: the fields a family module or schema.py annotates anywhere, or names in an AliasChoices (read
from the sources' syntax trees, so a family naming a new field can be recorded before it can be imported), and the
attribute_map entries of those fields. One class a line, keyed by its name: making a class parses its line alone.
tests/test_defaults.py checks the shipped file is what this writes.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
EXPECTED = ROOT / "tests" / "expected" / "transformers_defaults.json"
SHIPPED = ROOT / "ffncalc" / "transformers_defaults.json"
SOURCES = [*sorted((ROOT / "ffncalc" / "families").glob("*.py")), ROOT / "ffncalc" / "schema.py"]


def names_read(sources: list[Path] = SOURCES) -> set[str]:
    """Every name a class body in SOURCES annotates, and every string an AliasChoices(...) there names."""
    found: set[str] = set()
    for path in sources:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ClassDef):
                found |= {
                    statement.target.id
                    for statement in node.body
                    if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name)
                }
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "AliasChoices":
                found |= {
                    arg.value for arg in node.args if isinstance(arg, ast.Constant) and isinstance(arg.value, str)
                }
    return found


def shipped_record(expected: dict, read: set[str]) -> str:
    """The shipped file's text: EXPECTED's classes by name, each kept to the fields in READ (or READ's names map
    to) and the attribute_map entries naming them."""
    classes: dict[str, dict] = {}
    for entry in expected["classes"].values():
        attribute_map = {name: field for name, field in entry["attribute_map"].items() if name in read or field in read}
        kept = read | set(attribute_map.values())
        record = {
            "fields": {name: value for name, value in entry["fields"].items() if name in kept},
            "attribute_map": attribute_map,
        }
        if classes.setdefault(entry["class"], record) != record:  # GPT2Config serves gpt2 and distilgpt2 alike
            raise ValueError(f"{entry['class']} is recorded twice, differently")
    header = {
        "generated_by": "tools/write_record.py, from tests/expected/transformers_defaults.json",
        "transformers_version": expected["transformers_version"],
    }
    lines = [json.dumps(header)[:-1] + ', "classes": {']
    lines += [
        f"{json.dumps(name)}: {json.dumps(classes[name], sort_keys=True)}" + ("," if i < len(classes) - 1 else "")
        for i, name in enumerate(sorted(classes))
    ]
    return "\n".join(lines) + "\n}}\n"


if __name__ == "__main__":
    text = shipped_record(json.loads(EXPECTED.read_text()), names_read())
    SHIPPED.write_text(text)
    print(f"wrote {SHIPPED.relative_to(ROOT)} ({len(text.encode()) // 1024} KiB)")
