"""Qwen3.5 (Gated DeltaNet beside gated attention, split input projections, MTP modules) and the language
models of Qwen2.5-VL, Qwen3-VL and Qwen3.5 inside their multimodal wrappers.

Every expected figure is derived by hand from the config's numbers.
"""

import json
from pathlib import Path

import pytest

from ffncalc import account, flops, load_config
from ffncalc.tensors import checkpoint_tensors

from .conftest import BUNDLED

QWEN3_5_08B = str(BUNDLED / "Qwen__Qwen3.5-0.8B.json")
QWEN3_5_35B = str(BUNDLED / "Qwen__Qwen3.5-35B-A3B.json")
QWEN3_VL_30B = str(BUNDLED / "Qwen__Qwen3-VL-30B-A3B-Instruct.json")
QWEN2_5_VL_7B = str(BUNDLED / "Qwen__Qwen2.5-VL-7B-Instruct.json")

# Qwen3.5-0.8B: hidden 1024, MLP 3584, 16 key and 16 value heads of 128 in the linear layers,
# 8 heads (2 kv) of 256 in the full ones; every fourth of 24 layers full.
H, I = 1024, 3584
KEY = VALUE = 16 * 128
MLP_AND_NORMS = 3 * H * I + 2 * H


def group(report, index):
    return next(g for g in report.layers if index in g.indices)


def test_qwen3_5_gated_deltanet_layer_by_hand():
    # in_proj_qkv H → 2·key + value, in_proj_z H → value, in_proj_b and in_proj_a H → 16, out_proj value → H,
    # a depthwise conv of kernel 4 over q, k, v (no bias), dt_bias and A_log per value head, an RMSNorm of 128.
    mixer = H * (2 * KEY + VALUE) + H * VALUE + 2 * H * 16 + VALUE * H + (2 * KEY + VALUE) * 4 + 2 * 16 + 128
    assert group(account(QWEN3_5_08B), 0).params == mixer + MLP_AND_NORMS


def test_qwen3_5_full_attention_layer_gates_its_output_through_q_proj():
    # q_proj emits queries and the output gate: 2 · 8 · 256 wide; k, v 2 · 256; o 8 · 256 → H; q/k norms of 256.
    attention = H * 2 * 8 * 256 + 2 * H * 2 * 256 + 8 * 256 * H + 2 * 256
    assert group(account(QWEN3_5_08B), 3).params == attention + MLP_AND_NORMS


def test_qwen3_5_wrapper_ties_by_its_own_flag_whose_default_is_false(write_config):
    config = json.loads(Path(QWEN3_5_08B).read_text())
    tied = account(QWEN3_5_08B)
    del config["tie_word_embeddings"]  # text_config still says true: the wrapper's flag decides
    untied = account(str(write_config(config)))
    assert untied.language_model_params - tied.language_model_params == 248320 * H


def test_qwen3_5_language_model_is_stored_under_model_language_model():
    names = checkpoint_tensors(load_config(QWEN3_5_08B).spec)
    assert names["model.language_model.layers.0.linear_attn.in_proj_qkv.weight"] == (2 * KEY + VALUE, H)
    assert "lm_head.weight" not in names  # tied


def test_qwen3_5_moe_active_parameters_per_layer():
    # 256 experts of width 512 (8 per token), a shared expert of 512 behind a gate H → 1: per layer the
    # router, 8 experts, the shared expert and its gate are active.
    hidden, width = 2048, 512
    expert = 3 * hidden * width
    report = account(QWEN3_5_35B)
    layer = group(report, 0)
    assert layer.params - layer.active_params == (256 - 8) * expert
    assert report.moe.experts_per_token == 8 and report.moe.num_shared_experts == 1


def test_qwen3_5_checkpoint_holds_its_multi_token_prediction_module():
    # mtp_num_hidden_layers = 1: a full-attention MoE layer under mtp.layers.0, fc 2H → H, and three norms.
    hidden = 2048
    report = account(QWEN3_5_35B)
    extra = next(e for e in report.checkpoint_extras if e.name == "multi-token-prediction layers")
    assert extra.elements == group(report, 3).params + 2 * hidden * hidden + 3 * hidden


def test_qwen3_5_gated_deltanet_state_update_flops_do_not_grow_with_context():
    # 18 linear layers: 7 FLOPs per state element (16 value heads of 128 × 128) and the conv, 2 · 6144 · 4.
    per_layer = 7 * 16 * 128 * 128 + 2 * (2 * KEY + VALUE) * 4
    for context in (1024, 32768):
        assert flops(QWEN3_5_08B, context).per_token.mixer_state == 18 * per_layer


def test_qwen3_vl_moe_stores_its_experts_stacked_with_gate_and_up_fused():
    names = checkpoint_tensors(load_config(QWEN3_VL_30B).spec)
    assert names["model.language_model.layers.0.mlp.experts.gate_up_proj"] == (128, 2 * 768, 2048)
    assert names["model.language_model.layers.0.mlp.experts.down_proj"] == (128, 2048, 768)


def test_qwen2_5_vl_reads_its_language_model_from_the_top_level():
    # The published config has no text_config: hidden 3584, 28 layers, 28 heads (4 kv) of 128, MLP 18944.
    hidden, kv = 3584, 4 * 128
    layer = (hidden * hidden + hidden) + 2 * (hidden * kv + kv) + hidden * hidden + 3 * hidden * 18944 + 2 * hidden
    report = account(QWEN2_5_VL_7B)
    assert report.language_model_params == 28 * layer + 2 * 152064 * hidden + hidden


def test_qwen3_vl_text_alone_is_transformers_base_model_without_a_head(write_config):
    config = {
        "model_type": "qwen3_vl_text",
        "vocab_size": 1000,
        "hidden_size": 64,
        "intermediate_size": 128,
        "num_hidden_layers": 1,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "head_dim": 16,
    }
    report = account(str(write_config(config)))
    assert report.components.lm_head == 0
    assert "embed_tokens.weight" in checkpoint_tensors(load_config(str(write_config(config))).spec)


@pytest.mark.parametrize(
    ("model_type", "architecture", "expected"),
    [
        # transformers 5.24 on the meta device: AutoModelForCausalLM.from_config(AutoConfig.for_model(model_type))
        # builds Qwen3_5ForCausalLM (Qwen3_5MoeForCausalLM) from the text config alone: 8,953,803,264
        # (34,660,610,688) parameters, where the whole default qwen3_5 (with its vision tower) has 9,407,453,936.
        ("qwen3_5", "Qwen3_5ForCausalLM", 8_953_803_264),
        ("qwen3_5_moe", "Qwen3_5MoeForCausalLM", 34_660_610_688),
    ],
)
def test_a_causal_lm_class_counts_the_language_model_alone(write_config, model_type, architecture, expected):
    path = write_config({"model_type": model_type, "architectures": [architecture]})
    report = account(str(path))
    assert report.total_params == expected
    assert report.components.vision == 0
