"""Muse Glimmer: a Gemma-2-style language model with a gated attention output, a MoonViT-style tower, an adapter and
a projection; tied only where the wrapper's top level says so.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/defaults__muse_glimmer.json: 29,776,626,688; synthetic__muse_glimmer.json: 217,632).
"""

from ffncalc import account

from .conftest import ROOT

SYNTHETIC = str(ROOT / "tests" / "configs" / "synthetic__muse_glimmer.json")


def test_the_default_muse_glimmer_by_hand(write_config):
    # MuseGlimmerTextConfig: 52 layers of 6656; q, o and the output gate 6656 ↔ 32 · 128, k and v 6656 → 2 · 128; a
    # SwiGLU of 19968; four RMSNorms a layer and a final one (the q/k norms and the embedding's have no weight)
    attention = 3 * 6656 * 4096 + 2 * 6656 * 256
    text = 52 * (attention + 3 * 6656 * 19968 + 4 * 6656) + 6656 + 2 * 202048 * 6656  # the table and its own head
    # MuseGlimmerVisionConfig: 50 layers of 1536 (q, k, v, proj biased; fc1 → 8960 and fc2, biased; two LayerNorms),
    # a linear over 2 · 3 · 14² values, 32 · 32 positions, ln_pre and ln_post
    layer = 4 * (1536 * 1536 + 1536) + (1536 * 8960 + 8960) + (8960 * 1536 + 1536) + 2 * 2 * 1536
    vision = 50 * layer + 1176 * 1536 + 1024 * 1536 + 2 * 2 * 1536
    # the adapter (6144 → 4096 → 4096) and the projection into 6656, no biases
    projector = 6144 * 4096 + 4096 * 4096 + 4096 * 6656
    report = account(str(write_config({"model_type": "muse_glimmer"})))
    assert (report.components.vision, report.components.projector) == (vision, projector)
    assert report.total_params == text + vision + projector == 29_776_626_688


def test_muse_glimmer_ties_only_where_its_top_level_says():
    # text_config's tie_word_embeddings true ties nothing: PreTrainedModel.tie_weights reads the wrapper's own key
    report = account(SYNTHETIC)
    assert report.components.lm_head == 320 * 64
    assert report.total_params == 217_632


def test_muse_glimmers_text_layers_attend_fully_every_fourth_layer_counted_back_from_the_last():
    # 3 layers: (2 − i) % 4 == 0 only for the last, so layers 0 and 1 slide over 16 keys
    report = account(SYNTHETIC)
    decoder = [row for row in report.layers if row.stack == "decoder"]
    assert [(row.indices, row.window) for row in decoder] == [([0, 1], 16), ([2], None)]


def test_muse_glimmers_gated_attention_by_hand():
    # q, k, v, o of 4 heads of 24 (2 KV heads) and gate_proj 64 → 96
    first = account(SYNTHETIC).layers[0]
    assert first.components.attention == 64 * 96 + 2 * 64 * 48 + 96 * 64 + 64 * 96
