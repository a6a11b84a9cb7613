"""Every bad input gives one `Error:` line on stderr, a non-zero exit, nothing on stdout, no traceback."""

import json

import pytest

from .conftest import tiny_llama


def assert_one_line_error(run, *fragments, exit_code):
    assert run.exit_code == exit_code
    assert run.stdout == ""
    assert run.stderr.startswith("Error: ")
    assert run.stderr.count("\n") == 1
    assert "Traceback" not in run.stderr
    for fragment in fragments:
        assert fragment in run.stderr


def test_nonexistent_path(ffncalc, tmp_path):
    run = ffncalc("params", str(tmp_path / "nothing.json"))
    assert_one_line_error(run, "nothing.json: no such file or folder", exit_code=2)


def test_folder_without_config_json(ffncalc, tmp_path):
    run = ffncalc("params", str(tmp_path))
    assert_one_line_error(run, "folder has no config.json", exit_code=2)


def test_folder_with_config_json_is_read(ffncalc, write_config):
    path = write_config(tiny_llama())
    run = ffncalc("params", str(path.parent), "--json")
    assert run.exit_code == 0
    # 1000·64 embeddings ×2 (untied) + 2 layers × (4·64·64 attention + 3·64·128 FFN + 2·64 norms) + 64
    assert run.json()["total_params"] == 2 * 64_000 + 2 * (16_384 + 24_576 + 128) + 64


def test_invalid_json(ffncalc, write_config):
    run = ffncalc("params", str(write_config('{"model_type": "llama",')))
    assert_one_line_error(run, "invalid JSON at line 1", exit_code=3)


def test_json_that_is_not_an_object(ffncalc, write_config):
    run = ffncalc("params", str(write_config("[1, 2, 3]")))
    assert_one_line_error(run, "the JSON is a list, not an object of config fields", exit_code=3)


def test_a_missing_field_takes_transformers_default_and_says_so(ffncalc, write_config):
    config = tiny_llama()
    del config["intermediate_size"]
    run = ffncalc("params", str(write_config(config)), "--json")
    assert run.exit_code == 0
    assert {"field": "intermediate_size", "value": 11008, "rule": None} in run.json()[
        "defaults_used"
    ]  # LlamaConfig's default


def test_missing_model_type(ffncalc, write_config):
    config = tiny_llama()
    del config["model_type"]
    run = ffncalc("params", str(write_config(config)))
    assert_one_line_error(run, "model_type: required field is missing", exit_code=3)


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("hidden_size", "64", 'hidden_size: must be a valid integer (got "64")'),
        ("num_hidden_layers", True, "num_hidden_layers: must be a valid integer (got true)"),
        ("intermediate_size", 128.0, "intermediate_size: must be a valid integer (got 128.0)"),
        ("tie_word_embeddings", "yes", 'tie_word_embeddings: must be a valid boolean (got "yes")'),
    ],
)
def test_wrong_type_names_the_field(ffncalc, write_config, field, value, message):
    run = ffncalc("params", str(write_config(tiny_llama(**{field: value}))))
    assert_one_line_error(run, message, exit_code=3)


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("hidden_size", 0, "hidden_size: must be greater than or equal to 1 (got 0)"),
        ("num_attention_heads", -4, "num_attention_heads: must be greater than or equal to 1 (got -4)"),
        ("vocab_size", 10**30, "vocab_size: must be less than or equal to 16777216"),
        ("num_hidden_layers", 10**6, "num_hidden_layers: must be less than or equal to 16384"),
    ],
)
def test_zero_negative_and_absurd_sizes_name_the_field(ffncalc, write_config, field, value, message):
    run = ffncalc("params", str(write_config(tiny_llama(**{field: value}))))
    assert_one_line_error(run, message, exit_code=3)


def test_nan_where_a_size_belongs_is_refused_naming_the_field(ffncalc, write_config):
    config = '{"model_type": "llama", "vocab_size": 1000, "hidden_size": NaN, "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4}'
    run = ffncalc("params", str(write_config(config)))
    assert_one_line_error(run, "hidden_size: must be a valid integer (got NaN)", exit_code=3)


def test_infinity_in_a_field_ffncalc_does_not_read_is_fine(ffncalc, write_config):
    # Nemotron-H's real config has "time_step_limit": [0.0, Infinity].
    config = json.dumps(tiny_llama()).replace("{", '{"time_step_limit": [0.0, Infinity], ', 1)
    assert ffncalc("params", str(write_config(config))).exit_code == 0


def test_heads_that_do_not_group_are_counted_as_transformers_builds_them_with_a_warning(ffncalc, write_config):
    # transformers builds k and v for 3 KV heads of 16 (LlamaConfig does not check the grouping).
    run = ffncalc("params", str(write_config(tiny_llama(num_key_value_heads=3))), "--json")
    assert run.exit_code == 0
    assert run.json()["layers"][0]["parts"]["attention.k"] == 64 * 3 * 16
    assert run.stderr == (
        "Warning: num_attention_heads (4) is not a multiple of num_key_value_heads (3): transformers builds the "
        "projections, but attention cannot group the heads\n"
    )


def test_more_experts_per_token_than_experts_is_counted_with_every_expert_active_and_a_warning(ffncalc, write_config):
    # transformers 5.24 builds MixtralForCausalLM with top-k 3 of 2 experts (its router fails on the first token)
    config = tiny_llama(model_type="mixtral", num_local_experts=2, num_experts_per_tok=3, num_key_value_heads=2)
    run = ffncalc("params", str(write_config(config)), "--json")
    assert run.exit_code == 0
    assert run.json()["active_params"] == run.json()["total_params"]  # both experts of both layers, and the rest
    assert run.stderr == (
        "Warning: num_experts_per_tok (3) exceeds num_local_experts (2): transformers builds the model, "
        "but cannot route a token; active parameters count every expert\n"
    )


def test_an_unknown_model_type_names_the_closest_known_ones_and_the_way_on(ffncalc, write_config):
    run = ffncalc("params", str(write_config({"model_type": "qwen3_moee", "architectures": ["Qwen3MoeForCausalLM"]})))
    assert_one_line_error(
        run,
        "model_type 'qwen3_moee' is not supported; closest known: qwen3_moe",
        "`ffncalc models --families`",
        "--as MODEL_TYPE",
        exit_code=4,
    )


def test_non_utf8_bytes(ffncalc, write_config):
    run = ffncalc("params", str(write_config(b"\xff\xfe{")))
    assert_one_line_error(run, "not UTF-8 text", exit_code=3)


def test_a_file_too_large_for_a_config_is_refused_before_parsing(ffncalc, write_config):
    run = ffncalc("params", str(write_config(b" " * (5 * 1024 * 1024))))
    assert_one_line_error(run, "5,242,880 bytes is too large for a config.json", exit_code=3)


def test_something_that_is_neither_path_nor_hub_id(ffncalc):
    run = ffncalc("params", "not a model!")
    assert_one_line_error(run, "is neither an existing path, a bundled model", exit_code=2)


def test_debug_variable_shows_the_traceback(ffncalc, monkeypatch, tmp_path):
    monkeypatch.setattr("sys.argv", ["ffncalc", "params", str(tmp_path / "x.json")])
    monkeypatch.setenv("FFNCALC_DEBUG", "1")
    from ffncalc.cli import main
    from ffncalc.errors import ConfigNotFoundError

    with pytest.raises(ConfigNotFoundError):
        main()


def test_an_unknown_custom_code_architecture_says_its_code_was_not_run(ffncalc, write_config):
    config = {"model_type": "hunyuan_x", "auto_map": {"AutoModelForCausalLM": "modeling_hunyuan.Model"}}
    run = ffncalc("params", str(write_config(config)))
    assert_one_line_error(
        run, "model_type 'hunyuan_x' (a custom-code architecture; its code was not run) is not supported", exit_code=4
    )
