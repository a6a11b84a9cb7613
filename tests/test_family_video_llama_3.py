"""VideoLLaMA 3: a SigLIP-shaped tower without a position table, a two-layer projector and a Qwen2 language model.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/synthetic__video_llama_3.json, defaults__video_llama_3.json).
"""

import json

from ffncalc import account
from ffncalc.api import flops

from .conftest import ROOT

VIDEO_LLAMA_3_PATH = ROOT / "tests" / "configs" / "synthetic__video_llama_3.json"
VIDEO_LLAMA_3 = str(VIDEO_LLAMA_3_PATH)


def test_video_llama_3_counts_its_tower_projector_and_qwen2_by_hand():
    report = account(VIDEO_LLAMA_3)
    # Qwen2 (text_config): hidden 64, 2 layers of 4 query heads and 2 KV heads of 16 (q, k, v biased), SwiGLU of 96,
    # two RMSNorms a layer, a final norm; 320 × 64 token table, the head tied to it (text_config says so)
    layer = (64 * 64 + 64) + 2 * (64 * 32 + 32) + 64 * 64 + 3 * 64 * 96 + 2 * 64
    assert report.language_model_params == 2 * layer + 64 + 320 * 64
    # the tower: a biased 14 × 14 patch convolution of 3 channels into 48, no position table; 2 layers of q, k, v, out
    # (48 → 48, biased), fc1 48 → 80 and fc2 80 → 48 (biased), two LayerNorms with biases; post_layernorm
    tower_layer = 4 * (48 * 48 + 48) + (48 * 80 + 80) + (80 * 48 + 48) + 2 * 2 * 48
    assert report.components.vision == (3 * 14 * 14 * 48 + 48) + 2 * tower_layer + 2 * 48
    # readout.0 48 → 64 and readout.2 64 → 64, biased
    assert report.components.projector == (48 * 64 + 64) + (64 * 64 + 64)


def test_video_llama_3_is_untied_when_neither_the_wrapper_nor_its_language_model_ties(write_config):
    # VideoLlama3Config.__post_init__ ties only when tie_word_embeddings or text_config's is true
    config = json.loads(VIDEO_LLAMA_3_PATH.read_text())
    config["text_config"]["tie_word_embeddings"] = False
    untied = account(str(write_config(config)))
    assert untied.components.lm_head == 320 * 64
    assert untied.total_params == account(VIDEO_LLAMA_3).total_params + 320 * 64


def test_one_image_through_video_llama_3s_tower_by_hand():
    # smart_resize to multiples of 14 (merge_size 1 for images): 1024 → 73 · 14 = 1022, 768 → 55 · 14 = 770;
    # 55 × 73 = 4,015 patches, each one token
    image = flops(VIDEO_LLAMA_3, image="1024x768").image
    patches = 55 * 73
    assert (image.resized_width, image.resized_height) == (1022, 770)
    assert (image.patches, image.image_tokens) == (patches, patches)
    assert image.patch_embedding == 2 * (3 * 14 * 14 * 48) * patches
    assert image.attention_projections == 2 * 2 * (4 * 48 * 48) * patches
    assert image.ffn == 2 * 2 * (2 * 48 * 80) * patches
    assert image.attention_scores == 2 * (2 * 4 * (12 + 12)) * patches * patches
    assert image.projector == 2 * (48 * 64 + 64 * 64) * patches
