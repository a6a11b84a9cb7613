"""ffncalc's speed, measured in one run so the ratios hold on a noisy machine.

    python bench/run.py            # table, and bench/results.json
    python bench/run.py --json     # the JSON only

Whole processes are timed with the standard library (median of RUNS after a warm-up). The
transformers comparison runs when transformers and torch import in this Python, or in the
Python named by FFNCALC_BENCH_TRANSFORMERS_PYTHON (a side venv); otherwise it is skipped.
"""

from __future__ import annotations

import compileall
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUNS = int(os.environ.get("FFNCALC_BENCH_RUNS", "15"))
PYTHON = sys.executable
FFNCALC = shutil.which("ffncalc", path=str(Path(PYTHON).parent)) or "ffncalc"

# The floor of the stack: the smallest typer command that takes a model argument and a flag
# and prints one rich table, with pydantic imported. typer 0.29 coerces parameters with
# pydantic, so running a command (not only importing typer) is part of the floor.
FLOOR = (
    "import pydantic, typer\n"
    "from rich.console import Console\nfrom rich.table import Table\n"
    "app = typer.Typer()\n"
    "@app.command()\n"
    "def params(model: str, json: bool = False) -> None:\n"
    "    table = Table('component', 'parameters'); table.add_row(model, '8,030,261,248'); Console().print(table)\n"
    "app()\n"
)
# For reference: the three libraries imported, nothing run (pydantic 2 imports lazily, so this
# leaves out most of what using it costs).
IMPORTS_ONLY = (
    "import typer, pydantic\n"
    "from rich.console import Console\nfrom rich.table import Table\n"
    "t = Table('component', 'parameters'); t.add_row('total', '8,030,261,248'); Console().print(t)"
)


# An index-only checkpoint: a bundled config beside a real index (verify matches names and the total size).
INDEXED = Path(tempfile.mkdtemp(prefix="ffncalc-bench-"))
shutil.copy(ROOT / "fixtures" / "configs" / "mistralai__Mistral-7B-Instruct-v0.3.json", INDEXED / "config.json")
shutil.copy(
    ROOT / "tests" / "indexes" / "mistralai__Mistral-7B-Instruct-v0.3.json", INDEXED / "model.safetensors.index.json"
)


def bundled_ids() -> list[str]:
    sys.path.insert(0, str(ROOT))
    from ffncalc.source import bundled_models

    return list(bundled_models())


def default_files() -> list[str]:
    """The bundled files of compare's default models, as paths."""
    sys.path.insert(0, str(ROOT))
    from ffncalc.comparison import DEFAULT_MODELS
    from ffncalc.source import bundled_models

    files = bundled_models()
    return [str(files[model]) for model in DEFAULT_MODELS]


# Commands that end with a non-zero status by design: verify of an index-only checkpoint reports the shards the
# index names and the folder lacks ("NOT OK", exit 1).
EXPECTED_STATUS = {"ffncalc verify (Mistral-7B index)": 1}


def process_times(
    commands: dict[str, list[str]], runs: int = RUNS, env: dict[str, str] | None = None
) -> dict[str, float]:
    """Median wall time of each command, interleaved run by run so that load affects all alike; a command that
    ends with another status than it should stops the bench."""
    times: dict[str, list[float]] = {name: [] for name in commands}
    environment = {**os.environ, "COLUMNS": "100", "HF_HUB_OFFLINE": "1", **(env or {})}
    # Users run compiled modules: pip compiles a wheel's when it installs them. A checkout gets the same
    # here, also where PYTHONDONTWRITEBYTECODE is set (which would make every run compile ffncalc anew).
    compileall.compile_dir(ROOT / "ffncalc", quiet=1)
    environment.pop("PYTHONDONTWRITEBYTECODE", None)
    for run in range(runs + 2):
        for name, command in commands.items():
            start = time.perf_counter()
            status = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=environment)
            if status.returncode != EXPECTED_STATUS.get(name, 0):
                raise SystemExit(f"{name}: exit status {status.returncode}, expected {EXPECTED_STATUS.get(name, 0)}")
            if run >= 2:  # the first two runs warm the file cache
                times[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) for name, values in times.items()}


def transformers_time() -> tuple[float | None, str]:
    """Building Llama-3.1-8B on the meta device with transformers and summing numel(), as a whole process."""
    python = os.environ.get("FFNCALC_BENCH_TRANSFORMERS_PYTHON", PYTHON)
    probe = subprocess.run([python, "-c", "import torch, transformers"], capture_output=True)
    if probe.returncode != 0:
        return (
            None,
            f"skipped: transformers and torch do not import in {python} (set FFNCALC_BENCH_TRANSFORMERS_PYTHON)",
        )
    command = [
        python,
        str(ROOT / "tools" / "meta_count.py"),
        str(ROOT / "fixtures" / "configs" / "meta-llama__Llama-3.1-8B.json"),
    ]
    times = []
    for _ in range(3):
        start = time.perf_counter()
        subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times), python


def in_process() -> dict[str, float]:
    """Configs parsed and accounted per second; a 100,000-context sweep of per-token FLOPs.

    Timed in this process's CPU time: the rate the code allows whatever else the machine runs (its two cores are
    shared); on a quiet machine it equals the wall time."""
    sys.path.insert(0, str(ROOT))
    from ffncalc.accounting import count_params
    from ffncalc.api import load_config
    from ffncalc.compute import flops_profile
    from ffncalc.families import load_spec
    from ffncalc.source import bundled_models, read_config_file

    raws = [read_config_file(path) for path in bundled_models().values()]
    for raw in raws:  # warm-up: builds pydantic's validators once
        count_params(load_spec(raw, "bench"))
    done, start = 0, time.process_time()
    while time.process_time() - start < 2.0:
        for raw in raws:
            count_params(load_spec(raw, "bench"))
            done += 1
    configs_per_second = done / (time.process_time() - start)

    sweep = {}
    for model in ("meta-llama/Llama-3.1-8B", "google/gemma-3-1b-it", "openai/gpt-oss-20b"):
        profile = flops_profile(load_config(model).spec)
        contexts = list(range(1, 100_001))
        start = time.process_time()
        [profile.fixed + profile.growing(n) for n in contexts]
        sweep[model] = time.process_time() - start
    # --sweep: 10,000 points of params on Llama-3.1-8B, each counted from the config with its value written in.
    from ffncalc.api import account
    from ffncalc.headlines import PARAMS_HEADLINES, params_headline
    from ffncalc.overrides import parse_sweep
    from ffncalc.sweeps import run_sweep

    llama = load_config("meta-llama/Llama-3.1-8B")
    start = time.process_time()
    points = run_sweep(
        llama, (parse_sweep("intermediate_size=1:10000"),), "params", lambda at: params_headline(account(at)),
        PARAMS_HEADLINES,
    )  # fmt: skip
    sweep_points_seconds = time.process_time() - start
    assert len(points.rows) == 10_000
    return {
        "configs_per_second": configs_per_second,
        "sweep_100k_seconds": max(sweep.values()),
        "sweep_10k_params_seconds": sweep_points_seconds,
    }


# Families whose layers follow a pattern that each layer reads (which layers are sparse, which skip RoPE, which
# share an indexer, which are hybrid): built from transformers' defaults at 16,384 layers. Rebuilding the
# pattern for every layer made these quadratic (llama4_text 26 s, glm_moe_dsa 28 s, kimi_linear 17 s).
PATTERNED = {
    "llama4_text": {"model_type": "llama4_text", "num_hidden_layers": 16_384},
    "llama4": {"model_type": "llama4", "text_config": {"num_hidden_layers": 16_384}},
    "glm_moe_dsa": {"model_type": "glm_moe_dsa", "num_hidden_layers": 16_384},
    "kimi_linear": {"model_type": "kimi_linear", "num_hidden_layers": 16_384},
    "zamba2": {
        "model_type": "zamba2",
        "num_hidden_layers": 16_384,
        "layers_block_type": ((["mamba"] * 5 + ["hybrid"]) * 2731)[:16_384],
    },
}


def patterned(folder: Path) -> dict[str, float]:
    """Seconds for `memory --train` (which counts parameters, the KV cache and training) at 16,384 layers of each
    patterned family, as a whole process."""
    times = {}
    for name, config in PATTERNED.items():
        path = folder / f"{name}.json"
        path.write_text(json.dumps(config))
        start = time.perf_counter()
        subprocess.run(
            [FFNCALC, "memory", str(path), "--train"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "HF_HUB_OFFLINE": "1"},
        )
        times[f"memory --train, {name}, 16,384 layers"] = time.perf_counter() - start
    return times


def scaling(folder: Path) -> dict[str, float]:
    """Seconds for what grew quadratically before: a 16,384-layer hybrid MoE (params, memory) and a
    40,000-tensor safetensors header (verify), each as a whole process."""
    config = json.loads((ROOT / "fixtures" / "configs" / "Qwen__Qwen3-Next-80B-A3B-Instruct.json").read_text())
    config["num_hidden_layers"] = 16_384
    config.pop("layer_types", None)
    deep = folder / "deep.json"
    deep.write_text(json.dumps(config))
    header = {}
    offset = 0
    for i in range(40_000):
        header[f"model.layers.{i}.extra.weight"] = {"dtype": "BF16", "shape": [1], "data_offsets": [offset, offset + 2]}
        offset += 2
    checkpoint = folder / "wide"
    checkpoint.mkdir()
    shutil.copy(ROOT / "fixtures" / "configs" / "meta-llama__Llama-3.1-8B.json", checkpoint / "config.json")
    encoded = json.dumps(header).encode()
    with (checkpoint / "model.safetensors").open("wb") as handle:
        handle.write(len(encoded).to_bytes(8, "little") + encoded)
        handle.truncate(8 + len(encoded) + offset)
    times = {}
    for name, command in {
        "params, 16,384 layers": [FFNCALC, "params", str(deep)],
        "memory, 16,384 layers": [FFNCALC, "memory", str(deep)],
        "verify, 40,000 tensors": [FFNCALC, "verify", str(checkpoint)],
    }.items():
        start = time.perf_counter()
        subprocess.run(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, "HF_HUB_OFFLINE": "1"}
        )
        times[name] = time.perf_counter() - start
    return times


def imports() -> dict[str, bool]:
    check = "import sys, ffncalc; print(','.join(m for m in ('typer', 'rich', 'huggingface_hub') if m in sys.modules))"
    library = subprocess.run([PYTHON, "-c", check], capture_output=True, text=True, cwd=ROOT).stdout.strip()
    params = (
        "import sys; sys.argv = ['ffncalc', 'params', 'meta-llama/Llama-3.1-8B']\n"
        "from ffncalc.cli import app\ntry:\n    app(standalone_mode=False)\nexcept SystemExit:\n    pass\n"
        "print('huggingface_hub' in sys.modules, file=sys.stderr)"
    )
    hub = subprocess.run([PYTHON, "-c", params], capture_output=True, text=True, cwd=ROOT).stderr.strip()
    return {"library_imports_none_of_typer_rich_hub": library == "", "bundled_params_imports_hub": hub == "True"}


def main() -> None:
    bundled = bundled_ids()
    commands = {
        "python -c pass": [PYTHON, "-c", "pass"],
        "import ffncalc": [PYTHON, "-c", "import ffncalc"],
        "stack floor: one typer command printing one rich table": [PYTHON, "-c", FLOOR, "meta-llama/Llama-3.1-8B"],
        "typer, rich and pydantic imported, one table printed": [PYTHON, "-c", IMPORTS_ONLY],
        "ffncalc params meta-llama/Llama-3.1-8B": [FFNCALC, "params", "meta-llama/Llama-3.1-8B"],
        "ffncalc flops meta-llama/Llama-3.1-8B": [FFNCALC, "flops", "meta-llama/Llama-3.1-8B"],
        "ffncalc crossover --ctx 128k": [FFNCALC, "crossover", "--ctx", "128k"],
        "ffncalc memory meta-llama/Llama-3.1-8B": [FFNCALC, "memory", "meta-llama/Llama-3.1-8B"],
        "ffncalc derive-dim --dim 4096 --mult 1.3": [FFNCALC, "derive-dim", "--dim", "4096", "--mult", "1.3"],
        "ffncalc compare": [FFNCALC, "compare"],
        "ffncalc verify (Mistral-7B index)": [FFNCALC, "verify", str(INDEXED)],
        "ffncalc models": [FFNCALC, "models"],
        "ffncalc models --families": [FFNCALC, "models", "--families"],
        "ffncalc speed meta-llama/Llama-3.1-8B": [FFNCALC, "speed", "meta-llama/Llama-3.1-8B"],
        "ffncalc train meta-llama/Llama-3.1-8B --tokens 15T": [
            FFNCALC,
            "train",
            "meta-llama/Llama-3.1-8B",
            "--tokens",
            "15T",
        ],
        "ffncalc config meta-llama/Llama-3.1-8B": [FFNCALC, "config", "meta-llama/Llama-3.1-8B"],
        "ffncalc params --sweep num_hidden_layers=16,32,64": [
            FFNCALC,
            "params",
            "meta-llama/Llama-3.1-8B",
            "--sweep",
            "num_hidden_layers=16,32,64",
        ],
    }
    # For reference, not a target: compare of the same seven models as local files, which the catalog does not
    # hold, so each is validated and counted live (the family adapters created, as for params).
    local = {
        "(reference) ffncalc compare, the seven as local files, counted live": [FFNCALC, "compare", *default_files()]
    }
    times = process_times({**commands, **local})
    # The first run after an install: an empty cache folder (the listings read the counts the package ships).
    with tempfile.TemporaryDirectory() as empty:
        first = process_times(
            {
                "stack floor": commands["stack floor: one typer command printing one rich table"],
                **{name: commands[name] for name in ("ffncalc models", "ffncalc models --families", "ffncalc compare")},
            },
            env={"FFNCALC_CACHE_DIR": str(Path(empty) / "cache")},
        )
    compare_all = process_times({"all": [FFNCALC, "compare", *bundled]}, runs=3)["all"]
    transformers_seconds, transformers_note = transformers_time()
    throughput = in_process()
    import_checks = imports()

    floor = times["stack floor: one typer command printing one rich table"]
    imports_only = times["typer, rich and pydantic imported, one table printed"]
    params = times["ffncalc params meta-llama/Llama-3.1-8B"]
    import_cost = times["import ffncalc"] - times["python -c pass"]
    with tempfile.TemporaryDirectory() as folder:
        grown = scaling(Path(folder)) | patterned(Path(folder))
    commands_ratio = {name: seconds / floor for name, seconds in times.items() if name.startswith("ffncalc ")}
    targets = [
        *((f"{name} cold start / stack floor ≤ 1.1", ratio, ratio <= 1.1) for name, ratio in commands_ratio.items()),
        *(
            (
                f"{name}, first run after install (empty cache) / stack floor ≤ 1.5",
                seconds / first["stack floor"],
                seconds / first["stack floor"] <= 1.5,
            )
            for name, seconds in first.items()
            if name != "stack floor"
        ),
        ("(for reference) params / imports only ≤ 1.25", params / imports_only, params / imports_only <= 1.25),
        ("import ffncalc over bare Python < 50 ms", import_cost * 1000, import_cost < 0.050),
        (
            "import ffncalc loads none of typer, rich, huggingface_hub",
            None,
            import_checks["library_imports_none_of_typer_rich_hub"],
        ),
        ("a bundled params run does not import huggingface_hub", None, not import_checks["bundled_params_imports_hub"]),
        (
            "configs parsed and accounted per second ≥ 2,000",
            throughput["configs_per_second"],
            throughput["configs_per_second"] >= 2000,
        ),
        (
            "--sweep of 10,000 points of params (Llama-3.1-8B) < 5 s",
            throughput["sweep_10k_params_seconds"],
            throughput["sweep_10k_params_seconds"] < 5,
        ),
        (
            "100,000-context FLOPs sweep < 0.5 s",
            throughput["sweep_100k_seconds"],
            throughput["sweep_100k_seconds"] < 0.5,
        ),
        (
            f"compare over all {len(bundled)} bundled configs < 3 × params",
            compare_all / params,
            compare_all / params < 3,
        ),
        *((f"{name} < 2 s", seconds, seconds < 2) for name, seconds in grown.items()),
    ]
    results = {
        "python": sys.version.split()[0],
        "runs": RUNS,
        "process_seconds": times,
        "first_run_seconds": first,
        "transformers_meta_count_seconds": transformers_seconds,
        "transformers_note": transformers_note,
        "ffncalc_over_transformers": None if transformers_seconds is None else params / transformers_seconds,
        "configs_per_second": throughput["configs_per_second"],
        "sweep_100k_seconds": throughput["sweep_100k_seconds"],
        "sweep_10k_params_seconds": throughput["sweep_10k_params_seconds"],
        "scaling_seconds": grown,
        "compare_all_seconds": compare_all,
        "targets": [{"target": name, "value": value, "met": met} for name, value, met in targets],
    }
    (ROOT / "bench" / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    if "--json" in sys.argv:
        print(json.dumps(results, indent=2))
        return
    width = max(len(name) for name in times)
    print(f"Whole processes, median of {RUNS} runs ({results['python']}):")
    for name, seconds in times.items():
        print(f"  {name:<{width}}  {seconds * 1000:8.1f} ms   ({seconds / floor:4.2f} × floor)")
    if transformers_seconds is None:
        print(f"  transformers on the meta device: {transformers_note}")
    else:
        print(f"  {'transformers meta-device count (Llama-3.1-8B)':<{width}}  {transformers_seconds * 1000:8.1f} ms")
        print(f"  ffncalc params / transformers: {params / transformers_seconds:.3f}")
    print(
        f"In process: {throughput['configs_per_second']:,.0f} configs parsed and accounted per second; "
        f"100,000-context sweep {throughput['sweep_100k_seconds'] * 1000:.1f} ms"
    )
    print("Targets:")
    for name, value, met in targets:
        shown = "" if value is None else f" ({value:,.3g})"
        print(f"  [{'met' if met else 'NOT met'}] {name}{shown}")
    print("JSON: bench/results.json")


if __name__ == "__main__":
    main()
