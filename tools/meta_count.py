"""Independent expected values: transformers builds each config on torch's meta device, and we count.

A side script, not a dependency of ffncalc or of its tests. It needs torch and transformers in a
side venv (no weights are downloaded and no memory is allocated: the meta device records shapes):

    python -m venv /tmp/side && /tmp/side/bin/pip install torch==2.13.0 transformers==5.24.0
    /tmp/side/bin/python tools/meta_count.py fixtures/configs/*.json tests/configs/*.json
    /tmp/side/bin/python tools/meta_count.py --defaults llama qwen3 …   # {"model_type": …} alone
    /tmp/side/bin/python tools/meta_count.py --drop-keys fixtures/configs/google__gemma-3-1b-it.json
    /tmp/side/bin/python tools/meta_count.py --show fixtures/configs/openai__gpt-oss-20b.json  # every tensor

For each config it writes tests/expected/transformers/<stem>.json (``defaults__<model_type>``
for a default config) with: the model class built (the config's ``architectures[0]`` where
transformers has it), the unique parameters (`model.parameters()` counts a tied weight once),
the parameters by component (grouped by module name, see `component_of`), the routed experts'
parameters (so tests can derive the active count without ffncalc), the persistent buffers a
checkpoint also stores, and the tensors transformers would save (its weight conversions
reverted, tied copies left out) as a count, a total and a sha256 of the sorted name/shape list.
With --drop-keys it also records, for each key of the config in turn, the count of the config
without it: transformers' default for that key (or its refusal).
Results are cached by the config's sha256; a file is rewritten only when its config changed.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import warnings
from pathlib import Path
from typing import Any

import torch
import transformers
from transformers import AutoConfig
from transformers.core_model_loading import revert_weight_conversion

OUT = Path(__file__).resolve().parent.parent / "tests" / "expected" / "transformers"
RECORD_VERSION = 2  # bump when what a record holds, or how it is counted, changes

# Custom-code model types whose config declares an architecture that transformers ships.
MODEL_TYPE_STAND_INS = {"kimi_k2": "deepseek_v3", "mimo": "qwen2"}
# When architectures names no class transformers has, the class of the family's checkpoints.
FALLBACK_CLASS = {
    "t5": "T5ForConditionalGeneration",
    "mt5": "MT5ForConditionalGeneration",
    "bert": "BertForPreTraining",
    "bart": "BartForConditionalGeneration",
    "mbart": "MBartForConditionalGeneration",
    "marian": "MarianMTModel",
    "pegasus": "PegasusForConditionalGeneration",
    "megatron-bert": "MegatronBertForPreTraining",
    "camembert": "CamembertForMaskedLM",
    "roberta-prelayernorm": "RobertaPreLayerNormForMaskedLM",
    "xlm-roberta-xl": "XLMRobertaXLForMaskedLM",
    "mpnet": "MPNetForMaskedLM",
    "data2vec-text": "Data2VecTextForMaskedLM",
    "ernie": "ErnieForMaskedLM",
    "roformer": "RoFormerForMaskedLM",
    "deberta": "DebertaForMaskedLM",
    "eurobert": "EuroBertForMaskedLM",
    "albert": "AlbertForMaskedLM",
    "layoutlm": "LayoutLMForMaskedLM",
    "roc_bert": "RoCBertForMaskedLM",
    "plbart": "PLBartForConditionalGeneration",
    "umt5": "UMT5ForConditionalGeneration",
    "whisper": "WhisperForConditionalGeneration",
    "moonshine": "MoonshineForConditionalGeneration",
    "speech_to_text": "Speech2TextForConditionalGeneration",
    "switch_transformers": "SwitchTransformersForConditionalGeneration",
    "m2m_100": "M2M100ForConditionalGeneration",
    "blenderbot": "BlenderbotForConditionalGeneration",
    "blenderbot-small": "BlenderbotSmallForConditionalGeneration",
    "mvp": "MvpForConditionalGeneration",
    "ultrabert": "UltrabertForMaskedLM",
    "esmc": "EsmcForMaskedLM",
    "tapas": "TapasForMaskedLM",
    "luke": "LukeForMaskedLM",
    "convbert": "ConvBertForMaskedLM",
    "squeezebert": "SqueezeBertForMaskedLM",
    "mobilebert": "MobileBertForMaskedLM",
    "modernvbert": "ModernVBertForMaskedLM",
    "ultravbert": "UltraVBertForMaskedLM",
    "neomme": "NeoMMEForMaskedLM",
    "yoso": "YosoForMaskedLM",
    "nystromformer": "NystromformerForMaskedLM",
    "longformer": "LongformerForMaskedLM",
    "led": "LEDForConditionalGeneration",
    "big_bird": "BigBirdForMaskedLM",
    "bigbird_pegasus": "BigBirdPegasusForConditionalGeneration",
    "funnel": "FunnelForMaskedLM",
    "perceiver": "PerceiverForMaskedLM",
}
# Keys that never change a model's structure: skipped by --drop-keys.
NOT_STRUCTURAL = re.compile(
    r"^(architectures|auto_map|model_type|transformers_version|torch_dtype|dtype|_name_or_path|.*token_id.*|"
    r"initializer_range|.*_eps|.*epsilon|.*dropout.*|.*_pdrop|use_cache|rope_.*|.*rope|quantization_config|"
    r"bos_token_id|eos_token_id|pad_token_id|output_.*|return_dict|.*_scaling|.*_multiplier|.*_scale|"
    r"router_aux_loss_coef|task_specific_params|id2label|label2id|max_position_embeddings|max_window_layers)$"
)

# JetMoE's MLP keeps its experts stacked in mlp.input_linear and mlp.output_linear (no record before holds a
# parameter of those names: Granite's are block_sparse_moe.experts. or shared_mlp.)
ROUTED_EXPERTS = re.compile(
    r"\.(mlp|block_sparse_moe|feed_forward|ffn|moe|mixer)\.experts\.|\.experts\.(gate_up_proj|down_proj|mlp\.)|"
    r"\.mlp\.(input|output)_linear\."
)


def component_of(name: str) -> str:
    """Map a parameter name to an ffncalc component by the modules that hold it."""
    modules = name.split(".")[:-1]
    named = [module for module in modules if not module.isdigit()]  # input_layernorm.0: a ModuleList's entry (LongCat)
    last = named[-1] if named else ""
    # A tower's patch mergers hand its features to the language model: the projector, as multi_modal_projector is
    # (and Idefics3's connector, DeepSeek-VL's aligner and LightOnOCR's vision_projection, added with them: no record
    # built before holds a module of any of these names). BLIP-2's and InstructBLIP's Q-Former carries the tower's
    # features to the language model too, with its query tokens and language_projection (no record before holds them).
    # VideoLLaMA 3's is plainly projector (no record before holds a module of that name). MiniCPM-V 4.6's merger sits
    # beside its tower, model.merger. (every record before holds a merger inside its tower only: visual.merger.), and
    # Kosmos-2's image_to_text_projection carries its tower's features too (no record before holds that name), as do
    # GIT's visual_projection and the per-frame vectors added before it, img_temporal_embedding (nor these).
    # Qwen3-Omni's deepstack mergers are visual.merger_list, and Granite-Docling's density router, which reads the
    # tower's patches to choose the connector's path, is density_router (no record before holds either name).
    # HyperCLOVA X SEED Vision v2 keeps Qwen2.5-VL's tower, merger included, as model.vision_model. (no record before
    # holds a merger there).
    # Muse Glimmer's vision_adapter (fc1, fc2) carries its tower's merged patches to vision_projection (no record
    # before holds a module of that name).
    # Phi-4-multimodal's projections beside its towers inside embed_tokens_extend (img_projection_up/down, the image
    # separators, the speech projection pairs) carry their features to the language model (no record before holds them).
    # IDEFICS's perceiver_resampler pools its tower's patches into latents (no record before holds that name outside
    # Idefics2's connector., already the projector).
    if re.search(
        r"(^|\.)(multi_modal_projector|mm_projector|embed_vision|embed_audio|connector|aligner|vision_projection|"
        r"qformer|language_projection|projector|perceiver_resampler)\.|(^|\.)visual\.(merger|merger_list|deepstack_merger_list)\.|"
        r"^query_tokens$|^model\.merger\.|(^|\.)image_to_text_projection\.|^git\.(visual_projection|img_temporal_embedding)\.|"
        r"(^|\.)density_router\.|^model\.vision_model\.merger\.|(^|\.)vision_adapter\.|"
        r"\.image_embed\.(img_projection_(up|down)\.|(global|sub)_img_feature_extensor$)|"
        r"\.audio_embed\.(up|down)_proj_for_(speech|vision_speech)\.",
        name,
    ):
        return "projector"
    # VibeVoice's semantic_connector carries its semantic tokenizer's features into the language model, as its
    # multi_modal_projector does the acoustic latents (no record before holds a module of that name)
    if re.search(r"(^|\.)semantic_connector\.", name):
        return "projector"
    # VibeVoice's diffusion head predicts acoustic latents beside the language model, and its latent_scaling_factor
    # and latent_bias_factor scale them: other (no record before holds a module of these names)
    if re.search(r"(^|\.)diffusion_head\.", name):
        return "other"
    # Janus's image-generation modules (generation_embeddings, generation_aligner, generation_head) embed and score
    # image tokens beside the language model: other (no record before holds a module of these names).
    if re.search(r"(^|\.)generation_(embeddings|aligner|head)\.", name):
        return "other"
    # Fuyu's vision_embed_tokens projects pixels, not tokens: its vision side, though it has no tower. Video-LLaVA's
    # image_tower and video_tower, and DeepSeek-VL hybrid's high-resolution side (its SAM tower, the second neck and
    # strided convolutions over its output, their scalar gate), are vision too, as is the VQ-GAN that tokenizes images
    # for Chameleon (vqmodel), and Apertus 1.5's vision_tokenizer and audio_tokenizer (no record before holds such a
    # name).
    if re.search(
        r"(^|\.)(vision_tower|vision_model|visual|vision_encoder|audio_tower|vision_embed_tokens|image_tower|"
        r"video_tower|high_res_vision_model|high_res_vision_neck|high_res_vision_proj|vqmodel|vision_tokenizer|"
        r"audio_tokenizer)\.|"
        r"(^|\.)high_res_vision_alpha$",
        name,
    ):
        return "vision" if "audio" not in name else "audio"
    # Nemotron 3.5 Transcribe's word timestamp encoder and head read the speech recognition encoder's states, never a
    # text token: the audio side, as its audio_tower (no record before holds a module of these names)
    if re.search(r"(^|\.)word_timestamp_(encoder|head)\.", name):
        return "audio"
    # Kyutai's speech-to-text reads audio through its Mimi codec, codec_model: its audio tower (no record before holds
    # a module of that name)
    if name.startswith("codec_model."):
        return "audio"
    # VibeVoice-ASR's two tokenizer encoders over the waveform are its audio towers (no record before holds them)
    if re.search(r"(^|\.)(acoustic|semantic)_tokenizer_encoder\.", name):
        return "audio"
    # Kosmos-2's sub-LayerNorm inside its attention, inner_attn_ln, is a norm (no record before holds that name).
    if "norm" in last.lower() or last in (
        "ln",
        "ln_1",
        "ln_2",
        "ln_f",
        "ln_attn",
        "ln_mlp",
        "LayerNorm",
        "inner_attn_ln",
    ):
        return "norm"
    # NeoMME's attention output passes through self_attn.output_projection (a gate and o_proj), not FSMT's head (no
    # record before holds such a name)
    if re.search(r"\.self_attn\.output_projection\.", name):
        return "attention"
    # Perceiver's encoder.cross_attention is a whole PerceiverLayer (attention, layernorm and mlp, read as its
    # self_attends' are), and its masked LM's embedding_decoder is the head (no record before holds either name)
    if name.startswith("embedding_decoder."):
        return "lm_head"
    if name.startswith("perceiver.encoder.cross_attention."):
        return component_of(name.replace(".cross_attention.", ".self_attends.0.", 1))
    # A masked-LM head's transform counts with its decoder, as BERT's cls.predictions (DistilBERT, ELECTRA, ALBERT's
    # predictions at the top); FSMT's head is its decoder's output_projection; NeoMME's factorised head multiplies by
    # unembedding_projection before lm_head (no record before holds such a name)
    if re.search(
        r"(^|\.)(lm_head|embed_out|proj_out|output_projection|pred_layer|unembedding_projection)\.|(^|\.)cls\.predictions\.|^predictions\.|(^|\.)(generator_lm_head|generator_predictions|"
        r"vocab_transform|vocab_projector)\.",
        name,
    ):
        return "lm_head"
    # Dia's head is logits_dense (every channel's logits at once), and its encoder's byte table is plainly
    # encoder.embedding at the top of the model (no record before holds a module of either name there)
    if re.search(r"^logits_dense\.", name):
        return "lm_head"
    if re.search(r"^(model\.)?encoder\.embedding\.", name):
        return "embedding"
    # UltraBERT's masked-LM head (two linears, then its decoder) counts with its decoder too (no record before holds a
    # module head.linear1, head.linear2 or head.decoder)
    if re.search(r"^head\.(linear1|linear2|decoder)\.", name):
        return "lm_head"
    # RWKV's LayerNorms (ln1, ln2, block 0's pre_ln, ln_out) and its head (no record before holds these names)
    if re.search(r"^rwkv\.(blocks\.\d+\.(ln1|ln2|pre_ln)|ln_out)\.", name):
        return "norm"
    if name == "head.weight":
        return "lm_head"
    # GIT's head is plainly output, at the top (no record before holds a top-level module of that name)
    if re.search(r"^output\.", name):
        return "lm_head"
    # xLSTM's mLSTM layer (no record before holds a module named mlstm_layer)
    if re.search(r"\.mlstm_layer\.(?!multihead_norm)", name):
        return "mixer"
    # CPM-Ant's token table (with its prompt rows) and segment table are embeddings, and its one table of relative
    # position biases belongs to the attention (no record before holds a module of these names)
    if re.search(r"^cpmant\.(input_embedding|segment_embedding)\.", name):
        return "embedding"
    if name.startswith("cpmant.position_bias."):
        return "attention"
    # (a T5 inside BLIP-2 keeps its shared table under language_model.: no record before holds such a name; nor does
    # any hold Pop2Piano's table of composer embeddings, mel_conditioner.embedding, or the BART inside Florence-2's
    # model.language_model.shared; LED keeps its under led.)
    if re.search(
        r"(mel_conditioner\.embedding|embed_tokens|embed_tokens_per_layer|(^|\.)embeddings|\.wte|\.wpe|word_embeddings|embed_positions|embed_in|position_embeddings|"
        r"tokens_embed|positions_embed|lang_embeddings|"
        r"token_type_embeddings|^shared|^model\.shared|^led\.shared|^language_model\.shared|^model\.language_model\.shared|"
        r"^transformer\.w)\.",  # CTRL's: transformer.w
        name,
    ):
        return "embedding"
    # MobileBERT's bottlenecks between a layer's width and its narrower inside (bottleneck.input, bottleneck.attention,
    # output.bottleneck) belong to neither its attention nor its MLPs (no record before holds a module of that name)
    if re.search(r"(^|\.)bottleneck\.", name):
        return "other"
    # Pix2Struct's decoder names its cross-attention encoder_decoder_attention (no record before holds that name)
    if re.search(
        r"\.(EncDecAttention|crossattention|encoder_attn|cross_attention|cross_attn|encoder_decoder_attention)\.", name
    ):
        return "cross_attention"
    if re.search(r"\.mixer\.(up_proj|down_proj|experts|gate|shared_experts|fc1_latent_proj|fc2_latent_proj)", name):
        return "ffn"  # Nemotron-H names every block's module "mixer", MLPs included
    # A.X-K2's gated norms scale their output by a small MLP of their own (input_layernorm.mlp.fc1, fc2): neither
    # the FFN nor a norm's weight (no record before holds a norm with an mlp inside)
    if re.search(r"layernorm\.mlp\.(fc1|fc2)\.", name):
        return "other"
    if re.search(r"\.(mixer|temporal_block)\.(q_proj|k_proj|v_proj|o_proj)", name):
        return "attention"  # RecurrentGemma names its attention and its recurrent block alike (temporal_block)
    if re.search(r"(^|\.)encoder\.conv\.conv_layers\.", name):
        return "other"  # S2T's convolutional subsampler, before the encoder's layers (no record before holds one)
    # SpeechT5's speech prenet (its Wav2Vec2 feature encoder over raw samples and its convolutional position
    # embedding) runs before the encoder's layers, as S2T's subsampler (no record before holds these names)
    if re.search(r"^speecht5\.encoder\.prenet\.(feature_encoder|pos_conv_embed)\.", name):
        return "other"
    # A speech encoder-decoder's Wav2Vec2 encoder keeps the same two at encoder.feature_extractor. and
    # encoder.encoder.pos_conv_embed. (no record before holds these names)
    if re.search(r"^encoder\.(feature_extractor|encoder\.pos_conv_embed)\.", name):
        return "other"
    if re.search(r"\.(mixer|linear_attn|mamba|conv|temporal_block)\.", name):
        return "mixer"  # state-space mixers, LFM2's short convolution (conv), RecurrentGemma's RG-LRU block
    # XLM and FlauBERT keep each kind of sublayer in a list of its own, from the top in the bare model (no record
    # built before holds a module of these names)
    if re.search(r"(^|\.)attentions\.\d+\.", name):
        return "attention"
    if re.search(r"(^|\.)ffns\.\d+\.", name):
        return "ffn"
    # CTRL's attention is multi_head_attention; SqueezeBERT's output projection is post_attention, and its MLP's second
    # convolution output.conv1d (no record built before holds a module of these names); LongT5's encoder attention is
    # LocalSelfAttention or TransientGlobalSelfAttention (no record before holds either name)
    if re.search(
        r"\.(self_attn|attn|attention|self_attention|SelfAttention|LocalSelfAttention|TransientGlobalSelfAttention|"
        r"multi_head_attention|post_attention)\.",
        name,
    ):
        return "attention"
    # A FastConformer block's two half-step FFNs, feed_forward1 and feed_forward2 (Canary's encoder; no record before
    # holds a module of these names outside a tower)
    if re.search(r"\.feed_forward[12]\.", name):
        return "ffn"
    if re.search(
        r"\.(mlp|shared_mlp|block_sparse_moe|feed_forward|ffn|ffn_output|mlp_block|fc1|fc2|DenseReluDense|intermediate|"
        r"output\.dense|output\.conv1d)\.",
        name,
    ):
        return "ffn"
    if re.search(r"\.(mlps|experts|router)\.", name):
        return "ffn"  # a layer's own MoE (Gemma 4: layers.{i}.router, layers.{i}.experts) or its list of MLPs (LongCat)
    return "other"


def load_config(raw: dict[str, Any]):
    raw = dict(raw)
    model_type = MODEL_TYPE_STAND_INS.get(raw.get("model_type"), raw.get("model_type"))
    fields = {k: v for k, v in raw.items() if k not in ("model_type", "auto_map", "quantization_config")}
    return AutoConfig.for_model(model_type, **fields)


def model_class(config, raw: dict[str, Any]):
    """The class the config's architectures names, where transformers has it; else the family's usual one."""
    from transformers.models.auto import modeling_auto

    names = list(raw.get("architectures") or []) + [FALLBACK_CLASS.get(config.model_type, "")]
    for mapping in (
        "MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES",
        "MODEL_FOR_CAUSAL_LM_MAPPING_NAMES",
        "MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES",
        "MODEL_FOR_SPEECH_SEQ_2_SEQ_MAPPING_NAMES",
        "MODEL_FOR_PRETRAINING_MAPPING_NAMES",
        "MODEL_MAPPING_NAMES",
    ):
        names.append(getattr(modeling_auto, mapping).get(config.model_type, ""))
    for name in names:
        cls = getattr(transformers, name, None) if isinstance(name, str) and name else None
        if cls is not None:
            return cls
    raise ValueError(f"no model class for {config.model_type}")


def build(raw: dict[str, Any]):
    config = load_config(raw)
    cls = model_class(config, raw)
    with torch.device("meta"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cls._from_config(config)


def checkpoint_tensors(model) -> dict[str, tuple[int, ...]]:
    """What save_pretrained would write: the state dict, tied copies dropped, weight conversions reverted."""
    state = model.state_dict()
    for tied in getattr(model, "all_tied_weights_keys", {}) or {}:
        state.pop(tied, None)
    state = revert_weight_conversion(model, state)
    return {name: tuple(tensor.shape) for name, tensor in state.items()}


def digest(tensors: dict[str, tuple[int, ...]]) -> str:
    lines = "\n".join(f"{name} {list(shape)}" for name, shape in sorted(tensors.items()))
    return hashlib.sha256(lines.encode()).hexdigest()


# Audio towers whose module names alone cannot tell them from an encoder-decoder's encoder (Granite Speech keeps its
# Conformer at model.encoder., its blocks' conv.norm named as Parakeet's in Canary's encoder): every parameter under a
# module of these classes is the audio tower's (no record before holds one).
# Phi-4-multimodal keeps its Conformer under model.embed_tokens_extend.audio_embed.encoder. (no record before holds one).
AUDIO_TOWER_CLASSES = frozenset({"GraniteSpeechCTCEncoder", "GraniteSpeechPlusCTCEncoder", "Phi4MultimodalAudioModel"})
# Vision towers named as an encoder-decoder's encoder (PP-FormulaNet keeps its SAM encoder at model.encoder.) or inside
# the token embedding (Phi-4-multimodal's SigLIP, model.embed_tokens_extend.image_embed.img_processor.): every
# parameter under a module of these classes is the vision tower's, but for its projector (no record before holds one).
VISION_TOWER_CLASSES = frozenset({"PPFormulaNetVisionModel", "Phi4MultimodalVisionModel"})


def count(raw: dict[str, Any]) -> dict[str, Any]:
    model = build(raw)
    towers = tuple(
        f"{prefix}." for prefix, module in model.named_modules() if type(module).__name__ in AUDIO_TOWER_CLASSES
    )
    vision_towers = tuple(
        f"{prefix}." for prefix, module in model.named_modules() if type(module).__name__ in VISION_TOWER_CLASSES
    )
    by_component: dict[str, int] = {}
    routed = total = 0
    # A tied parameter appears once, under whichever module holds it first (XLM-RoBERTa builds its head before
    # its embeddings): it is filed under the weight the others are tied to.
    tied = getattr(model, "all_tied_weights_keys", {}) or {}
    for name, parameter in model.named_parameters():
        n = parameter.numel()
        total += n
        component = "audio" if towers and name.startswith(towers) else component_of(tied.get(name, name))
        if vision_towers and name.startswith(vision_towers) and component != "projector":
            component = "vision"
        by_component[component] = by_component.get(component, 0) + n
        if component == "ffn" and ROUTED_EXPERTS.search(name) and "shared" not in name:
            routed += n
    parameter_names = {name for name, _ in model.named_parameters(remove_duplicate=False)}
    state_names = set(model.state_dict())
    buffers = {
        name: buffer.numel()
        for name, buffer in model.named_buffers()
        if name in state_names and name not in parameter_names
    }
    try:
        tensors = checkpoint_tensors(model)
        checkpoint = {
            "tensors": len(tensors),
            "elements": sum(_numel(shape) for shape in tensors.values()),
            "sha256": digest(tensors),
        }
    except Exception as error:
        checkpoint = {"error": f"{type(error).__name__}: {error}"[:300]}
    return {
        "model_class": type(model).__name__,
        "total_params": total,
        "components": dict(sorted(by_component.items())),
        "routed_expert_params": routed,
        "persistent_buffers": sum(buffers.values()),
        "checkpoint": checkpoint,
    }


def _numel(shape: tuple[int, ...]) -> int:
    n = 1
    for size in shape:
        n *= size
    return n


def safe_count(raw: dict[str, Any]) -> dict[str, Any]:
    try:
        return count(raw)
    except Exception as error:
        return {"error": f"{type(error).__name__}: {error}"[:300]}


def record(stem: str, raw: dict[str, Any], drop_keys: bool) -> None:
    text = json.dumps(raw, sort_keys=True)
    sha = hashlib.sha256(text.encode()).hexdigest()
    path = OUT / f"{stem}.json"
    old = json.loads(path.read_text()) if path.exists() else {}
    fresh = old.get("record_version") == RECORD_VERSION and old.get("transformers_version") == transformers.__version__
    if fresh and old.get("config_sha256") == sha and (not drop_keys or "dropped" in old):
        print(stem, "cached", file=sys.stderr)
        return
    result: dict[str, Any] = {
        "generated_by": "tools/meta_count.py",
        "transformers_version": transformers.__version__,
        "torch_version": torch.__version__,
        "config_sha256": sha,
        "record_version": RECORD_VERSION,
        **safe_count(raw),
    }
    if drop_keys:
        result["dropped"] = {}
        for key in sorted(raw):
            if NOT_STRUCTURAL.match(key):
                continue
            variant = {k: v for k, v in raw.items() if k != key}
            result["dropped"][key] = safe_count(variant)
            print(" ", stem, "-", key, result["dropped"][key].get("total_params"), file=sys.stderr)
    OUT.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")
    print(stem, result.get("total_params", result.get("error")), file=sys.stderr)


def show(raw: dict[str, Any]) -> None:
    for name, shape in sorted(checkpoint_tensors(build(raw)).items()):
        print(name, list(shape))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("configs", nargs="*")
    parser.add_argument("--defaults", nargs="*", default=[], metavar="MODEL_TYPE")
    parser.add_argument("--drop-keys", action="store_true")
    parser.add_argument("--show", action="store_true", help="print every tensor a checkpoint holds, and stop")
    args = parser.parse_args()
    for arg in args.configs:
        raw = json.loads(Path(arg).read_text())
        if args.show:
            show(raw)
            continue
        record(Path(arg).stem, raw, args.drop_keys)
    for model_type in args.defaults:
        record(f"defaults__{model_type}", {"model_type": model_type}, drop_keys=False)


if __name__ == "__main__":
    main()
