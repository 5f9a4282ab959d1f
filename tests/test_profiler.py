"""gradgen.autograd.profiler and gradgen.profiler: operator names and counts against
PyTorch's profiler, the table's layout, record_function, nesting, and the dispatcher
hook being removed when no profile is active."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

import gradgen
from gradgen import dispatch
from gradgen.autograd.profiler import EventList, FunctionEvent
from torch_oracle import oracle

# Operators both profilers record for `_program` (PyTorch also records its internal
# helpers and the composites, gradgen only what enters its dispatcher).
SHARED = {"aten::mul", "aten::add", "aten::relu", "aten::mm", "aten::sum", "aten::exp"}


def _program(lib: Any) -> None:
    x = lib.ones(3, 4) * 0.5
    w = lib.ones(4, 2)
    y = (x * 2 + 1).relu()
    z = lib.matmul(y, w).exp().sum()
    (z * 3).add(1)


def _counts(prof: Any) -> dict[str, int]:
    return {event.key: event.count for event in prof.key_averages()}


def _torch_counts(torch: Any) -> dict[str, int]:
    with torch.autograd.profiler.profile() as prof:
        _program(torch)
    return _counts(prof)


def test_operator_names_and_counts_match_pytorch() -> None:
    with gradgen.autograd.profiler.profile() as prof:
        _program(gradgen)
    ours = _counts(prof)
    theirs = oracle("counts", _torch_counts)
    assert SHARED <= set(ours) and SHARED <= set(theirs)
    assert {name: ours[name] for name in SHARED} == {
        name: theirs[name] for name in SHARED
    }
    assert ours["aten::mul"] == 3 and ours["aten::add"] == 2


def test_events_nest_under_record_function_and_times_add_up() -> None:
    with gradgen.autograd.profiler.profile() as prof:
        with gradgen.autograd.profiler.record_function("block"):
            gradgen.ones(2) + 1
            gradgen.ones(2) * 2
    events = prof.function_events
    assert [e.name for e in events] == ["block", "aten::add", "aten::mul"]
    block = events[0]
    assert [c.name for c in block.cpu_children] == ["aten::add", "aten::mul"]
    assert all(c.cpu_parent is block for c in block.cpu_children)
    children = sum(c.cpu_time_total for c in block.cpu_children)
    assert block.self_cpu_time_total == pytest.approx(block.cpu_time_total - children)
    assert block.cpu_time_total >= children > 0
    averages = {e.key: e for e in prof.key_averages()}
    assert averages["block"].count == 1 and averages["aten::add"].count == 1
    total = prof.total_average()
    assert total.count == 3
    assert prof.self_cpu_time_total == pytest.approx(block.cpu_time_total)


def test_record_function_as_decorator_records_each_call() -> None:
    @gradgen.autograd.profiler.record_function("step")
    def step(t: gradgen.Tensor) -> gradgen.Tensor:
        return t * 2

    step(gradgen.ones(2))  # outside a profile: nothing recorded, nothing fails
    with gradgen.profiler.profile() as prof:
        step(step(gradgen.ones(2)))
    assert _counts(prof) == {"step": 2, "aten::mul": 2}
    assert [e.name for e in prof.events()] == ["step", "aten::mul"] * 2


def test_backward_operators_are_recorded() -> None:
    x = gradgen.ones(3, requires_grad=True)
    with gradgen.autograd.profiler.profile() as prof:
        (x * x).sum().backward()
    counts = _counts(prof)
    assert counts["aten::mul"] == 3  # the forward product and its two gradient terms
    assert counts["aten::sum"] == 1


def test_record_shapes_groups_by_input_shape() -> None:
    with gradgen.autograd.profiler.profile(record_shapes=True) as prof:
        gradgen.ones(2, 3) + gradgen.ones(2, 3)
        gradgen.ones(4) + gradgen.ones(4)
        gradgen.ones(4) + gradgen.ones(4)
    groups = prof.key_averages(group_by_input_shape=True)
    assert [(e.key, e.input_shapes, e.count) for e in groups] == [
        ("aten::add", [[2, 3], [2, 3], []], 1),
        ("aten::add", [[4], [4], []], 2),
    ]
    assert "Input Shapes" in groups.table()
    assert "Input Shapes" not in prof.key_averages().table()


def _event(name: str, start_us: int, end_us: int) -> FunctionEvent:
    event = FunctionEvent(0, name, 0, start_us * 1000, None, False)
    event.end_ns = end_us * 1000
    return event


def test_table_layout_is_pytorchs() -> None:
    outer = _event("my_block", 0, 3000)
    inner = _event("aten::mul", 500, 1500)
    inner.cpu_parent = outer
    outer.cpu_children.append(inner)
    other = _event("aten::mul", 2000, 2250)
    table = (
        EventList([outer, inner, other])
        .key_averages()
        .table(sort_by="self_cpu_time_total", row_limit=10)
    )
    assert table == (
        "-------------  ------------  ------------  ------------  ------------  "
        "------------  ------------  \n"
        "         Name    Self CPU %      Self CPU   CPU total %     CPU total  "
        "CPU time avg    # of Calls  \n"
        "-------------  ------------  ------------  ------------  ------------  "
        "------------  ------------  \n"
        "     my_block        61.54%       2.000ms        92.31%       3.000ms  "
        "     3.000ms             1  \n"
        "    aten::mul        38.46%       1.250ms        38.46%       1.250ms  "
        "   625.000us             2  \n"
        "-------------  ------------  ------------  ------------  ------------  "
        "------------  ------------  \n"
        "Self CPU time total: 3.250ms\n"
    )
    limited = EventList([outer, inner]).key_averages().table(row_limit=1)
    assert "my_block" in limited and "aten::mul" not in limited


def _torch_header(torch: Any) -> list[str]:
    with torch.autograd.profiler.profile() as prof:
        torch.ones(2) * 2
    lines = prof.key_averages().table(row_limit=0).splitlines()
    return [lines[0], lines[1], lines[-1].split(":")[0]]


def test_table_header_matches_pytorchs() -> None:
    with gradgen.autograd.profiler.profile() as prof:
        gradgen.ones(2) * 2
    lines = prof.key_averages().table(row_limit=0).splitlines()
    # The name column is as wide as the longest key plus four (PyTorch's longest here
    # is one of its factory's helpers); the other columns are the same.
    theirs = oracle("header", _torch_header)
    width = theirs[1].index("Name") + len("Name")
    ours = len("aten::mul") + 4
    assert lines[1] == "Name".rjust(ours) + theirs[1][width:]
    assert lines[0] == "-" * ours + theirs[0][width:]
    assert lines[-1].split(":")[0] == theirs[2] == "Self CPU time total"


def test_long_names_are_cut_as_pytorch_does() -> None:
    event = _event("n" * 60, 0, 10)
    row = EventList([event]).table().splitlines()[3]
    assert row.startswith("n" * 52 + "...  ")


def test_no_observer_outside_a_profile_and_after_an_error() -> None:
    assert dispatch._observer is None
    with pytest.raises(ValueError):
        with gradgen.autograd.profiler.profile():
            assert dispatch._observer is not None
            raise ValueError("inside")
    assert dispatch._observer is None
    with gradgen.autograd.profiler.profile() as outer:
        with gradgen.profiler.profile() as inner:
            gradgen.ones(1) * 2
        assert dispatch._observer is not None
        gradgen.ones(1) + 2
    assert dispatch._observer is None
    assert _counts(inner) == {"aten::mul": 1}
    assert _counts(outer) == {"aten::mul": 1, "aten::add": 1}


def test_results_before_exit_are_an_error() -> None:
    prof = gradgen.autograd.profiler.profile()
    with pytest.raises(RuntimeError, match="Profiler didn't finish running"):
        prof.key_averages()
    with gradgen.autograd.profiler.profile(enabled=False) as off:
        gradgen.ones(1) * 2
    assert dispatch._observer is None
    with pytest.raises(RuntimeError, match="Profiler didn't finish running"):
        off.key_averages()


def test_threads_keep_their_own_nesting() -> None:
    def work() -> None:
        with gradgen.autograd.profiler.record_function("worker"):
            gradgen.ones(1) * 2

    with gradgen.autograd.profiler.profile() as prof:
        with gradgen.autograd.profiler.record_function("main"):
            thread = threading.Thread(target=work)
            thread.start()
            thread.join()
            gradgen.ones(1) + 1
    by_name = {e.name: e for e in prof.function_events}
    assert [c.name for c in by_name["main"].cpu_children] == ["aten::add"]
    assert [c.name for c in by_name["worker"].cpu_children] == ["aten::mul"]
    assert by_name["worker"].cpu_parent is None


def test_chrome_trace_is_written(tmp_path: Any) -> None:
    with gradgen.profiler.profile() as prof:
        gradgen.ones(1) * 2
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())
    assert [e["name"] for e in trace["traceEvents"]] == ["aten::mul"]


def test_printing_the_averages_prints_the_table() -> None:
    # As a user's script does: print(prof.key_averages()) shows the table.
    x = gradgen.ones(1, 1, requires_grad=True)
    with gradgen.autograd.profiler.profile(record_shapes=True) as prof:
        for _ in range(3):
            (x**2).backward()
    averages = prof.key_averages(group_by_stack_n=5)
    assert str(averages) == averages.table()
    assert str(averages).splitlines()[1].strip().startswith("Name    Self CPU %")
    assert {e.key: e.count for e in averages}["aten::pow"] == 3
