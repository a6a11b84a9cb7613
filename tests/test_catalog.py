"""The catalog (fixtures/catalog.json) that `models`, `models --families` and `compare` read for bundled configs:
current with the code, never used stale, and what a live count gives."""

import json
import shutil
import subprocess
import sys

import pytest

from ffncalc import catalog, source
from ffncalc.api import compare, list_bundled, list_families
from ffncalc.errors import FfncalcError

from .conftest import ROOT

LLAMA_31_8B = "meta-llama__Llama-3.1-8B.json"


@pytest.fixture
def fresh_catalog():
    catalog.read_catalog.cache_clear()
    yield
    catalog.read_catalog.cache_clear()


def test_the_catalog_is_what_the_current_code_counts():
    written = json.loads(catalog.catalog_path().read_text(encoding="utf-8"))
    assert written == build_now(), "the catalog is not current: run `python tools/write_catalog.py`"


def build_now():
    return json.loads(json.dumps(catalog.build_catalog()))  # as JSON holds it (tuples become lists)


def test_listing_the_bundled_configs_and_comparing_them_creates_no_family_adapter():
    code = (
        "import sys\n"
        "from ffncalc.api import compare, list_bundled, list_families\n"
        "list_bundled(); list_families(); compare()\n"
        "print(sorted(m for m in sys.modules if m.startswith('ffncalc.families.')))"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]"


def test_an_edited_bundled_config_is_counted_live(tmp_path, monkeypatch, fresh_catalog):
    shutil.copytree(source.bundled_dir(), tmp_path / "configs")
    edited = tmp_path / "configs" / LLAMA_31_8B
    config = json.loads(edited.read_text())
    config["num_hidden_layers"] = 16
    edited.write_text(json.dumps(config))
    monkeypatch.setattr(source, "bundled_dir", lambda: tmp_path / "configs")
    # Llama-3.1-8B has 8,030,261,248 parameters (Meta's model card, transformers on the meta device). Each layer:
    # q, o 4096·4096 each, k, v 4096·1024 each (8 KV heads of 128), gate, up, down 4096·14336 each, 2 norms of 4096:
    # 2·16,777,216 + 2·4,194,304 + 3·58,720,256 + 8,192 = 218,112,000. Sixteen fewer layers: 4,540,469,248.
    expected = 8_030_261_248 - 16 * 218_112_000
    listed = {row.model: row for row in list_bundled()}
    assert listed["meta-llama/Llama-3.1-8B"].total_params == expected == 4_540_469_248
    assert [row.total_params for row in compare(["meta-llama/Llama-3.1-8B"])] == [expected]
    # unedited, so from the catalog: transformers counts 6,738,415,616 (tests/expected/transformers record)
    assert listed["meta-llama/Llama-2-7b-hf"].total_params == 6_738_415_616


def test_a_config_added_after_the_catalog_is_counted_live(tmp_path, monkeypatch, fresh_catalog):
    shutil.copytree(source.bundled_dir(), tmp_path / "configs")
    shutil.copy(tmp_path / "configs" / LLAMA_31_8B, tmp_path / "configs" / "someone__Llama-copy.json")
    monkeypatch.setattr(source, "bundled_dir", lambda: tmp_path / "configs")
    listed = {row.model: row for row in list_bundled()}
    assert listed["someone/Llama-copy"].total_params == 8_030_261_248  # Meta's model card


def test_a_catalog_written_by_other_code_is_not_read(monkeypatch, fresh_catalog):
    monkeypatch.setattr(catalog, "engine_fingerprint", lambda: "other code")
    assert catalog.read_catalog() == {}
    assert catalog.families() is None
    assert catalog.counted("meta-llama/Llama-3.1-8B", source.bundled_dir() / LLAMA_31_8B) is None


def test_a_missing_or_corrupt_catalog_is_not_read(tmp_path, monkeypatch, fresh_catalog):
    monkeypatch.setattr(catalog, "catalog_path", lambda: tmp_path / "catalog.json")
    assert catalog.read_catalog() == {}
    (tmp_path / "catalog.json").write_text("{not json")
    catalog.read_catalog.cache_clear()
    assert catalog.read_catalog() == {}
    (tmp_path / "catalog.json").write_text("[1, 2]")
    catalog.read_catalog.cache_clear()
    assert catalog.read_catalog() == {}


def test_the_family_list_from_the_catalog_is_the_adapters_own(fresh_catalog):
    assert list_families() == list_families(live=True)
    assert list_families()["DeepSeek-V3"] == ["deepseek_v3", "kimi_k2"]  # kimi_k2 declares DeepSeek-V3's classes


def test_what_the_catalog_gives_equals_a_live_count(fresh_catalog):
    assert list_bundled() == list_bundled(live=True)
    assert compare() == compare(live=True)
    assert compare(["openai/gpt-oss-20b", "gpt3-175b"]) == compare(["openai/gpt-oss-20b", "gpt3-175b"], live=True)


def test_an_unreadable_bundled_config_is_reported_as_a_live_count_would(tmp_path, monkeypatch, fresh_catalog):
    shutil.copytree(source.bundled_dir(), tmp_path / "configs")
    (tmp_path / "configs" / LLAMA_31_8B).unlink()
    (tmp_path / "configs" / LLAMA_31_8B).mkdir()  # a folder where a config file should be: unreadable as a file
    monkeypatch.setattr(source, "bundled_dir", lambda: tmp_path / "configs")
    assert catalog.counted("meta-llama/Llama-3.1-8B", tmp_path / "configs" / LLAMA_31_8B) is None
    with pytest.raises(FfncalcError):
        list_bundled()
