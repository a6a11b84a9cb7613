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
    # published totals (../shared/reference): Llama-3.1-8B; Mixtral-8x7B total and active (issue 2)
    assert rows["meta-llama/Llama-3.1-8B"]["total_params"] == 8_030_261_248
    assert rows["mistralai/Mixtral-8x7B-v0.1"]["active_params"] == 12_879_925_248
    assert rows["meta-llama/Llama-3.1-8B"]["active_params"] is None


def test_models_table_has_a_row_per_bundled_config(ffncalc, monkeypatch):
    monkeypatch.setenv("COLUMNS", "160")  # wide enough for the whole table (narrower ones split it)
    run = ffncalc("models")
    assert run.exit_code == 0
    lines = [" ".join(line.split()) for line in run.stdout.splitlines()]
    assert "meta-llama/Llama-3.1-8B Llama 8,030,261,248" in lines
    # cards' way leaves out the input table: 12,879,925,248 − 32,000 × 4,096 = 12,748,853,248
    assert "mistralai/Mixtral-8x7B-v0.1 Mixtral 46,702,792,704 12,879,925,248 12,748,853,248" in lines


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
