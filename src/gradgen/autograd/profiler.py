"""gradgen.autograd.profiler: per-operator counts and times, as torch.autograd.profiler.

`with profile() as prof:` records one event per operator call that enters the
dispatcher (named as PyTorch names them, `aten::mul`, `aten::add_`, ...) and one per
`record_function(name)` block; events nest (an operator called by another operator's
kernel, or inside a block, is its child), so each has a total time and a self time (its
total minus its children's). `prof.key_averages()` groups them by name and `.table()`
prints them in PyTorch's layout.

What is recorded: every call of an `OperatorHandle` (forward operators, the operators a
backward formula calls, the ones a composite such as `matmul` or `linear` is made of).
Not recorded (PyTorch records them): the composite functions themselves (`aten::linear`,
`aten::matmul`), the backward nodes (`MulBackward0`, `autograd::engine::...`), and
PyTorch's internal helpers (`aten::empty`, `aten::as_strided`, ...).

Cost: the profiler installs its observer with `dispatch.observe_calls` while at least
one profile is active, and removes it after, so an operator call outside a profile pays
one global lookup. Events of all threads are recorded, each thread with its own nesting stack.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Sequence
from typing import Any

from .. import dispatch

__all__ = [
    "EventList",
    "FunctionEvent",
    "FunctionEventAvg",
    "profile",
    "record_function",
]

NAMESPACE = "aten::"


class FunctionEvent:
    """One recorded call: an operator or a `record_function` block (times in us)."""

    def __init__(
        self,
        id: int,
        name: str,
        thread: int,
        start_ns: int,
        input_shapes: list[list[int]] | None,
        is_user_annotation: bool,
    ) -> None:
        self.id = id
        self.name = name
        self.thread = thread
        self.start_ns = start_ns
        self.end_ns = start_ns
        self.input_shapes = input_shapes
        self.is_user_annotation = is_user_annotation
        self.cpu_children: list[FunctionEvent] = []
        self.cpu_parent: FunctionEvent | None = None
        self.count = 1

    @property
    def key(self) -> str:
        return self.name

    @property
    def time_range(self) -> tuple[float, float]:
        return (self.start_ns / 1000.0, self.end_ns / 1000.0)

    @property
    def cpu_time_total(self) -> float:
        return (self.end_ns - self.start_ns) / 1000.0

    @property
    def self_cpu_time_total(self) -> float:
        children = sum(child.cpu_time_total for child in self.cpu_children)
        return self.cpu_time_total - children

    @property
    def cpu_time(self) -> float:
        return self.cpu_time_total

    def __repr__(self) -> str:
        return (
            f"<FunctionEvent id={self.id} name={self.name} "
            f"cpu_time={_format_time(self.cpu_time_total)} thread={self.thread} "
            f"input_shapes={self.input_shapes}>"
        )


class FunctionEventAvg:
    """The events of one key (name, and shapes when grouped by them), summed."""

    def __init__(self, key: str, input_shapes: list[list[int]] | None = None) -> None:
        self.key = key
        self.input_shapes = input_shapes
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.is_user_annotation = False

    def add(self, event: FunctionEvent) -> FunctionEventAvg:
        self.count += event.count
        self.cpu_time_total += event.cpu_time_total
        self.self_cpu_time_total += event.self_cpu_time_total
        self.is_user_annotation = event.is_user_annotation
        return self

    @property
    def cpu_time(self) -> float:
        return 0.0 if self.count == 0 else self.cpu_time_total / self.count

    def __repr__(self) -> str:
        return (
            f"<FunctionEventAvg key={self.key} "
            f"self_cpu_time={_format_time(self.self_cpu_time_total)} "
            f"cpu_time={_format_time(self.cpu_time)} input_shapes={self.input_shapes}>"
        )


class EventList(list[Any]):
    """A list of events (FunctionEvent or FunctionEventAvg) that can print itself."""

    def __str__(self) -> str:
        return self.table()

    def key_averages(
        self,
        group_by_input_shape: bool = False,
        group_by_stack_n: int = 0,
        group_by_overload_name: bool = False,
    ) -> EventList:
        """The events grouped by name (and input shapes), in order of first call; no
        stacks or overload names are recorded, so those groupings change nothing."""
        del group_by_stack_n, group_by_overload_name
        groups: dict[tuple[str, str], FunctionEventAvg] = {}
        for event in self:
            shapes = event.input_shapes if group_by_input_shape else None
            key = (event.key, str(shapes) if group_by_input_shape else "")
            if key not in groups:
                groups[key] = FunctionEventAvg(event.key, shapes)
            groups[key].add(event)
        return EventList(groups.values())

    def total_average(self) -> FunctionEventAvg:
        total = FunctionEventAvg("Total")
        for event in self:
            total.add(event)
        total.key = "Total"
        return total

    @property
    def self_cpu_time_total(self) -> float:
        return float(sum(event.self_cpu_time_total for event in self))

    def table(
        self,
        sort_by: str | None = None,
        row_limit: int = 100,
        max_src_column_width: int = 75,
        max_name_column_width: int = 55,
        max_shapes_column_width: int = 80,
        header: str | None = None,
        top_level_events_only: bool = False,
        time_unit: str | None = None,
    ) -> str:
        """The events as PyTorch's profiler prints them (`sort_by` an attribute name)."""
        del max_src_column_width  # no source locations are recorded
        return _build_table(
            list(self),
            sort_by,
            row_limit,
            max_name_column_width,
            max_shapes_column_width,
            header,
            top_level_events_only,
            time_unit,
        )

    def export_chrome_trace(self, path: str) -> None:
        """Write the events in the Chrome trace format (chrome://tracing, Perfetto)."""
        trace = [
            {
                "name": event.name,
                "ph": "X",
                "ts": event.start_ns / 1000.0,
                "dur": event.cpu_time_total,
                "tid": event.thread,
                "pid": "CPU functions",
                "args": {},
            }
            for event in self
            if isinstance(event, FunctionEvent)
        ]
        with open(path, "w") as file:
            json.dump({"traceEvents": trace}, file)


# -- formatting ---------------------------------------------------------------------------


def _format_time(time_us: float) -> str:
    if time_us >= 1e6:
        return f"{time_us / 1e6:.3f}s"
    if time_us >= 1e3:
        return f"{time_us / 1e3:.3f}ms"
    return f"{time_us:.3f}us"


def _format_time_in(time_us: float, unit: str | None) -> str:
    scale = {"s": 1e6, "ms": 1e3, "us": 1.0}.get(unit or "")
    return _format_time(time_us) if scale is None else f"{time_us / scale:.3f}{unit}"


def _format_share(time_us: float, total_us: float) -> str:
    return "NaN" if total_us == 0 else f"{time_us * 100.0 / total_us:.2f}%"


_HEADERS = [
    "Name",
    "Self CPU %",
    "Self CPU",
    "CPU total %",
    "CPU total",
    "CPU time avg",
    "# of Calls",
]
_COLUMN_WIDTH = 12
_SPACING = 2


def _row_format(widths: Sequence[int]) -> tuple[str, str]:
    spacing = " " * _SPACING
    row = "".join("{:>" + str(width) + "}" + spacing for width in widths)
    separator = "".join("-" * width + spacing for width in widths)
    return row, separator


def _short_name(name: str, width: int) -> str:
    return name[: width - 3] + "..." if len(name) >= width - 3 else name


def _sorted(events: list[Any], sort_by: str | None) -> list[Any]:
    if sort_by is None:
        return events
    return sorted(events, key=lambda event: getattr(event, sort_by), reverse=True)


def _build_table(
    events: list[Any],
    sort_by: str | None,
    row_limit: int,
    max_name_width: int,
    max_shapes_width: int,
    header: str | None,
    top_level_events_only: bool,
    time_unit: str | None,
) -> str:
    if not events:
        return ""
    events = _sorted(events, sort_by)
    name_width = min(max(len(event.key) for event in events) + 4, max_name_width)
    widths = [name_width] + [_COLUMN_WIDTH] * (len(_HEADERS) - 1)
    headers = list(_HEADERS)
    if any(event.input_shapes for event in events):
        shapes_width = max(len(str(event.input_shapes)) for event in events) + 4
        widths.append(min(shapes_width, max_shapes_width))
        headers.append("Input Shapes")
    row, separator = _row_format(widths)
    total = sum(event.self_cpu_time_total for event in events)
    lines = []
    if header is not None:
        lines += ["=" * (sum(widths) + _SPACING * (len(widths) - 1)), header]
    lines += [separator, row.format(*headers), separator]
    shown = [e for e in events if not (top_level_events_only and _has_parent(e))]
    for event in shown[:row_limit]:
        values = [
            _short_name(event.key, max_name_width),
            _format_share(event.self_cpu_time_total, total),
            _format_time_in(event.self_cpu_time_total, time_unit),
            _format_share(event.cpu_time_total, total),
            _format_time_in(event.cpu_time_total, time_unit),
            _format_time_in(event.cpu_time, time_unit),
            event.count,
        ]
        if len(headers) > len(_HEADERS):
            values.append(str(event.input_shapes)[: widths[-1]])
        lines.append(row.format(*values))
    lines += [separator, f"Self CPU time total: {_format_time_in(total, time_unit)}"]
    return "".join(line + "\n" for line in lines)


def _has_parent(event: Any) -> bool:
    return getattr(event, "cpu_parent", None) is not None


# -- recording ----------------------------------------------------------------------------


class _Recording:
    """The active profiles and each thread's stack of open events."""

    def __init__(self) -> None:
        self.profiles: list[profile] = []
        self.lock = threading.Lock()
        self.local = threading.local()
        self.next_id = 0

    def stack(self) -> list[FunctionEvent]:
        stack: list[FunctionEvent] | None = getattr(self.local, "stack", None)
        if stack is None:
            stack = self.local.stack = []
        return stack

    def open(
        self, name: str, args: tuple[Any, ...], is_user_annotation: bool = False
    ) -> FunctionEvent:
        profiles = list(self.profiles)
        shapes = None
        if any(p.record_shapes for p in profiles):
            shapes = [list(getattr(arg, "shape", ())) for arg in args]
        with self.lock:
            self.next_id += 1
            event_id = self.next_id
        event = FunctionEvent(
            event_id,
            name,
            threading.get_ident(),
            time.perf_counter_ns(),
            shapes,
            is_user_annotation,
        )
        stack = self.stack()
        if stack:
            event.cpu_parent = stack[-1]
            stack[-1].cpu_children.append(event)
        stack.append(event)
        for active in profiles:
            active._events.append(event)
        return event

    def close(self, event: FunctionEvent) -> None:
        event.end_ns = time.perf_counter_ns()
        stack = self.stack()
        if stack and stack[-1] is event:
            stack.pop()
        elif event in stack:
            stack.remove(event)


_recording = _Recording()


def _observe(handle: dispatch.OperatorHandle, args: tuple[Any, ...]) -> Any:
    """The dispatcher observer: one event around each operator call."""
    name = NAMESPACE + handle.name.partition(".")[0]
    event = _recording.open(name, args)
    try:
        return handle.call_unobserved(*args)
    finally:
        _recording.close(event)


def _start(active: profile) -> None:
    with _recording.lock:
        if not _recording.profiles:
            dispatch.observe_calls(_observe)
        _recording.profiles.append(active)


def _stop(active: profile) -> None:
    with _recording.lock:
        if active in _recording.profiles:
            _recording.profiles.remove(active)
        if not _recording.profiles:
            dispatch.observe_calls(None)


class profile:
    """Record the operators called inside a `with` block (CPU times, in microseconds).

    `record_shapes=True` also records each call's input shapes (for
    `key_averages(group_by_input_shape=True)`). The other options of PyTorch's profiler
    are accepted; there is no device to profile, no memory or FLOP count.
    """

    def __init__(
        self,
        enabled: bool = True,
        *,
        use_cuda: bool = False,
        use_device: str | None = None,
        record_shapes: bool = False,
        with_flops: bool = False,
        profile_memory: bool = False,
        with_stack: bool = False,
        with_modules: bool = False,
        use_kineto: bool = False,
        use_cpu: bool = True,
    ) -> None:
        del use_cuda, use_device, with_flops, profile_memory, with_stack, with_modules
        del use_kineto, use_cpu
        self.enabled = enabled
        self.record_shapes = record_shapes
        self.entered = False
        self._events: list[FunctionEvent] = []
        self._function_events: EventList | None = None

    def __enter__(self) -> profile:
        if not self.enabled:
            return self
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self.entered = True
        self._events = []
        self._function_events = None
        _start(self)
        return self

    def __exit__(self, *exc_info: object) -> None:
        if not self.enabled:
            return
        _stop(self)
        self.entered = False
        self._function_events = EventList(
            sorted(self._events, key=lambda event: event.start_ns)
        )

    def _ensure_function_events(self) -> EventList:
        if self._function_events is None:
            raise RuntimeError("Profiler didn't finish running")
        return self._function_events

    @property
    def function_events(self) -> EventList:
        return self._ensure_function_events()

    def key_averages(
        self,
        group_by_input_shape: bool = False,
        group_by_stack_n: int = 0,
        group_by_overload_name: bool = False,
    ) -> EventList:
        return self._ensure_function_events().key_averages(
            group_by_input_shape, group_by_stack_n, group_by_overload_name
        )

    def total_average(self) -> FunctionEventAvg:
        return self._ensure_function_events().total_average()

    @property
    def self_cpu_time_total(self) -> float:
        return self._ensure_function_events().self_cpu_time_total

    def table(self, sort_by: str | None = None, row_limit: int = 100) -> str:
        return self._ensure_function_events().table(sort_by, row_limit)

    def export_chrome_trace(self, path: str) -> None:
        self._ensure_function_events().export_chrome_trace(path)

    def __str__(self) -> str:
        return self.table()


class record_function(contextlib.ContextDecorator):
    """Name a block (or, as a decorator, a function) in the profile: an event of its own.

    Outside an active profile it records nothing.
    """

    def __init__(self, name: str, args: str | None = None) -> None:
        self.name = name
        self.args = args
        self._event: FunctionEvent | None = None

    def _recreate_cm(self) -> record_function:
        return record_function(self.name, self.args)  # one event per decorated call

    def __enter__(self) -> record_function:
        if _recording.profiles:
            self._event = _recording.open(self.name, (), is_user_annotation=True)
        return self

    def __exit__(self, *exc_info: object) -> None:
        event, self._event = self._event, None
        if event is not None:
            _recording.close(event)
