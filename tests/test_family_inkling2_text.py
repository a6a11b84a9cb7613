"""Inkling 2's text model: gated attention with per-token sinks and L2-clipped queries, static or dynamic short
convolutions on keys and values, an MoE in every layer, attention over earlier blocks' outputs by learned queries,
and a head saved padded to vocab_size rows.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/defaults__inkling2_text.json, synthetic__inkling2_text.json). Every layer is an MoE,
whose routing FlopCounterMode on the meta device cannot run: no FLOP record.
"""

import json
from pathlib import Path

from ffncalc import account, flops, load_config, verify
from ffncalc.tensors import checkpoint_tensors

from .checkpoints import write_checkpoint

SYNTHETIC = "tests/configs/synthetic__inkling2_text.json"


def test_inkling2_text_default_model_by_hand(write_config):
    # Inkling2TextConfig(): H 4,608, 48 layers, every sixth full (8), the rest sliding (40); 48 heads of 128 and 8
    # key-value heads in both. Each layer: q, o and the output gate 3 · H · 6,144; k, v 2 · H · 1,024; sinks H · 48;
    # the relative states H · 48 · 16, their clip scale 48 · 16 and bank 16 × 1,024 (window = rel_extent = 1,024);
    # the query clip scale 48 · 128; attn_sconv, mlp_sconv 2 · H · 4; router 384 · H; 384 experts 3 · H · 2,304.
    # Sliding: static k/v convolutions 2 · 1,024 · 4 and two RMSNorms; full: static taps 2 · 4 · 1,024, weight_proj
    # 2 · (8 · 4) · H and four RMSNorms. Outside: the table (201,024 rows), embed_norm, norm, the head (200,058 rows)
    # and the residual queries: 47 attention inputs (39 sliding of one, 8 full of three), 48 MLP inputs, 1 final.
    hidden = 4608
    common = (
        3 * hidden * 6144 + 2 * hidden * 1024 + hidden * 48 + hidden * 768 + 6144 + 768 + 16 * 1024
        + 2 * hidden * 4 + 384 * hidden + 384 * 3 * hidden * 2304
    )  # fmt: skip
    sliding = common + 2 * 1024 * 4 + 2 * hidden
    full = common + 2 * 4 * 1024 + 2 * 32 * hidden + 4 * hidden
    outside = 201024 * hidden + 2 * hidden + 200058 * hidden + (39 + 3 * 8 + 48 + 1) * hidden
    report = account(str(write_config({"model_type": "inkling2_text"})))
    assert report.total_params == 40 * sliding + 8 * full + outside == 593_718_478_848


def test_inkling2_text_head_has_unpadded_rows_and_is_saved_padded():
    # lm_head: unpadded_vocab_size (300) × 64 parameters; the checkpoint's unembed holds vocab_size (320) rows
    report = account(SYNTHETIC)
    assert report.components.lm_head == 300 * 64
    assert checkpoint_tensors(load_config(SYNTHETIC).spec)["model.llm.unembed.weight"] == (320, 64)


def test_inkling2_text_residual_queries_are_saved_apart_from_the_layers():
    # layer i's attention input is attn_queries.{i - 1}: layer 5, the full one, has three queries
    tensors = checkpoint_tensors(load_config(SYNTHETIC).spec)
    assert tensors["model.llm.attn_res.attn_queries.4"] == (3, 64)
    assert tensors["model.llm.attn_res.attn_queries.0"] == (64,)
    assert "model.llm.attn_res.attn_queries.6" not in tensors
    assert tensors["model.llm.attn_res.mlp_queries.6"] == (64,)
    assert tensors["model.llm.attn_res.output_query"] == (64,)


def test_inkling2_text_other_flops_by_hand():
    # 7 layers of 64, blocks of 3. Residual attention, 4 · queries · sources · 64 a token: sources before layer i
    # ⌈i / 3⌉ + 1 (the MLP's one more at layers 0, 3 and 6); attention queries 0 at layer 0, 3 at the full layer 5,
    # else 1; the final input over 3 blocks + 1. Layer by layer: 512, 1,024, 1,024, 1,280, 1,536, 3,072, 1,792 + 1,024.
    residual = 512 + 1024 + 1024 + 1280 + 1536 + 3072 + 1792 + 1024
    # the relative bias 2 · heads · d_rel · reach: six sliding layers 2 · 2 · 4 · 32, the full one 2 · 4 · 4 · 24
    relative = 6 * 2 * 2 * 4 * 32 + 2 * 4 * 4 * 24
    # attn_sconv and mlp_sconv, depthwise over 64 channels of 3 taps: 2 · 2 · 64 · 3 a layer
    convolutions = 7 * 2 * 2 * 64 * 3
    assert flops(SYNTHETIC, 1).per_token.other == residual + relative + convolutions == 20_480


def test_inkling2_text_verify_takes_the_padded_head_and_counts_only_its_rows(tmp_path):
    # a checkpoint holding every tensor transformers saves (held to its record by test_transformers_agreement.py),
    # the correction-bias buffers too: the head's 20 padded rows are stored bytes, not parameters
    config = json.loads(Path(SYNTHETIC).read_text())
    spec = load_config(SYNTHETIC).spec
    tensors = {name: ("BF16", list(shape)) for name, shape in checkpoint_tensors(spec).items()}
    tensors |= {f"model.llm.layers.{i}.mlp.gate.bias": ("F32", [4]) for i in range(7)}
    report = verify(str(write_checkpoint(tmp_path / "inkling2", config, tensors)))
    assert report.ok, [t for t in report.tensors if t.verdict not in ("parameter", "extra")]
    assert report.checkpoint_params == report.ffncalc_params == 266_784
