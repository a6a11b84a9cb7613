"""Granite-SWA and Granite-MoE-SWA: Granite's layers with attention sinks and sliding windows.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/defaults__granite_swa.json, defaults__granitemoe_swa.json, synthetic__granite*_swa.json).
"""

from ffncalc import account
from ffncalc.api import load_config
from ffncalc.tensors import checkpoint_tensors

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"


def test_granite_swa_default_model_by_hand(write_config):
    # GraniteSWAConfig(): H 2,560, FFN 8,192, 24 layers of 20 query and 4 KV heads of 128, vocabulary 100,352, tied.
    # A layer: q and o H², k and v H × 512, a sink logit per head (20), SwiGLU 3 · H · I, two RMSNorms.
    hidden = 2560
    layer = 2 * hidden * hidden + 2 * hidden * 512 + 20 + 3 * hidden * 8192 + 2 * hidden
    report = account(str(write_config({"model_type": "granite_swa"})))
    assert report.total_params == 24 * layer + 100352 * hidden + hidden == 2_144_463_840


def test_granite_swa_default_layers_attend_fully_where_i_mod_4_is_0(write_config):
    # layer_types default: full_attention for i % 4 == 0 (0, 4, …, 20), the other 18 within sliding_window 128.
    groups = {group.window: group.indices for group in account(str(write_config({"model_type": "granite_swa"}))).layers}
    assert groups[None] == [0, 4, 8, 12, 16, 20]
    assert len(groups[128]) == 18


def test_granitemoe_swa_stores_its_experts_stacked_under_their_own_names():
    # 6 experts of width 32 over hidden 64: gate_up_proj [6, 64, 64], down_proj [6, 64, 32]; the router [6, 64].
    stored = checkpoint_tensors(load_config(str(CONFIGS / "synthetic__granitemoe_swa.json")).spec)
    moe = "model.layers.0.block_sparse_moe."
    assert stored[moe + "experts.gate_up_proj"] == (6, 64, 64)
    assert stored[moe + "experts.down_proj"] == (6, 64, 32)
    assert stored[moe + "router.weight"] == (6, 64)
    assert stored["model.layers.0.self_attn.sinks"] == (4,)
