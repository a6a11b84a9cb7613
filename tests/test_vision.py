"""Multimodal models counted whole: the vision tower and projector per block and by name, and what one image costs.

Figures: transformers 5.24 building the model on the meta device (tools/meta_count.py), published
checkpoint sizes (../shared/reference/ground_truth.json), and hand derivations written here.
"""

import json
import shutil

from ffncalc import account
from ffncalc.api import flops, verify

from .conftest import EXPECTED, ROOT

GEMMA3_4B = str(ROOT / "tests" / "configs" / "reconstructed__gemma-3-4b-it.json")


def test_gemma_3_4b_counts_its_siglip_tower_and_projector_to_transformers_total():
    # transformers 5.24 builds Gemma3ForConditionalGeneration from these fields with 4,300,079,472 parameters
    report = account(GEMMA3_4B)
    assert report.total_params == 4_300_079_472
    # SigLIP so400m at 896 px, no pooling head: patch conv 1152 · 3 · 14² + 1152, 64² positions · 1152,
    # 27 layers of (4 · (1152² + 1152) + 2 · 1152 · 4304 + 4304 + 1152 + 2 · 2 · 1152), post LayerNorm 2 · 1152
    layer = 4 * (1152 * 1152 + 1152) + 2 * 1152 * 4304 + 4304 + 1152 + 4 * 1152
    assert report.components.vision == 1152 * 3 * 14 * 14 + 1152 + 64 * 64 * 1152 + 27 * layer + 2 * 1152
    # the projector: an RMSNorm of 1152 and a 1152 × 2560 matrix
    assert report.components.projector == 1152 + 1152 * 2560


def test_the_language_model_total_is_kept_beside_the_whole_model():
    report = account(GEMMA3_4B)
    assert report.language_model_params == report.total_params - report.components.vision - report.components.projector
    assert report.language_model_params == 3_880_263_168  # the figure ffncalc gave before towers were counted


def test_magistral_checkpoint_is_the_model_and_the_head_transformers_4_stored():
    # HF API safetensors count of mistralai/Magistral-Small-2509: 24,011,361,280 BF16 parameters. transformers 5
    # ties the head (the wrapper's tie_word_embeddings); the checkpoint, written by 4.56, stores it: 131,072 × 5,120.
    report = account("mistralai/Magistral-Small-2509")
    (head,) = [extra for extra in report.checkpoint_extras if extra.name == "untied output head"]
    assert head.elements == 131_072 * 5_120
    assert report.total_params + head.elements == 24_011_361_280


def test_verify_explains_every_tensor_transformers_saves_for_gemma_3_4b(tmp_path):
    # the names transformers 5.24 saves for this config (tools/meta_count.py --show), as an index with their BF16 size
    shutil.copy(GEMMA3_4B, tmp_path / "config.json")
    shutil.copy(EXPECTED / "saved__gemma-3-4b-it.index.json", tmp_path / "model.safetensors.index.json")
    report = verify(str(tmp_path))
    saved = json.loads((EXPECTED / "saved__gemma-3-4b-it.index.json").read_text())
    assert report.ok
    assert report.counts == {"parameter": len(saved["weight_map"])}
    assert {t.name for t in report.tensors} == set(saved["weight_map"])  # every tensor's verdict, by name
    assert report.expected_bytes == report.index_total_size == 2 * 4_300_079_472
    # vision_tower.*: patch conv (2) and position table, 27 layers × 16 tensors, post LayerNorm (2)
    vision = 2 + 1 + 27 * 16 + 2
    assert sum(1 for name in saved["weight_map"] if name.startswith("vision_tower.")) == vision


def test_one_image_through_gemma_3s_siglip_tower_by_hand():
    # Gemma 3 reads every image at 896 × 896: 64 × 64 = 4,096 patches of 14 px, pooled to 256 tokens.
    image = flops(GEMMA3_4B, image="640x480").image
    patches, layers, hidden, inner, heads, head_dim = 4096, 27, 1152, 4304, 16, 72
    assert (image.resized_width, image.patches, image.image_tokens) == (896, patches, 256)
    assert image.patch_embedding == 2 * (3 * 14 * 14 * hidden) * patches
    assert image.attention_projections == layers * 2 * (4 * hidden * hidden) * patches
    assert image.ffn == layers * 2 * (2 * hidden * inner) * patches
    assert image.attention_scores == layers * 2 * heads * (head_dim + head_dim) * patches * patches
    assert image.projector == 2 * (hidden * 2560) * 256
    assert image.total == (
        image.patch_embedding + image.attention_projections + image.ffn + image.attention_scores + image.projector
    )


def test_qwen_rounds_each_side_to_a_multiple_of_28_and_merges_2_by_2():
    # smart_resize: 1024 → 37 · 28 = 1036, 768 → 27 · 28 = 756; patches 74 × 54, tokens 37 × 27
    image = flops("Qwen/Qwen2.5-VL-7B-Instruct", image="1024x768").image
    assert (image.resized_width, image.resized_height, image.patches, image.image_tokens) == (1036, 756, 3996, 999)


def test_qwen25_vl_windowed_layers_attend_within_112_pixel_windows():
    # 28 of 32 layers attend within windows of 4 × 4 merged units (8 × 8 patches): over 27 × 37 units, row blocks
    # 6 × 4 + 3 (Σ squares 105), column blocks 9 × 4 + 1 (145), so 105 · 145 · 2⁴ = 243,600 query-key pairs;
    # the 4 full-attention layers (7, 15, 23, 31) see 3,996² pairs. Each pair: 2 · 16 heads · (80 + 80).
    image = flops("Qwen/Qwen2.5-VL-7B-Instruct", image="1024x768").image
    assert image.attention_scores == 2 * 16 * (80 + 80) * (4 * 3996 * 3996 + 28 * 243_600)


def test_pixtral_scales_an_image_down_to_its_longest_edge_and_pads_to_whole_patches():
    # Magistral: longest edge 1,540, patches of 14. 3000 × 2000 scales by 3000 / 1540 to 1540 × 1026; 1026 px
    # is 73.3 patches, padded to 74 rows; 110 columns. The projector merges 2 × 2: 37 × 55 tokens.
    image = flops("mistralai/Magistral-Small-2509", image="3000x2000").image
    assert (image.resized_width, image.resized_height) == (1540, 74 * 14)
    assert (image.patches, image.image_tokens) == (110 * 74, 37 * 55)


def test_text_flops_are_the_language_models_alone_and_say_so(tmp_path):
    # the same text model as a text-only config (Gemma3ForCausalLM): a text token costs the same
    text_only = json.loads((ROOT / "tests" / "configs" / "reconstructed__gemma-3-4b-it.json").read_text())["text_config"]
    (tmp_path / "config.json").write_text(json.dumps(text_only))
    multimodal, alone = flops(GEMMA3_4B, context=1024), flops(str(tmp_path), context=1024)
    assert multimodal.image is None
    assert multimodal.per_token == alone.per_token
    assert any("a text token runs the language model only" in line for line in multimodal.conventions)
