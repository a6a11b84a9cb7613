"""Which of transformers' model_types ffncalc counts, task by task, and why the others are not counted.

The tasks are transformers' own auto mappings (causal LM, image-text-to-text, masked LM, seq2seq LM, speech
seq2seq), listed in transformers_tasks.json by tools/transformers_tasks.py. A model_type in several mappings
(BERT is a causal LM and a masked LM) counts in each.
"""

from __future__ import annotations

import json
from pathlib import Path

from .results import Result

TASK_TITLES = {
    "text": "Text (causal language models)",
    "vision-language": "Vision-language (image-text-to-text)",
    "encoder": "Encoders (masked language models)",
    "encoder-decoder": "Encoder-decoders (seq2seq language models)",
    "speech": "Speech (speech-to-text)",
}

# Why a model_type of transformers' mappings is known but not counted, where there is more to say than "not yet".
NOT_COUNTED_REASONS: dict[str, str] = {
    "ernie4_5_vl_moe": "each MoE layer (mlp_layer_types 'sparse': 27 of the default 28) holds two routed expert sets, "
    "each with its own router and e_score_correction_bias: text_moe (num_experts 64 of moe_intermediate_size[0], "
    "1536), run by text tokens, and vision_moe (64 of moe_intermediate_size[1], 512), run by image and video tokens "
    "(moe_mm_token_type_ids), beside the shared experts every token runs; ffncalc's spec has one routed set a layer, "
    "so a text token's active parameters cannot be stated yet. Its vision tower (a linear patch embedding, then "
    "Qwen2-VL-style blocks) and its resampler (spatial_linear over 2 × 2 merged patches, temporal_linear over 2 "
    "frames, an image's one frame duplicated) are laid out by no adapter yet either",
    # Attention whose keys per query ffncalc's spec (a whole context, a sliding window, chunks, a top-k indexer or
    # compressed entries) cannot state: the FLOPs against context would be wrong, so none of them is counted.
    "mra": "its multi-resolution attention scores all keys at a coarse resolution (blocks of 32) and reads "
    "block_per_row blocks per row at full resolution, picked from the values, which ffncalc's spec cannot express yet; "
    "transformers runs it only through CUDA kernels it fetches from the Hub (kernels-community/mra), and without them "
    "mra2_attention returns zeros, so no count of its FLOPs can be checked on the CPU or the meta device",
    "blt": "it reads bytes: a local encoder over each byte (with hashed n-gram embeddings) cross-attends into "
    "patches, a global transformer runs once per patch, and a local decoder cross-attends back; patch_size is the "
    "longest a patch may be, and with patching_mode 'entropy' a patch ends where a separate byte model (the patcher, "
    "its own layers run over every byte) predicts the next byte's entropy above patching_threshold, so the global "
    "transformer's share of a byte's FLOPs depends on the text; ffncalc's spec has no stack that runs per patch yet",
    "xlnet": "its relative attention projects every key position's sinusoidal embedding through r (hidden → heads · "
    "d_head) in every layer and forward, and scores each query against it (2 · hidden · heads · d_head and "
    "2 · heads · d_head FLOPs a key besides q · k and the values), and XLNetLMHeadModel generates through the "
    "two-stream attention (a query stream g beside h, each layer run for both); ffncalc's spec has neither a weight "
    "that runs per key nor a second stream yet",
    "minimax_m3_vl_text": "its sparse layers (layer_types 'minimax_m3_sparse', which the released configs set through "
    "sparse_attention_freq) attend to the index_topk_blocks blocks of index_block_size keys that an indexer head "
    "ranks highest for its group of heads, the query's own partly filled block always among them: at position p a "
    "query reads p mod B + 1 + B · (min(topk, ⌊p / B⌋ + 1) − 1) keys, not a top-k of keys; ffncalc's spec cannot "
    "express block-granular selection yet",
    "minimax_m3_vl": "its language model is minimax_m3_vl_text (MiniMaxM3VLTextModel), whose sparse layers attend to "
    "the index_topk_blocks blocks of index_block_size keys an indexer head ranks highest (see minimax_m3_vl_text), "
    "which ffncalc's spec cannot express yet; the wrapper is not counted without it",
    "unlimited_ocr": "its language model's reference sliding-window attention (layer_types "
    "'reference_sliding_attention', every layer by default) lets each generated token attend to every prompt token "
    "(the image's and the prompt's, kept in the cache) plus the last sliding_window generated ones: the keys a query "
    "reads depend on where the prompt ends, not on the context alone, which ffncalc's spec cannot express yet",
    "glm5_next": "its language model's indexed layers (layer_types 'indexed_attention', every full-attention layer: 11 "
    "of the default 45) attend to the index_topk / index_kpool pools of index_kpool keys that the indexer ranks highest, "
    "plus the query's own incomplete pool (index_kpool_always_select_tail): at position p a query reads "
    "K · min(topk / K, ⌊(p + 1) / K⌋) + (p + 1) mod K keys, not a top-k of keys; ffncalc's spec cannot express "
    "block-granular selection yet (as for minimax_m3_vl_text)",
    "reformer": "its layers alternate chunked local attention and LSH attention (num_hashes rounds of hashed buckets, "
    "sorted and chunked), and its reversible layers and axial position embeddings are modules no adapter lays out "
    "yet",
    "t5gemma2": "its decoder's merged attention reads the encoder's output through the same k_proj and v_proj (and "
    "q_norm, k_norm, o_proj) as its own tokens, in one softmax over both, and its encoder holds a SigLIP tower for "
    "images; ffncalc's spec cannot state projections shared between self- and cross-attention yet",
    "prophetnet": "its decoder runs ngram predicting streams beside the main one: every position is 1 + ngram hidden "
    "states through each layer (its n-gram self-attention with relative position buckets, the FFN) and the head, "
    "which ffncalc's spec cannot express yet",
    "pi0": "it generates no tokens: PI0ForConditionalGeneration denoises a chunk of chunk_size actions "
    "num_inference_steps times through a Gemma action expert (dit_config) whose layers attend, layer by layer, to the "
    "keys and values PaliGemma (vlm_config, without its head) cached over the images and the prompt; ffncalc's spec "
    "has neither a stack that reads another stack's cache nor a step that is not a generated token, yet",
    "evolla": "its language model reads a protein through a tower of its own: SaProt (an ESM-style encoder over the "
    "protein's residue and structure tokens, protein_encoder_config) pooled by a perceiver resampler into "
    "resampler_num_latents latents, which every aligner_num_add_layers-th layer's adapter (a gated cross-attention "
    "and feed-forward) reads; ffncalc's components have a vision and an audio tower, not a protein one, so its "
    "parameters would be counted as the language model's; not counted yet",
    # Towers transformers builds through timm (TimmWrapperModel: timm.create_model of vision_config.architecture):
    # their layout is timm's code, which transformers does not hold, and no independent count of it can be made here.
    "fast_vlm": "its vision tower is a timm model (timm_wrapper, by default timm's fastvit_mci3, FastViT-HD): "
    "transformers builds it through the timm package, whose layout no adapter reads and no count here can check",
    "perception_lm": "its vision tower is a timm model (timm_wrapper, the Perception Encoder that "
    "vision_config.architecture names): transformers builds it through the timm package, whose layout no adapter "
    "reads and no count here can check",
    # Checked in transformers 5.24 (AutoConfig.for_model, then the mapping's class on the meta device): these fail to
    # build from their configuration class's defaults, so no default model can be recorded to hold an adapter to.
    "moonshine_streaming": "transformers 5.24 builds it only from a config that carries num_key_value_heads, a key "
    "MoonshineStreamingConfig does not declare (MoonshineStreamingDecoderLayer reads it; without it the build fails "
    "with AttributeError); not counted yet",
    "musicgen": "the causal-LM mapping builds MusicgenForCausalLM, whose configuration is a MusicgenDecoderConfig "
    "(model_type musicgen_decoder); transformers 5.24 cannot build it from a MusicgenConfig, the musicgen model_type's "
    "composite config (its decoder nested in decoder beside a T5 text encoder and an EnCodec audio encoder): "
    "MusicgenDecoder reads config.dropout at the top, which MusicgenConfig does not hold (AttributeError), whether the "
    "config is the default or a checkpoint's; not counted yet",
    "musicgen_melody": "the causal-LM mapping builds MusicgenMelodyForCausalLM, whose configuration is a "
    "MusicgenMelodyDecoderConfig (model_type musicgen_melody_decoder); transformers 5.24 cannot build it from a "
    "MusicgenMelodyConfig, the musicgen_melody model_type's composite config (its decoder nested in decoder beside a T5 "
    "text encoder and an EnCodec audio encoder): MusicgenMelodyDecoder reads config.dropout at the top, which "
    "MusicgenMelodyConfig does not hold (AttributeError), whether the config is the default or a checkpoint's; not "
    "counted yet",
    "granite4_vision": "transformers 5.24 cannot build its default config: Granite4VisionModel builds one window "
    "Q-Former projector per deepstack_layer_map entry, and each splits downsample_rate ('query side/window side'), "
    "both None by default (TypeError, then AttributeError); not counted yet",
    "qwen4_exp": "transformers 5.24 cannot build its default config: its text model's sparse-attention indexer "
    "divides token_budget by compress_ratio, both None by default (TypeError); not counted yet",
    "qwen4_exp_text": "transformers 5.24 cannot build its default config: the indexer of its sparse-attention layers "
    "divides token_budget by compress_ratio, both None by default (TypeError); not counted yet",
    "deepseek_ocr2": "transformers 5.24 cannot build its default config: DeepseekOcr2TextDecoderLayer indexes "
    "text_config.mlp_layer_types, which DeepseekOcr2TextConfig leaves None and never derives (TypeError); not counted "
    "yet",
    "diffusion_gemma": "transformers 5.24 cannot build its default config: every DiffusionGemma text layer builds its "
    "router (a linear hidden → num_experts) and its experts, and DiffusionGemmaTextConfig's num_experts, top_k_experts "
    "and moe_intermediate_size are None by default (TypeError); not counted yet",
}
NOT_YET = "not counted yet"

# A model_type ffncalc counts, but not as the class a task's mapping builds: not counted for that task.
NOT_COUNTED_FOR_TASK: dict[tuple[str, str], str] = {
    ("speech", "seamless_m4t"): "ffncalc counts its text-to-text class; the speech mapping's "
    "SeamlessM4TForSpeechToText replaces the text encoder with a Conformer speech encoder whose self-attention scores "
    "each query against the 2n − 1 relative positions of its input (a per-position embedding, not a per-key one), "
    "which ffncalc's spec cannot express yet",
    ("speech", "seamless_m4t_v2"): "ffncalc counts its text-to-text class; the speech mapping's "
    "SeamlessM4Tv2ForSpeechToText replaces the text encoder with a Conformer speech encoder that attends within "
    "chunks of speech_encoder_chunk_size positions and up to speech_encoder_left_chunk_num chunks to their left, which "
    "ffncalc's spec cannot express for it yet",
}


class NotCounted(Result):
    model_type: str
    reason: str


class TaskCoverage(Result):
    """One task: transformers' model_types for it, those ffncalc counts, and the rest with the reason."""

    task: str
    title: str
    mapping: str  # transformers' auto mapping the task's model_types come from
    transformers_model_types: int
    counted: list[str]
    not_counted: list[NotCounted]


class FamilyCoverage(Result):
    """the models families listing's JSON: every family with its model_types, and the coverage of each task."""

    transformers: str  # the version and module the tasks' lists come from
    families: dict[str, list[str]]
    tasks: list[TaskCoverage]
    outside_tasks: list[str]  # model_types ffncalc counts that none of the mappings names (ffncalc's own presets …)


def task_coverage(families: dict[str, list[str]]) -> FamilyCoverage:
    """Each task's model_types split into counted (a family reads it) and not, from transformers_tasks.json."""
    listed = json.loads((Path(__file__).parent / "transformers_tasks.json").read_text(encoding="utf-8"))
    supported = {model_type for model_types in families.values() for model_type in model_types}
    tasks, named = [], set()
    for task, entry in listed["tasks"].items():
        model_types = entry["model_types"]
        named |= set(model_types)
        tasks.append(
            TaskCoverage(
                task=task,
                title=TASK_TITLES.get(task, task),
                mapping=entry["mapping"],
                transformers_model_types=len(model_types),
                counted=[
                    model_type
                    for model_type in model_types
                    if model_type in supported and (task, model_type) not in NOT_COUNTED_FOR_TASK
                ],
                not_counted=[
                    NotCounted(
                        model_type=model_type,
                        reason=NOT_COUNTED_FOR_TASK.get((task, model_type))
                        or NOT_COUNTED_REASONS.get(model_type, NOT_YET),
                    )
                    for model_type in model_types
                    if model_type not in supported or (task, model_type) in NOT_COUNTED_FOR_TASK
                ],
            )
        )
    return FamilyCoverage(
        transformers=listed["source"].split(",")[0],
        families=families,
        tasks=tasks,
        outside_tasks=sorted(supported - named),
    )
