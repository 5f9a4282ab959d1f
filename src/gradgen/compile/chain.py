"""Large graphs: a chain of operators, traced without autograd nodes and rolled into
loops.

A trace that passes `LARGE` forward operators stops (trace.TooLarge) and compiler.py
traces the function again with the `ChainRecorder`: the operators run their kernels
below the Autograd key, no backward node is made (grad mode and requires_grad stay as
eager's). When what it recorded is a chain (each operator's one graph-value argument
is the previous operator's result, its other arguments constants, one output),
consecutive operators of the same signature (the same operator on the same
constants, dtypes and shapes) are a *run*, and each run becomes a `for` loop in the
forward, and in reverse in the backward (so does a body of up to MAX_PERIOD operators
that repeat in turn):

    for _ in range(100000):
        v1 = v1 * k0

The backward of a run is traced once, AOTAutograd style as backward.py does: the
run's first operator runs eagerly on a leaf, and its node's formulas (and the
engine's validation) are recorded under a Recorder; that template is the loop's body
(the gradient of a chain is the same formulas, node after node, in reverse). What a
template reads of the forward (the operator's input or result) the forward loop
appends to a list, read back in reverse.

Checked against eager: every iteration of every forward loop to the last bit (the
trace's values, compared stacked), and each backward template on its eager values,
with its inputs as arrays and, for 0-d ones, as numpy scalars (what the loop hands
on). Anything else (not a chain, a break, a random operator, a write into a buffer,
an operator with no node) returns None: the compiler traces the usual way.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import grad_mode
from ..dispatch import AFTER_AUTOGRAD_KEYSET, OperatorHandle, redispatch
from ..grad_mode import enable_grad
from ..tensor import Tensor, make_edge
from .backward import trace_backward
from .emit import Renderer
from .graph import Program, _Checker, _function, _namespace
from .passes import is_random
from .trace import Op, Recorder, Value

__all__ = ["ChainRecorder", "LARGE", "build_chain"]

# Forward operators past which a trace restarts kernel-only (and may roll).
LARGE = 2048


@dataclass(eq=False)
class _Last:
    """The operator the last call recorded, when a repeat of it may follow: its
    handle, its kernel below Autograd, where the chained tensor goes, the constants
    a repeat must pass again (position, value: the bytes of a wrapped number), the
    last result, the value standing for it (after a repeat), the repeats' results,
    and whether its results require grad."""

    handle: OperatorHandle
    kernel: Any
    count: int  # of arguments
    position: int
    constants: list[tuple[int, Any]]
    result: np.ndarray
    tail: Value | None
    results: list[np.ndarray]
    requires_grad: bool


@dataclass(eq=False)
class ChainRecorder(Recorder):
    """A Recorder that keeps each recorded operator's handle (for its template) and
    records a repeat of the last operator (the same operator, on its result, with
    equal constants) as one more iteration of it: per recorded operator, `results`
    holds the repeats' results, `tails` the value of the last one. Kernels run
    below Autograd: no node is made."""

    handles: list[OperatorHandle] = field(default_factory=list)
    results: list[list[np.ndarray]] = field(default_factory=list)
    tails: dict[int, Value] = field(default_factory=dict)
    last: _Last | None = None
    # The generators given to random operators: their states before the trace (the
    # compiler puts them back; a random operator is no chain, it traces again).
    generators: dict[int, tuple[np.random.Generator, Any]] = field(default_factory=dict)

    def __call__(self, handle: OperatorHandle, args: tuple[Any, ...]) -> Any:
        if self.state.depth:
            return super().__call__(handle, args)
        last = self.last
        if last is not None and handle is last.handle and _repeats(args, last):
            return self._repeat(args, last)
        for argument in args:
            inner = getattr(argument, "_generator", None)
            if isinstance(inner, np.random.Generator):
                self.generators.setdefault(
                    id(inner), (inner, inner.bit_generator.state)
                )
        count = len(self.ops)
        result = super().__call__(handle, args)
        self.last = None
        if len(self.ops) > count:
            self.handles.append(handle)
            self.results.append([])
            self._expect_repeat(handle, args, result)
        return result

    def _expect_repeat(
        self, handle: OperatorHandle, args: tuple[Any, ...], result: Any
    ) -> None:
        op = self.ops[-1]
        position = _chained_position(op)
        if position is None or op.name != handle.name or len(args) <= position:
            return
        chained, output = op.args[position].array, op.outputs[0].array
        if not isinstance(result, Tensor) or (chained.dtype, chained.shape) != (
            output.dtype,
            output.shape,
        ):
            return  # a repeat would be another signature
        constants = []
        for index, argument in enumerate(args):
            if index == position:
                continue
            if isinstance(argument, Tensor):
                if not argument._is_wrapped_number:
                    return
                data = argument._data
                constants.append((index, (data.dtype.str, data.tobytes())))
            else:
                constants.append((index, argument))
        self.last = _Last(
            handle,
            handle._table[AFTER_AUTOGRAD_KEYSET]
            or handle.kernel_for(AFTER_AUTOGRAD_KEYSET),
            len(args),
            position,
            constants,
            output,
            None,
            self.results[-1],
            result._requires_grad,
        )

    def run(self, handle: OperatorHandle, args: tuple[Any, ...]) -> Any:
        """The kernel, below Autograd: no node. A result of a floating dtype requires
        grad when an argument does (and grad mode is on), as eager's would."""
        result = redispatch(handle, AFTER_AUTOGRAD_KEYSET, *args)
        if (
            isinstance(result, Tensor)
            and grad_mode._state.enabled
            and result._data.dtype.kind in "fc"
            and any(_requires_grad(a) for a in args)
        ):
            result._requires_grad = True
        return result

    def _repeat(self, args: tuple[Any, ...], last: _Last) -> Any:
        state = self.state
        state.depth += 1
        try:
            result = last.kernel(AFTER_AUTOGRAD_KEYSET, *args)
        finally:
            state.depth -= 1
        array = result._data
        if last.requires_grad:
            result._requires_grad = True
        tail = last.tail
        if tail is None:
            tail = last.tail = self.tails[len(self.ops) - 1] = Value(
                len(self.arrays), array, "op"
            )
            self.arrays.append(array)
        else:  # only the last result is a value: an earlier one used again breaks
            del self.values[id(tail.array)]
            tail.array = array
        self.values[id(array)] = tail
        last.results.append(array)
        last.result = array
        return result


def _requires_grad(argument: Any) -> bool:
    if isinstance(argument, Tensor):
        return argument.requires_grad
    if isinstance(argument, (list, tuple)):
        return any(_requires_grad(a) for a in argument)
    return False


def _repeats(args: tuple[Any, ...], last: _Last) -> bool:
    """Whether the call repeats the last operator on its result, with equal constants
    (wrapped numbers by their bytes, Python constants by type and repr)."""
    if len(args) != last.count:
        return False
    chained = args[last.position]
    if chained.__class__ is not Tensor or chained._data is not last.result:
        return False
    for index, constant in last.constants:
        argument = args[index]
        if argument is constant:
            continue
        if isinstance(argument, Tensor):
            data = argument._data
            if not (
                argument._is_wrapped_number
                and (data.dtype.str, data.tobytes()) == constant
            ):
                return False
        elif not (
            type(argument) is type(constant)
            and type(argument) in (int, float, bool, str)
            and repr(argument) == repr(constant)
        ):
            return False
    return True


def _holds_value(argument: Any) -> bool:
    if isinstance(argument, Value):
        return True
    if isinstance(argument, (list, tuple)):
        return any(_holds_value(a) for a in argument)
    return False


def _chained_position(op: Op) -> int | None:
    """The position of the operator's one graph-value argument (constant values
    aside), or None."""
    position = None
    for index, argument in enumerate(op.args):
        if isinstance(argument, Value):
            if argument.kind == "const":
                continue
            if position is not None:
                return None
            position = index
        elif _holds_value(argument):
            return None
    return position


def _constant_key(argument: Any) -> Any:
    if isinstance(argument, Value):
        return ("value", id(argument))
    if type(argument) is np.ndarray:  # a wrapped Python number
        return ("array", argument.dtype.str, argument.shape, argument.tobytes())
    if isinstance(argument, (list, tuple)):
        return (type(argument).__name__, tuple(_constant_key(a) for a in argument))
    return (type(argument).__name__, repr(argument))


def _signature(op: Op, position: int) -> Any:
    chained, result = op.args[position].array, op.outputs[0].array
    constants = tuple(
        _constant_key(a) for index, a in enumerate(op.args) if index != position
    )
    return (
        op.name,
        position,
        constants,
        chained.dtype.str,
        chained.shape,
        result.dtype.str,
        result.shape,
    )


@dataclass(eq=False)
class _Backward:
    """A run's backward template: its formulas' operators over the gradient arriving
    (`grad`), the operator's input and result; `result` is the gradient it hands on."""

    ops: list[Op]
    grad: Value
    saved_input: Value
    saved_result: Value
    result: Value
    reads_input: bool = False
    reads_result: bool = False


@dataclass(eq=False)
class _Step:
    """One operator of a loop's body: the first of its iterations, its handle, where
    its graph value goes, the trace's result at each iteration, and its templates."""

    op: Op
    handle: OperatorHandle
    position: int
    values: list[np.ndarray]
    template: Op | None = None
    backward: _Backward | None = None


@dataclass(eq=False)
class _Run:
    """A loop: its body (one operator, or a few that repeat in turn) and how many
    times it runs."""

    steps: list[_Step]
    count: int


# The longest body of operators repeating in turn that becomes one loop.
MAX_PERIOD = 8


def _steps(recorder: ChainRecorder, start: Value) -> list[tuple[Any, _Step]]:
    """Per operator (repeats of one signature merged): its signature and step; []
    when the operators are not a chain."""
    steps: list[tuple[Any, _Step]] = []
    previous = start
    for index, (op, handle) in enumerate(zip(recorder.ops, recorder.handles)):
        position = _chained_position(op)
        if (
            position is None
            or op.args[position] is not previous
            or len(op.outputs) != 1
            or op.source.returns != ("Tensor",)
            or handle.name != op.name  # an in-place operator, recorded functionally
            or is_random(op)
        ):
            return []
        signature = _signature(op, position)
        values = [op.outputs[0].array] + recorder.results[index]
        if steps and steps[-1][0] == signature:
            steps[-1][1].values.extend(values)
        else:
            steps.append((signature, _Step(op, handle, position, values)))
        previous = recorder.tails.get(index, op.outputs[0])
    return steps


def _period(steps: list[tuple[Any, _Step]], start: int) -> tuple[int, int]:
    """The shortest body of single operators from `start` that repeats in turn (at
    least twice): its length and count; (1, 1) when there is none."""
    for period in range(2, MAX_PERIOD + 1):
        body = steps[start : start + period]
        if len(body) < period or any(len(step.values) > 1 for _, step in body):
            break
        signatures = [signature for signature, _ in body]
        count = 1
        while True:
            following = steps[start + count * period : start + (count + 1) * period]
            if [signature for signature, _ in following] != signatures or any(
                len(step.values) > 1 for _, step in following
            ):
                break
            count += 1
        if count >= 2:
            return period, count
    return 1, 1


def _runs(recorder: ChainRecorder, start: Value) -> list[_Run]:
    """The chain's loops, or [] when the operators are not a chain."""
    steps = _steps(recorder, start)
    runs: list[_Run] = []
    index = 0
    while index < len(steps):
        step = steps[index][1]
        period, count = (1, 1) if len(step.values) > 1 else _period(steps, index)
        if period == 1:
            runs.append(_Run([step], len(step.values)))
            index += 1
            continue
        body = [s for _, s in steps[index : index + period]]
        for offset, first in enumerate(body):
            first.values = [
                steps[index + k * period + offset][1].values[0] for k in range(count)
            ]
        runs.append(_Run(body, count))
        index += period * count
    return runs


class _Numbering:
    """Fresh value indices for the program (after its inputs)."""

    def __init__(self, first: int) -> None:
        self.next = first

    def __call__(self) -> int:
        self.next += 1
        return self.next - 1


def _no_lift(tensor: Tensor) -> Value | None:
    del tensor
    return None


def _backward_template(
    step: _Step, numbering: _Numbering, grad: int
) -> _Backward | None:
    """Run the step's first operator eagerly on a leaf and record its backward."""
    op = step.op
    leaf = Tensor(op.args[step.position].array, requires_grad=True)
    call = list(op.raw_args)
    call[step.position] = leaf
    with enable_grad():
        result = step.handle.call_unobserved(*call)
    if not isinstance(result, Tensor) or result.grad_fn is None:
        return None
    recorder = Recorder(_no_lift, phase="backward")
    saved_input = recorder.new_value(leaf, "input")
    saved_result = recorder.new_value(result, "op")
    seed = Tensor(np.ones_like(result._data))
    incoming = recorder.new_value(seed, "grad")
    with recorder.active():
        leaves = trace_backward(recorder, [make_edge(result)], [seed])
        accumulator = leaf._get_grad_accumulator()
        found = leaves.get(accumulator) if accumulator is not None else None
        handed = None if found is None else recorder.value_of(found)
    if recorder.state.broken is not None or handed is None:
        return None
    # Number its values after the program's: the gradient carried through the
    # loop is one name, `grad`.
    incoming.index = grad
    for value in [saved_input, saved_result] + [
        v for o in recorder.ops for v in o.outputs
    ]:
        value.index = numbering()
    constants = {id(v): v for o in recorder.ops for v in o.args if isinstance(v, Value)}
    for value in constants.values():
        if value.kind == "const":
            value.index = numbering()
    read = {id(v) for o in recorder.ops for v in o.args if isinstance(v, Value)}
    read.add(id(handed))
    return _Backward(
        recorder.ops,
        incoming,
        saved_input,
        saved_result,
        handed,
        id(saved_input) in read,
        id(saved_result) in read,
    )


def _check_template(template: _Backward, renderer: Renderer) -> dict[int, Any] | None:
    """Run the template's rendered code on its eager values (0-d inputs also as numpy
    scalars); its fixes, or None when it differs from eager or fails."""
    ops = template.ops
    checker = _Checker({v.index: v for op in ops for v in op.outputs})
    parameters = [template.grad, template.saved_input, template.saved_result]
    source = "\n".join(
        _function("template", parameters, ops, template.result.name, renderer, None)
    )
    namespace = _namespace(renderer, {"_check": checker})
    arrays = [v.array for v in parameters]
    try:
        exec(compile(source, "<gradgen.compile check>", "exec"), namespace)
        for form in (arrays, [a[()] if a.ndim == 0 else a for a in arrays]):
            value = namespace["template"](*form)
            if not np.array_equal(np.asarray(value), template.result.array):
                return None
    except Exception:
        return None
    return None if checker.differs is not None else checker.fixes


class _RunCheck:
    """The checked forward loop's `_check`: normalises each iteration's value as
    graph._Checker does (decided on the first), and keeps them for the comparison."""

    def __init__(self, expected: list[np.ndarray]) -> None:
        self.expected = expected
        self.seen: list[Any] = []
        self.fix: Any = None  # None: not decided yet

    def __call__(self, value: Any) -> Any:
        fix = self.fix
        if fix is None:
            fix = self.fix = _fix_for(value, self.expected[0].dtype)
        if fix != "keep":
            value = np.asarray(value)
            if fix != "asarray":
                value = value.astype(fix)
        self.seen.append(value)
        return value

    def same(self) -> bool:
        seen, expected = self.seen, self.expected
        want = expected[0].dtype
        if len(seen) != len(expected) or {v.dtype for v in seen} != {want}:
            return False
        try:
            got, wanted = np.array(seen), np.array(expected)
        except ValueError:
            return False
        return got.shape == wanted.shape and bool(
            np.array_equal(got, wanted, equal_nan=want.kind in "fc")
        )


def _fix_for(value: Any, want: np.dtype) -> Any:
    """What graph._Checker's normalisation does to a value of a run: "keep" (an
    ndarray, or a numpy scalar, of the dtype eager gave), "asarray", or a dtype."""
    if (type(value) is np.ndarray or isinstance(value, np.generic)) and (
        value.dtype == want
    ):
        return "keep"
    if type(value) is not np.ndarray and np.asarray(value).dtype == want:
        return "asarray"
    return want


@dataclass
class _Source:
    """The chain program's names: its inputs, the carried value and gradient."""

    inputs: list[Value]
    start: Value
    carry: int
    grad: int
    grads: list[bool]  # per input that needs a gradient: whether it is `start`


def _saved_lists(run: _Run, index: int) -> list[list[str]]:
    """Per step of the run, the lists its backward reads: `inputs{index}` and
    `results{index}` (with `_{step}` in a body of more than one)."""
    names = []
    for position, step in enumerate(run.steps):
        suffix = f"{index}" if len(run.steps) == 1 else f"{index}_{position}"
        backward = step.backward
        names.append(
            []
            if backward is None
            else [
                name
                for name, reads in (
                    (f"inputs{suffix}", backward.reads_input),
                    (f"results{suffix}", backward.reads_result),
                )
                if reads
            ]
        )
    return names


def _forward_lines(
    runs: list[_Run],
    names: _Source,
    renderer: Renderer,
    fixes: list[list[Any]] | None,
) -> list[str]:
    """The forward function; `fixes` (per run, per step) None: the checked variant
    (`_check{run}_{step}`)."""
    carry = f"v{names.carry}"
    lines = [f"def forward({', '.join(v.name for v in names.inputs)}):"]
    lines.append(f"    {carry} = {names.start.name}")
    saved: list[str] = []
    for index, run in enumerate(runs):
        lists = _saved_lists(run, index)
        for step_lists in lists:
            saved += step_lists
            lines += [f"    {name} = []" for name in step_lists]
        lines.append(f"    for _ in range({run.count}):")
        for position, step in enumerate(run.steps):
            template = step.template
            assert template is not None
            kept = lists[position]
            lines += [f"        {n}.append({carry})" for n in kept if n[0] == "i"]
            if fixes is None:
                expression = renderer.expression(template)
                lines.append(
                    f"        {carry} = _check{index}_{position}({expression})"
                )
            else:
                fix = fixes[index][position]
                fix = {"keep": {}, "asarray": {names.carry: None}}.get(
                    fix, {names.carry: fix}
                )
                lines += ["        " + line for line in renderer.lines(template, fix)]
            lines += [f"        {n}.append({carry})" for n in kept if n[0] == "r"]
    returns = "".join(name + ", " for name in saved)
    lines.append(f"    return ({carry}, ), ({returns})")
    return lines


def _backward_body(
    run: _Run, grad: str, renderer: Renderer, fixes: dict[int, Any]
) -> tuple[list[str], list[str]]:
    """The body of a run's backward loop (its steps in reverse) and the names its
    loop reads from the lists."""
    body: list[str] = []
    targets: list[str] = []
    for step in run.steps:
        backward = step.backward
        assert backward is not None
        targets += [backward.saved_input.name] if backward.reads_input else []
        targets += [backward.saved_result.name] if backward.reads_result else []
    for step in reversed(run.steps):
        backward = step.backward
        assert backward is not None
        for op in backward.ops:
            body += ["        " + line for line in renderer.lines(op, fixes)]
        if backward.result is not backward.grad:
            body.append(f"        {grad} = {backward.result.name}")
    return body, targets


def _backward_lines(
    runs: list[_Run], names: _Source, renderer: Renderer, fixes: dict[int, Any]
) -> list[str]:
    grad = f"v{names.grad}"
    saved = [
        name
        for index, run in enumerate(runs)
        for step_lists in _saved_lists(run, index)
        for name in step_lists
    ]
    lines = [f"def backward({', '.join([grad] + saved)}):"]
    for index in reversed(range(len(runs))):
        run = runs[index]
        body, targets = _backward_body(run, grad, renderer, fixes)
        if not body:
            continue  # the gradient passes through (`y + c`)
        lists = [name for step_lists in _saved_lists(run, index) for name in step_lists]
        if not lists:
            lines.append(f"    for _ in range({run.count}):")
        elif len(lists) == 1:
            lines.append(f"    for {targets[0]} in reversed({lists[0]}):")
        else:
            reversed_lists = ", ".join(f"reversed({name})" for name in lists)
            lines.append(f"    for {', '.join(targets)} in zip({reversed_lists}):")
        lines += body
    grads = [grad if start else "None" for start in names.grads]
    lines.append(f"    return ({''.join(g + ', ' for g in grads)})")
    return lines


def _steps_of(runs: list[_Run]) -> list[_Step]:
    return [step for run in runs for step in run.steps]


def _templates(
    runs: list[_Run], names: _Source, numbering: _Numbering, differentiable: bool
) -> bool:
    """Make each step's forward (and backward) template; False when one has none."""
    for step in _steps_of(runs):
        op = step.op
        chained = op.args[step.position]
        args = list(op.args)
        args[step.position] = Value(names.carry, chained.array)
        for argument in args:  # constants: numbered after the program's values
            if isinstance(argument, Value) and argument.kind == "const":
                argument.index = numbering()
        step.template = Op(
            op.name,
            op.source,
            args,
            op.raw_args,
            [Value(names.carry, op.outputs[0].array)],
            op.line,
        )
        if differentiable:
            step.backward = _backward_template(step, numbering, names.grad)
            if step.backward is None:
                return False
    return True


def _constants(runs: list[_Run]) -> dict[str, Any]:
    steps = _steps_of(runs)
    ops = [step.template for step in steps if step.template is not None]
    ops += [
        op for step in steps if step.backward is not None for op in step.backward.ops
    ]
    return {
        v.name: v.array
        for op in ops
        for v in op.args
        if isinstance(v, Value) and v.kind == "const"
    }


def _check_forward(
    runs: list[_Run], names: _Source, renderer: Renderer
) -> list[list[Any]] | None:
    """Run the checked forward on the trace's inputs; per run and step, its fix (as
    graph._Checker's, or "keep"), or None when an iteration differs from eager."""
    checks = [[_RunCheck(step.values) for step in run.steps] for run in runs]
    source = "\n".join(_forward_lines(runs, names, renderer, None)) + "\n"
    extra: dict[str, Any] = {
        f"_check{i}_{j}": check
        for i, run_checks in enumerate(checks)
        for j, check in enumerate(run_checks)
    }
    namespace = _namespace(renderer, extra)
    try:
        exec(compile(source, "<gradgen.compile check>", "exec"), namespace)
        namespace["forward"](*[v.array for v in names.inputs])
    except Exception:
        return None
    if not all(check.same() for run_checks in checks for check in run_checks):
        return None
    return [[check.fix for check in run_checks] for run_checks in checks]


def build_chain(
    recorder: ChainRecorder,
    inputs: list[Value],
    outputs: Sequence[Value],
    needs_grad: list[bool],
) -> Program | None:
    """The rolled program of a chain trace, or None when it is not a chain (or its
    code differs from eager). `needs_grad` per input: whether it gets a gradient."""
    ops = recorder.ops
    if not ops:
        return None
    tail = recorder.tails.get(len(ops) - 1, ops[-1].outputs[0])
    if len(outputs) != 1 or outputs[0] is not tail:
        return None
    position = _chained_position(ops[0])
    first = ops[0].args[position] if position is not None else None
    if not any(first is v for v in inputs):
        return None
    assert isinstance(first, Value)
    runs = _runs(recorder, first)
    length = sum(len(step.values) for step in _steps_of(runs))
    if not runs or len(runs) > length // 8:
        return None  # not a chain, or too few repeats to gain from loops
    for index, value in enumerate(inputs):
        value.index = index
    grads = [v is first for n, v in zip(needs_grad, inputs) if n]
    names = _Source(inputs, first, len(inputs), len(inputs) + 1, grads)
    numbering = _Numbering(len(inputs) + 2)
    if not _templates(runs, names, numbering, any(grads)):
        return None
    renderer = Renderer()
    renderer.values = _constants(runs)
    fixes: dict[int, Any] = {}
    for step in _steps_of(runs):
        if step.backward is not None:
            found = _check_template(step.backward, renderer)
            if found is None:
                return None
            fixes.update(found)
    run_fixes = _check_forward(runs, names, renderer)
    if run_fixes is None:
        return None
    lines = _forward_lines(runs, names, renderer, run_fixes)
    if any(grads):
        lines += [""] + _backward_lines(runs, names, renderer, fixes)
    source = "\n".join(lines) + "\n"
    namespace = _namespace(renderer, {})
    exec(compile(source, "<gradgen.compile>", "exec"), namespace)
    return Program(
        namespace["forward"],
        namespace["backward"] if any(grads) else None,
        [outputs[0]],
        (
            [first]
            if runs[0].steps[0].backward is not None
            and runs[0].steps[0].backward.reads_input
            else []
        ),
        source,
        length * (2 if any(grads) else 1),
    )
