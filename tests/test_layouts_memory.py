"""`memory --train` with a training layout (--tp --pp --cp --ep --dp --vpp --micro-batch --global-batch
--sequence-parallel --zero --recompute): the busiest rank's memory per GPU, counted by the function `train` counts
it with, so the two commands give one answer to one question.

Every expected number is derived here by hand (the Llama 3 405B figures of tests/test_layouts.py) or is the other
command's answer to the same layout; none is pasted from ffncalc's output.
"""

import pytest

from .conftest import run_main
from .test_layouts import DSV3, H100_MEMORY, L405, LAYER_PER_GPU, activations_per_layer

LLAMA_8B = "meta-llama/Llama-3.1-8B"

LAYOUTS = [
    # Llama 3's 16,384-GPU layout (Grattafiori et al. 2024, Table 4): TP 8, PP 16, DP 128, 2,048 sequences of 8k.
    (L405, "8192", ["--gpus", "16384", "--tp", "8", "--pp", "16", "--sequence-parallel", "--global-batch", "2048"]),
    # The same with two model chunks a rank (interleaved 1F1B).
    (L405, "8192", ["--gpus", "16384", "--tp", "8", "--pp", "16", "--vpp", "2", "--sequence-parallel",
                    "--global-batch", "2048"]),
    # DeepSeek-V3 (technical report §3.2): 2,048 GPUs, PP 16, EP 64, ZeRO-1, 15,360 sequences of 4k.
    (DSV3, "4096", ["--gpus", "2048", "--pp", "16", "--ep", "64", "--global-batch", "15360", "--recompute", "full"]),
    # No pipeline: Llama 3.1 8B over 64 GPUs, TP 8 with sequence parallelism, ZeRO-3, micro-batch 2.
    (LLAMA_8B, "8192", ["--gpus", "64", "--tp", "8", "--sequence-parallel", "--zero", "3", "--micro-batch", "2"]),
    # A tied embedding (GPT-2) on 4 data-parallel GPUs.
    ("openai-community/gpt2", "1024", ["--gpus", "4"]),
]  # fmt: skip


@pytest.mark.parametrize(("model", "seq", "options"), LAYOUTS)
def test_memory_train_and_train_give_one_memory_per_gpu(model, seq, options):
    zero = [] if "--zero" in options else ["--zero", "1"]  # memory's default stage is 0, train's 1: say it
    run = run_main("memory", model, "--train", "--ctx", seq, *options, *zero, "--json")
    assert run.exit_code == 0, run.stderr
    memory = run.json()
    run = run_main("train", model, "--seq", seq, *options, *zero, "--json")
    assert run.exit_code == 0, run.stderr
    trained = run.json()
    assert memory["training"]["per_gpu"] == memory["needed_per_gpu"] == trained["per_gpu_bytes"]
    assert trained["memory"]["per_gpu"] == trained["per_gpu_bytes"]  # train's own two keys are one answer
    assert memory["training"]["layout"] == trained["layout"]
    assert memory["training"]["busiest_rank"] == trained["layout_report"]["busiest_rank"]


def test_memory_train_of_llama_3_405b_layout_by_hand():
    """Rank 1 of Llama 3's layout: 8 layers, 2 + 2 bytes a weight and a gradient, Adam's 12 over 128 ranks, and 15
    micro-batches of 8 layers' activations in flight (1F1B: 16 − 1), as tests/test_layouts.py derives them."""
    run = run_main(
        "memory", L405, "--train", "--gpus", "16384", "--tp", "8", "--pp", "16", "--sequence-parallel", "--zero", "1",
        "--global-batch", "2048", "--json",
    )  # fmt: skip
    training = run.json()["training"]
    params = 8 * LAYER_PER_GPU
    per_layer = activations_per_layer(8192)
    assert training["busiest_rank"] == 1 and training["micro_batches_in_flight"] == 15
    assert training["weights_per_gpu"] == training["gradients_per_gpu"] == 2 * params
    assert training["optimizer_states_per_gpu"] == -(-12 * params // 128)
    assert training["activations"] == 15 * 8 * per_layer
    assert training["per_gpu"] == 4 * params + -(-12 * params // 128) + 120 * per_layer <= H100_MEMORY


@pytest.mark.parametrize(
    ("options", "words"),
    [
        (["--cp", "2"], "--cp: a training layout; add --train"),
        (["--train", "--pp", "2", "--optimizer", "sgd"], "--pp: a training layout is counted as the train command"),
        (["--train", "--pp", "16", "--gpus", "100"], "--gpus 100 is not a multiple of --tp × --pp × --cp (16)"),
        (["--train", "--pp", "16", "--gpus", "128", "--dp", "4"], "leave out --dp to derive it"),
        (["--train", "--batch", "2", "--micro-batch", "4"], "--batch and --micro-batch both give"),
        (["--train", "--recompute", "most"], "--recompute must be none, selective or full"),
    ],
)
def test_memory_train_layout_refusals_name_the_options(options, words):
    run = run_main("memory", L405, *options)
    assert run.exit_code != 0
    assert run.stderr.startswith("Error:") and run.stderr.count("\n") == 1 and words in run.stderr, run.stderr
    assert "`" not in run.stderr


def test_library_errors_name_fields():
    from ffncalc.api import memory
    from ffncalc.errors import UsageError

    with pytest.raises(UsageError, match="`context_parallel`: a training layout; add `train`"):
        memory(L405, context_parallel=2)


@pytest.mark.parametrize(
    "options",
    [
        ["--gpus", "16384", "--tp", "8", "--pp", "16", "--sequence-parallel", "--global-batch", "2048"],
        ["--gpus", "8", "--tp", "2"],  # an MoE without pipeline stages: experts whole on each rank (expert TP 1)
        ["--gpus", "1"],
    ],
)
def test_train_answers_one_memory_per_gpu(monkeypatch, options):
    model = L405 if "--pp" in options else "Qwen/Qwen3-30B-A3B"
    monkeypatch.setenv("COLUMNS", "80")
    full = run_main("train", model, *options, "--json").json()
    brief = run_main("train", model, *options, "--brief", "--json").json()
    assert full["memory"]["per_gpu"] == full["per_gpu_bytes"] == brief["per_gpu_bytes"]
    assert full["memory"]["fits"] == full["fits"]
    text = run_main("train", model, *options).stdout
    gib = f"{full['per_gpu_bytes'] / 2**30:,.1f} GiB of 79.6 GiB"
    assert " ".join(text.split()).count(gib) == 1  # said once, by the busiest GPU's line


@pytest.mark.parametrize("width", [80, 60])
def test_memory_train_layout_fits_the_terminal(monkeypatch, width):
    from .test_output_width import assert_fits

    monkeypatch.setenv("COLUMNS", str(width))
    monkeypatch.setenv("NO_COLOR", "1")
    run = run_main(
        "memory", DSV3, "--ctx", "4k", "--train", "--gpus", "2048", "--pp", "16", "--ep", "64", "--zero", "1",
        "--global-batch", "15360", "--recompute", "selective", "--recompute-modules", "layernorm,mla_up_proj",
    )  # fmt: skip
    assert run.exit_code == 0, run.stderr
    assert "busiest pipeline rank (0)" in " ".join(run.stdout.split())
    assert "16 micro-batches in flight" in run.stdout
    assert_fits(run.stdout, width)
