"""Zamba2: Mamba-2 layers, and hybrid layers that run one of num_mem_blocks shared transformer blocks first.

A shared block's parameters count once, at the first hybrid layer that runs it (which also stores every use's
adapters); its FLOPs count at every use. Every expected figure is derived by hand from the config's numbers
(tests/configs/synthetic__zamba2.json: hidden 48, MLP 80, layers mamba, hybrid, mamba, hybrid, hybrid, mamba,
hybrid, hybrid; 2 shared blocks; attention over 2 · 48 = 96 in 4 heads of 24 (2 KV heads); adapters of rank 4 on
q, k, v and gate_up; Mamba-2 of 96 in 4 heads of 24, 2 groups of state 8, kernel 3; biases; tied, vocabulary 1000).
"""

import json

from ffncalc import account, flops
from ffncalc.api import load_config, memory
from ffncalc.tensors import checkpoint_tensors

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"
ZAMBA = CONFIGS / "synthetic__zamba2.json"
CONV_DIM = 96 + 2 * 2 * 8
MAMBA = (48 * (96 + CONV_DIM + 4) + 96 + CONV_DIM + 4) + CONV_DIM * 3 + CONV_DIM + 3 * 4 + 96 + (96 * 48 + 48)
ATTENTION = 96 * 96 + 2 * 96 * 48 + 96 * 48  # q, k, v read 96; o writes 48
MLP = (48 * 160 + 160) + (80 * 48 + 48)  # gate_up fused (2 · 80), down; biased
BLOCK = ATTENTION + MLP + 96 + 48  # and its two RMSNorms, over 96 and 48
ATTENTION_ADAPTERS = 3 * (96 * 4 + 4 * 96)
MLP_ADAPTER = 48 * 4 + 4 * 160


def test_shared_blocks_count_once_and_each_use_adds_its_adapters():
    # 3 Mamba-2 layers (mixer + norm); 5 hybrid layers (own Mamba-2 + norm, linear 48 → 48, adapters); 2 blocks.
    total = (
        3 * (MAMBA + 48) + 5 * (MAMBA + 48 + 48 * 48 + ATTENTION_ADAPTERS + MLP_ADAPTER) + 2 * BLOCK + 1000 * 48 + 48
    )
    assert account(str(ZAMBA)).total_params == total == 277_040


def test_shared_blocks_cost_flops_at_every_use():
    # each of the 5 hybrid layers runs its block's MLP with its own gate_up adapter, and the linear map
    report = flops(str(ZAMBA), 1000).per_token
    assert report.ffn == 5 * 2 * (48 * 160 + 80 * 48 + MLP_ADAPTER)
    assert report.attention_projections == 5 * 2 * (ATTENTION + ATTENTION_ADAPTERS)
    assert report.other == 5 * 2 * 48 * 48
    assert report.attention_scores == 5 * 2 * 4 * (24 + 24) * 1000
    assert report.mixer_state == 8 * (5 * 4 * 24 * 8 + 2 * CONV_DIM * 3)


def test_every_hybrid_layer_caches_its_own_keys_and_values():
    # the blocks are shared, their caches are not: 5 layers × 2 KV heads × (24 + 24) per token, bfloat16
    assert memory(str(ZAMBA), 1000).kv_cache.bytes_per_token == 5 * 2 * 48 * 2


def test_the_first_use_of_a_block_stores_it_with_every_uses_adapters():
    # hybrid layers 0..4 sit at layers 1, 3, 4, 6, 7; block 0 runs at uses 0, 2, 4, block 1 at uses 1 and 3
    stored = checkpoint_tensors(load_config(str(ZAMBA)).spec)

    def adapters(layer):
        prefix = f"model.layers.{layer}.shared_transformer.feed_forward.gate_up_proj_adapter_list."
        return sorted({name[len(prefix) :].split(".")[0] for name in stored if name.startswith(prefix)})

    assert (adapters(1), adapters(3)) == (["0", "2", "4"], ["1", "3"])
    for layer in (4, 6, 7):
        assert not [name for name in stored if name.startswith(f"model.layers.{layer}.shared_transformer.")]
        assert f"model.layers.{layer}.linear.weight" in stored
    assert stored["model.layers.1.shared_transformer.input_layernorm.weight"] == (96,)


def test_one_shared_block_and_a_mamba_head_width_that_floors():
    # synthetic__zamba2_one_block: hidden 40; Mamba-2 of 80 in 3 heads of 80 // 3 = 26 (the state follows the heads,
    # the projections the full 80), 1 group of state 4, kernel 4; attention over 80 in 5 heads of 16; MLP 4 · 40;
    # only gate_up adapters (rank 128); no biases; tied.
    conv_dim = 80 + 2 * 4
    mamba = 40 * (80 + conv_dim + 3) + conv_dim * 4 + conv_dim + 3 * 3 + 80 + 80 * 40
    block = 3 * 80 * 80 + 80 * 40 + 40 * 320 + 160 * 40 + 80 + 40  # q, k, v from 80; o to 40; MLP; norms
    adapter = 40 * 128 + 128 * 320
    total = 2 * (mamba + 40) + 3 * (mamba + 40 + 40 * 40 + adapter) + block + 1000 * 40 + 40
    path = str(CONFIGS / "synthetic__zamba2_one_block.json")
    assert account(path).total_params == total == 277_845
    assert flops(path, 100).per_token.mixer_state == 5 * (5 * 3 * 26 * 4 + 2 * conv_dim * 4)


def test_untied_embeddings_are_noted_as_transformers_ties_no_block_then(write_config):
    config = {**json.loads(ZAMBA.read_text()), "tie_word_embeddings": False}
    report = account(str(write_config(config)))
    assert report.total_params == 277_040 + 1000 * 48  # the blocks still once; the head now apart
    assert any("transformers 5.24 then ties nothing" in note for note in report.notes)
