"""The passes on the captured graph, each on a small case: constant folding of Python
scalars, dead-code elimination, common-subexpression elimination; and in-place
operators on the graph's own temporaries."""

from __future__ import annotations

import ast
import importlib.util
from pathlib import Path

import numpy as np

import gradgen as torch
from gradgen.compile.passes import (
    eliminate_common_subexpressions,
    eliminate_dead_code,
    fold_constants,
)
from gradgen.compile.trace import Op, Value
from gradgen.generated.kernel_sources import KERNEL_SOURCES


def _folded(expression: str) -> str:
    return ast.unparse(fold_constants(ast.parse(expression, mode="eval").body))


def test_constant_folding_decides_python_conditions() -> None:
    assert _folded("x + y if 1 == 1 else x + 1 * y") == "x + y"
    assert _folded("x if not (2 > 3 and True) else y") == "x"
    assert _folded("f(x, 2 * 3 - 1, -(4))") == "f(x, 5, -4)"
    assert _folded("x if y == 1 else z") == "x if y == 1 else z"  # y is not known
    assert _folded("f(1 / 0)") == "f(1 / 0)"  # an error is left for run time


def _op(name: str, args: list[object], output: Value) -> Op:
    return Op(name, KERNEL_SOURCES[name], list(args), (), [output], "")


def _values(count: int) -> list[Value]:
    return [Value(i, np.zeros(2)) for i in range(count)]


def test_dead_code_keeps_what_the_live_values_need() -> None:
    v = _values(5)
    ops = [
        _op("exp", [v[0]], v[1]),
        _op("sin", [v[0]], v[2]),  # dead
        _op("mul.Tensor", [v[1], v[0]], v[3]),
        _op("cos", [v[3]], v[4]),  # dead
    ]
    kept = eliminate_dead_code(ops, [v[3]])
    assert [op.name for op in kept] == ["exp", "mul.Tensor"]


def test_common_subexpressions_are_computed_once() -> None:
    v = _values(6)
    ops = [
        _op("exp", [v[0]], v[1]),
        _op("exp", [v[0]], v[2]),  # the same as v1
        _op("mul.Tensor", [v[1], v[2]], v[3]),
        _op("mul.Tensor", [v[1], v[1]], v[4]),  # the same as v3 once v2 is v1
        _op("add.Tensor", [v[3], v[0], 2], v[5]),
    ]
    kept, replaced = eliminate_common_subexpressions(ops)
    assert [op.name for op in kept] == ["exp", "mul.Tensor", "add.Tensor"]
    assert replaced == {2: v[1], 4: v[3]}


def test_cse_and_folding_show_in_the_generated_source() -> None:
    compiled = torch.compile(lambda x: x.exp() * x.exp() + x)
    x = torch.tensor([0.5, 1.0], requires_grad=True)
    out = compiled(x)
    (entry,) = compiled.cache.values()
    forward = entry.program.source.split("def backward")[0]
    assert forward.count("np.exp(") == 1  # CSE
    assert "if " not in forward  # add's `alpha == 1` folded away
    out.sum().backward()
    e = x.detach().exp().numpy()
    assert np.allclose(x.grad.numpy(), 4 * e * e / 2 + 1)


def test_in_place_on_a_temporary_is_recorded_functionally() -> None:
    def fn(x):
        y = x * 2
        y.mul_(3)
        return y + 1

    x = torch.tensor([1.0, 2.0], requires_grad=True)
    compiled = torch.compile(fn)
    out = compiled(x)
    assert out.tolist() == [7.0, 13.0] and compiled.breaks == []
    out.sum().backward()
    assert x.grad.tolist() == [6.0, 6.0]


def test_a_view_taken_before_an_in_place_change_is_never_wrong() -> None:
    def fn(x):
        y = x * 2
        head = y[:1]
        y.mul_(3)
        return head + 0  # eager sees the change through the view

    x = torch.tensor([1.0, 2.0])
    compiled = torch.compile(fn)
    assert compiled(x).tolist() == fn(x).tolist() == [6.0]
    (record,) = compiled.breaks  # the check against eager caught the stale view
    assert "differs from eager" in record.reason


def test_a_dead_temporary_takes_the_next_result() -> None:
    def fn(x, w):
        h = x @ w  # a temporary of the result's shape, dead after the add
        return (h + x[:, :2]).sum()

    x = torch.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
    w = torch.tensor(np.ones((3, 2)), requires_grad=True)
    compiled = torch.compile(fn)
    out = compiled(x, w)
    (entry,) = compiled.cache.values()
    assert "out=" in entry.program.source.split("def backward")[0]
    assert out.item() == fn(x, w).item() == 30.0 + 8.0
    # the inputs are never written into
    assert x.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]


def test_identical_functions_in_two_files_name_their_own_lines(tmp_path: Path) -> None:
    # code objects compare equal across files (their file name is not compared): the
    # lines a compiled program names must still come from each function's own file
    sources = {}
    for name, comment in (("first_copy", "# one"), ("second_copy", "# two")):
        path = tmp_path / f"{name}.py"
        path.write_text(
            "from gradgen.compile.trace import user_line\n"
            f"def where():\n    return user_line()  {comment}\n"
        )
        spec = importlib.util.spec_from_file_location(name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        sources[name] = module.where
    assert sources["first_copy"].__code__ == sources["second_copy"].__code__
    assert sources["first_copy"]() == "first_copy.py:3: return user_line()  # one"
    assert sources["second_copy"]() == "second_copy.py:3: return user_line()  # two"
