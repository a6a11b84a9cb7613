"""Every bundled config's total against a published count, where one exists.

PUBLISHED holds counts published for the checkpoints (copied from tests/reference/ground_truth.json,
with where each comes from) and, where the checkpoint stores more than the model's parameters, the
exact difference and why. test_transformers_agreement.py holds every bundled config against
transformers building it; this file is the second, independent source.
"""

import pytest

from ffncalc import account, bundled_models

from .agreement import built


def _qwen3_next_mtp() -> int:
    """Qwen3-Next-80B-A3B's MTP module, from its config: hidden 2,048; attention of 16 heads (q also emits the gate)
    and 2 KV heads of 256 with per-head q/k norms; 512 experts and a shared expert of width 512; its router and
    the shared expert's gate."""
    hidden, head_dim, heads, kv_heads, experts, width = 2048, 256, 16, 2, 512, 512
    attention = (
        hidden * heads * head_dim * 2 + 2 * hidden * kv_heads * head_dim + heads * head_dim * hidden + 2 * head_dim
    )
    moe = experts * 3 * hidden * width + experts * hidden + 3 * hidden * width + hidden
    layer = attention + moe + 2 * hidden  # input and post-attention norms
    return layer + 2 * hidden * hidden + 3 * hidden  # fc, pre_fc_norm_embedding, pre_fc_norm_hidden, norm


QWEN3_NEXT_MTP = _qwen3_next_mtp()  # 1,650,471,424

# model: (published figure, elements the published figure holds that are not parameters, source)
PUBLISHED = {
    "meta-llama/Llama-3.1-8B": (8_030_261_248, 0, "huggingface.js safetensors spec: true size"),
    "meta-llama/Meta-Llama-3-8B": (8_030_261_248, 0, "HF API safetensors BF16"),
    "deepseek-ai/DeepSeek-R1-Distill-Llama-8B": (8_030_261_248, 0, "HF API safetensors BF16"),
    "meta-llama/Llama-3.2-1B": (1_235_814_400, 0, "HF API safetensors BF16, tied head stored once"),
    "context-labs/meta-llama-Llama-3.2-3B-Instruct-FP16": (3_212_749_824, 0, "HF API safetensors BF16"),
    # F16 6,738,415,616 + F32 2,048: the F32 part is 32 layers × 64 rotary inv_freq buffers.
    "meta-llama/Llama-2-7b-hf": (6_738_415_616 + 2_048, 32 * 64, "HF API safetensors F16 + F32"),
    "meta-llama/Llama-3.3-70B-Instruct": (70_553_706_496, 0, "huggingface.js safetensors spec (w4a16 copy, unpacked)"),
    "TinyLlama/TinyLlama-1.1B-Chat-v1.0": (1_100_048_384, 0, "HF API safetensors BF16"),
    "dphn/dolphin-2.9.1-yi-1.5-34b": (34_388_917_248, 0, "HF API safetensors BF16"),
    "ibm-granite/granite-3b-code-instruct-128k": (6_965_007_360 // 2, 0, "index total_size 6,965,007,360 B / 2 (BF16)"),
    "mistralai/Mistral-7B-v0.1": (
        7_241_732_096,
        0,
        "huggingface_hub tests: zephyr-7b-beta, Mistral-7B-v0.1 architecture",
    ),
    "mistralai/Mistral-7B-Instruct-v0.3": (14_496_047_104 // 2, 0, "index total_size 14,496,047,104 B / 2 (BF16)"),
    "Gensyn/Qwen2.5-0.5B-Instruct": (494_032_768, 0, "HF API safetensors BF16"),
    "Qwen/Qwen2.5-0.5B": (494_032_768, 0, "torchinfo 630,167,424 with the tied table twice, 494,032,768 unique"),
    "Qwen/Qwen2.5-1.5B-Instruct": (1_543_714_304, 0, "HF API safetensors BF16"),
    "Qwen/Qwen2.5-3B-Instruct": (3_085_938_688, 0, "HF API safetensors BF16"),
    "Qwen/Qwen2.5-7B-Instruct": (7_615_616_512, 0, "HF API safetensors BF16"),
    "deepseek-ai/DeepSeek-R1-Distill-Qwen-32B": (32_763_876_352, 0, "HF API safetensors BF16"),
    # Tied in the config, yet the checkpoint stores lm_head.weight too: 151,936 × 1,024 more.
    "Qwen/Qwen3-0.6B": (751_632_384, 151_936 * 1_024, "HF API safetensors BF16"),
    "Qwen/Qwen3-32B": (32_762_123_264, 0, "HF API safetensors BF16"),
    "Alibaba-NLP/Tongyi-DeepResearch-30B-A3B": (
        30_532_122_624,
        0,
        "HF API safetensors BF16 (Qwen3-30B-A3B architecture)",
    ),
    "google/gemma-2b-it": (5_012_344_832 // 2, 0, "index total_size 5,012,344,832 B / 2 (BF16)"),
    "google/gemma-2-2b": (2_614_341_888, 0, "third-party table of model.parameters() totals"),
    "google/gemma-3-1b-it": (999_885_952, 0, "HF API safetensors BF16"),
    "microsoft/Phi-3-mini-4k-instruct": (7_642_159_104 // 2, 0, "index total_size 7,642,159,104 B / 2 (BF16)"),
    "microsoft/Phi-3-mini-128k-instruct": (7_642_159_104 // 2, 0, "index total_size / 2 (BF16)"),
    "microsoft/Phi-3.5-mini-instruct": (7_642_159_104 // 2, 0, "index total_size / 2 (BF16)"),
    "microsoft/phi-4": (29_319_014_400 // 2, 0, "index total_size 29,319,014,400 B / 2 (BF16)"),
    # F32 137,022,720 includes 12 attn.bias causal-mask buffers of 1024 × 1024.
    "openai-community/gpt2": (137_022_720, 12 * 1024 * 1024, "HF API safetensors F32"),
    "distilbert/distilgpt2": (88_204_032, 6 * 1024 * 1024, "HF API safetensors F32, 6 mask buffers"),
    "openai/gpt-oss-20b": (20_914_757_184, 0, "huggingface.js: BF16 1,804,459,584 + 19,110,297,600 unpacked FP4"),
    "openai/gpt-oss-120b": (116_829_156_672, 0, "huggingface.js: BF16 2,167,371,072 + 114,661,785,600 unpacked FP4"),
    "bigscience/bloom-560m": (559_214_592, 0, "model card"),
    "bigscience/bloomz-560m": (559_214_592, 0, "HF API safetensors F16"),
    "facebook/opt-125m": (125_239_296, 0, "third-party table of model.parameters() totals"),
    # The config names BertForMaskedLM, which has no pooler and no next-sentence head; the pre-training
    # checkpoint stores both: 768·768 + 768 and 768·2 + 2 = 592,130.
    "google-bert/bert-base-uncased": (
        110_106_428,
        768 * 768 + 768 + 768 * 2 + 2,
        "huggingface.js safetensors spec: F32",
    ),
    # The original T5 checkpoints also store decoder block 0's unused cross-attention relative bias (32 × heads).
    "google-t5/t5-small": (60_506_880, 32 * 8, "HF API safetensors F32"),
    "google-t5/t5-base": (222_903_936, 32 * 12, "HF API safetensors F32"),
    "google-t5/t5-large": (737_668_608, 32 * 16, "HF API safetensors F32"),
    # Saved untied (tie_word_embeddings false), while transformers 5 always ties T5's head: the stored
    # lm_head, 32,128 × d_model, is not a parameter of the model transformers builds.
    "google/flan-t5-small": (76_961_152, 32_128 * 512, "HF API safetensors F32"),
    "google/flan-t5-base": (247_577_856, 32_128 * 768, "HF API safetensors F32"),
    "google/flan-t5-large": (783_150_080, 32_128 * 1024, "HF API safetensors F32"),
    # A tied head stored as well: 65,024 × 4,544 (tie_word_embeddings defaults to true for Falcon).
    "tiiuae/falcon-7b-instruct": (
        14_434_379_520 // 2,
        65_024 * 4_544,
        "pytorch .bin index total_size 14,434,379,520 B / 2",
    ),
    "baidu/ERNIE-4.5-21B-A3B-Thinking": (21_821_012_480 + 4_425_408, 0, "HF API safetensors BF16 + F32 (routers)"),
    # F32 7,936 = the expert bias of 31 MoE layers × 256 experts, set by load balancing, not trained.
    "inclusionAI/Ling-flash-2.0": (102_889_697_280 + 7_936, 31 * 256, "HF API safetensors BF16 + F32"),
    # The checkpoint also stores one multi-token-prediction module (mtp_num_hidden_layers: 1), which transformers
    # does not build: a full-attention layer with the model's MoE, fc (2H → H) and three norms (hidden 2,048).
    "Qwen/Qwen3-Next-80B-A3B-Instruct": (81_324_862_720, QWEN3_NEXT_MTP, "HF API safetensors BF16"),
    # Written by transformers 4.56, which left the head untied (text_config's default); transformers 5 ties it
    # (the wrapper's tie_word_embeddings, default true) and does not use the stored head: 131,072 × 5,120.
    "mistralai/Magistral-Small-2509": (24_011_361_280, 131_072 * 5_120, "HF API safetensors BF16"),
}

BUNDLED = sorted(bundled_models())


BUILT = built()


def test_every_published_model_is_bundled():
    assert set(PUBLISHED) <= set(BUNDLED)


@pytest.mark.parametrize("model", sorted(PUBLISHED))
def test_total_matches_the_published_count(model):
    published, not_parameters, _source = PUBLISHED[model]
    assert account(model).total_params == published - not_parameters


def test_every_bundled_model_has_an_independent_figure():
    """transformers built it, or (custom code transformers does not ship) a count was published."""
    counted_by_transformers = {
        model for model in BUNDLED if "total_params" in BUILT.get(model.replace("/", "__", 1), {})
    }
    assert set(BUNDLED) == counted_by_transformers | set(PUBLISHED)
