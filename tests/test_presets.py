"""Presets: models published without a config.json, in ffncalc's own format, beside the paper's figure."""

import json

import pytest

from ffncalc import account

from .conftest import ROOT

PRESETS = ROOT / "fixtures" / "presets"


def test_gpt3_175b_by_hand_and_beside_the_paper():
    # 96 layers of d = 12,288: attention 4·d² + 4·d biases, FFN 2·d·4d + 4d + d biases, 2 LayerNorms (4·d);
    # a tied 50,257 × d table, 2,048 learned positions, a final LayerNorm (2·d).
    d = 12288
    layer = 4 * d * d + 4 * d + 2 * d * 4 * d + 5 * d + 4 * d
    by_hand = 96 * layer + 50257 * d + 2048 * d + 2 * d
    report = account("gpt3-175b")
    assert report.total_params == by_hand == 174_604_259_328
    assert report.published_params == 175_000_000_000  # Brown et al. 2020, Table 2.1 ("175.0B", rounded)
    assert abs(report.total_params / report.published_params - 1) < 0.003


@pytest.mark.parametrize(
    "name, published",
    [
        ("gpt3-small", 125e6),
        ("gpt3-medium", 350e6),
        ("gpt3-large", 760e6),
        ("gpt3-xl", 1.3e9),
        ("gpt3-2.7b", 2.7e9),
        ("gpt3-6.7b", 6.7e9),
        ("gpt3-13b", 13.0e9),
    ],
)
def test_every_gpt3_size_rounds_to_the_papers_name(name, published):
    # Table 2.1's n_params are names rounded to 2-3 significant figures; the counts round to them within 3%.
    report = account(name)
    assert report.published_params == int(published)
    assert abs(report.total_params / published - 1) < 0.03


def test_gpt3_13b_attention_maps_between_d_model_and_heads_times_d_head():
    # Table 2.1: d_model 5,140 but 40 heads × 128 = 5,120.
    (group,) = account("gpt3-13b").layers
    assert group.parts["attention.q"] == 5140 * 5120 + 5120
    assert group.parts["attention.o"] == 5120 * 5140 + 5140


def test_transformer_row_c_sweep_steps_by_the_ffn_alone():
    # Table 3 row (C): d_ff 1024 → 53M, base (2048) → 65M, 4096 → 90M. Each 1,024 of d_ff adds, in each of the
    # 12 layers, 2 · 512 · 1,024 weights and 1,024 biases: 12,595,200 — the paper's steps of 12M and 25M.
    step = 12 * (2 * 512 * 1024 + 1024)
    small, base, large = (
        account(name).total_params
        for name in ("transformer-base-dff1024", "transformer-base", "transformer-base-dff4096")
    )
    assert base - small == step == 12_595_200
    assert large - base == 2 * step


def test_transformer_base_with_a_37000_token_shared_vocabulary():
    # Shared embedding 37,000 × 512 (also the pre-softmax matrix); 6 encoder layers (4·512² attention,
    # FFN 2·512·2048 + biases, 2 LayerNorms) and 6 decoder layers (with cross-attention, 3 LayerNorms).
    encoder = 4 * 512 * 512 + 2 * 512 * 2048 + 2048 + 512 + 2 * 1024
    decoder = 8 * 512 * 512 + 2 * 512 * 2048 + 2048 + 512 + 3 * 1024
    report = account("transformer-base")
    assert report.total_params == 37000 * 512 + 6 * encoder + 6 * decoder == 63_045_632
    assert report.published_params == 65_000_000


def test_params_table_shows_the_published_figure_beside_the_count(ffncalc):
    run = ffncalc("params", "gpt3-175b")
    text = " ".join(run.stdout.split())
    assert (
        "Published: 175,000,000,000 (Brown et al. 2020, Table 2.1); ffncalc counts 395,740,672 fewer (-0.23%)." in text
    )


def test_models_lists_the_presets(ffncalc):
    rows = {row["model"]: row for row in ffncalc("models", "--json").json()}
    assert rows["gpt3-175b"]["source"] == "preset"
    assert rows["meta-llama/Llama-3.1-8B"]["source"] == "bundled"


def test_a_preset_of_your_own_is_a_file(write_config):
    design = json.loads((PRESETS / "transformer-base.json").read_text()) | {"ffn_size": 1024, "published_params": None}
    assert account(str(write_config(design))).total_params == account("transformer-base-dff1024").total_params


def test_a_preset_with_a_bad_field_names_it(ffncalc, write_config):
    design = json.loads((PRESETS / "gpt3-small.json").read_text()) | {"layout": "diagonal"}
    run = ffncalc("params", str(write_config(design)))
    assert run.exit_code == 3
    assert "layout: must be 'decoder' or 'encoder-decoder'" in run.stderr
