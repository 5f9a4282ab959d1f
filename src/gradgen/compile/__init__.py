"""gradgen.compile: trace a function once per input signature and run it as
straight-line numpy code, forward and backward (torch.compile's spelling).

    trace.py     capture at the dispatcher (the operators the function calls)
    backward.py  the backward, traced by running the graph's own formula nodes
    chain.py     large graphs: a trace without nodes, chains rolled into loops
    passes.py    constant folding, dead-code and common-subexpression elimination
    emit.py      rendering operators from the kernel sources (generated/kernel_sources.py)
    graph.py     the forward/backward program, checked against eager
    runtime.py   CompiledFunctionBackward and running one compiled signature
    compiler.py  guards, cache, recompiles, graph breaks
    _dynamo.py   explain()
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .compiler import CompiledFunction, Unsupported
from .runtime import CompiledFunctionBackward

__all__ = ["CompiledFunction", "CompiledFunctionBackward", "Unsupported", "compile"]


def compile(
    model: Callable[..., Any] | None = None,
    *,
    fullgraph: bool = False,
    dynamic: bool | None = None,
    backend: Any = "numpy",
    mode: str | None = None,
    options: dict[str, Any] | None = None,
    disable: bool = False,
    debug: bool = False,
) -> Any:
    """Compile `model` (a function or an nn.Module); without it, a decorator.

    `backend` and `mode` are accepted for torch.compile's callers and ignored (there
    is one backend, numpy); of `options`, `{"fuse_broadcast_reductions": True}` turns
    on the fusion of `sum_to_size(a * b)` into one einsum (a reassociated sum, not
    bitwise eager's); `disable=True` returns `model` itself.
    Shapes are always specialised: `dynamic` is accepted, and a new shape recompiles.
    `debug=True` (or GRADGEN_COMPILE_DEBUG=1) prints each generated source to stderr.
    """
    del backend, mode
    fuse = bool((options or {}).get("fuse_broadcast_reductions", False))

    def wrap(fn: Callable[..., Any]) -> Any:
        if disable:
            return fn
        return CompiledFunction(
            fn, fullgraph=fullgraph, dynamic=dynamic, debug=debug, fuse=fuse
        )

    return wrap if model is None else wrap(model)
