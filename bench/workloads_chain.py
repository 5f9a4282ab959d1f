"""Workload W5: a chain of 100,000 multiplications, forward and backward (deep graphs
and the engine's memory), for gradgen, numpy and each peer.
"""

from __future__ import annotations

import gc
import sys
import tracemalloc
from typing import Any

import numpy as np
import gradgen
from gradgen import engine
from gradgen.graph import Edge, Node

from harness import (
    Config,
    PEER,
    Prepared,
    Unavailable,
    _leaf,
    _np,
    implementation,
    perf_counter,
)

# -- W5: a deep graph -------------------------------------------------------------------


class _PassGradient(Node):
    """A node whose apply hands its gradient on unchanged: a chain of them costs the
    engine's own work per node (ready queue, dependencies, buffers, validation). It
    has an array form, as the generated nodes of a backward that records no graph
    have, so the engine runs it on the same path as W5's nodes."""

    __slots__ = ()
    _has_array_form = True

    def apply(self, grads: Any) -> list[Any]:
        return [grads[0]]

    def apply_arrays(self, grads: list[Any]) -> list[Any]:
        return [grads[0]]


def engine_per_node(config: Config, repeat: int = 5) -> float:
    """Seconds of engine work per node: the median backward of a chain of
    `config.w5_length` pass-through nodes, divided by its length."""
    n = config.w5_length
    times = []
    for _ in range(repeat):
        x = gradgen.tensor(np.array(1.0), requires_grad=True)
        metadata = ((x._data.shape, x._data.dtype),)
        previous: Node | None = x._get_grad_accumulator()
        for _ in range(n):
            node = _PassGradient()
            node.set_next_edges(((previous, 0),))
            node._input_metadata = metadata
            previous = node
        seed = [gradgen.tensor(np.array(1.0))]
        t0 = perf_counter()
        engine.execute([Edge(previous, 0)], seed, keep_graph=False, create_graph=False)
        times.append(perf_counter() - t0)
        assert x.grad is not None and x.grad.item() == 1.0
        del previous, node
    return float(np.median(times)) / n


W5_FACTOR = 1.0001


def _w5_torchlike(lib: Any, config: Config) -> Prepared:
    x = _leaf(lib, 1.0)
    n = config.w5_length
    phases: list[tuple[float, ...]] = []

    def step() -> None:
        x.grad = None
        t0 = perf_counter()
        y = x
        for _ in range(n):
            y = y * W5_FACTOR
        t1 = perf_counter()
        y.backward()
        t2 = perf_counter()
        del y  # frees the graph
        t3 = perf_counter()
        phases.append((t1 - t0, t2 - t1, t3 - t2))

    return Prepared(step, lambda: [_np(x.grad)], phases=phases)


@implementation("W5", "gradgen")
def w5_gradgen(config: Config) -> Prepared:
    return _w5_torchlike(gradgen, config)


@implementation("W5", "torch")
def w5_torch(config: Config) -> Prepared:
    return _w5_torchlike(PEER["torch"].module, config)


@implementation("W5", "numpy")
def w5_numpy(config: Config) -> Prepared:
    n = config.w5_length
    out: list[Any] = [None]

    def step() -> None:
        y = np.array(1.0)
        for _ in range(n):
            y = y * W5_FACTOR
        g = np.array(1.0)
        for _ in range(n):  # d(y * k)/dy = k, once per link
            g = g * W5_FACTOR
        out[0] = g

    return Prepared(step, lambda: out)


@implementation("W5", "autograd")
def w5_autograd(config: Config) -> Prepared:
    n = config.w5_length

    def chain(x: Any) -> Any:
        y = x
        for _ in range(n):
            y = y * W5_FACTOR
        return y

    gradient = PEER["autograd"].module.grad(chain)
    out: list[Any] = [None]

    def step() -> None:
        out[0] = gradient(1.0)

    return Prepared(step, lambda: out)


@implementation("W5", "mygrad")
def w5_mygrad(config: Config) -> Prepared:
    x = PEER["mygrad"].module.tensor(1.0)
    n = config.w5_length

    def step() -> None:
        y = x
        for _ in range(n):
            y = y * W5_FACTOR
        y.backward()

    return Prepared(step, lambda: [x.grad])


@implementation("W5", "micrograd")
def w5_micrograd(config: Config) -> Prepared:
    # micrograd's backward sorts the graph recursively, one Python frame per node.
    # Python >= 3.11 runs Python-to-Python calls without C recursion, so raising the
    # limit is safe there; on older versions it would overflow the C stack.
    if sys.version_info < (3, 11):
        raise Unavailable("n/a (recursive backward; needs Python >= 3.11)")
    Value = PEER["micrograd"].module.Value
    x = Value(1.0)
    n = config.w5_length

    def step() -> None:
        x.grad = 0.0
        y = x
        for _ in range(n):
            y = y * W5_FACTOR
        limit = sys.getrecursionlimit()
        sys.setrecursionlimit(max(limit, 2 * n + 1000))
        try:
            y.backward()
        finally:
            sys.setrecursionlimit(limit)

    return Prepared(step, lambda: [x.grad], note="micrograd W5: recursion limit raised")


def w5_memory(config: Config) -> dict[str, float]:
    """tracemalloc over gradgen's W5: the graph's peak, and what is left after `del`."""
    gc.collect()
    tracemalloc.start()
    try:
        x = _leaf(gradgen, 1.0)
        gc.collect()
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        y = x
        for _ in range(config.w5_length):
            y = y * W5_FACTOR
        graph = tracemalloc.get_traced_memory()[0] - base
        y.backward()
        after_backward = tracemalloc.get_traced_memory()[0] - base
        peak = tracemalloc.get_traced_memory()[1] - base
        del y
        after_del = tracemalloc.get_traced_memory()[0] - base
        unreachable = gc.collect()  # also empties the interpreter's free lists
        after_collect = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    return {
        "graph": graph,
        "after_backward": after_backward,
        "peak": peak,
        "after_del": after_del,
        "after_collect": after_collect,
        "nodes": config.w5_length,
        "unreachable": unreachable,
    }
