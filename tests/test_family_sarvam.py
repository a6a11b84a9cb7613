"""Sarvam's models, which transformers builds with another family's classes: sarvam_mla (DeepSeek-V3's) and
sarvam_moe (GLM-4.5's).

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/defaults__sarvam_*.json, synthetic__sarvam_*.json).
"""

from ffncalc import account
from ffncalc.api import load_config
from ffncalc.tensors import checkpoint_tensors

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"


def test_sarvam_mla_default_model_by_hand(write_config):
    # SarvamMLAConfig(): H 4,096, 32 layers of 64 heads, queries without a latent (q_proj H × 64 · (128 + 64)), kv
    # latent 512 (kv_a H × (512 + 64), its RMSNorm, kv_b 512 × 64 · (128 + 128)), o 64 · 128 × H; layer 0 a dense
    # SwiGLU of 16,384, then 31 MoE layers: router 128 × H, 128 experts and one shared MLP of 3 · H · 2,048; two
    # RMSNorms a layer; vocabulary 262,144, untied.
    hidden = 4096
    attention = hidden * 64 * 192 + hidden * 576 + 512 + 512 * 64 * 256 + 64 * 128 * hidden
    moe = 128 * hidden + 129 * 3 * hidden * 2048
    total = 32 * (attention + 2 * hidden) + 3 * hidden * 16384 + 31 * moe + 2 * 262144 * hidden + hidden
    assert account(str(write_config({"model_type": "sarvam_mla"}))).total_params == total == 106_031_763_456


def test_sarvam_mla_reads_the_remote_code_names_of_its_experts():
    # num_experts 8, num_shared_experts 2 (a shared MLP 2 × 16 wide), 2 experts a token, over 2 MoE layers.
    report = account(str(CONFIGS / "synthetic__sarvam_mla.json"))
    assert report.moe.routed_expert_params == 2 * 8 * 3 * 64 * 16
    assert report.total_params - report.active_params == 2 * 6 * 3 * 64 * 16


def test_sarvam_moe_default_model_by_hand(write_config):
    # SarvamMoEConfig(): H 4,096, 19 layers of 64 query heads and 4 KV heads of 64 (q and o H × 4,096, k and v
    # H × 256), per-head q/k RMSNorms (64 each); layer 0 a dense SwiGLU of 8,192, then 18 MoE layers: router 128 × H,
    # 128 experts and one shared MLP of 3 · H · 1,024; two RMSNorms a layer; vocabulary 262,144, untied.
    hidden = 4096
    attention = 2 * hidden * 4096 + 2 * hidden * 256 + 2 * 64
    moe = 128 * hidden + 129 * 3 * hidden * 1024
    total = 19 * (attention + 2 * hidden) + 3 * hidden * 8192 + 18 * moe + 2 * 262144 * hidden + hidden
    assert account(str(write_config({"model_type": "sarvam_moe"}))).total_params == total == 32_152_648_064


def test_sarvam_moe_keeps_the_remote_code_names_of_its_checkpoints():
    # q (4 heads of 24), k and v (2 heads of 24) fused in query_key_value with its biases (use_qkv_bias): 96 + 48 + 48.
    stored = checkpoint_tensors(load_config(str(CONFIGS / "synthetic__sarvam_moe.json")).spec)
    attention = "model.layers.1.attention."
    assert stored[attention + "query_key_value.weight"] == (192, 64)
    assert stored[attention + "query_key_value.bias"] == (192,)
    assert {attention + "dense.weight", attention + "query_layernorm.weight"} <= set(stored)
    assert "model.word_embeddings.weight" in stored
