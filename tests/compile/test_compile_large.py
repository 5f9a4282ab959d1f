"""gradgen.compile of large graphs (compile/chain.py): a trace past LARGE forward
operators restarts without autograd nodes; a chain of operators becomes loops in the
forward and the backward, values and gradients equal to eager to the last bit; what
is not a chain compiles the usual way."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradgen as torch
from gradgen.compile import CompiledFunctionBackward
from gradgen.compile.chain import LARGE
from gradgen.compile.compiler import programs_of

N = LARGE + 500  # past the limit: the chain path


def _same(a: Any, b: Any) -> None:
    assert a is not None and b is not None
    assert a.dtype == b.dtype and a.shape == b.shape
    assert np.array_equal(a.detach().numpy(), b.detach().numpy(), equal_nan=True)


def _source(compiled: Any) -> str:
    (entry,) = compiled.cache.values()
    (program,) = programs_of(entry)
    source: str = program.source
    return source


def _leaf(value: Any) -> torch.Tensor:
    return torch.tensor(np.array(value, dtype=np.float64), requires_grad=True)


def _against_eager(
    fn: Callable[..., Any], *values: Any
) -> tuple[Any, list[torch.Tensor], Any]:
    """Run fn compiled and eagerly on fresh leaves; check value and gradients are
    bitwise equal; the compiled function, its leaves and its output."""
    compiled = torch.compile(fn)
    leaves = [_leaf(v) for v in values]
    eager_leaves = [_leaf(v) for v in values]
    out = compiled(*leaves)
    expected = fn(*eager_leaves)
    _same(out, expected)
    out.sum().backward()
    expected.sum().backward()
    for leaf, eager_leaf in zip(leaves, eager_leaves):
        _same(leaf.grad, eager_leaf.grad)
    return compiled, leaves, out


def _scale_chain(x: torch.Tensor) -> torch.Tensor:
    y = x
    for _ in range(N):
        y = y * 1.0001
    return y


def test_a_chain_of_multiplications_rolls_into_one_loop_each_way() -> None:
    compiled, (x,), out = _against_eager(_scale_chain, 1.0)
    source = _source(compiled)
    assert f"for _ in range({N}):" in source
    assert source.count("for ") == 2  # one loop forward, one backward
    assert len(source.splitlines()) < 20
    assert isinstance(out.grad_fn, CompiledFunctionBackward)
    # by hand: y = x * 1.0001**N, dy/dx = 1.0001**N (N roundings: relative 1e-12)
    assert math.isclose(out.item(), 1.0001**N, rel_tol=1e-11)
    assert math.isclose(x.grad.item(), 1.0001**N, rel_tol=1e-11)
    assert compiled.breaks == []


def test_a_chain_that_saves_its_inputs_reads_them_back_in_reverse() -> None:
    def fn(x: torch.Tensor) -> torch.Tensor:
        y = x
        for _ in range(N):
            y = y.sin()
        return y

    compiled, (x,), out = _against_eager(fn, [0.5, -1.0, 2.0])
    source = _source(compiled)
    assert "inputs0.append(" in source and "reversed(inputs0)" in source
    # by hand, for the first element: y_{k+1} = sin(y_k), dy/dx = prod cos(y_k)
    y, grad = 0.5, 1.0
    for _ in range(N):
        y, grad = math.sin(y), grad * math.cos(y)
    assert math.isclose(out[0].item(), y, rel_tol=1e-9)
    assert math.isclose(x.grad[0].item(), grad, rel_tol=1e-9)


def test_a_chain_that_saves_its_results_reads_them_back_in_reverse() -> None:
    def fn(x: torch.Tensor) -> torch.Tensor:
        y = x
        for _ in range(N):
            y = torch.tanh(y)
        return y

    compiled, _, _ = _against_eager(fn, [[0.25, 1.5], [-3.0, 0.0]])
    source = _source(compiled)
    assert "results0.append(" in source and "reversed(results0)" in source


def test_runs_of_different_operators_and_dtypes_are_loops_of_their_own() -> None:
    def fn(x: torch.Tensor) -> torch.Tensor:
        y = x
        for _ in range(N // 2):
            y = y * 0.999
        y = y.float()  # one cast between the runs
        for _ in range(N // 2):
            y = y + 0.25
        return y

    compiled, (x,), out = _against_eager(fn, [1.0, 2.0])
    source = _source(compiled)
    # the additions hand the gradient on unchanged: no loop in the backward
    assert source.count(f"for _ in range({N // 2}):") == 3
    assert "for _ in range(1):" in source
    assert out.dtype == torch.float32 and x.grad.dtype == torch.float64


def test_operators_repeating_in_turn_are_the_body_of_one_loop() -> None:
    def fn(x: torch.Tensor) -> torch.Tensor:
        y = x
        for _ in range(N // 3 + 1):
            y = (y * 0.999).sin() + 0.25
        return y

    compiled, _, _ = _against_eager(fn, [1.0, -2.0])
    source = _source(compiled)
    assert source.count(f"for _ in range({N // 3 + 1}):") == 1  # the forward
    assert "for v6 in reversed(inputs0_1):" in source  # the backward: sin's input
    assert source.index("# cos") < source.index("# mul.Tensor <- 'MulBackward0")


def test_a_random_operator_with_its_own_generator_draws_as_eager_does() -> None:
    generator, eager_generator = torch.Generator(), torch.Generator()
    generator.manual_seed(3)
    eager_generator.manual_seed(3)

    def make(g: Any) -> Callable[[torch.Tensor], torch.Tensor]:
        def fn(x: torch.Tensor) -> torch.Tensor:
            y = _scale_chain(x)
            return torch.bernoulli(torch.sigmoid(y), generator=g) * y

        return fn

    compiled = torch.compile(make(generator))
    x, eager_x = _leaf([0.1, -0.2, 0.3, 0.0]), _leaf([0.1, -0.2, 0.3, 0.0])
    _same(compiled(x), make(eager_generator)(eager_x))
    _same(torch.rand(5, generator=generator), torch.rand(5, generator=eager_generator))


def test_what_is_not_a_chain_compiles_the_usual_way() -> None:
    def fn(x: torch.Tensor, c: torch.Tensor) -> torch.Tensor:
        y = x
        for _ in range(N // 2):
            y = y * c + x  # x and c are used by every step: not a chain
        return y

    compiled, (x, c), _ = _against_eager(fn, [0.5, 0.25], [0.5, 0.75])
    source = _source(compiled)
    assert "for " not in source
    assert source.count("\n    v") > N  # straight-line code


def test_a_result_from_the_middle_of_a_run_used_again_is_no_chain() -> None:
    def fn(x: torch.Tensor) -> torch.Tensor:
        y = x
        for step in range(N):
            y = y * 1.0001
            if step == 100:
                kept = y  # a repeat's result: the chain trace keeps no value for it
        return y + kept

    compiled, _, _ = _against_eager(fn, [1.0, 3.0])
    assert "for " not in _source(compiled)
    assert compiled.breaks == []


def test_a_break_in_a_large_function_splits_it_as_in_a_small_one() -> None:
    def fn(x: torch.Tensor) -> torch.Tensor:
        y = _scale_chain(x)
        if y.sum() > 0:  # a read of a value: a break
            return y * 2
        return y

    compiled = torch.compile(fn)
    x, eager_x = _leaf([1.0, 2.0]), _leaf([1.0, 2.0])
    out, expected = compiled(x), fn(eager_x)
    _same(out, expected)
    out.sum().backward()
    expected.sum().backward()
    _same(x.grad, eager_x.grad)
    assert [b.reason for b in compiled.breaks] == [
        "Tensor.__bool__ reads a tensor's value in Python (data-dependent control "
        "flow or printing)"
    ]


def test_a_large_chain_called_without_grad_or_without_leaves_has_no_backward() -> None:
    compiled = torch.compile(_scale_chain)
    with torch.no_grad():
        out = compiled(_leaf(2.0))
    assert out.grad_fn is None and not out.requires_grad
    plain = torch.tensor(np.array(2.0))
    _same(compiled(plain), _scale_chain(plain))
    assert compiled(plain).grad_fn is None
    for entry in compiled.cache.values():
        (program,) = programs_of(entry)
        assert program.backward is None and "def backward" not in program.source


def test_later_calls_run_the_same_loops_and_gradients_accumulate() -> None:
    compiled = torch.compile(_scale_chain)
    x, eager_x = _leaf([1.0, -2.0]), _leaf([1.0, -2.0])
    for _ in range(3):
        compiled(x).sum().backward()
        _scale_chain(eager_x).sum().backward()
        _same(x.grad, eager_x.grad)
    assert compiled.compiles == 1


def test_a_chain_from_a_parameter_the_function_reaches_gets_its_gradient() -> None:
    weight = _leaf([0.5, 1.5])
    eager_weight = _leaf([0.5, 1.5])

    def make(w: torch.Tensor) -> Callable[[], torch.Tensor]:
        def fn() -> torch.Tensor:
            return _scale_chain(w)

        return fn

    out = torch.compile(make(weight))()
    expected = make(eager_weight)()
    _same(out, expected)
    out.sum().backward()
    expected.sum().backward()
    _same(weight.grad, eager_weight.grad)


def test_an_input_changed_in_place_before_the_backward_is_an_error() -> None:
    def fn(x: torch.Tensor) -> torch.Tensor:
        y = x
        for _ in range(N):
            y = y.sin()  # saves its input: x among them
        return y

    x = _leaf([0.5])
    out = torch.compile(fn)(x)
    with torch.no_grad():
        x.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.backward()


def test_debug_prints_the_rolled_source(capsys: pytest.CaptureFixture[str]) -> None:
    torch.compile(_scale_chain, debug=True)(_leaf(1.0))
    printed = capsys.readouterr().err
    assert f"for _ in range({N}):" in printed and "def backward" in printed


@pytest.mark.slow
def test_the_100k_chain_of_the_benchmark_equals_eager_to_the_last_bit() -> None:
    def fn(x: torch.Tensor) -> torch.Tensor:
        y = x
        for _ in range(100_000):
            y = y * 1.0001
        return y

    compiled, _, _ = _against_eager(fn, 1.0)
    assert "for _ in range(100000):" in _source(compiled)
