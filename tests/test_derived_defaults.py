"""A derived default is stated once, beside the code that computes it (``@derives(field, rule)``): the defaults
listing, --set's notes and ``resolved`` all read that one statement.

Each figure below is derived by hand from the rule transformers 5.24 applies, cited per test."""

import inspect

import pytest

from ffncalc.families import adapter_for, parse_config
from ffncalc.families.registry import index
from ffncalc.schema import HFConfig


def listed(config: HFConfig) -> dict[str, tuple[object, str | None]]:
    return {used.field: (used.value, used.rule) for used in config.defaults_used()}


def test_gpt2_lists_n_inner_left_out_as_four_times_n_embd():
    # configuration_gpt2.py: n_inner None; modeling_gpt2.py GPT2Block: inner_dim = 4 * hidden_size when None.
    config = parse_config({"model_type": "gpt2", "n_embd": 64, "n_head": 4}, "gpt2")
    assert listed(config)["n_inner"] == (4 * 64, "4 · n_embd")


def test_a_sentinel_asks_for_the_derivation_as_none_does():
    # configuration_mamba.py __post_init__: time_step_rank "auto" → ceil(hidden_size / 16); ceil(100 / 16) = 7.
    config = parse_config({"model_type": "mamba", "hidden_size": 100}, "mamba")
    assert listed(config)["time_step_rank"] == (7, "ceil(hidden_size / 16)")
    assert config.resolved("time_step_rank") == 7


def test_a_field_whose_default_is_a_number_is_listed_without_a_rule():
    # configuration_qwen2.py: num_key_value_heads defaults to 32; only an explicit null takes num_attention_heads.
    config = parse_config({"model_type": "qwen2", "num_attention_heads": 16}, "qwen2")
    assert listed(config)["num_key_value_heads"] == (32, None)
    assert config.resolved("num_key_value_heads") == 32


def test_an_explicit_null_takes_the_derived_value():
    # configuration_qwen2.py __post_init__: num_key_value_heads None → num_attention_heads (16 here).
    config = parse_config({"model_type": "qwen2", "num_attention_heads": 16, "num_key_value_heads": None}, "qwen2")
    assert config.resolved("num_key_value_heads") == 16
    assert config.kv_heads == 16


def test_a_subclass_restates_a_rule_its_family_words_differently():
    # configuration_plbart.py sets no num_labels: PreTrainedConfig's 2; BART's own classifier head defaults to 3.
    assert adapter_for("plbart").derived_defaults()["num_labels"] == "len(id2label), else 2"
    assert adapter_for("bart").derived_defaults()["num_labels"] == "len(id2label), else 3 (2 for mBART)"


def every_adapter() -> list[type[HFConfig]]:
    found = {adapter_for(model_type) for model_type in index()}
    found |= {adapter_for(model_type, "towers") for model_type in index("towers")}
    return sorted((adapter for adapter in found if adapter is not None), key=lambda adapter: adapter.__name__)


@pytest.mark.parametrize("adapter", every_adapter(), ids=lambda adapter: adapter.__name__)
def test_no_adapter_states_a_derived_default_outside_its_derives_mark(adapter):
    for klass in inspect.getmro(adapter):
        assert "resolved" not in vars(klass) or klass is HFConfig, f"{klass.__name__} overrides resolved()"
        assert "derived_defaults" not in vars(klass) or klass is HFConfig, f"{klass.__name__} sets derived_defaults"


def test_every_derived_default_of_a_default_model_resolves_to_a_value():
    # A rule listed for a field left out must compute something: the mark's attribute, not the field's None.
    unresolved = []
    for model_type in index():
        adapter = adapter_for(model_type)
        assert adapter is not None
        try:
            config = adapter.model_validate({"model_type": model_type})
        except ValueError:
            continue  # a family transformers cannot build from its defaults (refused with a reason elsewhere)
        for field in adapter.derived_defaults():
            if config.resolved(field) is None and field not in config.unused_fields():
                unresolved.append(f"{model_type}.{field}")
    assert unresolved == []
