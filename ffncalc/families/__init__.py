"""One adapter per model_type: the only place where families differ.

``parse_config`` picks the adapter for a raw config.json dict and validates it with pydantic;
``adapter.to_spec()`` gives the architecture-neutral ``ModelSpec``. A new family is a new
adapter class in the module of its lineage, named in ``FAMILIES``.
"""

from __future__ import annotations

import difflib
import importlib
import re
from typing import Any

from pydantic import ValidationError

from ..errors import FfncalcError, InvalidConfigError, UnsupportedModelError
from ..schema import HFConfig, describe_validation_error
from ..spec import ModelSpec

# model_type → "module:Adapter", modules named by lineage. An adapter's module is imported only
# when a config needs it: pydantic classes are costly to create, and a command reads one config.
FAMILIES: dict[str, str] = {
    # Llama and its direct descendants
    "llama": "llama:LlamaConfig",
    "internlm3": "internlm:InternLM3Config",
    "smollm3": "smollm:SmolLM3Config",
    "granite": "granite:GraniteConfig",
    "granitemoe": "granite:GraniteMoeConfig",
    "granitemoeshared": "granite:GraniteMoeSharedConfig",
    "granite_swa": "granite:GraniteSWAConfig",
    "granitemoe_swa": "granite:GraniteMoeSWAConfig",
    "llama4_text": "llama4:Llama4TextConfig",
    "llama4": "llama4:Llama4Config",
    "cwm": "cwm:CwmConfig",
    "iquestcoder": "iquestcoder:IQuestCoderConfig",
    "bitnet": "bitnet:BitNetConfig",
    # Mistral
    "mistral": "mistral:MistralConfig",
    "ministral": "mistral:MinistralConfig",
    "ministral3": "mistral:Ministral3Config",
    "mixtral": "mistral:MixtralConfig",
    "mistral3": "mistral:Mistral3Config",
    "mistral4": "mistral:Mistral4Config",
    # Qwen
    "qwen2": "qwen:Qwen2Config",
    "qwen2_moe": "qwen:Qwen2MoeConfig",
    "qwen3": "qwen:Qwen3Config",
    "qwen3_moe": "qwen:Qwen3MoeConfig",
    "qwen3_next": "qwen:Qwen3NextConfig",
    "qwen3_5_text": "qwen:Qwen35TextConfig",
    "qwen3_5_moe_text": "qwen:Qwen35MoeTextConfig",
    "qwen3_5": "qwen:Qwen35Config",
    "qwen3_5_moe": "qwen:Qwen35MoeConfig",
    "qwen3_vl_text": "qwen:Qwen3VLTextConfig",
    "qwen3_vl_moe_text": "qwen:Qwen3VLMoeTextConfig",
    "qwen3_vl": "qwen:Qwen3VLConfig",
    "qwen3_vl_moe": "qwen:Qwen3VLMoeConfig",
    "qwen2_5_vl_text": "qwen:Qwen25VLTextConfig",
    "qwen2_5_vl": "qwen:Qwen25VLConfig",
    "qwen2_vl_text": "qwen:Qwen2VLTextConfig",
    "qwen2_vl": "qwen:Qwen2VLConfig",
    "mellum": "mellum:MellumConfig",
    # LLaVA
    "llava": "llava:LlavaConfig",
    "llava_next": "llava:LlavaNextConfig",
    # Idefics3 and SmolVLM (Hugging Face)
    "idefics3": "idefics:Idefics3Config",
    "smolvlm": "idefics:SmolVLMConfig",
    # Aya Vision (Cohere)
    "aya_vision": "aya_vision:AyaVisionConfig",
    # InternVL (OpenGVLab)
    "internvl": "internvl:InternVLConfig",
    # DeepSeek and the models that declare its architecture
    "deepseek_v2": "deepseek:DeepseekV2Config",
    "deepseek_v3": "deepseek:DeepseekV3Config",
    "deepseek_v32": "deepseek:DeepseekV32Config",
    "deepseek_v4": "deepseek:DeepseekV4Config",
    "kimi_k2": "deepseek:DeepseekV3Config",
    "sarvam_mla": "deepseek:SarvamMLAConfig",
    "youtu": "youtu:YoutuConfig",
    # Moonshot AI
    "kimi_linear": "kimi:KimiLinearConfig",
    "kimi_k25": "kimi:KimiK25Config",
    # GLM (Zhipu AI / Z.ai)
    "glm": "glm:GlmConfig",
    "glm4": "glm:Glm4Config",
    "glm4_moe": "glm:Glm4MoeConfig",
    "sarvam_moe": "glm:SarvamMoEConfig",
    "solar_open": "glm:SolarOpenConfig",
    "glm4_moe_lite": "glm:Glm4MoeLiteConfig",
    "glm_moe_dsa": "glm:GlmMoeDsaConfig",
    "glm4v_text": "glm4v:Glm4vTextConfig",
    "glm4v": "glm4v:Glm4vConfig",
    "glm4v_moe_text": "glm4v:Glm4vMoeTextConfig",
    "glm4v_moe": "glm4v:Glm4vMoeConfig",
    "glm46v": "glm4v:Glm46VConfig",
    # MiniMax
    "minimax": "minimax:MiniMaxConfig",
    "minimax_m2": "minimax:MiniMaxM2Config",
    # Gemma
    "gemma": "gemma:GemmaConfig",
    "gemma2": "gemma:Gemma2Config",
    "vaultgemma": "gemma:VaultGemmaConfig",
    "gemma3_text": "gemma:Gemma3TextConfig",
    "gemma3": "gemma:Gemma3Config",
    "gemma4_text": "gemma:Gemma4TextConfig",
    "gemma4": "gemma:Gemma4Config",
    "gemma3n_text": "gemma:Gemma3nTextConfig",
    "gemma3n": "gemma:Gemma3nConfig",
    "paligemma": "gemma:PaliGemmaConfig",
    "recurrent_gemma": "recurrent_gemma:RecurrentGemmaConfig",
    # Phi
    "phi": "phi:PhiConfig",
    "phi3": "phi:Phi3Config",
    "phimoe": "phi:PhimoeConfig",
    # OpenAI's and EleutherAI's GPTs
    "gpt2": "gpt:Gpt2Config",
    "gpt-sw3": "gpt:GptSw3Config",
    "openai-gpt": "gpt:OpenAIGPTConfig",
    "gptj": "gpt:GptjConfig",
    "gpt_neox": "gpt:GptNeoxConfig",
    "gpt_neo": "gpt:GptNeoConfig",
    "gpt_oss": "gpt_oss:GptOssConfig",
    # Code models of the GPT lineage (Salesforce, BigCode)
    "codegen": "gpt:CodeGenConfig",
    "gpt_bigcode": "gpt:GptBigCodeConfig",
    "starcoder2": "gpt:Starcoder2Config",
    # Other lineages
    "bloom": "bloom:BloomConfig",
    "falcon": "falcon:FalconConfig",
    "falcon_h1": "falcon:FalconH1Config",
    "opt": "opt:OptConfig",
    "cohere": "cohere:CohereConfig",
    "cohere2": "cohere:Cohere2Config",
    "cohere2_moe": "cohere:Cohere2MoeConfig",
    "exaone": "exaone:ExaoneConfig",
    "exaone4": "exaone:Exaone4Config",
    "exaone_moe": "exaone:ExaoneMoeConfig",
    "seed_oss": "seed:SeedOssConfig",
    "apertus": "apertus:ApertusConfig",
    "hunyuan_v1_dense": "hunyuan:HunYuanDenseV1Config",
    "hunyuan_v1_moe": "hunyuan:HunYuanMoEV1Config",
    "hy_v3": "hunyuan:HYV3Config",
    "dots1": "dots:Dots1Config",
    "arcee": "arcee:ArceeConfig",
    "afmoe": "arcee:AfmoeConfig",
    "laguna": "laguna:LagunaConfig",
    "helium": "helium:HeliumConfig",
    "olmo": "olmo:OlmoConfig",
    "olmo2": "olmo:Olmo2Config",
    "olmo3": "olmo:Olmo3Config",
    "olmoe": "olmo:OlmoeConfig",
    "flex_olmo": "olmo:FlexOlmoConfig",
    "olmo_hybrid": "olmo:OlmoHybridConfig",
    "ernie4_5": "ernie:Ernie45Config",
    "ernie4_5_moe": "ernie:Ernie45MoeConfig",
    "minicpm3": "minicpm:MiniCPM3Config",
    "mimo": "mimo:MimoConfig",
    "mimo_v2_flash": "mimo:MimoV2FlashConfig",
    "longcat_flash": "longcat:LongcatFlashConfig",
    "dbrx": "dbrx:DbrxConfig",
    "bailing_moe": "bailing:BailingMoeConfig",
    "nemotron": "nemotron:NemotronConfig",
    "nemotron_h": "nemotron:NemotronHConfig",
    "stablelm": "stablelm:StableLmConfig",
    "mpt": "mpt:MptConfig",
    "persimmon": "persimmon:PersimmonConfig",
    "jais2": "jais:Jais2Config",
    "nanochat": "nanochat:NanoChatConfig",
    # State-space models, and hybrids of state-space mixers or short convolutions with attention
    "mamba": "mamba:MambaConfig",
    "falcon_mamba": "mamba:FalconMambaConfig",
    "mamba2": "mamba:Mamba2Config",
    "jamba": "jamba:JambaConfig",
    "bamba": "bamba:BambaConfig",
    "granitemoehybrid": "bamba:GraniteMoeHybridConfig",
    "zamba2": "zamba:Zamba2Config",
    "lfm2": "lfm:Lfm2Config",
    "lfm2_moe": "lfm:Lfm2MoeConfig",
    "lfm2_vl": "lfm:Lfm2VlConfig",
    # Encoders and encoder-decoders
    "bert": "bert:BertConfig",
    "roberta": "bert:RobertaConfig",
    "xlm-roberta": "bert:XLMRobertaConfig",
    "xlm-roberta-xl": "bert:XLMRobertaXLConfig",
    "camembert": "bert:CamembertConfig",
    "roberta-prelayernorm": "bert:RobertaPreLayerNormConfig",
    "megatron-bert": "bert:MegatronBertConfig",
    "electra": "bert:ElectraConfig",
    "distilbert": "bert:DistilBertConfig",
    "deberta-v2": "deberta:DebertaV2Config",
    "modernbert": "modernbert:ModernBertConfig",
    "mpnet": "mpnet:MPNetConfig",
    "gte": "rotary_bert:GteConfig",
    "nomic_bert": "rotary_bert:NomicBertConfig",
    "jina_embeddings_v3": "rotary_bert:JinaEmbeddingsV3Config",
    "t5": "t5:T5Config",
    "mt5": "t5:MT5Config",
    "umt5": "t5:UMT5Config",
    "switch_transformers": "t5:SwitchTransformersConfig",
    "bart": "bart:BartConfig",
    "mbart": "bart:MBartConfig",
    "marian": "bart:MarianConfig",
    "pegasus": "bart:PegasusConfig",
    "plbart": "bart:PLBartConfig",
    "m2m_100": "bart:M2M100Config",
    "blenderbot": "bart:BlenderbotConfig",
    "blenderbot-small": "bart:BlenderbotSmallConfig",
    # Speech
    "whisper": "whisper:WhisperConfig",
    # ffncalc's own format, for models published without a config.json
    "ffncalc": "preset:PresetConfig",
}


# The towers a multimodal wrapper may name in its vision_config (families/vision.py) or audio_config (families/audio.py).
TOWERS: dict[str, str] = {
    "clip_vision_model": "vision:ClipVisionConfig",
    "siglip_vision_model": "vision:SiglipVisionConfig",
    "siglip2_vision_model": "vision:Siglip2VisionConfig",
    "idefics3_vision": "vision:Idefics3VisionConfig",
    "smolvlm_vision": "vision:SmolVLMVisionConfig",
    "internvl_vision": "vision:InternVLVisionConfig",
    "pixtral": "vision:PixtralVisionConfig",
    "qwen2_vl_vision": "vision:Qwen2VLVisionConfig",
    "qwen2_5_vl_vision": "vision:Qwen25VLVisionConfig",
    "qwen3_vl_vision": "vision:Qwen3VLVisionConfig",
    "qwen3_vl_moe_vision": "vision:Qwen3VLMoeVisionConfig",
    "qwen3_5_vision": "vision:Qwen35VisionConfig",
    "qwen3_5_moe_vision": "vision:Qwen35MoeVisionConfig",
    "glm4v_vision": "vision:Glm4vVisionConfig",
    "glm4v_moe_vision": "vision:Glm4vMoeVisionConfig",
    "llama4_vision_model": "vision:Llama4VisionConfig",
    "gemma4_vision": "vision:Gemma4VisionConfig",
    "kimi_k25_vision": "vision:KimiK25VisionConfig",
    "gemma3n_vision": "vision:Gemma3nVisionConfig",
    "gemma4_audio": "audio:Gemma4AudioConfig",
    "gemma3n_audio": "audio:Gemma3nAudioConfig",
}


def adapter_for(model_type: str, registry: dict[str, str] = FAMILIES) -> type[HFConfig] | None:
    """The adapter class that reads MODEL_TYPE (a family, or with registry=TOWERS a tower), imported on first use; None if unknown."""
    target = registry.get(model_type) if isinstance(model_type, str) else None
    if target is None:
        return None
    module, name = target.split(":")
    adapter: type[HFConfig] = getattr(importlib.import_module(f".{module}", __name__), name)
    return adapter


def supported_model_types() -> list[str]:
    return sorted(model_type for model_type in FAMILIES if model_type != "ffncalc")


def families() -> dict[str, list[str]]:
    """Each family (as people name it) with the model_types it reads, for `ffncalc models --families`."""
    grouped: dict[str, list[str]] = {}
    for model_type in supported_model_types():
        adapter = adapter_for(model_type)
        assert adapter is not None
        grouped.setdefault(adapter.architecture, []).append(model_type)
    return dict(sorted(grouped.items(), key=lambda item: item[0].lower()))


def closest_model_types(model_type: str, architectures: list[str] | None = None) -> list[str]:
    """The supported model_types nearest MODEL_TYPE by spelling, and those whose classes share ARCHITECTURES' stem."""
    known = supported_model_types()
    found = difflib.get_close_matches(model_type.lower(), known, n=3, cutoff=0.6)
    for architecture in architectures or []:
        stem = re.sub(r"(For\w+|Model|LMHeadModel)$", "", str(architecture)).lower()
        for candidate in known:
            if stem and candidate.replace("_", "") == stem.replace("_", "") and candidate not in found:
                found.append(candidate)
    return found[:4]


def parse_config(raw: dict[str, Any], source: str, as_type: str | None = None) -> HFConfig:
    """Validate a config.json dict with its family's adapter (or, with AS_TYPE, another family's)."""
    model_type = raw.get("model_type")
    if not isinstance(model_type, str):
        raise InvalidConfigError(f"{source}: model_type: required field is missing or not a string")
    adapter = adapter_for(as_type or model_type)
    if adapter is None:
        if as_type:
            raise UnsupportedModelError(
                f"--as {as_type!r} is not a model_type ffncalc knows; see `ffncalc models --families`"
            )
        raise _unsupported(raw, model_type, source)
    if as_type:
        raw = {**raw, "model_type": as_type}
    try:
        config = adapter.model_validate(raw)
        config.validate_nested()
        config.quantization  # noqa: B018 - validates quantization_config (a wrapper's: also text_config's)
    except ValidationError as error:
        raise describe_validation_error(error, source) from None
    except FfncalcError as error:
        raise type(error)(f"{source}: {error}") from None
    return config


def _unsupported(raw: dict[str, Any], model_type: str, source: str) -> UnsupportedModelError:
    architectures = raw.get("architectures") if isinstance(raw.get("architectures"), list) else None
    custom = " (a custom-code architecture; its code was not run)" if "auto_map" in raw else ""
    closest = closest_model_types(model_type, architectures)
    nearest = f"closest known: {', '.join(closest)}; " if closest else ""
    return UnsupportedModelError(
        f"{source}: model_type {model_type!r}{custom} is not supported; {nearest}"
        f"`ffncalc models --families` lists them, and --as MODEL_TYPE counts it with a known family's rules"
    )


def load_spec(raw: dict[str, Any], source: str) -> ModelSpec:
    """Parse a config.json dict into the architecture-neutral spec."""
    return parse_config(raw, source).to_spec()
