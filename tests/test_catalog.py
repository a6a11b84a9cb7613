"""The catalog that `models`, `models --families` and `compare` read for bundled configs: the counts shipped with
the package (what a live count gives), and a cache written into the user's cache folder for a config the shipped
counts do not match, keyed by the engine, never used stale."""

import json
import os
import shutil
import subprocess
import sys

import pytest

from ffncalc import catalog, source
from ffncalc.api import build_catalog, compare, list_bundled, list_families
from ffncalc.errors import FfncalcError

from .conftest import ROOT

LLAMA_31_8B = "meta-llama__Llama-3.1-8B.json"


@pytest.fixture
def fresh_catalog(tmp_path, monkeypatch):
    """An empty user cache and no shipped counts: what the user's cache does on its own."""
    monkeypatch.setenv("FFNCALC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(catalog, "SHIPPED", tmp_path / "no-shipped-catalog.json")
    catalog.read_catalog.cache_clear()
    catalog.read_shipped.cache_clear()
    yield
    catalog.read_catalog.cache_clear()
    catalog.read_shipped.cache_clear()


def test_the_shipped_counts_are_a_live_count():
    # tools/write_catalog.py writes them; a change to a count or a family makes this fail until it is rerun
    catalog.read_shipped.cache_clear()
    assert catalog.read_shipped() == json.loads(json.dumps(build_catalog()))


def test_the_first_listing_after_install_reads_the_shipped_counts_and_creates_no_family_adapter(tmp_path):
    code = (
        "import sys\n"
        "from ffncalc.api import compare, list_bundled, list_families\n"
        "rows = list_bundled(); list_families(); compare()\n"
        "print(sorted(m for m in sys.modules if m.startswith('ffncalc.families.')))\n"
        "print({row.model: row.total_params for row in rows}['meta-llama/Llama-3.1-8B'])"
    )
    env = {**os.environ, "FFNCALC_CACHE_DIR": str(tmp_path / "empty")}
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env)
    assert run.returncode == 0, run.stderr
    # 8,030,261,248: Meta's model card for Llama-3.1-8B
    assert run.stdout.split("\n")[:2] == ["[]", "8030261248"]
    assert not (tmp_path / "empty").exists()  # nothing counted, so nothing stored


def test_the_first_listing_writes_the_cache_and_the_next_reads_it(fresh_catalog):
    assert not catalog.catalog_path().exists()
    first = list_bundled()
    assert catalog.catalog_path().exists()
    assert list_bundled() == first
    assert catalog.read_catalog()["engine"] == catalog.engine_fingerprint()


def test_only_the_most_recent_catalogs_are_kept(tmp_path, fresh_catalog):
    # each change of the code writes a catalog of its own; older ones would pile up in the user's cache folder
    folder = catalog.cache_dir()
    folder.mkdir(parents=True)
    for age in range(12):
        old = folder / f"catalog-old{age:02d}.json"
        old.write_text("{}")
        os.utime(old, (1_000_000 + age, 1_000_000 + age))
    catalog.store({"models": {}})
    kept = sorted(path.name for path in folder.glob("catalog-*.json"))
    assert len(kept) == catalog.KEPT and catalog.catalog_path().name in kept
    assert "catalog-old11.json" in kept and "catalog-old04.json" not in kept


def test_a_cache_folder_that_cannot_be_written_still_lists(tmp_path, monkeypatch):
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("FFNCALC_CACHE_DIR", str(tmp_path / "file" / "cache"))  # under a file: mkdir fails
    catalog.read_catalog.cache_clear()
    assert {row.model: row.total_params for row in list_bundled()}["meta-llama/Llama-3.1-8B"] == 8_030_261_248


def test_listing_the_bundled_configs_from_a_warm_cache_creates_no_family_adapter(tmp_path):
    code = (
        "import sys\n"
        "from ffncalc.api import compare, list_bundled, list_families\n"
        "list_bundled(); list_families(); compare()\n"
        "print(sorted(m for m in sys.modules if m.startswith('ffncalc.families.')))"
    )
    env = {**os.environ, "FFNCALC_CACHE_DIR": str(tmp_path)}
    warm = subprocess.run(
        [sys.executable, "-c", "from ffncalc.api import list_bundled; list_bundled()"], env=env, cwd=ROOT
    )
    assert warm.returncode == 0
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env)
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
    # unedited: transformers counts 6,738,415,616 (tests/expected/transformers record)
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
    (tmp_path / "catalog.json").write_text('{"engine": "other code", "models": {}}')
    catalog.read_catalog.cache_clear()
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
