"""`ffncalc params meta-llama/Llama-3.1-8B`: the reference figures of the brief, worked by hand.

Llama-3.1-8B: hidden 4096, FFN 14336, 32 layers, 32 heads of 128, 8 KV heads, vocab 128256, untied.
"""

from ffncalc import account

MODEL = "meta-llama/Llama-3.1-8B"

FFN_PER_LAYER = 3 * 4096 * 14336  # gate, up, down = 176,160,768
ATTENTION_PER_LAYER = 4096 * 4096 + 4096 * 1024 + 4096 * 1024 + 4096 * 4096  # q, k, v, o = 41,943,040
EMBEDDINGS = 128256 * 4096  # 525,336,576, and the same again for the untied head
NORMS = 65 * 4096  # two per layer + the final one = 266,240


def test_hand_derived_figures_are_the_briefs():
    assert FFN_PER_LAYER == 176_160_768
    assert ATTENTION_PER_LAYER == 41_943_040
    assert 2 * EMBEDDINGS == 1_050_673_152
    assert NORMS == 266_240


def test_total_is_the_published_count():
    # huggingface.js parse-safetensors-metadata.spec.ts asserts 8,030,261,248 for Llama-3.1-8B.
    assert account(MODEL).total_params == 8_030_261_248


def test_components_add_up_to_the_hand_derivation():
    components = account(MODEL).components
    assert components.ffn == 32 * FFN_PER_LAYER == 5_637_144_576
    assert components.attention == 32 * ATTENTION_PER_LAYER == 1_342_177_280
    assert components.embedding == EMBEDDINGS
    assert components.lm_head == EMBEDDINGS
    assert components.norm == NORMS
    assert components.other == 0


def test_every_layer_has_one_structure_with_the_per_layer_figures():
    (group,) = account(MODEL).layers
    assert group.indices == list(range(32))
    assert group.components.ffn == FFN_PER_LAYER
    assert group.components.attention == ATTENTION_PER_LAYER
    assert group.parts == {
        "attention.q": 4096 * 4096,
        "attention.k": 4096 * 1024,
        "attention.v": 4096 * 1024,
        "attention.o": 4096 * 4096,
        "ffn.gate": 4096 * 14336,
        "ffn.up": 4096 * 14336,
        "ffn.down": 14336 * 4096,
        "norm.input_layernorm": 4096,
        "norm.post_attention_layernorm": 4096,
    }
    assert group.attention_kind == "gqa"
    assert group.activation == "SwiGLU"


def test_dense_model_has_no_active_count():
    report = account(MODEL)
    assert report.moe is None
    assert report.active_params is None


def test_table_shows_components_with_shares_and_total(ffncalc):
    run = ffncalc("params", MODEL)
    assert run.exit_code == 0, run.stderr
    lines = [" ".join(line.split()) for line in run.stdout.splitlines()]
    # Shares: 5,637,144,576 / 8,030,261,248 = 70.2%; 1,342,177,280 / … = 16.7%; 1,050,673,152 / … = 13.1%.
    assert "FFN 5,637,144,576 70.2%" in lines
    assert "Attention 1,342,177,280 16.7%" in lines
    assert "Embeddings + output head 1,050,673,152 13.1%" in lines
    assert "Norms 266,240 0.0033%" in lines
    assert "Total 8,030,261,248 100.0%" in lines


def test_table_shows_per_layer_ffn_and_attention(ffncalc):
    lines = [" ".join(line.split()) for line in ffncalc("params", MODEL).stdout.splitlines()]
    assert "0–31 32 GQA SwiGLU 218,112,000 6,979,584,000" in lines  # 41,943,040 + 176,160,768 + 2 · 4,096
    assert "FFN 176,160,768" in lines
    assert "Attention 41,943,040" in lines


def test_json_has_the_stable_fields_as_exact_integers(ffncalc):
    run = ffncalc("params", MODEL, "--json")
    assert run.exit_code == 0
    document = run.json()
    assert document["model"] == MODEL
    assert document["model_type"] == "llama"
    assert document["total_params"] == 8_030_261_248
    assert document["components"] == {
        "ffn": 5_637_144_576,
        "attention": 1_342_177_280,
        "cross_attention": 0,
        "mixer": 0,
        "embedding": 525_336_576,
        "lm_head": 525_336_576,
        "norm": 266_240,
        "vision": 0,
        "audio": 0,
        "projector": 0,
        "other": 0,
    }
    assert document["language_model_params"] == 8_030_261_248
    assert document["model_class"] == "LlamaForCausalLM"
    # Llama-3.1-8B's config gives no head_dim: LlamaConfig derives it, and the JSON says so.
    assert document["defaults_used"] == [
        {"field": "head_dim", "value": 128, "rule": "hidden_size // num_attention_heads"}
    ]
    assert document["layers"][0]["params"] == 218_112_000
    assert document["active_params"] is None
