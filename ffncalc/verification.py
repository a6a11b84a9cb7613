"""Checking ffncalc's count against what a checkpoint stores, tensor by tensor, from headers only.

Every stored tensor is either a parameter (counted, and matched to its layer) or something a
checkpoint keeps beside the parameters, recognised by its name:
rotary inv_freq buffers, GPT-2 causal masks, a tied head stored again, quantization scales,
MXFP4 packed blocks (two 4-bit values per byte: they count as twice their bytes), router
correction biases, multi-token-prediction layers past the last layer, and vision towers.
Then the parameters are compared layer by layer with the spec, and outside the layers with
embeddings + head + final norm. Every difference is either explained or named.
"""

from __future__ import annotations

import re
from collections import defaultdict

from .accounting import ParamsReport, Result
from .checkpoint import Checkpoint, StoredTensor
from .spec import ModelSpec
from .units import bytes_per_element

LAYER_INDEX = re.compile(r"(?:^|\.)(?:layers|h|blocks|block|layer)\.(\d+)\.")
STACK = re.compile(r"(?:^|\.)(encoder|decoder)\.")
NON_LAYER_PARAMETER = re.compile(
    r"(embed|wte|wpe|lm_head|norm|ln_f|pooler|(^|\.)cls\.|(^|\.)shared\.|token_type|project_in|project_out)"
)
MXFP4_BLOCKS = re.compile(r"_blocks$")

# (pattern on the tensor name, what it is, why it is not a parameter)
STORED_EXTRAS = (
    (re.compile(r"\.inv_freq$"), "rotary inv_freq buffers", "buffers saved by older transformers, recomputed at load"),
    (re.compile(r"(^|\.)attn\.(bias|masked_bias)$"), "causal-mask buffers", "GPT-2's attention masks, saved as buffers"),
    (re.compile(r"e_score_correction_bias$|\.expert_bias$"), "router correction biases", "set by load balancing, not a trained weight"),
    (
        re.compile(r"EncDecAttention\.relative_attention_bias\.weight$"),
        "unused cross-attention relative bias",
        "stored by the original T5 checkpoints; no module reads it",
    ),
    (re.compile(r"(^|\.)mtp(_layers)?\."), "layers past the last one", "multi-token-prediction modules, not run by the causal LM"),
    (re.compile(r"(_scale_inv|\.weight_scale|\.input_scale)$"), "FP8 block scales", "quantization scales of FP8 weights"),
    (re.compile(r"_scales$"), "MXFP4 scales", "one UE8M0 scale per 32 packed 4-bit weights"),
    (
        re.compile(r"^(model\.)?(vision_tower|vision_model|visual|multi_modal_projector|vision_embed|mm_projector)\."),
        "vision tower and projector",
        "the multimodal parts; ffncalc counts the language model",
    ),
)


class ExtraGroup(Result):
    """Stored tensors of one kind that are not parameters of the language model."""

    kind: str
    tensors: int
    elements: int
    reason: str


class LayerMismatch(Result):
    """A layer (or the part outside the layers) whose stored parameters differ from ffncalc's."""

    where: str
    stored: int
    expected: int


class VerifyReport(Result):
    """`ffncalc verify --json`: the checkpoint against the count, every difference explained or named."""

    model: str
    checkpoint: str
    files: list[str]
    stored_by_dtype: dict[str, int]
    stored_elements: int
    ffncalc_params: int
    checkpoint_params: int | None  # stored parameters, MXFP4 blocks unpacked, extras left out
    extras: list[ExtraGroup]
    mismatches: list[LayerMismatch]
    unexplained_tensors: list[str]
    index_only: bool
    ok: bool
    notes: list[str]


def parameter_elements(tensor: StoredTensor) -> int:
    """Elements as parameters: MXFP4 blocks (U8) hold two 4-bit values per byte."""
    if tensor.dtype == "U8" and MXFP4_BLOCKS.search(tensor.name):
        return 2 * tensor.elements
    return tensor.elements


def classify(tensor: StoredTensor, spec: ModelSpec) -> tuple[str, str] | None:
    """(kind, reason) when the tensor is not a parameter of the language model; None when it is.

    Everything under a layer index past the last layer belongs to a multi-token-prediction module,
    whatever else its name says.
    """
    key = layer_key(tensor.name)
    if key is not None and key[1] >= sum(layer.stack == key[0] for layer in spec.layers):
        return "layers past the last one", "multi-token-prediction modules, not run by the causal LM"
    for pattern, kind, reason in STORED_EXTRAS:
        if pattern.search(tensor.name):
            return kind, reason
    if spec.tie_word_embeddings and tensor.name.endswith("lm_head.weight"):
        return "tied head stored again", "tie_word_embeddings: the head is the embedding table, already counted"
    return None


def layer_key(name: str) -> tuple[str, int] | None:
    """(stack, index) of the layer a tensor belongs to: T5 numbers its encoder and decoder blocks apart."""
    match = LAYER_INDEX.search(name)
    if match is None:
        return None
    stack = STACK.search(name)
    return (stack[1] if stack else "decoder", int(match[1]))


def verify_checkpoint(spec: ModelSpec, report: ParamsReport, checkpoint: Checkpoint) -> VerifyReport:
    """Stored elements by dtype; extras explained by name; parameters compared layer by layer and in total."""
    if checkpoint.tensors is None:
        return _verify_index_only(spec, report, checkpoint)
    stored_by_dtype: dict[str, int] = defaultdict(int)
    extras: dict[str, list] = {}
    per_layer: dict[tuple[str, int], int] = defaultdict(int)
    outside_layers = 0
    unexplained: list[str] = []
    for tensor in checkpoint.tensors:
        stored_by_dtype[tensor.dtype] += tensor.elements
        kind = classify(tensor, spec)
        if kind is not None:
            group = extras.setdefault(kind[0], [0, 0, kind[1]])
            group[0] += 1
            group[1] += tensor.elements
            continue
        key = layer_key(tensor.name)
        if key is not None:
            per_layer[key] += parameter_elements(tensor)
        elif NON_LAYER_PARAMETER.search(tensor.name):
            outside_layers += parameter_elements(tensor)
        else:
            unexplained.append(tensor.name)
    expected_per_layer = {(group.stack, index): group.params for group in report.layers for index in group.indices}
    stacks = len({stack for stack, _ in expected_per_layer}) > 1
    mismatches = [
        LayerMismatch(where=f"{stack + ' ' if stacks else ''}layer {index}", stored=per_layer.get((stack, index), 0), expected=expected)
        for (stack, index), expected in sorted(expected_per_layer.items())
        if per_layer.get((stack, index), 0) != expected
    ]
    expected_outside = sum(report.outside_layers.values())
    if outside_layers != expected_outside:
        mismatches.append(LayerMismatch(where="outside the layers", stored=outside_layers, expected=expected_outside))
    counted = sum(per_layer.values()) + outside_layers
    notes = []
    if any(MXFP4_BLOCKS.search(t.name) and t.dtype == "U8" for t in checkpoint.tensors):
        notes.append("MXFP4 *_blocks tensors (U8) are counted as two 4-bit parameters per stored byte.")
    return VerifyReport(
        model=report.model,
        checkpoint=checkpoint.location,
        files=list(checkpoint.files),
        stored_by_dtype=dict(sorted(stored_by_dtype.items())),
        stored_elements=sum(stored_by_dtype.values()),
        ffncalc_params=report.total_params,
        checkpoint_params=counted,
        extras=[ExtraGroup(kind=kind, tensors=n, elements=e, reason=r) for kind, (n, e, r) in extras.items()],
        mismatches=mismatches,
        unexplained_tensors=unexplained,
        index_only=False,
        ok=not mismatches and not unexplained and counted == report.total_params,
        notes=notes,
    )


def _verify_index_only(spec: ModelSpec, report: ParamsReport, checkpoint: Checkpoint) -> VerifyReport:
    """Only model.safetensors.index.json: total_size in bytes against the count at the config's dtype."""
    element_bytes = bytes_per_element(spec.torch_dtype)
    total_size = checkpoint.index_total_size or 0
    stored = total_size // element_bytes
    extra_names = [name for name in checkpoint.tensor_names if classify(StoredTensor(name, "", ()), spec)]
    unexplained = [
        name
        for name in checkpoint.tensor_names
        if name not in extra_names and layer_key(name) is None and not NON_LAYER_PARAMETER.search(name)
    ]
    exact = total_size % element_bytes == 0
    ok = exact and not extra_names and not unexplained and stored == report.total_params
    notes = [
        f"Only {checkpoint.files[0]} was found: its total_size {total_size:,} bytes / "
        f"{element_bytes} bytes per {spec.torch_dtype} element = {stored:,} elements; no shapes to match layer by layer."
    ]
    if extra_names:
        notes.append(f"{len(extra_names)} tensors are named like non-parameters (e.g. {extra_names[0]}); their sizes are unknown without headers.")
    return VerifyReport(
        model=report.model,
        checkpoint=checkpoint.location,
        files=list(checkpoint.files),
        stored_by_dtype={spec.torch_dtype or "unknown": stored},
        stored_elements=stored,
        ffncalc_params=report.total_params,
        checkpoint_params=None,
        extras=[],
        mismatches=[] if stored == report.total_params else [
            LayerMismatch(where="whole checkpoint (from total_size)", stored=stored, expected=report.total_params)
        ],
        unexplained_tensors=unexplained,
        index_only=True,
        ok=ok,
        notes=notes,
    )
