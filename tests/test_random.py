"""Random numbers: Generator, the default generator's seeding and state, the samplers
(normal's four overloads, bernoulli, multinomial, poisson, randperm, randint_like) and
the in-place samplers. Streams are numpy's, so values are checked by statistics and
reproducibility; dtypes, shapes and errors against PyTorch."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

import gradgen
from torch_compare import same_error
from torch_oracle import oracle

N = 200_000


def _dtype_name(t: Any) -> str:
    return str(t.dtype).split(".")[-1]


# -- generators and seeds -----------------------------------------------------------------


def test_manual_seed_repeats_the_stream_and_returns_the_generator() -> None:
    assert gradgen.manual_seed(3) is gradgen.default_generator
    a = gradgen.rand(5)
    b = gradgen.randn(5)
    gradgen.manual_seed(3)
    assert np.array_equal(gradgen.rand(5).numpy(), a.numpy())
    assert np.array_equal(gradgen.randn(5).numpy(), b.numpy())
    assert gradgen.initial_seed() == 3


def test_generator_streams_are_independent_of_the_default_one() -> None:
    g = gradgen.Generator().manual_seed(7)
    assert g.initial_seed() == 7 and str(g.device) == "cpu"
    first = gradgen.rand(4, generator=g)
    gradgen.rand(10)  # the default generator moves; g does not
    g.manual_seed(7)
    assert np.array_equal(gradgen.rand(4, generator=g).numpy(), first.numpy())
    other = gradgen.Generator().manual_seed(8)
    assert not np.array_equal(gradgen.rand(4, generator=other).numpy(), first.numpy())


def test_get_and_set_state_resume_the_stream() -> None:
    g = gradgen.Generator().manual_seed(1)
    gradgen.randn(3, generator=g)
    state = g.get_state()
    assert state.dtype == gradgen.uint8 and state.ndim == 1
    after = gradgen.randn(6, generator=g)
    g.manual_seed(99)
    g.set_state(state)
    assert np.array_equal(gradgen.randn(6, generator=g).numpy(), after.numpy())
    assert g.initial_seed() == 1
    saved = gradgen.get_rng_state()
    drawn = gradgen.rand(3)
    gradgen.set_rng_state(saved)
    assert np.array_equal(gradgen.rand(3).numpy(), drawn.numpy())


def test_seed_picks_a_new_seed_and_reports_it() -> None:
    chosen = gradgen.seed()
    assert gradgen.initial_seed() == chosen and 0 <= chosen < 2**64


def test_state_must_be_a_byte_tensor() -> None:
    same_error(lambda lib: lib.Generator().set_state(lib.zeros(3)))


def test_a_generator_of_the_wrong_type_is_refused() -> None:
    with pytest.raises(
        TypeError, match="argument 'generator' must be torch.Generator, not int"
    ):
        gradgen.randn(2, generator=3)


def test_nn_init_draws_from_the_seeded_default_generator() -> None:
    gradgen.manual_seed(5)
    a = gradgen.nn.init.normal_(gradgen.empty(4))
    gradgen.manual_seed(5)
    b = gradgen.nn.init.normal_(gradgen.empty(4))
    assert np.array_equal(a.numpy(), b.numpy())


# -- factories: dtypes and statistics -----------------------------------------------------


def test_factory_dtypes_follow_pytorch() -> None:
    def dtypes(lib: Any) -> list[str]:
        g = lib.Generator().manual_seed(0)
        results = [
            lib.rand(2, generator=g),
            lib.randn(2, generator=g),
            lib.randint(0, 5, (2,), generator=g),
            lib.randperm(4, generator=g),
            lib.multinomial(lib.ones(3), 2, generator=g),
            lib.randint_like(lib.zeros(3), 5),
            lib.randint_like(lib.zeros(3, dtype=lib.int32), 1, 5),
            lib.normal(0.0, 1.0, (2,), generator=g),
            lib.normal(lib.zeros(2, dtype=lib.float64), 1.0),
            lib.normal(0.0, lib.ones(2, dtype=lib.float64)),
            lib.normal(lib.zeros(2, 1), lib.ones(3)),
            lib.bernoulli(lib.full((2,), 0.5, dtype=lib.float64)),
            lib.poisson(lib.ones(2)),
            lib.randperm(3, dtype=lib.float32),
        ]
        return [f"{_dtype_name(r)}{tuple(r.shape)}" for r in results]

    assert dtypes(gradgen) == oracle("dtypes", dtypes)


def _moments(values: np.ndarray) -> tuple[float, float]:
    return float(values.mean()), float(values.var())


@pytest.mark.parametrize(
    "draw, mean, var",
    [
        (lambda g: gradgen.rand(N, generator=g), 0.5, 1 / 12),
        (lambda g: gradgen.randn(N, generator=g), 0.0, 1.0),
        (lambda g: gradgen.normal(2.0, 3.0, (N,), generator=g), 2.0, 9.0),
        (
            lambda g: gradgen.normal(gradgen.full((N,), -1.0), 0.5, generator=g),
            -1,
            0.25,
        ),
        (lambda g: gradgen.normal(1.0, gradgen.full((N,), 2.0), generator=g), 1.0, 4.0),
        (lambda g: gradgen.randint(0, 10, (N,), generator=g), 4.5, 99 / 12),
        (lambda g: gradgen.bernoulli(gradgen.full((N,), 0.3), generator=g), 0.3, 0.21),
        (lambda g: gradgen.poisson(gradgen.full((N,), 4.0), generator=g), 4.0, 4.0),
    ],
)
def test_sampler_statistics(
    draw: Callable[[Any], gradgen.Tensor], mean: float, var: float
) -> None:
    values = draw(gradgen.Generator().manual_seed(11)).numpy().astype(np.float64)
    got_mean, got_var = _moments(values)
    assert got_mean == pytest.approx(mean, abs=5 * np.sqrt(var / N))
    assert got_var == pytest.approx(var, rel=0.03)


def test_randperm_is_a_permutation() -> None:
    values = gradgen.randperm(50).numpy()
    assert sorted(values.tolist()) == list(range(50))


def test_multinomial_frequencies_and_without_replacement() -> None:
    g = gradgen.Generator().manual_seed(2)
    weights = gradgen.tensor([1.0, 3.0, 0.0, 6.0])  # not normalised
    drawn = gradgen.multinomial(weights, N, replacement=True, generator=g).numpy()
    frequencies = np.bincount(drawn, minlength=4) / N
    np.testing.assert_allclose(frequencies, [0.1, 0.3, 0.0, 0.6], atol=0.01)
    rows = gradgen.multinomial(gradgen.ones(5, 4), 4, generator=g).numpy()
    assert all(sorted(row) == [0, 1, 2, 3] for row in rows.tolist())
    assert gradgen.ones(3).multinomial(2).shape == (2,)


# -- in-place samplers --------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, args, mean, var",
    [
        ("uniform_", (-1.0, 3.0), 1.0, 16 / 12),
        ("normal_", (1.0, 2.0), 1.0, 4.0),
        ("bernoulli_", (0.25,), 0.25, 0.1875),
        ("exponential_", (2.0,), 0.5, 0.25),
        ("geometric_", (0.5,), 2.0, 2.0),
        ("log_normal_", (0.0, 0.5), np.exp(0.125), (np.exp(0.25) - 1) * np.exp(0.25)),
        ("random_", (0, 4), 1.5, 1.25),
    ],
)
def test_inplace_sampler_statistics(
    name: str, args: tuple[Any, ...], mean: float, var: float
) -> None:
    t = gradgen.zeros(N, dtype=gradgen.float64)
    result = getattr(t, name)(*args, generator=gradgen.Generator().manual_seed(4))
    assert result is t and t._version == 1
    got_mean, got_var = _moments(t.numpy())
    assert got_mean == pytest.approx(mean, abs=5 * np.sqrt(var / N))
    assert got_var == pytest.approx(var, rel=0.05)


def test_cauchy_median_and_quartiles() -> None:
    t = gradgen.zeros(N).cauchy_(2.0, 0.5)
    quartiles = np.percentile(t.numpy(), [25, 50, 75])
    np.testing.assert_allclose(quartiles, [1.5, 2.0, 2.5], atol=0.02)


def test_random_bounds_by_dtype() -> None:
    assert set(gradgen.zeros(1000, dtype=gradgen.bool).random_().tolist()) == {
        False,
        True,
    }
    assert 0 <= gradgen.zeros(1000, dtype=gradgen.int8).random_().numpy().min()
    values = gradgen.zeros(1000, dtype=gradgen.int64).random_(5).numpy()
    assert set(values.tolist()) == {0, 1, 2, 3, 4}
    assert gradgen.zeros(1000).random_().numpy().max() <= 2**24


def test_bernoulli_with_a_probability_tensor_and_bool_self() -> None:
    p = gradgen.tensor([0.0, 1.0, 0.0, 1.0])
    assert gradgen.zeros(4).bernoulli_(p).tolist() == [0.0, 1.0, 0.0, 1.0]
    assert gradgen.zeros(4, dtype=gradgen.bool).bernoulli_(p).dtype == gradgen.bool


def test_inplace_samplers_refuse_a_leaf_that_requires_grad() -> None:
    def call(lib: Any) -> Any:
        return lib.ones(2, requires_grad=True).uniform_()

    same_error(call)
    same_error(lambda lib: lib.ones(2, requires_grad=True).normal_())
    leaf = gradgen.ones(2, requires_grad=True)
    with gradgen.no_grad():
        leaf.uniform_(5.0, 6.0)
    assert leaf.requires_grad and leaf.detach().numpy().min() >= 5.0


def test_inplace_sampler_on_a_non_leaf_stops_the_gradient() -> None:
    x = gradgen.ones(3, requires_grad=True)
    y = x * 2
    y.normal_()
    assert y.grad_fn is not None
    y.sum().backward()
    assert x.grad is not None and x.grad.tolist() == [0.0, 0.0, 0.0]


# -- errors as PyTorch's ------------------------------------------------------------------

ERRORS: list[Callable[[Any], Any]] = [
    lambda lib: lib.normal(0.0, 1.0),
    lambda lib: lib.normal(lib.zeros(2), -lib.ones(2)),
    lambda lib: lib.normal(lib.zeros(2), -1.0),
    lambda lib: lib.normal(0.0, -1.0, (2,)),
    lambda lib: lib.normal(lib.zeros(2, dtype=lib.long), 1.0),
    lambda lib: lib.normal(lib.zeros(2, 3), lib.ones(4)),
    lambda lib: lib.bernoulli(lib.full((3,), 1.5)),
    lambda lib: lib.bernoulli(lib.full((3,), 0.5), 1.5),
    lambda lib: lib.zeros(3).bernoulli_(1.5),
    lambda lib: lib.zeros(3).bernoulli_(lib.full((3,), 2.0)),
    lambda lib: lib.bernoulli(lib.ones(3, dtype=lib.long)),
    lambda lib: lib.multinomial(lib.ones(3), 5),
    lambda lib: lib.multinomial(lib.ones(3), 0),
    lambda lib: lib.multinomial(-lib.ones(3), 2),
    lambda lib: lib.multinomial(lib.zeros(3), 2),
    lambda lib: lib.multinomial(lib.ones(2, 3, 4), 2),
    lambda lib: lib.multinomial(lib.ones(3, dtype=lib.long), 2),
    lambda lib: lib.multinomial(lib.tensor([1.0, float("nan")]), 1),
    lambda lib: lib.poisson(-lib.ones(3)),
    lambda lib: lib.poisson(lib.ones(3, dtype=lib.long)),
    lambda lib: lib.randperm(-1),
    lambda lib: lib.randint_like(lib.zeros(3), 5, 2),
    lambda lib: lib.zeros(3).random_(5, 2),
    lambda lib: lib.zeros(3).geometric_(0),
    lambda lib: lib.zeros(3).geometric_(1.5),
    lambda lib: lib.zeros(3).exponential_(-1),
    lambda lib: lib.zeros(3).cauchy_(0, -1),
    lambda lib: lib.zeros(3).log_normal_(0, -1),
    lambda lib: lib.zeros(3).normal_(0, -1),
    lambda lib: lib.zeros(3).uniform_(2, 1),
    lambda lib: lib.zeros(3, dtype=lib.long).uniform_(),
    lambda lib: lib.zeros(3, dtype=lib.long).normal_(),
    lambda lib: lib.zeros(3, dtype=lib.long).exponential_(),
    lambda lib: lib.zeros(3, dtype=lib.long).log_normal_(),
    lambda lib: lib.zeros(3, dtype=lib.long).cauchy_(),
]


@pytest.mark.parametrize("call", ERRORS, ids=range(len(ERRORS)))
def test_errors_match_pytorch(call: Callable[[Any], Any]) -> None:
    def checked(lib: Any) -> Any:
        return call(lib)

    if call is ERRORS[0]:
        # The binding's full list of signatures: gradgen names them the same way.
        with pytest.raises(TypeError, match="received an invalid combination"):
            call(gradgen)
        return
    same_error(checked)
