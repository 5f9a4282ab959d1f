"""Tensor.exponential_ as a YAML operator (PyTorch's schema, its errors and gradient)
and gumbel_softmax, whose Gumbel noise it draws (-log of Exponential(1) draws, as
PyTorch's gumbel_softmax), also under gradgen.compile. PyTorch's answers are recorded
in tests/golden/ (see torch_oracle.py)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

import gradgen
import gradgen.nn.functional as GF
from torch_oracle import oracle, outcome

LOGITS = np.random.default_rng(909).normal(size=(5, 4))


def _error(compute: Any) -> tuple[str, str]:
    error = outcome(compute)
    assert isinstance(error, Exception), error
    return type(error).__name__, str(error)


# -- the draws --------------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("lambd", [1.0, 2.5])
def test_draws_have_the_exponential_mean_variance_and_median(
    dtype: str, lambd: float
) -> None:
    """Mean 1/lambd, variance 1/lambd^2, median ln 2/lambd; 200,000 draws give standard
    errors of 0.22% (mean), 0.63% (variance), 0.11 points (the fraction below the
    median): the tolerances are ~5 of them."""
    gradgen.manual_seed(1234)
    draws = gradgen.empty(200_000, dtype=getattr(gradgen, dtype)).exponential_(lambd)
    values = draws.numpy().astype(np.float64)
    assert draws.dtype == getattr(gradgen, dtype)
    assert values.min() > 0.0
    assert abs(values.mean() * lambd - 1.0) < 0.011
    assert abs(values.var() * lambd**2 - 1.0) < 0.032
    assert abs((values < math.log(2.0) / lambd).mean() - 0.5) < 0.0056


def test_float16_and_zero_dimensional_draws() -> None:
    gradgen.manual_seed(3)
    half = gradgen.empty(10_000, dtype=gradgen.float16).exponential_()
    assert half.dtype == gradgen.float16
    assert abs(half.numpy().astype(np.float64).mean() - 1.0) < 0.06
    scalar = gradgen.tensor(0.0).exponential_(4.0)
    assert scalar.shape == () and scalar.item() > 0.0


def test_infinite_rate_draws_zeros_as_pytorch() -> None:
    ours = gradgen.empty(4).exponential_(math.inf).numpy()
    theirs = oracle(
        "zeros", lambda torch: torch.empty(4).exponential_(math.inf).numpy()
    )
    np.testing.assert_array_equal(ours, theirs)
    np.testing.assert_array_equal(ours, np.zeros(4, np.float32))


def test_manual_seed_and_generators_give_the_same_stream() -> None:
    gradgen.manual_seed(77)
    first = gradgen.empty(6, dtype=gradgen.float64).exponential_().numpy()
    gradgen.manual_seed(77)
    again = gradgen.empty(6, dtype=gradgen.float64).exponential_().numpy()
    np.testing.assert_array_equal(first, again)
    following = gradgen.empty(6, dtype=gradgen.float64).exponential_().numpy()
    assert not np.array_equal(first, following)
    # A generator of its own: the same seed, the same stream; the default one untouched.
    gradgen.manual_seed(77)
    mine = gradgen.Generator().manual_seed(77)
    drawn = gradgen.empty(6, dtype=gradgen.float64).exponential_(generator=mine)
    np.testing.assert_array_equal(drawn.numpy(), first)
    default = gradgen.empty(6, dtype=gradgen.float64).exponential_().numpy()
    np.testing.assert_array_equal(default, first)


def test_rate_scales_the_same_draws() -> None:
    gradgen.manual_seed(5)
    one = gradgen.empty(8, dtype=gradgen.float64).exponential_(1.0).numpy()
    gradgen.manual_seed(5)
    four = gradgen.empty(8, dtype=gradgen.float64).exponential_(4.0).numpy()
    np.testing.assert_allclose(four, one / 4.0, rtol=1e-15)


# -- in place ----------------------------------------------------------------------


def test_writes_into_self_and_bumps_the_version() -> None:
    x = gradgen.zeros(2, 3)
    memory = x.numpy()
    version = x._version
    result = x.exponential_()
    assert result is x
    assert x._version == version + 1
    assert (memory > 0).all()  # the draws are in x's own memory
    view = gradgen.zeros(4, 4)[1:3, ::2]  # a strided view writes through
    base_before = view._base.numpy().copy() if view._base is not None else None
    view.exponential_()
    assert (view.numpy() > 0).all()
    assert base_before is not None and view._base is not None
    assert (view._base.numpy()[1:3, ::2] > 0).all()
    assert (view._base.numpy()[0] == 0).all() and (view._base.numpy()[:, 1] == 0).all()


def test_not_a_function_of_the_module_as_pytorch() -> None:
    assert not hasattr(gradgen, "exponential_")
    assert not hasattr(gradgen, "exponential")
    theirs = oracle(
        "names",
        lambda torch: [hasattr(torch, "exponential_"), hasattr(torch, "exponential")],
    )
    assert theirs == [False, False]


# -- errors, as PyTorch's ------------------------------------------------------------

BAD_CALLS: dict[str, Any] = {
    "negative lambd": lambda lib: lib.empty(3).exponential_(-1.0),
    "zero lambd": lambda lib: lib.empty(3).exponential_(0),
    "nan lambd": lambda lib: lib.empty(3).exponential_(math.nan),
    "str lambd": lambda lib: lib.empty(3).exponential_("a"),
    "list lambd": lambda lib: lib.empty(3).exponential_([1.0]),
    "1-d tensor lambd": lambda lib: lib.empty(3).exponential_(lib.tensor([2.0])),
    "complex lambd": lambda lib: lib.empty(3).exponential_(2 + 0j),
    "long": lambda lib: lib.zeros(3, dtype=lib.long).exponential_(),
    "bool": lambda lib: lib.zeros(3, dtype=lib.bool).exponential_(),
    "complex64": lambda lib: lib.zeros(3, dtype=lib.complex64).exponential_(),
    "int generator": lambda lib: lib.empty(3).exponential_(generator=3),
    "leaf requiring grad": lambda lib: lib.zeros(3, requires_grad=True).exponential_(),
}


@pytest.mark.parametrize("name", BAD_CALLS)
def test_errors_as_pytorch(name: str) -> None:
    call = BAD_CALLS[name]
    theirs = oracle(name, lambda torch: outcome(lambda: call(torch)))
    assert isinstance(theirs, Exception)
    assert _error(lambda: call(gradgen)) == (type(theirs).__name__, str(theirs))


def test_accepted_lambd_types_as_pytorch() -> None:
    def run(lib: Any) -> list[bool]:
        good = [True, 2, np.float32(2.0), np.int64(2), lib.tensor(2.0)]
        return [bool((lib.empty(3).exponential_(g) > 0).all()) for g in good]

    assert run(gradgen) == oracle("accepted", run) == [True] * 5


# -- gradient ------------------------------------------------------------------------


def test_gradient_through_the_draw_is_zero_as_pytorch() -> None:
    def run(lib: Any) -> tuple[str, bool, list[int]]:
        x = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
        y = x * 2
        y.exponential_()
        name = type(y.grad_fn).__name__
        (y * x).sum().backward()  # d/dx of y * x with y a draw: y
        assert x.grad is not None
        grad, drawn = x.grad.numpy(), y.detach().numpy()
        return name, bool((grad == drawn).all()), list(grad.shape)

    ours = run(gradgen)
    assert ours == oracle("grad", run) == ("ExponentialBackward0", True, [3])


def test_forward_gradient_of_the_draw_is_zero() -> None:
    import gradgen.autograd.forward_ad as fwAD

    with fwAD.dual_level():
        primal = gradgen.tensor([1.0, 2.0], dtype=gradgen.float64)
        dual = fwAD.make_dual(primal * 1.0, gradgen.tensor([3.0, 4.0]).double())
        dual.exponential_()
        tangent = fwAD.unpack_dual(dual).tangent
    assert tangent is not None
    np.testing.assert_array_equal(tangent.numpy(), [0.0, 0.0])


# -- gumbel_softmax ------------------------------------------------------------------


def _noise(seed: int, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """The Exponential(1) draws gumbel_softmax makes after manual_seed(seed)."""
    gradgen.manual_seed(seed)
    return gradgen.empty(*shape, dtype=dtype).exponential_().numpy()


def _soft(logits: np.ndarray, exponential: np.ndarray, tau: float) -> np.ndarray:
    z = (logits - np.log(exponential)) / tau  # g = -log(E) is Gumbel(0, 1)
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_soft_sample_is_softmax_of_logits_plus_gumbel_noise(dtype: str) -> None:
    kind = getattr(gradgen, dtype)
    noise = _noise(21, LOGITS.shape, kind).astype(np.float64)
    logits = gradgen.tensor(LOGITS, dtype=kind, requires_grad=True)
    gradgen.manual_seed(21)
    sample = GF.gumbel_softmax(logits, tau=0.5)
    assert sample.dtype == kind
    rounded = LOGITS.astype(dtype).astype(np.float64)
    want = _soft(rounded, noise, 0.5)
    rtol = 1e-4 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(sample.detach().numpy(), want, rtol=rtol, atol=1e-7)
    # d/dlogits of sum(w * y) for y = softmax(z / tau): y * (w - sum(y * w)) / tau
    w = np.linspace(-1.0, 2.0, LOGITS.size).reshape(LOGITS.shape)
    (sample * gradgen.tensor(w, dtype=kind)).sum().backward()
    assert logits.grad is not None
    expected = want * (w - (want * w).sum(-1, keepdims=True)) / 0.5
    np.testing.assert_allclose(logits.grad.numpy(), expected, rtol=rtol, atol=1e-6)


def test_hard_sample_is_one_hot_with_the_soft_gradient() -> None:
    noise = _noise(4, LOGITS.shape, gradgen.float64)
    soft = _soft(LOGITS, noise, 2.0)
    logits = gradgen.tensor(LOGITS, requires_grad=True)
    gradgen.manual_seed(4)
    sample = GF.gumbel_softmax(logits, tau=2.0, hard=True, dim=-1)
    one_hot = np.eye(LOGITS.shape[1])[soft.argmax(-1)]
    np.testing.assert_array_equal(sample.detach().numpy(), one_hot)
    w = np.linspace(-1.0, 2.0, LOGITS.size).reshape(LOGITS.shape)
    (sample * gradgen.tensor(w)).sum().backward()
    assert logits.grad is not None
    expected = soft * (w - (soft * w).sum(-1, keepdims=True)) / 2.0
    np.testing.assert_allclose(logits.grad.numpy(), expected, rtol=1e-10, atol=1e-14)


def test_gumbel_softmax_along_another_dim() -> None:
    noise = _noise(8, LOGITS.shape, gradgen.float64)
    gradgen.manual_seed(8)
    sample = GF.gumbel_softmax(gradgen.tensor(LOGITS), dim=0).numpy()
    want = _soft(LOGITS.T, noise.T, 1.0).T
    np.testing.assert_allclose(sample, want, rtol=1e-12)


def test_hard_gumbel_softmax_structure_as_pytorch() -> None:
    def run(lib: Any) -> tuple[str, Any, str]:
        logits = lib.tensor(LOGITS, dtype=lib.float32, requires_grad=True)
        sample = lib.nn.functional.gumbel_softmax(logits, hard=True)
        dtype = str(sample.dtype).split(".")[-1]
        return dtype, sample.sum(-1).detach().numpy(), type(sample.grad_fn).__name__

    dtype, sums, node = run(gradgen)
    their_dtype, their_sums, their_node = oracle("structure", run)
    assert (dtype, node) == (their_dtype, their_node) == ("float32", "AddBackward0")
    np.testing.assert_array_equal(sums, their_sums)
    np.testing.assert_array_equal(sums, np.ones(5, np.float32))


# -- gradgen.compile -----------------------------------------------------------------


def _sample(logits: Any) -> Any:
    return GF.gumbel_softmax(logits, tau=0.7, hard=True) * logits


def test_compiled_gumbel_softmax_draws_fresh_noise_on_every_call() -> None:
    compiled = gradgen.compile(_sample, fullgraph=True)
    logits = gradgen.tensor(LOGITS, requires_grad=True)
    gradgen.manual_seed(31)
    ours = []
    for _ in range(5):
        out = compiled(logits)
        out.sum().backward()
        ours.append((out.detach().numpy(), logits.grad.numpy().copy()))
        logits.grad = None
    gradgen.manual_seed(31)
    eager = []
    for _ in range(5):
        out = _sample(logits)
        out.sum().backward()
        eager.append((out.detach().numpy(), logits.grad.numpy().copy()))
        logits.grad = None
    assert compiled.compiles == 1
    (entry,) = compiled.cache.values()
    assert "random_generator(" in entry.program.source
    assert len({one.tobytes() for one, _ in ours}) > 1  # fresh draws
    for (value, grad), (eager_value, eager_grad) in zip(ours, eager):
        np.testing.assert_array_equal(value, eager_value)  # eager's stream, bit for bit
        np.testing.assert_array_equal(grad, eager_grad)
