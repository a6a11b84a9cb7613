"""The Hub path for real: huggingface_hub's own client, over HTTP, to a stand-in Hub on 127.0.0.1.

Each test runs the installed CLI in a subprocess, because huggingface_hub reads HF_ENDPOINT,
HF_HOME, HF_TOKEN and HF_HUB_OFFLINE when it is imported.
"""

import json
import os
import socket
import subprocess
import sys
import time

import pytest

from .checkpoints import llama_tensors, safetensors_header
from .conftest import tiny_llama
from .hub_server import FakeHub, FakeRepo

CONFIG = json.dumps(tiny_llama()).encode()
TINY_TOTAL = 2 * 64_000 + 2 * (16_384 + 24_576 + 128) + 64  # embeddings ×2, 2 layers, final norm


@pytest.fixture
def hub(tmp_path):
    repos = {
        "acme/tiny": FakeRepo(files={"config.json": CONFIG}),
        "acme/gated": FakeRepo(files={"config.json": CONFIG}, gated_token="hf_secret"),
        "acme/weights-only": FakeRepo(files={"model.safetensors": b"\0"}),
        "acme/checkpoint": FakeRepo(
            files={"config.json": CONFIG, "model.safetensors": safetensors_header(llama_tensors(tiny_llama()))}
        ),
        "acme/sharded": FakeRepo(files=sharded_files()),
    }
    with FakeHub(repos) as server:
        yield server


def sharded_files():
    """Two shards and their index, as a sharded Hub repo lays them out."""
    tensors = llama_tensors(tiny_llama())
    names = list(tensors)
    first = {name: tensors[name] for name in names[:10]}
    second = {name: tensors[name] for name in names[10:]}
    weight_map = {name: "model-00001-of-00002.safetensors" for name in first}
    weight_map |= {name: "model-00002-of-00002.safetensors" for name in second}
    index = {"metadata": {"total_size": 2 * TINY_TOTAL}, "weight_map": weight_map}
    return {
        "config.json": CONFIG,
        "model.safetensors.index.json": json.dumps(index).encode(),
        "model-00001-of-00002.safetensors": safetensors_header(first),
        "model-00002-of-00002.safetensors": safetensors_header(second),
    }


def hub_environment(endpoint, home, **env):
    environment = {key: value for key, value in os.environ.items() if not key.startswith("HF_")}
    environment.update({"HF_ENDPOINT": endpoint, "HF_HOME": str(home), "COLUMNS": "100", **env})
    return environment


def run_ffncalc(*args, endpoint, home, **env):
    return subprocess.run(
        [sys.executable, "-m", "ffncalc", *args],
        env=hub_environment(endpoint, home, **env),
        capture_output=True,
        text=True,
        timeout=120,
    )


def start_ffncalc(*args, endpoint, home, **env):
    return subprocess.Popen(
        [sys.executable, "-m", "ffncalc", *args],
        env=hub_environment(endpoint, home, **env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_a_hub_id_is_fetched_through_huggingface_hub(hub, tmp_path):
    run = run_ffncalc("params", "acme/tiny", "--json", endpoint=hub.url, home=tmp_path)
    assert run.returncode == 0, run.stderr
    document = json.loads(run.stdout)
    assert document["total_params"] == TINY_TOTAL
    assert document["source"] == "hub"
    assert ("GET", "/acme/tiny/resolve/main/config.json", None) in hub.requests


def test_a_revision_is_asked_for_by_name(hub, tmp_path):
    run = run_ffncalc("params", "acme/tiny", "--revision", "main", "--json", endpoint=hub.url, home=tmp_path)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["model"] == "acme/tiny@main"


def test_offline_with_a_cached_copy_uses_the_cache(hub, tmp_path):
    assert run_ffncalc("params", "acme/tiny", endpoint=hub.url, home=tmp_path).returncode == 0
    requests_before = len(hub.requests)
    run = run_ffncalc("params", "acme/tiny", "--json", endpoint=hub.url, home=tmp_path, HF_HUB_OFFLINE="1")
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["total_params"] == TINY_TOTAL
    assert len(hub.requests) == requests_before  # offline: not one request


def test_offline_with_nothing_cached_is_one_line(hub, tmp_path):
    run = run_ffncalc("params", "acme/tiny", endpoint=hub.url, home=tmp_path, HF_HUB_OFFLINE="1")
    assert run.returncode == 5
    assert run.stdout == ""
    assert run.stderr == (
        "Error: acme/tiny: config.json is not in the local cache and HF_HUB_OFFLINE is set; "
        "go online once, or unset HF_HUB_OFFLINE\n"
    )


def test_a_repo_that_does_not_exist(hub, tmp_path):
    run = run_ffncalc("params", "acme/missing", endpoint=hub.url, home=tmp_path)
    assert run.returncode == 2
    assert run.stderr == (
        "Error: no model 'acme/missing' on the Hub: check the id, or pass --token / set HF_TOKEN if it is private\n"
    )


def test_a_gated_repo_without_a_token(hub, tmp_path):
    run = run_ffncalc("params", "acme/gated", endpoint=hub.url, home=tmp_path)
    assert run.returncode == 5
    assert run.stderr == (
        "Error: acme/gated is gated: accept its terms on the Hub, then log in (`hf auth login`), "
        "set HF_TOKEN or pass --token\n"
    )


def test_a_gated_repo_with_a_token_that_has_no_access(hub, tmp_path):
    run = run_ffncalc("params", "acme/gated", "--token", "hf_other", endpoint=hub.url, home=tmp_path)
    assert run.returncode == 5
    assert run.stderr == (
        "Error: acme/gated is gated and the token has no access: accept its terms on the Hub with that account, "
        "or use another token (--token / HF_TOKEN)\n"
    )
    assert ("HEAD", "/acme/gated/resolve/main/config.json", "Bearer hf_other") in hub.requests


def test_a_gated_repo_with_token_option(hub, tmp_path):
    run = run_ffncalc("params", "acme/gated", "--token", "hf_secret", "--json", endpoint=hub.url, home=tmp_path)
    assert run.returncode == 0, run.stderr
    assert ("GET", "/acme/gated/resolve/main/config.json", "Bearer hf_secret") in hub.requests


def test_a_gated_repo_with_hf_token_variable(hub, tmp_path):
    run = run_ffncalc("params", "acme/gated", "--json", endpoint=hub.url, home=tmp_path, HF_TOKEN="hf_secret")
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["total_params"] == TINY_TOTAL


def test_a_repo_without_config_json(hub, tmp_path):
    run = run_ffncalc("params", "acme/weights-only", endpoint=hub.url, home=tmp_path)
    assert run.returncode == 2
    assert run.stderr == "Error: acme/weights-only has no config.json; is it a transformers model?\n"


def test_an_unknown_revision(hub, tmp_path):
    run = run_ffncalc("params", "acme/tiny", "--revision", "v9", endpoint=hub.url, home=tmp_path)
    assert run.returncode == 2
    assert run.stderr == "Error: acme/tiny has no revision 'v9'; check --revision\n"


@pytest.fixture(scope="module")
def retried_failures(tmp_path_factory):
    """A server error, a refused connection, a stalled Hub and a slow one, run side by side, each timed.

    huggingface_hub alone would retry each failure for 1 + 2 + 4 + 8 + 8 s; ffncalc gives up at the first
    refused connection, and after FFNCALC_HUB_DEADLINE (3 s here) when the Hub errs or stalls.
    """
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        refused = f"http://127.0.0.1:{probe.getsockname()[1]}"
    repos = {
        "acme/broken": FakeRepo(status=500),
        "acme/stalled": FakeRepo(files={"config.json": CONFIG}, delay=30),
        "acme/slow": FakeRepo(files={"config.json": CONFIG}, delay=1.5),  # past the 1-s ETag timeout
    }
    with FakeHub(repos) as server:
        runs = {
            "server error": (("params", "acme/broken"), server.url, {"FFNCALC_HUB_DEADLINE": "3"}),
            "stalled": (
                ("params", "acme/stalled"),
                server.url,
                {"FFNCALC_HUB_DEADLINE": "3", "HF_HUB_ETAG_TIMEOUT": "1"},
            ),
            # HF_HUB_ETAG_TIMEOUT: how long huggingface_hub waits for the Hub's answer about a file
            "slow": (("params", "acme/slow"), server.url, {"HF_HUB_ETAG_TIMEOUT": "1"}),
        }
        started = {
            name: (time.monotonic(), start_ffncalc(*args, endpoint=endpoint, home=tmp_path_factory.mktemp("h"), **env))
            for name, (args, endpoint, env) in runs.items()
        }
        results = {}
        for name, (began, process) in started.items():
            stdout, stderr = process.communicate(timeout=120)
            results[name] = (process, stdout, stderr, time.monotonic() - began)
    return refused, server.url, results


def started_up(results) -> float:
    """What a run side by side took beyond its Hub's 1.5-s answer: the start-up and the import of huggingface_hub on
    this machine at this moment, which a loaded machine stretches to seconds."""
    return results["slow"][3] - 1.5


def test_a_server_error_is_given_up_on_within_the_deadline(retried_failures):
    _, endpoint, results = retried_failures
    process, stdout, stderr, seconds = results["server error"]
    assert process.returncode == 5
    assert stdout == ""
    assert stderr == (
        f"Error: acme/broken: the Hub ({endpoint}) kept answering HTTP 500 for 3 s; try again later, or allow more "
        "time with FFNCALC_HUB_DEADLINE\n"
    )
    assert seconds < 3 + started_up(results) + 2  # the deadline past start-up (huggingface_hub alone: 23 s)


def test_a_stalled_hub_is_given_up_on_within_the_deadline(retried_failures):
    _, endpoint, results = retried_failures
    process, _stdout, stderr, seconds = results["stalled"]
    assert process.returncode == 5
    assert stderr == (
        f"Error: acme/stalled: the Hub ({endpoint}) did not answer for 3 s; try again later, or allow more time "
        "with FFNCALC_HUB_DEADLINE\n"
    )
    assert seconds < 3 + started_up(results) + 2


def test_an_unreachable_hub_fails_at_once_and_says_how_to_work_offline(tmp_path):
    # a port bound and held but not listening: connections are refused, and no other test's server can take it
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        refused = f"http://127.0.0.1:{probe.getsockname()[1]}"
        began = time.monotonic()
        run = run_ffncalc("params", "meta-llama/Llama-3.1-8B-Instruct", endpoint=refused, home=tmp_path)
        seconds = time.monotonic() - began
    stdout, stderr = run.stdout, run.stderr
    assert run.returncode == 5
    assert stdout == ""
    assert stderr.startswith(
        f"Error: meta-llama/Llama-3.1-8B-Instruct: cannot reach the Hub ({refused}); work offline with "
        "HF_HUB_OFFLINE=1 (cached configs) or a local config.json; bundled and usable offline: meta-llama/Llama-3.1-8B"
    )
    assert stderr.count("\n") == 1
    assert seconds < 3


def test_a_hub_slower_than_the_etag_timeout_still_answers_on_the_retry(retried_failures):
    # huggingface_hub gives the first HEAD HF_HUB_ETAG_TIMEOUT (1 s here), then retries with 60 s.
    _, _, results = retried_failures
    process, stdout, stderr, _ = results["slow"]
    assert process.returncode == 0, stderr
    assert "acme/slow — Llama (llama, as LlamaForCausalLM)" in stdout


def test_a_malformed_deadline_is_one_line(hub, tmp_path):
    run = run_ffncalc("params", "acme/tiny", endpoint=hub.url, home=tmp_path, HF_HUB_ETAG_TIMEOUT="soon")
    assert run.returncode == 5
    assert (
        run.stderr
        == "Error: HF_HUB_ETAG_TIMEOUT must be a whole number of seconds from 1 to 3600, e.g. 10 (got 'soon')\n"
    )


def test_a_preset_never_goes_to_the_hub(hub, tmp_path):
    run = run_ffncalc("params", "gpt3-175b", "--revision", "main", endpoint=hub.url, home=tmp_path)
    assert run.returncode == 2
    assert run.stderr == "Error: gpt3-175b is a preset (published without a config.json): it has no Hub revisions\n"
    assert hub.requests == [] or all("gpt3" not in path for _, path, _ in hub.requests)


def test_a_timeout_is_explained_in_one_line():
    # A Hub that never answers costs huggingface_hub 60 s per retry, too long for a test run; the
    # classification of its real timeout exceptions (raised bare, or as the cause of a cache miss) is checked here.
    import httpx2
    from huggingface_hub.errors import LocalEntryNotFoundError

    from ffncalc.hub import explain_hub_failure

    timeout = httpx2.ReadTimeout("timed out")
    message = str(explain_hub_failure(timeout, "acme/slow", None, None))
    assert message.startswith("acme/slow: the Hub (") and message.endswith(
        ") did not answer in time; try again, or check HF_ENDPOINT"
    )
    try:
        raise LocalEntryNotFoundError("not cached") from timeout
    except LocalEntryNotFoundError as cache_miss:
        assert str(explain_hub_failure(cache_miss, "acme/slow", None, None)) == message


def test_a_bundled_id_needs_no_network(tmp_path):
    run = run_ffncalc(
        "params", "meta-llama/Llama-3.1-8B", "--json", endpoint="http://127.0.0.1:9", home=tmp_path, HF_HUB_OFFLINE="1"
    )
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["source"] == "bundled"


def test_verify_reads_safetensors_headers_from_the_hub_with_range_requests(hub, tmp_path):
    run = run_ffncalc("verify", "acme/checkpoint", "--json", endpoint=hub.url, home=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    document = json.loads(run.stdout)
    assert document["ok"] is True
    assert document["stored_bytes_by_dtype"] == {"BF16": 2 * TINY_TOTAL}
    assert any(method == "GET" and path.endswith("/model.safetensors") for method, path, _ in hub.requests)


def test_verify_reads_every_shard_of_a_sharded_repo(hub, tmp_path):
    run = run_ffncalc("verify", "acme/sharded", "--json", endpoint=hub.url, home=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    document = json.loads(run.stdout)
    assert document["files"] == ["model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"]
    assert document["stored_elements"] == TINY_TOTAL


def test_verify_on_a_repo_without_safetensors(hub, tmp_path):
    repos_config = run_ffncalc("verify", "acme/tiny", endpoint=hub.url, home=tmp_path)
    assert repos_config.returncode == 2
    assert repos_config.stderr == (
        "Error: acme/tiny has neither model.safetensors nor model.safetensors.index.json; verify reads safetensors headers\n"
    )


# A Hub (or mirror) that misbehaves: each answer ends in one Error: line, and nothing is written outside HF_HOME.
HOSTILE = {
    "acme/etag-escape": FakeRepo(files={"config.json": CONFIG}, etag="../../../../escaped"),
    "acme/commit-escape": FakeRepo(files={"config.json": CONFIG}, commit="../../../../escaped"),
    "acme/redirect-loop": FakeRepo(files={"config.json": CONFIG}, redirect_loop=True),
    "acme/index-not-json": FakeRepo(files={"config.json": CONFIG, "model.safetensors.index.json": b"{not json"}),
    "acme/index-a-list": FakeRepo(files={"config.json": CONFIG, "model.safetensors.index.json": b"[1, 2]"}),
    "acme/missing-shard": FakeRepo(
        files={k: v for k, v in sharded_files().items() if k != "model-00002-of-00002.safetensors"}
    ),
}


@pytest.fixture
def hostile_hub():
    with FakeHub(HOSTILE) as server:
        yield server


def files_under(folder):
    return {path for path in folder.rglob("*")}


@pytest.mark.parametrize(
    "args, exit_code, message",
    [
        (("params", "acme/etag-escape"), 5, "unsafe ETag header '../../../../escaped'"),
        (("params", "acme/commit-escape"), 5, "unsafe X-Repo-Commit header '../../../../escaped'"),
        (("params", "acme/redirect-loop"), 5, "redirects in a loop"),
        (("verify", "acme/index-not-json"), 6, "model.safetensors.index.json is not JSON"),
        (("verify", "acme/index-a-list"), 6, "(or model.safetensors.index.json) is not laid out as the format says"),
        (("verify", "acme/missing-shard"), 6, "model-00002-of-00002.safetensors is missing"),
    ],
)
def test_a_misbehaving_hub_is_one_line_and_writes_nothing_outside_the_cache(
    hostile_hub, tmp_path, args, exit_code, message
):
    home = tmp_path / "hf-home"
    outside_before = files_under(tmp_path) - files_under(home) if home.exists() else files_under(tmp_path)
    run = run_ffncalc(*args, endpoint=hostile_hub.url, home=home, FFNCALC_HUB_DEADLINE="5")
    assert run.returncode == exit_code, run.stderr
    assert run.stdout == ""
    assert run.stderr.startswith("Error: ") and run.stderr.count("\n") == 1, run.stderr
    assert message in run.stderr
    outside_after = files_under(tmp_path) - (files_under(home) if home.exists() else set())
    assert outside_after - {home} == outside_before, "a file was written outside HF_HOME"


@pytest.mark.parametrize("token", ["", "hf_abc\nhf_def", "hf_a b"])
def test_a_token_that_cannot_be_sent_is_refused_before_the_hub_is_asked(hub, tmp_path, token):
    run = run_ffncalc("params", "acme/tiny", "--token", token, endpoint=hub.url, home=tmp_path)
    assert run.returncode == 5
    assert run.stderr.startswith("Error: --token ") and run.stderr.count("\n") == 1, run.stderr
    assert hub.requests == []


def test_verify_prints_no_progress_bar(hub, tmp_path):
    run = run_ffncalc("verify", "acme/sharded", endpoint=hub.url, home=tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stderr == ""


# huggingface_hub 2.4 parses HF_ENDPOINT when imported (constants.py: urlsplit(ENDPOINT).hostname) and prints
# "Error importing huggingface_hub.file_download: …" to stdout when that fails; its HTTP client refuses a port
# outside 0-65535. ffncalc reads the variable first.
UNUSABLE_ENDPOINTS = {
    "http://[::1": "HF_ENDPOINT is not a usable URL (Invalid IPv6 URL)",
    "http://localhost:99999": "HF_ENDPOINT is not a usable URL (Port out of range 0-65535)",
    "http://localhost:port": "HF_ENDPOINT is not a usable URL (Port could not be cast to integer value as 'port')",
    "http://:80": "HF_ENDPOINT names no host",
}


@pytest.mark.parametrize("endpoint", UNUSABLE_ENDPOINTS)
@pytest.mark.parametrize("command", (("params", "acme/not-bundled"), ("verify", "acme/not-bundled")))
def test_an_unusable_hf_endpoint_is_one_line_naming_it_and_nothing_on_stdout(tmp_path, endpoint, command):
    run = run_ffncalc(*command, endpoint=endpoint, home=tmp_path / "hf")
    assert run.returncode == 5
    assert run.stdout == ""
    assert run.stderr == (f"Error: {UNUSABLE_ENDPOINTS[endpoint]}, e.g. https://huggingface.co (got {endpoint!r})\n")


def test_a_bundled_model_is_counted_whatever_hf_endpoint_says(tmp_path):
    run = run_ffncalc("params", "meta-llama/Llama-3.1-8B", "--brief", endpoint="http://[::1", home=tmp_path / "hf")
    assert run.returncode == 0, run.stderr
    assert "8,030,261,248" in run.stdout  # Meta's published total for Llama 3.1 8B
