"""GTE, Nomic BERT and Jina Embeddings v3: BERT-shaped encoders with rotary positions and fused projections.

Their totals, components and tensors are held to transformers 5.24 by tests/test_transformers_agreement.py; here each
expected figure is derived by hand from the config's numbers.
"""

from ffncalc import account
from ffncalc.api import load_config
from ffncalc.tensors import checkpoint_tensors

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"


def test_gte_defaults_by_hand(write_config):
    # GteConfig(), GteModel: vocabulary 250,048, H 768, one token type, embeddings LayerNorm 2H, no position table;
    # 12 layers of qkv_proj 3(H² + H), o_proj H² + H, up_gate_proj 2 · H · 3,072 (no bias), down_proj 3,072 · H + H,
    # two LayerNorms.
    hidden, ffn = 768, 3072
    layer = 4 * (hidden * hidden + hidden) + 2 * hidden * ffn + ffn * hidden + hidden + 2 * 2 * hidden
    total = 250048 * hidden + hidden + 2 * hidden + 12 * layer
    assert total == 305_368_320
    assert account(str(write_config({"model_type": "gte"}))).total_params == total


def test_gte_down_projection_alone_has_a_bias():
    tensors = checkpoint_tensors(load_config(str(CONFIGS / "synthetic__gte.json")).spec)
    assert tensors["gte.encoder.layer.0.mlp.up_gate_proj.weight"] == (2 * 96, 64)
    assert "gte.encoder.layer.0.mlp.up_gate_proj.bias" not in tensors
    assert tensors["gte.encoder.layer.0.mlp.down_proj.bias"] == (64,)


def test_gte_without_token_types_has_no_token_type_table():
    report = account(str(CONFIGS / "synthetic__gte_sequence_classification.json"))
    assert not any("token_type" in name for name in report.outside_layers)
    assert report.outside_layers["other.classifier"] == 64 * 3 + 3  # id2label of 3
    assert report.outside_layers["other.gte.pooler.dense"] == 64 * 64 + 64


def test_nomic_bert_defaults_by_hand(write_config):
    # NomicBertConfig(), NomicBertModel: vocabulary 30,528, H 768, 2 token types, emb_ln 2H; 12 layers without
    # biases: Wqkv 3H², out_proj H², fc11, fc12 and fc2 3 · H · 3,072, norm1 and norm2.
    hidden, ffn = 768, 3072
    total = 30528 * hidden + 2 * hidden + 2 * hidden + 12 * (4 * hidden * hidden + 3 * hidden * ffn + 4 * hidden)
    assert total == 136_731_648
    assert account(str(write_config({"model_type": "nomic_bert"}))).total_params == total


def test_nomic_bert_head_dim_sets_the_attention_width():
    # head_dim 24 over 4 heads: Wqkv 3 · 96 × 64 and out_proj 64 × 96, whatever hidden / heads (16) says.
    tensors = checkpoint_tensors(load_config(str(CONFIGS / "synthetic__nomic_bert.json")).spec)
    assert tensors["nomic_bert.encoder.layers.0.attn.Wqkv.weight"] == (3 * 96, 64)
    assert tensors["nomic_bert.encoder.layers.0.attn.out_proj.weight"] == (64, 96)


def test_jina_embeddings_v3_defaults_by_hand(write_config):
    # JinaEmbeddingsV3Config(), JinaEmbeddingsV3Model: vocabulary 250,002, H 1,024, one token type, emb_ln; 24 layers
    # with biases (Wqkv, out_proj, fc1 and fc2 of 4,096, two LayerNorms) and the pooler H² + H. transformers builds
    # none of the published model's task LoRA adapters (its remote code's), so neither does ffncalc.
    hidden, ffn = 1024, 4096
    layer = 4 * (hidden * hidden + hidden) + 2 * hidden * ffn + ffn + hidden + 2 * 2 * hidden
    total = 250002 * hidden + hidden + 2 * hidden + 24 * layer + hidden * hidden + hidden
    assert total == 559_364_096
    assert account(str(write_config({"model_type": "jina_embeddings_v3"}))).total_params == total


def test_jina_untied_decoder_keeps_a_bias_beside_the_heads():
    # JinaEmbeddingsV3ForMaskedLM untied: lm_head.decoder 1,000 × 64 + 1,000, lm_head.bias 1,000, dense 64² + 64.
    report = account(str(CONFIGS / "synthetic__jina_embeddings_v3_untied.json"))
    assert report.components.lm_head == 1000 * 64 + 1000 + 1000 + 64 * 64 + 64
