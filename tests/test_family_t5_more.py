"""UMT5 and Switch Transformers: T5's blocks with a bias table in every block, and with top-1 experts.

Totals, components, routed experts and tensors are held to transformers 5.24 by tests/test_transformers_agreement.py;
here each expected figure is derived by hand from the config's numbers.
"""

from ffncalc import account
from ffncalc.api import load_config
from ffncalc.tensors import checkpoint_tensors

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"


def test_umt5_defaults_by_hand(write_config):
    # UMT5Config(): vocabulary 250,112, d 512, 6 heads of 64 (384 wide), gated-gelu FFN 1,024, 8 + 8 blocks, each
    # with its own 32 × 6 bias table; RMS norms of d (2 a block in the encoder, 3 in the decoder, 2 final); tied.
    d, inner, ffn, buckets = 512, 384, 1024, 32 * 6
    encoder = 4 * d * inner + buckets + 3 * d * ffn + 2 * d
    decoder = 8 * d * inner + buckets + 3 * d * ffn + 3 * d
    total = 250112 * d + 8 * encoder + 8 * decoder + 2 * d
    assert total == 172_122_112
    assert account(str(write_config({"model_type": "umt5"}))).total_params == total


def test_umt5_every_block_holds_a_bias_table():
    tensors = checkpoint_tensors(load_config(str(CONFIGS / "synthetic__umt5.json")).spec)
    for stack, blocks in (("encoder", 3), ("decoder", 2)):
        for block in range(blocks):
            name = f"{stack}.block.{block}.layer.0.SelfAttention.relative_attention_bias.weight"
            assert tensors[name] == (16, 4)


def test_switch_transformers_defaults_by_hand(write_config):
    # SwitchTransformersConfig(): d 768, 12 heads of 64, FFN 2,048 (relu, wi → wo), 12 + 12 blocks; 3 sparse per
    # stack: step 12 // 3 = 4, blocks 1, 5 and 9 hold 8 experts and a router (8 · d); vocabulary 32,128, tied.
    d, ffn, experts = 768, 2048, 8
    dense, sparse = 2 * d * ffn, experts * 2 * d * ffn + experts * d
    encoder = 12 * (4 * d * d + 2 * d) + 9 * dense + 3 * sparse + 32 * 12
    decoder = 12 * (8 * d * d + 3 * d) + 9 * dense + 3 * sparse + 32 * 12
    total = 32128 * d + encoder + decoder + 2 * d
    assert total == 317_312_256
    report = account(str(write_config({"model_type": "switch_transformers"})))
    assert report.total_params == total
    assert report.moe.routed_expert_params == 6 * experts * 2 * d * ffn


def test_switch_transformers_sparse_blocks_follow_the_step_rule():
    # 4 encoder blocks, 2 sparse: step 2, blocks 1 and 3; 6 decoder blocks, 3 sparse: step 2, blocks 1, 3, 5
    tensors = checkpoint_tensors(load_config(str(CONFIGS / "synthetic__switch_transformers.json")).spec)
    sparse = {name.split(".layer.")[0] for name in tensors if ".mlp.router.classifier.weight" in name}
    assert sparse == {"encoder.block.1", "encoder.block.3", "decoder.block.1", "decoder.block.3", "decoder.block.5"}
    assert tensors["encoder.block.1.layer.1.mlp.router.classifier.bias"] == (4,)  # router_bias


def test_switch_transformers_without_sparse_layers_still_routes_block_one():
    # num_sparse_encoder_layers 0: transformers sets step = 3 layers, and 1 % 3 == 1 makes block 1 sparse; the
    # one-block decoder has step 1: every block sparse. Untied: shared, both stacks' tables and lm_head.
    tensors = checkpoint_tensors(
        load_config(str(CONFIGS / "synthetic__switch_transformers_no_sparse_layers.json")).spec
    )
    routers = sorted(name for name in tensors if name.endswith("router.classifier.weight"))
    assert routers == [
        "decoder.block.0.layer.2.mlp.router.classifier.weight",
        "encoder.block.1.layer.1.mlp.router.classifier.weight",
    ]
    assert {"shared.weight", "encoder.embed_tokens.weight", "decoder.embed_tokens.weight", "lm_head.weight"} <= set(
        tensors
    )
