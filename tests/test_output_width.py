"""Every command's tables fit the terminal and never cut a value, at 60, 80 and 120 columns and in a pipe.

The values that must appear whole come from the same command's --json (exact integers, formatted
with thousands separators as the tables print them).
"""

import re

import pytest

from .conftest import run_main

WIDTHS = [60, 80, 120]
CUT = re.compile(r"…|\.\.\.")


def printed(monkeypatch, width, *args):
    monkeypatch.setenv("COLUMNS", str(width))
    monkeypatch.setenv("NO_COLOR", "1")
    run = run_main(*args)
    assert run.exit_code == 0, run.stderr
    return run.stdout


def assert_fits(text, width):
    for line in text.splitlines():
        assert len(line) <= width, line
        assert line == line.rstrip(), f"trailing spaces: {line!r}"
        assert not CUT.search(line), line


def document(monkeypatch, *args):
    monkeypatch.setenv("COLUMNS", "200")
    run = run_main(*args, "--json")
    assert run.exit_code == 0, run.stderr
    return run.json()


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize(
    "model",
    ["mistralai/Mixtral-8x7B-v0.1", "deepseek-ai/DeepSeek-V3", "nvidia/Nemotron-H-56B-Base-8K", "google-t5/t5-small"],
)
def test_params_fits_and_shows_every_count_whole(monkeypatch, width, model):
    text = printed(monkeypatch, width, "params", model)
    assert_fits(text, width)
    report = document(monkeypatch, "params", model)
    numbers = [report["total_params"]] + [v for v in report["components"].values() if v]
    numbers += [group["params"] for group in report["layers"]] + list(report["outside_layers"].values())
    numbers += [v for group in report["layers"] for v in group["parts"].values()]
    for number in numbers:
        assert f"{number:,}" in text, number


@pytest.mark.parametrize("width", WIDTHS)
def test_flops_fits_and_shows_every_count_whole(monkeypatch, width):
    text = printed(monkeypatch, width, "flops", "meta-llama/Llama-3.1-8B", "--ctx", "128k")
    assert_fits(text, width)
    report = document(monkeypatch, "flops", "meta-llama/Llama-3.1-8B", "--ctx", "128k")
    for part in ("per_token", "prefill"):
        for value in report[part].values():
            if value:
                assert f"{value:,}" in text, (part, value)


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize(
    "args", [("--ctx", "128k"), ("--ctx", "1M", "--plot"), ("nvidia/Nemotron-H-56B-Base-8K", "--plot")]
)
def test_crossover_fits_every_width(monkeypatch, width, args):
    text = printed(monkeypatch, width, "crossover", *args)
    assert_fits(text, width)
    assert "n* " in text


@pytest.mark.parametrize("width", WIDTHS)
def test_compare_fits_and_never_breaks_a_model_name(monkeypatch, width):
    text = printed(monkeypatch, width, "compare")
    assert_fits(text, width)
    for name in ("Llama-2-7b-hf", "Mistral-7B-v0.1", "DeepSeek-V3 (MoE)"):
        assert name in text


@pytest.mark.parametrize("width", WIDTHS)
def test_models_fits_every_width_with_every_id_whole(monkeypatch, width):
    # An id is what the user types next: never cut. Where one does not fit beside its figures, the figures go on
    # the line under it.
    from ffncalc.render import approx_params

    text = printed(monkeypatch, width, "models")
    lines = text.splitlines()
    longest = max(len(row["model"]) for row in document(monkeypatch, "models"))
    assert all(len(line) <= max(width, longest + 1) for line in lines)
    for row in document(monkeypatch, "models"):
        name = row["model"]
        at = next(i for i, line in enumerate(lines) if name in line.split())
        assert approx_params(row["total_params"]) in " ".join(lines[at : at + 2]), name


@pytest.mark.parametrize("width", WIDTHS)
def test_derive_dim_fits_every_width(monkeypatch, width):
    text = printed(monkeypatch, width, "derive-dim", "--dim", "4096", "--mult", "1.3")
    assert_fits(text, width)
    assert "14,336" in text


def test_titles_wrap_at_the_terminal_not_at_a_table(monkeypatch):
    # At 120 columns the Mixtral title (79 characters) stays on one line although its first table is narrower.
    text = printed(monkeypatch, 120, "params", "mistralai/Mixtral-8x7B-v0.1")
    assert text.splitlines()[0] == "mistralai/Mixtral-8x7B-v0.1 — Mixtral (mixtral, as MixtralForCausalLM), 32 layers"


def test_compare_labels_two_configs_of_the_same_file_name_by_their_folder(monkeypatch, tmp_path, write_config):
    from .conftest import tiny_llama

    first = write_config(tiny_llama(), "alpha")
    second = write_config(tiny_llama(hidden_size=128), "beta")
    text = printed(monkeypatch, 120, "compare", str(first), str(second))
    assert "alpha" in text and "beta" in text
