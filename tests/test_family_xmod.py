"""X-MOD: RoBERTa with an adapter per language after each layer's MLP, of which a token runs its own.

Totals, components and tensors are held to transformers 5.24 by tests/test_transformers_agreement.py; here each
expected figure is derived by hand from the config's numbers (FlopCounterMode cannot run X-MOD on the meta device:
each language's tokens are picked by their values).
"""

from ffncalc import account, flops

from .conftest import ROOT

CONFIGS = ROOT / "tests" / "configs"
THREE_LANGUAGES = str(CONFIGS / "synthetic__xmod.json")


def test_xmod_holds_an_adapter_per_language_in_every_layer():
    # 3 languages × 2 layers × (dense1 64 → 16 with its bias, dense2 16 → 64 with its bias), under other
    adapter = 64 * 16 + 16 + 16 * 64 + 64
    assert account(THREE_LANGUAGES).components.other == 3 * 2 * adapter


def test_xmod_token_runs_one_adapter_a_layer():
    # per token: 2 layers × one adapter's 2 · (64 · 16 + 16 · 64) FLOPs, and the masked-LM head's dense 2 · 64 · 64
    assert flops(THREE_LANGUAGES, 1).per_token.other == 2 * 2 * (64 * 16 + 16 * 64) + 2 * 64 * 64


def test_xmod_defaults_by_hand(write_config):
    # XmodConfig(), XmodForMaskedLM: BERT-base's shapes (30,522 words, 512 positions, 2 token types) and one adapter
    # (en_XX) of 384 per layer; RoBERTa's head tied to the word table, with its bias.
    vocab, hidden, ffn, bottleneck = 30522, 768, 3072, 384
    layer = 4 * (hidden * hidden + hidden) + 2 * hidden * ffn + ffn + hidden + 2 * 2 * hidden
    adapter = 2 * hidden * bottleneck + bottleneck + hidden
    embeddings = (vocab + 512 + 2) * hidden + 2 * hidden
    head = hidden * hidden + hidden + 2 * hidden + vocab
    assert embeddings + 12 * (layer + adapter) + head == 116_606_010
    assert account(str(write_config({"model_type": "xmod"}))).total_params == 116_606_010
