"""The fast call of one compiled signature: guard, run, wrap, attach in one function.

For a signature whose arguments are tensors only (the usual call), a function is made
from the signature's facts: the guard is a straight-line comparison of each argument's
class, shape, dtype and requires_grad, grad mode, the default dtype, the guarded
Python scalars and the lifted tensors against the values the signature was compiled
for (bound as constants of its namespace); then it runs the forward program, wraps
its outputs and attaches the CompiledFunctionBackward node as `Entry.attach` does.
When the guard fails it returns `MISS` and the caller takes the general path (the
guard key and the cache), so the fast call only ever skips work, never decides.

The source is made of this module's own names and of numbered locals (`a0`, `d0`,
`o0`); every value it compares with or calls is bound in the namespace, none is
written into the text.
"""

from __future__ import annotations

import re
import types
from collections.abc import Callable
from typing import Any

import numpy as np

from .. import dispatch, dtypes, grad_mode
from ..tensor import Tensor
from .runtime import NEW, SAME, CompiledFunctionBackward, Entry

__all__ = ["MISS", "make_fast_call"]


class _Miss:
    """The guard failed: take the general path."""


MISS: Any = _Miss()


def _guard_lines(
    metas: list[tuple[Any, ...]],
    scalars: list[tuple[Any, Any]],
    values: tuple[Any, ...],
    state: tuple[bool, Any],
    entry: Entry,
    namespace: dict[str, Any],
) -> list[str]:
    count = len(metas)
    lines = [
        f"if len(args) != {count} or _dispatch._detour is not None"
        " or _dispatch.forward_ad_levels.count:",
        "    return MISS",
    ]
    if count:
        lines.append(", ".join(f"a{i}" for i in range(count)) + ", = args")
    for i, (cls, shape, dtype, requires_grad) in enumerate(metas):
        namespace.update({f"C{i}": cls, f"S{i}": shape, f"T{i}": dtype})
        lines += [
            f"if a{i}.__class__ is not C{i} or a{i}._base is not None:",
            "    return MISS",
            f"d{i} = a{i}._data",
            f"if d{i}.shape != S{i} or {_dtype_differs(f'd{i}', f'T{i}')} or "
            f"(a{i}._requires_grad or a{i}._grad_fn is not None) != "
            f"{bool(requires_grad)}:",
            "    return MISS",
        ]
    enabled, default = state
    namespace.update(GRAD=grad_mode._state, DEFAULT=dtypes._default, D=default)
    lines += [
        f"if GRAD.enabled != {bool(enabled)} or DEFAULT.value != D:",
        "    return MISS",
    ]
    for i, ((owner, key), value) in enumerate(zip(scalars, values)):
        namespace.update({f"O{i}": owner, f"K{i}": key, f"V{i}": value})
        read = f"O{i}.cell_contents" if key is None else f"O{i}.get(K{i})"
        lines += [f"if {read} != V{i}:", "    return MISS"]
    for i, ((owner, key, tensor), (shape, dtype, requires_grad)) in enumerate(
        zip(entry.lifted, entry.lifted_meta)
    ):
        namespace.update(
            {f"LO{i}": owner, f"LK{i}": key, f"L{i}": tensor}
            | {f"LS{i}": shape, f"LT{i}": dtype}
        )
        # (a missing key, an emptied cell: KeyError, ValueError, which give MISS)
        read = f"LO{i}.cell_contents" if key is None else f"LO{i}[LK{i}]"
        lines += [
            f"l{i} = {read}",
            f"if l{i} is not L{i} or l{i}._base is not None:",
            "    return MISS",
            f"e{i} = l{i}._data",
            f"if e{i}.shape != LS{i} or {_dtype_differs(f'e{i}', f'LT{i}')} or "
            f"l{i}._requires_grad != {bool(requires_grad)}:",
            "    return MISS",
        ]
    return lines


def _dtype_differs(array: str, dtype: str) -> str:
    """The guard's dtype test: numpy's dtypes of the built-in types are singletons, so
    identity decides the usual case; `!=` the others."""
    return f"({array}.dtype is not {dtype} and {array}.dtype != {dtype})"


def _history_lines(results: list[str], entry: Entry) -> list[str]:
    """set_history for the differentiable outputs, whose shapes and dtypes (floating)
    the program fixes: output numbers in order, the node's input metadata built once."""
    outputs = [r for r, d in zip(results, entry.differentiable) if d]
    lines = []
    for number, result in enumerate(outputs):
        lines += [f"{result}._grad_fn = node", f"{result}._output_nr = {number}"]
    if outputs:
        lines.append("node._input_metadata = METADATA")
    return lines


def _edge_lines(tensor: str, edge: str) -> list[str]:
    """collect_next_edges for one tensor that requires grad and is not a view."""
    return [
        f"g = {tensor}._grad_fn",
        "if g is not None:",
        f"    {edge} = (g, {tensor}._output_nr)",
        "else:",
        f"    w = {tensor}._grad_accumulator",
        "    g = None if w is None else w()",
        f"    {edge} = (g if g is not None else {tensor}._get_grad_accumulator(), 0)",
    ]


def _same_bits(a: Any, b: Any) -> bool:
    x, y = np.asarray(a), np.asarray(b)
    return bool(x.dtype == y.dtype and x.shape == y.shape) and (
        x.tobytes() == y.tobytes()
    )


def _arithmetic_only(name: str, source: str) -> bool:
    """Whether every use of `name` in the source is an operand of one of + - * /
    (whose results are the same correctly rounded IEEE operation for a numpy scalar as
    for a 0-d array; `**` and function calls are not: numpy's scalar and array
    paths of `**` may differ in the last bit)."""
    uses = list(re.finditer(rf"(?<![\w.]){name}(?!\w)", source))
    for use in uses:
        before = source[max(0, use.start() - 4) : use.start()]
        after = source[use.end() : use.end() + 4]
        if "**" in before or "**" in after:
            return False
        if not (_OPERAND_BEFORE.search(before) or _OPERAND_AFTER.match(after)):
            return False
    return len(uses) > 0


_OPERAND_BEFORE = re.compile(r"[^*] [-+*/] $")
_OPERAND_AFTER = re.compile(r" [-+*/] [^*]")


def _scalar_program(program: Any) -> tuple[Any, Any] | None:
    """The program's functions over a namespace whose 0-d array constants are numpy
    scalars (a numpy scalar times a 0-d array goes through the ufunc machinery, a
    scalar times a scalar does not), where each is used by + - * / only; None when
    there is none."""
    namespace = dict(program.forward.__globals__)
    changed = False
    for name, value in namespace.items():
        if (
            type(value) is np.ndarray
            and value.ndim == 0
            and _arithmetic_only(name, program.source)
        ):
            namespace[name] = value[()]
            changed = True
    if not changed:
        return None
    forward = types.FunctionType(program.forward.__code__, namespace, "forward")
    backward = program.backward
    if backward is not None:
        backward = types.FunctionType(backward.__code__, namespace, "backward")
    return forward, backward


# Programs of up to this many operators try scalar constants.
SCALAR_MODE_BELOW = 2000


def _scalar_mode(entry: Entry, arrays: list[np.ndarray]) -> tuple[Any, Any] | None:
    """The program with scalar constants (see _scalar_program), when on this call's
    inputs it gives the program's outputs, saved values and gradients to the last bit;
    else None."""
    program = entry.program
    if program.op_count > SCALAR_MODE_BELOW:
        return None  # the check would cost more than the calls save
    if program.stateful:
        return None  # the check's extra runs would draw or write again
    scalar = _scalar_program(program)
    if scalar is None:
        return None
    forward, backward = scalar
    try:
        with np.errstate(all="ignore"):
            runs = [program.forward(*arrays), forward(*arrays)]
            original = program.backward
            if original is not None and backward is not None and entry.ones:
                (_, saved), (_, scalar_saved) = runs
                runs.append((original(*entry.ones, *saved), ()))
                runs.append((backward(*entry.ones, *scalar_saved), ()))
    except Exception:  # a kernel that wants an array
        return None
    for (outputs, saved), (scalar_outputs, scalar_saved) in zip(runs[::2], runs[1::2]):
        pairs = list(zip(outputs, scalar_outputs)) + list(zip(saved, scalar_saved))
        if len(outputs) != len(scalar_outputs) or not all(
            (a is None) == (b is None) and (a is None or _same_bits(a, b))
            for a, b in pairs
        ):
            return None
    return forward, backward


def _run_lines(entry: Entry, count: int, enabled: bool) -> list[str]:
    tensors = [f"a{i}" for i in range(count)] + [
        f"l{i}" for i in range(len(entry.lifted))
    ]
    arrays = [f"d{i}" for i in range(count)] + [
        f"e{i}" for i in range(len(entry.lifted))
    ]
    lines = [f"outs, saved = FORWARD({''.join(a + ', ' for a in arrays)})"]
    results = []
    for index, source in enumerate(entry.output_sources):
        if source >= 0:
            results.append(tensors[source])
        elif source == NEW:
            lines += [
                f"x = outs[{index}]",
                f"o{index} = Tensor(x if x.__class__ is NDARRAY else asarray(x))",
            ]
            results.append(f"o{index}")
        else:
            results.append(results[SAME - source])
    if entry.program.backward is not None and enabled:
        counters = []
        for position, source in enumerate(entry.saved_sources):
            if source >= 0:
                owner = (
                    tensors[source]
                    if source < len(tensors)
                    else results[source - len(tensors)]
                )
                lines.append(f"c{position} = {owner}._counter()")
                counters.append(f"c{position}, c{position}.version, ")
        lines.append(
            f"node = NODE(BACKWARD, saved, ({''.join(counters)}), ZEROS, ONES)"
        )
        for position, index in enumerate(entry.needs_grad):
            lines += _edge_lines(tensors[index], f"n{position}")
        edges = "".join(f"n{i}, " for i in range(len(entry.needs_grad)))
        # The entry holds the last call's edges: a leaf's AccumulateGrad, which the
        # leaf holds only weakly, is then not made again at every call.
        lines += [f"ENTRY.edges = edges = ({edges})", "node.set_next_edges(edges)"]
        lines += _history_lines(results, entry)
    kind, content = entry.output_spec
    if kind == "tensor":  # one tensor: itself
        lines.append(f"return {results[content]}")
    else:
        lines.append(f"return BUILD(SPEC, [{', '.join(results)}])")
    return lines


def make_fast_call(
    entry: Entry,
    metas: list[tuple[Any, ...]],
    scalars: list[tuple[Any, Any]],
    values: tuple[Any, ...],
    state: tuple[bool, Any],
    build: Callable[[Any, list[Tensor]], Any],
    arrays: list[np.ndarray],
) -> Callable[[tuple[Any, ...]], Any]:
    """The fast call of `entry`, compiled for tensor arguments of `metas` (class,
    shape, dtype, requires_grad each), guarded `scalars` (owner, key) of `values`,
    and `state` (grad mode, default dtype), all as in the signature's guard key;
    `build(spec, tensors)` puts the outputs together; `arrays` are this call's
    input arrays (to try the scalar mode on)."""
    forward, backward = _scalar_mode(entry, arrays) or (
        entry.program.forward,
        entry.program.backward,
    )
    namespace: dict[str, Any] = {
        "MISS": MISS,
        "_dispatch": dispatch,
        "Tensor": Tensor,
        "NDARRAY": np.ndarray,
        "asarray": np.asarray,
        "FORWARD": forward,
        "BACKWARD": backward,
        "NODE": CompiledFunctionBackward,
        "ZEROS": entry.zeros,
        "ONES": entry.ones,
        "ENTRY": entry,
        "METADATA": tuple(
            (value.array.shape, value.array.dtype)
            for value, differentiable in zip(
                entry.program.outputs, entry.differentiable
            )
            if differentiable
        ),
        "BUILD": build,
        "SPEC": entry.output_spec,
    }
    guard = _guard_lines(metas, scalars, values, state, entry, namespace)
    body = [
        "try:",
        *("    " + line for line in guard),
        "except (KeyError, ValueError):",
    ]
    body += ["    return MISS"]
    body += _run_lines(entry, len(metas), state[0])
    source = "def fast_call(args):\n" + "".join(f"    {line}\n" for line in body)
    exec(compile(source, "<gradgen.compile fast call>", "exec"), namespace)
    function: Callable[[tuple[Any, ...]], Any] = namespace["fast_call"]
    return function
