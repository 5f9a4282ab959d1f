"""The compiled MLP step (bench W4: 64x784 -> 128 -> 10, relu, MSE) and what makes it
as fast as hand-written numpy: helpers rendered as the numpy they come to for the
traced shapes and dtypes (relu, threshold_backward, a bias's sum_to_size, mean, true
division), an `expand` only elementwise arithmetic reads dropped, and the fast call's
inline history. Each fires where it should, and values and gradients stay eager's
to the last bit."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import gradgen as torch
from gradgen.compile.passes import elide_expands
from gradgen.compile.trace import Op, Value
from gradgen.generated.kernel_sources import KERNEL_SOURCES


def _bits(tensor: Any) -> bytes:
    array = tensor.detach().numpy() if isinstance(tensor, torch.Tensor) else tensor
    return np.ascontiguousarray(array).tobytes()


def _source(compiled: Any) -> str:
    (entry,) = compiled.cache.values()
    source: str = entry.program.source
    return source


def _code_lines(source: str) -> str:
    """The source without its comments (which name the operators)."""
    return "\n".join(
        line for line in source.splitlines() if not line.lstrip().startswith("#")
    )


# -- relu and threshold_backward --------------------------------------------------------
SPECIAL = [-0.0, 0.0, math.nan, -math.nan, -math.inf, math.inf, -1.5, 2.5]


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32, torch.float64])
def test_relu_and_its_backward_render_as_where_with_signed_zeros_and_nans(
    dtype: Any,
) -> None:
    def f(x: Any) -> Any:
        return (torch.relu(x) * 3).sum()

    compiled = torch.compile(f)
    results = []
    for function in (f, compiled, compiled):
        x = torch.tensor(SPECIAL, dtype=dtype, requires_grad=True)
        y = torch.relu(x.detach()) if function is f else None
        out = function(x)
        out.backward()
        results.append((out, x.grad))
        if y is not None:
            eager_relu = y
    code = _code_lines(_source(compiled))
    assert "relu(" not in code and "threshold_backward(" not in code
    assert code.count("np.where(") == 2
    # hand math: relu keeps -0.0 and NaN, zeroes the negatives; its gradient is 0
    # where the output is <= 0 and passes (here 3) elsewhere, NaN included
    x = np.array(SPECIAL, dtype=dtype.numpy)  # type: ignore[attr-defined]
    assert _bits(eager_relu) == np.where(x < 0, x.dtype.type(0), x).tobytes()
    expected_grad = np.where(np.where(x < 0, 0, x) <= 0, 0, 3).astype(x.dtype)
    for out, grad in results:
        assert _bits(grad) == expected_grad.tobytes()
        assert _bits(out) == _bits(results[0][0])


@pytest.mark.parametrize("dtype", [torch.float16, torch.float32, torch.float64])
def test_large_relu_and_its_backward_select_bits_without_a_branch(dtype: Any) -> None:
    # from 256 elements the kernels' branchless select: values' bits AND a mask made
    # from the comparison; the same bits as np.where (specials included)
    def f(x: Any) -> Any:
        return (torch.relu(x) * 3).sum()

    rng = np.random.default_rng(0)
    values = np.concatenate([SPECIAL * 8, rng.standard_normal(300)])
    compiled = torch.compile(f)
    x_eager, x_compiled = (
        torch.tensor(values, dtype=dtype, requires_grad=True) for _ in range(2)
    )
    f(x_eager).backward()
    out = compiled(x_compiled)
    out.backward()
    code = _code_lines(_source(compiled))
    assert code.count("np.bitwise_and(") == 2 and "np.where(" not in code
    x = values.astype(dtype.numpy)  # type: ignore[attr-defined]
    expected_grad = np.where(np.where(x < 0, 0, x) <= 0, 0, 3).astype(x.dtype)
    assert _bits(x_compiled.grad) == _bits(x_eager.grad) == expected_grad.tobytes()
    assert _bits(out) == _bits(f(x_eager.detach()))


def test_relu_of_an_integer_tensor_keeps_the_helper() -> None:
    compiled = torch.compile(lambda x: torch.relu(x) + 1)
    x = torch.tensor([-2, 3])
    assert compiled(x).tolist() == [1, 4]
    assert "relu(" in _code_lines(_source(compiled))  # the helper, not np.where


# -- a bias's gradient --------------------------------------------------------------------
def test_a_bias_gradient_is_one_reduction_on_the_right_axes() -> None:
    rng = np.random.default_rng(1)
    x2, x3 = rng.standard_normal((4, 5)), rng.standard_normal((3, 4, 5))
    b = rng.standard_normal(5)

    def f(x2: Any, x3: Any, b: Any) -> Any:
        return ((x2 + b) * 2).sum() + ((x3 + b) * 3).sum()

    compiled = torch.compile(f)
    grads = []
    for function in (f, compiled, compiled):
        tensors = [torch.tensor(a, requires_grad=True) for a in (x2, x3, b)]
        function(*tensors).backward()
        grads.append(tensors[2].grad)
    assert compiled.breaks == []
    code = _code_lines(_source(compiled))
    # two sum_to_size of the same size from different ranks: two templates
    assert "sum_to_size(" not in code
    assert "axis=0)" in code and "axis=(0, 1))" in code
    for grad in grads:
        assert _bits(grad) == _bits(grads[0])
    np.testing.assert_allclose(grads[0].numpy(), np.full(5, 4 * 2 + 12 * 3.0))


# -- mean and true division -------------------------------------------------------------
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_mean_renders_as_a_sum_divided_by_the_count(dtype: Any) -> None:
    data = np.random.default_rng(2).standard_normal((7, 3)) * 1e3

    def f(x: Any, y: Any) -> Any:
        return torch.mean((x / y) ** 2)

    compiled = torch.compile(f)
    y0 = np.linspace(1.0, 2.0, 21).reshape(7, 3)
    runs = []
    for function in (f, compiled, compiled):
        x = torch.tensor(data, dtype=dtype, requires_grad=True)
        y = torch.tensor(y0, dtype=dtype, requires_grad=True)
        out = function(x, y)
        out.backward()
        runs.append((out, x.grad, y.grad))
    code = _code_lines(_source(compiled))
    assert "reduce_mean(" not in code and "div_true(" not in code
    assert "np.true_divide(np.add.reduce(" in code and ", 21)" in code
    for run in runs:
        assert [_bits(t) for t in run] == [_bits(t) for t in runs[0]]
    q = data.astype(dtype.numpy) / y0.astype(dtype.numpy)  # type: ignore[attr-defined]
    assert runs[0][0].item() == pytest.approx(float(np.mean(q**2)), rel=1e-5)


def test_mean_of_an_empty_tensor_keeps_the_helper() -> None:
    compiled = torch.compile(lambda x: torch.mean(x * 2))
    out = compiled(torch.zeros(0))
    assert math.isnan(out.item())
    assert "reduce_mean(" in _code_lines(_source(compiled))


# -- elide_expands -----------------------------------------------------------------------
def _op(name: str, args: list[object], output: Value) -> Op:
    return Op(name, KERNEL_SOURCES[name], list(args), (), [output], "")


def _mean_backward() -> tuple[list[Op], list[Value]]:
    """expand(g, (4, 3)) / 12 * y: a mean's backward times a full-size factor."""
    rng = np.random.default_rng(3)
    g = Value(0, np.array(2.0))
    y = Value(1, rng.standard_normal((4, 3)))
    expanded = Value(2, np.broadcast_to(g.array, (4, 3)))
    divided = Value(3, expanded.array / 12.0)
    product = Value(4, divided.array * y.array)
    ops = [
        _op("expand", [g, (4, 3), False], expanded),
        _op("div.Scalar", [expanded, np.array(12.0)], divided),
        _op("mul.Tensor", [divided, y], product),
    ]
    return ops, [g, y, expanded, divided, product]


def test_an_expand_read_by_elementwise_arithmetic_is_dropped() -> None:
    ops, (g, y, _, divided, product) = _mean_backward()
    full = divided.array.copy()
    kept = elide_expands(ops, {id(product)})
    assert [op.name for op in kept] == ["div.Scalar", "mul.Tensor"]
    assert kept[0].args[0] is g  # the division reads the unexpanded seed
    # the division's value is now the one number it computes (the check compares it)
    assert divided.array.shape == () and divided.array == full[0, 0] == 2.0 / 12.0
    assert kept[1].args == [divided, y] and product.array.shape == (4, 3)


def test_an_expand_whose_result_is_kept_or_read_otherwise_stays() -> None:
    ops, (_, _, expanded, divided, product) = _mean_backward()
    assert len(elide_expands(ops, {id(product), id(divided)})) == 3  # divided saved
    ops, (_, _, expanded, divided, product) = _mean_backward()
    assert len(elide_expands(ops, {id(product), id(expanded)})) == 3
    ops, (g, y, expanded, _, product) = _mean_backward()
    ops.append(_op("mm", [expanded, Value(5, np.ones((3, 2)))], Value(6, np.ones(2))))
    assert len(elide_expands(ops, {id(product)})) == 4  # mm is no broadcast


def test_elided_expands_in_a_compiled_function_keep_eager_values() -> None:
    rng = np.random.default_rng(4)
    x0, y0 = rng.standard_normal(4), rng.standard_normal((3, 4))

    def f(x: Any, y: Any) -> Any:
        return (x.expand(3, 4) * y).mean()

    def g(x: Any) -> Any:
        return x.expand(3, 4) * 2  # the expanded product is the output: expand stays

    compiled = torch.compile(f)
    runs = []
    for function in (f, compiled, compiled):
        x = torch.tensor(x0, requires_grad=True)
        y = torch.tensor(y0, requires_grad=True)
        out = function(x, y)
        out.backward()
        runs.append([_bits(out), _bits(x.grad), _bits(y.grad)])
    assert runs[1] == runs[0] and runs[2] == runs[0]
    forward, backward = _code_lines(_source(compiled)).split("def backward")
    assert "expand(" in forward  # saved: y's gradient reads the expanded x
    assert "expand(" not in backward  # the mean's: the seed is divided once
    # hand math: d mean(x * y) / dx_j = sum_i y_ij / 12, / dy_ij = x_j / 12
    np.testing.assert_allclose(np.frombuffer(runs[0][1]), y0.sum(axis=0) / 12)
    np.testing.assert_allclose(
        np.frombuffer(runs[0][2]).reshape(3, 4), np.broadcast_to(x0 / 12, (3, 4))
    )
    kept = torch.compile(g)
    x = torch.tensor(x0, requires_grad=True)
    assert _bits(kept(x)) == np.broadcast_to(x0 * 2, (3, 4)).tobytes()
    assert "expand(" in _code_lines(_source(kept))


# -- the W4 step --------------------------------------------------------------------------
def _w4_inputs() -> tuple[np.ndarray, np.ndarray, list[np.ndarray]]:
    rng = np.random.default_rng(4)
    params = [
        rng.standard_normal((784, 128)) * math.sqrt(2.0 / 784),
        rng.uniform(-0.1, 0.1, 128),
        rng.standard_normal((128, 10)) * math.sqrt(1.0 / 128),
        rng.uniform(-0.1, 0.1, 10),
    ]
    return rng.standard_normal((64, 784)), rng.standard_normal((64, 10)), params


def _w4_run(compiled: bool, steps: int) -> list[list[bytes]]:
    X0, Y0, params0 = _w4_inputs()
    X, Y = torch.tensor(X0), torch.tensor(Y0)
    params = [torch.tensor(p, requires_grad=True) for p in params0]
    W1, b1, W2, b2 = params

    def loss_of(X: Any, Y: Any) -> Any:
        h = torch.relu(torch.matmul(X, W1) + b1)
        return torch.mean((torch.matmul(h, W2) + b2 - Y) ** 2)

    step = torch.compile(loss_of) if compiled else loss_of
    seen = []
    for _ in range(steps):
        for p in params:
            p.grad = None
        loss = step(X, Y)
        loss.backward()
        seen.append([_bits(loss)] + [_bits(p.grad) for p in params])
        with torch.no_grad():
            for p in params:
                p -= 0.01 * p.grad
    if compiled:
        assert step.compiles == 1 and step.breaks == []  # type: ignore[attr-defined]
        code = _code_lines(_source(step))
        for helper in ("relu(", "threshold_backward(", "sum_to_size(", "expand("):
            assert helper not in code
        assert "reduce_mean(" not in code and "div_true(" not in code
    return seen


def test_the_w4_step_compiles_to_numpy_and_equals_eager_to_the_last_bit() -> None:
    assert _w4_run(True, 3) == _w4_run(False, 3)


def test_the_w4_gradients_are_the_hand_written_numpy_ones() -> None:
    X, Y, (W1, b1, W2, b2) = _w4_inputs()
    loss, gW1, gb1, gW2, gb2 = [np.frombuffer(b) for b in _w4_run(True, 1)[0]]
    pre = X @ W1 + b1
    h = np.maximum(pre, 0.0)
    diff = h @ W2 + b2 - Y
    g_out = 2.0 / diff.size * diff
    g_h = (g_out @ W2.T) * (pre > 0)
    assert loss[0] == pytest.approx(np.mean(diff**2), rel=1e-14)
    for got, want in [
        (gW1, X.T @ g_h),
        (gb1, g_h.sum(axis=0)),
        (gW2, h.T @ g_out),
        (gb2, g_out.sum(axis=0)),
    ]:
        np.testing.assert_allclose(got, want.ravel(), rtol=1e-12, atol=1e-15)


# -- the fast call's inline history ----------------------------------------------------------
def test_two_differentiable_outputs_hang_from_one_node_in_order() -> None:
    compiled = torch.compile(lambda a, b: (a * 2, (b * 3).sum()))
    for _ in range(3):  # the first call traces, the next ones take the fast call
        a = torch.ones(2, 3, requires_grad=True)
        b = torch.ones(4, requires_grad=True)
        first, second = compiled(a, b)
        node = first.grad_fn
        assert second.grad_fn is node and node.name() == "CompiledFunctionBackward"
        assert (first.output_nr, second.output_nr) == (0, 1)
        assert node._input_metadata == (
            ((2, 3), np.dtype("float32")),
            ((), np.dtype("float32")),
        )
        second.backward()
        assert b.grad.tolist() == [3.0] * 4
        assert a.grad.tolist() == [[0.0] * 3] * 2  # one node: zeros for output 0


# -- nn.Linear's addmm and MSELoss ---------------------------------------------------------
def _eager_and_compiled(
    function: Any, make: Any, calls: int = 2
) -> tuple[list[list[bytes]], Any]:
    """Per run (eager, then `calls` compiled): the output's and the gradients' bits."""
    compiled = torch.compile(function)
    runs = []
    for step in [function] + [compiled] * calls:
        tensors = make()
        out = step(*tensors)
        out.backward()
        runs.append([_bits(out)] + [_bits(t.grad) for t in tensors if t.requires_grad])
    return runs, compiled


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_linear_and_mse_loss_render_as_numpy_into_fresh_temporaries(
    dtype: Any, reduction: str
) -> None:
    rng = np.random.default_rng(5)
    x0, w0 = rng.standard_normal((6, 4)), rng.standard_normal((3, 4))
    b0 = rng.standard_normal(3)
    y0 = rng.standard_normal((6, 3))
    x0[1, 2] = math.nan  # a NaN travels the same way through both

    def make() -> list[Any]:
        return [
            torch.tensor(x0, dtype=dtype),
            torch.tensor(w0, dtype=dtype, requires_grad=True),
            torch.tensor(b0, dtype=dtype, requires_grad=True),
            torch.tensor(y0, dtype=dtype),
        ]

    def f(x: Any, w: Any, b: Any, y: Any) -> Any:
        out = torch.nn.functional.linear(x, w, b)
        return torch.nn.functional.mse_loss(out, y, reduction=reduction)

    runs, compiled = _eager_and_compiled(f, make)
    assert runs[1] == runs[0] and runs[2] == runs[0]
    assert compiled.breaks == []
    code = _code_lines(_source(compiled))
    for helper in ("addmm(", "mse_loss(", "mse_loss_backward("):
        assert helper not in code
    assert code.count(":= ") == 3  # the product, the difference twice
    assert math.isnan(np.frombuffer(runs[0][0], dtype.numpy)[0])  # type: ignore[attr-defined]
    # hand math, on the data without the NaN
    x0[1, 2] = 0.0
    tensors = make()
    loss = compiled(*tensors)
    loss.backward()
    x, w, b, y = (a.astype(np.float64) for a in (x0, w0, b0, y0))
    d = x @ w.T + b - y
    scale = 1 / d.size if reduction == "mean" else 1.0
    rel = 1e-5 if dtype == torch.float32 else 1e-12
    assert loss.item() == pytest.approx(float(np.sum(d * d)) * scale, rel=rel)
    np.testing.assert_allclose(tensors[2].grad.numpy(), 2 * scale * d.sum(0), rtol=rel)


def test_addmm_with_other_factors_and_mse_without_reduction_keep_the_helpers() -> None:
    rng = np.random.default_rng(6)
    a0, b0, c0 = (rng.standard_normal(s) for s in ((2, 3), (2, 4), (4, 3)))

    def f(a: Any, b: Any, c: Any) -> Any:
        scaled = torch.addmm(a, b, c, beta=0.5, alpha=2.0)
        return torch.nn.functional.mse_loss(scaled, a.detach(), reduction="none").sum()

    def make() -> list[Any]:
        return [torch.tensor(t, requires_grad=True) for t in (a0, b0, c0)]

    runs, compiled = _eager_and_compiled(f, make)
    assert runs[1] == runs[0] and runs[2] == runs[0]
    forward, backward = _code_lines(_source(compiled)).split("def backward")
    assert "addmm(" in forward and "mse_loss(" in forward  # beta, alpha; 'none'
    assert "mse_loss_backward(" not in backward  # its backward is rendered
    hand = 0.5 * a0 + 2.0 * (b0 @ c0)
    assert np.frombuffer(runs[0][0])[0] == pytest.approx(np.sum((hand - a0) ** 2))
