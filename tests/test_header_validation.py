"""A safetensors header gets the same verdict from a local folder and from the Hub.

ffncalc parses a folder's headers itself and the Hub's through huggingface_hub's get_safetensors_metadata; both go
through checkpoint.validate_header. Each bad header below is written to a folder and served by the stand-in Hub
(tests/hub_server.py, over real HTTP), and `verify` must refuse it on both with the same words after the location.
"""

import json

import pytest

from ffncalc import checkpoint
from ffncalc.errors import CheckpointError

from .checkpoints import header_entries, safetensors_file
from .conftest import tiny_llama
from .hub_server import FakeHub, FakeRepo
from .test_hub import run_ffncalc

CONFIG = json.dumps(tiny_llama()).encode()
NAME = "model.embed_tokens.weight"

# (id, header JSON, data bytes after it, what verify says after "Error: <where>: ")
SAME_VERDICT = [
    (
        "unknown-dtype",
        header_entries((NAME, "F33", [2, 2], [0, 16])),
        16,
        f"tensor '{NAME}' has dtype 'F33', not one of safetensors' "
        "(F64, I64, U64, F32, I32, U32, F16, BF16, I16, U16, F8_E4M3, F8_E5M2, F8_E8M0, I8, U8, BOOL)",
    ),
    (
        "lowercase-dtype",
        header_entries((NAME, "f32", [2, 2], [0, 16])),
        16,
        f"tensor '{NAME}' has dtype 'f32', not one of safetensors' "
        "(F64, I64, U64, F32, I32, U32, F16, BF16, I16, U16, F8_E4M3, F8_E5M2, F8_E8M0, I8, U8, BOOL)",
    ),
    (
        "negative-size",
        header_entries((NAME, "F32", [-2, -2], [0, 16])),
        16,
        f"tensor '{NAME}' has shape [-2, -2], not a list of sizes ≥ 0",
    ),
    (
        "span-too-short",
        header_entries((NAME, "F32", [2, 2], [0, 12])),
        12,
        f"tensor '{NAME}' spans 12 bytes but its shape [2, 2] of F32 takes 16",
    ),
    (
        "gap-at-start",
        header_entries((NAME, "F32", [2, 2], [4, 20])),
        20,
        f"tensor '{NAME}' starts at byte 4, not 0: its data_offsets overlap or leave a gap",
    ),
    (
        "offsets-reversed",
        header_entries((NAME, "F32", [2, 2], [16, 0])),
        16,
        f"tensor '{NAME}' has data_offsets [16, 0], not [begin, end]",
    ),
    (
        "offsets-past-64-bits",
        header_entries((NAME, "U8", [2**64], [0, 2**64])),
        0,
        f"tensor '{NAME}' has data_offsets [0, 18446744073709551616], not [begin, end]",
    ),
    (
        # The same name twice: its last entry stands (both parsers read JSON so), and the first one's bytes are a gap.
        "name-given-twice",
        header_entries(("a", "F32", [2, 2], [0, 16]), ("b", "F32", [2, 2], [16, 32]), ("a", "F32", [2, 2], [32, 48])),
        48,
        "tensor 'b' starts at byte 16, not 0: its data_offsets overlap or leave a gap",
    ),
]
# Headers huggingface_hub's parser refuses itself, before validate_header sees them: refused on both, in other words.
REFUSED_BY_BOTH = [
    ("no-data-offsets", json.dumps({NAME: {"dtype": "F32", "shape": [2, 2]}}).encode(), 16),
    ("entry-not-an-object", json.dumps({NAME: [0, 16]}).encode(), 16),
    (
        "size-not-a-number",
        json.dumps({NAME: {"dtype": "F32", "shape": [2, "2"], "data_offsets": [0, 16]}}).encode(),
        16,
    ),
]


def sharded_with_a_name_in_both_shards() -> dict[str, bytes]:
    """Two shards that both store `lm_head.weight`, and an index naming the first."""
    first = header_entries(("lm_head.weight", "F32", [2, 2], [0, 16]))
    second = header_entries(("lm_head.weight", "F32", [2, 2], [0, 16]), ("model.norm.weight", "F32", [2], [16, 24]))
    weight_map = {"lm_head.weight": "model-00001-of-00002.safetensors"}
    weight_map["model.norm.weight"] = "model-00002-of-00002.safetensors"
    return {
        "config.json": CONFIG,
        "model.safetensors.index.json": json.dumps({"metadata": {"total_size": 40}, "weight_map": weight_map}).encode(),
        "model-00001-of-00002.safetensors": safetensors_file(first, 16),
        "model-00002-of-00002.safetensors": safetensors_file(second, 24),
    }


def sharded_with_a_wrong_total_size() -> dict[str, bytes]:
    """Two sound shards of 16 and 8 bytes, and an index whose metadata.total_size says 1,000."""
    first = header_entries(("lm_head.weight", "F32", [2, 2], [0, 16]))
    second = header_entries(("model.norm.weight", "F32", [2], [0, 8]))
    weight_map = {"lm_head.weight": "model-00001-of-00002.safetensors"}
    weight_map["model.norm.weight"] = "model-00002-of-00002.safetensors"
    return {
        "config.json": CONFIG,
        "model.safetensors.index.json": json.dumps(
            {"metadata": {"total_size": 1000}, "weight_map": weight_map}
        ).encode(),
        "model-00001-of-00002.safetensors": safetensors_file(first, 16),
        "model-00002-of-00002.safetensors": safetensors_file(second, 8),
    }


def repo_files(header: bytes, data: int) -> dict[str, bytes]:
    return {"config.json": CONFIG, "model.safetensors": safetensors_file(header, data)}


REPOS = {f"acme/{case[0]}": FakeRepo(files=repo_files(case[1], case[2])) for case in SAME_VERDICT + REFUSED_BY_BOTH}
REPOS["acme/duplicate-across-shards"] = FakeRepo(files=sharded_with_a_name_in_both_shards())
REPOS["acme/wrong-total-size"] = FakeRepo(files=sharded_with_a_wrong_total_size())


@pytest.fixture(scope="module")
def hub():
    with FakeHub(REPOS) as server:
        yield server


def write_folder(folder, files: dict[str, bytes]):
    folder.mkdir()
    for name, content in files.items():
        (folder / name).write_bytes(content)
    return folder


def hub_verify(hub, tmp_path, repo):
    run = run_ffncalc("verify", repo, endpoint=hub.url, home=tmp_path / "hf-home", FFNCALC_HUB_DEADLINE="10")
    assert run.returncode == 6, run.stderr
    return run


@pytest.mark.parametrize(("case", "header", "data", "message"), SAME_VERDICT, ids=[c[0] for c in SAME_VERDICT])
def test_a_bad_header_gets_the_same_words_locally_and_on_the_hub(ffncalc, hub, tmp_path, case, header, data, message):
    local = ffncalc("verify", str(write_folder(tmp_path / case, repo_files(header, data))))
    assert local.exit_code == 6, local.stderr
    assert local.stderr == f"Error: {tmp_path / case / 'model.safetensors'}: {message}\n"
    remote = hub_verify(hub, tmp_path, f"acme/{case}")
    assert remote.stderr == f"Error: acme/{case}/model.safetensors: {message}\n"


@pytest.mark.parametrize(("case", "header", "data"), REFUSED_BY_BOTH, ids=[c[0] for c in REFUSED_BY_BOTH])
def test_a_header_the_hub_parser_refuses_is_refused_locally_too(ffncalc, hub, tmp_path, case, header, data):
    local = ffncalc("verify", str(write_folder(tmp_path / case, repo_files(header, data))))
    assert local.exit_code == 6 and local.stdout == "", local.stderr
    assert local.stderr.startswith("Error: ") and local.stderr.count("\n") == 1
    remote = hub_verify(hub, tmp_path, f"acme/{case}")
    assert remote.stdout == "" and remote.stderr.startswith("Error: ") and remote.stderr.count("\n") == 1
    assert "index.json is not" not in remote.stderr  # a one-file repo has no index to blame


def test_a_tensor_stored_in_two_shards_is_refused_locally_and_on_the_hub(ffncalc, hub, tmp_path):
    message = "tensor 'lm_head.weight' is stored in both model-00001-of-00002.safetensors and model-00002-of-00002.safetensors"
    folder = write_folder(tmp_path / "duplicate", sharded_with_a_name_in_both_shards())
    local = ffncalc("verify", str(folder))
    assert local.exit_code == 6
    assert local.stderr == f"Error: {folder}: {message}\n"
    remote = hub_verify(hub, tmp_path, "acme/duplicate-across-shards")
    assert remote.stderr == f"Error: acme/duplicate-across-shards: {message}\n"


def test_an_index_that_disagrees_with_its_shards_is_reported_locally_and_on_the_hub(ffncalc, hub, tmp_path):
    # safetensors' rule for metadata.total_size: the sum of the shards' tensor bytes, here 16 + 8.
    problem = "metadata.total_size is 1,000 bytes; the shards' tensors hold 24"
    local = ffncalc("verify", str(write_folder(tmp_path / "total", sharded_with_a_wrong_total_size())), "--json")
    assert local.exit_code == 1, local.stderr
    assert json.loads(local.stdout)["index_problems"] == [problem]
    remote = run_ffncalc("verify", "acme/wrong-total-size", "--json", endpoint=hub.url, home=tmp_path / "hf-home")
    assert remote.returncode == 1, remote.stderr
    assert json.loads(remote.stdout)["index_problems"] == [problem]


def test_a_header_naming_more_tensors_than_the_cap_is_refused(monkeypatch):
    # The same function validates both parsers' entries; the cap (1,000,000) lowered to 2 so three entries break it.
    monkeypatch.setattr(checkpoint, "MAX_TENSORS", 2)
    entries = [(f"t{i}", "U8", [1], [i, i + 1]) for i in range(3)]
    with pytest.raises(CheckpointError, match="3 tensors is more than a safetensors header can sensibly hold"):
        checkpoint.validate_header(entries, "where", "model.safetensors")
    assert len(checkpoint.validate_header(entries[:2], "where", "model.safetensors")[0]) == 2
