"""Write fixtures/catalog.json: every bundled config and preset counted by the current code (ffncalc/catalog.py).

    python tools/write_catalog.py

Run it after changing the code or a bundled config; tests/test_catalog.py fails until the catalog is current.
"""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ffncalc.catalog import build_catalog, catalog_path

path = catalog_path()
path.write_text(json.dumps(build_catalog(), indent=1) + "\n", encoding="utf-8")
print(f"wrote {path}")
