"""quantization_config at the border: each scheme's fields checked as the library that loads it checks them.

A config's quantization_config (or one nested under text_config) is validated like the rest of the config:
a value the scheme's loader refuses is refused here, with the field named. The authorities, by scheme:
- transformers 5.24, utils/quantization_config.py: FineGrainedFP8Config.post_init (fp8, mxfp8),
  GPTQConfig.post_init, AwqConfig.post_init, BitsAndBytesConfig.post_init and AutoQuantizationConfig.from_dict
  (bitsandbytes), Mxfp4Config;
- AWQ's bit width: GPTQModel's AWQ kernels (gptqmodel/nn_modules/qlinear/gemm_awq.py: SUPPORTS_BITS = [4],
  "Only 4-bit are supported for now." in pack), as AutoAWQ's WQLinear_GEMM;
- bitsandbytes' 4-bit types: bitsandbytes functional.quantize_4bit knows "fp4" and "nf4" only;
- compressed-tensors: its QuantizationArgs (num_bits, type int|float, strategy, a positive group_size for the
  group strategy, -1 meaning per channel);
- NVIDIA ModelOpt (quant_method "modelopt"; transformers 5.24 has no loader for it, vLLM does):
  vllm/model_executor/layers/quantization/modelopt.py (ModelOptQuantConfigBase.from_config: quant_algo,
  group_size, ignore / exclude_modules);
- transformers 5.24 MetalConfig.post_init (metal), GemmaQuantizationConfig (gemma: num_bits 2, 4 or 8, per-module
  overrides by regex), FPQuantConfig.post_init (fp_quant), AutoRoundConfig.post_init (auto-round), HiggsConfig.post_init
  (higgs), SpQRConfig.post_init and integrations/spqr.py (spqr), VptqConfig.post_init, VptqLayerConfig.post_init and
  the keys integrations/vptq.py reads (vptq).
Schemes ffncalc does not lay out are accepted by name (``UNREAD``), each with the reason it is not read
(``UNREAD_BECAUSE``); the weights are then counted unquantized, and a note says so and why.
"""

from __future__ import annotations

import json
import re
from typing import Annotated, Any, Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

Module = Annotated[str, Field(strict=True, max_length=1000)]
Modules = Annotated[list[Module], Field(max_length=100_000)]
Positive = Annotated[int, Field(strict=True, ge=1, le=1 << 24)]
Flag = Annotated[bool, Field(strict=True)]

# Every quant_method transformers 5.24's AutoQuantizationConfig knows (AUTO_QUANTIZATION_CONFIG_MAPPING), and
# ModelOpt's, which vLLM and SGLang load.
READ = (
    "fp8", "mxfp8", "mxfp4", "gptq", "awq", "bitsandbytes", "compressed-tensors", "modelopt", "fbgemm_fp8", "eetq",
    "bitnet", "aqlm", "metal", "gemma", "fp_quant", "auto-round", "higgs", "spqr", "vptq",
)  # fmt: skip

# Why each scheme ffncalc does not lay out is not read (transformers 5.24's quantizers/quantizer_*.py and
# integrations/*.py). LOAD_TIME: the checkpoint itself holds the unquantized weights, so the unquantized count is
# the checkpoint's size (loaded, the weights take less).
LOAD_TIME = "quantizes at load time"
UNREAD_BECAUSE = {
    "nvfp4": f"{LOAD_TIME}: transformers refuses pre-quantized NVFP4 checkpoints and cannot save one "
    "(NVFP4HfQuantizer.is_serializable is False), so the checkpoint holds unquantized weights",
    "quanto": f"{LOAD_TIME}: transformers cannot save a quanto model (QuantoHfQuantizer.is_serializable is False), "
    "so the checkpoint holds unquantized weights",
    "gguf": "the weights are in a GGUF file, each tensor in the llama.cpp block type chosen when it was converted; "
    "config.json does not say which",
    "torchao": "each weight is a torchao tensor subclass saved as its parts (_weight_qdata, _weight_scale …), whose "
    "shapes depend on the subclass and packing format torchao chose; the checkpoint's safetensors metadata records "
    "them, config.json does not",
    "sinq": "each module is stored as SINQLinear's state, W_q and an encoded 'meta' tensor whose size the sinq "
    "package decides; config.json does not describe it",
    "hqq": "transformers 5.24 has no loader for HQQ weights (its HQQ quantizer defines no load or quantize "
    "operation); hqq's HQQLinear stores W_q, scale, zero and a dozen metadata tensors per module, not laid out here",
    "quark": "AMD Quark's export lays each layer out from its own weight, input and output specs (global_quant_config, "
    "layer_quant_config, layer_type_quant_config: int4, uint4, int8, fp8 or mxfp4, per tensor, channel or group, "
    "packed by export.pack_method) through quark's own _map_to_quark, which transformers does not contain; ffncalc "
    "does not lay them out",
    "fouroversix": "fouroversix 1.0.5's QuantizedTensor pads each weight to a multiple of 128 rows and of 4 scale "
    "blocks of columns and keeps its scale factors in CUTLASS's Blackwell layout, in shapes the quantize backend that "
    "ran decides (config.json's quantize_backend is usually null), with per-module overrides and MoE modules of its "
    "own; ffncalc does not lay them out",
}
UNREAD = tuple(sorted(UNREAD_BECAUSE))


class Block(BaseModel):
    """A quantization_config: unknown keys ignored, as the config classes take them as kwargs."""

    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True, defer_build=True)

    quant_method: str


class Fp8Block(Block):
    """FineGrainedFP8Config (fp8, and mxfp8, which reuses it)."""

    quant_method: Literal["fp8", "mxfp8"]
    activation_scheme: Literal["dynamic", "static"] = "dynamic"
    # transformers' default (128, 128) when the key is absent; null means one scale per tensor.
    weight_block_size: tuple[Positive, Positive] | None = (128, 128)
    scale_fmt: Literal["float", "ue8m0"] = "float"
    expert_dtype: Literal["fp8", "fp4"] = "fp8"
    modules_to_not_convert: Modules | None = Field(
        None, validation_alias=AliasChoices("modules_to_not_convert", "ignored_layers")
    )

    @field_validator("activation_scheme", mode="before")
    @classmethod
    def _lower(cls, value: Any) -> Any:
        return value.lower() if isinstance(value, str) else value  # transformers lowercases it

    def warnings(self) -> list[str]:
        block = self.weight_block_size
        if block is not None and block[0] * block[1] <= 4:
            return [
                f"quantization_config.weight_block_size {list(block)}: a float32 scale for every {block[0] * block[1]} "
                "weight(s): the scales take as many bytes as the FP8 weights or more"
            ]
        return []


class Mxfp4Block(Block):
    """Mxfp4Config."""

    quant_method: Literal["mxfp4"]
    modules_to_not_convert: Modules | None = None
    dequantize: Flag = False


GroupSize = Annotated[int, Field(strict=True, ge=-1, le=1 << 24)]


def _group_size(value: int) -> int:
    if value == 0 or value < -1:  # GPTQConfig.post_init
        raise ValueError("must be greater than 0 or equal to -1 (one group per input column)")
    return value


class GptqBlock(Block):
    """GPTQConfig: bits 2, 3, 4 or 8; group_size > 0 or -1."""

    quant_method: Literal["gptq"]
    bits: Literal[2, 3, 4, 8] = Field(validation_alias=AliasChoices("bits", "w_bit"))
    group_size: GroupSize = Field(128, validation_alias=AliasChoices("group_size", "q_group_size"))
    desc_act: Flag = False
    sym: Flag = True
    damp_percent: float = Field(0.1, strict=False, gt=0, lt=1)
    modules_to_not_convert: Modules | None = None

    @field_validator("bits", mode="before")
    @classmethod
    def _strict_bits(cls, value: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, int):  # true and 4.0 are not bit widths
            raise ValueError(f"must be 2, 3, 4 or 8 (got {json.dumps(value)})")
        return value

    _group = field_validator("group_size")(lambda cls, value: _group_size(value))


class AwqBlock(Block):
    """AwqConfig: 4-bit only (the AWQ kernels pack nothing else), group_size > 0 or -1."""

    quant_method: Literal["awq"]
    bits: Literal[4] = Field(4, validation_alias=AliasChoices("bits", "w_bit"))
    group_size: GroupSize = Field(128, validation_alias=AliasChoices("group_size", "q_group_size"))
    zero_point: Flag = True
    version: Literal["gemm", "gemv", "gemv_fast", "llm-awq"] = Field(
        "gemm", validation_alias=AliasChoices("version", "format")
    )
    modules_to_not_convert: Modules | None = None

    @field_validator("bits", mode="before")
    @classmethod
    def _strict_bits(cls, value: Any) -> Any:
        if value != 4 or isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"must be 4: AWQ's kernels pack 4-bit weights only (got {json.dumps(value)})")
        return value

    @field_validator("version", mode="before")
    @classmethod
    def _lower(cls, value: Any) -> Any:
        return value.lower() if isinstance(value, str) else value

    _group = field_validator("group_size")(lambda cls, value: _group_size(value))


class BitsAndBytesBlock(Block):
    """BitsAndBytesConfig: exactly one of load_in_4bit and load_in_8bit."""

    quant_method: Literal["bitsandbytes"] = "bitsandbytes"
    load_in_4bit: Flag = False
    load_in_8bit: Flag = False
    llm_int8_threshold: float = Field(6.0, strict=True)
    llm_int8_skip_modules: Modules | None = None
    llm_int8_has_fp16_weight: Flag = False
    bnb_4bit_quant_type: Literal["fp4", "nf4"] = "fp4"
    bnb_4bit_use_double_quant: Flag = False
    bnb_4bit_compute_dtype: Annotated[str, Field(strict=True, max_length=40)] | None = None
    bnb_4bit_quant_storage: Literal["float16", "float32", "int8", "uint8", "float64", "bfloat16"] | None = None

    @model_validator(mode="after")
    def _one_width(self) -> BitsAndBytesBlock:
        if self.load_in_4bit and self.load_in_8bit:
            raise ValueError("load_in_4bit and load_in_8bit are both true; only one can be used")
        if not (self.load_in_4bit or self.load_in_8bit):
            raise ValueError("bitsandbytes needs load_in_4bit or load_in_8bit set to true")
        return self


class CompressedArgs(BaseModel):
    """compressed-tensors' QuantizationArgs: the fields that decide the stored layout."""

    model_config = ConfigDict(extra="ignore", frozen=True, defer_build=True)

    num_bits: Annotated[int, Field(strict=True, ge=1, le=32)] = 8
    type: Literal["int", "float"] = "int"
    symmetric: Flag = True
    dynamic: Flag | Literal["local"] = False
    strategy: Literal["tensor", "channel", "group", "block", "token", "tensor_group", "attn_head"] | None = None
    group_size: Annotated[int, Field(strict=True, ge=-1, le=1 << 24)] | None = None
    block_structure: tuple[Positive, Positive] | None = None

    @model_validator(mode="after")
    def _strategy(self) -> CompressedArgs:
        group = self.group_size
        if group is not None and (group == 0 or group < -1):
            raise ValueError(f"group_size must be greater than 0 or -1 (got {group})")
        strategy = self.strategy
        if strategy is None:
            strategy = "channel" if group == -1 else "group" if group is not None else "tensor"
            object.__setattr__(self, "strategy", strategy)
        if strategy in ("group", "tensor_group") and (group is None or group <= 0):
            raise ValueError(f"strategy {strategy!r} requires a positive group_size (got {group})")
        if strategy == "block" and self.block_structure is None:
            raise ValueError("strategy 'block' requires block_structure [rows, columns]")
        return self


class CompressedGroup(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True, defer_build=True)

    targets: Modules = []
    weights: CompressedArgs | None = None
    input_activations: CompressedArgs | None = None


class CompressedTensorsBlock(Block):
    """compressed-tensors' QuantizationConfig."""

    quant_method: Literal["compressed-tensors"]
    format: Annotated[str, Field(strict=True, max_length=100)] | None = None
    config_groups: dict[Annotated[str, Field(max_length=200)], CompressedGroup] = Field({}, max_length=1000)
    ignore: Modules | None = None


class ModelOptLayer(BaseModel):
    """One module's entry in a MIXED_PRECISION checkpoint's quantized_layers: its own quant_algo and group size."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    quant_algo: Annotated[str, Field(strict=True, max_length=100)]
    group_size: Positive | None = None

    @field_validator("quant_algo")
    @classmethod
    def _upper(cls, value: str) -> str:
        return value.upper()


MAX_QUANTIZED_LAYERS = (
    100_000  # a module per entry (a 1,000-layer model with 100 modules each): past it, no checkpoint's
)


class ModelOptBlock(Block):
    """ModelOpt's quantization_config as vLLM reads it from config.json (quant_algo, group_size, ignore), and for
    quant_algo MIXED_PRECISION the per-module table (vLLM's ModelOptMixedPrecisionConfig reads quantized_layers:
    vllm/model_executor/layers/quantization/modelopt.py)."""

    quant_method: Literal["modelopt"]
    quant_algo: Annotated[str, Field(strict=True, max_length=100)]
    group_size: Positive | None = None
    ignore: Modules | None = Field(None, validation_alias=AliasChoices("ignore", "exclude_modules"))
    quantized_layers: (
        Annotated[dict[Annotated[str, Field(max_length=500)], ModelOptLayer], Field(max_length=MAX_QUANTIZED_LAYERS)]
        | None
    ) = None

    @field_validator("quant_algo")
    @classmethod
    def _upper(cls, value: str) -> str:
        return value.upper()  # vLLM upper-cases it (ModelOpt may emit lowercase)

    def unread_layers(self) -> dict[str, int]:
        """MIXED_PRECISION: the per-module quant_algos ffncalc does not lay out, with how many modules use each."""
        found: dict[str, int] = {}
        for layer in (self.quantized_layers or {}).values():
            if layer.quant_algo not in MODELOPT_LAYER_READ:
                found[layer.quant_algo] = found.get(layer.quant_algo, 0) + 1
        return found


# The quant_algo values whose layout ffncalc writes out (vLLM's QUANT_ALGOS has more: FP8_PER_CHANNEL_PER_TOKEN,
# FP8_PB_WO, MXFP8); MIXED_PRECISION is read module by module, each module's algo one of MODELOPT_LAYER_READ.
MODELOPT_LAYER_READ = ("FP8", "NVFP4", "W4A16_NVFP4")
MODELOPT_READ = (*MODELOPT_LAYER_READ, "MIXED_PRECISION")


class MlxBlock(Block):
    """mlx-lm's "quantization" block (no quant_method: mlx-lm writes {"group_size", "bits"}, and newer versions the
    same as quantization_config): affine quantization of every Linear and Embedding whose input width divides by
    group_size (mlx-lm 0.28, mlx_lm/utils.py quantize_model's class_predicate; mlx.nn.QuantizedLinear and
    QuantizedEmbedding store weight as uint32 [out, in · bits / 32] and scales and biases [out, in / group_size] in
    the model's dtype)."""

    quant_method: str = "mlx"
    bits: Annotated[int, Field(strict=True)] = 4
    group_size: Annotated[int, Field(strict=True)] = 64

    @field_validator("bits")
    @classmethod
    def _bits(cls, value: int) -> int:
        if value not in (2, 3, 4, 5, 6, 8):  # mlx.core.quantize's affine widths
            raise ValueError(f"must be 2, 3, 4, 5, 6 or 8, as mlx quantizes (got {value})")
        return value

    @field_validator("group_size")
    @classmethod
    def _group(cls, value: int) -> int:
        if value not in (32, 64, 128):  # mlx.core.quantize's group sizes
            raise ValueError(f"must be 32, 64 or 128, as mlx quantizes (got {value})")
        return value


class FbgemmFp8Block(Block):
    """FbgemmFp8Config (transformers 5.24 utils/quantization_config.py): FP8 weights with a float32 scale per output
    row (integrations/fbgemm_fp8.py, FbgemmFp8Linear)."""

    quant_method: Literal["fbgemm_fp8"]
    modules_to_not_convert: Modules | None = None


class EetqBlock(Block):
    """EetqConfig: int8 weights stored [in, out] with a float16 scale per output (integrations/eetq.py, EetqLinear);
    its post_init accepts weights "int8" only."""

    quant_method: Literal["eetq"]
    weights: Literal["int8"] = "int8"
    modules_to_not_convert: Modules | None = None


class BitNetBlock(Block):
    """BitNetQuantConfig: ternary weights. BitLinear packs four to a byte, uint8 [out // 4, in], with one weight_scale
    in the model's dtype; AutoBitLinear keeps [out, in] in the model's dtype, with the scale when offline
    (integrations/bitnet.py)."""

    quant_method: Literal["bitnet"]
    linear_class: Literal["bitlinear", "autobitlinear"] = "bitlinear"
    quantization_mode: Literal["online", "offline"] = "offline"
    use_rms_norm: Flag = False
    modules_to_not_convert: Modules | None = None


class AqlmBlock(Block):
    """AqlmConfig (transformers 5.24; post_init wants ints): weights as sums of num_codebooks codes, each picking one
    of 2^nbits_per_codebook vectors of out_group_size × in_group_size weights (aqlm's QuantizedLinear)."""

    quant_method: Literal["aqlm"]
    in_group_size: Positive = 8
    out_group_size: Positive = 1
    num_codebooks: Positive = 1
    # A codebook holds 2^nbits vectors: AQLM's setups (and its CUDA kernels, kernel_selector.py) use 8 or 16 bits;
    # past 16 a codebook would outweigh the weights it encodes.
    nbits_per_codebook: Annotated[int, Field(strict=True, ge=1, le=16)] = 16
    linear_weights_not_to_quantize: Modules | None = None


class MetalBlock(Block):
    """MetalConfig (transformers 5.24): affine quantization of every nn.Linear for Apple's Metal kernels; post_init
    wants bits 2, 4 or 8 and a positive group_size."""

    quant_method: Literal["metal"]
    bits: Annotated[int, Field(strict=True)] = 4
    group_size: Positive = 64
    modules_to_not_convert: Modules | None = None
    dequantize: Flag = False

    @field_validator("bits")
    @classmethod
    def _bits(cls, value: int) -> int:
        if value not in (2, 4, 8):
            raise ValueError(f"must be 2, 4 or 8, as MetalConfig accepts (got {value})")
        return value


GemmaBits = Annotated[int, Field(strict=True)]


def _gemma_bits(value: int) -> int:
    if value not in (2, 4, 8):  # GemmaQuantizationConfig's widths; QuantizedLinear would store any other as int8
        raise ValueError(f"must be 2, 4 or 8, as GemmaQuantizationConfig documents (got {value})")
    return value


class GemmaOverride(BaseModel):
    """One entry of module_quant_configs: its keys are passed to QuantizedLinear, which takes num_bits only."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    num_bits: GemmaBits | None = None

    _bits = field_validator("num_bits")(lambda cls, value: None if value is None else _gemma_bits(value))


class GemmaBlock(Block):
    """GemmaQuantizationConfig (transformers 5.24): int2/4/8 weights for pre-quantized Gemma checkpoints, with bit
    widths per module by regex (integrations/gemma_quant.py replace_with_quant_layers)."""

    quant_method: Literal["gemma"]
    num_bits: GemmaBits = 4
    quantize_embeddings: Flag = False
    module_quant_configs: dict[Annotated[str, Field(max_length=1000)], GemmaOverride] | None = Field(
        None, max_length=10_000
    )
    modules_to_not_convert: Modules | None = None

    _bits = field_validator("num_bits")(lambda cls, value: _gemma_bits(value))

    @field_validator("module_quant_configs")
    @classmethod
    def _patterns(cls, value: dict[str, GemmaOverride] | None) -> dict[str, GemmaOverride] | None:
        for pattern in value or {}:
            try:  # transformers joins the patterns into one regex and searches each module name with it
                re.compile(pattern)
            except re.error as error:
                raise ValueError(f"{pattern[:60]!r} is not a regular expression ({error})") from None
        return value


class FpQuantBlock(Block):
    """FPQuantConfig (transformers 5.24; post_init's checks): NVFP4 or MXFP4 weights behind a Hadamard rotation,
    stored by fp_quant's FPQuantLinear."""

    quant_method: Literal["fp_quant"]
    forward_dtype: Literal["nvfp4", "mxfp4"] = "nvfp4"
    forward_method: Literal["abs_max", "quest"] = "abs_max"
    backward_dtype: Literal["bf16", "mxfp8", "mxfp4"] = "bf16"
    store_master_weights: Flag = False
    hadamard_group_size: Positive | None = None
    pseudoquantization: Flag = False
    transform_init: Literal["hadamard", "identity", "gsr"] = "hadamard"
    modules_to_not_convert: Modules | None = None

    @model_validator(mode="after")
    def _post_init(self) -> FpQuantBlock:
        nvfp4 = self.forward_dtype == "nvfp4"
        if self.hadamard_group_size is None:
            object.__setattr__(self, "hadamard_group_size", 16 if nvfp4 else 32)
        sizes = (16, 32, 64, 128) if nvfp4 else (32, 64, 128)
        if self.hadamard_group_size not in sizes:
            raise ValueError(
                f"hadamard_group_size must be one of {', '.join(map(str, sizes))} for {self.forward_dtype} "
                f"(got {self.hadamard_group_size})"
            )
        if nvfp4 and self.forward_method != "abs_max":
            raise ValueError("forward_method must be 'abs_max' for nvfp4")
        if self.backward_dtype != "bf16" and nvfp4:
            raise ValueError(f"backward_dtype {self.backward_dtype!r} needs forward_dtype 'mxfp4'")
        return self


# auto-round's packing formats ffncalc lays out (auto-round writes auto_gptq for symmetric int weights).
AUTO_ROUND_READ = ("auto_round:auto_gptq",)


class AutoRoundBlock(Block):
    """AutoRoundConfig (transformers 5.24; post_init: bits 2 to 8, group_size > 0 or -1) and the fields auto-round
    0.16 writes beside them (export/export_to_autoround/export.py save_quantized_as_autoround)."""

    quant_method: Literal["auto-round"]
    bits: Annotated[int, Field(strict=True)] = 4
    group_size: GroupSize = 128
    sym: Flag = True
    packing_format: Annotated[str, Field(strict=True, max_length=100)] = "auto_round:gptq"
    data_type: Annotated[str, Field(strict=True, max_length=40)] = "int"
    act_bits: Annotated[int, Field(strict=True, ge=1, le=32)] = 16
    extra_config: dict[Annotated[str, Field(max_length=1000)], Any] | None = Field(None, max_length=100_000)
    block_name_to_quantize: Annotated[str, Field(strict=True, max_length=10_000)] | Modules | None = None

    @field_validator("bits")
    @classmethod
    def _bits(cls, value: int) -> int:
        if value not in range(2, 9):
            raise ValueError(f"must be 2 to 8, as AutoRoundConfig accepts (got {value})")
        return value

    _group = field_validator("group_size")(lambda cls, value: _group_size(value))

    @property
    def blocks(self) -> tuple[str, ...]:
        """The block prefixes quantized (auto-round splits a string at commas)."""
        names = self.block_name_to_quantize
        if isinstance(names, str):
            return tuple(name.strip() for name in names.split(",") if name.strip())
        return tuple(names or ())

    def unread(self) -> str:
        """Why ffncalc does not lay this export out ('' when it does)."""
        if self.packing_format not in AUTO_ROUND_READ:
            return f"packing_format {self.packing_format!r} (ffncalc lays out {', '.join(AUTO_ROUND_READ)})"
        if self.data_type != "int" or self.act_bits < 16 or self.bits not in (2, 4, 8):
            return (
                f"{self.bits}-bit {self.data_type} weights with {self.act_bits}-bit activations (ffncalc lays out "
                "2-, 4- and 8-bit int weights with 16-bit activations)"
            )
        if self.extra_config:
            return "extra_config gives some layers their own settings, which ffncalc does not lay out"
        return ""


StrictInt = Annotated[int, Field(strict=True)]


def _one_of(value: int, choices: tuple[int, ...], who: str) -> int:
    if value not in choices:
        raise ValueError(
            f"must be {', '.join(map(str, choices[:-1]))} or {choices[-1]}, as {who} accepts (got {value})"
        )
    return value


class HiggsBlock(Block):
    """HiggsConfig (transformers 5.24; post_init: bits 2, 3 or 4, p 1 or 2, group_size 64, 128 or 256 dividing
    hadamard_size): FLUTE-packed weights of HiggsLinear (integrations/higgs.py)."""

    quant_method: Literal["higgs"]
    bits: StrictInt = 4
    p: StrictInt = 2
    hadamard_size: Positive = 512  # pad_to_block divides by it: zero is refused, not only by post_init
    group_size: StrictInt = 256
    modules_to_not_convert: Modules | None = None

    _bits = field_validator("bits")(lambda cls, value: _one_of(value, (2, 3, 4), "HiggsConfig"))
    _p = field_validator("p")(lambda cls, value: _one_of(value, (1, 2), "HiggsConfig"))
    _group = field_validator("group_size")(lambda cls, value: _one_of(value, (64, 128, 256), "HiggsConfig"))

    @model_validator(mode="after")
    def _divides(self) -> HiggsBlock:
        if self.hadamard_size % self.group_size:
            raise ValueError(
                f"hadamard_size {self.hadamard_size} must be divisible by group_size {self.group_size}, as HiggsConfig "
                "requires"
            )
        return self


SpqrLength = Annotated[int, Field(strict=True, ge=0, le=1 << 40)]


class SpqrBlock(Block):
    """SpQRConfig (transformers 5.24; post_init: bits 3, beta1 and beta2 16, shapes a dict): each module's four tensors
    have the lengths quantization_config.shapes gives, "{module}.dense_weights.shape" and so on (integrations/spqr.py)."""

    quant_method: Literal["spqr"]
    bits: StrictInt = 3
    beta1: StrictInt = 16
    beta2: StrictInt = 16
    shapes: dict[Annotated[str, Field(max_length=1000)], SpqrLength] = Field({}, max_length=1_000_000)
    modules_to_not_convert: Modules | None = None

    _bits = field_validator("bits")(lambda cls, value: _only(value, 3, "SpQR currently supports bits = 3 only"))
    _beta1 = field_validator("beta1")(lambda cls, value: _only(value, 16, "SpQR currently supports beta1 = 16 only"))
    _beta2 = field_validator("beta2")(lambda cls, value: _only(value, 16, "SpQR currently supports beta2 = 16 only"))


def _only(value: int, expected: int, why: str) -> int:
    if value != expected:
        raise ValueError(f"{why} (got {value})")
    return value


VptqPair = tuple[StrictInt, StrictInt]


class VptqLayer(BaseModel):
    """One entry of VPTQ's config_for_layers or shared_layer_config: the keys transformers' replace_with_vptq_linear
    passes to vptq's VQuantLinear (all of them required: it reads each with []), checked as VQuantLinear uses them."""

    model_config = ConfigDict(extra="ignore", frozen=True, defer_build=True)

    vector_lens: VptqPair
    num_centroids: VptqPair
    num_res_centroids: VptqPair
    group_num: Positive
    group_size: Positive
    outlier_size: Annotated[int, Field(strict=True, ge=0, le=1 << 24)]
    indices_as_float: Flag
    enable_norm: Flag
    enable_perm: Flag
    is_indice_packed: Literal[True] = True  # VptqLayerConfig.post_init: "should always be True"

    @model_validator(mode="after")
    def _usable(self) -> VptqLayer:
        # VQuantLinear: vector_lens[1] pads out_features; log2 of num_centroids[1] (and of num_res_centroids[1] when
        # positive) is the index width; an outlier component (vector_lens[0] > 1, num_centroids[0] > 0) refuses
        # residual centroids on outliers.
        if self.vector_lens[1] < 1 or self.num_centroids[1] < 1:
            raise ValueError("vector_lens[1] and num_centroids[1] must be positive (the main quantization component)")
        if self.vector_lens[0] > 1 and self.num_centroids[0] > 0 and self.num_res_centroids[0] != -1:
            raise ValueError("num_res_centroids[0] must be -1: VPTQ does not quantize outliers with residuals")
        return self


class VptqBlock(Block):
    """VptqConfig (transformers 5.24; post_init: enable_proxy_error false, each config_for_layers entry a
    VptqLayerConfig): vector-quantized linear layers, each with its own codebooks (vptq's VQuantLinear)."""

    quant_method: Literal["vptq"]
    enable_proxy_error: Literal[False] = False
    config_for_layers: dict[Annotated[str, Field(max_length=1000)], VptqLayer] = Field({}, max_length=100_000)
    shared_layer_config: dict[Annotated[str, Field(max_length=1000)], VptqLayer] = Field({}, max_length=10_000)
    modules_to_not_convert: Modules | None = None


class UnreadBlock(Block):
    """A scheme transformers knows that ffncalc does not lay out: named, not read."""

    modules_to_not_convert: Modules | None = None


BLOCKS: dict[str, type[Block]] = {
    "fp8": Fp8Block,
    "mxfp8": Fp8Block,
    "mxfp4": Mxfp4Block,
    "gptq": GptqBlock,
    "awq": AwqBlock,
    "bitsandbytes": BitsAndBytesBlock,
    "compressed-tensors": CompressedTensorsBlock,
    "modelopt": ModelOptBlock,
    "fbgemm_fp8": FbgemmFp8Block,
    "eetq": EetqBlock,
    "bitnet": BitNetBlock,
    "aqlm": AqlmBlock,
    "metal": MetalBlock,
    "gemma": GemmaBlock,
    "fp_quant": FpQuantBlock,
    "auto-round": AutoRoundBlock,
    "higgs": HiggsBlock,
    "spqr": SpqrBlock,
    "vptq": VptqBlock,
}
BLOCKS.update(dict.fromkeys(UNREAD, UnreadBlock))


class QuantizationError(ValueError):
    """A quantization_config a scheme's loader would refuse: ``field`` (under quantization_config) and why."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}" if field else message)
        self.field, self.message = field, message


def read_block(raw: Any) -> Block:
    """The validated quantization_config; raises ValidationError or QuantizationError naming the field."""
    if not isinstance(raw, dict):
        raise QuantizationError("", f"must be an object (got {type(raw).__name__})")
    method = raw.get("quant_method")
    # transformers' AutoQuantizationConfig.from_dict: load_in_4bit/8bit make a bitsandbytes config, whatever else
    if raw.get("load_in_4bit") is True or raw.get("load_in_8bit") is True:
        method = "bitsandbytes"
        raw = {**raw, "quant_method": method}
    if isinstance(method, str) and method.lower().startswith("modelopt"):
        method = "modelopt"
        raw = {**raw, "quant_method": method}
    if not isinstance(method, str) or method not in BLOCKS:
        shown = json.dumps(method)[:40]
        raise QuantizationError(
            "quant_method",
            f"{shown} is not a scheme transformers knows (e.g. fp8, gptq, awq, bitsandbytes, mxfp4, "
            "compressed-tensors, or modelopt)",
        )
    return BLOCKS[method].model_validate(raw)


def read_mlx(raw: Any) -> Block:
    """mlx-lm's "quantization" block, validated; raises ValidationError or QuantizationError naming the field."""
    if not isinstance(raw, dict):
        raise QuantizationError("", f"must be an object (got {type(raw).__name__})")
    return MlxBlock.model_validate({key: value for key, value in raw.items() if key in ("bits", "group_size")})


def notes(block: Block | None, where: str = "quantization_config") -> list[str]:
    """What a reader must know about a quantization block ffncalc does not lay out."""
    if isinstance(block, UnreadBlock):
        because = UNREAD_BECAUSE[block.quant_method]
        counted = (
            "the checkpoint's weights are counted as stored, unquantized, in the config's dtype"
            if because.startswith(LOAD_TIME)
            else "weights are counted unquantized, in the config's dtype (memory and verify do not know its layout)"
        )
        return [f"{where}: quant_method {block.quant_method!r} is not read by ffncalc: {because}; {counted}"]
    if isinstance(block, AutoRoundBlock) and block.unread():
        return [
            f"{where}: auto-round's {block.unread()} is not read by ffncalc: weights are counted unquantized, in the "
            "config's dtype"
        ]
    if isinstance(block, GemmaBlock) and block.quantize_embeddings:
        return [
            f"{where}: quantize_embeddings: the checkpoint packs the embedding table too (QuantizedEmbedding, with a "
            "float32 scale per block of each row, the block count set by the checkpoint); ffncalc counts the table "
            "in the config's dtype"
        ]
    if isinstance(block, BitNetBlock) and block.linear_class == "autobitlinear":
        return [
            f"{where}: BitNet's AutoBitLinear weights are counted as it creates them, [out, in] in the config's dtype; "
            "a checkpoint may hold them packed four to a byte instead (transformers unpacks either when loading)"
        ]
    if isinstance(block, BitNetBlock) and block.use_rms_norm:
        return [f"{where}: use_rms_norm adds an RMSNorm to every BitLinear, which ffncalc does not count"]
    if isinstance(block, ModelOptBlock) and block.quant_algo not in MODELOPT_READ:
        return [
            f"{where}: ModelOpt quant_algo {block.quant_algo!r} is not read by ffncalc (it reads "
            f"{', '.join(MODELOPT_READ)}): weights are counted unquantized, in the config's dtype"
        ]
    if isinstance(block, ModelOptBlock) and block.quant_algo == "MIXED_PRECISION":
        if not block.quantized_layers:
            return [
                f"{where}: ModelOpt MIXED_PRECISION without a quantized_layers table: weights are counted "
                "unquantized, in the config's dtype"
            ]
        unread = block.unread_layers()
        if unread:
            kinds = ", ".join(f"{algo} ({count:,} modules)" for algo, count in unread.items())
            return [f"{where}: MIXED_PRECISION modules in {kinds} are counted unquantized, in the config's dtype"]
    return []


def warnings(block: Block | None) -> list[str]:
    return block.warnings() if isinstance(block, Fp8Block) else []


__all__ = [
    "BLOCKS",
    "READ",
    "UNREAD",
    "Block",
    "QuantizationError",
    "ValidationError",
    "notes",
    "read_block",
    "warnings",
]
