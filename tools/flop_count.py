"""Independent FLOP counts: torch's FlopCounterMode on a forward pass of the real model on the meta device.

A side script like tools/meta_count.py (needs torch and transformers; no weights):

    /tmp/side/bin/python tools/flop_count.py 512 fixtures/configs/meta-llama__Llama-3.1-8B.json ... \
        > tests/expected/flop_counter.json
    /tmp/side/bin/python tools/flop_count.py --merge tests/expected/flop_counter.json 16 tests/configs/X.json ...

With --merge FILE the counts of the configs given replace or join FILE's, the others are kept, and FILE is
rewritten in place (each entry names the transformers version that counted it). With --cpu the model is built on the
CPU with random weights instead (small configs only): a routed layer then runs, and what it costs does not depend on
where its router sends each token, since every token runs its k experts (JetMoE's attention and MLP experts); the
entry says "device": "cpu".

For each config it builds the causal LM (the masked LM for an encoder that is not a decoder: BERT, EuroBERT …; the
seq2seq LM for an encoder-decoder that is neither: LED, its decoder given N target tokens, its cross-attention,
encoder_attn, a group of its own) with eager attention on the meta device, runs one forward of N tokens (batch 1) under
FlopCounterMode and records
the FLOPs of every matmul, grouped by the module that ran it: a layer's attention (self_attn, attn, or BERT's
attention), its MLP (mlp, BERT's intermediate and output, DistilBERT's ffn) and the output embedding (lm_head,
cls.predictions.decoder). Eager attention computes the full N × N score matrix (masked entries included) and no
windowing, so the total is N × ffncalc's per-token FLOPs at context N with non-causal scores, for N within every
window.
Dense models only on the meta device: MoE routing needs real values, which it does not have (--cpu has them), and so
does Longformer's encoder, which asks with .item() whether any token is global (--cpu; its layers score a two-sided
window in overlapping chunks over the input padded to a multiple of attention_window, not N × N: see
tests/test_family_longformer.py).

Funnel's encoder layers sit in blocks (encoder.blocks.B.I), each block after the first over the sequence pooled to
half its length, its decoder's layers over the full length again (tests/test_family_funnel.py).

Perceiver's masked LM runs its layers over its latents and its decoder's max_position_embeddings queries, the input's
tokens read by its encoder's cross-attention only (tests/test_family_perceiver.py).

BigBird's layers (block_sparse) score blocks above (5 + 2 · num_random_blocks) · block_size tokens, over the input
padded to whole blocks, not N × N (tests/test_family_big_bird.py); each count builds its own model, since BigBirdModel
switches itself to full attention for a shorter input and stays switched.
BigBird-Pegasus runs as its seq2seq LM (SEQ2SEQ_FIRST), though transformers also lists its decoder as a causal LM;
its encoder's layers are BigBird's, the padding dropped before the decoder's cross-attention
(tests/test_family_bigbird_pegasus.py).

A UDOP config runs UdopForConditionalGeneration on one page (count_udop, --cpu only: placing the patches under each
token's box reads the boxes' values).
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import torch
import transformers
from torch.utils.flop_counter import FlopCounterMode
from transformers import masking_utils
from transformers.models.auto.modeling_auto import (
    MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
    MODEL_FOR_MASKED_LM_MAPPING_NAMES,
    MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES,
)

sys.path.insert(0, str(Path(__file__).parent))
from meta_count import load_config

# An encoder that makes its own all-ones attention mask (RemBERT) has transformers read its values to skip it, which
# the meta device cannot: every mask here is all ones (none is passed to a masked LM), so the answer is known.
masking_utils._ignore_bidirectional_mask_sdpa = lambda padding_mask, kv_length, local_size: (
    local_size is None or kv_length < local_size
)


# Encoder-decoders in the causal-LM mapping too (whose causal LM is the decoder alone) counted as their seq2seq LM: the
# encoder is what their counts hold (BigBird-Pegasus's block-sparse encoder; no entry before holds one of these).
SEQ2SEQ_FIRST = frozenset({"bigbird_pegasus"})


def count(path: Path, tokens: int, device: str = "meta") -> dict:
    config = load_config(json.loads(path.read_text()))
    config._attn_implementation = "eager"
    torch.manual_seed(0)
    if config.model_type in ("vision-encoder-decoder", "speech-encoder-decoder"):
        return count_composite(config, tokens, device)
    if config.model_type == "udop":
        return count_udop(config, tokens, device)
    with torch.device(device), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # an encoder that can also be a decoder (BERT, RoBERTa …) runs as its masked LM unless the config says is_decoder
        masked = config.model_type in MODEL_FOR_MASKED_LM_MAPPING_NAMES and not getattr(config, "is_decoder", False)
        causal = config.model_type in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES and not masked
        # an encoder-decoder with neither (LED) runs as its seq2seq LM, its decoder over the input shifted right, and
        # so does one whose causal LM is its decoder alone when its encoder is what is held (SEQ2SEQ_FIRST)
        if config.model_type in SEQ2SEQ_FIRST:
            masked = causal = False
        seq2seq = not masked and not causal and config.model_type in MODEL_FOR_SEQ_TO_SEQ_CAUSAL_LM_MAPPING_NAMES
        auto = (
            transformers.AutoModelForCausalLM
            if causal
            else transformers.AutoModelForSeq2SeqLM
            if seq2seq
            else transformers.AutoModelForMaskedLM
        )
        model = auto.from_config(config, attn_implementation="eager")
    model.eval()
    # Perceiver's latents are expanded from a parameter inside the forward, which torch's module tracker cannot hook
    # under no_grad while the parameter requires a gradient: no parameter needs one here
    model.requires_grad_(False)
    # warn_if_padding_and_no_attention_mask reads input_ids' values, which the meta device lacks (a seq2seq LM keeps its
    # pad_token_id: LED's encoder pads its input with it)
    if not causal and not seq2seq:
        model.config.pad_token_id = None
    input_ids = torch.zeros((1, tokens), dtype=torch.long, device=device)
    # A causal LM gets an explicit all-ones mask: without one, transformers inspects position ids for packed
    # sequences, which needs values the meta device does not have. A masked LM gets none: transformers would read an
    # all-ones mask's values to skip it; without one it attends to every key, as the mask says.
    attention_mask = torch.ones((1, tokens), dtype=torch.long, device=device) if causal else None
    counter = FlopCounterMode(display=False, depth=None)
    with counter, torch.no_grad():
        # a seq2seq LM's decoder reads N target tokens given (zeros, as the input): none is shifted from the input
        extra = (
            {"use_cache": False} if causal else {"use_cache": False, "decoder_input_ids": input_ids} if seq2seq else {}
        )
        model(input_ids=input_ids, attention_mask=attention_mask, **extra)
    per_module = counter.get_flop_counts()
    # The head is the module holding the output embedding (lm_head, BERT's cls.predictions.decoder, RoBERTa's
    # lm_head.decoder): a masked-LM head's transform before it is not the head's matmul.
    output = model.get_output_embeddings()
    # Perceiver's masked LM has no output embedding: its embedding_decoder multiplies the token table itself
    head = next((name for name, module in model.named_modules() if module is output), "embedding_decoder")
    groups = {"attention": 0, "mlp": 0, "lm_head": 0}
    for name, by_op in per_module.items():
        parts = name.split(".")
        # T5's sublayers sit a level deeper, block.N.layer.M: LongT5's SelfAttention, LocalSelfAttention,
        # TransientGlobalSelfAttention, EncDecAttention and DenseReluDense (no entry before holds a T5)
        t5_sublayer = len(parts) > 3 and parts[-3] == "layer" and parts[-2].isdigit()
        # Funnel's encoder keeps its layers in blocks, blocks.B.I: their attention and ffn a level deeper too
        funnel_block = len(parts) > 4 and parts[-4] == "blocks" and parts[-3].isdigit() and parts[-2].isdigit()
        if len(parts) < 2 or (name.count(".") > 5 and not (t5_sublayer or funnel_block)):
            continue
        flops = sum(by_op.values())
        layer = parts[-2].isdigit()
        # a layer's attention (self_attn, attn; BERT's attention: self and output.dense) and its MLP (mlp; BERT's
        # intermediate and output, DistilBERT's ffn); CTRL's multi_head_attention, SqueezeBERT's output projection
        # (post_attention: its own module beside attention), and the MLP linears that fairseq's decoders (XGLM, BioGPT)
        # keep in the layer itself, fc1 and fc2; JetMoE's self_attention
        if (
            parts[-1] in ("self_attn", "attn", "attention", "multi_head_attention", "post_attention", "self_attention")
            and layer
        ) or (parts[-1] in ("SelfAttention", "LocalSelfAttention", "TransientGlobalSelfAttention") and t5_sublayer):
            groups["attention"] += flops
        elif (parts[-1] in ("mlp", "intermediate", "output", "ffn", "fc1", "fc2") and layer) or (
            parts[-1] == "DenseReluDense" and t5_sublayer
        ):
            groups["mlp"] += flops
        elif (parts[-1] == "encoder_attn" and layer) or (parts[-1] == "EncDecAttention" and t5_sublayer):
            # a seq2seq LM's decoder cross-attention, a group of its own
            groups["cross_attention"] = groups.get("cross_attention", 0) + flops
        elif ".".join(parts[1:]) == head:
            groups["lm_head"] += flops
    where = {"device": device} if device != "meta" else {}
    return {"tokens": tokens, "total": counter.get_total_flops(), **groups, **where}


def count_composite(config, tokens: int, device: str) -> dict:
    """A VisionEncoderDecoderModel or SpeechEncoderDecoderModel: its encoder over one input (zeros, batch 1) and its
    decoder over N target tokens, the decoder's causal mask made by transformers (eager: every score computed, then
    masked). An image is encoder.image_size square; a clip is the fewest raw samples the encoder's convolutions turn
    into N positions. Grouped as above (a Wav2Vec2 layer's MLP is its feed_forward), with the decoder's
    cross-attention (crossattention) apart."""
    encoder = config.encoder
    with torch.device(device), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if config.model_type == "vision-encoder-decoder":
            model = transformers.VisionEncoderDecoderModel(config)
            size = (1, encoder.num_channels, encoder.image_size, encoder.image_size)
            inputs = {"pixel_values": torch.zeros(size, device=device)}
        else:
            model = transformers.SpeechEncoderDecoderModel(config)
            samples = tokens
            for kernel, stride in reversed(list(zip(encoder.conv_kernel, encoder.conv_stride))):
                samples = (samples - 1) * stride + kernel
            inputs = {"input_values": torch.zeros((1, samples), device=device)}
    model.eval()
    decoder_input_ids = torch.zeros((1, tokens), dtype=torch.long, device=device)
    counter = FlopCounterMode(display=False, depth=None)
    with counter, torch.no_grad():
        model(**inputs, decoder_input_ids=decoder_input_ids, use_cache=False)
    groups = {"attention": 0, "cross_attention": 0, "mlp": 0, "lm_head": 0}
    output = model.get_output_embeddings()
    head = next(name for name, module in model.named_modules() if module is output)
    for name, by_op in counter.get_flop_counts().items():
        parts = name.split(".")
        if len(parts) < 3:
            continue
        flops = sum(by_op.values())
        layer = parts[-2].isdigit()
        if parts[-1] == "attention" and layer:
            groups["attention"] += flops
        elif parts[-1] == "crossattention" and layer:
            groups["cross_attention"] += flops
        elif parts[-1] in ("mlp", "intermediate", "output", "feed_forward") and layer:
            groups["mlp"] += flops
        elif ".".join(parts[1:]) == head:
            groups["lm_head"] += flops
    return {"tokens": tokens, "total": counter.get_total_flops(), **groups}


def count_udop(config, tokens: int, device: str) -> dict:
    """UdopForConditionalGeneration on one page: N input tokens, each with a box inside the page (token i's box is
    patch i's of the image, so their centres fall on distinct patches while N is at most the patches), one page image
    of config.image_size square (zeros) and N target tokens; every mask made by transformers (all ones; eager: every
    score computed, the decoder's causal ones masked). The encoder runs over the N tokens and all the page's
    (image_size // patch_size)² patches. Grouped by module: the layers' self-attention (SelfAttention), the decoder's
    cross-attention (EncDecAttention) apart, their MLPs (DenseReluDense), the head (lm_head) and the page's patch
    convolution (the encoder's embed_patches, tied to patch_embed)."""
    if device == "meta":
        raise ValueError("UDOP places each token's patch by its box's values: count it with --cpu")
    side = config.image_size // config.patch_size
    with torch.device(device), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = transformers.UdopForConditionalGeneration(config)
        cells = torch.arange(tokens, device=device) % (side * side)
        x0, y0 = (cells % side).float() / side, (cells // side).float() / side
        bbox = torch.stack([x0, y0, x0 + 1 / side, y0 + 1 / side], dim=-1)[None]
        pixel_values = torch.zeros((1, config.num_channels, config.image_size, config.image_size), device=device)
    model.eval()
    input_ids = torch.zeros((1, tokens), dtype=torch.long, device=device)
    counter = FlopCounterMode(display=False, depth=None)
    with counter, torch.no_grad():
        model(
            input_ids=input_ids,
            bbox=bbox,
            pixel_values=pixel_values,
            decoder_input_ids=torch.zeros((1, tokens), dtype=torch.long, device=device),
            use_cache=False,
        )
    groups = {"attention": 0, "cross_attention": 0, "mlp": 0, "lm_head": 0, "patch_embedding": 0}
    by_module = {"SelfAttention": "attention", "EncDecAttention": "cross_attention", "DenseReluDense": "mlp"}
    for name, by_op in counter.get_flop_counts().items():
        parts = name.split(".")
        flops = sum(by_op.values())
        if len(parts) == 7 and parts[-1] in by_module and parts[2] == "block":
            groups[by_module[parts[-1]]] += flops
        elif parts[1:] == ["lm_head"]:
            groups["lm_head"] += flops
        elif parts[1:] == ["encoder", "embed_patches"]:
            groups["patch_embedding"] += flops
    return {"tokens": tokens, "total": counter.get_total_flops(), **groups, "device": device}


def main(tokens: int, paths: list[str], merge: Path | None = None, device: str = "meta") -> None:
    results = json.loads(merge.read_text())["counts"] if merge is not None else {}
    for arg in paths:
        path = Path(arg)
        try:
            results[path.stem] = {**count(path, tokens, device), "transformers_version": transformers.__version__}
        except Exception as error:
            results[path.stem] = {"error": f"{type(error).__name__}: {error}"[:300]}
        print(path.stem, results[path.stem], file=sys.stderr)
    versions = sorted({entry.get("transformers_version", "?") for entry in results.values()})
    document = {
        "generated_by": "tools/flop_count.py",
        # every entry says which transformers counted it; this is the set of them
        "transformers_version": versions[0] if len(versions) == 1 else ", ".join(versions),
        "torch_version": torch.__version__,
        "counts": dict(sorted(results.items())),
    }
    text = json.dumps(document, indent=1) + "\n"
    if merge is not None:
        merge.write_text(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    arguments = sys.argv[1:]
    merged, where = None, "meta"
    if arguments[:1] == ["--cpu"]:
        where, arguments = "cpu", arguments[1:]
    if arguments[:1] == ["--merge"]:
        merged, arguments = Path(arguments[1]), arguments[2:]
    main(int(arguments[0]), arguments[1:], merged, where)
