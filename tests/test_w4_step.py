"""Issue 14, W4 (helper "w4"): the MLP step's shortcuts give what the general paths
gave, bit for bit, and stay out of the cases they must not take.

- relu of a C-contiguous float32/float64 array is numpy's maximum against zeros, once
  a probe has shown that maximum to be relu's select `x < 0 ? 0 : x` on this build
  (signed zeros and NaN payloads kept), else the select;
- mm's kernel multiplies two fitting float or complex matrices without its checks;
- matmul of two matrices goes to mm first;
- saved_array reads a SavedVariable's (an output's) array and a (tensor, version)
  pair's without unpacking them (no Tensor rebuilt), with unpack's checks;
- div of a spread (mean's backward) divides the numpy number with numpy's scalar
  arithmetic;
- the mean of everything divides the sum's numpy scalar the same way;
- mm's backward for a column-major matrix (nn.Linear's weight.t()) computes the
  product transposed, as PyTorch's mm_mat1/mm_mat2_backward, so the weight's
  gradient is row-major (no mixed-layout passes in the optimizer).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import gradgen
from gradgen.helpers import arrays
from gradgen.helpers.arrays import tensor_forms_only
from gradgen.helpers.arrays._common import saved_array
from gradgen.helpers.arrays.linalg import mm_mat1_backward, mm_mat2_backward
from gradgen.numpy_kernels import activation, linalg
from gradgen.numpy_kernels import reduction as reductions
from gradgen.numpy_kernels.linalg import _column_major
from torch_oracle import oracle

# Values whose bits a shortcut could lose: signed zeros, infinities, NaNs (a payload,
# a negative one), subnormals.
SPECIAL = [0.0, -0.0, 1.5, -2.25, np.inf, -np.inf, np.nan, 5e-324, -3e-310, 1e300]
NAN_BITS = (0x7FF8000000000ABC, -0x0007FFFFFFFFF001)


def _specials(dtype: Any, length: int) -> np.ndarray:
    nans = np.array(NAN_BITS, np.int64).view(np.float64)
    with np.errstate(all="ignore"):
        values = np.concatenate([np.array(SPECIAL), nans]).astype(dtype)
    return np.resize(values, length)


def _bits(array: Any) -> bytes:
    values = np.ascontiguousarray(array)
    return values.dtype.str.encode() + repr(values.shape).encode() + values.tobytes()


def _select(x: np.ndarray) -> np.ndarray:
    """relu by its definition: 0 where x < 0, else x's own bits."""
    return np.where(x < 0, np.zeros((), x.dtype), x)


@pytest.fixture
def fresh_probe() -> Iterator[None]:
    """relu's probe forgotten for the test, restored after it."""
    by_maximum = set(activation._RELU_BY_MAXIMUM)
    unprobed = set(activation._RELU_UNPROBED)
    activation._RELU_BY_MAXIMUM.clear()
    activation._RELU_UNPROBED.update({np.dtype(np.float32), np.dtype(np.float64)})
    yield
    activation._RELU_BY_MAXIMUM.clear()
    activation._RELU_BY_MAXIMUM.update(by_maximum)
    activation._RELU_UNPROBED.clear()
    activation._RELU_UNPROBED.update(unprobed)


# -- relu ------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("length", [1, 7, 12, 33, 100, 1000])
def test_relu_keeps_signed_zeros_and_nan_bits(dtype: Any, length: int) -> None:
    x = _specials(dtype, length)
    assert _bits(activation.relu(x)) == _bits(_select(x))
    y = x.reshape(1, -1) if length % 2 else x.reshape(2, -1)
    assert _bits(activation.relu(y)) == _bits(_select(y))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_relu_of_layouts_the_maximum_does_not_take(dtype: Any) -> None:
    x = _specials(dtype, 600).reshape(20, 30)
    for view in (x.T, x[:, ::2], x[::-1], np.asfortranarray(x)):
        assert not view.flags.c_contiguous
        assert _bits(activation.relu(view)) == _bits(_select(view))
    scalar = activation.relu(np.asarray(-0.0, dtype))
    assert scalar.shape == () and np.signbit(scalar)
    assert activation.relu(np.asarray(-2.0, dtype)).tolist() == 0.0


def test_relu_result_is_a_fresh_writeable_array() -> None:
    x = np.array([-1.0, 2.0, -0.0])
    result = activation.relu(x)
    assert result.flags.writeable and result.flags.owndata
    result[0] = 9.0
    assert x.tolist()[0] == -1.0


@pytest.mark.usefixtures("fresh_probe")
def test_the_probe_decides_once_per_dtype() -> None:
    x = _specials(np.float64, 50)
    assert np.dtype(np.float64) in activation._RELU_UNPROBED
    assert _bits(activation.relu(x)) == _bits(_select(x))
    assert np.dtype(np.float64) not in activation._RELU_UNPROBED
    assert np.dtype(np.float32) in activation._RELU_UNPROBED  # not asked yet
    # On this machine's numpy, maximum either is the select or it is not: the probe's
    # answer agrees with a direct check.
    same = _bits(activation._maximum_of_zero(x)) == _bits(_select(x))
    assert (np.dtype(np.float64) in activation._RELU_BY_MAXIMUM) == same


@pytest.mark.usefixtures("fresh_probe")
def test_a_maximum_that_loses_negative_zero_keeps_the_select(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[np.ndarray] = []

    def ordered_maximum(x: np.ndarray) -> np.ndarray:
        calls.append(x)
        return np.where(x <= 0, np.zeros((), x.dtype), x)  # -0.0 becomes 0.0

    monkeypatch.setattr(activation, "_maximum_of_zero", ordered_maximum)
    x = np.array([-0.0, 1.0, -3.0])
    result = activation.relu(x)
    assert calls  # the probe ran the maximum
    assert np.dtype(np.float64) not in activation._RELU_BY_MAXIMUM
    assert np.signbit(result[0]) and result.tolist() == [0.0, 1.0, 0.0]
    calls.clear()
    activation.relu(x)
    assert not calls  # decided: not asked again


@pytest.mark.usefixtures("fresh_probe")
def test_a_maximum_that_quiets_nans_keeps_the_select(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def quieting_maximum(x: np.ndarray) -> np.ndarray:
        result = _select(x)
        result[np.isnan(result)] = np.nan
        return result

    monkeypatch.setattr(activation, "_maximum_of_zero", quieting_maximum)
    x = _specials(np.float32, 40)
    assert _bits(activation.relu(x)) == _bits(_select(x))
    assert np.dtype(np.float32) not in activation._RELU_BY_MAXIMUM


def test_relu_other_dtypes_and_errors_unchanged() -> None:
    assert activation.relu(np.array([-2, 0, 3])).tolist() == [0, 0, 3]
    assert activation.relu(np.array([-2, 3], np.int8)).dtype == np.int8
    with pytest.raises(RuntimeError, match="Boolean inputs not supported for relu"):
        activation.relu(np.array([True, False]))
    with pytest.raises(NotImplementedError, match="clamp is not supported for complex"):
        activation.relu(np.array([1j, -1.0]))


def test_relu_forward_and_backward_equal_torchs_bits() -> None:
    x = _specials(np.float64, 64).reshape(8, 8)
    g = np.random.default_rng(0).standard_normal((8, 8))
    leaf = gradgen.tensor(x, requires_grad=True)
    out = gradgen.relu(leaf)
    out.backward(gradgen.tensor(g))
    assert leaf.grad is not None

    def torch_relu(torch: Any) -> list[Any]:
        t = torch.tensor(x, requires_grad=True)
        y = torch.relu(t)
        y.backward(torch.tensor(g))
        return [y.detach(), t.grad]

    # (a recorded answer keeps values and zeros' signs; NaN bits: the tests above)
    for got, want in zip(
        [out.detach().numpy(), leaf.grad.numpy()], oracle("relu", torch_relu)
    ):
        np.testing.assert_array_equal(got, want)
        numbers = ~np.isnan(got)
        assert np.array_equal(np.signbit(got[numbers]), np.signbit(want[numbers]))


# -- mm and matmul -------------------------------------------------------------------


@pytest.mark.parametrize(
    "dtype", [np.float32, np.float64, np.complex128, np.int64, np.float16]
)
def test_mm_kernel_is_numpys_matmul(dtype: Any) -> None:
    rng = np.random.default_rng(2)
    a = (rng.standard_normal((3, 4)) * 4).astype(dtype)
    b = (rng.standard_normal((4, 2)) * 4).astype(dtype)
    assert _bits(linalg.mm(a, b)) == _bits(np.matmul(a, b))
    assert _bits(linalg.mm(a.T.copy().T, b[::1])) == _bits(np.matmul(a, b))


def test_mm_kernel_checks_stay_for_what_does_not_fit() -> None:
    a, b = np.ones((2, 3)), np.ones((4, 2))
    with pytest.raises(RuntimeError, match=r"cannot be multiplied \(2x3 and 4x2\)"):
        linalg.mm(a, b)
    with pytest.raises(RuntimeError, match="self must be a matrix"):
        linalg.mm(np.ones(3), b)
    with pytest.raises(RuntimeError, match="mat2 must be a matrix"):
        linalg.mm(a, np.ones(3))
    with pytest.raises(RuntimeError, match="expected m1 and m2 to have the same dtype"):
        linalg.mm(a, np.ones((3, 2), np.float32))
    with pytest.raises(RuntimeError, match="addmm_impl_cpu_"):
        linalg.mm(np.ones((2, 3), bool), np.ones((3, 2), bool))


def test_matmul_of_matrices_and_other_ranks_records_pytorchs_nodes() -> None:
    rng = np.random.default_rng(3)
    m = gradgen.tensor(rng.standard_normal((3, 4)), requires_grad=True)
    n = gradgen.tensor(rng.standard_normal((4, 2)), requires_grad=True)
    v = gradgen.tensor(rng.standard_normal(4), requires_grad=True)
    products = {
        "mm": gradgen.matmul(m, n),
        "mv": gradgen.matmul(m, v),
        "dot": gradgen.matmul(v, v),
    }
    for name, product in products.items():
        assert product.grad_fn is not None
        assert type(product.grad_fn).__name__.lower().startswith(name)
    np.testing.assert_array_equal(
        products["mm"].detach().numpy(), m.detach().numpy() @ n.detach().numpy()
    )
    with pytest.raises(RuntimeError, match="both arguments to matmul need"):
        gradgen.matmul(gradgen.tensor(1.0), m)


def test_w4_step_gradients_equal_torchs() -> None:
    """The bench's W4 step at a small size: zero grads, relu MLP, MSE, SGD update."""
    rng = np.random.default_rng(4)
    x0, y0 = rng.standard_normal((8, 12)), rng.standard_normal((8, 3))
    params0 = [
        rng.standard_normal((12, 6)),
        rng.uniform(-0.1, 0.1, 6),
        rng.standard_normal((6, 3)),
        rng.uniform(-0.1, 0.1, 3),
    ]

    def run(lib: Any) -> list[Any]:
        x, y = lib.tensor(x0), lib.tensor(y0)
        params = [lib.tensor(p, requires_grad=True) for p in params0]
        w1, b1, w2, b2 = params
        grads = []
        for _ in range(2):
            for p in params:
                p.grad = None
            h = lib.relu(lib.matmul(x, w1) + b1)
            loss = lib.mean((lib.matmul(h, w2) + b2 - y) ** 2)
            loss.backward()
            with lib.no_grad():
                for p in params:
                    p -= 0.01 * p.grad
            grads += [p.grad.detach().clone() for p in params]
        return grads + [p.detach() for p in params]

    got = [t.numpy() for t in run(gradgen)]
    want = oracle("w4", run)
    assert len(got) == len(want) == 12
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-13, atol=1e-15)


# -- saved_array: SavedVariables and (tensor, version) pairs without unpack ------------


def _relu_node(x: Any) -> Any:
    leaf = gradgen.tensor(x, requires_grad=True)
    out = gradgen.relu(leaf * 1.0)
    return leaf, out, out.grad_fn


def test_saved_array_of_a_saved_output_is_its_array_unchanged() -> None:
    _, out, node = _relu_node(np.array([-1.0, 2.0, -0.0]))
    assert type(node.result_).__name__ == "SavedVariable"
    assert saved_array(node.result_, node) is out._data
    assert node.result_.unpack(node)._data is out._data  # what unpack hands over


def test_saved_array_of_a_changed_output_raises_unpacks_error() -> None:
    _, out, node = _relu_node(np.array([-1.0, 2.0]))
    with gradgen.no_grad():
        out.add_(1.0)
    with pytest.raises(RuntimeError) as unpacked:
        node.result_.unpack(node)
    with pytest.raises(RuntimeError) as got:
        saved_array(node.result_, node)
    assert str(got.value) == str(unpacked.value)
    assert "modified by an inplace operation" in str(got.value)


def test_saved_array_of_a_released_output_raises_backward_twice() -> None:
    leaf, out, node = _relu_node(np.array([-1.0, 2.0]))
    out.sum().backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second"):
        saved_array(node.result_, node)


def test_saved_array_under_saved_tensor_hooks_unpacks_through_them() -> None:
    seen: list[Any] = []

    def unpack(value: Any) -> Any:
        seen.append(value)
        return value

    with gradgen.autograd.graph.saved_tensors_hooks(lambda t: t, unpack):
        _, out, node = _relu_node(np.array([-1.0, 2.0]))
    assert saved_array(node.result_, node).tolist() == [0.0, 2.0]
    assert len(seen) == 1


def test_saved_array_of_a_pair_checks_its_version() -> None:
    w = gradgen.tensor(np.ones((2, 2)), requires_grad=True)
    with gradgen.no_grad():
        w.mul_(2.0)  # w has a version counter now: saved as (w, version)
    h = gradgen.tensor(np.eye(2), requires_grad=True) * 1.0
    out = gradgen.matmul(h, w)
    node = out.grad_fn
    assert isinstance(node.mat2_, tuple)
    assert saved_array(node.mat2_, node) is w._data
    with gradgen.no_grad():
        w.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        saved_array(node.mat2_, node)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.sum().backward()


# -- div of a spread (mean's backward) -------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize("divisor", [1, 3, 640, 16777217, 2.5, 0, -7])
def test_div_of_a_spread_is_true_divides_quotient_spread(
    dtype: Any, divisor: Any
) -> None:
    for value in (1.0, -0.0, 3.7, np.inf, np.nan, 6e-8):
        number = dtype(value)
        spread = arrays.expand(number, (3, 4))
        with np.errstate(all="ignore"):
            got = arrays.div(spread, divisor)
            if dtype is np.float16 and abs(divisor) >= 65520:
                # A divisor float16 cannot hold: float32 arithmetic, rounded to
                # float16, as PyTorch (tests/test_float16_numbers.py), not numpy's
                # division by inf.
                want = np.true_divide(
                    np.broadcast_to(number, (3, 4)).astype(np.float32),
                    np.float32(divisor),
                ).astype(np.float16)
            else:
                want = np.true_divide(np.broadcast_to(number, (3, 4)), divisor)
        assert _bits(got) == _bits(want)
        assert got.strides == (0, 0) and not got.flags.writeable


def test_div_of_other_arrays_takes_the_general_path() -> None:
    spread = arrays.expand(np.float64(3.0), (2, 2))
    as_ints = spread.view(np.int64)  # a view in another dtype of the same number
    assert arrays.div(as_ints, 2).dtype == np.float32  # true division of ints
    ramp = np.arange(4.0)
    assert arrays.div(ramp, 2).tolist() == [0.0, 0.5, 1.0, 1.5]
    assert arrays.div(spread, 2, "floor").tolist() == [[1.0, 1.0], [1.0, 1.0]]
    empty = arrays.expand(np.float64(1.0), (0, 3))
    assert arrays.div(empty, 2).shape == (0, 3)


def test_expand_of_a_writeable_0d_array_is_read_only() -> None:
    zero_d = np.array(2.0)
    spread = arrays.expand(zero_d, (2, 3))
    assert not spread.flags.writeable and spread.strides == (0, 0)
    assert not arrays.expand(np.float32(2.0), (2,)).flags.writeable


def test_mean_backward_equals_the_tensor_form_and_torch() -> None:
    x0 = np.random.default_rng(5).standard_normal((6, 7)).astype(np.float32)
    grads = []
    for tensor_form in (False, True):
        x = gradgen.tensor(x0, requires_grad=True)
        loss = gradgen.mean(x * 2.0)
        if tensor_form:
            with tensor_forms_only():
                loss.backward()
        else:
            loss.backward()
        assert x.grad is not None
        grads.append(x.grad.numpy())
    assert _bits(grads[0]) == _bits(grads[1])

    def torch_grad(torch: Any) -> Any:
        t = torch.tensor(x0, requires_grad=True)
        torch.mean(t * 2.0).backward()
        return t.grad

    assert _bits(grads[0]) == _bits(oracle("mean", torch_grad))


# -- mean of everything (the loss) -----------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.complex128])
@pytest.mark.parametrize("shape", [(64, 10), (7,), (), (300, 301), (3, 0)])
def test_mean_of_everything_is_the_sum_divided_in_its_dtype(
    dtype: Any, shape: tuple[int, ...]
) -> None:
    x = (np.random.default_rng(6).standard_normal(shape) * 1e3).astype(dtype)
    # float16 accumulates in float32 and rounds once, as PyTorch's mean
    # (tests/test_float16_numbers.py)
    accumulator = np.float32 if dtype is np.float16 and x.size else x.dtype
    with np.errstate(all="ignore"):
        total = np.add.reduce(x, axis=None, dtype=accumulator)
        want = np.true_divide(total, x.size if x.size else 0.0).astype(x.dtype)
        got = reductions.reduce_mean(x, None, False, None)
    assert _bits(np.asarray(got)) == _bits(np.asarray(want))
    assert np.asarray(got).dtype == x.dtype


def test_mean_with_dims_keepdim_or_dtype_keeps_the_general_path() -> None:
    x = np.arange(12.0).reshape(3, 4)
    assert reductions.reduce_mean(x, None, True, None).shape == (1, 1)
    assert reductions.reduce_mean(x, [0], False, None).tolist() == [4.0, 5.0, 6.0, 7.0]
    with pytest.raises(RuntimeError, match="could not infer output dtype"):
        reductions.reduce_mean(np.arange(3), None, False, None)


def test_mean_forward_equals_torchs() -> None:
    # (numpy's pairwise sum and PyTorch's differ in the last bits: both within 1e-15)
    x0 = np.random.default_rng(7).standard_normal((64, 10)) * 3
    got = gradgen.mean(gradgen.tensor(x0)).item()
    want = oracle("mean forward", lambda torch: torch.mean(torch.tensor(x0)).item())
    assert got == pytest.approx(want, rel=1e-14)
    assert got == np.mean(x0)


# -- mm's backward for a column-major matrix (nn.Linear's weight.t()) ------------------


def test_linear_weight_gradient_is_row_major_as_pytorchs() -> None:
    rng = np.random.default_rng(8)
    x0, w0, b0 = rng.standard_normal((5, 7)), rng.standard_normal((3, 7)), np.ones(3)
    layer = gradgen.nn.Linear(7, 3, dtype=gradgen.float64)
    with gradgen.no_grad():
        layer.weight.copy_(gradgen.tensor(w0))
        layer.bias.copy_(gradgen.tensor(b0))
    (layer(gradgen.tensor(x0)) ** 2).sum().backward()
    grad = layer.weight.grad
    assert grad is not None

    def torch_grad(torch: Any) -> list[Any]:
        t = torch.nn.Linear(7, 3, dtype=torch.float64)
        with torch.no_grad():
            t.weight.copy_(torch.tensor(w0))
            t.bias.copy_(torch.tensor(b0))
        (t(torch.tensor(x0)) ** 2).sum().backward()
        return [t.weight.grad, list(t.weight.grad.stride())]

    want, strides = oracle("linear weight grad", torch_grad)
    assert list(grad.stride()) == strides == [7, 1]
    np.testing.assert_allclose(grad.numpy(), want, rtol=1e-13)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
def test_mm_backward_of_a_column_major_matrix_is_computed_transposed(
    dtype: Any,
) -> None:
    rng = np.random.default_rng(9)
    grad = rng.standard_normal((4, 3)).astype(dtype)
    mat1 = rng.standard_normal((4, 6)).astype(dtype)  # (4, 6) @ (6, 3)
    mat2 = rng.standard_normal((6, 3)).astype(dtype)
    if dtype is np.complex128:
        grad, mat1, mat2 = grad * (1 + 1j), mat1 * (1 - 2j), mat2 * 1j
    column = ((6, 3), (1, 6), "strided")  # mat2 as w.t() of a row-major (3, 6) w
    row = ((6, 3), (3, 1), "strided")
    got = mm_mat2_backward(grad, mat1, *column, 1)
    want = np.matmul(grad.T, np.conj(mat1)).T
    assert got.flags.f_contiguous and _bits(got) == _bits(want)
    plain = mm_mat2_backward(grad, mat1, *row, 1)
    assert plain.flags.c_contiguous
    assert _bits(plain) == _bits(np.matmul(np.conj(mat1).T, grad))
    np.testing.assert_allclose(got, plain, rtol=1e-5)
    # mat1 column-major: (mat2^* @ grad^T)^T
    got1 = mm_mat1_backward(grad, mat2, (4, 6), (1, 4), "strided", 1)
    assert got1.flags.f_contiguous
    assert _bits(got1) == _bits(np.matmul(np.conj(mat2), grad.T).T)
    assert _bits(mm_mat1_backward(grad, mat2, (4, 6), (6, 1), "strided", 1)) == _bits(
        np.matmul(grad, np.conj(mat2).T)
    )
    scaled = mm_mat2_backward(grad, mat1, *column, 2.5)
    assert _bits(scaled) == _bits(want * 2.5)


def test_column_major_is_pytorchs_test() -> None:
    assert _column_major((6, 3), (1, 6), "strided")
    assert not _column_major((6, 3), (3, 1), "strided")
    assert not _column_major((6, 3), (1, 6), "sparse")
    assert _column_major((1, 1), (1, 1), "strided")  # both tests hold: transposed
    assert not _column_major((6, 3), (1, 7), "strided")  # a column slice


@pytest.mark.parametrize("alpha", [1, 0.5])
def test_addmm_through_a_transpose_array_and_tensor_forms_agree(alpha: float) -> None:
    rng = np.random.default_rng(10)
    values = [
        rng.standard_normal(3),
        rng.standard_normal((5, 4)),
        rng.standard_normal((3, 4)),
    ]
    grads = []
    for tensor_form in (False, True):
        leaves = [gradgen.tensor(v, requires_grad=True) for v in values]
        b, x, w = leaves
        out = gradgen.addmm(b, x.t().t(), w.t(), alpha=alpha)
        if tensor_form:
            with tensor_forms_only():
                (out * out).sum().backward()
        else:
            (out * out).sum().backward()
        grads.append([leaf.grad.numpy() for leaf in leaves])
    for got, want in zip(*grads):
        assert _bits(got) == _bits(want)
    assert grads[0][2].flags.c_contiguous  # w's gradient: row-major, as w


def test_linear_gradgrad_through_the_transposed_formula() -> None:
    rng = np.random.default_rng(11)
    x = gradgen.tensor(rng.standard_normal((4, 3)), requires_grad=True)
    w = gradgen.tensor(rng.standard_normal((2, 3)), requires_grad=True)
    assert gradgen.autograd.gradcheck(
        lambda x, w: gradgen.nn.functional.linear(x, w), (x, w)
    )
    assert gradgen.autograd.gradgradcheck(
        lambda x, w: gradgen.nn.functional.linear(x, w, None), (x, w)
    )


# -- addmm's kernel and nn.Linear's forward ------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
@pytest.mark.parametrize("bias_shape", [(4,), (5, 4)])
def test_addmm_kernel_common_case_equals_the_general_steps(
    dtype: Any, bias_shape: tuple[int, ...]
) -> None:
    rng = np.random.default_rng(12)
    bias = _specials(dtype, int(np.prod(bias_shape))).reshape(bias_shape)
    x = rng.standard_normal((5, 8)).astype(dtype)
    w = rng.standard_normal((4, 8)).astype(dtype)
    with np.errstate(all="ignore"):
        got = linalg.addmm(bias, x, w.T, 1, 1)
        general = linalg.addmm(bias, x, w.T, 1.0, 1.0)  # (a float: the steps)
        by_hand = np.broadcast_to(bias, (5, 4)) + np.matmul(x, w.T)
    assert _bits(got) == _bits(general) == _bits(by_hand)
    assert got.flags.c_contiguous and got.flags.writeable


def test_addmm_kernel_checks_stay_for_what_does_not_fit() -> None:
    x, w = np.ones((5, 8)), np.ones((4, 8))
    with pytest.raises(RuntimeError, match=r"The expanded size of the tensor \(4\)"):
        linalg.addmm(np.ones(3), x, w.T, 1, 1)
    with pytest.raises(RuntimeError, match="self and mat2 must have the same dtype"):
        linalg.addmm(np.ones(4, np.float32), x, w.T, 1, 1)
    with pytest.raises(RuntimeError, match=r"cannot be multiplied \(5x8 and 7x4\)"):
        linalg.addmm(np.ones(4), x, np.ones((7, 4)), 1, 1)
    # a bias broadcast from (1, 4) or a scalar, beta and alpha: the general steps
    assert linalg.addmm(np.ones((1, 4)), x, w.T, 1, 1).tolist() == [[9.0] * 4] * 5
    assert linalg.addmm(np.ones(4), x, w.T, 2, 0.5).tolist() == [[6.0] * 4] * 5
    assert linalg.addmm(np.array(np.nan), x, w.T, 0, 1).tolist() == [[8.0] * 4] * 5


def test_linear_forward_reads_a_replaced_weight() -> None:
    layer = gradgen.nn.Linear(3, 2, dtype=gradgen.float64)
    x = gradgen.tensor(np.ones((1, 3)))
    with gradgen.no_grad():
        layer.weight.fill_(1.0)
        layer.bias.fill_(0.5)
    assert layer(x).tolist() == [[3.5, 3.5]]
    del layer.weight
    layer.weight = gradgen.tensor(np.full((2, 3), 2.0))  # a plain attribute now
    assert layer(x).tolist() == [[6.5, 6.5]]
    no_bias = gradgen.nn.Linear(3, 2, bias=False, dtype=gradgen.float64)
    with gradgen.no_grad():
        no_bias.weight.fill_(1.0)
    assert no_bias(x).tolist() == [[3.0, 3.0]]

    class Doubled(gradgen.nn.Linear):
        @property  # type: ignore[misc]
        def weight(self) -> Any:  # a subclass's weight: read through the attribute
            return self._parameters["weight"] * 2.0

    doubled = gradgen.nn.Linear(3, 2, dtype=gradgen.float64)
    doubled.__class__ = Doubled  # as a parametrization swaps the class
    with gradgen.no_grad():
        doubled._parameters["weight"].fill_(1.0)
        doubled.bias.fill_(0.0)
    assert doubled(x).tolist() == [[6.0, 6.0]]


def test_mlp_in_nn_form_trains_as_pytorchs() -> None:
    """W4 as users write it: Linear, ReLU, Linear, mse_loss, SGD (two steps)."""
    rng = np.random.default_rng(13)
    x0, y0 = rng.standard_normal((8, 12)), rng.standard_normal((8, 3))
    w1, b1 = rng.standard_normal((6, 12)), rng.standard_normal(6)
    w2, b2 = rng.standard_normal((3, 6)), rng.standard_normal(3)

    def run(lib: Any) -> list[Any]:
        first = lib.nn.Linear(12, 6, dtype=lib.float64)
        second = lib.nn.Linear(6, 3, dtype=lib.float64)
        with lib.no_grad():
            for p, v in zip(
                [first.weight, first.bias, second.weight, second.bias],
                [w1, b1, w2, b2],
            ):
                p.copy_(lib.tensor(v))
        model = lib.nn.Sequential(first, lib.nn.ReLU(), second)
        opt = lib.optim.SGD(model.parameters(), lr=0.05)
        for _ in range(2):
            opt.zero_grad()
            lib.nn.functional.mse_loss(model(lib.tensor(x0)), lib.tensor(y0)).backward()
            opt.step()
        return [p.detach() for p in model.parameters()] + [
            list(p.grad.stride()) for p in model.parameters()
        ]

    got = run(gradgen)
    want = oracle("nn mlp", run)
    for g, w in zip(got[:4], want[:4]):
        np.testing.assert_allclose(g.numpy(), w, rtol=1e-13, atol=1e-15)
    assert [list(s) for s in got[4:]] == [list(s) for s in want[4:]]


# -- saved sizes and numel -----------------------------------------------------------


def test_saved_sizes_strides_and_numel_are_plain_values_as_pytorchs() -> None:
    a = gradgen.tensor(np.ones((3, 4)), requires_grad=True)
    b = gradgen.tensor(np.ones((5, 4)), requires_grad=True)
    product = gradgen.mm(a, b.t())
    node = product.grad_fn
    mean = gradgen.mean(a).grad_fn
    got = [
        node._saved_self_sym_sizes,
        node._saved_mat2_sym_sizes,
        node._saved_mat2_sym_strides,
        mean._saved_self_sym_numel,
        mean._saved_self_sym_sizes,
    ]
    assert [type(v) for v in got] == [tuple, tuple, tuple, int, tuple]
    assert all(type(e) is int for v in got if type(v) is tuple for e in v)

    def torch_saved(torch: Any) -> list[Any]:
        x = torch.ones((3, 4), dtype=torch.float64, requires_grad=True)
        y = torch.ones((5, 4), dtype=torch.float64, requires_grad=True)
        n = torch.mm(x, y.t()).grad_fn
        m = torch.mean(x).grad_fn
        return [
            list(n._saved_self_sym_sizes),
            list(n._saved_mat2_sym_sizes),
            list(n._saved_mat2_sym_strides),
            m._saved_self_sym_numel,
            list(m._saved_self_sym_sizes),
        ]

    want = oracle("saved metadata", torch_saved)
    assert [list(v) if type(v) is tuple else v for v in got] == [
        list(v) if isinstance(v, (list, tuple)) else v for v in want
    ]


@pytest.mark.usefixtures("fresh_probe")
def test_the_probe_runs_under_floating_point_errors_that_raise() -> None:
    x = np.array([-1.0, np.nan, 2.0, -0.0], np.float32)
    with np.errstate(all="raise"):
        result = activation.relu(x)
    assert _bits(result) == _bits(_select(x))
    assert np.dtype(np.float32) not in activation._RELU_UNPROBED
