"""Graph breaks that split the function into compiled pieces (torch.compile's
behaviour): the operators before a break are one compiled program, the Python code
that breaks (`.item()`, `if t.sum() > 0:`, printing) runs as written, and the
operators after it are the next program.

At the trace, a read of a tensor's value in Python ends the current piece and the trace
goes on (`SplitRecorder`). Each piece is compiled on its own: its inputs are the values
it uses that earlier pieces (or the arguments, or the lifted tensors) made, its outputs
every value its operators make (Python holds each of them), and its backward is traced
from those outputs down to the nodes of earlier pieces (`trace_backward`'s boundary).

A later call runs the function's Python code again under a replaying detour
(`Replay`): at the first operator of a piece its program runs, and each operator call
that matches the recording (same operator, same tensors, same constants) gets the
program's tensor instead of running. A view operator runs eagerly (its tensor shares
the base's version counter, as eager's does). A call that does not match (another
branch taken after a break) runs eagerly, and so does everything after it: the values
handed out before are the compiled program's, equal to eager's, so the result is never
wrong.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import dispatch, grad_mode
from ..dispatch import DispatchKey, OperatorHandle
from ..graph import AccumulateGrad, Node
from ..tensor import Tensor, make_edge
from .backward import trace_backward
from .graph import Trace, build_program
from .runtime import NEW, SAME, Entry, lifted_meta
from ..generated.kernel_sources import KERNEL_SOURCES
from ..numpy_kernels._common import DEFAULT_GENERATOR
from .trace import GraphBreak, Op, Recorder, Value, _functional_name, user_line

__all__ = ["Piece", "Replay", "SplitEntry", "SplitRecorder", "build_pieces"]


def _meta(tensor: Tensor) -> tuple[Any, ...]:
    return (type(tensor), tensor._data.shape, tensor._data.dtype, tensor.requires_grad)


def _stream() -> Any:
    """The default generator's numpy bit generator (random operators draw from it)."""
    return DEFAULT_GENERATOR[0]._generator.bit_generator


def _boundary() -> int:
    """A sequence number below every node made from now on."""
    return Node()._sequence_number


@dataclass(eq=False)
class SplitRecorder(Recorder):
    """A recorder that resumes after a read of a tensor's value (a break), keeping
    where each piece starts, and the tensor of each value (for the backward)."""

    breaks: list[tuple[int, int, GraphBreak]] = field(default_factory=list)
    tensors: dict[int, Tensor] = field(default_factory=dict)
    result_types: dict[int, type] = field(default_factory=dict)
    start: int = field(default_factory=_boundary)
    unsplittable: GraphBreak | None = None
    externals: dict[int, tuple[Any, ...]] = field(default_factory=dict)
    stream_states: list[Any] = field(default_factory=list)  # per break
    # The generators given to random operators: their states before the trace.
    generators: dict[int, tuple[np.random.Generator, Any]] = field(default_factory=dict)

    def new_value(self, tensor: Tensor, kind: str) -> Value:
        value = super().new_value(tensor, kind)
        self.tensors[value.index] = tensor
        return value

    def value_of(self, tensor: Tensor) -> Value:
        """A tensor no recorded operator made (a factory, a random draw, numpy) is an
        input of a new piece, bound to what the same call hands over at a replay."""
        key = id(tensor._data)
        if self.phase != "forward" or key in self.values or key in self.constants:
            return super().value_of(tensor)
        lifted = self.lift(tensor)
        if lifted is not None:
            return lifted
        value = self.new_value(tensor, "external")
        self.externals[value.index] = _meta(tensor)
        self._cut(
            "a tensor that no recorded operator made (a factory, a random draw or "
            "numpy) is used: it is an input of the next piece"
        )
        return value

    def _cut(self, reason: str) -> None:
        position = len(self.ops)
        if self.breaks and self.breaks[-1][0] == position:
            return  # a second break with no operator between: the same cut
        self.breaks.append((position, _boundary(), GraphBreak(reason, user_line())))
        self.stream_states.append(_stream().state)

    def value_read(self, name: str) -> None:
        if self.phase != "forward":
            super().value_read(name)
        self._cut(
            f"Tensor.{name} reads a tensor's value in Python (data-dependent control "
            "flow or printing)"
        )

    def __call__(self, handle: OperatorHandle, args: tuple[Any, ...]) -> Any:
        source = KERNEL_SOURCES.get(handle.name)
        if source is not None and "generator" in source.arguments:
            index = source.arguments.index("generator")
            generator = args[index] if index < len(args) else None
            inner = getattr(generator, "_generator", None)
            if isinstance(inner, np.random.Generator):  # its state before the trace
                self.generators.setdefault(
                    id(inner), (inner, inner.bit_generator.state)
                )
        count = len(self.ops)
        result = super().__call__(handle, args)
        if self.phase == "forward" and len(self.ops) > count:
            if not isinstance(result, Tensor):
                self.result_types[count] = type(result)
                if len(_tensor_list(result)) != len(result):
                    self.unsplittable = GraphBreak(
                        f"the operator {handle.name!r} returns more than tensors",
                        user_line(),
                    )
        return result


@dataclass
class Piece:
    """One compiled piece: its operators (for matching calls), its program's entry,
    its inputs and outputs (the values bound to tensors when it runs)."""

    ops: list[Op]
    entry: Entry | None  # None: a piece of view operators only (they run eagerly)
    inputs: list[Value]
    outputs: list[Value]
    eager: set[int]  # ids of the view operators (run eagerly at a replay)


@dataclass
class SplitEntry:
    """A signature whose graph breaks split it into pieces."""

    pieces: list[Piece]
    lifted: list[tuple[Any, Any, Tensor]]
    lifted_values: list[Value]
    inputs: list[Value]
    result_types: dict[int, type]
    breaks: list[GraphBreak]
    lifted_meta: list[Any]
    externals: dict[int, tuple[Any, ...]]  # value index -> its tensor's class, meta
    replays: int = 0
    diverged: int = 0  # replays that left the recording (ran on eagerly)


# -- at the trace ---------------------------------------------------------------------
def _is_view(op: Op) -> bool:
    arrays = [a._data for a in op.raw_args if isinstance(a, Tensor)]
    return any(
        np.may_share_memory(out.array, array) for out in op.outputs for array in arrays
    )


def _is_inplace(op: Op) -> bool:
    first = op.raw_args[0] if op.raw_args else None
    return (
        isinstance(first, Tensor)
        and len(op.outputs) == 1
        and op.outputs[0].array is first._data
    )


def _uses(op: Op) -> list[Value]:
    found: list[Value] = []

    def visit(argument: Any) -> None:
        if isinstance(argument, Value):
            found.append(argument)
        elif isinstance(argument, (list, tuple)):
            for item in argument:
                visit(item)

    for argument in op.args:
        visit(argument)
    return found


def _piece_trace(
    recorder: SplitRecorder, ops: list[Op], eager: set[int]
) -> tuple[Trace, list[Value]]:
    """The piece's trace (forward) and all values it makes (in order)."""
    made: dict[int, Value] = {}
    inputs: dict[int, Value] = {}
    for op in ops:
        for value in _uses(op):
            if id(value) not in made and value.kind != "const":
                inputs.setdefault(id(value), value)
        for value in op.outputs:
            made[id(value)] = value
    visible = [v for op in ops if id(op) not in eager for v in op.outputs]
    return Trace(list(inputs.values()), ops, visible), list(made.values())


def _piece_backward(recorder: SplitRecorder, trace: Trace, boundary: int) -> list[bool]:
    """Trace the piece's backward from its outputs down to its inputs; per output,
    whether it is differentiable."""
    tensors = recorder.tensors
    differentiable = []
    roots, grads = [], []
    for value in trace.outputs:
        tensor = tensors[value.index]
        wanted = grad_mode.is_grad_enabled() and tensor.requires_grad
        differentiable.append(wanted)
        if wanted:
            roots.append(make_edge(tensor))
            seed = Tensor(np.ones_like(tensor._data))
            grads.append(seed)
            trace.grad_inputs.append(recorder.new_value(seed, "grad"))
    if not roots:
        return differentiable
    recorder.ops = []
    recorder.phase = "backward"
    outside: dict[Node, list[Any]] = {}
    with recorder.active():
        leaves = trace_backward(recorder, roots, grads, boundary, outside)
        for value in trace.inputs:
            tensor = tensors[value.index]
            if not tensor.requires_grad:
                continue
            node, number = make_edge(tensor)
            grad: Tensor | None = None
            if isinstance(node, AccumulateGrad):
                grad = leaves.get(node)
            elif node is not None and node in outside:
                grad = outside[node][number]
            trace.grad_outputs.append(None if grad is None else recorder.value_of(grad))
    if recorder.state.broken is not None:
        raise recorder.state.broken
    trace.backward_ops = recorder.ops
    return differentiable


def _saved_source(value: Value, inputs: list[Value], outputs: dict[int, int]) -> int:
    """Whose version counter guards a saved value: an input (or the input it views),
    an output (numbered after the inputs), or none (-1)."""
    for index, candidate in enumerate(inputs):
        if candidate is value:
            return index
    if id(value) in outputs:
        return len(inputs) + outputs[id(value)]
    for index, candidate in enumerate(inputs):
        if np.shares_memory(value.array, candidate.array):
            return index
    return -1


def _piece_entry(
    recorder: SplitRecorder, trace: Trace, boundary: int, fuse: bool
) -> Entry:
    differentiable = _piece_backward(recorder, trace, boundary)
    tensors = recorder.tensors
    needs_grad = [
        i for i, v in enumerate(trace.inputs) if tensors[v.index].requires_grad
    ]
    program = build_program(trace, fuse)
    outputs = {id(v): i for i, v in enumerate(program.outputs)}
    sources = []
    first: dict[int, int] = {}
    for index, value in enumerate(program.outputs):
        if id(value) in first:
            sources.append(SAME - first[id(value)])
        else:
            first[id(value)] = index
            sources.append(NEW)
    saved_sources = [_saved_source(v, trace.inputs, outputs) for v in program.saved]
    return Entry(
        program, [], None, sources, differentiable, needs_grad, saved_sources, []
    )


def build_pieces(
    recorder: SplitRecorder,
    inputs: list[Value],
    lifted: list[tuple[Any, Any, Tensor]],
    lifted_values: list[Value],
    state: Any,
    fuse: bool,
) -> SplitEntry:
    """Cut the recorded forward at its breaks and compile each piece (each checked
    against eager from the generator state its operators started from)."""
    ops = recorder.ops
    if recorder.unsplittable is not None:
        raise recorder.unsplittable
    for op in ops:
        if _is_inplace(op):
            raise GraphBreak(
                f"the in-place operator {op.name!r} runs in a function split by a "
                "graph break (its tensor is Python's)",
                op.line,
            )
    cuts = [(0, recorder.start, state)] + [
        (p, b, s) for (p, b, _), s in zip(recorder.breaks, recorder.stream_states)
    ]
    pieces = []
    for (begin, boundary, start), (end, _, _) in zip(
        cuts, cuts[1:] + [(len(ops), 0, None)]
    ):
        _stream().state = start
        piece_ops = ops[begin:end]
        if not piece_ops:
            continue
        eager = {id(op) for op in piece_ops if _is_view(op)}
        trace, made = _piece_trace(recorder, piece_ops, eager)
        entry = _piece_entry(recorder, trace, boundary, fuse) if trace.outputs else None
        pieces.append(Piece(piece_ops, entry, trace.inputs, trace.outputs, eager))
        recorder.phase = "forward"
    return SplitEntry(
        pieces,
        lifted,
        lifted_values,
        inputs,
        dict(recorder.result_types),
        [error for _, _, error in recorder.breaks],
        lifted_meta([t for _, _, t in lifted]),
        dict(recorder.externals),
    )


# -- at a call ------------------------------------------------------------------------
def _same_constant(recorded: np.ndarray, actual: Any) -> bool:
    return (
        isinstance(actual, Tensor)
        and actual._data.dtype == recorded.dtype
        and actual._data.shape == recorded.shape
        and bool(
            np.array_equal(
                actual._data, recorded, equal_nan=recorded.dtype.kind in "fc"
            )
        )
    )


class Replay:
    """The detour of one call of a split signature."""

    def __init__(self, split: SplitEntry, tensors: list[Tensor]) -> None:
        self.split = split
        self.bound: dict[int, Tensor] = {}
        for value, tensor in zip(split.inputs + split.lifted_values, tensors):
            self.bound[value.index] = tensor
        self.starts = {id(p.ops[0]): p for p in split.pieces}
        self.piece_of = {id(op): p for p in split.pieces for op in p.ops}
        self.ops = [op for p in split.pieces for op in p.ops]
        self.position = 0
        self.depth = 0
        self.diverged = False

    def run(self, fn: Callable[..., Any], args: Any, kwargs: Any) -> Any:
        self.split.replays += 1
        dispatch._detour = self
        try:
            return fn(*args, **kwargs)
        finally:
            dispatch._detour = None
            if self.diverged:
                self.split.diverged += 1

    def _eager(self, handle: OperatorHandle, args: tuple[Any, ...]) -> Any:
        self.depth += 1
        try:
            return handle.call_unobserved(*args)
        finally:
            self.depth -= 1

    def __call__(self, handle: OperatorHandle, args: tuple[Any, ...]) -> Any:
        if self.depth or self.diverged:
            return self._eager(handle, args)
        op = self.ops[self.position] if self.position < len(self.ops) else None
        if handle.name not in KERNEL_SOURCES:
            functional = _functional_name(handle.name)
            inplace = functional in KERNEL_SOURCES and args
            if not inplace and DispatchKey.NumPy not in handle._kernels:
                return handle.call_unobserved(*args)  # a composite: replay its calls
        if op is None or op.name != handle.name or not self._matches(op.args, args):
            self.diverged = True
            return self._eager(handle, args)
        starting = self.starts.get(id(op))
        if starting is not None:
            self._run_piece(starting)
        self.position += 1
        piece = self.piece_of[id(op)]
        if id(op) in piece.eager:
            result = self._eager(handle, args)
            for value, tensor in zip(op.outputs, _tensor_list(result)):
                self.bound[value.index] = tensor
            return result
        tensors = [self.bound[v.index] for v in op.outputs]
        kind = self.split.result_types.get(self.position - 1)
        if kind is None:
            return tensors[0]
        if kind is list:
            return tensors
        make = getattr(kind, "_make", None)
        return make(tensors) if make is not None else kind(tensors)

    def _run_piece(self, piece: Piece) -> None:
        if piece.entry is None:
            return
        tensors = [self.bound[v.index] for v in piece.inputs]
        results = piece.entry.run(tensors)
        for value, tensor in zip(piece.outputs, results):
            self.bound[value.index] = tensor

    def _matches(self, recorded: list[Any], actual: tuple[Any, ...]) -> bool:
        return len(recorded) == len(actual) and all(
            self._match(r, a) for r, a in zip(recorded, actual)
        )

    def _match(self, recorded: Any, actual: Any) -> bool:
        if isinstance(recorded, Value):
            if not isinstance(actual, Tensor) or actual._is_wrapped_number:
                return False
            if recorded.kind == "const":
                return _same_constant(recorded.array, actual)
            bound = self.bound.get(recorded.index)
            if bound is None and recorded.kind == "external":
                if _meta(actual) != self.split.externals[recorded.index]:
                    return False
                self.bound[recorded.index] = actual  # its piece runs after the match
                return True
            return bound is not None and bound._data is actual._data
        if type(recorded) is np.ndarray:  # a wrapped Python number
            return (
                isinstance(actual, Tensor)
                and actual._is_wrapped_number
                and _same_constant(recorded, actual)
            )
        if isinstance(recorded, (list, tuple)):
            return (
                isinstance(actual, (list, tuple))
                and len(recorded) == len(actual)
                and all(self._match(r, a) for r, a in zip(recorded, actual))
            )
        if isinstance(actual, Tensor) or type(recorded) is not type(actual):
            return False
        return bool(recorded is actual or recorded == actual)


def _tensor_list(result: Any) -> list[Tensor]:
    if isinstance(result, Tensor):
        return [result]
    return [t for t in result if isinstance(t, Tensor)]
