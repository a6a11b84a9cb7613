"""Multimodal models counted whole: the vision tower and projector per block and by name, and what one image costs.

Figures: transformers 5.24 building the model on the meta device (tools/meta_count.py), published
checkpoint sizes (tests/reference/ground_truth.json), and hand derivations written here.
"""

import json
import shutil

import pytest

from ffncalc import account
from ffncalc.api import flops, load_config, verify
from ffncalc.errors import UsageError
from ffncalc.tensors import checkpoint_tensors

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
    # transformers' 4,300,079,472 less the SigLIP tower and the projector, as derived above
    layer = 4 * (1152 * 1152 + 1152) + 2 * 1152 * 4304 + 4304 + 1152 + 4 * 1152
    tower = 1152 * 3 * 14 * 14 + 1152 + 64 * 64 * 1152 + 27 * layer + 2 * 1152
    projector = 1152 + 1152 * 2560
    report = account(GEMMA3_4B)
    assert report.language_model_params == 4_300_079_472 - tower - projector == 3_880_263_168


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
    assert report.missing_files == sorted(set(saved["weight_map"].values())) and not report.ok  # names only
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


@pytest.mark.parametrize("size", ["100000x1", "1x100000", "1541x1"])
def test_pixtral_refuses_an_image_whose_short_side_scales_to_nothing(ffncalc, size):
    # transformers 5.24, pixtral/image_processing_pixtral.py: get_resize_output_image_size scales 100000 × 1 by
    # 100000 / 1540 and floors the height to 0 (1541 × 1: 1 / (1541 / 1540) floors to 0 too); _num_image_tokens
    # makes (0 - 1) // 14 + 1 = 0 patch rows, and TorchvisionBackend.resize then refuses SizeDict(height=0)
    # ("Size must contain 'height' and 'width' keys …"). No image of that shape reaches the tower.
    run = ffncalc("flops", "mistralai/Magistral-Small-2509", "--image", size)
    width, height = size.split("x")
    assert run.exit_code == 2
    assert run.stdout == ""
    assert run.stderr == (
        f"Error: --image {width}x{height}: scaled to fit 1540 px, its short side becomes 0 px, which transformers' "
        "PixtralImageProcessor cannot resize to (it refuses the image); a side may be at most 1540 times the other\n"
    )


@pytest.mark.parametrize(
    ("size", "resized", "patches", "tokens"),
    [
        # 1540 × 1 is not scaled (ratio 1); each side is padded to whole units of 14 · 2 = 28 px: 1540 × 28,
        # 2 × 110 patches, merged 2 × 2 into 1 × 55 tokens.
        ("1540x1", (1540, 28), 2 * 110, 55),
        # 1010 × 10: ceil(1010 / 28) = 37 units → 1036 px, 74 patch columns; 10 px → one unit of 28, 2 rows.
        ("1010x10", (1036, 28), 2 * 74, 37),
    ],
)
def test_mistral_3_pads_each_side_to_whole_merged_units(size, resized, patches, tokens):
    # transformers 5.24: AutoProcessor maps mistral3 to PixtralProcessor, whose _process_images hands the image
    # processor patch_size · spatial_merge_size (14 · 2); get_resize_output_image_size rounds each side up to that
    # unit ((side - 1) // unit + 1 units), and replace_image_token makes height // 28 rows of width // 28 tokens.
    image = flops("mistralai/Magistral-Small-2509", image=size).image
    assert (image.resized_width, image.resized_height) == resized
    assert (image.patches, image.image_tokens) == (patches, tokens)


def test_text_flops_are_the_language_models_alone_and_say_so(tmp_path):
    # the same text model as a text-only config (Gemma3ForCausalLM): a text token costs the same
    text_only = json.loads((ROOT / "tests" / "configs" / "reconstructed__gemma-3-4b-it.json").read_text())[
        "text_config"
    ]
    (tmp_path / "config.json").write_text(json.dumps(text_only))
    multimodal, alone = flops(GEMMA3_4B, context=1024), flops(str(tmp_path), context=1024)
    assert multimodal.image is None
    assert multimodal.per_token == alone.per_token
    assert any("a text token runs the language model only" in line for line in multimodal.conventions)


# --- Kimi-K2.5: MoonViT and its projector ------------------------------------------------------------------------

KIMI_K25 = ROOT / "tests" / "configs" / "synthetic__kimi_k25.json"


def test_kimi_k25_counts_moonvit_and_its_projector_to_transformers_total():
    # transformers 5.24 builds Kimi_K25ForConditionalGeneration from this config with 354,952 parameters
    report = account(str(KIMI_K25))
    assert report.total_params == 354_952
    # MoonViT, hidden 48, 4 heads, FFN 96, 2 layers: patch conv 48 · 3 · 14² + 48, a position grid 8 × 6 × 48,
    # per layer q, k, v, o (48² + 48 each), fc0 48 · 96 + 96, fc1 96 · 48 + 48, two LayerNorms (2 · 48 each),
    # a final LayerNorm 2 · 48
    layer = 4 * (48 * 48 + 48) + (48 * 96 + 96) + (96 * 48 + 48) + 2 * 2 * 48
    assert report.components.vision == 48 * 3 * 14 * 14 + 48 + 8 * 6 * 48 + 2 * layer + 2 * 48
    # the projector: a LayerNorm of projection_hidden_size (48), then 2 × 2 patches side by side (192 wide)
    # through in_proj 192 → 192 and out_proj 192 → 64 (the text hidden), with biases
    assert report.components.projector == 2 * 48 + (192 * 192 + 192) + (192 * 64 + 64)


def test_kimi_k25_default_model_is_deepseek_v3_with_a_27_layer_moonvit(write_config):
    # {"model_type": "kimi_k25"}: transformers 5.24 builds 670,570,869,232 parameters: DeepSeek-V3's defaults
    # (hidden 7168), MoonViT 1152 wide, 16 heads, FFN 4304, 27 layers, patches of 14, a 64 × 64 position grid
    report = account(str(write_config({"model_type": "kimi_k25"})))
    assert report.total_params == 670_570_869_232
    hidden, inner = 1152, 4304
    layer = 4 * (hidden * hidden + hidden) + (hidden * inner + inner) + (inner * hidden + hidden) + 4 * hidden
    assert report.components.vision == hidden * 3 * 14 * 14 + hidden + 64 * 64 * hidden + 27 * layer + 2 * hidden
    merged = 4 * hidden  # 2 × 2 patches
    assert report.components.projector == 2 * 1152 + (merged * merged + merged) + (merged * 7168 + 7168)


def test_kimi_k25_saves_every_layer_as_a_block_as_transformers_reverts_its_conversion():
    # transformers saves Moonshot's names: it reverts blocks → layers everywhere, the language model's layers too
    names = checkpoint_tensors(load_config(str(KIMI_K25)).spec)
    assert names["language_model.model.blocks.1.mlp.experts.7.down_proj.weight"] == (64, 32)
    assert names["vision_tower.encoder.blocks.1.wqkv.weight"] == (3 * 48, 48)  # q, k and v fused
    assert names["vision_tower.patch_embed.pos_emb.weight"] == (8, 6, 48)
    assert names["model.mm_projector.pre_norm.weight"] == (48,)
    assert not any(".layers." in name for name in names)


def test_kimi_k25_scales_an_image_down_to_16384_patches_and_pads_each_side_to_whole_merges():
    # 1024 × 768: 73 × 54 patches of 14 px, within the budget, not scaled; each side padded to a multiple of
    # 2 · 14 = 28 px: 1036 × 784, 74 × 56 patches, merged 2 × 2 into 37 × 28 tokens
    image = flops(str(KIMI_K25), image="1024x768").image
    assert (image.resized_width, image.resized_height) == (1036, 784)
    assert (image.patches, image.image_tokens) == (74 * 56, 37 * 28)
    # 7000 × 7000: 500² patches, scaled by √(16384 / 500²) = 0.256 to 1792 px a side (64 · 28): 128² patches,
    # 64² tokens
    image = flops(str(KIMI_K25), image="7000x7000").image
    assert (image.resized_width, image.patches, image.image_tokens) == (1792, 128 * 128, 64 * 64)
    # 14000 × 14: at most 512 patches along a side (7168 px); the short side padded from 14 to 28 px
    image = flops(str(KIMI_K25), image="14000x14").image
    assert (image.resized_width, image.resized_height, image.image_tokens) == (512 * 14, 28, 256)


def test_one_image_through_moonvit_by_hand():
    image = flops(str(KIMI_K25), image="1024x768").image
    patches, tokens, layers, hidden, inner, heads, head_dim = 4144, 1036, 2, 48, 96, 4, 12
    assert image.patch_embedding == 2 * (3 * 14 * 14 * hidden) * patches
    assert image.attention_projections == layers * 2 * (4 * hidden * hidden) * patches
    assert image.ffn == layers * 2 * (2 * hidden * inner) * patches
    # every patch attends to every patch of its image
    assert image.attention_scores == layers * 2 * heads * (head_dim + head_dim) * patches * patches
    assert image.projector == 2 * (192 * 192 + 192 * 64) * tokens


def test_a_merge_kernel_of_2_by_3_patches_widens_the_projector_and_merges_columns_by_3(write_config):
    config = json.loads(KIMI_K25.read_text())
    config["vision_config"]["merge_kernel_size"] = [2, 3]
    path = str(write_config(config, "kernel"))
    merged = 48 * 2 * 3
    assert account(path).components.projector == 2 * 48 + (merged * merged + merged) + (merged * 64 + 64)
    # 768 px padded to 28 (56 rows of patches), 1024 px to 42 (1050 px, 75 columns): 28 × 25 tokens
    image = flops(path, image="1024x768").image
    assert (image.resized_width, image.resized_height, image.image_tokens) == (1050, 784, 28 * 25)


# --- Gemma 3n: timm's MobileNet-V5 ---------------------------------------------------------------------------------

GEMMA3N = ROOT / "tests" / "configs" / "synthetic__gemma3n_towers.json"


def test_gemma_3n_counts_timms_mobilenet_v5_block_by_block():
    report = account(str(GEMMA3N))
    # timm 1.0.31 builds mobilenetv5_300m_enc with 294,126,912 parameters (transformers' TimmWrapperModel: the same)
    assert report.components.vision == 294_126_912
    blocks = {index: group for group in report.layers if group.stack == "vision" for index in group.indices}
    assert len(blocks) == 3 + 5 + 37 + 39  # the four stages of its arch_def
    # blocks.1.0, "uir_r1_a3_k5_s2_e6_c256" after 128 channels: a 3 × 3 depthwise start (128 · 9, a norm of 128),
    # pw_exp 128 → 768 (6 × 128, a norm of 768), a 5 × 5 depthwise middle (768 · 25, a norm), pw_proj 768 → 256
    # (a norm of 256) and layer_scale.gamma (256)
    uir = (128 * 9 + 128) + (768 * 128 + 768) + (768 * 25 + 768) + (256 * 768 + 256) + 256
    assert blocks[3].params == uir
    # blocks.2.9, "mqa_r1_k3_h12_v2_s1_d64_c640": a norm (640), query 640 → 12 · 64, key and value each a 3 × 3
    # depthwise down_conv with its norm and a projection 640 → 64, output 12 · 64 → 640, layer_scale.gamma (640)
    mqa = 640 + 640 * 768 + 2 * (640 * 9 + 640 + 640 * 64) + 768 * 640 + 640
    assert blocks[3 + 5 + 9].params == mqa


def test_gemma_3n_embeds_each_towers_output_into_the_text_width():
    # Gemma3nMultimodalEmbedder: vocab_size hard tokens × the tower's hidden_size, two RMSNorms of it, a projection
    # into the text hidden (64): vision 16 × 96, audio 8 × 48
    report = account(str(GEMMA3N))
    vision = 16 * 96 + 2 * 96 + 96 * 64
    audio = 8 * 48 + 2 * 48 + 48 * 64
    assert report.components.projector == vision + audio


def test_gemma_3n_names_a_timm_architecture_it_cannot_count_and_counts_the_rest(write_config):
    config = json.loads(GEMMA3N.read_text())
    config["vision_config"]["architecture"] = "resnet50"
    report = account(str(write_config(config, "resnet")))
    assert report.components.vision == 0 and report.components.audio == account(str(GEMMA3N)).components.audio
    assert any("its vision tower: timm's 'resnet50'" in note for note in report.notes)


def test_gemma_3n_image_flops_are_refused_its_tower_is_convolutional():
    with pytest.raises(UsageError, match="convolutional tower"):
        flops(str(GEMMA3N), image="768x768")
