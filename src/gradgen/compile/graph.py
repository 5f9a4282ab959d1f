"""From a trace to a program: the passes, the forward and backward functions' source,
the check against eager, and the functions themselves.

The forward function takes the input arrays (the inputs, then the lifted tensors) and
returns the output arrays and the values the backward needs (saved values as locals,
no Tensor or Node inside); the backward takes the output gradients and those saved
values and returns one gradient per input that needs one (None where none arrives).

Before the functions are used they run once on the trace's own inputs in a checked
variant: after every operator, the value is normalised as kernels.py's `wrap_result`
does (an ndarray of the dtype eager gave) and compared with eager's value to the last
bit. What needed normalising gets it in the final source; a difference, or an error,
stops the compilation (the signature then runs eagerly).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .emit import Renderer
from .passes import (
    eliminate_common_subexpressions,
    eliminate_dead_code,
    elide_expands,
    fuse_broadcast_reductions,
    is_random,
    replace_values,
    reuse_buffers,
)
from .trace import GraphBreak, Op, Value

__all__ = ["Program", "Trace", "build_program"]


@dataclass
class Trace:
    """What a trace recorded, before the passes."""

    inputs: list[Value]  # the inputs, then the lifted tensors
    forward_ops: list[Op]
    outputs: list[Value]  # the function's tensor outputs
    grad_inputs: list[Value] = field(default_factory=list)  # one per diff output
    backward_ops: list[Op] = field(default_factory=list)
    grad_outputs: list[Value | None] = field(default_factory=list)  # per input
    # In-place writes into lifted buffers: (the buffer's input value, its last value,
    # its version counter); the forward copies the value in and bumps the counter.
    writes: list[tuple[Value, Value, Any]] = field(default_factory=list)


@dataclass
class Program:
    forward: Callable[..., Any]
    backward: Callable[..., Any] | None
    outputs: list[Value]
    saved: list[Value]
    source: str
    op_count: int
    # Whether running it has effects beyond its results (random draws, writes into
    # lifted buffers): such a program runs exactly once per call.
    stateful: bool = False


def _replace(values: list[Any], replaced: dict[int, Value]) -> list[Any]:
    return [v if not isinstance(v, Value) else replaced.get(v.index, v) for v in values]


def _values_used(ops: Iterable[Op]) -> list[Value]:
    found: dict[int, Value] = {}

    def visit(argument: Any) -> None:
        if isinstance(argument, Value):
            found.setdefault(argument.index, argument)
        elif isinstance(argument, (list, tuple)):
            for item in argument:
                visit(item)

    for op in ops:
        for argument in op.args:
            visit(argument)
    return list(found.values())


def _optimise(trace: Trace) -> tuple[list[Op], list[Op], list[Value]]:
    """CSE and DCE on both graphs; the forward values the backward needs."""
    forward, replaced = eliminate_common_subexpressions(trace.forward_ops)
    trace.outputs = _replace(trace.outputs, replaced)
    for op in trace.backward_ops if replaced else ():
        op.args = [replace_values(a, replaced) for a in op.args]
    trace.grad_outputs = _replace(trace.grad_outputs, replaced)
    backward, replaced = eliminate_common_subexpressions(trace.backward_ops)
    trace.grad_outputs = _replace(trace.grad_outputs, replaced)
    backward = eliminate_dead_code(
        backward, [v for v in trace.grad_outputs if v is not None]
    )
    made_in_backward = {id(v) for op in backward for v in op.outputs}
    made_in_backward |= {id(v) for v in trace.grad_inputs}
    used = _values_used(backward) + [v for v in trace.grad_outputs if v is not None]
    saved: dict[int, Value] = {}
    for value in used:
        if id(value) not in made_in_backward and value.kind != "const":
            saved.setdefault(id(value), value)
    written = [w[1] for w in trace.writes]
    forward = eliminate_dead_code(
        forward, trace.outputs + list(saved.values()) + written
    )
    return forward, backward, list(saved.values())


def _function(
    name: str,
    parameters: list[Value],
    ops: list[Op],
    returns: str,
    renderer: Renderer,
    fixes: dict[int, Any] | None,
) -> list[str]:
    lines = [f"def {name}({', '.join(v.name for v in parameters)}):"]
    for op in ops:
        if fixes is None and len(op.outputs) == 1:  # the checked variant
            value = op.outputs[0]
            expression = renderer.expression(op)
            if op.source.returns == ("Tensor[]",):
                expression += "[0]"
            body = [f"{value.name} = _check({value.index}, {expression})"]
        elif fixes is None:
            body = renderer.lines(op, {})
            body += [f"{v.name} = _check({v.index}, {v.name})" for v in op.outputs]
        else:
            body = renderer.lines(op, fixes)
        lines += ["    " + line for line in body]
    lines.append(f"    return {returns}")
    return lines


def _tuple(values: list[Value | None]) -> str:
    """A return tuple; a constant leaves as a copy (its array is the program's)."""
    names = [
        "None" if v is None else f"{v.name}.copy()" if v.kind == "const" else v.name
        for v in values
    ]
    return "(" + "".join(n + ", " for n in names) + ")"


def _constants(ops: list[Op], values: list[Value | None]) -> dict[str, Any]:
    """The constant values the code reads, by name (globals of its namespace)."""
    found = [v for v in _values_used(ops) + values if v is not None]
    return {v.name: v.array for v in found if v.kind == "const"}


def _source(
    trace: Trace,
    forward: list[Op],
    backward: list[Op],
    saved: list[Value],
    renderer: Renderer,
    fixes: dict[int, Any] | None,
) -> str:
    lines = _function(
        "forward",
        trace.inputs,
        forward,
        f"{_tuple(list(trace.outputs))}, {_tuple(list(saved))}",
        renderer,
        fixes,
    )
    for target, value, counter in trace.writes:  # before the return
        lines[-1:-1] = [
            f"    # {target.name} <- {value.name}: the in-place write into a buffer",
            f"    np.copyto({target.name}, {value.name})",
            f"    {renderer.constant(counter)}.version += 1",
        ]
    if trace.grad_inputs:
        lines += [""]
        lines += _function(
            "backward",
            trace.grad_inputs + saved,
            backward,
            _tuple(trace.grad_outputs),
            renderer,
            fixes,
        )
    return "\n".join(lines) + "\n"


def _same(value: Any, expected: np.ndarray) -> bool:
    return (
        type(value) is np.ndarray
        and value.dtype == expected.dtype
        and value.shape == expected.shape
        and bool(np.array_equal(value, expected, equal_nan=expected.dtype.kind in "fc"))
    )


class _Checker:
    """`_check(index, value)` of the checked variant: normalise, compare, remember."""

    def __init__(self, expected: dict[int, Value]) -> None:
        self.expected = expected
        self.fixes: dict[int, Any] = {}
        self.differs: int | None = None

    def __call__(self, index: int, value: Any) -> Any:
        want = self.expected[index].array
        if isinstance(value, np.generic) and value.dtype == want.dtype:
            # numpy's scalar for a 0-d result: kept (it computes as the 0-d array
            # would); the program's outputs are made arrays where they leave it.
            if self.differs is None and not _same(np.asarray(value), want):
                self.differs = index
            return value
        array = value if type(value) is np.ndarray else np.asarray(value)
        if array is not value:
            self.fixes[index] = None
        if array.dtype != want.dtype:
            array = array.astype(want.dtype)
            self.fixes[index] = want.dtype
        if self.differs is None and not _same(array, want):
            self.differs = index
        return array


# The names kernel expressions use are those of kernels.py (np, the numpy_kernels
# helpers, the user's kernels module); imported by name so that type checking does not
# take in the whole generated backend.
_KERNELS = importlib.import_module("gradgen.generated.kernels")


def _namespace(renderer: Renderer, extra: dict[str, Any]) -> dict[str, Any]:
    namespace = dict(vars(_KERNELS))
    namespace.update(renderer.constants)
    namespace.update(renderer.values)
    namespace.update(extra)
    return namespace


# Past this many operators the checked code is kept as the final code (with a
# `_check` that only applies the fixes): compiling a second source of that size costs
# more than the calls save.
RECOMPILE_BELOW = 2000


class _Fixer:
    """`_check(index, value)` of checked code kept as the final code: the fixes only."""

    def __init__(self, fixes: dict[int, Any]) -> None:
        self.fixes = fixes

    def __call__(self, index: int, value: Any) -> Any:
        if index not in self.fixes:
            return value
        dtype = self.fixes[index]
        array = np.asarray(value)
        return array if dtype is None else array.astype(dtype)


def _run_checked(
    trace: Trace,
    forward: list[Op],
    backward: list[Op],
    saved: list[Value],
    renderer: Renderer,
) -> tuple[dict[int, Any], str, dict[str, Any]]:
    """Run the checked variant on the trace's inputs; the fixes it found, its source
    and namespace."""
    expected = {v.index: v for op in forward + backward for v in op.outputs}
    checker = _Checker(expected)
    source = _source(trace, forward, backward, saved, renderer, None)
    namespace = _namespace(renderer, {"_check": checker})
    exec(compile(source, "<gradgen.compile check>", "exec"), namespace)
    try:
        _, saved_arrays = namespace["forward"](*[v.array for v in trace.inputs])
        if trace.grad_inputs:
            namespace["backward"](*[v.array for v in trace.grad_inputs], *saved_arrays)
    except Exception as error:
        raise GraphBreak(
            f"the compiled code failed where eager did not ({type(error).__name__}: "
            f"{error})",
            "",
        ) from None
    if checker.differs is not None:
        op = next(
            o
            for o in forward + backward
            if any(v.index == checker.differs for v in o.outputs)
        )
        raise GraphBreak(
            f"the compiled code of {op.name!r} differs from eager", op.line
        )
    namespace["_check"] = _Fixer(checker.fixes)
    return checker.fixes, source, namespace


def build_program(trace: Trace, fuse: bool = False) -> Program:
    """Optimise, render, check against eager and compile the trace. With `fuse`,
    the final code computes a broadcast-reduction as one einsum (a reassociated sum:
    within its rounding bound of eager's, not to the last bit)."""
    forward, backward, saved = _optimise(trace)
    kept = {id(v) for v in trace.outputs + saved + [w[1] for w in trace.writes]}
    kept |= {id(v) for v in trace.grad_outputs if v is not None}
    forward = elide_expands(forward, kept)
    backward = elide_expands(backward, kept)
    renderer = Renderer()
    leaving: list[Value | None] = [*trace.outputs, *trace.grad_outputs]
    renderer.values = _constants(forward + backward, leaving)
    for op in forward + backward:
        renderer.expression(op)  # finds the binary ufuncs
    renderer.reuse.update(reuse_buffers(forward, renderer.binary, kept))
    renderer.reuse.update(reuse_buffers(backward, renderer.binary, kept))
    fixes, source, namespace = _run_checked(trace, forward, backward, saved, renderer)
    if len(forward) + len(backward) < RECOMPILE_BELOW:
        if fuse:
            forward = fuse_broadcast_reductions(forward, kept)
            backward = fuse_broadcast_reductions(backward, kept)
        source = _source(trace, forward, backward, saved, renderer, fixes)
        namespace = _namespace(renderer, {})
        exec(compile(source, "<gradgen.compile>", "exec"), namespace)
    return Program(
        namespace["forward"],
        namespace["backward"] if trace.grad_inputs else None,
        list(trace.outputs),
        saved,
        source,
        len(forward) + len(backward),
        bool(trace.writes) or any(is_random(op) for op in forward + backward),
    )
