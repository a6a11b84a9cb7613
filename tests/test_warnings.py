"""Warnings: what `params` warns about, every command warns about, one `Warning:` line each on stderr."""

from __future__ import annotations

import pytest

from tests.checkpoints import llama_tensors, write_checkpoint
from tests.conftest import ROOT, tiny_llama

UNGROUPED = (
    "Warning: num_attention_heads (4) is not a multiple of num_key_value_heads (3): transformers builds the "
    "projections, but attention cannot group the heads\n"
)

# Every command that reads a model, with the options it needs to answer.
MODEL_COMMANDS = (
    ("params",),
    ("flops",),
    ("crossover",),
    ("memory",),
    ("speed",),
    ("train",),
    ("config",),
    ("params", "--brief"),
    ("params", "--sweep", "num_hidden_layers=1,2"),
)


@pytest.mark.parametrize("command", MODEL_COMMANDS, ids=" ".join)
def test_every_model_command_prints_the_warning_params_prints(ffncalc, write_config, command):
    path = write_config(tiny_llama(num_key_value_heads=3, max_position_embeddings=8192))
    run = ffncalc(command[0], str(path), *command[1:])
    assert run.exit_code == 0
    assert run.stderr == UNGROUPED


def test_compare_prints_each_models_warning_under_its_name(ffncalc, write_config):
    path = write_config(tiny_llama(num_key_value_heads=3))
    run = ffncalc("compare", "meta-llama/Llama-3.1-8B", str(path))
    assert run.exit_code == 0
    assert run.stderr == UNGROUPED.replace("Warning: ", f"Warning: {path}: ")


@pytest.mark.parametrize("output", (("--json",), ("--format", "csv"), ("--format", "markdown")))
def test_compare_warns_in_every_output_format(ffncalc, write_config, output):
    path = write_config(tiny_llama(num_key_value_heads=3))
    run = ffncalc("compare", str(path), *output)
    assert run.exit_code == 0
    assert run.stderr == UNGROUPED.replace("Warning: ", f"Warning: {path}: ")


def test_derive_dim_of_a_model_prints_its_warning(ffncalc, write_config):
    run = ffncalc("derive-dim", "--model", str(write_config(tiny_llama(num_key_value_heads=3))))
    assert run.exit_code == 0
    assert run.stderr == UNGROUPED


def test_verify_prints_the_models_warning(ffncalc, tmp_path):
    config = tiny_llama(num_key_value_heads=3)
    folder = write_checkpoint(tmp_path / "model", config, llama_tensors(config))
    run = ffncalc("verify", str(folder))
    assert run.exit_code == 0
    assert run.stderr == UNGROUPED


def test_dbrx_with_more_kv_heads_than_heads_is_counted_with_a_warning(ffncalc, write_config):
    # transformers 5.24 on the meta device builds this DBRX (attn_config given rope_theta, which its
    # DbrxAttentionConfig lacks by default): Wqkv is [64 + 2 · 8 · 16, 64] = [320, 64], 111,936 parameters in all;
    # its attention then groups 4 // 8 = 0 query heads per KV head.
    config = {
        "model_type": "dbrx",
        "d_model": 64,
        "n_heads": 4,
        "n_layers": 2,
        "vocab_size": 100,
        "attn_config": {"kv_n_heads": 8},
        "ffn_config": {"ffn_hidden_size": 32, "moe_num_experts": 4, "moe_top_k": 2},
    }
    run = ffncalc("params", str(write_config(config)), "--json")
    assert run.exit_code == 0
    assert run.json()["total_params"] == 111_936
    assert run.stderr == (
        "Warning: n_heads (4) is not a multiple of attn_config.kv_n_heads (8): transformers builds the projections, "
        "but attention cannot group the heads\n"
    )


def test_falcon_with_more_kv_heads_than_heads_is_counted_with_a_warning(ffncalc, write_config):
    # transformers 5.24 on the meta device: query_key_value is [(8 · 2 + 4) · 16, 64] = [320, 64], 121,728
    # parameters in all; its _split_heads then views 4 // 8 + 2 = 2 heads per KV group, which cannot hold q, k, v.
    config = {
        "model_type": "falcon",
        "hidden_size": 64,
        "num_attention_heads": 4,
        "num_kv_heads": 8,
        "new_decoder_architecture": True,
        "num_hidden_layers": 2,
        "vocab_size": 100,
    }
    run = ffncalc("memory", str(write_config(config)), "--json")
    assert run.exit_code == 0
    assert run.stderr == (
        "Warning: num_attention_heads (4) is not a multiple of num_kv_heads (8): transformers builds the projections, "
        "but attention cannot group the heads\n"
    )
    assert ffncalc("params", str(write_config(config)), "--json").json()["total_params"] == 121_728


def test_falcon_without_the_new_architecture_reads_no_kv_heads_and_does_not_warn(ffncalc, write_config):
    # multi_query (the default): one KV head, whatever num_kv_heads says (modeling_falcon.py, transformers 5.24).
    config = {"model_type": "falcon", "hidden_size": 64, "num_attention_heads": 4, "num_kv_heads": 8,
              "num_hidden_layers": 2, "vocab_size": 100}  # fmt: skip
    run = ffncalc("params", str(write_config(config)))
    assert run.exit_code == 0
    assert run.stderr == ""


# --- --as: a config counted with another family's rules ------------------------------------------------------


def test_a_mamba_config_counted_as_llama_says_what_was_assumed_and_what_was_ignored(ffncalc):
    # state-spaces/mamba-130m-hf's config (bundled) has 35 keys; 4 are metadata (architectures, model_type,
    # torch_dtype, transformers_version). LlamaConfig names six of the rest as fields ffncalc reads (hidden_act,
    # hidden_size, intermediate_size, num_hidden_layers, pad_token_id, vocab_size); the other 25 (conv_kernel,
    # state_size, expand …) mean nothing to it, and it has no heads: LlamaConfig's default of 32 stands in.
    run = ffncalc("params", "state-spaces/mamba-130m-hf", "--as", "llama", "--json")
    assert run.exit_code == 0
    assert run.stderr == (
        "Warning: --as llama: the config does not give num_attention_heads; LlamaConfig's defaults were assumed "
        "(num_attention_heads = 32), and 25 of its keys are ignored: it may not be a llama config at all\n"
    )
    assert run.json()["notes"][0] == (
        "model_type 'mamba' counted with the rules of 'llama' (LlamaConfig) (--as): they read 6 (hidden_act, "
        "hidden_size, intermediate_size, num_hidden_layers, pad_token_id, vocab_size) of the config's keys and "
        "ignore 25 (bos_token_id, conv_kernel, d_inner, d_model, eos_token_id, expand, fused_add_norm, "
        "initializer_range and 17 more)."
    )
    assert run.json()["counted_as"] == "llama"


def test_a_wrapper_counted_as_its_text_model_warns_that_every_size_is_a_default(ffncalc):
    # Gemma 3's wrapper config keeps the language model under text_config; Gemma3TextConfig reads top-level keys,
    # of which the wrapper has none: every size is Gemma3TextConfig's default (transformers 5.24:
    # configuration_gemma3.py, vocab_size 262208, hidden_size 2304, … the 2B text model).
    run = ffncalc(
        "params", str(ROOT / "tests" / "configs" / "reconstructed__gemma-3-4b-it.json"), "--as", "gemma3_text"
    )
    assert run.exit_code == 0
    assert run.stderr.startswith(
        "Warning: --as gemma3_text: the config does not give vocab_size, hidden_size, num_attention_heads, "
        "num_hidden_layers, num_key_value_heads, head_dim, sliding_window, intermediate_size, "
        "sliding_window_pattern; Gemma3TextConfig's defaults were assumed (vocab_size = 262208, "
    )
    assert run.stderr.endswith("and 8 of its keys are ignored: it may not be a gemma3_text config at all\n")


def test_a_renamed_llama_counted_as_llama_is_noted_without_a_warning(ffncalc, write_config):
    config = tiny_llama(model_type="acme_llama", num_key_value_heads=2)
    run = ffncalc("params", str(write_config(config)), "--as", "llama", "--json")
    assert run.exit_code == 0
    assert run.stderr == ""
    assert run.json()["notes"][0] == (
        "model_type 'acme_llama' counted with the rules of 'llama' (LlamaConfig) (--as): they read 6 (vocab_size, "
        "hidden_size, intermediate_size, num_hidden_layers, num_attention_heads, num_key_value_heads) of the "
        "config's keys and ignore none."
    )
