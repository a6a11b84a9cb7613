"""The BERT lineage's pre-LN descendants and CamemBERT: Megatron-BERT, RoBERTa-PreLayerNorm, XLM-RoBERTa-XL.

Their totals, components and tensors are held to transformers 5.24 by tests/test_transformers_agreement.py (the
synthetic configs and the defaults); here each expected figure is derived by hand from the config's numbers.
"""

from ffncalc import account
from ffncalc.api import load_config
from ffncalc.tensors import checkpoint_tensors

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"


def layer(hidden: int, ffn: int) -> int:
    """A BERT layer: q, k, v, o H² + H each; up H · I + I; down I · H + H; two LayerNorms 2H each."""
    return 4 * (hidden * hidden + hidden) + hidden * ffn + ffn + ffn * hidden + hidden + 2 * 2 * hidden


def test_xlm_roberta_xl_defaults_by_hand(write_config):
    # XLMRobertaXLConfig(): H 2,560, 36 layers, FFN 10,240, vocabulary 250,880, 514 positions, one token type, no
    # LayerNorm on the embeddings, one after the last layer (2H); the masked-LM head: dense H² + H, layer_norm 2H,
    # its bias V, the decoder tied.
    hidden, vocab = 2560, 250880
    embeddings = vocab * hidden + 514 * hidden + 1 * hidden
    total = embeddings + 36 * layer(hidden, 10240) + 2 * hidden + hidden * hidden + hidden + 2 * hidden + vocab
    assert total == 3_482_741_760
    assert account(str(write_config({"model_type": "xlm-roberta-xl"}))).total_params == total


def test_megatron_bert_defaults_by_hand(write_config):
    # MegatronBertConfig(): H 1,024, 24 layers, FFN 4,096, vocabulary 29,056, 512 positions, 2 token types, no
    # embeddings LayerNorm, encoder.ln (2H); MegatronBertForPreTraining: pooler H² + H, the transform H² + H and its
    # LayerNorm 2H, the decoder's bias V (tied weight), seq_relationship 2H + 2.
    hidden, vocab = 1024, 29056
    embeddings = vocab * hidden + 512 * hidden + 2 * hidden
    heads = (hidden * hidden + hidden) * 2 + 2 * hidden + vocab + 2 * hidden + 2
    total = embeddings + 24 * layer(hidden, 4096) + 2 * hidden + heads
    assert total == 334_723_458
    assert account(str(write_config({"model_type": "megatron-bert"}))).total_params == total


def test_megatron_bert_keeps_its_norms_before_each_sublayer_and_after_the_last():
    tensors = checkpoint_tensors(account_spec("synthetic__megatron_bert.json"))
    assert tensors["bert.encoder.layer.1.attention.ln.weight"] == (64,)
    assert tensors["bert.encoder.layer.1.ln.bias"] == (64,)
    assert tensors["bert.encoder.ln.weight"] == (64,)
    assert not any(name.startswith("bert.embeddings.LayerNorm") for name in tensors)


def test_a_pre_ln_decoder_normalises_before_cross_attention():
    # MegatronBertForCausalLM with add_cross_attention: crossattention.ln beside the four projections (4 · (64² + 64)).
    report = account(str(CONFIGS / "synthetic__megatron_bert_decoder_untied.json"))
    assert report.components.cross_attention == 2 * 4 * (64 * 64 + 64)
    tensors = checkpoint_tensors(account_spec("synthetic__megatron_bert_decoder_untied.json"))
    assert tensors["bert.encoder.layer.0.crossattention.ln.weight"] == (64,)


def test_roberta_prelayernorm_holds_its_last_norm_on_the_model():
    # RobertaPreLayerNormModel: the final LayerNorm is the model's own (LayerNorm, no prefix in the bare model); the
    # embeddings keep theirs; with cross-attention, crossattention.LayerNorm.
    tensors = checkpoint_tensors(account_spec("synthetic__roberta_prelayernorm_model.json"))
    assert tensors["LayerNorm.weight"] == (64,)
    assert tensors["embeddings.LayerNorm.bias"] == (64,)
    assert tensors["encoder.layer.0.intermediate.LayerNorm.weight"] == (64,)
    assert tensors["encoder.layer.0.crossattention.LayerNorm.weight"] == (64,)


def test_roberta_prelayernorm_masked_lm_by_hand():
    # H 64, 2 layers, FFN 96, vocabulary 1,000, 66 positions, 2 token types; embeddings LayerNorm 2H, final 2H;
    # lm_head dense H² + H, layer_norm 2H, bias V.
    hidden, vocab = 64, 1000
    embeddings = vocab * hidden + 66 * hidden + 2 * hidden + 2 * hidden
    total = embeddings + 2 * layer(hidden, 96) + 2 * hidden + hidden * hidden + hidden + 2 * hidden + vocab
    assert account(str(CONFIGS / "synthetic__roberta_prelayernorm.json")).total_params == total == 132_584


def test_camembert_sequence_classifier_is_robertas():
    # CamembertForSequenceClassification, 3 labels: classifier.dense 64² + 64 and out_proj 64 · 3 + 3, no pooler.
    report = account(str(CONFIGS / "synthetic__camembert_sequence_classification.json"))
    assert report.outside_layers["other.classifier.dense"] == 64 * 64 + 64
    assert report.outside_layers["other.classifier.out_proj"] == 64 * 3 + 3
    assert report.model_class == "CamembertForSequenceClassification"


def account_spec(name: str):
    """The spec ffncalc builds from a test config."""
    return load_config(str(CONFIGS / name)).spec
