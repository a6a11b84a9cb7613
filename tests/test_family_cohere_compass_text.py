"""Cohere Compass's language model: Cohere2's parallel layer, every layer full attention by default, rotary positions
configured per layer kind (rope_parameters), which transformers needs for each kind.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/synthetic__cohere_compass_text*.json) and refuses the default config
(defaults__cohere_compass_text.json: KeyError 'full_attention').
"""

import pytest

from ffncalc import account, flops
from ffncalc.errors import InvalidConfigError

from .conftest import ROOT

SYNTHETIC = str(ROOT / "tests" / "configs" / "synthetic__cohere_compass_text.json")
SLIDING = str(ROOT / "tests" / "configs" / "synthetic__cohere_compass_text_sliding_untied.json")


def test_cohere_compass_text_by_hand():
    # H 64, 3 layers of 4 heads and 2 KV heads of 16, a gated MLP of 96, one LayerNorm (no bias) a layer read by
    # both blocks, the final one; vocabulary 1,000 tied
    attention = 64 * 64 + 2 * 64 * 32 + 64 * 64
    total = 3 * (attention + 3 * 64 * 96 + 64) + 1000 * 64 + 64
    assert account(SYNTHETIC).total_params == total == 156_416


def test_every_layer_attends_to_the_whole_context_by_default():
    # no layer_types: all full attention (Cohere2 would make three in four sliding); 3 layers, 4 heads of 16, q·k and
    # p·v over 5,000 keys
    assert flops(SYNTHETIC, 5000).per_token.attention_scores == 3 * 2 * 2 * 64 * 5000


def test_sliding_layers_read_their_window():
    # three sliding layers of window 8 and one full layer, 4 heads of 12, at context 100
    assert flops(SLIDING, 100).per_token.attention_scores == 3 * 2 * 2 * 48 * 8 + 2 * 2 * 48 * 100


def test_a_config_without_rope_parameters_for_each_kind_is_refused(write_config):
    with pytest.raises(InvalidConfigError, match="rope_parameters: no entry for full_attention"):
        account(str(write_config({"model_type": "cohere_compass_text"})))
