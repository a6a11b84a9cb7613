"""Properties that must hold for every valid config of every family, and errors for every invalid one.

Random configs come from hypothesis. Valid ones must satisfy the accounting invariants; invalid
ones must give one `Error:` line naming the field, a non-zero exit, no traceback and no hang.
"""

import json
import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ffncalc import count_params, load_spec, supported_model_types
from ffncalc.accounting import model_level_parts
from ffncalc.compute import crossover_context, flops_profile, plateau

from .conftest import run_main

# 150 examples a property in CI (seconds); FFNCALC_EXAMPLES=2000 for a longer hunt.
SETTINGS = settings(
    max_examples=int(os.environ.get("FFNCALC_EXAMPLES", "150")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


@st.composite
def decoder_config(draw, model_type):
    """A small valid config of MODEL_TYPE, with optional fields present or absent at random."""
    kv_heads = draw(st.integers(1, 4))
    heads = kv_heads * draw(st.integers(1, 4))
    head_dim = draw(st.sampled_from([4, 8, 16]))
    layers = draw(st.integers(4 if model_type == "olmo_hybrid" else 1, 6))  # OLMo Hybrid refuses a stack of one kind
    vocab = draw(st.integers(1, 5000))
    config = {
        "model_type": model_type,
        "vocab_size": vocab,
        "pad_token_id": draw(st.one_of(st.none(), st.integers(0, vocab - 1))),
        "hidden_size": heads * head_dim,
        "intermediate_size": draw(st.integers(1, 512)),
        "num_hidden_layers": layers,
        "num_attention_heads": heads,
    }
    if draw(st.booleans()):
        config["num_key_value_heads"] = kv_heads
    if draw(st.booleans()):
        config["head_dim"] = head_dim
    if draw(st.booleans()):
        config["tie_word_embeddings"] = draw(st.booleans())
    if draw(st.booleans()):
        config["sliding_window"] = draw(st.one_of(st.none(), st.integers(1, 4096)))
    if model_type in ("llama",):
        config["attention_bias"] = draw(st.booleans())
        config["mlp_bias"] = draw(st.booleans())
    if model_type in ("gemma2", "gemma3_text", "gpt_oss") and draw(st.booleans()):
        config["layer_types"] = draw(
            st.lists(st.sampled_from(["full_attention", "sliding_attention"]), min_size=layers, max_size=layers)
        )
    if model_type in ("qwen2", "qwen3", "qwen3_moe"):
        config["use_sliding_window"] = draw(st.booleans())
        config["max_window_layers"] = draw(st.integers(0, layers))
    experts = draw(st.integers(1, 8))
    per_token = draw(st.integers(1, experts))
    if model_type in ("mixtral", "gpt_oss", "granitemoe", "phimoe", "llama4_text"):
        config |= {"num_local_experts": experts, "num_experts_per_tok": per_token}
    if model_type == "llama4_text":
        config |= {
            "interleave_moe_layer_step": draw(st.integers(1, 3)),
            "intermediate_size_mlp": draw(st.integers(1, 256)),
        }
    if model_type in ("qwen2_moe", "qwen3_next", "bailing_moe"):
        config |= {
            "num_experts": experts,
            "num_experts_per_tok": per_token,
            "moe_intermediate_size": draw(st.integers(1, 64)),
        }
    if model_type == "qwen2_moe":
        config["shared_expert_intermediate_size"] = draw(st.integers(1, 64))
    if model_type == "qwen3_next":
        config |= {
            "linear_num_key_heads": draw(st.integers(1, 4)),
            "linear_num_value_heads": draw(st.integers(1, 4)),
            "linear_key_head_dim": draw(st.integers(1, 16)),
            "linear_value_head_dim": draw(st.integers(1, 16)),
            "full_attention_interval": draw(st.integers(1, 4)),
            "shared_expert_intermediate_size": draw(st.integers(1, 64)),
        }
    if model_type == "bailing_moe":
        config |= {
            "num_shared_experts": draw(st.integers(0, 2)),
            "first_k_dense_replace": draw(st.integers(0, layers)),
            "use_qk_norm": draw(st.booleans()),
            "moe_router_enable_expert_bias": draw(st.booleans()),
        }
    if model_type == "ernie4_5_moe":
        config |= {
            "moe_num_experts": experts,
            "moe_k": per_token,
            "moe_intermediate_size": draw(st.integers(1, 64)),
            "moe_num_shared_experts": draw(st.integers(0, 2)),
            "moe_layer_start_index": draw(st.integers(0, layers)),
            "moe_layer_interval": draw(st.integers(1, 2)),
        }
    if model_type == "mimo":
        config["num_nextn_predict_layers"] = draw(st.integers(0, 2))
    if model_type in ("ministral", "hunyuan_v1_dense", "hunyuan_v1_moe"):  # transformers cannot build them without
        config["head_dim"] = head_dim
    if model_type == "nemotron":  # nor without num_key_value_heads
        config["num_key_value_heads"] = kv_heads
    if model_type in ("olmo3", "ministral", "cohere2", "exaone4", "exaone_moe", "vaultgemma", "smollm3") and draw(
        st.booleans()
    ):
        config["layer_types"] = draw(
            st.lists(st.sampled_from(["full_attention", "sliding_attention"]), min_size=layers, max_size=layers)
        )
    if model_type in ("exaone4", "exaone_moe") and "layer_types" not in config:
        config["sliding_window"] = draw(st.integers(1, 4096))  # the default layer_types need one
        config["sliding_window_pattern"] = draw(st.integers(1, 4))
    if model_type in ("cohere2", "cohere2_moe"):
        config["sliding_window_pattern"] = draw(st.integers(1, 4))
    if model_type == "smollm3":
        config["use_sliding_window"] = draw(st.booleans())
        config["no_rope_layer_interval"] = draw(st.integers(1, 4))
    if model_type in ("olmoe", "flex_olmo", "cohere2_moe", "exaone_moe"):
        config |= {"num_experts": experts, "num_experts_per_tok": per_token}
    if model_type == "cohere":
        config["use_qk_norm"] = draw(st.booleans())
    if model_type == "cohere2_moe":
        config |= {
            "num_shared_experts": draw(st.integers(0, 2)),
            "first_k_dense_replace": draw(st.integers(0, layers)),
            "prefix_dense_intermediate_size": draw(st.integers(1, 256)),
            "prefix_dense_sliding_window_pattern": draw(st.integers(1, 3)),
            "rms_norm_eps": draw(st.one_of(st.none(), st.just(1e-5))),
        }
    if model_type == "exaone_moe":
        config |= {
            "num_shared_experts": draw(st.integers(0, 2)),
            "first_k_dense_replace": draw(st.integers(0, layers)),
            "moe_intermediate_size": draw(st.integers(1, 64)),
        }
    if model_type == "hunyuan_v1_moe":
        config |= {
            "num_experts": experts,
            "moe_topk": draw(st.lists(st.integers(1, experts), min_size=layers, max_size=layers) | st.just(per_token)),
        }
    if model_type == "dots1":
        config |= {
            "n_routed_experts": experts,
            "num_experts_per_tok": per_token,
            "n_shared_experts": draw(st.integers(1, 2)),
            "moe_intermediate_size": draw(st.integers(1, 64)),
            "first_k_dense_replace": draw(st.integers(0, layers)),
            "max_window_layers": draw(st.integers(0, layers)),
        }
    if model_type == "granitemoeshared":
        config |= {
            "num_local_experts": experts,
            "num_experts_per_tok": per_token,
            "shared_intermediate_size": draw(st.integers(0, 64)),
        }
    if model_type in ("seed_oss", "helium", "arcee", "nemotron", "smollm3", "hunyuan_v1_dense", "ernie4_5", "apertus"):
        config["attention_bias"] = draw(st.booleans())
    if model_type in ("seed_oss", "helium", "arcee", "nemotron", "smollm3"):
        config["mlp_bias"] = draw(st.booleans())
    if model_type == "seed_oss":
        config["attention_out_bias"] = draw(st.booleans())
    if model_type == "olmo":
        config["attention_bias"] = draw(st.booleans())
    if model_type == "starcoder2":
        config["use_bias"] = draw(st.booleans())
    if model_type in ("phi", "stablelm", "persimmon"):
        config["qk_layernorm"] = draw(st.booleans())
    if model_type == "stablelm":
        config |= {"use_qkv_bias": draw(st.booleans()), "use_parallel_residual": draw(st.booleans())}
    if model_type == "ernie4_5":
        config["use_bias"] = draw(st.booleans())
    if model_type == "apertus":
        config["hidden_act"] = draw(st.sampled_from(["xielu", "relu2", "silu"]))
    if model_type == "qwen3_moe":
        config |= {
            "num_experts": experts,
            "num_experts_per_tok": per_token,
            "moe_intermediate_size": draw(st.integers(1, 64)),
            "decoder_sparse_step": draw(st.integers(1, 3)),
            "mlp_only_layers": draw(st.lists(st.integers(0, layers - 1), unique=True, max_size=layers)),
        }
    if model_type in ("deepseek_v3", "kimi_k2", "deepseek_v2", "mistral4"):
        config |= {
            "q_lora_rank": draw(st.one_of(st.none(), st.integers(1, 64))),
            "kv_lora_rank": draw(st.integers(1, 64)),
            "qk_nope_head_dim": draw(st.integers(1, 16)),
            "qk_rope_head_dim": draw(st.integers(1, 16)),
            "v_head_dim": draw(st.integers(1, 16)),
            "n_routed_experts": experts,
            "num_experts_per_tok": per_token,
            "n_shared_experts": draw(st.integers(0, 2)),
            "moe_intermediate_size": draw(st.integers(1, 64)),
            "first_k_dense_replace": draw(st.integers(0, layers)),
            "moe_layer_freq": draw(st.integers(1, 2)),
            "num_nextn_predict_layers": draw(st.integers(0, 1)),
        }
    if model_type in ("qwen3_5_text", "qwen3_5_moe_text"):
        config |= {
            "linear_num_key_heads": draw(st.integers(1, 4)),
            "linear_num_value_heads": draw(st.integers(1, 4)),
            "linear_key_head_dim": draw(st.integers(1, 16)),
            "linear_value_head_dim": draw(st.integers(1, 16)),
            "full_attention_interval": draw(st.integers(1, 4)),
            "mtp_num_hidden_layers": draw(st.integers(0, 2)),
        }
    if model_type in ("qwen3_5_moe_text", "qwen3_vl_moe_text"):
        config |= {
            "num_experts": experts,
            "num_experts_per_tok": per_token,
            "moe_intermediate_size": draw(st.integers(1, 64)),
        }
    if model_type == "qwen3_5_moe_text":
        config["shared_expert_intermediate_size"] = draw(st.integers(1, 64))
    if model_type == "qwen3_vl_moe_text":
        config |= {
            "decoder_sparse_step": draw(st.integers(1, 3)),
            "mlp_only_layers": draw(st.lists(st.integers(0, layers - 1), unique=True, max_size=layers)),
        }
    if model_type in ("qwen2_5_vl_text", "qwen2_vl_text"):
        config["use_sliding_window"] = draw(st.booleans())
        config["max_window_layers"] = draw(st.integers(0, layers))
    if model_type in ("glm4_moe", "minimax", "minimax_m2", "glm", "glm4") and draw(st.booleans()):
        config["pad_token_id"] = None  # their default padding row (151329) is past a small vocabulary
    if model_type in ("glm", "glm4", "glm4_moe", "glm4v_moe_text"):
        config["attention_bias"] = draw(st.booleans())
    if model_type in ("glm4_moe", "glm4v_moe_text"):
        config |= {
            "n_routed_experts": experts,
            "num_experts_per_tok": per_token,
            "n_shared_experts": draw(st.integers(0, 2)),
            "moe_intermediate_size": draw(st.integers(1, 64)),
            "first_k_dense_replace": draw(st.integers(0, layers)),
            "use_qk_norm": draw(st.booleans()),
            "num_nextn_predict_layers": draw(st.integers(0, 1)),
        }
    if model_type in ("deepseek_v32", "glm4_moe_lite", "glm_moe_dsa", "kimi_linear"):
        config |= {
            "kv_lora_rank": draw(st.integers(1, 64)),
            "qk_nope_head_dim": draw(st.integers(1, 16)),
            "qk_rope_head_dim": 2 * draw(st.integers(1, 8)),
            "v_head_dim": draw(st.integers(1, 16)),
            "num_experts_per_tok": per_token,
            "n_shared_experts": draw(st.integers(0, 2)),
            "moe_intermediate_size": draw(st.integers(1, 64)),
            "mlp_layer_types": draw(
                st.none() | st.lists(st.sampled_from(["dense", "sparse"]), min_size=layers, max_size=layers)
            ),
        }
        config["q_lora_rank"] = (
            draw(st.integers(1, 64))
            if model_type in ("deepseek_v32", "glm_moe_dsa")
            else draw(st.none() | st.integers(1, 64))
        )
        config["num_local_experts" if model_type == "kimi_linear" else "n_routed_experts"] = experts
    if model_type in ("deepseek_v32", "glm_moe_dsa"):
        config |= {
            "index_topk": draw(st.integers(1, 4096)),
            "index_head_dim": draw(st.integers(1, 32)),
            "index_n_heads": draw(st.integers(1, 8)),
            "first_k_dense_replace": draw(st.integers(0, layers)),
        }
    if model_type == "glm_moe_dsa":
        config |= {"index_topk_freq": draw(st.integers(1, 3)), "index_skip_topk_offset": draw(st.integers(0, 3))}
    if model_type == "kimi_linear":
        config |= {
            "linear_num_heads": draw(st.integers(1, 4)),
            "linear_head_dim": draw(st.integers(1, 16)),
            "first_k_dense_replace": draw(st.integers(0, layers)),
            "layer_types": draw(
                st.none()
                | st.lists(st.sampled_from(["full_attention", "linear_attention"]), min_size=layers, max_size=layers)
            ),
        }
    if model_type in ("minimax", "minimax_m2"):
        config |= {"num_local_experts": experts, "num_experts_per_tok": per_token}
    if model_type == "minimax":
        config |= {
            "block_size": draw(st.integers(1, 64)),
            "layer_types": draw(
                st.none()
                | st.lists(st.sampled_from(["full_attention", "linear_attention"]), min_size=layers, max_size=layers)
            ),
        }
    if model_type == "gemma4_text":
        kinds = draw(
            st.lists(st.sampled_from(["full_attention", "sliding_attention"]), min_size=layers, max_size=layers)
        )
        config |= {
            "layer_types": kinds,
            "sliding_window": draw(st.integers(1, 4096)),
            "num_kv_shared_layers": draw(kv_shared_layers(kinds[:-1] + ["full_attention"], all_may_share=True)),
            "hidden_size_per_layer_input": draw(st.integers(0, 16)),
            "vocab_size_per_layer_input": draw(st.integers((config["pad_token_id"] or 0) + 1, 5000)),
            "global_head_dim": draw(st.sampled_from([4, 8, 16, 32])),
            "attention_k_eq_v": draw(st.booleans()),
            "use_double_wide_mlp": draw(st.booleans()),
            "use_bidirectional_attention": draw(st.sampled_from([None, "all", "vision"])),
        }
        if draw(st.booleans()):
            config["num_global_key_value_heads"] = draw(st.integers(1, 4))
        if draw(st.booleans()):
            config |= {
                "enable_moe_block": True,
                "num_experts": experts,
                "top_k_experts": per_token,
                "moe_intermediate_size": draw(st.integers(1, 64)),
            }
    if model_type == "gemma3n_text":
        kinds = draw(
            st.lists(st.sampled_from(["full_attention", "sliding_attention"]), min_size=layers, max_size=layers)
        )
        config |= {
            "layer_types": kinds,
            "sliding_window": draw(st.integers(1, 4096)),
            "num_kv_shared_layers": draw(kv_shared_layers(kinds)),
            "hidden_size_per_layer_input": draw(st.integers(0, 16)),
            "vocab_size_per_layer_input": draw(st.integers((config["pad_token_id"] or 0) + 1, 5000)),
            "altup_num_inputs": draw(st.integers(1, 4)),
            "laurel_rank": draw(st.integers(0, 16)),
        }
        if draw(st.booleans()):
            config["intermediate_size"] = draw(st.lists(st.integers(1, 512), min_size=layers, max_size=layers))
        if draw(st.booleans()):
            config["activation_sparsity_pattern"] = draw(
                st.lists(st.sampled_from([0.0, 0.95]), min_size=layers, max_size=layers)
            )
    if model_type == "mimo_v2_flash":
        config |= {
            "n_routed_experts": experts,
            "num_experts_per_tok": per_token,
            "moe_intermediate_size": draw(st.integers(1, 64)),
            "v_head_dim": draw(st.integers(1, 16)),
            "attention_bias": draw(st.booleans()),
            "sliding_window": draw(st.integers(1, 4096)),
            "sliding_window_size": draw(st.none() | st.integers(0, 4096)),
            "layer_types": draw(
                st.none()
                | st.lists(st.sampled_from(["full_attention", "sliding_attention"]), min_size=layers, max_size=layers)
            ),
            "mlp_layer_types": draw(
                st.none() | st.lists(st.sampled_from(["dense", "sparse"]), min_size=layers, max_size=layers)
            ),
        }
    if model_type == "longcat_flash":
        del config["num_hidden_layers"]  # a property of the config: 2 · num_layers
        zero = draw(st.integers(0, 4))
        config |= {
            "num_layers": layers,
            "n_routed_experts": experts,
            "zero_expert_num": zero,
            "moe_topk": draw(st.integers(1, experts + zero)),
            "expert_ffn_hidden_size": draw(st.integers(1, 64)),
            "q_lora_rank": draw(st.integers(1, 64)),
            "kv_lora_rank": draw(st.integers(1, 64)),
            "qk_nope_head_dim": draw(st.integers(1, 32)),
            "qk_rope_head_dim": 2 * draw(st.integers(1, 16)),
            "v_head_dim": draw(st.integers(1, 32)),
            "attention_bias": draw(st.booleans()),
            "router_bias": draw(st.booleans()),
        }
    if model_type == "deepseek_v4":
        kinds = ["sliding_attention", "compressed_sparse_attention", "heavily_compressed_attention"]
        config |= {
            "sliding_window": draw(st.integers(1, 4096)),
            "q_lora_rank": draw(st.integers(1, 64)),
            "n_routed_experts": experts,
            "num_experts_per_tok": per_token,
            "mlp_bias": draw(st.booleans()),
            "o_groups": draw(st.integers(1, 4)),
            "o_lora_rank": draw(st.integers(1, 32)),
            "hc_mult": draw(st.integers(1, 4)),
            "index_n_heads": draw(st.integers(1, 4)),
            "index_head_dim": draw(st.integers(1, 16)),
            "index_topk": draw(st.integers(1, 4096)),
            "compress_rates": {kinds[1]: draw(st.integers(1, 8)), kinds[2]: draw(st.integers(1, 256))},
            "layer_types": draw(st.none() | st.lists(st.sampled_from(kinds), min_size=layers, max_size=layers + 1)),
            "mlp_layer_types": draw(
                st.none() | st.lists(st.sampled_from(["hash_moe", "moe"]), min_size=layers, max_size=layers)
            ),
        }
    return config


@st.composite
def kv_shared_layers(draw, kinds, all_may_share=False):
    """A num_kv_shared_layers transformers accepts for layer kinds KINDS: the layers before the shared ones hold
    every kind (Gemma 4 also lets every layer share)."""
    count = len(kinds)
    valid = [
        n for n in range(count + 1) if n == 0 or set(kinds[: count - n]) == set(kinds) or (all_may_share and n == count)
    ]
    return draw(st.sampled_from(valid))


@st.composite
def gpt2_config(draw):
    heads = draw(st.integers(1, 8))
    return {
        "model_type": "gpt2",
        "vocab_size": draw(st.integers(1, 5000)),
        "n_embd": heads * draw(st.integers(1, 16)),
        "n_layer": draw(st.integers(1, 6)),
        "n_head": heads,
        "n_positions": draw(st.integers(1, 2048)),
        "n_inner": draw(st.one_of(st.none(), st.integers(1, 512))),
    }


@st.composite
def layer_norm_config(draw, model_type):
    """GPT-J, BLOOM, Falcon, OPT, GPT-NeoX and DBRX, each with its own field names."""
    heads = draw(st.integers(1, 8))
    hidden = heads * draw(st.integers(1, 16))
    layers = draw(st.integers(1, 6))
    vocab = draw(st.integers(1, 5000))
    width = draw(st.integers(1, 512))
    if model_type == "gptj":
        return {
            "model_type": "gptj",
            "vocab_size": vocab,
            "n_embd": hidden,
            "n_layer": layers,
            "n_head": heads,
            "n_inner": draw(st.one_of(st.none(), st.just(width))),
            "tie_word_embeddings": draw(st.booleans()),
        }
    if model_type == "bloom":
        return {"model_type": "bloom", "vocab_size": vocab, "n_embed": hidden, "n_layer": layers, "n_head": heads}
    if model_type == "falcon":
        return {
            "model_type": "falcon",
            "vocab_size": vocab,
            "hidden_size": hidden,
            "num_hidden_layers": layers,
            "num_attention_heads": heads,
            "multi_query": draw(st.booleans()),
            "new_decoder_architecture": draw(st.booleans()),
            "parallel_attn": draw(st.booleans()),
            "bias": draw(st.booleans()),
            "num_kv_heads": draw(st.sampled_from([d for d in range(1, heads + 1) if heads % d == 0])),
        }
    if model_type == "opt":
        return {
            "model_type": "opt",
            "vocab_size": vocab,
            "hidden_size": hidden,
            "num_hidden_layers": layers,
            "num_attention_heads": heads,
            "ffn_dim": width,
            "max_position_embeddings": draw(st.integers(1, 4096)),
            "word_embed_proj_dim": draw(st.integers(1, 128)),
            "do_layer_norm_before": draw(st.booleans()),
        }
    if model_type == "gpt_neox":
        return {
            "model_type": "gpt_neox",
            "vocab_size": vocab,
            "hidden_size": hidden,
            "num_hidden_layers": layers,
            "num_attention_heads": heads,
            "intermediate_size": width,
            "attention_bias": draw(st.booleans()),
        }
    if model_type == "dbrx":
        experts = draw(st.integers(1, 8))
        return {
            "model_type": "dbrx",
            "vocab_size": vocab,
            "d_model": hidden,
            "n_heads": heads,
            "n_layers": layers,
            "attn_config": {"kv_n_heads": draw(st.sampled_from([d for d in range(1, heads + 1) if heads % d == 0]))},
            "ffn_config": {
                "ffn_hidden_size": width,
                "moe_num_experts": experts,
                "moe_top_k": draw(st.integers(1, experts)),
            },
        }
    if model_type == "gpt_neo":
        kinds = draw(st.lists(st.sampled_from(["global", "local"]), min_size=layers, max_size=layers))
        return {
            "model_type": "gpt_neo",
            "vocab_size": vocab,
            "hidden_size": hidden,
            "num_layers": layers,
            "num_heads": heads,
            "attention_types": [[[kind], 1] for kind in kinds],
            "window_size": draw(st.integers(0, 512)),
            "intermediate_size": draw(st.one_of(st.none(), st.just(width))),
            "max_position_embeddings": draw(st.integers(1, 2048)),
            "tie_word_embeddings": draw(st.booleans()),
        }
    if model_type == "codegen":
        return {
            "model_type": "codegen",
            "vocab_size": vocab,
            "n_embd": hidden,
            "n_layer": layers,
            "n_head": heads,
            "n_inner": draw(st.one_of(st.none(), st.just(width))),
            "tie_word_embeddings": draw(st.booleans()),
        }
    if model_type == "gpt_bigcode":
        multi_query = draw(st.booleans())
        return {
            "model_type": "gpt_bigcode",
            "vocab_size": vocab,
            "n_embd": hidden,
            "n_layer": layers,
            "n_head": heads,
            "n_inner": draw(st.one_of(st.none(), st.just(width))),
            "n_positions": draw(st.integers(1, 2048)),
            "multi_query": multi_query,
            "add_cross_attention": not multi_query and draw(st.booleans()),
            "tie_word_embeddings": draw(st.booleans()),
        }
    if model_type == "mpt":
        return {
            "model_type": "mpt",
            "vocab_size": vocab,
            "d_model": hidden,
            "n_heads": heads,
            "n_layers": layers,
            "expansion_ratio": draw(st.integers(1, 8)),
            "no_bias": draw(st.booleans()),
            "tie_word_embeddings": draw(st.booleans()),
        }
    assert model_type == "nemotron_h"
    experts = draw(st.integers(1, 8))
    return {
        "model_type": "nemotron_h",
        "vocab_size": vocab,
        "hidden_size": hidden,
        "intermediate_size": width,
        "num_attention_heads": heads,
        "num_key_value_heads": 1,
        "attention_head_dim": draw(st.integers(1, 32)),
        "hybrid_override_pattern": draw(st.text(alphabet="M*-E", min_size=1, max_size=8)),
        "mamba_num_heads": draw(st.integers(1, 8)),
        "mamba_head_dim": draw(st.integers(1, 16)),
        "n_groups": 1,
        "ssm_state_size": draw(st.integers(1, 32)),
        "n_routed_experts": experts,
        "num_experts_per_tok": draw(st.integers(1, experts)),
        "moe_intermediate_size": draw(st.integers(1, 64)),
        "moe_shared_expert_intermediate_size": draw(st.integers(1, 64)),
    }


@st.composite
def encoder_config(draw, model_type):
    """BERT, and T5 / mT5 with their encoder and decoder stacks."""
    heads = draw(st.integers(1, 8))
    vocab, layers = draw(st.integers(1, 5000)), draw(st.integers(1, 4))
    if model_type == "bert":
        return {
            "model_type": "bert",
            "vocab_size": vocab,
            "hidden_size": heads * draw(st.integers(1, 16)),
            "num_hidden_layers": layers,
            "num_attention_heads": heads,
            "intermediate_size": draw(st.integers(1, 256)),
            "max_position_embeddings": draw(st.integers(1, 1024)),
            "type_vocab_size": draw(st.integers(1, 4)),
        }
    if model_type in BERT_LINEAGE or model_type in SEQ2SEQ:
        return draw(bert_lineage_config(model_type, heads, vocab, layers))
    return {
        "model_type": model_type,
        "vocab_size": vocab,
        "d_model": draw(st.integers(1, 128)),
        "d_kv": draw(st.integers(1, 32)),
        "d_ff": draw(st.integers(1, 256)),
        "num_layers": layers,
        "num_decoder_layers": draw(st.integers(1, 4)),
        "num_heads": heads,
        "feed_forward_proj": draw(st.sampled_from(["relu", "gated-gelu"])),
        "tie_word_embeddings": draw(st.booleans()),
    }


# The classes each encoder family builds (their heads differ), after the family's class prefix.
ENCODER_CLASSES = [
    "Model",
    "ForMaskedLM",
    "ForSequenceClassification",
    "ForMultipleChoice",
    "ForTokenClassification",
    "ForQuestionAnswering",
]
BERT_LINEAGE = {
    "roberta": "Roberta",
    "xlm-roberta": "XLMRoberta",
    "electra": "Electra",
    "distilbert": "DistilBert",
    "deberta-v2": "DebertaV2",
    "modernbert": "ModernBert",
}
SEQ2SEQ = {
    "bart": (
        "Bart",
        ["Model", "ForConditionalGeneration", "ForSequenceClassification", "ForQuestionAnswering", "ForCausalLM"],
    ),
    "mbart": (
        "MBart",
        ["Model", "ForConditionalGeneration", "ForSequenceClassification", "ForQuestionAnswering", "ForCausalLM"],
    ),
    "marian": ("Marian", ["Model", "MTModel", "ForCausalLM"]),
    "pegasus": ("Pegasus", ["Model", "ForConditionalGeneration", "ForCausalLM"]),
}


@st.composite
def bert_lineage_config(draw, model_type, heads, vocab, layers):
    """RoBERTa, XLM-RoBERTa, ELECTRA, DistilBERT, DeBERTa-v2, ModernBERT, and the BART family's encoder-decoders:
    any class of the family (its heads), tied or not, with the options of each configuration class."""
    hidden, width = heads * draw(st.integers(1, 16)), draw(st.integers(1, 256))
    config = {"model_type": model_type, "vocab_size": vocab, "tie_word_embeddings": draw(st.booleans())}
    labels = draw(st.one_of(st.none(), st.integers(1, 5)))
    if model_type in SEQ2SEQ:
        prefix, classes = SEQ2SEQ[model_type]
        decoder_vocab = draw(st.integers(1, 5000)) if model_type == "marian" else vocab
        config |= {
            "architectures": [prefix + draw(st.sampled_from(classes))],
            "d_model": hidden,
            "encoder_layers": layers,
            "decoder_layers": draw(st.integers(1, 4)),
            "encoder_attention_heads": heads,
            "decoder_attention_heads": draw(st.sampled_from([d for d in range(1, heads + 1) if heads % d == 0])),
            "encoder_ffn_dim": width,
            "decoder_ffn_dim": draw(st.integers(1, 256)),
            "max_position_embeddings": draw(st.integers(1, 1024)),
            "pad_token_id": draw(st.one_of(st.none(), st.integers(0, min(vocab, decoder_vocab) - 1))),
        }
        if model_type == "marian":
            config |= {"decoder_vocab_size": decoder_vocab, "share_encoder_decoder_embeddings": draw(st.booleans())}
        return config | ({"num_labels": labels} if labels else {})
    cls = draw(st.sampled_from(ENCODER_CLASSES))
    pad = draw(st.one_of(st.none(), st.integers(0, vocab - 1)))
    config |= {"architectures": [BERT_LINEAGE[model_type] + cls], "pad_token_id": pad}
    if labels and not (
        model_type == "distilbert" and cls == "ForQuestionAnswering"
    ):  # DistilBERT answers with 2 labels
        config["num_labels"] = labels
    if model_type == "distilbert":
        return config | {
            "dim": hidden,
            "n_heads": heads,
            "n_layers": layers,
            "hidden_dim": width,
            "max_position_embeddings": draw(st.integers(1, 1024)),
            "sinusoidal_pos_embds": draw(st.booleans()),
        }
    config |= {
        "hidden_size": hidden,
        "num_hidden_layers": layers,
        "num_attention_heads": heads,
        "intermediate_size": width,
    }
    if model_type == "modernbert":
        return config | {
            "layer_types": draw(
                st.none()
                | st.lists(st.sampled_from(["full_attention", "sliding_attention"]), min_size=layers, max_size=layers)
            ),
            "global_attn_every_n_layers": draw(st.integers(1, 4)),
            "local_attention": draw(st.integers(1, 256)),
            "norm_bias": draw(st.booleans()),
            "attention_bias": draw(st.booleans()),
            "mlp_bias": draw(st.booleans()),
            "decoder_bias": draw(st.booleans()),
            "classifier_bias": draw(st.booleans()),
        }
    config["max_position_embeddings"] = draw(
        st.integers((pad or 0) + 1, (pad or 0) + 1024)
    )  # RoBERTa pads positions too
    if model_type == "deberta-v2":
        return config | {
            "type_vocab_size": draw(st.integers(0, 2)),
            "relative_attention": draw(st.booleans()),
            "position_buckets": draw(st.integers(-1, 64)),
            "max_relative_positions": draw(st.integers(-1, 64)),
            "pos_att_type": draw(st.sampled_from([None, "p2c|c2p", "c2p", "p2c", ["c2p", "p2c"]])),
            "share_att_key": draw(st.booleans()),
            "norm_rel_ebd": draw(st.sampled_from(["none", "layer_norm"])),
            "position_biased_input": draw(st.booleans()),
            "embedding_size": draw(st.none() | st.integers(1, 64)),
            "attention_head_size": draw(st.none() | st.integers(1, 16)),
            "conv_kernel_size": draw(st.integers(0, 3)),
            "conv_groups": draw(st.sampled_from([d for d in range(1, heads + 1) if hidden % d == 0])),
            "legacy": draw(st.booleans()),
        }
    decoder = draw(st.booleans())
    config |= {
        "type_vocab_size": draw(st.integers(1, 4)),
        "is_decoder": decoder,
        "add_cross_attention": decoder and draw(st.booleans()),
    }
    if model_type == "electra":
        config |= {
            "embedding_size": draw(st.integers(1, 64)),
            "summary_use_proj": draw(st.booleans()),
            "summary_proj_to_labels": draw(st.booleans()),
        }
    return config


@st.composite
def preset_config(draw):
    """ffncalc's own format: any layout, norm and bias choice."""
    heads = draw(st.integers(1, 8))
    return {
        "model_type": "ffncalc",
        "title": "generated",
        "layout": draw(st.sampled_from(["decoder", "encoder-decoder"])),
        "vocab_size": draw(st.integers(1, 5000)),
        "hidden_size": heads * draw(st.integers(1, 16)),
        "num_layers": draw(st.integers(1, 4)),
        "num_decoder_layers": draw(st.integers(1, 4)),
        "num_heads": heads,
        "ffn_size": draw(st.integers(1, 256)),
        "gated": draw(st.booleans()),
        "attention_bias": draw(st.booleans()),
        "ffn_bias": draw(st.booleans()),
        "norm": draw(st.sampled_from(["layernorm", "rmsnorm"])),
        "final_norm": draw(st.booleans()),
        "learned_positions": draw(st.integers(0, 2048)),
        "tie_word_embeddings": draw(st.booleans()),
    }


@st.composite
def wrapper_config(draw, model_type, text_model_type):
    """A multimodal wrapper around a generated text config, with or without the text config's model_type."""
    text = draw(
        state_space_config(text_model_type) if text_model_type in STATE_SPACE else decoder_config(text_model_type)
    )
    if draw(st.booleans()):
        del text["model_type"]
    config = {"model_type": model_type, "text_config": text}
    if draw(st.booleans()):
        config["tie_word_embeddings"] = draw(st.booleans())
    if model_type == "kimi_k25" and draw(st.booleans()):  # a small MoonViT (else the default one)
        heads = draw(st.integers(1, 4))
        hidden = heads * draw(st.integers(1, 16))
        config["vision_config"] = {
            "hidden_size": hidden,
            "num_attention_heads": heads,
            "num_hidden_layers": draw(st.integers(1, 3)),
            "intermediate_size": draw(st.integers(1, 64)),
            "patch_size": draw(st.integers(1, 16)),
            "pos_emb_height": draw(st.integers(1, 8)),
            "pos_emb_width": draw(st.integers(1, 8)),
            "merge_kernel_size": draw(st.lists(st.integers(1, 3), min_size=2, max_size=2)),
        }
        config["projection_hidden_size"] = hidden
    if (
        model_type == "aya_vision"
    ):  # a small SigLIP: its default one (1152 over 14 heads) is refused, as transformers does
        heads = draw(st.integers(1, 4))
        config["vision_config"] = {
            "hidden_size": heads * draw(st.integers(1, 16)),
            "num_attention_heads": heads,
            "num_hidden_layers": draw(st.integers(1, 2)),
            "intermediate_size": draw(st.integers(1, 64)),
            "image_size": 56,
            "patch_size": 14,
            "vision_use_head": draw(st.booleans()),
        }
        config["downsample_factor"] = draw(st.integers(1, 2))
    if model_type in ("gemma4", "gemma3n") and draw(st.booleans()):  # a small audio tower (Gemma 4: else none)
        heads = draw(st.integers(1, 4))
        config["audio_config"] = {
            "hidden_size": heads * draw(st.integers(1, 8)),
            "num_attention_heads": heads,
            "num_hidden_layers": draw(st.integers(1, 2)),
            "conf_num_attention_heads": heads,
            "conf_num_hidden_layers": draw(st.integers(1, 2)),
            "input_feat_size": draw(st.integers(4, 64)),
            "use_clipped_linears": draw(st.booleans()),
        }
    return config


@st.composite
def state_space_config(draw, model_type):
    """The state-space models and hybrids (Mamba, Mamba-2, Falcon-Mamba/H1, Jamba, Bamba, GraniteMoeHybrid, Zamba2,
    LFM2, LFM2-MoE, RecurrentGemma), each with the field names and constraints of its configuration class."""
    layers, vocab = draw(st.integers(1, 5)), draw(st.integers(1, 5000))
    heads, kv_heads, head_dim = draw(st.sampled_from([(4, 2), (4, 4), (2, 1), (3, 3)])) + (
        draw(st.sampled_from([4, 8, 16])),
    )
    hidden = heads * head_dim
    config = {
        "model_type": model_type,
        "vocab_size": vocab,
        "hidden_size": hidden,
        "num_hidden_layers": layers,
        "tie_word_embeddings": draw(st.booleans()),
    }
    kinds = st.lists(st.booleans(), min_size=layers, max_size=layers)  # True: the layer attends
    experts = draw(st.integers(1, 6))
    if model_type in ("mamba", "falcon_mamba"):
        config |= {
            "state_size": draw(st.integers(1, 16)),
            "expand": draw(st.integers(1, 3)),
            "conv_kernel": draw(st.integers(1, 5)),
            "use_bias": draw(st.booleans()),
            "use_conv_bias": draw(st.booleans()),
            "time_step_rank": draw(st.sampled_from(["auto", 1, 7])),
        }
        if draw(st.booleans()):
            config["intermediate_size"] = draw(st.integers(1, 128))
        return config
    if model_type == "mamba2":
        expand = draw(st.integers(1, 2))
        mamba_heads, mamba_head_dim = draw(st.integers(1, 8)), 2 * draw(st.integers(1, 8))
        return config | {
            "hidden_size": mamba_heads * mamba_head_dim // expand,
            "expand": expand,
            "num_heads": mamba_heads,
            "head_dim": mamba_head_dim,
            "n_groups": draw(st.integers(1, 4)),
            "state_size": draw(st.integers(1, 16)),
            "conv_kernel": draw(st.integers(1, 5)),
            "use_bias": draw(st.booleans()),
            "use_conv_bias": draw(st.booleans()),
        }
    mamba_heads = draw(st.sampled_from([1, 2, 4]))
    mamba = {
        "mamba_d_state": draw(st.integers(1, 16)),
        "mamba_d_conv": draw(st.integers(1, 5)),
        "mamba_expand": draw(st.integers(1, 3)),
        "mamba_conv_bias": draw(st.booleans()),
        "mamba_proj_bias": draw(st.booleans()),
    }
    attention = {
        "num_attention_heads": heads,
        "num_key_value_heads": kv_heads,
        "intermediate_size": draw(st.integers(1, 256)),
    }
    if model_type in ("falcon_h1", "bamba", "granitemoehybrid"):
        config |= attention | mamba | {"mamba_n_heads": mamba_heads, "mamba_n_groups": draw(st.integers(1, 3))}
        if draw(st.booleans()):
            config["head_dim"] = draw(st.integers(1, 32))
    if model_type == "falcon_h1":
        config |= {
            "mamba_d_ssm": draw(st.none() | st.builds(lambda n: mamba_heads * n, st.integers(1, 16))),
            "mamba_rms_norm": draw(st.booleans()),
            "projectors_bias": draw(st.booleans()),
            "attention_bias": draw(st.booleans()),
            "mlp_bias": draw(st.booleans()),
        }
    if model_type == "bamba":
        config |= {
            "attn_layer_indices": [i for i, attends in enumerate(draw(kinds)) if attends],
            "attention_bias": draw(st.booleans()),
            "mlp_bias": draw(st.booleans()),
        }
    if model_type == "granitemoehybrid":
        config |= {
            "layer_types": ["full_attention" if attends else "linear_attention" for attends in draw(kinds)],
            "num_local_experts": draw(st.integers(0, 6)),
            "num_experts_per_tok": draw(st.integers(1, 6)),
            "shared_intermediate_size": draw(st.integers(0, 64)),
            "attention_bias": draw(st.booleans()),
        }
        config["num_experts_per_tok"] = min(config["num_experts_per_tok"], config["num_local_experts"] or 1)
    if model_type == "jamba":
        attn_period, expert_period = draw(st.integers(1, 4)), draw(st.integers(1, 4))
        config |= (
            attention
            | mamba
            | {
                "attn_layer_period": attn_period,
                "attn_layer_offset": draw(st.integers(0, attn_period - 1)),
                "expert_layer_period": expert_period,
                "expert_layer_offset": draw(st.integers(0, expert_period - 1)),
                "num_experts": experts,
                "num_experts_per_tok": draw(st.integers(1, experts)),
                "mamba_dt_rank": draw(st.sampled_from(["auto", 1, 5])),
            }
        )
    if model_type == "zamba2":
        blocks = draw(
            st.lists(st.sampled_from(["mamba", "linear_attention", "hybrid"]), min_size=layers, max_size=layers)
        )
        config |= attention | {
            "layers_block_type": blocks,
            "num_mem_blocks": draw(st.integers(1, 3)),
            "n_mamba_heads": draw(st.integers(1, 4)),
            "mamba_d_state": draw(st.integers(1, 16)),
            "mamba_d_conv": draw(st.integers(1, 5)),
            "mamba_expand": draw(st.integers(1, 2)),
            "mamba_ngroups": draw(st.integers(1, 2)),
            "use_shared_attention_adapter": draw(st.booleans()),
            "adapter_rank": draw(st.integers(1, 8)),
            "add_bias_linear": draw(st.booleans()),
        }
        config["tie_word_embeddings"] = True  # transformers 5.24 shares the blocks only with tied embeddings
    if model_type in ("lfm2", "lfm2_moe"):
        config |= attention | {
            "conv_bias": draw(st.booleans()),
            "conv_L_cache": draw(st.integers(1, 5)),
            "layer_types": ["full_attention" if attends else "conv" for attends in draw(kinds)],
        }
    if model_type == "lfm2":
        config |= {
            "block_auto_adjust_ff_dim": draw(st.booleans()),
            "block_multiple_of": draw(st.integers(1, 64)),
            "block_ffn_dim_multiplier": draw(st.sampled_from([1.0, 1.5, 0.75])),
        }
        if draw(st.booleans()):
            config["full_attn_idxs"] = [i for i, attends in enumerate(draw(kinds)) if attends]
            del config["layer_types"]
    if model_type == "lfm2_moe":
        config |= {
            "num_dense_layers": draw(st.integers(0, layers)),
            "num_experts": experts,
            "num_experts_per_tok": draw(st.integers(1, experts)),
            "moe_intermediate_size": draw(st.integers(1, 64)),
            "use_expert_bias": draw(st.booleans()),
        }
    if model_type == "recurrent_gemma":
        config |= {
            "num_attention_heads": heads,
            "num_key_value_heads": kv_heads,
            "intermediate_size": draw(st.integers(1, 256)),
            "lru_width": draw(st.none() | st.builds(lambda n: heads * n, st.integers(1, 16))),
            "attention_window_size": draw(st.integers(1, 4096)),
            "conv1d_width": draw(st.integers(1, 5)),
            "block_types": draw(st.lists(st.sampled_from(["recurrent", "attention"]), min_size=1, max_size=3)),
            "attention_bias": draw(st.booleans()),
        }
    return config


WRAPPERS = {
    "gemma3": "gemma3_text",
    "mistral3": "mistral",
    "llama4": "llama4_text",
    "gemma4": "gemma4_text",
    "gemma3n": "gemma3n_text",
}
WRAPPERS |= {
    "qwen3_5": "qwen3_5_text",
    "qwen3_5_moe": "qwen3_5_moe_text",
    "qwen3_vl": "qwen3_vl_text",
    "qwen3_vl_moe": "qwen3_vl_moe_text",
    "qwen2_5_vl": "qwen2_5_vl_text",
    "qwen2_vl": "qwen2_vl_text",
}
WRAPPERS |= {"llava": "llama", "llava_next": "llama", "paligemma": "gemma", "idefics3": "llama", "smolvlm": "llama"}
WRAPPERS |= {"internvl": "qwen2", "aya_vision": "cohere2", "lfm2_vl": "lfm2"}
WRAPPERS |= {"glm4v": "glm4v_text", "glm4v_moe": "glm4v_moe_text", "glm46v": "glm4v_moe_text"}
WRAPPERS |= {"kimi_k25": "deepseek_v3"}
ENCODERS = {"bert", "t5", "mt5"} | set(BERT_LINEAGE) | set(SEQ2SEQ)
OWN_FIELD_NAMES = {
    "gptj",
    "bloom",
    "falcon",
    "opt",
    "gpt_neox",
    "dbrx",
    "nemotron_h",
    "gpt_neo",
    "codegen",
    "gpt_bigcode",
    "mpt",
}
GENERATORS = {"gpt2": gpt2_config(), "ffncalc": preset_config()} | {
    model_type: encoder_config(model_type)
    if model_type in ENCODERS
    else layer_norm_config(model_type)
    if model_type in OWN_FIELD_NAMES
    else wrapper_config(model_type, WRAPPERS[model_type])
    if model_type in WRAPPERS
    else decoder_config(model_type)
    for model_type in supported_model_types()
    if model_type not in ("gpt2", "ffncalc")
}
STATE_SPACE = {
    "mamba",
    "falcon_mamba",
    "mamba2",
    "falcon_h1",
    "jamba",
    "bamba",
    "granitemoehybrid",
    "zamba2",
    "lfm2",
    "lfm2_moe",
    "recurrent_gemma",
}
GENERATORS |= {model_type: state_space_config(model_type) for model_type in STATE_SPACE}
any_valid_config = st.one_of(*GENERATORS.values())


def test_every_supported_family_is_generated():
    assert set(GENERATORS) == set(supported_model_types()) | {"ffncalc"}


@SETTINGS
@given(any_valid_config)
def test_total_is_the_sum_of_components_and_of_its_parts(config):
    spec = load_spec(config, "generated")
    report = count_params(spec)
    assert report.total_params == report.components.total
    layers = sum(group.params * len(group.indices) for group in report.layers)
    # outside the layers: token and position tables, final norm, head, extras (BLOOM's embedding norm, BERT's heads)
    outside = sum(part.params for part in model_level_parts(spec))
    assert report.total_params == layers + outside
    for stack in {layer.stack for layer in spec.layers}:
        in_stack = sum(layer.stack == stack for layer in spec.layers)
        indices = sorted(index for group in report.layers if group.stack == stack for index in group.indices)
        assert indices == list(range(in_stack))
    for group in report.layers:
        assert group.params == sum(group.parts.values()) == group.components.total


@SETTINGS
@given(any_valid_config)
def test_active_never_exceeds_total(config):
    report = count_params(load_spec(config, "generated"))
    if report.active_params is not None:
        assert 0 < report.active_params <= report.total_params
        assert report.active_params_without_embedding <= report.active_params


@SETTINGS
@given(any_valid_config, st.lists(st.integers(1, 1 << 20), min_size=2, max_size=8))
def test_per_token_flops_never_decrease_with_context(config, contexts):
    profile = flops_profile(load_spec(config, "generated"))
    totals = [profile.fixed + profile.growing(n) for n in sorted(contexts)]
    assert totals == sorted(totals)


@SETTINGS
@given(any_valid_config)
def test_the_crossover_is_where_the_curves_meet(config):
    profile = flops_profile(load_spec(config, "generated"))
    n_star = crossover_context(profile)
    if n_star is None:  # windows cap attention below the FFN, or nothing attends at all
        assert plateau(profile) < profile.ffn or not profile.slopes
        return
    ceil = -((-n_star.numerator) // n_star.denominator)
    assert profile.growing(ceil) >= profile.ffn
    if ceil > 1:
        assert profile.growing(ceil - 1) < profile.ffn
    if n_star.denominator == 1:  # the curves meet there, or a compressed term steps past the FFN there
        steps = any(n_star % rate == 0 for (rate, _), _ in profile.compressed)
        assert profile.growing(int(n_star)) == profile.ffn or n_star == 0 or steps


# --- invalid input ---------------------------------------------------------------------------

SIZE_FIELDS = ["vocab_size", "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads"]
BAD_SIZES = st.one_of(
    st.booleans(),
    st.text(max_size=5),
    st.integers(max_value=0),
    st.integers(min_value=1 << 40),
    st.floats(allow_nan=False, allow_infinity=False),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=2), st.integers(), max_size=2),
    st.none(),
)


def run_on_text(text: str | bytes):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "config.json"
        path.write_bytes(text if isinstance(text, bytes) else text.encode())
        return run_main("params", str(path), "--json")


def assert_one_line_error(run):
    assert run.exit_code != 0
    assert run.stdout == ""
    assert run.stderr.startswith("Error: ")
    assert run.stderr.count("\n") == 1
    assert "Traceback" not in run.stderr


@SETTINGS
@given(st.sampled_from(SIZE_FIELDS), BAD_SIZES, st.sampled_from(["llama", "qwen3", "gemma2", "deepseek_v3", "gpt_oss"]))
def test_a_bad_size_is_an_error_naming_the_field(field, value, model_type):
    config = {
        "model_type": model_type,
        "vocab_size": 100,
        "hidden_size": 64,
        "intermediate_size": 64,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
    }
    config[field] = value
    run = run_on_text(json.dumps(config))
    assert_one_line_error(run)
    assert field in run.stderr


@SETTINGS
@given(st.sampled_from(SIZE_FIELDS))
def test_a_missing_size_takes_transformers_default_and_is_listed(field):
    config = {
        "model_type": "llama",
        "vocab_size": 100,
        "hidden_size": 64,
        "intermediate_size": 64,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
    }
    del config[field]
    run = run_on_text(json.dumps(config))
    assert run.exit_code == 0
    assert field in [default["field"] for default in run.json()["defaults_used"]]


@SETTINGS
@given(st.binary(max_size=200))
def test_arbitrary_bytes_never_crash(blob):
    run = run_on_text(blob)
    if run.exit_code == 0:  # bytes that happen to be a valid config are fine
        json.loads(run.stdout)
    else:
        assert_one_line_error(run)


@SETTINGS
@given(
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.text(max_size=4),
        lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    )
)
def test_arbitrary_json_never_crashes(value):
    run = run_on_text(json.dumps(value))
    assert_one_line_error(run)


def test_nan_and_infinity_are_refused_where_a_size_belongs():
    for constant in ("NaN", "Infinity", "-Infinity"):
        config = (
            f'{{"model_type": "llama", "vocab_size": 100, "hidden_size": {constant}, "intermediate_size": 64, '
            '"num_hidden_layers": 2, "num_attention_heads": 4}'
        )
        run = run_on_text(config)
        assert_one_line_error(run)
        assert f"hidden_size: must be a valid integer (got {constant})" in run.stderr


def test_deep_nesting_is_refused_before_parsing():
    run = run_on_text("[" * 100_000 + "]" * 100_000)
    assert_one_line_error(run)
    assert "nested deeper than 64 levels" in run.stderr


def test_a_50_mb_file_is_refused_before_parsing():
    run = run_on_text(b'{"model_type": "' + b"x" * (50 * 1024 * 1024) + b'"}')
    assert_one_line_error(run)
    assert "is too large for a config.json (limit 4,194,304)" in run.stderr


def test_a_list_at_the_top_level_is_refused():
    run = run_on_text("[]")
    assert_one_line_error(run)
    assert "the JSON is a list, not an object" in run.stderr


def test_non_utf8_bytes_are_refused():
    run = run_on_text(b'{"model_type": "\xff"}')
    assert_one_line_error(run)
    assert "not UTF-8 text" in run.stderr
