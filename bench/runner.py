"""Running what bench/run.py measures: each workload for every library (gradients
checked against numpy first), the per-operator overheads (OPS), the generator
(CODEGEN, in a subprocess) and an optional profile of gradgen.
"""

from __future__ import annotations

import cProfile
import gc
import io
import os
import pstats
import re

try:  # POSIX: the generator's CPU time, which machine load disturbs far less than wall time
    import resource
except ImportError:  # pragma: no cover - Windows
    resource = None  # type: ignore[assignment]
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import gradgen

from harness import (
    Config,
    IMPLEMENTATIONS,
    LIBRARIES,
    Outcome,
    PEER,
    Prepared,
    ROOT,
    Runner,
    Timing,
    Unavailable,
    _leaf,
    failure,
    log,
    looped,
    measure,
    perf_counter,
)
from workloads_chain import w5_gradgen
from workloads_small import w1_gradgen


def check_grads(got: Sequence[Any], want: Sequence[Any]) -> bool:
    if len(got) != len(want):
        return False
    return all(
        np.allclose(
            np.asarray(g, dtype=np.float64),
            np.asarray(w, dtype=np.float64),
            rtol=1e-6,
            atol=1e-9,
        )
        for g, w in zip(got, want)
    )


def run_workload(
    name: str,
    config: Config,
    *,
    repeat: int,
    target: float,
    budget: float,
    collect: bool,
) -> Outcome:
    cells, prepared = _prepare(name, config)
    checked, failed, estimates, notes = _check_once(name, prepared)
    cells.update(failed)
    timings = measure(
        {library: looped(item.step) for library, item in checked.items()},
        repeat=repeat,
        target=target,
        budget=budget,
        collect=collect,
        progress=name,
        estimates=estimates,
    )
    cells.update(timings)
    phases = {library: item.phases for library, item in checked.items() if item.phases}
    return Outcome(cells, notes, {"phases": phases})


def _prepare(
    name: str, config: Config
) -> tuple[dict[str, Timing | str], dict[str, Prepared]]:
    """Each library's implementation of the workload, prepared; the text of the cell
    of a library that is missing or cannot run it."""
    cells: dict[str, Timing | str] = {}
    prepared: dict[str, Prepared] = {}
    for library in LIBRARIES:
        peer = PEER.get(library)
        if peer is not None and peer.missing:
            cells[library] = peer.missing
            continue
        factory = IMPLEMENTATIONS.get((name, library))
        if factory is None:
            cells[library] = "n/a"
            continue
        try:
            prepared[library] = factory(config)
        except Unavailable as reason:
            cells[library] = str(reason)
        except Exception as error:
            cells[library] = failure(error)
    return cells, prepared


def _check_once(
    name: str, prepared: dict[str, Prepared]
) -> tuple[dict[str, Prepared], dict[str, str], dict[str, float], list[str]]:
    """One untimed step each, checked against the numpy limit's gradients: the
    implementations that passed, the cells of those that failed, each step's time
    (an estimate for the timer) and the implementations' notes."""
    checked = dict(prepared)
    failed: dict[str, str] = {}
    reference: Sequence[Any] | None = None
    estimates: dict[str, float] = {}
    notes: list[str] = []
    for library in list(checked):
        item = checked[library]
        log(f"{name}: {library} (checking gradients)")
        try:
            gc.collect()
            started = perf_counter()
            item.step()
            estimates[library] = perf_counter() - started
            got = item.grads()
            if library == "numpy":
                reference = [np.array(g, dtype=np.float64) for g in got]
            elif reference is not None and not check_grads(got, reference):
                failed[library] = "error: wrong gradients"
                del checked[library]
                continue
            item.phases.clear()
        except Exception as error:
            failed[library] = failure(error)
            del checked[library]
            continue
        if item.note:
            notes.append(item.note)
    return checked, failed, estimates, notes


# -- per-operator overhead --------------------------------------------------------------

OPS: dict[str, tuple[Callable[..., Any], Callable[..., Any], Callable[..., Any]]] = {
    # name: (library op, numpy forward, numpy hand-derived backward)
    "add": (
        lambda lib, a, b: lib.add(a, b),
        lambda a, b: a + b,
        lambda g, a, b: (g, g),
    ),
    "mul": (
        lambda lib, a, b: lib.mul(a, b),
        lambda a, b: a * b,
        lambda g, a, b: (g * b, g * a),
    ),
    "pow": (
        lambda lib, a, b: lib.pow(a, 3),
        lambda a, b: a**3,
        lambda g, a, b: (g * (3 * a**2),),
    ),
}
OPS_SHAPES = {"0-d": (), "1000": (1000,)}


def _forward_runner(
    call: Callable[[], Any], context: Callable[[], Any] | None = None
) -> Runner:
    def run(n: int) -> float:
        if context is None:
            started = perf_counter()
            for _ in range(n):
                call()
            return perf_counter() - started
        with context():
            started = perf_counter()
            for _ in range(n):
                call()
            return perf_counter() - started

    return run


def _backward_runner(
    lib: Any, op: Callable[..., Any], a: Any, b: Any, seed: Any
) -> Runner:
    """Time n backward calls, building the graphs (untimed) in chunks of at most 2000."""

    def run(n: int) -> float:
        elapsed = 0.0
        while n > 0:
            chunk = min(n, 2000)
            outputs = [op(lib, a, b) for _ in range(chunk)]
            a.grad = None
            b.grad = None
            started = perf_counter()
            for y in outputs:
                y.backward(seed)
            elapsed += perf_counter() - started
            del outputs
            n -= chunk
        return elapsed

    return run


def run_ops(config: Config) -> list[dict[str, Any]]:
    """Per call: numpy, gradgen forward (no_grad / recording), backward; torch too."""
    torch = PEER["torch"].module
    rows = []
    rng = np.random.default_rng(5)
    for op_name, (op, np_forward, np_backward) in OPS.items():
        for shape_name, shape in OPS_SHAPES.items():
            gc.collect()  # no earlier workload's cyclic garbage collected in our loops
            a0 = rng.uniform(0.5, 1.5, shape)
            b0 = rng.uniform(0.5, 1.5, shape)
            g0 = np.ones(shape)
            a, b = np.asarray(a0), np.asarray(b0)
            runners: dict[str, Runner] = {
                "numpy fwd": _forward_runner(lambda: np_forward(a, b)),
                "numpy bwd": _forward_runner(lambda: np_backward(g0, a, b)),
            }
            for label, lib in (("gradgen", gradgen), ("torch", torch)):
                if lib is None:
                    continue
                la, lb = _leaf(lib, a0), _leaf(lib, b0)
                seed = lib.tensor(g0, dtype=lib.float64)
                if label == "gradgen":
                    runners["gradgen fwd no_grad"] = _forward_runner(
                        lambda la=la, lb=lb: op(gradgen, la, lb), gradgen.no_grad
                    )
                runners[f"{label} fwd"] = _forward_runner(
                    lambda lib=lib, la=la, lb=lb: op(lib, la, lb)
                )
                runners[f"{label} bwd"] = _backward_runner(lib, op, la, lb, seed)
            timings = measure(
                runners,
                repeat=config.ops_repeat,
                target=config.ops_target,
                budget=config.ops_target * config.ops_repeat,
                collect=False,
                progress=f"OPS {op_name} {shape_name}",
            )
            row: dict[str, Any] = {"op": op_name, "shape": shape_name}
            for key, value in timings.items():
                row[key] = value.median * 1e6 if isinstance(value, Timing) else value
            rows.append(row)
    return rows


# -- codegen ----------------------------------------------------------------------------

GENERATOR_TIME = re.compile(r"\(([0-9.]+) s\)\s*$")


def run_codegen_once(
    native: Path, derivatives: Path, cache: Path
) -> tuple[float, float | None, float | None]:
    """Wall seconds, generator-reported seconds and CPU seconds of one `python -m codegen`
    run, retried once if it fails.

    The retry is for a repository that is being edited while the benchmark runs (a
    template and the code that fills it changed in two steps); a second failure is
    reported.
    """
    try:
        return _codegen_subprocess(native, derivatives, cache)
    except RuntimeError:
        log("CODEGEN: failed, retrying once")
        return _codegen_subprocess(native, derivatives, cache)


def _children_cpu() -> float | None:
    if resource is None:
        return None
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _codegen_subprocess(
    native: Path, derivatives: Path, cache: Path
) -> tuple[float, float | None, float | None]:
    """Wall seconds of one `python -m codegen` run (and the generator's own figure).

    The generator keeps black-formatted blocks in a cache (GRADGEN_CODEGEN_CACHE, by
    default ~/.cache/gradgen-codegen); `cache` is the benchmark's own directory, so the
    user's cache is neither read nor filled with synthetic operators.
    """
    environment = dict(os.environ, GRADGEN_CODEGEN_CACHE=str(cache))
    with tempfile.TemporaryDirectory(prefix="gradgen-bench-") as out:
        command = [
            sys.executable, "-m", "codegen",
            "--native-functions", str(native),
            "--derivatives", str(derivatives),
            "--out", out,
        ]  # fmt: skip
        cpu_before = _children_cpu()
        started = perf_counter()
        done = subprocess.run(
            command,
            cwd=ROOT,
            env=environment,
            capture_output=True,
            text=True,
            timeout=900,
        )
        wall = perf_counter() - started
        cpu_after = _children_cpu()
    cpu = (
        cpu_after - cpu_before
        if cpu_before is not None and cpu_after is not None
        else None
    )
    if done.returncode != 0:
        message = (
            done.stderr.strip().splitlines() or ["exit status %d" % done.returncode]
        )[-1]
        raise RuntimeError(message)
    match = GENERATOR_TIME.search(done.stdout.strip())
    return wall, float(match.group(1)) if match else None, cpu


def synthetic_yaml(directory: Path, n: int) -> tuple[Path, Path]:
    """N unary elementwise operators, plus the `neg` their formula calls."""
    native = [
        "- func: neg(Tensor self) -> Tensor\n  variants: function, method\n  numpy: np.negative(self)\n"
    ]
    derivatives = [
        "- name: neg(Tensor self) -> Tensor\n  self: grad.neg()\n  result: auto_linear\n"
    ]
    for i in range(n):
        native.append(
            f"- func: op{i}(Tensor self) -> Tensor\n  variants: function\n  numpy: np.negative(self)\n"
        )
        derivatives.append(
            f"- name: op{i}(Tensor self) -> Tensor\n  self: grad.neg()\n  result: auto_linear\n"
        )
    native_path = directory / f"native_functions_{n}.yaml"
    derivatives_path = directory / f"derivatives_{n}.yaml"
    native_path.write_text("\n".join(native))
    derivatives_path.write_text("\n".join(derivatives))
    return native_path, derivatives_path


def _median_or_none(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return (
        statistics.median(present) if present and len(present) == len(values) else None
    )


def run_codegen(config: Config) -> dict[str, Any]:
    result: dict[str, Any] = {
        "repo": None, "repo_warm": None, "repo_error": None, "synthetic": [], "verdict": "",
    }  # fmt: skip
    try:
        result["repo"], result["repo_warm"] = _codegen_repository(config)
    except Exception as error:
        result["repo_error"] = failure(error)
    result["synthetic"] = _codegen_synthetic(config)
    points = [s for s in result["synthetic"] if "wall" in s]
    if len(points) >= 3:
        result["verdict"] = _growth_verdict(points, config.quick)
    return result


def _codegen_repository(config: Config) -> tuple[Any, Any]:
    """The generator on the repository's YAML, cold (empty cache) then warm: medians
    of (wall, generator-reported, CPU) seconds."""
    summary = lambda runs: (  # noqa: E731
        statistics.median(w for w, _, _ in runs),
        _median_or_none([g for _, g, _ in runs]),
        _median_or_none([c for _, _, c in runs]),
    )
    cold, warm = [], []
    for index in range(config.codegen_repeat):
        log(
            f"CODEGEN: repository YAML, run {index + 1}/{config.codegen_repeat} (cold, then warm)"
        )
        with tempfile.TemporaryDirectory(prefix="gradgen-bench-cache-") as cache:
            files = (ROOT / "native_functions.yaml", ROOT / "derivatives.yaml")
            cold.append(run_codegen_once(*files, Path(cache)))
            warm.append(run_codegen_once(*files, Path(cache)))
    return summary(cold), summary(warm)


def _codegen_synthetic(config: Config) -> list[dict[str, Any]]:
    """The generator on N synthetic operators for each size, cold."""
    synthetic: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="gradgen-bench-yaml-") as directory:
        for n in config.codegen_sizes:
            log(f"CODEGEN: {n} synthetic operators (cold)")
            native, derivatives = synthetic_yaml(Path(directory), n)
            try:
                with tempfile.TemporaryDirectory(
                    prefix="gradgen-bench-cache-"
                ) as cache:
                    wall, generator, cpu = run_codegen_once(
                        native, derivatives, Path(cache)
                    )
            except Exception as error:
                synthetic.append({"n": n, "error": failure(error)})
                continue
            synthetic.append({"n": n, "wall": wall, "generator": generator, "cpu": cpu})
    return synthetic


def _growth_verdict(points: list[dict[str, Any]], quick: bool) -> str:
    """Whether the cost per operator grows with their number; records each point's
    marginal cost in it (the table shows them)."""
    # CPU time of the whole subprocess: start-up is a constant that the marginal
    # cost cancels, and other processes on the machine barely move it.
    key = "cpu" if all(p["cpu"] is not None for p in points) else "wall"
    marginal = [
        (later[key] - earlier[key]) / (later["n"] - earlier["n"])
        for earlier, later in zip(points, points[1:])
    ]
    for point, cost in zip(points[1:], marginal):
        point["marginal"] = cost
    growth = marginal[-1] / marginal[0] if marginal[0] > 0 else float("inf")
    # CPU time repeats within a few percent on a quiet machine: a marginal cost per
    # operator that moves by more than 15% from the first to the last step is growth.
    shape = (
        "linear"
        if 0.85 <= growth <= 1.15
        else ("superlinear" if growth > 1.15 else "sublinear")
    )
    return (
        ("(quick: sizes too small to judge) " if quick else "")
        + f"{shape}: the marginal cost per operator went from {marginal[0] * 1e3:.1f} ms "
        f"to {marginal[-1] * 1e3:.1f} ms ({growth:.2f}x) between the smallest and the "
        f"largest step ({key} time of the subprocess)"
    )


# -- profile ----------------------------------------------------------------------------


def profile_gradgen(config: Config, lines: int = 18) -> str:
    """cProfile of gradgen's W1 and W5 (the two overhead-bound workloads)."""
    report = io.StringIO()
    for name, factory, calls in (("W1", w1_gradgen, 2000), ("W5", w5_gradgen, 1)):
        item = factory(config)
        item.step()
        profiler = cProfile.Profile()
        profiler.enable()
        for _ in range(calls):
            item.step()
        profiler.disable()
        report.write(
            f"\n### cProfile of gradgen {name} ({calls} iteration(s)), by own time\n\n"
        )
        stats = pstats.Stats(profiler, stream=report)
        stats.strip_dirs().sort_stats("tottime").print_stats(lines)
    return report.getvalue()
