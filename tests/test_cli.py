"""The command line as a whole: entry points, version, help, the models list, published schemas."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ffncalc import __version__, bundled_models
from ffncalc.json_schemas import JSON_DOCUMENTS
from ffncalc.source import presets

from .conftest import ROOT


@pytest.mark.parametrize(
    "command",
    [[str(Path(sys.executable).parent / "ffncalc")], [sys.executable, "-m", "ffncalc"]],
    ids=["console-script", "python-m"],
)
def test_installed_entry_points_run(command):
    run = subprocess.run([*command, "params", "meta-llama/Llama-3.1-8B", "--json"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout)["total_params"] == 8_030_261_248


@pytest.mark.parametrize(
    "command",
    [[str(Path(sys.executable).parent / "ffncalc")], [sys.executable, "-m", "ffncalc"]],
    ids=["console-script", "python-m"],
)
def test_the_entry_points_end_at_once_with_the_commands_exit_code_and_all_output(command, tmp_path):
    # The console script skips the interpreter's teardown (os._exit): the exit code and every line must survive it.
    refused = subprocess.run([*command, "params", str(tmp_path / "missing.json")], capture_output=True, text=True)
    assert refused.returncode == 2  # ConfigNotFoundError
    assert refused.stderr.startswith("Error: ") and refused.stderr.count("\n") == 1
    listed = subprocess.run([*command, "models", "--json"], capture_output=True, text=True)
    assert listed.returncode == 0
    assert len(json.loads(listed.stdout)) == len(bundled_models()) + len(presets())


def test_version(ffncalc):
    run = ffncalc("--version")
    assert run.exit_code == 0
    assert run.stdout == f"ffncalc {__version__}\n"


def test_help_lists_the_commands(ffncalc):
    run = ffncalc("--help")
    assert run.exit_code == 0
    assert "params" in run.stdout and "models" in run.stdout


def test_an_unknown_option_is_a_one_line_usage_error(ffncalc):
    run = ffncalc("params", "meta-llama/Llama-3.1-8B", "--jsn")
    assert run.exit_code == 2
    assert run.stdout == ""
    assert (
        run.stderr
        == "Error: No such option: --jsn (Possible options: --as, --json, --svg); see 'ffncalc params --help'\n"
    )


def test_a_bad_choice_is_a_one_line_usage_error(ffncalc):
    run = ffncalc("crossover", "--by", "watts")
    assert run.exit_code == 2
    assert (
        run.stderr
        == "Error: Invalid value for '--by': 'watts' is not one of 'flops', 'bytes'; see 'ffncalc crossover --help'\n"
    )


def test_a_missing_argument_is_a_one_line_usage_error(ffncalc):
    run = ffncalc("params")
    assert run.exit_code == 2
    assert run.stderr == "Error: Missing argument 'MODEL'; see 'ffncalc params --help'\n"


def test_models_lists_every_bundled_config_with_its_total(ffncalc):
    run = ffncalc("models", "--json")
    assert run.exit_code == 0
    rows = {row["model"]: row for row in run.json()}
    assert set(rows) == set(bundled_models()) | set(presets())
    # Llama-3.1-8B: published total (tests/reference/ground_truth.json); Mixtral-8x7B active: issue 2's figure
    assert rows["meta-llama/Llama-3.1-8B"]["total_params"] == 8_030_261_248
    assert rows["mistralai/Mixtral-8x7B-v0.1"]["active_params"] == 12_879_925_248
    assert rows["meta-llama/Llama-3.1-8B"]["active_params"] is None


@pytest.mark.parametrize("width", [80, 120])
def test_models_lists_one_line_per_model_that_fits_the_terminal(ffncalc, monkeypatch, width):
    monkeypatch.setenv("COLUMNS", str(width))
    run = ffncalc("models")
    assert run.exit_code == 0
    lines = run.stdout.splitlines()
    assert all(len(line) <= width for line in lines)
    rows = [" ".join(line.split()) for line in lines]
    # Llama-3.1-8B: 8,030,261,248 (Meta's card) → 8.03 B; Mixtral-8x7B 46,702,792,704 total, 12,879,925,248 active
    # per token (Mistral's announcement: 12.9B).
    # At 80 columns the family column gives way to the longest id (which is never cut).
    family = {"llama": "Llama ", "mixtral": "Mixtral "} if width == 120 else {"llama": "", "mixtral": ""}
    assert f"meta-llama/Llama-3.1-8B {family['llama']}8.03 B" in rows
    assert f"mistralai/Mixtral-8x7B-v0.1 {family['mixtral']}46.7 B 12.9 B" in rows
    listed = ffncalc("models", "--json").json()
    note = 4 if width == 80 else 2  # the note under the table wraps to 4 lines at 80 columns (it says why the family
    # column is left out), 2 at 120
    assert len(lines) == len(listed) + 5 + note  # title, blank, heading, rule, one line a model, blank, the note


def test_models_never_cuts_an_id_at_80_columns(ffncalc, monkeypatch):
    # An id is what the user types next: every bundled one appears whole, the longest (50 characters) included.
    monkeypatch.setenv("COLUMNS", "80")
    shown = ffncalc("models").stdout
    assert "…" not in shown
    assert all(row["model"] in shown for row in ffncalc("models", "--json").json())
    assert " context-labs/meta-llama-Llama-3.2-3B-Instruct-FP16 " in shown


def test_models_query_filters_by_name_family_or_model_type(ffncalc):
    names = [row["model"] for row in ffncalc("models", "qwen3-8b", "--json").json()]
    assert names == ["Qwen/Qwen3-8B"]
    by_family = ffncalc("models", "--family", "mixtral", "--json").json()
    assert [row["model"] for row in by_family] == ["mistralai/Mixtral-8x22B-v0.1", "mistralai/Mixtral-8x7B-v0.1"]


def test_models_piped_through_grep_keeps_the_figures_on_the_line(ffncalc):
    line = next(line for line in ffncalc("models").stdout.splitlines() if "Qwen3-8B" in line)
    assert line.split()[1:] == ["Qwen3", "8.19", "B"]  # Qwen3-8B: 8,190,735,360 (transformers' count)


def test_models_json_is_in_the_tables_order(ffncalc, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")
    table = [line.split()[0] for line in ffncalc("models").stdout.splitlines()[4:] if line.startswith(" ")]
    assert table == [row["model"] for row in ffncalc("models", "--json").json()]


def test_ffncalc_alone_prints_the_help(ffncalc):
    run = ffncalc()
    assert run.exit_code == 0
    assert run.stdout.startswith("Usage: ffncalc [OPTIONS] COMMAND [ARGS]...\n")
    assert "Error" not in run.stdout + run.stderr


def test_a_short_name_shared_by_two_bundled_models_lists_them(ffncalc):
    run = ffncalc("params", "mixtral")
    assert run.exit_code == 2  # ConfigNotFoundError: no config where the user pointed
    assert run.stderr == (
        "Error: 'mixtral' names 2 bundled models: mistralai/Mixtral-8x22B-v0.1, mistralai/Mixtral-8x7B-v0.1; name one\n"
    )


@pytest.mark.parametrize(
    ("typed", "taken"),
    [
        ("Mixtral-8x7B", "mistralai/Mixtral-8x7B-v0.1"),
        ("Llama-3-8B", "meta-llama/Meta-Llama-3-8B"),
        ("gemma3", "google/gemma-3-1b-it"),
    ],
)
def test_a_short_name_finds_the_one_bundled_model_it_names_and_says_so(ffncalc, typed, taken):
    run = ffncalc("params", typed, "--json")
    assert run.exit_code == 0
    assert run.json()["model"] == taken
    assert f"{typed!r} is taken as the bundled {taken} (the one bundled model of that name)" in run.json()["notes"]


def test_offline_an_unknown_short_name_suggests_the_base_model_not_a_network_failure(ffncalc, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    run = ffncalc("params", "Qwen3-30B-A3B-Instruct-2507")
    assert run.exit_code == 2
    assert run.stderr.startswith(
        "Error: 'Qwen3-30B-A3B-Instruct-2507' is not a bundled model (HF_HUB_OFFLINE is set, so the Hub was not "
        "asked); bundled and usable offline: Qwen/Qwen3-30B-A3B,"
    )
    assert run.stderr.endswith("(the base model: a variant's config may differ)\n")


def test_verify_of_a_bundled_id_offline_says_the_headers_are_needed(ffncalc, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    run = ffncalc("verify", "meta-llama/Llama-3.1-8B")
    assert run.exit_code == 6
    assert run.stderr == (
        "Error: meta-llama/Llama-3.1-8B: HF_HUB_OFFLINE is set, so the Hub's headers cannot be read; verify reads "
        "the checkpoint's safetensors headers, which the bundled config does not carry: verify a local folder "
        "holding the checkpoint, or go online\n"
    )


def test_crossover_warns_when_the_chosen_context_passes_the_models_limit(ffncalc):
    run = ffncalc("crossover", "meta-llama/Llama-3.1-8B", "--ctx", "2M", "--json")
    assert run.exit_code == 0
    # Llama-3.1-8B: max_position_embeddings 131,072; 2M = 2,097,152 tokens.
    assert run.stderr == (
        "Warning: context 2,097,152 exceeds this config's max_position_embeddings (131,072); the figures are "
        "computed anyway\n"
    )


def test_a_bundled_model_is_found_by_its_name_alone_and_in_any_case(ffncalc):
    assert ffncalc("params", "llama-3.1-8b", "--json").json()["model"] == "meta-llama/Llama-3.1-8B"
    assert ffncalc("params", "META-LLAMA/llama-3.1-8B", "--json").json()["total_params"] == 8_030_261_248


@pytest.mark.parametrize("name", sorted(JSON_DOCUMENTS))
def test_published_json_schemas_are_current(name):
    published = json.loads((ROOT / "schemas" / f"{name}.schema.json").read_text())
    assert published == JSON_DOCUMENTS[name](), "run python tools/write_schemas.py"


def test_params_json_validates_against_its_published_schema_fields(ffncalc):
    document = ffncalc("params", "deepseek-ai/DeepSeek-V3", "--json").json()
    schema = json.loads((ROOT / "schemas" / "params.schema.json").read_text())
    assert set(document) == set(schema["properties"])
    assert set(schema["required"]) <= set(document)


def test_the_library_imports_no_cli_or_hub_machinery():
    # `import ffncalc` is for scripts: typer, rich and huggingface_hub load only when needed.
    code = "import sys, ffncalc; print(sorted(m for m in ('typer', 'rich', 'click', 'huggingface_hub') if m in sys.modules))"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.stdout == "[]\n"


def test_a_bundled_model_loads_without_importing_huggingface_hub():
    code = (
        "import sys; sys.argv = ['ffncalc', 'params', 'meta-llama/Llama-3.1-8B', '--json']\n"
        "from ffncalc.cli import app\n"
        "try:\n    app()\nexcept SystemExit:\n    pass\n"
        "print('huggingface_hub' in sys.modules, file=sys.stderr)"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert run.stderr == "False\n"


ALL_MODELS = sorted(bundled_models()) + sorted(presets())


@pytest.mark.parametrize("model", ALL_MODELS)
def test_every_command_runs_on_every_bundled_model_and_preset(model):
    from .conftest import run_main

    for args in (
        ["params", model],
        ["flops", model, "--ctx", "512", "--mla", "absorbed"],  # 512: within every bundled model's context
        ["flops", model, "--ctx", "512", "--no-causal", "--json"],
        ["crossover", model, "--plot"],
        ["crossover", model, "--by", "bytes", "--dtype", "bf16", "--json"],
    ):
        run = run_main(*args)
        assert run.exit_code == 0, (args, run.stderr)
        assert run.stderr == ""


@pytest.mark.parametrize("model", [*bundled_models(), *presets()])
def test_speed_and_train_answer_for_every_bundled_model_and_preset(model):
    # a large model does not fit one H100: that is a warning (on stderr), never an error
    from ffncalc import load_config

    from .conftest import run_main

    encoder_only = not any(layer.stack == "decoder" for layer in load_config(model).spec.layers)
    if encoder_only:  # nothing to decode: speed says so in one line and names the command that counts a forward
        run = run_main("speed", model, "--ctx", "512", "--json")
        assert run.exit_code == 2 and "is encoder-only" in run.stderr and run.stdout == ""
    for args in (
        *([] if encoder_only else [["speed", model, "--ctx", "512", "--json"]]),
        ["train", model, "--tokens", "1T", "--seq", "512", "--json"],
    ):
        run = run_main(*args)
        assert run.exit_code == 0, (args, run.stderr)
        assert all(line.startswith("Warning: ") for line in run.stderr.splitlines()), run.stderr
        document = run.json()["reports"][0] if args[0] == "speed" else run.json()
        assert document["model"] == model or document["model"].endswith(model)


def test_the_python_api_has_a_function_for_every_command():
    import ffncalc

    # params, flops, crossover, memory, speed, train, verify, derive-dim, compare, models, models --families, config
    for name in (
        "account", "flops", "crossover", "memory", "speed", "train", "verify", "derive_dim", "compare",
        "list_bundled", "list_families", "export_config", "load_config",
    ):  # fmt: skip
        assert callable(getattr(ffncalc, name)), name
    llama = ffncalc.load_config("meta-llama/Llama-3.1-8B")
    # 32,768 × 8 tokens × 131,072 KV bytes + 16,060,522,496 weight bytes + the 939,524,096-byte activation buffer
    assert ffncalc.memory(llama, "32k", batch=8).total_inference == 32_768 * 8 * 131_072 + 16_060_522_496 + 939_524_096


def test_a_run_of_one_command_builds_that_command_alone():
    # Making the whole group reads all twelve commands' parameters; `ffncalc params …` needs only params.
    from ffncalc.cli.commands import _click_command, _invoked_command

    assert _invoked_command(["params", "meta-llama/Llama-3.1-8B", "--json"]) == "params"
    assert list(_click_command("params").commands) == ["params"]


def test_the_app_itself_is_built_whole_for_its_help_and_options():
    from ffncalc.cli.commands import _invoked_command

    assert _invoked_command(["--help"]) is None
    assert _invoked_command(["--version"]) is None
    assert _invoked_command(["not-a-command"]) is None  # the whole group says which commands exist


def test_a_short_name_that_only_ends_another_lineages_name_asks(ffncalc):
    # llama-8b ends DeepSeek-R1-Distill-Llama-8B, a distillation by another organisation; Llama-3.1-8B is as near by
    # spelling: the user is asked, not given the first.
    result = ffncalc("params", "llama-8b")
    assert result.exit_code != 0 and result.stdout == ""
    assert "deepseek-ai/DeepSeek-R1-Distill-Llama-8B" in result.stderr and "meta-llama/Llama-3.1-8B" in result.stderr


@pytest.mark.parametrize("command", ["params", "flops", "crossover", "memory", "speed", "train", "config", "derive-dim",
                                     "compare", "verify", "models"])  # fmt: skip
def test_no_command_declares_an_option_twice(command):
    # an option group (the source's or the answer's) and a command's own parameter must not both declare a flag
    from ffncalc.cli.commands import _click_command

    group = _click_command(command)
    declared = [name for param in group.commands[command].params for name in param.opts if name.startswith("--")]
    assert sorted(name for name in set(declared) if declared.count(name) > 1) == []
