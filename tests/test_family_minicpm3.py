"""MiniCPM3: Llama's layer around DeepSeek-V2's multi-head latent attention.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/defaults__minicpm3.json, synthetic__minicpm3*.json).
"""

from ffncalc import account
from ffncalc.api import kv_bytes_per_token

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"


def test_minicpm3_default_model_by_hand(write_config):
    # MiniCPM3Config(): H 2,560, FFN 6,400, 62 layers of 40 heads, q latent 768, kv latent 256, nope 64 + rope 32,
    # v_head_dim 2,560 / 40 = 64, vocabulary 73,448, tied. Attention: q_a H × 768 and its RMSNorm, q_b 768 × 40 · 96,
    # kv_a H × (256 + 32), its RMSNorm of 256, kv_b 256 × 40 · (64 + 64), o 40 · 64 × H.
    hidden = 2560
    attention = hidden * 768 + 768 + 768 * 40 * 96 + hidden * 288 + 256 + 256 * 40 * 128 + 40 * 64 * hidden
    layer = attention + 3 * hidden * 6400 + 2 * hidden
    report = account(str(write_config({"model_type": "minicpm3"})))
    assert report.total_params == 62 * layer + 73448 * hidden + hidden == 4_073_875_968


def test_minicpm3_without_a_query_latent_projects_queries_directly():
    # q_lora_rank null: q_proj 64 × 4 · (16 + 8), no bias whatever attention_bias says; kv_a 64 × (32 + 8) and o
    # 4 · 12 × 64 carry the biases; kv_b 32 × 4 · (16 + 12) has none.
    (layer,) = account(str(CONFIGS / "synthetic__minicpm3_direct_queries.json")).layers
    assert layer.parts["attention.q"] == 64 * 4 * 24
    assert layer.parts["attention.kv_a"] == 64 * 40 + 40
    assert layer.parts["attention.kv_b"] == 32 * 4 * 28
    assert layer.parts["attention.o"] == 4 * 12 * 64 + 64


def test_minicpm3_caches_the_latent_and_the_rotary_key(write_config):
    # modular_minicpm3.py updates the cache with the kv latent (256) and the rotary key (32) before expanding them:
    # 62 layers × 288 values × 2 bytes (bfloat16) per token, not 40 heads' keys and values.
    assert kv_bytes_per_token(str(write_config({"model_type": "minicpm3"})), "bfloat16") == 62 * 288 * 2
