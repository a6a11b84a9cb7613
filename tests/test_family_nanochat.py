"""nanochat: parameter-free RMSNorms everywhere, a plain relu² MLP.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/defaults__nanochat.json, synthetic__nanochat.json).
"""

from ffncalc import account


def test_nanochat_default_model_by_hand(write_config):
    # NanoChatConfig(): H 768, 12 layers of 6 heads of 128, fc1/fc2 8,192, vocabulary 50,304, untied; no norm
    # holds a weight (Llama4TextL2Norm-style RMSNorms), so a layer is 4 · H² + 2 · H · 8,192 and nothing else.
    hidden, vocab = 768, 50304
    report = account(str(write_config({"model_type": "nanochat"})))
    assert report.total_params == 12 * (4 * hidden * hidden + 2 * hidden * 8192) + 2 * vocab * hidden == 256_573_440
    assert report.components.norm == 0
