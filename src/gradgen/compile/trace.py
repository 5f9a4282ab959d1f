"""Capture at the dispatcher: run the function once and record the operators it calls.

While a `Recorder` is active, every `OperatorHandle.call` goes through its detour
(dispatch's `_detour`, the hook the profiler and vmap use). A call whose operator has
a kernel expression (generated/kernel_sources.py) is recorded as one `Op` and runs as
usual, its inner calls unrecorded; a composite (no NumPy kernel of its own) is not
recorded itself: the operators it calls are. Tensors become graph values by the
identity of their arrays (a saved output comes back from its SavedVariable as a new
Tensor around the same array).

What the straight-line code could not reproduce stops the trace with a `GraphBreak`:
an operator that writes into an argument, a tensor that no recorded operator made and
that is not an input (made by a factory, a random draw or numpy), an operator that
hands a Python value back to the program, and reading a tensor's value in Python
(`.item()`, `bool()`, `.tolist()`, printing), which the recorder catches by replacing
those Tensor methods while it runs.
"""

from __future__ import annotations

import linecache
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import dispatch
from ..dispatch import DispatchKey, OperatorHandle
from ..generated.kernel_sources import KERNEL_SOURCES, KernelSource
from ..tensor import Tensor

__all__ = ["GraphBreak", "Op", "Recorder", "TooLarge", "Value", "user_line"]


class GraphBreak(Exception):
    """What stops a trace: the reason and the user's source line."""

    def __init__(self, reason: str, line: str) -> None:
        super().__init__(f"{reason} ({line})" if line else reason)
        self.reason = reason
        self.line = line


class TooLarge(Exception):
    """A trace reached its recorder's `limit` of forward operators: compiler.py
    traces the function again without autograd nodes (compile/chain.py)."""


# Per code object: whether it is gradgen's (a trace asks at every operator).
_IN_GRADGEN: dict[tuple[Any, str], bool] = {}
# Per (code object, its file, line): the text user_line gives. Code objects compare
# equal across files (co_filename is not compared), hence the file in both keys.
_LINES: dict[tuple[Any, str, int], str] = {}


def user_line() -> str:
    """`file:line: code` of the innermost frame outside gradgen (the user's line)."""
    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        filename = code.co_filename
        inside = _IN_GRADGEN.get((code, filename))
        if inside is None:
            module = frame.f_globals.get("__name__", "")
            inside = module == "gradgen" or module.startswith("gradgen.")
            _IN_GRADGEN[code, filename] = inside
        if not inside:
            key = (code, filename, frame.f_lineno)
            line = _LINES.get(key)
            if line is None:
                text = linecache.getline(filename, frame.f_lineno).strip()
                line = f"{os.path.basename(filename)}:{frame.f_lineno}: {text}"
                _LINES[key] = line
            return line
        frame = frame.f_back  # type: ignore[assignment]
    return ""


@dataclass(eq=False)
class Value:
    """A tensor of the graph: an input, a lifted tensor, or an operator's output."""

    index: int
    array: np.ndarray  # its value in the trace
    kind: str = "op"  # "input", "lifted", "grad" (a backward input) or "op"

    @property
    def name(self) -> str:
        return f"v{self.index}"


@dataclass(eq=False)
class Op:
    """One recorded operator call: arguments are Values, constants, or lists of them."""

    name: str
    source: KernelSource
    args: list[Any]
    raw_args: tuple[Any, ...]  # the call's own arguments (for the dtype rules)
    outputs: list[Value]
    line: str
    phase: str = "forward"


@dataclass
class _State:
    depth: int = 0
    broken: GraphBreak | None = None


@dataclass(eq=False)
class Recorder:
    """The record of one trace. `lift(tensor)` decides what an unknown tensor is."""

    lift: Callable[[Tensor], Value | None]
    ops: list[Op] = field(default_factory=list)
    values: dict[int, Value] = field(default_factory=dict)  # id(array) -> Value
    arrays: list[np.ndarray] = field(default_factory=list)  # keeps the ids alive
    # Arrays of tensors made from Python data or shapes alone (a factory, a formula's
    # zeros): id -> (the array, a copy taken when it was made).
    constants: dict[int, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)
    # While an in-place operator runs: the tensor it changes, and its value before.
    changing: tuple[Tensor, Value] | None = None
    phase: str = "forward"
    node_name: str = ""  # in the backward phase: the node whose formulas run
    state: _State = field(default_factory=_State)
    # Past this many forward operators (when not 0) the trace stops with TooLarge.
    limit: int = 0

    # -- values ---------------------------------------------------------------------
    def new_value(self, tensor: Tensor, kind: str) -> Value:
        value = Value(len(self.arrays), tensor._data, kind)
        self.arrays.append(tensor._data)
        self.values[id(tensor._data)] = value
        return value

    def value_of(self, tensor: Tensor) -> Value:
        value = self.values.get(id(tensor._data))
        if value is not None:
            return value
        constant = self.constants.get(id(tensor._data))
        if constant is not None:
            array, made = constant
            if not _same_array(array, made):
                raise self.stop(
                    "a tensor made by a factory was changed outside the operators"
                )
            value = Value(len(self.arrays), made, "const")
            self.arrays.append(array)
            self.values[id(array)] = value
            return value
        lifted = self.lift(tensor)
        if lifted is None:
            raise self.stop(
                "a tensor that no recorded operator made and that the function does not "
                "reach (made by a factory, a random draw or numpy) is used"
            )
        return lifted

    def value_read(self, name: str) -> None:
        """A tensor's value is read in Python: a graph break (a recorder that splits
        the graph there overrides this to resume instead)."""
        raise self.stop(
            f"Tensor.{name} reads a tensor's value in Python (data-dependent "
            "control flow or printing)"
        )

    def stop(self, reason: str) -> GraphBreak:
        error = GraphBreak(reason, user_line())
        if self.state.broken is None:
            self.state.broken = error
        return error

    # -- the detour -----------------------------------------------------------------
    def __call__(self, handle: OperatorHandle, args: tuple[Any, ...]) -> Any:
        state = self.state
        if state.depth:
            result = handle.call_unobserved(*args)
            changing = self.changing
            if (
                changing is not None
                and handle.name == "clone"
                and args[0] is changing[0]
            ):
                # The autograd kernel of an in-place operator saving `self` as it was.
                self.values[id(result._data)] = changing[1]
                self.arrays.append(result._data)
            return result
        source = KERNEL_SOURCES.get(handle.name)
        if source is None:
            functional = _functional_name(handle.name)
            if functional in KERNEL_SOURCES and args and isinstance(args[0], Tensor):
                return self._record_inplace(handle, functional, args)
            if DispatchKey.NumPy in handle._kernels:
                raise self.stop(
                    f"the operator {handle.name!r} writes into an argument or has no "
                    "kernel expression"
                )
            return handle.call_unobserved(*args)  # a composite: record what it calls
        if any(kind != "Tensor" and kind != "Tensor[]" for kind in source.returns):
            raise self.stop(
                f"the operator {handle.name!r} returns a Python value to the program"
            )
        recorded = [self._argument(a) for a in args]
        state.depth += 1
        try:
            result = self.run(handle, args)
        finally:
            state.depth -= 1
        outputs = [self.new_value(t, "op") for t in _tensors_of(result)]
        self.ops.append(
            Op(handle.name, source, recorded, args, outputs, self._line(), self.phase)
        )
        if self.limit and len(self.ops) >= self.limit and self.phase == "forward":
            raise TooLarge()
        return result

    def run(self, handle: OperatorHandle, args: tuple[Any, ...]) -> Any:
        """Run a recorded operator, its autograd kernel too (backward.py runs the
        nodes it makes)."""
        return handle.call_unobserved(*args)

    def _record_inplace(
        self, handle: OperatorHandle, functional: str, args: tuple[Any, ...]
    ) -> Any:
        """`t.mul_(u)` on a tensor the graph made: recorded as `mul`, after which `t`'s
        array stands for the new value. The old value keeps a copy of what it was, so
        the check against eager sees a view taken before the change go stale."""
        target = self.value_of(args[0])
        # A lifted tensor that needs no gradient (a module's buffer: BatchNorm's
        # num_batches_tracked) is written back by the program (compile/graph.py).
        buffer = target.kind == "lifted" and not args[0].requires_grad
        if target.kind not in ("op", "const") and not buffer:
            raise self.stop(
                f"the in-place operator {handle.name!r} changes an input of the "
                "compiled function"
            )
        recorded = [self._argument(a) for a in args]
        target.array = target.array.copy()
        self.state.depth += 1
        self.changing = (args[0], target)
        try:
            result = handle.call_unobserved(*args)
        finally:
            self.state.depth -= 1
            self.changing = None
        output = self.new_value(args[0], "op")
        self.ops.append(
            Op(
                functional,
                KERNEL_SOURCES[functional],
                recorded,
                args,
                [output],
                self._line(),
                self.phase,
            )
        )
        return result

    def _line(self) -> str:
        """Where an operator comes from: the user's line, or the backward node."""
        return self.node_name if self.phase == "backward" else user_line()

    def _argument(self, argument: Any) -> Any:
        if isinstance(argument, Tensor):
            if argument._is_wrapped_number:  # a Python number: a constant
                return argument._data
            return self.value_of(argument)
        if isinstance(argument, (list, tuple)):
            items = [self._argument(a) for a in argument]
            return items if isinstance(argument, list) else tuple(items)
        return argument

    @contextmanager
    def active(self) -> Iterator[None]:
        """Record every operator call, and break on reading tensor values."""
        if dispatch._detour is not None:
            raise self.stop(
                "the function runs under the profiler or vmap, which the compiled code "
                "would bypass"
            )
        dispatch._detour = self
        saved = {name: getattr(Tensor, name) for name in _VALUE_READERS}
        saved["__init__"] = Tensor.__init__
        for name in _VALUE_READERS:
            setattr(Tensor, name, _value_reader(self, name, saved[name]))
        setattr(Tensor, "__init__", _constant_maker(self, saved["__init__"]))
        try:
            yield
        finally:
            for name, method in saved.items():
                setattr(Tensor, name, method)
            dispatch._detour = None


def _functional_name(name: str) -> str:
    """`mul.Tensor` for `mul_.Tensor`; the name itself for others."""
    base, dot, overload = name.partition(".")
    if not base.endswith("_") or base.endswith("__"):
        return name
    return base[:-1] + dot + overload


def _tensors_of(result: Any) -> list[Tensor]:
    if isinstance(result, Tensor):
        return [result]
    return [t for t in result if isinstance(t, Tensor)]


def _same_array(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and bool(
        np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")
    )


# Functions that make a tensor from Python data or from shapes and dtypes only: what
# they make is a constant of the program (the factories, and the formulas' zeros).
_FACTORIES = frozenset(
    {
        "tensor",
        "as_tensor",
        "zeros",
        "ones",
        "full",
        "zeros_like",
        "ones_like",
        "full_like",
        "arange",
        "eye",
        "linspace",
        "logspace",
    }
)
_CONSTANT_MAKERS = frozenset(
    {
        ("gradgen.helpers._common", "zeros_like"),
        ("gradgen.helpers._common", "_zeros"),
        ("gradgen.helpers._common", "_full"),
        ("gradgen.composites._common", "_zeros"),
        ("gradgen.variable_type_utils", "zeros"),
    }
)


def _holds_tensor(data: Any) -> bool:
    if isinstance(data, Tensor):
        return True
    if isinstance(data, (list, tuple)):
        return any(_holds_tensor(item) for item in data)
    return False


# Per code object that calls Tensor(...) in a trace: True (it makes constants), False,
# or None for factories._finish, which does when its factory is one of _FACTORIES.
_MAKER_KIND: dict[Any, bool | None] = {}


def _is_constant_maker(frame: Any) -> bool:
    """Whether the frame that called Tensor(...) makes a constant."""
    code = frame.f_code
    if code in _MAKER_KIND:
        kind = _MAKER_KIND[code]
    else:
        where = (frame.f_globals.get("__name__"), code.co_name)
        kind = _MAKER_KIND[code] = (
            None
            if where == ("gradgen.factories", "_finish")
            else where in _CONSTANT_MAKERS
        )
    if kind is not None:
        return kind
    factory = frame.f_back
    return (
        factory is not None
        and factory.f_globals.get("__name__") == "gradgen.factories"
        and factory.f_code.co_name in _FACTORIES
        and not _holds_tensor(factory.f_locals.get("data"))
    )


def _constant_maker(
    recorder: Recorder, init: Callable[..., None]
) -> Callable[..., None]:
    def make(self: Tensor, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        if _is_constant_maker(sys._getframe(1)):
            data = self._data
            recorder.constants[id(data)] = (data, data.copy())

    return make


# Tensor methods that hand a tensor's value to Python: data-dependent control flow.
_VALUE_READERS = (
    "item",
    "tolist",
    "numpy",
    "__bool__",
    "__float__",
    "__int__",
    "__index__",
    "__complex__",
    "__array__",
    "__repr__",
    "__str__",
    "__format__",
)


def _value_reader(
    recorder: Recorder, name: str, method: Callable[..., Any]
) -> Callable[..., Any]:
    def reader(self: Tensor, *args: Any, **kwargs: Any) -> Any:
        if recorder.state.depth == 0:
            recorder.value_read(name)
            recorder.state.depth += 1  # what the method calls is not a new read
            try:
                return method(self, *args, **kwargs)
            finally:
                recorder.state.depth -= 1
        return method(self, *args, **kwargs)

    reader.__name__ = name
    return reader
