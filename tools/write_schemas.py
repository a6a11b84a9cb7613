"""Write the JSON Schema of every --json document to schemas/ (tests check they are current).

python tools/write_schemas.py
"""

import json
from pathlib import Path

from ffncalc.json_schemas import JSON_DOCUMENTS

SCHEMAS = Path(__file__).resolve().parent.parent / "schemas"

if __name__ == "__main__":
    for name, schema in JSON_DOCUMENTS.items():
        (SCHEMAS / f"{name}.schema.json").write_text(json.dumps(schema(), indent=2) + "\n")
        print(f"wrote schemas/{name}.schema.json")
