"""Llama 3.2 Vision (mllama): a Llama decoder whose cross-attention layers read one image's tiles, a two-stage ViT
over the tiles, and a linear projector.

Every expected figure is derived by hand from the config's numbers; transformers 5.24 builds the same
(tests/expected/transformers/synthetic__mllama.json: 287,723; synthetic__mllama_causal_lm.json: 195,810;
defaults__mllama.json: 10,642,941,475).
"""

from ffncalc import account
from ffncalc.api import flops

from .conftest import ROOT

CONFIG = str(ROOT / "tests" / "configs" / "synthetic__mllama.json")
CAUSAL_LM = str(ROOT / "tests" / "configs" / "synthetic__mllama_causal_lm.json")

# text: 64 wide, 4 heads of 16, 2 key-value heads, a SwiGLU MLP of 96, no biases
PROJECTIONS = 64 * 64 + 64 * 32 + 64 * 32 + 64 * 64  # q, k, v, o
MLP = 3 * 64 * 96
SELF_LAYER = PROJECTIONS + MLP + 2 * 64  # two RMSNorms
CROSS_LAYER = PROJECTIONS + 2 * 16 + 2 + MLP + 2 * 64  # + q_norm, k_norm over a head, two scalar gates
TABLES = (320 + 8) * 64 + 320 * 64 + 64  # 328 token rows, a head of 320 (never tied), the final norm


def test_mllamas_language_model_holds_cross_attention_layers_where_listed_by_hand():
    # cross_attention_layers [1, 3] of 5: three self-attention layers, two cross-attention ones
    report = account(CONFIG)
    assert report.components.cross_attention == 2 * PROJECTIONS
    assert report.language_model_params == 3 * SELF_LAYER + 2 * CROSS_LAYER + TABLES == 195844


def test_mllamas_token_table_has_eight_rows_more_than_its_head_by_hand():
    report = account(CONFIG)
    assert (report.components.embedding, report.components.lm_head) == (328 * 64, 320 * 64)


def test_mllamas_vision_tower_by_hand():
    # 32 wide, 2 heads, fc 48; 56 / 14 = 4 patches a side: 17 positions a tile, 4 tiles, 8 aspect ratios (9 rows)
    layer = 4 * 32 * 32 + (32 * 48 + 48) + (48 * 32 + 32) + 2 * 2 * 32  # q, k, v, o unbiased; biased MLP; LayerNorms
    tables = 9 * (4 * 17 * 32) + 2 * (9 * 4 * 32)  # gated position tile table; pre and post tile tables
    embeddings = 3 * 14 * 14 * 32 + 32 + 17 * 32 + tables + 3  # patch convolution, class token, positions, 3 gates
    vision = 4 * layer + 2 * (layer + 2) + embeddings + 2 * 2 * 32  # global layers' two gates; layernorm_pre, _post
    assert account(CONFIG).components.vision == vision == 85671


def test_mllamas_projector_reads_the_concatenated_features_by_hand():
    # vision_output_dim 96 (the last layer's 32 and two intermediate layers') → 64, biased
    assert account(CONFIG).components.projector == 96 * 64 + 64 == 6208


def test_a_text_token_cross_attends_to_one_images_tiles_by_hand():
    # self-attention over 8 keys in 3 layers; cross-attention over 4 tiles × 17 positions in 2; 2 · heads · (16 + 16)
    # FLOPs a key
    per_key = 2 * 4 * (16 + 16)
    assert flops(CONFIG, context=8).per_token.attention_scores == (3 * 8 + 2 * 4 * 17) * per_key


def test_a_text_token_projects_only_the_cross_attentions_queries_and_outputs_by_hand():
    # k and v of a cross-attention layer run once per image key, not per text token
    assert flops(CONFIG, context=8).per_token.attention_projections == 2 * (3 * PROJECTIONS + 2 * 2 * 64 * 64)


def test_mllama_for_causal_lm_is_the_language_model_alone_by_hand():
    # cross_attention_layers [2]: four self-attention layers and one cross-attention layer, no tower
    report = account(CAUSAL_LM)
    assert (report.components.vision, report.components.projector) == (0, 0)
    assert report.total_params == 4 * SELF_LAYER + CROSS_LAYER + TABLES == 195810


def test_mllamas_default_config_by_transformers_count(write_config):
    assert account(str(write_config({"model_type": "mllama"}))).total_params == 10642941475
