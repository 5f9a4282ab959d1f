"""gradgen.compile's front: guards, the cache of compiled signatures, the trace of
one signature, and graph breaks.

A call's guard key holds what the compiled code depends on: each input tensor's class,
shape, dtype and requires_grad, the other arguments' values, grad mode, the default
dtype, and the Python scalars the function can read without arguments (its closure
cells and globals, its modules' plain attributes and training flags). A key seen before
runs its program; a new one is traced and compiled (at most `RECOMPILE_LIMIT` per
function, as torch's cache_size_limit; past it, new signatures run eagerly). Tensors
the function reaches without arguments (closures, globals, module parameters and
buffers) are lifted to inputs read by reference at every call, and a call checks they
are still the same objects.

A read of a tensor's value in Python (`.item()`, `if t.sum() > 0:`, printing) splits
the signature into compiled pieces around the Python code that reads it (split.py);
any other graph break makes the signature run eagerly. Each break's reason and the
user's line are kept for `explain`; with fullgraph=True the first is an error naming
the line.
"""

from __future__ import annotations

import gc
import os
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import dispatch, dtypes, grad_mode
from ..graph import AccumulateGrad
from ..numpy_kernels._common import DEFAULT_GENERATOR
from ..nn.modules.hooks import any_global_hooks
from ..nn.modules.module import Module
from ..tensor import Tensor, make_edge
from .backward import trace_backward
from .chain import LARGE, ChainRecorder, build_chain
from .graph import Trace, build_program
from .passes import is_random
from .fast import MISS, make_fast_call
from .runtime import NEW, SAME, Entry, lifted_meta
from .split import Replay, SplitEntry, SplitRecorder, build_pieces
from .trace import GraphBreak, Recorder, TooLarge, Value

__all__ = [
    "BreakRecord",
    "CompiledFunction",
    "RECOMPILE_LIMIT",
    "Unsupported",
    "programs_of",
]

RECOMPILE_LIMIT = 8


class Unsupported(RuntimeError):
    """fullgraph=True and the function breaks the graph (torch._dynamo's Unsupported)."""


@dataclass
class BreakRecord:
    reason: str
    line: str


@dataclass
class _Eager:
    """A signature that runs eagerly (it broke the graph)."""

    record: BreakRecord


_SCALARS = (bool, int, float, str, type(None))


# -- what the function reaches without arguments -----------------------------------
@dataclass
class _Reach:
    tensors: dict[int, tuple[Any, Any, Tensor]] = field(default_factory=dict)
    scalars: list[tuple[Any, Any]] = field(default_factory=list)
    modules: list[Module] = field(default_factory=list)

    def add_module(self, module: Module) -> None:
        for sub in module.modules():
            if any(sub is m for m in self.modules):
                continue
            self.modules.append(sub)
            for owner in (sub._parameters, sub._buffers):
                for key, tensor in owner.items():
                    if isinstance(tensor, Tensor):
                        self.tensors.setdefault(id(tensor._data), (owner, key, tensor))
            for key, value in vars(sub).items():
                if type(value) in _SCALARS and not key.startswith("__"):
                    self.scalars.append((vars(sub), key))

    def add(self, owner: Any, key: Any, value: Any) -> None:
        if isinstance(value, Tensor):
            self.tensors.setdefault(id(value._data), (owner, key, value))
        elif isinstance(value, Module):
            self.add_module(value)
        elif type(value) in _SCALARS:
            self.scalars.append((owner, key))


def _names(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            names |= _names(constant)
    return names


def _reach(fn: Callable[..., Any]) -> _Reach:
    reach = _Reach()
    if isinstance(fn, Module):
        reach.add_module(fn)
        fn = fn.forward
    target = getattr(fn, "__func__", fn)
    owner = getattr(fn, "__self__", None)
    if isinstance(owner, Module):
        reach.add_module(owner)
    code = getattr(target, "__code__", None)
    if code is None:
        return reach
    for cell in getattr(target, "__closure__", None) or ():
        try:
            reach.add(cell, None, cell.cell_contents)
        except ValueError:  # an empty cell
            continue
    globals_ = getattr(target, "__globals__", {})
    for name in sorted(_names(code)):
        if name in globals_:
            reach.add(globals_, name, globals_[name])
    return reach


def _read(owner: Any, key: Any) -> Any:
    return owner.cell_contents if key is None else owner.get(key)


# -- arguments ------------------------------------------------------------------------
def _flatten(value: Any, tensors: list[Tensor]) -> Any:
    """The argument's structure for the guard key, its tensors appended to `tensors`;
    raises TypeError for what cannot be keyed."""
    if isinstance(value, Tensor):
        tensors.append(value)
        data = value._data
        return (type(value), data.shape, data.dtype, value.requires_grad)
    if isinstance(value, (list, tuple)):
        return (type(value), tuple(_flatten(v, tensors) for v in value))
    if isinstance(value, dict):
        return (dict, tuple((k, _flatten(v, tensors)) for k, v in value.items()))
    hash(value)
    return (type(value), value)


def _rebuild(value: Any, replacements: list[Tensor], position: list[int]) -> Any:
    """The argument with its tensors replaced, in order, by `replacements`."""
    if isinstance(value, Tensor):
        position[0] += 1
        return replacements[position[0] - 1]
    if isinstance(value, (list, tuple)):
        items = [_rebuild(v, replacements, position) for v in value]
        return items if isinstance(value, list) else type(value)(items)
    if isinstance(value, dict):
        return {k: _rebuild(v, replacements, position) for k, v in value.items()}
    return value


def _output_spec(value: Any, tensors: list[Tensor]) -> Any:
    if isinstance(value, Tensor):
        tensors.append(value)
        return ("tensor", len(tensors) - 1)
    if isinstance(value, (list, tuple)):
        return (type(value), [_output_spec(v, tensors) for v in value])
    if isinstance(value, dict):
        return (dict, [(k, _output_spec(v, tensors)) for k, v in value.items()])
    if type(value) in _SCALARS:
        return ("constant", value)
    raise GraphBreak(
        f"the function returns a {type(value).__name__}, which gradgen.compile does "
        "not rebuild",
        "",
    )


def _build_output(spec: Any, tensors: list[Tensor]) -> Any:
    kind, content = spec
    if kind == "tensor":
        return tensors[content]
    if kind == "constant":
        return content
    if kind is dict:
        return {k: _build_output(v, tensors) for k, v in content}
    items = [_build_output(v, tensors) for v in content]
    return items if kind is list else kind(items)


def _output_sources(outputs: list[Value], position: dict[int, int]) -> list[int]:
    """Per output: its input's position, NEW, or SAME - j for a repeat of output j."""
    first: dict[int, int] = {}
    sources = []
    for index, value in enumerate(outputs):
        if id(value) in position:
            sources.append(position[id(value)])
        elif id(value) in first:
            sources.append(SAME - first[id(value)])
        else:
            first[id(value)] = index
            sources.append(NEW)
    return sources


# -- one trace --------------------------------------------------------------------------
class _Tracer:
    """Trace one call and make its Entry (or raise GraphBreak)."""

    def __init__(
        self,
        fn: Callable[..., Any],
        reach: _Reach,
        split: bool,
        fuse: bool,
        large: bool = False,
    ) -> None:
        self.fn = fn
        self.fuse = fuse
        self.reach = reach
        self.lifted: list[tuple[Any, Any, Tensor]] = []
        self.lifted_grads: list[Any] = []
        self.lifted_values: list[Value] = []
        # (array, its value, its version counter, its version) before the trace
        self.buffers: list[tuple[np.ndarray, np.ndarray, Any, int]] = []
        self.recorder = SplitRecorder(self._lift) if split else Recorder(self._lift)
        self.recorder.limit = LARGE if large else 0

    def _lift(self, tensor: Tensor) -> Value | None:
        found = self.reach.tensors.get(id(tensor._data))
        if found is None:
            return None
        owner, key, original = found
        if original.grad_fn is not None and original.requires_grad:
            raise self.recorder.stop(
                "the function reads a tensor with a grad_fn from outside its "
                "arguments; pass it as an argument"
            )
        self.lifted.append(found)
        self.lifted_grads.append(original._grad)
        value = self.recorder.new_value(original, "lifted")
        self.recorder.values[id(tensor._data)] = value
        self.lifted_values.append(value)
        if not original.requires_grad:  # a buffer: kernels may write into it
            counter = original._counter()
            self.buffers.append(
                (original._data, original._data.copy(), counter, counter.version)
            )
        return value

    def _check_module_hooks(self) -> None:
        hooked = [
            type(m).__name__
            for m in self.reach.modules
            if m._forward_pre_hooks
            or m._forward_hooks
            or m._backward_hooks
            or m._backward_pre_hooks
        ]
        if hooked or any_global_hooks():
            raise GraphBreak(
                "a module hook is registered ("
                + (", ".join(hooked) or "global")
                + "): hooks are Python code the compiled program would skip",
                "",
            )

    def trace(
        self, args: tuple[Any, ...], kwargs: dict[str, Any], state: Any
    ) -> Entry | SplitEntry:
        """Trace one call; `state` is the default generator's state before it."""
        self._check_module_hooks()
        flat: list[Tensor] = []
        structure = _flatten((args, kwargs), flat)
        del structure
        recorder = self.recorder
        copies = [Tensor(t._data, requires_grad=t.requires_grad) for t in flat]
        inputs = [recorder.new_value(c, "input") for c in copies]
        call_args, call_kwargs = _rebuild((args, kwargs), copies, [0])
        with recorder.active():
            result = self.fn(*call_args, **call_kwargs)
        if recorder.state.broken is not None:
            raise recorder.state.broken
        _check_generators(recorder.ops)
        if isinstance(recorder, SplitRecorder) and recorder.breaks:
            self._check_effects(copies)
            return build_pieces(
                recorder,
                inputs,
                list(self.lifted),
                list(self.lifted_values),
                state,
                self.fuse,
            )
        out_tensors: list[Tensor] = []
        spec = _output_spec(result, out_tensors)
        with recorder.active():
            outputs = [recorder.value_of(t) for t in out_tensors]
        self._check_effects(copies)
        all_inputs = inputs + self.lifted_values
        originals = copies + [t for _, _, t in self.lifted]
        self._check_aliasing(outputs, all_inputs)
        trace = Trace(all_inputs, recorder.ops, outputs)
        trace.writes = self._writes()
        recorder.ops = []
        differentiable = self._backward(trace, out_tensors, originals)
        DEFAULT_GENERATOR[0]._generator.bit_generator.state = state  # for the check
        self.restore_buffers()
        program = build_program(trace, self.fuse)
        position = {id(v): i for i, v in enumerate(all_inputs)}
        return Entry(
            program,
            list(self.lifted),
            spec,
            _output_sources(program.outputs, position),
            differentiable,
            [i for i, t in enumerate(originals) if t.requires_grad],
            self._saved_sources(program, all_inputs, position),
            lifted_meta([t for _, _, t in self.lifted]),
        )

    def trace_chain(
        self, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Entry | None:
        """Trace one call without autograd nodes (a large graph, see chain.py); its
        Entry when it is a chain, else None."""
        self._check_module_hooks()
        recorder = ChainRecorder(self._lift)
        self.recorder = recorder
        flat: list[Tensor] = []
        _flatten((args, kwargs), flat)
        copies = [Tensor(t._data, requires_grad=t.requires_grad) for t in flat]
        inputs = [recorder.new_value(c, "input") for c in copies]
        call_args, call_kwargs = _rebuild((args, kwargs), copies, [0])
        enabled = grad_mode.is_grad_enabled()
        out_tensors: list[Tensor] = []
        with recorder.active():
            spec = _output_spec(self.fn(*call_args, **call_kwargs), out_tensors)
            outputs = [recorder.value_of(t) for t in out_tensors]
        if recorder.state.broken is not None or self._writes():
            return None
        self._check_effects(copies)
        all_inputs = inputs + self.lifted_values
        originals = copies + [t for _, _, t in self.lifted]
        self._check_aliasing(outputs, all_inputs)
        self.restore_buffers()
        try:
            program = build_chain(
                recorder,
                all_inputs,
                outputs,
                [enabled and t.requires_grad for t in originals],
            )
        except Exception:  # a kernel or formula the loops cannot run: the usual way
            program = None
        if program is None:
            return None
        position = {id(v): i for i, v in enumerate(all_inputs)}
        return Entry(
            program,
            list(self.lifted),
            spec,
            _output_sources(program.outputs, position),
            [program.backward is not None],
            [i for i, t in enumerate(originals) if t.requires_grad],
            self._saved_sources(program, all_inputs, position),
            lifted_meta([t for _, _, t in self.lifted]),
        )

    def _writes(self) -> list[tuple[Value, Value, Any]]:
        """The lifted buffers the function changed in place, with their last values."""
        writes = []
        for value, (_, _, tensor) in zip(self.lifted_values, self.lifted):
            last = self.recorder.values.get(id(tensor._data))
            if last is not None and last is not value:
                if last.array is tensor._data:  # eager's result, before the restore
                    last.array = last.array.copy()
                writes.append((value, last, tensor._counter()))
        return writes

    def restore_buffers(self) -> None:
        """Put back the lifted buffers' values from before the trace (its eager run,
        and the check against eager, may have moved BatchNorm's running statistics)."""
        for array, value, counter, version in self.buffers:
            np.copyto(array, value)
            counter.version = version
        if isinstance(self.recorder, (SplitRecorder, ChainRecorder)):
            for generator, state in self.recorder.generators.values():
                generator.bit_generator.state = state

    @staticmethod
    def _saved_sources(
        program: Any, inputs: list[Value], position: dict[int, int]
    ) -> list[int]:
        """Per saved value, whose version counter guards it: an input (or an input it
        is a view of), an output (numbered after the inputs), or none (-1)."""
        outputs = {id(v): i for i, v in enumerate(program.outputs)}
        sources = []
        for value in program.saved:
            if id(value) in position:
                sources.append(position[id(value)])
            elif id(value) in outputs:
                sources.append(len(position) + outputs[id(value)])
            else:
                sources.append(
                    next(
                        (
                            i
                            for i, v in enumerate(inputs)
                            if np.shares_memory(value.array, v.array)
                        ),
                        -1,
                    )
                )
        return sources

    def _check_effects(self, copies: list[Tensor]) -> None:
        changed = any(c._grad is not None for c in copies) or any(
            t._grad is not g for (_, _, t), g in zip(self.lifted, self.lifted_grads)
        )
        if changed:
            raise GraphBreak(
                "the function runs a backward pass (a .grad changed); compile the "
                "forward and call backward outside it",
                "",
            )

    @staticmethod
    def _check_aliasing(outputs: list[Value], inputs: list[Value]) -> None:
        for value in outputs:
            if value.kind in ("input", "lifted"):
                continue
            if any(np.shares_memory(value.array, i.array) for i in inputs):
                raise GraphBreak(
                    "an output is a view of an input (the compiled code would lose "
                    "their shared version counter)",
                    "",
                )

    def _backward(
        self, trace: Trace, out_tensors: list[Tensor], originals: list[Tensor]
    ) -> list[bool]:
        """Trace the backward of the differentiable outputs; per output, whether it
        gets the compiled node's history."""
        recorder = self.recorder
        differentiable = []
        seen: set[int] = set()
        roots, grads = [], []
        for tensor, value in zip(out_tensors, trace.outputs):
            wanted = (
                grad_mode.is_grad_enabled()
                and tensor.requires_grad
                and value.kind not in ("input", "lifted")
                and id(value) not in seen
            )
            differentiable.append(wanted)
            if wanted:
                seen.add(id(value))
                roots.append(make_edge(tensor))
                grad = Tensor(np.ones_like(tensor._data))
                grads.append(grad)
                trace.grad_inputs.append(recorder.new_value(grad, "grad"))
        if not roots:
            return differentiable
        recorder.phase = "backward"
        with recorder.active():
            leaves = trace_backward(recorder, roots, grads)
            for tensor in originals:
                if not tensor.requires_grad:
                    continue
                accumulator = tensor._get_grad_accumulator()
                assert isinstance(accumulator, AccumulateGrad)
                leaf_grad = leaves.get(accumulator)
                trace.grad_outputs.append(
                    None if leaf_grad is None else recorder.value_of(leaf_grad)
                )
        if recorder.state.broken is not None:
            raise recorder.state.broken
        trace.backward_ops = recorder.ops
        return differentiable


# -- the compiled function ----------------------------------------------------------------
class CompiledFunction:
    """What gradgen.compile returns: call it like the function (or module)."""

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        fullgraph: bool,
        dynamic: bool | None,
        debug: bool,
        fuse: bool = False,
    ) -> None:
        self._orig_mod = fn
        self.fuse = fuse
        self.fullgraph = fullgraph
        self.dynamic = dynamic
        self.debug = debug or os.environ.get("GRADGEN_COMPILE_DEBUG", "") == "1"
        self.cache: dict[Any, Entry | SplitEntry | _Eager] = {}
        self.breaks: list[BreakRecord] = []
        self.compiles = 0
        self._reach = _reach(fn)
        self._fast: Callable[[tuple[Any, ...]], Any] | None = None  # see fast.py

    def __getattr__(self, name: str) -> Any:
        if name == "_orig_mod":
            raise AttributeError(name)
        return getattr(self._orig_mod, name)

    def _key(
        self, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> tuple[Any, list[Tensor]]:
        tensors: list[Tensor] = []
        if not kwargs and all(isinstance(a, Tensor) for a in args):
            # The usual call, tensors only: the structure _flatten would give.
            tensors = list(args)
            structure: Any = (
                "tensors",
                tuple(
                    (type(t), t._data.shape, t._data.dtype, t.requires_grad)
                    for t in tensors
                ),
            )
        else:
            structure = _flatten((args, kwargs), tensors)
        scalars = tuple(_read(owner, key) for owner, key in self._reach.scalars)
        state = (grad_mode.is_grad_enabled(), dtypes.get_default_dtype())
        return (structure, scalars, state), tensors

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        fast = self._fast
        if fast is not None and not kwargs:
            result = fast(args)
            if result is not MISS:
                return result
        if dispatch._detour is not None or dispatch.forward_ad_levels.count:
            return self._orig_mod(*args, **kwargs)  # profiler, vmap, forward AD
        try:
            key, tensors = self._key(args, kwargs)
        except TypeError:
            return self._orig_mod(*args, **kwargs)  # an argument that cannot be keyed
        entry = self.cache.get(key)
        if isinstance(entry, Entry):
            lifted = entry.lifted_tensors()
            if lifted is not None:
                results = entry.run(tensors + lifted)
                self._remember(entry, key, tensors + lifted)
                return _build_output(entry.output_spec, results)
            del self.cache[key]
            entry = None
        elif isinstance(entry, SplitEntry):
            lifted = _split_lifted(entry)
            if lifted is not None:
                return Replay(entry, tensors + lifted).run(self._orig_mod, args, kwargs)
            del self.cache[key]
            entry = None
        if entry is None:
            entry = self._compile(key, args, kwargs)
            if isinstance(entry, Entry):
                lifted = [t for _, _, t in entry.lifted]
                results = entry.run(tensors + lifted)
                self._remember(entry, key, tensors + lifted)
                return _build_output(entry.output_spec, results)
            if isinstance(entry, SplitEntry):
                lifted = [t for _, _, t in entry.lifted]
                return Replay(entry, tensors + lifted).run(self._orig_mod, args, kwargs)
        return self._orig_mod(*args, **kwargs)

    def _remember(self, entry: Entry, key: Any, tensors: list[Tensor]) -> None:
        """Make `entry` the one the next call tries first (tensor arguments only)."""
        (kind, metas), scalars, state = key
        if kind != "tensors":
            return
        if entry.fast_call is None:
            entry.fast_call = make_fast_call(
                entry,
                list(metas),
                self._reach.scalars,
                scalars,
                state,
                _build_output,
                [t._data for t in tensors],
            )
        self._fast = entry.fast_call

    def _trace(
        self, args: tuple[Any, ...], kwargs: dict[str, Any], state: Any
    ) -> Entry | SplitEntry:
        """Trace one signature. Past LARGE forward operators the trace restarts
        without autograd nodes and, when the function is a chain, rolls it into loops
        (chain.py); else it runs a third time, the usual way, without the limit."""
        stream = DEFAULT_GENERATOR[0]._generator.bit_generator

        def tracer(large: bool = False) -> _Tracer:
            return _Tracer(
                self._orig_mod,
                self._reach,
                split=not self.fullgraph,
                fuse=self.fuse,
                large=large,
            )

        def restore(used: _Tracer) -> None:
            stream.state = state
            used.restore_buffers()

        limited = tracer(large=True)
        try:
            return limited.trace(args, kwargs, state)
        except TooLarge:
            pass
        finally:
            restore(limited)
        chain = tracer()
        try:
            entry = chain.trace_chain(args, kwargs)
        except GraphBreak:
            entry = None
        finally:
            restore(chain)
        if entry is not None:
            return entry
        full = tracer()
        try:
            return full.trace(args, kwargs, state)
        finally:
            restore(full)

    def _compile(
        self, key: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
    ) -> Entry | SplitEntry | _Eager:
        if self.compiles >= RECOMPILE_LIMIT:
            return _Eager(BreakRecord("the recompile limit was reached", ""))
        self.compiles += 1
        reach = _reach(self._orig_mod)  # parameters may have been added since
        self._reach.tensors, self._reach.modules = reach.tensors, reach.modules
        # The trace and the check against eager draw from the default generator; the
        # call that follows must draw what eager would: its state is put back.
        stream = DEFAULT_GENERATOR[0]._generator.bit_generator
        state = stream.state
        # A trace makes an object or more per operator, all alive until it ends:
        # the cyclic collector would walk them again and again (it takes most of a
        # large trace's time otherwise), and there is no garbage cycle to find.
        collecting = gc.isenabled()
        gc.disable()
        try:
            entry: Entry | SplitEntry | _Eager = self._trace(args, kwargs, state)
        except GraphBreak as error:
            record = BreakRecord(error.reason, error.line)
            if self.fullgraph:
                raise Unsupported(
                    f"gradgen.compile(fullgraph=True): graph break: {error.reason}"
                    + (f" at {error.line}" if error.line else "")
                ) from None
            self.breaks.append(record)
            entry = _Eager(record)
        finally:
            if collecting:
                gc.enable()
        self.cache[key] = entry
        if isinstance(entry, SplitEntry):
            self.breaks += [BreakRecord(e.reason, e.line) for e in entry.breaks]
        if self.debug:
            for program in programs_of(entry):
                print(program.source, file=sys.stderr)
        return entry


def _check_generators(ops: list[Any]) -> None:
    """Random operators draw from the default generator, whose state the compile
    puts back after the trace; one given its own generator breaks the graph."""
    for op in ops:
        if not is_random(op) or "generator" not in op.source.arguments:
            continue
        if op.args[op.source.arguments.index("generator")] is not None:
            raise GraphBreak(
                f"the random operator {op.name!r} draws from a generator of its own "
                "(gradgen.compile replays the default generator's draws only)",
                op.line,
            )


def programs_of(entry: Entry | SplitEntry | _Eager) -> list[Any]:
    """The compiled programs of one signature (one per piece of a split one)."""
    if isinstance(entry, Entry):
        return [entry.program]
    if isinstance(entry, SplitEntry):
        return [p.entry.program for p in entry.pieces if p.entry is not None]
    return []


def _split_lifted(entry: SplitEntry) -> list[Tensor] | None:
    """The lifted tensors of a split signature, or None when one was replaced."""
    tensors = []
    for (owner, key, tensor), meta in zip(entry.lifted, entry.lifted_meta):
        current = _read(owner, key)
        if current is not tensor or lifted_meta([tensor])[0] != meta:
            return None
        tensors.append(tensor)
    return tensors
