"""ShieldGemma 2: Gemma 3's model (a SigLIP tower, Gemma3MultiModalProjector, a Gemma 3 text model) read from
ShieldGemma2Config, whose head ties when its text model's does; ShieldGemma2ForImageClassification holds it as
its module model.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/synthetic__shieldgemma2.json: 253,280; synthetic__shieldgemma2_untied.json: 148,640;
defaults__shieldgemma2.json: 2,723,312,896).
"""

from ffncalc import account
from ffncalc.api import flops, load_config
from ffncalc.tensors import checkpoint_tensors

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"
CLASSIFIER = str(CONFIGS / "synthetic__shieldgemma2.json")
UNTIED = str(CONFIGS / "synthetic__shieldgemma2_untied.json")


def test_shieldgemma2_counts_gemma3s_text_model_tower_and_projector_by_hand():
    report = account(CLASSIFIER)
    # Gemma 3 text: hidden 64, 3 layers of 4 heads (2 KV) of 16, MLP 160, four RMSNorms a layer and q/k norms of 16
    layer = 2 * 64 * 64 + 2 * 64 * 32 + 3 * 64 * 160 + 4 * 64 + 2 * 16
    # vocabulary 400; text_config's tie_word_embeddings (Gemma 3's default, true) ties the wrapper (default false)
    assert report.language_model_params == 3 * layer + 64 + 400 * 64
    assert report.components.lm_head == 0
    # SigLIP: a biased 16 × 16 convolution into 48, 4 × 4 positions (64 / 16), 2 layers (q, k, v, out_proj with
    # biases; fc1 48 → 96, fc2; two LayerNorms with biases), post_layernorm, and the pooling head (SiglipVisionConfig
    # has vision_use_head true: probe, in_proj 48 → 144, out_proj, a LayerNorm, fc1, fc2)
    siglip_layer = 4 * (48 * 48 + 48) + (48 * 96 + 96) + (96 * 48 + 48) + 2 * 2 * 48
    head = 48 + (144 * 48 + 144) + (48 * 48 + 48) + 2 * 48 + (48 * 96 + 96) + (96 * 48 + 48)
    assert report.components.vision == (48 * 3 * 16 * 16 + 48) + 16 * 48 + 2 * siglip_layer + 2 * 48 + head
    # the projector: an RMSNorm of 48, then mm_input_projection_weight [48, 64]
    assert report.components.projector == 48 + 48 * 64


def test_a_text_model_that_does_not_tie_leaves_shieldgemma2_untied():
    report = account(UNTIED)
    # text_config says tie_word_embeddings false and the wrapper's own default is false: lm_head is 300 × 64
    assert report.components.lm_head == 300 * 64


def test_the_image_text_to_text_class_saves_its_parts_as_shieldgemma2s_prefix_change_reverts_them():
    tensors = checkpoint_tensors(load_config(UNTIED).spec)
    assert tensors["model.language_model.model.layers.1.self_attn.k_proj.weight"] == (32, 64)
    assert tensors["model.vision_tower.embeddings.patch_embedding.weight"] == (32, 3, 16, 16)
    assert tensors["model.multi_modal_projector.mm_input_projection_weight"] == (32, 64)
    assert tensors["lm_head.weight"] == (300, 64)


def test_the_image_classifier_keeps_the_whole_model_one_level_deeper():
    tensors = checkpoint_tensors(load_config(CLASSIFIER).spec)
    assert tensors["model.model.language_model.model.embed_tokens.weight"] == (400, 64)
    assert tensors["model.model.vision_tower.head.probe"] == (1, 1, 48)
    assert tensors["model.model.multi_modal_projector.mm_soft_emb_norm.weight"] == (48,)
    assert not any(name.startswith(("model.language_model", "lm_head")) for name in tensors)


def test_an_image_is_pooled_to_mm_tokens_per_image_as_gemma3s_by_hand():
    # 64 × 64 px (image_size): 4 × 4 patches of 16 px through 2 SigLIP layers, average-pooled to 4 tokens
    image = flops(CLASSIFIER, image="640x480").image
    patches, tokens, width = 16, 4, 48
    assert (image.resized_width, image.patches, image.image_tokens) == (64, patches, tokens)
    assert image.patch_embedding == 2 * (3 * 16 * 16 * width) * patches
    assert image.attention_projections == 2 * 2 * (4 * width * width) * patches
    assert image.ffn == 2 * 2 * (2 * width * 96) * patches
    assert image.projector == 2 * (48 * 64) * tokens
