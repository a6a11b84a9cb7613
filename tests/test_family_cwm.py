"""Meta's CWM: Llama's layer without attention biases, three sliding layers to one full by default.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/defaults__cwm.json, synthetic__cwm.json).
"""

from ffncalc import account
from ffncalc.api import load_config


def test_cwm_default_model_by_hand(write_config):
    # CwmConfig(): H 6,144, SwiGLU 21,504, 64 layers of 48 query and 8 KV heads of 128, vocabulary 128,256, untied.
    hidden, vocab = 6144, 128256
    layer = 2 * hidden * 6144 + 2 * hidden * 1024 + 3 * hidden * 21504 + 2 * hidden
    report = account(str(write_config({"model_type": "cwm"})))
    assert report.total_params == 64 * layer + 2 * vocab * hidden + hidden == 32_581_097_472


def test_cwm_default_layers_attend_fully_every_fourth_layer_from_the_first(write_config):
    # CwmConfig.__post_init__: full_attention where i % 4 == 0, sliding_attention (8,192) elsewhere
    spec = load_config(str(write_config({"model_type": "cwm", "num_hidden_layers": 6}))).spec
    assert [layer.attention.window for layer in spec.layers] == [None, 8192, 8192, 8192, None, 8192]


def test_cwm_sliding_window_zero_turns_the_windows_off(write_config):
    # CwmConfig.__post_init__: int(sliding_window) if sliding_window else None
    spec = load_config(str(write_config({"model_type": "cwm", "num_hidden_layers": 2, "sliding_window": 0}))).spec
    assert [layer.attention.window for layer in spec.layers] == [None, None]
