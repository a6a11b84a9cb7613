"""How a checkpoint stores a model's tensors: names, dtypes, shapes and bytes, quantized or not.

One description serves ``verify`` (which tensors a checkpoint should hold) and ``memory`` (how many
bytes they take). A parameter tensor is stored in the checkpoint's dtype unless the config's
``quantization_config`` quantizes its module; each scheme's layout is written out below, with the
scales and zero points it adds. Conventions:
- only linear weights are quantized (the matrices a token multiplies by); embeddings, norms, biases,
  routers and the output head keep the checkpoint's dtype, as do modules the scheme's
  ``modules_to_not_convert`` / ``ignore`` list names (matched as transformers matches them);
- bytes of a tensor = elements × the dtype's size (MXFP4 blocks and int4 packs are U8 / I32 tensors
  of the packed size, so the rule holds for them too).
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Literal, TypeVar

from .errors import InvalidConfigError
from .spec import ModelSpec
from .tensors import Tensor, stored_parameters
from .units import DTYPE_BYTES
from .values import Value, replace

if TYPE_CHECKING:  # the quantization blocks are imported where a config has one (their classes cost start-up)
    from .quantization import Block, CompressedTensorsBlock, SpqrBlock, VptqLayer

Role = Literal["parameter", "quantization"]
V = TypeVar("V")


class Stored(Value):
    """One tensor as a checkpoint stores it: what it holds (a parameter, or a quantization scale or zero
    point of ``of``), and the component of the model it belongs to."""

    name: str
    dtype: str
    shape: tuple[int, ...]
    role: Role
    component: str
    of: str = ""  # the parameter a quantization tensor belongs to (or that a packed tensor stores)
    params: int = -1  # the parameters it holds: its elements, those it packs, or 0 for a scale (-1: its elements)
    part: str = ""  # the logical part it belongs to (router, routed_experts, q …)

    @property
    def elements(self) -> int:
        return math.prod(self.shape)

    @property
    def parameters(self) -> int:
        if self.params >= 0:
            return self.params
        return 0 if self.role == "quantization" else self.elements

    @property
    def bytes(self) -> int:
        return self.elements * DTYPE_BYTES[self.dtype]


# --- quantization schemes -----------------------------------------------------------------------


def excluded(module: str, patterns: Iterable[str]) -> bool:
    """transformers' should_convert_module, negated: a pattern matches from the start up to a module
    boundary, as a regex with that boundary, or as a suffix."""
    boundary = r"(?:(?<=\.)|(?=\.|$))"
    for pattern in patterns:
        try:
            if re.match(rf"(?:{pattern}){boundary}", module):
                return True
        except re.error:
            pass
        if module.endswith(pattern):
            return True
    return False


# Schemes whose transformers integration swaps nn.Linear modules only (a stacked experts parameter or a GPT-2 Conv1D
# keeps its dtype): fbgemm_fp8 (Llama 4's experts have a class of their own there, not laid out here), eetq, bitnet.
LINEAR_ONLY = (
    "fbgemm_fp8",
    "eetq",
    "bitnet",
    "bitnet-auto",
    "aqlm",
    "metal",
    "gemma",
    "fp_quant",
    "higgs",
    "spqr",
    "vptq",
)


@functools.lru_cache(maxsize=16)
def _by_name(pairs: tuple[tuple[str, V], ...]) -> dict[str, V]:
    return dict(pairs)


@functools.lru_cache(maxsize=16)
def _algo_table(entries: tuple[tuple[str, str, int], ...]) -> dict[str, tuple[str, int]]:
    return {name: (algo, group) for name, algo, group in entries}


@functools.lru_cache(maxsize=64)
def _alternation(patterns: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join(f"(?P<g{index}>{pattern})" for index, pattern in enumerate(patterns)))


class Scheme(Value):
    """A quantization_config, reduced to what decides the stored layout."""

    method: str
    bits: int = 16
    group_size: int | None = None  # GPTQ / AWQ / compressed-tensors groups along the input
    block: tuple[int, int] | None = None  # FP8 blocks (out, in); None: one scale per tensor
    scale_dtype: str = "F32"
    activation_scale: bool = False  # FP8 static activations store an input scale per module
    weight_scale: bool = False  # BitNet's AutoBitLinear, offline: one weight_scale per module
    codebooks: tuple[int, int, int, int] | None = None  # AQLM: (num_codebooks, nbits, out_group_size, in_group_size)
    not_converted: tuple[str, ...] = ()
    zero_points: bool = True  # GPTQ / AWQ asymmetric; compressed-tensors symmetric has none
    act_order: bool = False  # GPTQ desc_act: g_idx per input channel (stored either way by AutoGPTQ)
    packed: bool = True  # compressed-tensors: int weights packed into I32 (False: float8 weights)
    strategy: str = "group"  # compressed-tensors: tensor, channel or group
    bit_overrides: tuple[tuple[str, int], ...] = ()  # gemma: (module regex, num_bits), searched as one alternation
    blocks: tuple[str, ...] = ()  # auto-round: the block prefixes it quantized (empty: every block)
    weights_as: str = "packed"  # fp_quant: packed (qweight), master (weight) or pseudo (dqweight)
    hadamard: int = 0  # fp_quant: hadamard_group_size, the side of its two rotation matrices; higgs: hadamard_size
    # Layouts given module by module. spqr: (module, (dense_weights, row_offsets, col_vals, in_perm) lengths);
    # vptq: (module, its config_for_layers entry) and (last name part, its shared_layer_config entry).
    spqr_lengths: tuple[tuple[str, tuple[int, int, int, int]], ...] = ()
    vq_layers: tuple[tuple[str, VptqLayer], ...] = ()
    vq_shared: tuple[tuple[str, VptqLayer], ...] = ()
    # modelopt-mixed: (module, quant_algo, group_size) from quantized_layers, each module laid out by its own algo
    module_algos: tuple[tuple[str, str, int], ...] = ()
    head: bool = False  # a what-if (`quantize_head`): the output head quantized as the other linear weights are

    def module_scheme(self, module: str) -> Scheme | None:
        """modelopt-mixed: the scheme of MODULE's own quantized_layers entry, or of the MoE block holding it (one
        ``…mlp.experts`` entry covers ``…experts.gate_up_proj`` and ``…experts.7.down_proj``, as vLLM's FusedMoE
        layer is looked up by its prefix); None where it has none that ffncalc reads."""
        table = _algo_table(self.module_algos)
        entry, name = None, module
        for _ in range(3):  # the module, its expert, the experts block
            entry = table.get(name)
            if entry is not None or "." not in name:
                break
            name = name.rpartition(".")[0]
        if entry is None:
            return None
        algo, group = entry
        if algo == "FP8":
            return Scheme("modelopt-fp8", bits=8)
        if algo in ("NVFP4", "W4A16_NVFP4"):
            return Scheme("modelopt-nvfp4", bits=4, group_size=group, activation_scale=algo == "NVFP4")
        return None

    def quantizes(self, module: str, tensor: Tensor) -> bool:
        if self.method == "modelopt-mixed":  # whatever the table names, the output head included
            return tensor.matmul and self.module_scheme(module) is not None
        if self.method == "mlx":  # every Linear and Embedding weight (the widths are checked where they are known)
            return (tensor.matmul or tensor.component == "embedding") and not excluded(module, self.not_converted)
        head = self.head and tensor.matmul and tensor.part == "lm_head"  # an untied head (a tied one is the table)
        if not head and (
            not tensor.matmul or tensor.component in ("embedding", "lm_head") or tensor.part in ("router", "lm_head")
        ):
            return False
        if self.method in LINEAR_ONLY and (len(tensor.shape) != 2 or tensor.transposed):
            return False  # these replace nn.Linear modules: stacked experts and Conv1D weights stay as they are
        if self.method == "auto-round":  # its QuantLinear replaces Linear and Conv1D modules within the blocks
            in_blocks = not self.blocks or any(module.startswith(f"{block}.") for block in self.blocks)
            return len(tensor.shape) == 2 and in_blocks and not excluded(module, self.not_converted)
        if self.method == "mxfp4":  # gpt-oss: the stacked experts only, unless modules_to_not_convert names them
            # transformers' replace_with_mxfp4_linear checks should_convert_module(f"{mlp}.experts", ...)
            experts = module if module.endswith(".experts") else module.rpartition(".")[0]
            return tensor.part == "routed_experts" and not excluded(experts, self.not_converted)
        # mxfp4-all (a what-if of ffncalc memory) quantizes every linear weight as gpt-oss does its experts
        return not excluded(module, self.not_converted)

    @property
    def names_layers(self) -> bool:
        """Whether a pattern may name single layers (a digit or a character class in it): exclusions, gemma's
        per-module widths, auto-round's blocks. Identical layers may then be stored differently."""
        if self.spqr_lengths or self.vq_layers or self.module_algos:
            return True  # each module laid out by its own name
        patterns = (*self.not_converted, *(pattern for pattern, _ in self.bit_overrides), *self.blocks)
        return any(re.search(r"\d|\\[dw]|[\[{]", pattern) for pattern in patterns)

    def gemma_bits(self, module: str) -> int:
        """A module's width under gemma's module_quant_configs: transformers joins the patterns into one alternation
        and takes the override of the group that matched first in ``re.search`` (replace_with_quant_layers)."""
        if not self.bit_overrides:
            return self.bits
        match = _alternation(tuple(pattern for pattern, _ in self.bit_overrides)).search(module)
        if match is None:
            return self.bits
        group = next(int(key[1:]) for key, value in match.groupdict().items() if value is not None)
        return self.bit_overrides[group][1] or self.bits

    def vq_layer(self, module: str) -> VptqLayer | None:
        """A module's VPTQ parameters as vptq 0.0.5's loader finds them (vptq/layers/model_base.py
        make_quant_linear): its config_for_layers entry, else the shared_layer_config entry of its last name part;
        None leaves it unquantized. (transformers 5.24's replace_with_vptq_linear looks the shared entry up by
        ``module.rsplit(".")[1]``, the second name part, and fails on a module with neither.)"""
        layer = _by_name(self.vq_layers).get(module)
        return layer if layer is not None else _by_name(self.vq_shared).get(module.rpartition(".")[2])

    def store(self, name: str, shape: tuple[int, ...], tensor: Tensor, dtype: str) -> list[Stored]:
        """The tensors a quantized weight of SHAPE ([..., out, in]) is stored as."""
        component = tensor.component
        module, _, kind = name.rpartition(".")
        *lead, out_f, in_f = shape
        if tensor.transposed:
            out_f, in_f = in_f, out_f
        lead_t = tuple(lead)

        def q(suffix: str, q_dtype: str, q_shape: tuple[int, ...], role: Role = "quantization") -> Stored:
            return Stored(
                f"{module}.{suffix}" if kind == "weight" else f"{name}_{suffix}",
                q_dtype,
                q_shape,
                role,
                component,
                name,
            )

        if self.method == "modelopt-mixed":
            own = self.module_scheme(module if kind == "weight" else name)
            assert own is not None  # quantizes() said so
            return own.store(name, shape, tensor, dtype)
        if self.method == "mlx":
            # mlx.nn.QuantizedLinear / QuantizedEmbedding: weight uint32 [out, in · bits / 32], scales and biases
            # [out, in / group_size] in the model's dtype; a width group_size does not divide stays unquantized.
            group = self.group_size or 64
            if in_f % group or (in_f * self.bits) % 32 or lead_t:
                return [Stored(name, dtype, shape, "parameter", component)]
            return [
                Stored(name, "U32", (out_f, in_f * self.bits // 32), "parameter", component, name, out_f * in_f),
                q("scales", dtype, (out_f, in_f // group)),
                q("biases", dtype, (out_f, in_f // group)),
            ]
        if self.method == "fp8":
            stored = [Stored(name, "F8_E4M3", shape, "parameter", component)]
            if self.block is None:
                stored.append(q("weight_scale_inv", self.scale_dtype, ()))
            else:
                rows, cols = -(-out_f // self.block[0]), -(-in_f // self.block[1])
                stored.append(q("weight_scale_inv", self.scale_dtype, lead_t + (rows, cols)))
            if self.activation_scale:
                stored.append(q("activation_scale", "F32", ()))
            return stored
        if self.method in ("mxfp4", "mxfp4-all"):
            # 32 values share one UE8M0 scale; two 4-bit values to a byte: blocks [..., out, in/32, 16].
            base = name if kind != "weight" else module
            groups = -(-in_f // 32)
            return [
                Stored(
                    f"{base}_blocks", "U8", lead_t + (out_f, groups, 16), "parameter", component, name, math.prod(shape)
                ),
                Stored(f"{base}_scales", "U8", lead_t + (out_f, groups), "quantization", component, name),
            ]
        if self.method in ("gptq", "awq", "auto-round"):
            # AutoGPTQ's and GPTQModel's packers (auto_gptq/nn_modules/qlinear/qlinear_cuda_old.py; GPTQModel
            # gptqmodel/nn_modules/qlinear/__init__.py, GPTQQuantLinear._register_gptq_buffers): qweight is
            # [in // 32 · bits, out] and qzeros [groups, out // 32 · bits] for every width, 3 bits included (32
            # 3-bit values in 3 int32 words); AWQ (gemm_awq.py) packs 4-bit weights along the output: [in, out // 32 · 4].
            # auto-round 0.16.1's auto_gptq export (auto_round_extension/torch/qlinear_torch_zp.py QuantLinear, built
            # without g_idx by export_to_autoround/export.py pack_layer) stores GPTQ's qweight, qzeros and scales.
            groups = -(-in_f // self.group_size) if self.group_size and self.group_size > 0 else 1
            if self.method != "awq":
                packed = (in_f // 32 * self.bits, out_f)
            else:
                packed = (in_f, out_f // 32 * self.bits)
            stored = [Stored(f"{module}.qweight", "I32", packed, "parameter", component, name, out_f * in_f)]
            stored.append(q("qzeros", "I32", (groups, out_f // 32 * self.bits)))
            stored.append(q("scales", "F16", (groups, out_f)))
            if self.method == "gptq":
                stored.append(q("g_idx", "I32", (in_f,)))
            return stored
        if self.method == "modelopt-fp8":
            # vLLM's ModelOptFp8LinearMethod.create_weights (vllm/model_executor/layers/quantization/modelopt.py):
            # FP8 weights with a float32 weight_scale and input_scale per module (scalars in the checkpoint).
            return [
                Stored(name, "F8_E4M3", shape, "parameter", component),
                q("weight_scale", "F32", lead_t),
                q("input_scale", "F32", lead_t),
            ]
        if self.method == "modelopt-nvfp4":
            # vLLM's ModelOptNvFp4LinearMethod.create_weights (same file): two E2M1 values a byte, [out, in // 2] U8;
            # an FP8 E4M3 scale per group of 16 along the input; a float32 global weight_scale_2 (and, for W4A4's
            # NVFP4, an input_scale) per module.
            group = self.group_size or 16
            stored = [
                Stored(name, "U8", lead_t + (out_f, in_f // 2), "parameter", component, name, math.prod(shape)),
                q("weight_scale", "F8_E4M3", lead_t + (out_f, in_f // group)),
                q("weight_scale_2", "F32", lead_t),
            ]
            if self.activation_scale:
                stored.append(q("input_scale", "F32", lead_t))
            return stored
        if self.method == "bitsandbytes_4bit":
            elements = out_f * in_f
            blocks = -(-elements // 64)
            return [
                Stored(name, "U8", (-(-elements // 2), 1), "parameter", component, name, elements),
                Stored(f"{name}.absmax", "F32", (blocks,), "quantization", component, name),
                Stored(f"{name}.quant_map", "F32", (16,), "quantization", component, name),
            ]
        if self.method == "bitsandbytes_8bit":
            return [
                Stored(name, "I8", shape, "parameter", component),
                Stored(f"{module}.SCB", "F32", (out_f,), "quantization", component, name),
            ]
        if self.method == "compressed-tensors-nvfp4":
            # NVFP4 (format nvfp4-pack-quantized; vLLM compressed_tensors_w4a4_nvfp4.py create_weights, as
            # checkpointed per module): two E2M1 values a byte, weight_packed U8 [out, in // 2]; an FP8 E4M3 scale
            # per group of 16 along the input; a float32 weight_global_scale, and input_global_scale for W4A4.
            group = self.group_size or 16
            stored = [
                Stored(f"{module}.weight_packed", "U8", lead_t + (out_f, in_f // 2), "parameter", component, name,
                       math.prod(shape)),
                q("weight_scale", "F8_E4M3", lead_t + (out_f, in_f // group)),
                q("weight_global_scale", "F32", lead_t + (1,)),
            ]  # fmt: skip
            if self.activation_scale:
                stored.append(q("input_global_scale", "F32", lead_t + (1,)))
            return stored
        if self.method == "compressed-tensors":
            if self.packed:
                packed = (out_f, in_f * self.bits // 32)
                stored = [Stored(f"{module}.weight_packed", "I32", packed, "parameter", component, name, out_f * in_f)]
                stored.append(q("weight_shape", "I64", (2,)))
            else:
                stored = [Stored(name, "F8_E4M3", shape, "parameter", component)]
            scales: tuple[int, ...]
            if self.strategy == "block" and self.block is not None:  # vLLM's BlockQuantScaleParameter
                scales = (-(-out_f // self.block[0]), -(-in_f // self.block[1]))
            else:
                scales = {"tensor": (1,), "channel": (out_f, 1)}.get(
                    self.strategy, (out_f, -(-in_f // (self.group_size or in_f)))
                )
            stored.append(q("weight_scale", self.scale_dtype, scales))
            if self.packed and self.zero_points:
                stored.append(q("weight_zero_point", "I32", scales))
            if self.activation_scale:
                stored.append(q("input_scale", self.scale_dtype, (1,)))
            return stored
        if self.method == "fbgemm_fp8":
            # transformers 5.24 integrations/fbgemm_fp8.py, FbgemmFp8Linear: weight float8_e4m3fn [out, in],
            # weight_scale float32 [out, 1] (input_scale_ub is a buffer it does not save).
            return [Stored(name, "F8_E4M3", shape, "parameter", component), q("weight_scale", "F32", (out_f, 1))]
        if self.method == "eetq":
            # integrations/eetq.py, EetqLinear: weight int8 stored [in, out], weight_scales float16 [out].
            return [Stored(name, "I8", (in_f, out_f), "parameter", component), q("weight_scales", "F16", (out_f,))]
        if self.method == "bitnet":
            # integrations/bitnet.py, BitLinear: four ternary values a byte along the output, uint8 [out // 4, in],
            # and one weight_scale in the model's dtype.
            return [
                Stored(name, "U8", (out_f // 4, in_f), "parameter", component, name, out_f * in_f),
                q("weight_scale", dtype, (1,)),
            ]
        if self.method == "bitnet-auto":
            # AutoBitLinear (an nn.Linear): [out, in] in the model's dtype; offline, one weight_scale too.
            stored = [Stored(name, dtype, shape, "parameter", component)]
            return stored + ([q("weight_scale", dtype, (1,))] if self.weight_scale else [])
        if self.method == "metal":
            # transformers 5.24 integrations/metal_quantization.py: MetalLinear's weight uint32 [out, in // (32 //
            # bits)]; scales and qbiases [out, in // group_size], which MetalQuantize saves in the model's dtype.
            group = self.group_size or 64
            return [
                Stored(name, "U32", (out_f, in_f // (32 // self.bits)), "parameter", component, name, out_f * in_f),
                q("scales", dtype, (out_f, in_f // group)),
                q("qbiases", dtype, (out_f, in_f // group)),
            ]
        if self.method == "gemma":
            # integrations/gemma_quant.py, QuantizedLinear: int2 and int4 packed four and two to a uint8 byte along
            # the input ([out, ⌈in / 4⌉], [out, ⌈in / 2⌉]), int8 as [out, in]; weight_scale float32 [out, 1]; the
            # SRQ activation scales input_activation_scale and output_activation_scale, float32 scalars.
            bits = self.gemma_bits(module)
            if bits == 8:
                weight = Stored(name, "I8", (out_f, in_f), "parameter", component)
            else:
                per_byte = 8 // bits
                weight = Stored(name, "U8", (out_f, -(-in_f // per_byte)), "parameter", component, name, out_f * in_f)
            return [
                weight,
                q("weight_scale", "F32", (out_f, 1)),
                q("input_activation_scale", "F32", ()),
                q("output_activation_scale", "F32", ()),
            ]
        if self.method == "fp_quant":
            # fp_quant 0.3.2 fp_quant/module/linear.py, FPQuantLinear after pre_forward (what a checkpoint saves):
            # qweight uint8 [out, in // 2] (two FP4 values a byte) and scales uint8 [out, in // 16] (NVFP4's E4M3) or
            # [out, in // 32] (MXFP4's E8M0); dqweight or weight [out, in] in the model's dtype instead when
            # pseudo-quantized or keeping master weights. Always: weight_global_scale and act_global_scale [1] and
            # forward_ and backward_hadamard_matrix [h, h] (h: hadamard_group_size), in the model's dtype.
            group = self.group_size or 16
            h = self.hadamard
            if self.weights_as == "packed":
                stored = [
                    Stored(f"{module}.qweight", "U8", (out_f, in_f // 2), "parameter", component, name, out_f * in_f),
                    q("scales", "U8", (out_f, in_f // group)),
                ]
            else:
                kept = "weight" if self.weights_as == "master" else "dqweight"
                stored = [Stored(f"{module}.{kept}", dtype, (out_f, in_f), "parameter", component, name)]
            return stored + [
                q("weight_global_scale", dtype, (1,)),
                q("act_global_scale", dtype, (1,)),
                q("forward_hadamard_matrix", dtype, (h, h)),
                q("backward_hadamard_matrix", dtype, (h, h)),
            ]
        if self.method == "higgs":
            # What a HIGGS checkpoint holds is what transformers 4.x's HiggsHfQuantizer.create_quantized_param set
            # on each HiggsLinear: quantize_with_higgs's output (transformers 5.24 reads it back into HiggsLinear's
            # parameters, integrations/higgs.py, and has no quantize operation of its own). quantize_with_higgs pads
            # the input width to a multiple of hadamard_size (pad_to_block) before FLUTE 0.4.2 packs it
            # (flute/integrations/higgs.py prepare_data → flute/tune.py tune_and_pack → flute/utils.py _pack_*bit,
            # int16 words, transposed): weight int16 [out · bits / 16, padded in]; scales [out, padded in /
            # group_size] in the model's dtype; tables, FLUTE's qmap, [2^bits] in the model's dtype; tables2, its
            # qmap2 [2^bits, 2^bits, 1] float32, which quantize_with_higgs views as float16: [2^bits, 2^bits, 2].
            padded = -(-in_f // self.hadamard) * self.hadamard
            codes = 1 << self.bits
            group = self.group_size or 256
            return [
                Stored(name, "I16", (out_f * self.bits // 16, padded), "parameter", component, name, out_f * in_f),
                q("scales", dtype, (out_f, padded // group)),
                q("tables", dtype, (codes,)),
                q("tables2", "F16", (codes, codes, 2)),
            ]
        if self.method == "spqr":
            # spqr_quant 0.2.0 inference.py, QuantizedLinear.create_placehodler (sic; transformers 5.24
            # integrations/spqr.py calls it with the lengths quantization_config.shapes gives for the module):
            # dense_weights int64 (3-bit weights, their scales and zero points in 16 × 16 tiles), row_offsets and
            # col_vals int32 (the sparse outliers, CSR), in_perm int32 (the input permutation), each one-dimensional.
            lengths = _by_name(self.spqr_lengths).get(module)
            if lengths is None:
                raise InvalidConfigError(
                    f'quantization_config.shapes: no "{module}.dense_weights.shape" (nor its row_offsets, col_vals '
                    "and in_perm): SpQR needs the four lengths of every linear layer it quantized"
                )
            dense, rows, cols, perm = lengths
            return [
                Stored(f"{module}.dense_weights", "I64", (dense,), "parameter", component, name, out_f * in_f),
                q("row_offsets", "I32", (rows,)),
                q("col_vals", "I32", (cols,)),
                q("in_perm", "I32", (perm,)),
            ]
        if self.method == "vptq":
            layer = self.vq_layer(module)
            if layer is None:
                return [Stored(name, dtype, shape, "parameter", component)]
            return _vptq_tensors(layer, module, name, out_f, in_f, dtype, component, q)
        if self.method == "aqlm" and self.codebooks is not None:
            # aqlm 1.x inference.py, QuantizedLinear: codebooks [num_codebooks, 2^nbits, out_group, in_group] and
            # scales [out // out_group, 1, 1, 1] in the model's dtype; codes [out // out_group, in // in_group,
            # num_codebooks] in the smallest int of nbits (aqlm/utils.py get_int_dtype: int8, int16, int32, int64).
            books, nbits, out_group, in_group = self.codebooks
            code_dtype = next(
                name for bits, name in ((8, "I8"), (16, "I16"), (32, "I32"), (64, "I64")) if nbits <= bits
            )
            return [
                Stored(f"{module}.codes", code_dtype, (out_f // out_group, in_f // in_group, books), "parameter",
                       component, name, out_f * in_f),
                q("codebooks", dtype, (books, 1 << nbits, out_group, in_group)),
                q("scales", dtype, (out_f // out_group, 1, 1, 1)),
            ]  # fmt: skip
        raise InvalidConfigError(f"quantization_config.quant_method {self.method!r} is not one ffncalc knows")


def parse_scheme(block: Block | None) -> Scheme | None:
    """The stored layout a validated quantization_config describes; None for an unquantized checkpoint, or a scheme
    ffncalc does not lay out (``quantization.notes`` says so)."""
    if block is None:
        return None
    from .quantization import (
        MODELOPT_READ,
        AqlmBlock,
        AutoRoundBlock,
        AwqBlock,
        BitNetBlock,
        BitsAndBytesBlock,
        CompressedTensorsBlock,
        EetqBlock,
        FbgemmFp8Block,
        Fp8Block,
        FpQuantBlock,
        GemmaBlock,
        GptqBlock,
        HiggsBlock,
        MetalBlock,
        MlxBlock,
        ModelOptBlock,
        Mxfp4Block,
        SpqrBlock,
        VptqBlock,
    )

    if isinstance(block, Fp8Block):
        return Scheme(
            "fp8",
            bits=8,
            block=block.weight_block_size,
            scale_dtype="F8_E8M0" if block.scale_fmt == "ue8m0" else "F32",
            activation_scale=block.activation_scheme == "static",
            not_converted=tuple(block.modules_to_not_convert or ()),
        )
    if isinstance(block, MlxBlock):
        return Scheme("mlx", bits=block.bits, group_size=block.group_size)
    if isinstance(block, Mxfp4Block):
        return Scheme("mxfp4", bits=4, not_converted=tuple(block.modules_to_not_convert or ()))
    if isinstance(block, (GptqBlock, AwqBlock)):
        return Scheme(
            block.quant_method,
            bits=block.bits,
            group_size=block.group_size,
            not_converted=tuple(block.modules_to_not_convert or ("lm_head",)),
        )
    if isinstance(block, BitsAndBytesBlock):
        skipped = tuple(block.llm_int8_skip_modules or ())
        if block.load_in_4bit:
            return Scheme("bitsandbytes_4bit", bits=4, not_converted=skipped)
        return Scheme("bitsandbytes_8bit", bits=8, not_converted=skipped)
    if isinstance(block, CompressedTensorsBlock):
        return _compressed_tensors(block)
    if isinstance(block, AqlmBlock):
        books, nbits = block.num_codebooks, block.nbits_per_codebook
        return Scheme(
            "aqlm",
            bits=max(1, round(books * nbits / (block.in_group_size * block.out_group_size))),
            codebooks=(block.num_codebooks, block.nbits_per_codebook, block.out_group_size, block.in_group_size),
            not_converted=tuple(block.linear_weights_not_to_quantize or ()),
        )
    if isinstance(block, FbgemmFp8Block):
        return Scheme("fbgemm_fp8", bits=8, not_converted=tuple(block.modules_to_not_convert or ()))
    if isinstance(block, EetqBlock):
        return Scheme("eetq", bits=8, not_converted=tuple(block.modules_to_not_convert or ()))
    if isinstance(block, BitNetBlock):
        auto = block.linear_class == "autobitlinear"
        return Scheme(
            "bitnet-auto" if auto else "bitnet",
            bits=16 if auto else 2,
            weight_scale=auto and block.quantization_mode == "offline",
            not_converted=tuple(block.modules_to_not_convert or ()),
        )
    if isinstance(block, MetalBlock):
        return Scheme(
            "metal",
            bits=block.bits,
            group_size=block.group_size,
            not_converted=tuple(block.modules_to_not_convert or ()),
        )
    if isinstance(block, GemmaBlock):
        overrides = tuple(
            (pattern, override.num_bits or 0) for pattern, override in (block.module_quant_configs or {}).items()
        )
        return Scheme(
            "gemma",
            bits=block.num_bits,
            bit_overrides=overrides,
            not_converted=tuple(block.modules_to_not_convert or ()),
        )
    if isinstance(block, FpQuantBlock):
        nvfp4 = block.forward_dtype == "nvfp4"
        return Scheme(
            "fp_quant",
            bits=16 if block.store_master_weights or block.pseudoquantization else 4,
            group_size=16 if nvfp4 else 32,
            hadamard=block.hadamard_group_size or 0,
            weights_as="master" if block.store_master_weights else "pseudo" if block.pseudoquantization else "packed",
            # FPQuantConfig.post_init: modules_to_not_convert None means ["lm_head"]
            not_converted=tuple(
                block.modules_to_not_convert if block.modules_to_not_convert is not None else ["lm_head"]
            ),
        )
    if isinstance(block, HiggsBlock):
        return Scheme(
            "higgs",
            bits=block.bits,
            group_size=block.group_size,
            hadamard=block.hadamard_size,
            not_converted=tuple(block.modules_to_not_convert or ()),
        )
    if isinstance(block, SpqrBlock):
        return Scheme(
            "spqr",
            bits=block.bits,
            spqr_lengths=_spqr_lengths(block),
            not_converted=tuple(block.modules_to_not_convert or ()),
        )
    if isinstance(block, VptqBlock):
        return Scheme(
            "vptq",
            bits=2,  # a nominal width: each layer's index width is its own (Scheme.vq_layer)
            vq_layers=tuple(block.config_for_layers.items()),
            vq_shared=tuple(block.shared_layer_config.items()),
            not_converted=tuple(block.modules_to_not_convert or ()),
        )
    if isinstance(block, AutoRoundBlock) and not block.unread():
        return Scheme("auto-round", bits=block.bits, group_size=block.group_size, blocks=block.blocks)
    if isinstance(block, ModelOptBlock) and block.quant_algo == "MIXED_PRECISION":
        if not block.quantized_layers:
            return None
        return Scheme(
            "modelopt-mixed",
            bits=4,
            module_algos=tuple(
                (name, layer.quant_algo, layer.group_size or block.group_size or 16)
                for name, layer in block.quantized_layers.items()
            ),
        )
    if isinstance(block, ModelOptBlock) and block.quant_algo in MODELOPT_READ:
        if block.quant_algo == "FP8":
            return Scheme("modelopt-fp8", bits=8, not_converted=tuple(block.ignore or ()))
        return Scheme(
            "modelopt-nvfp4",
            bits=4,
            group_size=block.group_size or 16,
            activation_scale=block.quant_algo == "NVFP4",
            not_converted=tuple(block.ignore or ()),
        )
    return None


def _spqr_lengths(block: SpqrBlock) -> tuple[tuple[str, tuple[int, int, int, int]], ...]:
    """Each module's four lengths from quantization_config.shapes ("{module}.dense_weights.shape" …); a module that
    lacks one of them is left out (Scheme.store then says which)."""
    tensors = ("dense_weights", "row_offsets", "col_vals", "in_perm")
    modules = [key.removesuffix(".dense_weights.shape") for key in block.shapes if key.endswith(".dense_weights.shape")]
    lengths = []
    for module in modules:
        found = [block.shapes.get(f"{module}.{tensor}.shape") for tensor in tensors]
        if all(length is not None for length in found):
            lengths.append((module, tuple(length or 0 for length in found)))
    return tuple(lengths)  # type: ignore[arg-type]


def _compressed_tensors(block: CompressedTensorsBlock) -> Scheme:
    from .quantization import CompressedArgs

    groups = list(block.config_groups.values())
    weights = next((group.weights for group in groups if group.weights is not None), None) or CompressedArgs()
    activations = next((group.input_activations for group in groups if group.input_activations is not None), None)
    if weights.type == "float" and weights.num_bits == 4:  # NVFP4: E2M1 values, FP8 group scales, a global scale
        return Scheme(
            "compressed-tensors-nvfp4",
            bits=4,
            group_size=weights.group_size if weights.group_size and weights.group_size > 0 else 16,
            activation_scale=activations is not None,
            not_converted=tuple(block.ignore or ()),
        )
    return Scheme(
        "compressed-tensors",
        bits=weights.num_bits,
        group_size=weights.group_size if weights.group_size and weights.group_size > 0 else None,
        scale_dtype="BF16" if weights.type == "int" else "F32",
        activation_scale=activations is not None and activations.dynamic is False,
        not_converted=tuple(block.ignore or ()),
        zero_points=not weights.symmetric,
        packed=weights.type == "int",
        strategy=weights.strategy or "tensor",
        block=weights.block_structure,
    )


# --- the layout of a whole checkpoint ------------------------------------------------------------


def parameter_layout(spec: ModelSpec, dtype: str, scheme: Scheme | None = None) -> list[Stored]:
    """Every parameter as the checkpoint stores it, in DTYPE, quantized where SCHEME quantizes."""
    return layout(stored_parameters(spec), dtype, scheme)


def layout(tensors: Iterable[tuple[str, tuple[int, ...], Tensor]], dtype: str, scheme: Scheme | None) -> list[Stored]:
    """Named tensors as stored: in DTYPE, or quantized where SCHEME quantizes their module."""
    stored: list[Stored] = []
    for name, shape, tensor in tensors:
        module = name.rpartition(".")[0] if name.endswith((".weight", ".bias")) else name
        if scheme is not None and scheme.quantizes(module, tensor) and len(shape) >= 2:
            stored += [replace(s, part=tensor.part) for s in scheme.store(name, shape, tensor, dtype)]
        else:
            # A padded tensor (Tensor.padded_rows) holds its own elements as parameters, the padding as bytes only.
            params = tensor.elements if tensor.padded_rows else -1
            stored.append(Stored(name, dtype, shape, "parameter", tensor.component, params=params, part=tensor.part))
    return stored


def _vptq_tensors(
    layer: VptqLayer,
    module: str,
    name: str,
    out_f: int,
    in_f: int,
    dtype: str,
    component: str,
    q: Callable[[str, str, tuple[int, ...]], Stored],
) -> list[Stored]:
    """vptq 0.0.5 vptq/layers/vqlinear.py, VQuantLinear (vector_quant_dim "out", is_indice_packed, the dtype of the
    Linear it replaces): index widths log2 of the centroid counts (main, plus residual when num_res_centroids[1] > 0);
    indices int32 [group_num, ⌈out / vector_lens[1]⌉, ⌈group_size · index bits / 32⌉]; centroids (an nn.Embedding)
    [group_num, num_centroids[1] · vector_lens[1]] and res_centroids [group_num, num_res_centroids[1] · vector_lens[1]]
    in the model's dtype; with outliers (vector_lens[0] > 1, num_centroids[0] > 0) outlier_centroids [1,
    num_centroids[0] · vector_lens[0]] and outlier_indices [1, ⌈out / vector_lens[0]⌉, outlier_size], int16 (float16
    when indices_as_float); perm int16 [in] with enable_perm; weight_scale and weight_bias [in] with enable_norm."""
    vector_out, vector = layer.vector_lens
    centroids_out, centroids = layer.num_centroids
    residual = layer.num_res_centroids[1]
    books = layer.group_num
    bits = (centroids.bit_length() - 1) + (residual.bit_length() - 1 if residual > 0 else 0)  # int(math.log2(n))
    index_dtype = "F16" if layer.indices_as_float else "I16"
    stored = [
        Stored(f"{module}.indices", "I32", (books, -(-out_f // vector), -(-layer.group_size * bits // 32)),
               "parameter", component, name, out_f * in_f),
        q("centroids.weight", dtype, (books, centroids * vector)),
    ]  # fmt: skip
    if vector_out > 1 and centroids_out > 0:
        stored.append(q("outlier_centroids.weight", dtype, (1, centroids_out * vector_out)))
        stored.append(q("outlier_indices", index_dtype, (1, -(-out_f // vector_out), layer.outlier_size)))
    if residual > 0:
        stored.append(q("res_centroids.weight", dtype, (books, residual * vector)))
    if layer.enable_perm:
        stored.append(q("perm", "I16", (in_f,)))
    if layer.enable_norm:
        stored += [q("weight_scale", dtype, (in_f,)), q("weight_bias", dtype, (in_f,))]
    return stored
