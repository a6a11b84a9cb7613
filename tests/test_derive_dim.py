"""`ffncalc derive-dim`: Meta's FFN width rule, forwards and backwards.

h = 4·dim; h = int(2·h/3); h = int(multiplier·h) if any; h = multiple_of · ceil(h / multiple_of),
with Python float arithmetic as in Meta's llama/model.py. Figures: tests/reference/README.md.
"""

import pytest

from ffncalc.api import derive_dim


@pytest.mark.parametrize(
    "dim, multiplier, multiple_of, steps",
    [
        (4096, None, 256, [16384, 10922, 11008]),  # Llama-2-7B
        (4096, 1.3, 1024, [16384, 10922, 14198, 14336]),  # Llama-3-8B
        (8192, 1.3, 4096, [32768, 21845, 28398, 28672]),  # Llama-3-70B
        (16384, 1.2, 4096, [65536, 43690, 52428, 53248]),  # Llama-3.1-405B
    ],
    ids=["llama-2-7b", "llama-3-8b", "llama-3-70b", "llama-3.1-405b"],
)
def test_published_llama_widths_step_by_step(dim, multiplier, multiple_of, steps):
    derivation = derive_dim(dim, multiplier, multiple_of).derivation
    assert [step.value for step in derivation.steps] == steps
    assert derivation.intermediate_size == steps[-1]


def test_llama3_8b_width_is_the_same_with_the_default_multiple_of_256():
    assert derive_dim(4096, 1.3).derivation.intermediate_size == 14336


def test_float_truncation_is_meta_s_not_exact_arithmetic():
    # 1.4 · 2730 = 3822 exactly, but as floats 3821.9999999999995, which int() truncates to 3821.
    derivation = derive_dim(1024, 1.4, 1).derivation
    assert [step.value for step in derivation.steps] == [4096, 2730, 3821, 3821]
    assert derivation.steps[2].formula == "int(1.4 · 2730) = int(3821.9999999999995)"


def test_a_product_just_above_an_integer_is_unaffected():
    # 1.3 · 10922 = 14198.6 → 14198 whether in floats or exactly.
    assert derive_dim(4096, 1.3, 1).derivation.intermediate_size == 14198


def test_parameter_matched_width_and_how_far_above_it_llama3_is():
    derivation = derive_dim(4096, 1.3).derivation
    assert derivation.parameter_matched_width == 8 * 4096 / 3  # 10,922.67: 3·d·x = 8·d²
    assert round(100 * derivation.above_parameter_matched) == 31  # 14336 / 10922.67 = 1.3125
    assert derivation.ratio_to_dim == 3.5


def test_command_prints_the_four_steps_ending_in_14336(ffncalc):
    run = ffncalc("derive-dim", "--dim", "4096", "--mult", "1.3")
    assert run.exit_code == 0, run.stderr
    lines = [" ".join(line.split()) for line in run.stdout.splitlines()]
    assert "4 · dim 4 · 4096 16,384" in lines
    assert "two thirds (gated FFN) int(2 · 16384 / 3) 10,922" in lines
    assert "ffn_dim_multiplier int(1.3 · 10922) = int(14198.6) 14,198" in lines
    assert "round up to multiple_of 256 · ceil(14198 / 256) 14,336" in lines
    assert any("Llama 3 used 1024 (8B) and 4096 (70B, 405B)" in line for line in lines)


def test_backwards_lists_every_setting_that_reproduces_14336():
    settings = {(s.multiplier, s.multiple_of) for s in derive_dim(4096, target=14336).solve.settings}
    # by hand: int(m · 10922) rounded up must land in (13312, 14336] for multiple_of 1024, etc.
    assert (1.3, 256) in settings and (1.3, 1024) in settings
    assert (None, 256) not in settings
    assert all(multiplier is not None for multiplier, _ in settings)


def test_backwards_from_a_model_reads_its_hidden_and_ffn_width():
    solve = derive_dim(model="meta-llama/Llama-2-7b-hf").solve
    assert (solve.dim, solve.target) == (4096, 11008)
    assert (None, 256) in {(s.multiplier, s.multiple_of) for s in solve.settings}


def test_backwards_says_plainly_when_no_setting_fits(ffncalc):
    # Qwen2.5-0.5B: 896 → at most int(1.5 · 2389) = 3583, rounded up to 4096; 4,864 is out of reach.
    run = ffncalc("derive-dim", "--model", "Qwen/Qwen2.5-0.5B")
    assert run.exit_code == 0
    assert "No searched setting gives 4,864 from 896: it is 5.429 × hidden, not this rule." in " ".join(
        run.stdout.split()
    )


def test_qwen3_8b_is_three_times_hidden_and_only_large_roundings_reach_it():
    # 4096 → 10,922; rounding up to a multiple of 2048 or 4096 gives 12,288 = 3 × 4096.
    report = derive_dim(model="Qwen/Qwen3-8B")
    assert {s.multiple_of for s in report.solve.settings} <= {512, 1024, 2048, 4096}
    assert (None, 2048) in {(s.multiplier, s.multiple_of) for s in report.solve.settings}
    assert any("12,288 is exactly 3 × hidden" in note for note in report.notes)


def test_json_carries_steps_and_solve(ffncalc):
    document = ffncalc("derive-dim", "--dim", "4096", "--mult", "1.3", "--target", "14336", "--json").json()
    assert [step["value"] for step in document["derivation"]["steps"]] == [16384, 10922, 14198, 14336]
    assert {"multiplier": 1.3, "multiple_of": 256} in document["solve"]["settings"]


@pytest.mark.parametrize(
    "args, message",
    [
        (["--dim", "0"], "Error: --dim must be a whole number from 1 to 16,777,216 (got 0)\n"),
        (["--dim", "-4096"], "Error: --dim must be a whole number from 1 to 16,777,216 (got -4096)\n"),
        (["--dim", "4096", "--mult", "0"], "Error: --mult must be a number above 0 and at most 64 (got 0.0)\n"),
        (["--dim", "4096", "--mult", "-1.3"], "Error: --mult must be a number above 0 and at most 64 (got -1.3)\n"),
        (["--dim", "4096", "--mult", "nan"], "Error: --mult must be a number above 0 and at most 64 (got nan)\n"),
        (
            ["--dim", "4096", "--multiple-of", "0"],
            "Error: --multiple-of must be a whole number from 1 to 16,777,216 (got 0)\n",
        ),
        (["--dim", "4096", "--target", "0"], "Error: --target must be a whole number from 1 to 16,777,216 (got 0)\n"),
        ([], "Error: give --dim (with --mult, --multiple-of or --target) or --model\n"),
    ],
)
def test_bad_values_are_one_line_errors(ffncalc, args, message):
    run = ffncalc("derive-dim", *args)
    assert run.exit_code == 2
    assert run.stdout == ""
    assert run.stderr == message


def test_a_non_number_is_a_one_line_usage_error(ffncalc):
    run = ffncalc("derive-dim", "--dim", "abc")
    assert run.exit_code == 2
    assert run.stderr.startswith("Error: Invalid value for '--dim'")
    assert run.stderr.count("\n") == 1


def test_a_multiplier_that_rounds_the_width_to_zero_warns(ffncalc):
    # int(1e-300 · 10,922) = 0, and 256 · ceil(0 / 256) = 0: Meta's rule, followed, gives no FFN at all
    run = ffncalc("derive-dim", "--dim", "4096", "--mult", "1e-300", "--json")
    assert run.exit_code == 0
    assert run.json()["derivation"]["intermediate_size"] == 0
    assert run.stderr.startswith("Warning: ffn_dim_multiplier 1e-300 makes the FFN width 0")


def test_a_width_no_setting_reaches_says_so_in_its_first_line():
    # Meta's rule: int(2 · 4 · 4096 / 3) = 10,922, times a searched multiplier (none, 1 to 1.5 by 0.05), rounded
    # up to a multiple_of. 14,000 lies between 1.25 × 10,922 = 13,652 and 1.3 × 10,922 = 14,198: rounding 13,652 up
    # reaches 14,000 only for a multiple_of that divides 14,000 and exceeds 348 (none of 1 … 4,096 searched does:
    # 512 and 1,024 give 13,824 and 14,336).
    from .conftest import run_main

    run = run_main("derive-dim", "--dim", "4096", "--target", "14000")
    assert run.exit_code == 0
    assert run.stdout.splitlines()[0] == "No setting of Llama's rule gives 14,000 from dim 4,096 (3.42 × dim)"
