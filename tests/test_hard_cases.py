"""The cases random configs rarely reach, generated on purpose: several distinct finite windows, Mamba-2 groups,
heads whose width is not hidden / heads, and every hybrid block pattern through every command.

Expected figures are closed-form derivations written here (the crossover's defining equation, a layer's
matrices from the config's numbers), not ffncalc's output.
"""

import math
import os
from fractions import Fraction

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ffncalc import count_params, load_spec
from ffncalc.compute import ContextProfile, crossover_context, plateau

from .conftest import run_main

SETTINGS = settings(
    max_examples=int(os.environ.get("FFNCALC_EXAMPLES", "100")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
DOCUMENTED = {0, 1, 2, 3, 4, 5, 6, 74}


def growing(slopes, cross, n) -> int:
    """Σ slope · min(n, window) + cross · n: the attention cost that grows with the context, written out."""
    return sum(value * (n if window is None else min(n, window)) for window, value in slopes) + cross * n


profiles = st.builds(
    lambda windows, ffn, cross: ContextProfile(
        attention_projections=0,
        ffn=ffn,
        lm_head=0,
        slopes=tuple(sorted(windows.items(), key=lambda w: (w[0] is None, w[0] or 0))),
        cross=cross,
    ),
    windows=st.dictionaries(
        st.one_of(st.none(), st.integers(1, 1 << 20)), st.integers(1, 1 << 30), min_size=2, max_size=5
    ),
    ffn=st.integers(0, 1 << 40),
    cross=st.sampled_from([0, 0, 7]),
)


@SETTINGS
@given(profiles)
def test_the_crossover_solves_its_equation_with_several_finite_windows(profile):
    n = crossover_context(profile)
    if n is None:
        # attention never reaches the FFN: every layer levels off below it
        level = plateau(profile)
        assert level is not None and level < profile.ffn
        return
    # exactly the FFN at n* (the pieces are linear: a Fraction on the piece), and below it just before
    value = sum(v * (n if w is None else min(n, Fraction(w))) for w, v in profile.slopes) + profile.cross * n
    assert value == profile.ffn or (n == 0 and profile.ffn == 0)
    if n > 0:  # the last whole context before n* is still below the FFN
        assert growing(profile.slopes, profile.cross, math.ceil(n) - 1) < profile.ffn


@st.composite
def llama_with_a_head_width_of_its_own(draw):
    """Llama with head_dim ≠ hidden_size / heads: q and o are heads · head_dim wide, k and v kv_heads · head_dim."""
    kv_heads = draw(st.integers(1, 4))
    heads = kv_heads * draw(st.integers(1, 4))
    head_dim = draw(st.integers(1, 64))
    hidden = draw(st.integers(1, 256).filter(lambda h: h != heads * head_dim))
    return {
        "model_type": "llama", "vocab_size": draw(st.integers(1, 1000)), "hidden_size": hidden * heads,
        "intermediate_size": draw(st.integers(1, 300)), "num_hidden_layers": draw(st.integers(1, 4)),
        "num_attention_heads": heads, "num_key_value_heads": kv_heads, "head_dim": head_dim, "tie_word_embeddings": False,
    }  # fmt: skip


@SETTINGS
@given(llama_with_a_head_width_of_its_own())
def test_heads_wider_or_narrower_than_hidden_over_heads_are_counted_from_head_dim(config):
    h, heads, kv, d = (
        config["hidden_size"],
        config["num_attention_heads"],
        config["num_key_value_heads"],
        config["head_dim"],
    )
    layer = h * heads * d * 2 + 2 * h * kv * d + 3 * h * config["intermediate_size"] + 2 * h
    expected = config["num_hidden_layers"] * layer + 2 * config["vocab_size"] * h + h
    assert count_params(load_spec(config, "generated")).total_params == expected


@st.composite
def nemotron_h_with_groups(draw):
    """Nemotron-H with Mamba-2 groups > 1 and any block pattern (M Mamba-2, * attention, - MLP, E MoE)."""
    groups = draw(st.integers(2, 4))
    experts = draw(st.integers(1, 6))
    return {
        "model_type": "nemotron_h", "vocab_size": draw(st.integers(1, 500)), "hidden_size": 32, "intermediate_size": 48,
        "num_attention_heads": 4, "num_key_value_heads": 2, "head_dim": 8,
        "hybrid_override_pattern": draw(st.text(alphabet="M*-E", min_size=1, max_size=8)),
        "mamba_num_heads": groups * draw(st.integers(1, 3)), "mamba_head_dim": draw(st.integers(1, 8)), "n_groups": groups,
        "ssm_state_size": draw(st.integers(1, 16)), "n_routed_experts": experts,
        "num_experts_per_tok": draw(st.integers(1, experts)), "moe_intermediate_size": draw(st.integers(1, 32)),
        "moe_shared_expert_intermediate_size": draw(st.integers(1, 32)),
    }  # fmt: skip


@SETTINGS
@given(config=nemotron_h_with_groups())
def test_every_hybrid_pattern_with_groups_answers_every_command(config, write_config):
    path = str(write_config(config))
    for args in (
        ["params", path, "--json"],
        ["flops", path, "--ctx", "3000", "--json"],
        ["crossover", path, "--json"],
        ["crossover", path, "--by", "bytes", "--dtype", "bf16", "--json"],
        ["memory", path, "--batch", "3", "--json"],
        ["compare", path, "--json"],
        ["derive-dim", "--model", path, "--json"],
    ):
        run = run_main(*args)
        assert run.exit_code == 0, (args, run.stderr)
        assert "Error" not in run.stderr
    # in_proj of one Mamba-2 layer: z and x (inner each), B and C (groups · state each), dt (heads)
    heads, head_dim, groups, state = (
        config["mamba_num_heads"],
        config["mamba_head_dim"],
        config["n_groups"],
        config["ssm_state_size"],
    )
    inner = heads * head_dim
    if "M" in config["hybrid_override_pattern"]:
        report = run_main("params", path, "--json").json()
        (mamba,) = [group for group in report["layers"] if group["attention_kind"] == "mamba2"]
        assert mamba["parts"]["mixer.in_proj"] == 32 * (2 * inner + 2 * groups * state + heads)
