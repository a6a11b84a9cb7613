"""A family registers itself next to its class (@family / @tower); the index read from the source agrees."""

import importlib

import pytest

from ffncalc.families import registry


def test_every_registration_in_the_source_is_the_class_that_registers_when_imported():
    # The index is read from the modules' syntax trees without importing them; importing every module must register
    # exactly those classes (a decorator the scan could not read, or a class registered twice, would differ).
    scanned = registry.scan()
    for kind, entries in scanned.items():
        for model_type, target in entries.items():
            module, name = target.split(":")
            cls = getattr(importlib.import_module(f"ffncalc.families.{module}"), name)
            assert registry.is_registered(cls, model_type, kind), (kind, model_type, target)
    assert set(registry.registered) == {(kind, t) for kind, entries in scanned.items() for t in entries}


def test_a_new_family_module_is_found_without_any_other_edit(tmp_path):
    (tmp_path / "newfamily.py").write_text(
        'from .registry import family\n\n\n@family("newfamily", "newfamily_moe")\nclass NewConfig:\n    pass\n'
    )
    assert registry.scan(tmp_path)["families"] == {
        "newfamily": "newfamily:NewConfig",
        "newfamily_moe": "newfamily:NewConfig",
    }


def test_a_model_type_registered_twice_is_refused_when_the_index_is_read(tmp_path):
    (tmp_path / "a.py").write_text('@family("x")\nclass A:\n    pass\n')
    (tmp_path / "b.py").write_text('@family("x")\nclass B:\n    pass\n')
    with pytest.raises(ValueError, match="B registers 'x', already registered by a:A"):
        registry.scan(tmp_path)


def test_a_decorator_with_anything_but_string_literals_is_refused_naming_its_module(tmp_path):
    (tmp_path / "odd.py").write_text('@family("x", NAME)\nclass Odd:\n    pass\n')
    with pytest.raises(ValueError, match=r"odd\.py: @family on Odd takes model_types as string literals"):
        registry.scan(tmp_path)


def test_a_long_registration_may_span_lines(tmp_path):
    (tmp_path / "wide.py").write_text('@family(\n    "wide_a",\n    "wide_b",\n)\nclass Wide:\n    pass\n')
    assert registry.scan(tmp_path)["families"] == {"wide_a": "wide:Wide", "wide_b": "wide:Wide"}


def test_finding_one_model_type_agrees_with_the_whole_index():
    # lookup() reads the likeliest modules first and stops at the first registration; index() reads every module.
    for kind in ("families", "towers"):
        for model_type, target in registry.index(kind).items():
            assert registry.lookup(model_type, kind) == target, (kind, model_type)
    assert registry.lookup("no_such_model_type") is None


def test_a_declared_registration_is_indexed_by_its_model_types_alone(tmp_path):
    # The declaration's keyword arguments (transformers' class, the family's metadata) are not the index's: only
    # the string literals before them are model_types, on one line or as the formatter wraps the call.
    (tmp_path / "declared.py").write_text(
        '@family("one", transformers="OneConfig", routing=("k", "n"))\nclass One:\n    pass\n\n\n'
        '@family(\n    "two",\n    "two_moe",  # why\n    transformers="TwoConfig",\n    heads_divide_hidden=False,\n)\n'
        "class Two:\n    pass\n"
    )
    assert registry.scan(tmp_path)["families"] == {
        "one": "declared:One",
        "two": "declared:Two",
        "two_moe": "declared:Two",
    }
