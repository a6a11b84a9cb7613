"""ModernVBERT and UltraVBERT: a SigLIP tower, a pixel-shuffling connector, and a masked-LM encoder built bare with the
wrapper's own prediction head and decoder.

Totals, components and tensors are held to transformers 5.24 by tests/test_transformers_agreement.py, and a forward
pass's FLOPs to FlopCounterMode by tests/test_flops.py; here each expected figure is derived by hand.
"""

from ffncalc import account, flops, load_config
from ffncalc.tensors import checkpoint_tensors

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"
MODERNVBERT = str(CONFIGS / "synthetic__modernvbert.json")
ULTRAVBERT = str(CONFIGS / "synthetic__ultravbert.json")

# SiglipVisionConfig's defaults: hidden 768, 12 layers, MLP 3,072, patches of 16 over 224 px (196 positions)
SIGLIP_LAYER = 4 * (768 * 768 + 768) + 768 * 3072 + 3072 + 3072 * 768 + 768 + 2 * 2 * 768
SIGLIP = 768 * 3 * 16 * 16 + 768 + 196 * 768 + 12 * SIGLIP_LAYER + 2 * 768
# its attention-pooling head: probe, in_proj (3 · 768 · 768 + biases), out_proj, LayerNorm, MLP
SIGLIP_HEAD = 768 + 3 * 768 * 768 + 3 * 768 + 768 * 768 + 768 + 2 * 768 + 768 * 3072 + 3072 + 3072 * 768 + 768


def test_modernvbert_defaults_by_hand(write_config):
    # ModernVBertConfig(), ModernVBertForMaskedLM: ModernBertModel's defaults (V 50,368, H 768, 22 layers of Wqkv
    # 768 · 2,304, Wo 768², Wi 768 · 2,304, Wo 1,152 · 768, norms without biases, none before layer 0's attention),
    # SigLIP's default tower with its pooling head, the connector 768 · 4² → 768, projection_head (dense 768², no bias,
    # a norm), and lm_head untied (tie_word_embeddings false) with decoder_bias's 50,368.
    vocab, hidden, ffn = 50368, 768, 1152
    layer = hidden * 3 * hidden + hidden * hidden + hidden * 2 * ffn + ffn * hidden
    text = vocab * hidden + hidden + 22 * layer + (2 * 22 - 1) * hidden + hidden
    head = hidden * hidden + hidden + vocab * hidden + vocab
    total = text + SIGLIP + SIGLIP_HEAD + 768 * 16 * hidden + head
    assert total == 290_659_264
    assert account(str(write_config({"model_type": "modernvbert"}))).total_params == total


def test_ultravbert_defaults_by_hand(write_config):
    # UltraVBertConfig(), UltraVBertForMaskedLM: UltrabertModel's defaults (V 32,000, H 4,096, 32 layers of q, k, v, o
    # H² and a gated MLP 3 · H · 11,008, two RMSNorms; a final RMSNorm), SigLIP's default tower without its pooling
    # head (vision_use_head false), the connector 768 · 4² → H and its RMSNorm, projection_head (H ↔ 768, no biases)
    # and lm_head untied, no bias.
    vocab, hidden = 32000, 4096
    text = vocab * hidden + 32 * (4 * hidden * hidden + 3 * hidden * 11008 + 2 * hidden) + hidden
    total = text + SIGLIP + 768 * 16 * hidden + hidden + 2 * hidden * 768 + vocab * hidden
    assert total == 6_880_839_936
    assert account(str(write_config({"model_type": "ultravbert"}))).total_params == total


def test_the_encoder_is_stored_bare_under_text_model():
    tensors = checkpoint_tensors(load_config(MODERNVBERT).spec)
    assert tensors["model.text_model.embeddings.tok_embeddings.weight"] == (1000, 64)
    assert tensors["model.text_model.layers.2.attn.Wqkv.weight"] == (192, 64)
    assert tensors["projection_head.dense.bias"] == (64,)  # the text model's classifier_bias
    assert tensors["lm_head.weight"] == (1000, 64)


def test_ultravbert_head_is_stored_as_its_checkpoints_name_it():
    # transformers saves projection_head as head and lm_head as head.decoder (its conversion mapping)
    tensors = checkpoint_tensors(load_config(ULTRAVBERT).spec)
    assert tensors["head.linear1.weight"] == (48, 64)
    assert tensors["head.decoder.weight"] == (1000, 64)
    assert tensors["model.connector.norm.weight"] == (64,)


def test_pixel_shuffle_merges_four_patches_into_one_token():
    # synthetic__modernvbert: 64 px at patch 16 is 4 × 4 patches; pixel_shuffle_factor 2 makes 4 tokens, each
    # 32 · 2² = 128 wide, projected to 64
    image = flops(MODERNVBERT, 8, image="640x480").image
    assert (image.resized_width, image.patches, image.image_tokens) == (64, 16, 4)
    assert image.projector == 2 * 128 * 64 * 4
    assert account(MODERNVBERT).components.projector == 128 * 64


def test_a_text_token_runs_the_encoder_and_the_head_only():
    # per token: 3 layers of Wqkv 2 · 64 · 192, Wo 2 · 64², Wi 2 · 64 · 192, Wo 2 · 96 · 64; the head 2 · 64² (other)
    # and the decoder 2 · 1,000 · 64
    report = flops(MODERNVBERT, 8).per_token
    assert report.attention_projections == 3 * 2 * (64 * 192 + 64 * 64) == 98_304
    assert report.ffn == 3 * 2 * (64 * 192 + 96 * 64) == 110_592
    assert (report.other, report.lm_head) == (2 * 64 * 64, 2 * 1000 * 64)


def test_a_classifier_reads_the_prediction_head_in_modernvbert_and_nothing_in_ultravbert():
    modern = account(str(CONFIGS / "synthetic__modernvbert_tied_sequence_classification.json"))
    assert modern.outside_layers["other.head.dense"] == 64 * 64
    assert modern.outside_layers["other.classifier"] == 64 * 3 + 3
    ultra = account(str(CONFIGS / "synthetic__ultravbert_tied_token_classification.json"))
    assert ultra.outside_layers["other.classifier"] == 64 * 5 + 5
    assert "other.head.linear1" not in ultra.outside_layers
