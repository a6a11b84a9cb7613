"""Write ffncalc/bundled_catalog.json: the counts of every bundled config and preset, and every family's
model_types, shipped so the first `ffncalc models` (or `compare`) after an install reads them instead of counting.

    python tools/write_catalog.py

tests/test_catalog.py holds the shipped file equal to a live count; rerun this when a count or a family changes.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from ffncalc.api import build_catalog  # noqa: E402
from ffncalc.catalog import SHIPPED  # noqa: E402


def main() -> None:
    SHIPPED.write_text(
        json.dumps(build_catalog(), indent=1, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    print(f"wrote {SHIPPED.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
