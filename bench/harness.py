"""The benchmark harness that bench/run.py's workloads share: the optional peers, the
sizes of a run (`Config`), the registry of implementations (`@implementation`) and
the timer (interleaved medians, `measure`).
"""

from __future__ import annotations

import gc
import importlib
import importlib.metadata
import statistics
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import gradgen

perf_counter = time.perf_counter

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent

LIBRARIES = ("gradgen", "numpy", "torch", "autograd", "mygrad", "micrograd")
PEERS = ("torch", "autograd", "mygrad", "micrograd")
HEADERS = {
    "gradgen": "gradgen",
    "numpy": "numpy limit",
    "torch": "torch",
    "autograd": "autograd",
    "mygrad": "mygrad",
    "micrograd": "micrograd",
}
SECTIONS = ("W1", "W2", "W3", "W4", "W5", "LSTM", "OPS", "CODEGEN")


# ---------------------------------------------------------------------------------------
# Peers: imported optionally; a missing one is "n/a (not installed)".
# ---------------------------------------------------------------------------------------


@dataclass
class Peer:
    name: str
    module: Any = None
    version: str = ""
    missing: str = ""  # why it is unavailable ("" when it is available)


def _distribution_version(name: str, module: Any) -> str:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return str(getattr(module, "__version__", "?"))


def load_peers() -> dict[str, Peer]:
    peers: dict[str, Peer] = {}
    for name in PEERS:
        peer = Peer(name)
        try:
            if name == "torch":
                import torch

                torch.set_num_threads(1)
                try:
                    torch.set_num_interop_threads(1)
                except RuntimeError:  # already set (only allowed once per process)
                    pass
                peer.module = torch
            elif name == "autograd":
                import autograd
                import autograd.numpy  # noqa: F401

                if not hasattr(autograd, "grad") or not hasattr(autograd, "make_vjp"):
                    raise ImportError("the installed `autograd` is not HIPS autograd")
                peer.module = autograd
            elif name == "mygrad":
                import mygrad

                peer.module = mygrad
            elif name == "micrograd":
                import micrograd.engine

                peer.module = micrograd.engine
            peer.version = _distribution_version(name, peer.module)
        except ImportError:
            peer.missing = "n/a (not installed)"
        except Exception as error:  # installed but broken (e.g. a numpy ABI clash)
            peer.missing = f"n/a (import failed: {type(error).__name__})"
        peers[name] = peer
    return peers


# ---------------------------------------------------------------------------------------
# Measurement
# ---------------------------------------------------------------------------------------


class Unavailable(Exception):
    """An implementation that cannot run this workload; the message is the table cell."""


@dataclass
class Prepared:
    """One implementation of one workload, ready to time.

    `step()` runs one iteration (forward + backward); `grads()` returns, after a step,
    the gradients as numpy arrays in the workload's order (checked against numpy's);
    `note` is printed under the table; `phases` collects optional per-phase timings.
    """

    step: Callable[[], Any]
    grads: Callable[[], Sequence[np.ndarray]]
    note: str = ""
    phases: list[tuple[float, ...]] = field(default_factory=list)


@dataclass
class Timing:
    """Seconds per call, one entry per timed repetition of `number` calls."""

    samples: list[float]
    number: int

    @property
    def median(self) -> float:
        return statistics.median(self.samples)

    def spread(self) -> str:
        low, high = min(self.samples), max(self.samples)
        return f"min {low:.4g} / max {high:.4g} s/call, {len(self.samples)} x {self.number}"


Runner = Callable[[int], float]  # run(n) -> seconds taken by n calls


def looped(step: Callable[[], Any]) -> Runner:
    def run(n: int) -> float:
        started = perf_counter()
        for _ in range(n):
            step()
        return perf_counter() - started

    return run


def calibrate(run: Runner, target: float) -> tuple[int, float]:
    """How many calls make one repetition last about `target` seconds.

    One untimed call first: one-time costs (torch starts its autograd engine on the
    first backward, ~0.3 s) must not make the calibration settle on one call per
    repetition.
    """
    run(1)
    n = 1
    while True:
        elapsed = run(n)
        if elapsed >= target * 0.2 or n >= 1_000_000:
            break
        n *= 10 if elapsed < target * 0.02 else 3
    per_call = elapsed / n
    return max(1, round(target / per_call)) if per_call < target else 1, per_call


def measure(
    runners: dict[str, Runner],
    *,
    repeat: int,
    target: float,
    budget: float,
    collect: bool,
    progress: str,
    estimates: dict[str, float] | None = None,
) -> dict[str, Timing | str]:
    """Median-ready timings of several runners, interleaved round-robin.

    Each runner gets `repeat` repetitions of about `target` seconds, fewer (but at
    least 3) when that would exceed `budget` seconds. A runner that raises is reported
    as "error: ..." instead. With `target` 0 each repetition is one call, and the
    per-call `estimates` (from the gradient check) stand in for the calibration run.
    """
    results: dict[str, Timing | str] = {}
    repeats: dict[str, int] = {}
    for name, run in runners.items():
        log(f"{progress}: {name} (calibrating)")
        try:
            if collect:
                gc.collect()
            if target <= 0 and estimates and name in estimates:
                number, per_call = 1, estimates[name]
            else:
                number, per_call = calibrate(run, target)
        except Exception as error:  # pragma: no cover - reported, not fatal
            results[name] = failure(error)
            continue
        repeats[name] = max(
            min(repeat, 3), min(repeat, int(budget / (per_call * number)))
        )
        results[name] = Timing([], number)
    for index in range(max(repeats.values(), default=0)):
        for name, run in runners.items():
            timing = results.get(name)
            if not isinstance(timing, Timing) or index >= repeats[name]:
                continue
            if collect:
                gc.collect()
            try:
                timing.samples.append(run(timing.number) / timing.number)
            except Exception as error:  # pragma: no cover
                results[name] = failure(error)
    return results


def failure(error: BaseException) -> str:
    if VERBOSE:
        traceback.print_exception(error)
    text = f"{type(error).__name__}: {error}".splitlines()[0]
    return "error: " + (text[:60] + "..." if len(text) > 60 else text)


VERBOSE = False


_STARTED = perf_counter()


def log(message: str) -> None:
    print(
        f"  [{perf_counter() - _STARTED:6.1f} s] {message}", file=sys.stderr, flush=True
    )


# ---------------------------------------------------------------------------------------
# Configuration
# ---------------------------------------------------------------------------------------


@dataclass
class Config:
    quick: bool
    repeat: int  # repetitions for the per-iteration workloads
    target: float  # seconds per repetition
    budget: float  # seconds per implementation and workload
    w3_size: int
    w5_length: int
    w5_repeat: int
    ops_repeat: int
    ops_target: float
    codegen_repeat: int
    codegen_sizes: tuple[int, ...]
    seed_mode: str  # "sum" (gradgen has sum) or "ones" (backward(gradient=ones))


def make_config(quick: bool, seed_mode: str) -> Config:
    if seed_mode == "auto":
        seed_mode = "sum" if hasattr(gradgen, "sum") else "ones"
    if quick:
        return Config(
            True, 5, 0.02, 0.5, 100_000, 10_000, 3, 3, 0.01, 1, (10, 20, 40), seed_mode
        )
    return Config(
        False,
        11,
        0.2,
        8.0,
        1_000_000,
        100_000,
        5,
        9,
        0.05,
        3,
        (250, 500, 1000),
        seed_mode,
    )


# ---------------------------------------------------------------------------------------
# Workloads: implementations are registered per (workload, library).
# ---------------------------------------------------------------------------------------

Factory = Callable[[Config], Prepared]
IMPLEMENTATIONS: dict[tuple[str, str], Factory] = {}


def implementation(workload: str, library: str) -> Callable[[Factory], Factory]:
    def register(factory: Factory) -> Factory:
        IMPLEMENTATIONS[(workload, library)] = factory
        return factory

    return register


def _np(tensor: Any) -> np.ndarray:
    """A gradgen / torch / mygrad gradient as a numpy array (a copy)."""
    if isinstance(tensor, np.ndarray):
        return tensor.copy()
    if hasattr(tensor, "detach"):
        return np.array(tensor.detach().numpy())
    return np.array(tensor)


def _leaf(lib: Any, data: Any) -> Any:
    """A float64 leaf that requires grad, in gradgen or torch (same API)."""
    return lib.tensor(data, dtype=lib.float64, requires_grad=True)


# ---------------------------------------------------------------------------------------
# Running the workloads
# ---------------------------------------------------------------------------------------

PEER: dict[str, Peer] = {}


@dataclass
class Outcome:
    """What one workload produced, per library: a Timing or the text of its cell."""

    cells: dict[str, Timing | str]
    notes: list[str] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)
