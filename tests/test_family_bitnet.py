"""BitNet b1.58: Llama's layer with an RMSNorm before o_proj and another before down_proj.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/defaults__bitnet.json, synthetic__bitnet.json).
"""

from ffncalc import account
from ffncalc.api import load_config

from .agreement import stored_tensors
from .conftest import ROOT


def test_bitnet_default_model_by_hand(write_config):
    # BitNetConfig(): H 2,560, relu² gated MLP 6,912, 30 layers of 20 query and 5 KV heads of 128, vocabulary
    # 128,256, untied. Norms a layer: two of H, attn_sub_norm of H, ffn_sub_norm of 6,912.
    hidden, ffn, vocab = 2560, 6912, 128256
    layer = 2 * hidden * hidden + 2 * hidden * 640 + 3 * hidden * ffn + 3 * hidden + ffn
    report = account(str(write_config({"model_type": "bitnet"})))
    assert report.total_params == 30 * layer + 2 * vocab * hidden + hidden == 2_741_155_840


def test_bitnet_sub_norms_are_stored_inside_attention_and_mlp():
    stored = stored_tensors(load_config(str(ROOT / "tests" / "configs" / "synthetic__bitnet.json")).spec)
    assert stored["model.layers.1.self_attn.attn_sub_norm.weight"] == (64,)
    assert stored["model.layers.1.mlp.ffn_sub_norm.weight"] == (96,)
