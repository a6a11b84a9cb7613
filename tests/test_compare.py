"""`ffncalc compare`: FFN choices side by side. Widths and ratios from tests/reference/README.md;
FFN shares come from the params engine, tested in test_params_llama31.py and test_bundled_totals.py."""

import csv
import io

from ffncalc.api import compare

REFERENCE = {  # (model, layers): (hidden, FFN width, width / hidden to 2 decimals)
    ("meta-llama/Llama-2-7b-hf", "all"): (4096, 11008, 2.69),
    ("meta-llama/Llama-3.1-8B", "all"): (4096, 14336, 3.5),
    ("mistralai/Mistral-7B-v0.1", "all"): (4096, 14336, 3.5),
    ("Qwen/Qwen3-8B", "all"): (4096, 12288, 3.0),
    ("Qwen/Qwen2.5-0.5B", "all"): (896, 4864, 5.43),
    ("google/gemma-2-9b", "all"): (3584, 14336, 4.0),
    ("deepseek-ai/DeepSeek-V3", "dense"): (7168, 18432, 2.57),
    ("deepseek-ai/DeepSeek-V3", "MoE"): (7168, 2048, 0.29),
}


def test_default_rows_are_the_reference_table():
    rows = compare()
    assert [(row.model, row.layers) for row in rows] == list(REFERENCE)
    for row in rows:
        hidden, width, ratio = REFERENCE[(row.model, row.layers)]
        assert (row.hidden_size, row.ffn_width, round(row.width_ratio, 2)) == (hidden, width, ratio)


def test_gating_and_activation():
    rows = {(row.model, row.layers): row for row in compare()}
    gemma = rows[("google/gemma-2-9b", "all")]
    assert (gemma.ffn_kind, gemma.gated, gemma.activation) == ("GeGLU", True, "gelu_pytorch_tanh")
    assert rows[("meta-llama/Llama-3.1-8B", "all")].ffn_kind == "SwiGLU"


def test_gpt2_is_a_plain_gelu_ffn_four_times_wide():
    (row,) = compare(["openai-community/gpt2"])
    assert (row.ffn_kind, row.gated, row.ffn_width, row.width_ratio) == ("GELU", False, 3072, 4.0)
    assert row.ffn_params_per_layer == 2 * 768 * 3072 + 3072 + 768  # c_fc and c_proj with biases


def test_deepseek_rows_show_experts_and_per_layer_ffn():
    rows = {row.layers: row for row in compare(["deepseek-ai/DeepSeek-V3"])}
    assert rows["dense"].ffn_params_per_layer == 3 * 7168 * 18432
    moe = rows["MoE"]
    assert (moe.num_experts, moe.experts_per_token, moe.shared_experts) == (256, 8, 1)
    assert moe.ffn_params_per_layer == 257 * 3 * 7168 * 2048 + 256 * 7168  # experts + router


def test_sort_by_a_column_and_descending():
    rows = compare(["meta-llama/Llama-3.1-8B", "Qwen/Qwen2.5-0.5B", "google/gemma-2-9b"], sort="-ffn_width")
    assert [row.ffn_width for row in rows] == [14336, 14336, 4864]
    rows = compare(["meta-llama/Llama-3.1-8B", "Qwen/Qwen2.5-0.5B"], sort="hidden_size")
    assert [row.hidden_size for row in rows] == [896, 4096]


def test_unknown_sort_column_is_a_one_line_error(ffncalc):
    run = ffncalc("compare", "--sort", "colour")
    assert run.exit_code == 2
    assert run.stderr.startswith(
        "Error: cannot sort by 'colour'; use a heading (active, total, ffn share …) or a field: model, family, layers,"
    )


def test_sort_accepts_the_headings_the_table_shows(ffncalc):
    by_heading = ffncalc("compare", "--sort", "-active", "--json").json()
    by_field = ffncalc("compare", "--sort", "-active_params", "--json").json()
    assert by_heading == by_field
    actives = [row["active_params"] for row in by_heading]
    assert actives == sorted(actives, reverse=True)


def test_table_shows_one_line_per_row(ffncalc, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    run = ffncalc("compare")
    assert run.exit_code == 0
    lines = [" ".join(line.split()) for line in run.stdout.splitlines()]
    # at 80 columns the table splits in parts, each repeating the model's name
    assert "Llama-3.1-8B 4,096 14,336 3.50 SwiGLU" in lines
    assert "Llama-3.1-8B 176,160,768 70.2% 16.7% 8.03 B" in lines
    # DeepSeek-V3's active count (37.6 B), and as cards quote it without the 129,280 × 7,168 input table (36.6 B)
    assert "DeepSeek-V3 (MoE) 37.6 B (36.6 B)" in lines


def test_csv_has_raw_exact_values(ffncalc):
    run = ffncalc("compare", "meta-llama/Llama-3.1-8B", "--format", "csv")
    assert run.exit_code == 0
    (row,) = list(csv.DictReader(io.StringIO(run.stdout)))
    assert row["ffn_width"] == "14336"
    assert row["ffn_params_per_layer"] == "176160768"
    assert row["total_params"] == "8030261248"
    assert row["width_ratio"] == "3.5"


def test_markdown_is_a_table_with_a_header_and_a_row_per_model(ffncalc):
    run = ffncalc("compare", "meta-llama/Llama-3.1-8B", "google/gemma-2-9b", "--format", "markdown")
    lines = run.stdout.splitlines()
    assert lines[0].startswith("| Model | Family | Layers | Hidden | FFN width |")
    assert lines[1].startswith("|---|---|---|---:|")
    assert lines[2].startswith("| meta-llama/Llama-3.1-8B | Llama | all | 4,096 | 14,336 | 3.50 |")
    assert len(lines) == 4


def test_json_is_a_list_of_rows(ffncalc):
    document = ffncalc("compare", "meta-llama/Llama-3.1-8B", "--json").json()
    assert document[0]["total_params"] == 8_030_261_248
    assert document == ffncalc("compare", "meta-llama/Llama-3.1-8B", "--format", "json").json()


def test_every_bundled_config_and_preset_compares(ffncalc):
    from ffncalc import bundled_models
    from ffncalc.source import presets

    models = sorted(bundled_models()) + sorted(presets())
    run = ffncalc("compare", *models, "--json")
    assert run.exit_code == 0, run.stderr
    assert {row["model"] for row in run.json()} == set(models)
