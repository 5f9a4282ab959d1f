#!/usr/bin/env python3
"""gradgen's benchmark suite: `python bench/run.py [--quick] [--only W1,W3] [--output FILE]`.

Workloads (see bench/README.md for what each measures and why):

    W1      seed example Q = 3*a**3 - b**2 on 0-d tensors, forward + backward   us/iter
    W2      8-element vector, 100 x (y = y*c + 0.5 - x), backward                us/op
    W3      sum((a*b - c)**2) on 1e6-element vectors, forward + backward       x numpy
    W4      MLP step 64x784 -> 128 -> 10, relu, MSE, SGD update               x numpy
    W5      chain of 100,000 multiplications, forward + backward (+ memory)         s
    LSTM    nn.LSTM batch 32, 50 steps, 64 -> 128, forward + backward         x torch
    OPS     gradgen's per-operator forward / backward overhead (add, mul, pow)  us/call
    CODEGEN `python -m codegen` on the repository's YAML and on N synthetic operators

Every workload is run for gradgen, for a hand-written numpy version (forward and
hand-derived backward: the limit an autograd on numpy can approach) and for every
installed peer among torch, HIPS autograd, mygrad and micrograd. Timings are medians of
repeated runs in this one process, interleaved round-robin across implementations so
that a change in machine load hits all of them alike; everything runs on one thread in
float64. Each implementation's gradients are checked against the numpy version once
before it is timed.

Adding an implementation is one function decorated with `@implementation(workload,
library)` that returns a `Prepared(step, grads)`; it may raise `Unavailable(reason)`.

The pieces: harness.py (peers, sizes, the registry, the timer), workloads_small.py (W1,
W2), workloads_large.py (W3, W4), workloads_chain.py (W5), workloads_layers.py
(LSTM), runner.py (running them, OPS,
CODEGEN), tables.py (rows and the results file); this file parses the flags and runs.
"""

from __future__ import annotations

import os

# One thread everywhere. BLAS reads these when numpy (or torch) is first imported.
for _variable in (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
    "NUMEXPR_NUM_THREADS",
    "BLIS_NUM_THREADS",
):
    os.environ[_variable] = "1"

import argparse  # noqa: E402
import gc  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import gradgen  # noqa: E402

import harness  # noqa: E402
from harness import (  # noqa: E402
    BENCH_DIR,
    PEER,
    SECTIONS,
    Config,
    Timing,
    load_peers,
    log,
    make_config,
    perf_counter,
)
from runner import profile_gradgen, run_codegen, run_ops, run_workload  # noqa: E402
from tables import (  # noqa: E402
    cpu_share,
    environment,
    load_average,
    process_cpu,
    report,
)
import workloads_large  # noqa: E402
import workloads_small  # noqa: E402
import workloads_chain  # noqa: E402
import workloads_layers  # noqa: E402
from workloads_chain import engine_per_node, w5_memory  # noqa: E402

# Importing a workload module registers its implementations (`@implementation`).
WORKLOADS = (workloads_small, workloads_large, workloads_chain, workloads_layers)

# ---------------------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------------------


def parse_only(text: str) -> list[str]:
    names = [part.strip().upper() for part in text.split(",") if part.strip()]
    unknown = [name for name in names if name not in SECTIONS]
    if unknown:
        raise argparse.ArgumentTypeError(
            f"unknown workload(s) {', '.join(unknown)}; choose from {', '.join(SECTIONS)}"
        )
    return names


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        description="Benchmark gradgen against a hand-written numpy limit and installed peers "
        "(torch, HIPS autograd, mygrad, micrograd).",
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="few repetitions and smaller sizes (< 60 s, for CI)",
    )
    parser.add_argument(
        "--only", type=parse_only, default=list(SECTIONS), metavar="LIST",
        help=f"comma-separated subset of {','.join(SECTIONS)} (default: all)",
    )  # fmt: skip
    parser.add_argument(
        "--output", type=Path, default=None, metavar="FILE",
        help="Markdown results file (default: bench/results.md; with --quick: "
        "bench/results-quick.md, so CI never overwrites the full run's table)",
    )  # fmt: skip
    parser.add_argument(
        "--seed-mode", choices=("auto", "sum", "ones"), default="auto",
        help="W2/W3: reduce with sum() or seed backward with ones (default: sum if "
        "gradgen has it, else ones)",
    )  # fmt: skip
    parser.add_argument(
        "--profile", action="store_true", help="also cProfile gradgen's W1 and W5"
    )
    parser.add_argument(
        "--verbose", action="store_true", help="print tracebacks of failures"
    )
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    harness.VERBOSE = args.verbose
    output = args.output or BENCH_DIR / (
        "results-quick.md" if args.quick else "results.md"
    )
    if args.seed_mode == "sum" and not hasattr(gradgen, "sum"):
        parser.error("--seed-mode sum: gradgen has no sum yet")

    started = time.time()
    started_wall, started_cpu = perf_counter(), process_cpu()
    load_start = load_average()
    PEER.update(load_peers())
    # Everything imported so far (torch alone brings ~10^5 objects) goes to the
    # permanent generation: collections then walk only what the workloads create, so
    # gradgen's GC cost does not depend on which peers are installed, and the
    # per-repetition gc.collect() stays cheap.
    gc.collect()
    gc.freeze()
    config = make_config(args.quick, args.seed_mode)
    log(
        f"mode {'quick' if config.quick else 'full'}; peers: "
        + ", ".join(f"{n} {p.version or p.missing}" for n, p in PEER.items())
    )

    outcomes = _run_workloads(config, args.only)
    if "CODEGEN" in args.only:
        outcomes["CODEGEN"] = run_codegen(config)
    ops = run_ops(config) if "OPS" in args.only else None
    profile = profile_gradgen(config) if args.profile else ""

    env = environment(config, started, load_start, cpu_share(started_wall, started_cpu))
    text, markdown = report(config, outcomes, ops, profile, env)
    print("\n".join(text))
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text("\n".join(markdown).rstrip() + "\n")
    print(f"wrote {output} ({time.time() - started:.0f} s)")
    return 0


def _run_workloads(config: Config, only: list[str]) -> dict[str, Any]:
    """W1 ... W5 and LSTM (those in `only`), each for every library."""
    outcomes: dict[str, Any] = {}
    w5_budget = 20.0 if not config.quick else 2.0
    for name in ("W1", "W2", "W3", "W4", "W5", "LSTM"):
        if name not in only:
            continue
        if name in ("W1", "W2", "W3", "W4", "LSTM"):
            # collect=True: micrograd's and autograd's graphs hold reference cycles;
            # their garbage must not be collected while someone else is being timed.
            outcome = run_workload(
                name,
                config,
                repeat=config.repeat,
                target=config.target,
                budget=config.budget,
                collect=True,
            )
        else:
            outcome = run_workload(
                name,
                config,
                repeat=config.w5_repeat,
                target=0.0,
                budget=w5_budget,
                collect=True,
            )
            if isinstance(outcome.cells.get("gradgen"), Timing):
                log("W5: gradgen memory (tracemalloc)")
                outcome.extra["memory"] = w5_memory(config)
                log("W5: gradgen engine per node (pass-through nodes)")
                outcome.extra["engine"] = engine_per_node(config)
        outcomes[name] = outcome
    return outcomes


if __name__ == "__main__":
    sys.exit(main())
