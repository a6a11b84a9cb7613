"""LongCat-Flash: a layer holds two MLA blocks with an MLP each, and a shortcut MoE beside the first MLP whose
router may also pick zero experts (identity experts that hold and cost nothing).

Every expected figure is derived by hand from the config's numbers, or from transformers' own count with the
weights it allocates for zero experts (which never run) taken out by hand.
"""

import json
from pathlib import Path

from ffncalc import account, flops, load_config
from ffncalc.api import memory
from ffncalc.tensors import checkpoint_tensors

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"
LONGCAT = str(CONFIGS / "synthetic__longcat_flash.json")

# synthetic__longcat_flash: hidden 64, 3 layers, 4 heads; MLA with a query latent of 32, a KV latent of 16, heads
# of 16 + 8 (nope + rope) for queries and keys and 12 for values, attention_bias (q_a, kv_a, o); MLPs of 96;
# 6 experts of 24, 2 per token.
H = 64
MLA = (
    (H * 32 + 32) + 32 * 4 * 24 + (H * (16 + 8) + 24) + 16 * 4 * (16 + 12) + (4 * 12 * H + H)
)  # q_a, q_b, kv_a, kv_b, o
MLA_NORMS = 32 + 16
MLP = 3 * H * 96
EXPERT = 3 * H * 24
BLOCK = MLA + MLA_NORMS + MLP + 2 * H  # one attention block, its MLP and its two norms


def test_a_layer_holds_two_attention_blocks_two_mlps_and_the_moe():
    names = checkpoint_tensors(load_config(LONGCAT).spec)
    layer = {name.removeprefix("model.layers.1.") for name in names if name.startswith("model.layers.1.")}
    assert {
        "self_attn.0.q_a_proj.weight",
        "self_attn.1.q_a_proj.weight",
        "mlps.0.up_proj.weight",
        "mlps.1.up_proj.weight",
        "input_layernorm.1.weight",
        "mlp.router.classifier.weight",
        "mlp.experts.5.down_proj.weight",
    } <= layer
    assert not any(name.startswith("model.layers.3.") for name in names)  # 3 layers: 0, 1, 2
    total = 3 * (2 * BLOCK + H * 6 + 6 * EXPERT) + 2 * 1000 * H + H
    report = account(LONGCAT)
    assert report.total_params == total == 393_648
    assert report.active_params == total - 3 * (6 - 2) * EXPERT


def test_each_attention_block_caches_its_own_latent():
    # 3 layers × 2 blocks, each caching kv_lora_rank + qk_rope_head_dim = 24 per token; BF16, context 64.
    assert memory(LONGCAT, 64).kv_cache.bytes == 6 * 24 * 64 * 2 == 18_432
    # Scores per key (plain MLA): 2 · 4 heads · (24 + 12) in each of the 6 blocks.
    assert flops(LONGCAT, 64).per_token.attention_scores == 64 * 6 * 2 * 4 * 36


def test_zero_experts_widen_the_router_and_cost_nothing(write_config):
    config = json.loads(Path(LONGCAT).read_text())
    zero = str(write_config({**config, "zero_expert_num": 3}))
    report = account(zero)
    # The router scores 6 + 3 experts; nothing else changes, and a token still runs at most 2 real experts.
    assert report.total_params == 393_648 + 3 * H * 3 == 394_224
    assert report.active_params == report.total_params - 3 * (6 - 2) * EXPERT
    # transformers 5.24 builds this config with 421,872 parameters (tools/meta_count.py on the meta device): it also
    # gives the 3 zero experts gate and up weights of 24 × 64 in each of the 3 layers, which never run.
    assert report.total_params == 421_872 - 3 * 3 * 2 * 24 * H
    per_token = flops(zero, 1).per_token
    assert per_token.ffn == 3 * 2 * (H * 9 + 2 * EXPERT + MLP) + 3 * 2 * MLP


def test_default_model_is_longcat_flash_by_hand(write_config):
    # LongcatFlashConfig's defaults: hidden 6,144, 28 layers (56 MLA blocks), 64 heads; query latent 1,536, KV latent
    # 512, heads of 128 + 64 and values of 128; MLPs of 12,288; 512 experts of 2,048 and 256 zero experts, 12 picks.
    hidden = 6144
    mla = hidden * 1536 + 1536 * 64 * 192 + hidden * 576 + 512 * 64 * 256 + 64 * 128 * hidden + 1536 + 512
    block = mla + 3 * hidden * 12288 + 2 * hidden
    expert = 3 * hidden * 2048
    moe = hidden * (512 + 256) + 512 * expert
    total = 28 * (2 * block + moe) + 2 * 131072 * hidden + hidden
    report = account(str(write_config({"model_type": "longcat_flash"})))
    assert report.total_params == total == 560_664_958_976
    # transformers 5.24 builds 741,053,585,408: the same, and gate and up weights for the 256 zero experts.
    assert 741_053_585_408 - 28 * 256 * 2 * 2048 * hidden == total
    # At most 12 real experts a token; without the input table, as model cards quote.
    assert report.active_params_without_embedding == total - 28 * (512 - 12) * expert - 131072 * hidden


def test_num_hidden_layers_key_sets_the_layers_and_router_bias_adds_one_per_expert():
    # synthetic__longcat_flash_aliases: num_hidden_layers 4 → num_layers 2 (LongcatFlashConfig's setter); the
    # attribute_map's names (intermediate_size, num_local_experts, …); router_bias: a bias per expert (4).
    loaded = load_config(str(CONFIGS / "synthetic__longcat_flash_aliases.json"))
    names = checkpoint_tensors(loaded.spec)
    assert len(loaded.spec.layers) == 4 and "model.layers.1.mlps.1.down_proj.weight" in names
    assert "model.layers.2.input_layernorm.0.weight" not in names
    assert names["model.layers.0.mlp.router.classifier.bias"] == (4,)
    assert names["model.layers.0.mlps.0.gate_proj.weight"] == (80, 64)
