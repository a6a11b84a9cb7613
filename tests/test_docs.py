"""Docs generated from the tool itself must match it: CI fails when they drift."""

import importlib.util

from .conftest import ROOT


def load_docs_tool():
    spec = importlib.util.spec_from_file_location("write_docs", ROOT / "tools" / "write_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_cli_reference_matches_help():
    expected = load_docs_tool().cli_reference()
    assert (ROOT / "docs" / "cli-reference.md").read_text() == expected, "run python tools/write_docs.py"


def test_readme_links_the_cli_reference_and_the_pictures():
    readme = (ROOT / "README.md").read_text()
    for target in (
        "docs/cli-reference.md",
        "docs/params-llama-3.1-8b.svg",
        "docs/crossover-128k.svg",
        "docs/compare.svg",
    ):
        assert target in readme
        assert (ROOT / target).is_file()


def test_readme_examples_are_real_current_output():
    readme = (ROOT / "README.md").read_text()
    assert load_docs_tool().readme_with_current_output(readme) == readme, "run python tools/write_docs.py"


def test_the_pictures_are_the_current_output():
    for name, svg in load_docs_tool().svg_pictures().items():
        assert (ROOT / "docs" / f"{name}.svg").read_text() == svg, f"docs/{name}.svg: run python tools/write_docs.py"


def test_every_command_has_help_and_a_section_in_the_reference():
    from ffncalc.cli import app

    reference = (ROOT / "docs" / "cli-reference.md").read_text()
    for command in app.registered_commands:
        name = command.name or command.callback.__name__.replace("_", "-")
        assert (command.callback.__doc__ or "").strip(), f"{name} has no help"
        assert f"## `ffncalc {name}`" in reference, name
