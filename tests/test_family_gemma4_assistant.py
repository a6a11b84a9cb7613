"""Gemma 4's and Gemma 4 unified's assistants: drafters on a Gemma 4 text model whose layers all read the target's
cached keys and values, between pre_projection and post_projection.

Totals, components and tensors are held to transformers 5.24 by tests/test_transformers_agreement.py
(defaults__gemma4_unified_assistant.json, synthetic__gemma4_*assistant*.json); here each expected figure is
derived by hand from the config's numbers.
"""

import pytest

from ffncalc import account, flops, memory
from ffncalc.api import load_config
from ffncalc.errors import InvalidConfigError
from ffncalc.tensors import checkpoint_tensors

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"
SYNTHETIC = str(CONFIGS / "synthetic__gemma4_unified_assistant.json")
ORDERED = str(CONFIGS / "synthetic__gemma4_unified_assistant_ordered_untied.json")


def test_gemma4_unified_assistant_defaults_by_hand(write_config):
    # Gemma4UnifiedAssistantConfig(): Gemma4UnifiedTextConfig()'s 30 layers (H 2,304, 8 heads of 256, every sixth
    # layer global with heads of 512), every one reading the target's keys and values: q_proj, o_proj and q_norm, no
    # k or v; a gated MLP of 9,216; four RMSNorms a layer; the table 262,144 × 2,304 tied to the head;
    # pre_projection 2 · 3,840 → 2,304 and post_projection 2,304 → 3,840.
    hidden, backbone = 2304, 3840

    def attention(head):
        return 2 * hidden * 8 * head + head

    layers = 25 * attention(256) + 5 * attention(512) + 30 * (3 * hidden * 9216 + 4 * hidden)
    total = layers + 262144 * hidden + hidden + 2 * backbone * hidden + hidden * backbone
    assert total == 2_872_140_800  # transformers 5.24 builds Gemma4UnifiedAssistantForCausalLM() with as many
    assert account(str(write_config({"model_type": "gemma4_unified_assistant"}))).total_params == total


def test_every_assistant_layer_reads_the_targets_keys_and_values():
    tensors = checkpoint_tensors(load_config(SYNTHETIC).spec)
    assert not any("k_proj" in name or "v_proj" in name or "k_norm" in name for name in tensors)
    assert tensors["pre_projection.weight"] == (64, 160)
    assert tensors["post_projection.weight"] == (80, 64)


def test_assistant_token_runs_both_projections_and_attends_over_the_targets_context():
    # hidden 64, 4 heads; layers sliding, full, sliding, full: q and o of 64 × 64 (heads of 16) or 64 × 128 (32);
    # sliding_window 32 at context 64; MLP 3 · 64 · 96; the head 512 × 64; pre 160 → 64, post 64 → 80
    per_token = flops(SYNTHETIC, 64).per_token
    assert per_token.attention_projections == 2 * (2 * 2 * 64 * 64 + 2 * 2 * 64 * 128)
    assert per_token.attention_scores == 2 * (2 * 2 * 4 * 16 * 32) + 2 * (2 * 2 * 4 * 32 * 64)
    assert per_token.ffn == 4 * 2 * 3 * 64 * 96
    assert per_token.lm_head == 2 * 512 * 64
    assert per_token.other == 2 * 160 * 64 + 2 * 64 * 80


def test_assistant_caches_nothing_of_its_own():
    assert memory(SYNTHETIC, 64, dtype="bf16").kv_cache.bytes == 0


def test_ordered_embeddings_add_centroids_and_the_token_ordering():
    # use_ordered_embeddings: centroids 32 → 16 and a token_ordering buffer of the 256-token vocabulary; untied head;
    # use_double_wide_mlp doubles every (shared) layer's MLP, 64 → 128
    spec = load_config(ORDERED).spec
    tensors = checkpoint_tensors(spec)
    assert tensors["masked_embedding.centroids.weight"] == (16, 32)
    assert tensors["lm_head.weight"] == (256, 32)
    assert tensors["model.layers.0.mlp.up_proj.weight"] == (128, 32)
    ordering = [extra for extra in spec.checkpoint_extras if extra.name == "token ordering"]
    assert [(t.name, t.shape) for t in ordering[0].tensors] == [("masked_embedding.token_ordering", (256,))]


def test_gemma4_assistant_by_hand():
    # synthetic__gemma4_assistant.json: Gemma 4's text model without per-layer embeddings, 4 layers (3 sliding with
    # heads of 16, the last full with heads of 32), 4 heads, every layer reading the target's keys and values: q, o
    # and q_norm; MLP 3 · 64 · 96; four RMSNorms a layer; table 512 × 64 tied; pre 2 · 96 → 64, post 64 → 96
    hidden, backbone = 64, 96
    attention = 3 * (2 * hidden * 4 * 16 + 16) + (2 * hidden * 4 * 32 + 32)
    layers = attention + 4 * (3 * hidden * 96 + 4 * hidden)
    total = layers + 512 * hidden + hidden + 2 * backbone * hidden + hidden * backbone
    assert total == 167_056  # transformers 5.24 builds Gemma4AssistantForCausalLM from it with as many
    assert account(str(CONFIGS / "synthetic__gemma4_assistant.json")).total_params == total


def test_gemma4_assistant_default_config_is_refused_as_transformers_refuses_it(write_config):
    # Gemma4TextConfig() has per-layer embeddings (hidden_size_per_layer_input 256), which
    # Gemma4AssistantConfig.validate_architecture refuses (defaults__gemma4_assistant.json records its error)
    with pytest.raises(InvalidConfigError, match=r"text_config\.hidden_size_per_layer_input: .* must be 0, got 256"):
        account(str(write_config({"model_type": "gemma4_assistant"})))
