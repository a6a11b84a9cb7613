"""Perceiver IO's masked LM: the input's tokens read by cross-attention into num_latents latents, self-attention over
the latents only (num_self_attends_per_block layers run num_blocks times with the same weights), and
max_position_embeddings decoder queries reading the latents back, each decoded through the token table.

The totals and components are held to transformers 5.24 building the configs on the meta device by
tests/test_transformers_agreement.py (tests/expected/transformers/defaults__perceiver.json: 269,319,430,
PerceiverForMaskedLM; synthetic__perceiver.json: 88,964). Here the parameters are derived by hand, and the forward at 7
and 13 tokens by hand from modeling_perceiver.py and held to FlopCounterMode's totals (tools/flop_count.py, meta device,
transformers 5.24: 13 tokens in tests/expected/flop_counter.json; 7 tokens counted the same way).
"""

import json

import pytest

from ffncalc import account, flops
from ffncalc.errors import InvalidConfigError

from .conftest import ROOT

SYNTHETIC = str(ROOT / "tests" / "configs" / "synthetic__perceiver.json")


def load(path):
    with open(path) as file:
        return json.load(file)


def layer_params(q_dim, kv_dim, qk, v, out, widening):
    """A PerceiverLayer: layernorm1 (q_dim), layernorm2 (kv_dim, a cross-attention's), query, key, value (biased),
    output.dense (v → out), layernorm (q_dim), mlp dense1 and dense2 (biased)."""
    norms = 2 * q_dim + (2 * kv_dim if kv_dim else 0) + 2 * q_dim
    kv = kv_dim or q_dim
    attention = q_dim * qk + qk + kv * qk + qk + kv * v + v + v * out + out
    mlp = 2 * q_dim * widening * q_dim + widening * q_dim + q_dim
    return norms + attention + mlp


def test_default_masked_lm_by_hand(write_config):
    # PerceiverConfig(): vocab 262, d_model 768, d_latents 1280, 256 latents, 26 self-attention layers (1 block), 8 and 8
    # heads, qk and v unset (the cross-attention's qk d_model, 'kv'; the self-attention's d_latents), widening 1,
    # max_position_embeddings 2048. The decoder: qk 256, v d_model, 8 heads, queries d_model wide.
    v, d, dl, n_lat, m = 262, 768, 1280, 256, 2048
    tables = v * d + m * d + n_lat * dl + m * d + v  # tokens, positions, latents, decoder queries, the head's bias
    cross = layer_params(dl, d, d, d, dl, 1)
    attend = layer_params(dl, 0, dl, dl, dl, 1)
    decoder = layer_params(d, dl, 256, d, d, 1)
    report = account(str(write_config({"model_type": "perceiver"})))
    assert report.model_class == "PerceiverForMaskedLM"
    assert report.total_params == tables + cross + 26 * attend + decoder == 269_319_430


# synthetic__perceiver: vocab 100, d_model 32, d_latents 48, 8 latents, 2 blocks of 2 self-attention layers, 4 self and
# 2 cross heads, qk_channels 24, v_channels 48, widening 2 (cross) and 3 (self), max_position_embeddings 20.
V, D, DL, L, M, QK, VC = 100, 32, 48, 8, 20, 24, 48


def test_synthetic_counts_shared_layers_once():
    tables = V * D + M * D + L * DL + M * D + V
    params = tables + layer_params(DL, D, QK, VC, DL, 2) + 2 * layer_params(DL, 0, QK, VC, DL, 3)
    params += layer_params(D, DL, 256, D, D, 1)
    assert account(SYNTHETIC).total_params == params == 88_964


def forward_by_hand(tokens):
    """PerceiverForMaskedLM's forward of TOKENS: (projections, scores, ffn, head). The encoder's cross-attention: L
    latent queries (DL → QK) against TOKENS keys and values (D → QK, D → VC), output VC → DL over L, its MLP (×2) over
    L; each self-attention layer over the L latents, run twice (2 blocks); the decoder: M queries (D → 256) against the L
    latents (DL → 256, DL → D), output D → D, MLP (×1) over M; the head M × D × V, whatever the input's length."""
    projections = 2 * (L * DL * QK + tokens * D * (QK + VC) + L * VC * DL)
    scores = 2 * L * tokens * (QK + VC)
    ffn = 2 * L * 2 * (2 * DL * DL)
    attend_projections = 2 * L * (2 * DL * QK + 2 * DL * VC)
    projections += 4 * attend_projections
    scores += 4 * 2 * L * L * (QK + VC)
    ffn += 4 * 2 * L * 2 * (3 * DL * DL)
    projections += 2 * (M * D * 256 + L * DL * (256 + D) + M * D * D)
    scores += 2 * M * L * (256 + D)
    ffn += 2 * M * 2 * D * D
    return projections, scores, ffn, 2 * M * D * V


# FlopCounterMode's totals: tools/flop_count.py's count of synthetic__perceiver (meta device, eval, transformers 5.24).
@pytest.mark.parametrize("tokens, counted", [(7, 2_498_944), (13, 2_533_504)])
def test_forward_by_hand_equals_flop_counter_mode(tokens, counted):
    projections, scores, ffn, head = forward_by_hand(tokens)
    assert projections + scores + ffn + head == counted
    report = flops(SYNTHETIC, tokens, causal=False).prefill
    assert report.attention_projections == projections
    assert report.attention_scores == scores
    assert report.ffn == ffn
    assert report.lm_head == head
    assert report.total == counted


def test_recorded_13_token_count_is_held():
    counted = json.loads((ROOT / "tests" / "expected" / "flop_counter.json").read_text())["counts"]
    assert counted["synthetic__perceiver"]["total"] == sum(forward_by_hand(13))


def test_per_token_is_one_position_through_every_layer():
    # Per token at context 13: every layer's weights once (the self-attention layers at each of their 4 runs) and the
    # head; each query against its layer's keys: 13 input tokens, 8 latents (4 runs), 8 latents (the decoder).
    per_token = flops(SYNTHETIC, 13, causal=False).per_token
    cross = DL * QK + D * (QK + VC) + VC * DL
    attend = 2 * DL * QK + 2 * DL * VC
    decoder = D * 256 + DL * (256 + D) + D * D
    assert per_token.attention_projections == 2 * (cross + 4 * attend + decoder)
    assert per_token.attention_scores == 2 * (13 * (QK + VC) + 4 * L * (QK + VC) + L * (256 + D))
    assert per_token.lm_head == 2 * D * V


@pytest.mark.parametrize(
    "changes, match",
    [
        ({"architectures": ["PerceiverForSequenceClassification"]}, "PerceiverForMaskedLM only"),
        ({"v_channels": 24}, "v_channels"),
        ({"num_self_attention_heads": 5}, "d_latents"),
    ],
)
def test_refused_in_one_line(write_config, changes, match):
    with pytest.raises(InvalidConfigError, match=match):
        account(str(write_config({**load(SYNTHETIC), **changes})))
