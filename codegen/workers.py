"""Run the generator's heavy, independent jobs (black on a batch of blocks, the check of
blocks taken from the cache) in forked worker processes, without the garbage collector.

black builds a syntax tree whose nodes point at their parents, so everything it leaves
behind is reference cycles that only the cycle collector frees; walking them costs
over a third of black's own time, and `ast.parse` of a large module pays as much again
for the young nodes it makes, which the collector walks for nothing. A worker
therefore runs with the collector off, and its memory goes back to the system all at
once, with nothing walked, when it exits: the jobs run in waves of about
`JOBS_PER_WORKER` per worker, each wave in a pool of its own whose workers exit at its
end, so a long run never holds more than a wave's garbage.

The results come back in the order of the jobs whatever the machine, so the output does
not depend on the number of CPUs.
"""

from __future__ import annotations

import ast
import gc
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from typing import Callable, TypeVar

_T = TypeVar("_T")
_R = TypeVar("_R")

# How many jobs one worker runs, on average, before it exits (a job is a batch of
# about 600 lines for black, which leaves a few MB of garbage, or a batch to check).
JOBS_PER_WORKER = 24


def cpu_count() -> int:
    """The CPUs this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def run_jobs(
    function: Callable[[_T], _R],
    items: list[_T],
    cost: Callable[[_T], int] | None = None,
) -> list[_R]:
    """`function` applied to each item, in forked worker processes (one per CPU, at
    most one per item) when there are several items; the results in the order of
    `items`. Without `fork` (Windows), in this process, with the collector paused.

    `cost` (an estimate, e.g. lines) starts the largest items first, so the workers
    finish together rather than one of them running a large item last."""
    if len(items) < 2 or "fork" not in multiprocessing.get_all_start_methods():
        return [_paused_collector(function, item) for item in items]
    order = list(range(len(items)))
    if cost is not None:
        order.sort(key=lambda index: -cost(items[index]))  # stable: ties keep order
    workers = min(len(items), cpu_count())
    context = multiprocessing.get_context("fork")
    wave = workers * JOBS_PER_WORKER
    results: dict[int, _R] = {}
    for start in range(0, len(order), wave):
        chunk = order[start : start + wave]
        with ProcessPoolExecutor(min(workers, len(chunk)), mp_context=context) as pool:
            done = pool.map(
                partial(_without_collector, function), [items[i] for i in chunk]
            )
            results.update(zip(chunk, done))
    return [results[index] for index in range(len(items))]


def _without_collector(function: Callable[[_T], _R], item: _T) -> _R:
    """In a worker: its garbage is freed when the worker exits."""
    gc.disable()
    return function(item)


def _paused_collector(function: Callable[[_T], _R], item: _T) -> _R:
    """In this process: the collector runs again (and frees the job's cycles) after."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return function(item)
    finally:
        if enabled:
            gc.enable()


def parse_paused(source: str) -> ast.Module:
    """ast.parse with the collector paused: a syntax tree holds no reference cycles, so
    the collector would only walk its young nodes again and again for nothing (about
    half of the time of parsing a large module)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return ast.parse(source)
    finally:
        if enabled:
            gc.enable()
