"""IQuestCoder: a Llama with its own defaults; transformers builds LlamaForCausalLM.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/defaults__iquestcoder.json, synthetic__iquestcoder.json).
"""

import pytest

from ffncalc import account
from ffncalc.errors import InvalidConfigError


def test_iquestcoder_default_model_by_hand(write_config):
    # IQuestCoderConfig(): H 5,120, SwiGLU 27,648, 80 layers of 40 query and 8 KV heads of 128, vocabulary 76,800.
    hidden, vocab = 5120, 76800
    layer = 2 * hidden * 5120 + 2 * hidden * 1024 + 3 * hidden * 27648 + 2 * hidden
    report = account(str(write_config({"model_type": "iquestcoder"})))
    assert report.total_params == 80 * layer + 2 * vocab * hidden + hidden == 39_794_283_520


@pytest.mark.parametrize(("key", "value"), [("clip_qkv", 8.0), ("use_sliding_window", True)])
def test_iquestcoder_remote_code_options_are_refused_as_transformers_refuses(write_config, key, value):
    with pytest.raises(InvalidConfigError, match=key):
        account(str(write_config({"model_type": "iquestcoder", key: value})))
