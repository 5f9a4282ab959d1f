"""The random operators under vmap (gradgen.func.batching_rules_random): one batched
call per operator, as vmap's `randomness` asks.

- which results are batched and shared, and which calls raise, against
  torch.func.vmap (recorded in tests/golden/);
- the batched call gives, bit for bit, what the per-example loop (vmap's definition,
  `_per_example`) gives from the same seed;
- the draws' statistics, 'same' equal along the batch, and per-example gradients
  through dropout under vmap(grad), all run once for the whole batch.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradgen
import gradgen.nn.functional as F
from gradgen.func import batching, grad, vmap
from gradgen.func.batching import HANDLES
from gradgen.func.randomness import Randomness
from gradgen.func.vmap import _check_in_dims, _per_example
from torch_oracle import oracle

from .common import assert_same

B = 4
MODES = ("error", "different", "same")


def _exponential(x: Any, lambd: float = 1.0) -> Any:
    """The functional exponential (no Python binding in either library)."""
    return HANDLES["exponential"].call(x, lambd, None)


def _cases(lib: Any) -> dict[str, tuple[Callable[..., Any], tuple[Any, ...]]]:
    """name: (function, inputs batched along 0)."""
    half = lib.full((B, 50), 0.5)
    ones = lib.ones(B, 50)
    flat = lib.ones(B, 1)
    q = lib.full((50,), 0.5)
    fn = lib.nn.functional
    return {
        "bernoulli": (lib.bernoulli, (half,)),
        "bernoulli.p": (lambda a: lib.bernoulli(a, 0.5), (half,)),
        "poisson": (lib.poisson, (half * 4,)),
        "native_dropout": (lambda a: lib.native_dropout(a, 0.5, True), (ones,)),
        "native_dropout train None": (
            lambda a: lib.native_dropout(a, 0.5, None),
            (ones,),
        ),
        "native_dropout not training": (
            lambda a: lib.native_dropout(a, 0.5, False),
            (ones,),
        ),
        "dropout": (lambda a: fn.dropout(a, 0.5), (ones,)),
        "exponential_": (lambda a: a.clone().exponential_(), (ones,)),
        "exponential_ of the input": (lambda a: a.exponential_(), (ones.clone(),)),
        "bernoulli unbatched": (lambda a: lib.bernoulli(q) + 0 * a, (flat,)),
        "bernoulli.p unbatched": (lambda a: lib.bernoulli(q, 0.5) + 0 * a, (flat,)),
        "poisson unbatched": (lambda a: lib.poisson(q) + 0 * a, (flat,)),
        "native_dropout unbatched": (
            lambda a: lib.native_dropout(q, 0.5, True)[0] + 0 * a,
            (flat,),
        ),
        "exponential_ unbatched": (lambda a: q.clone().exponential_() + 0 * a, (flat,)),
    }


def _summary(lib: Any, mode: str, chunk_size: int | None = None) -> dict[str, Any]:
    """Each case's outputs as (shape, every example equal), or the error it raises."""
    found: dict[str, Any] = {}
    for name, (function, inputs) in _cases(lib).items():
        lib.manual_seed(0)
        try:
            out = lib.func.vmap(function, randomness=mode, chunk_size=chunk_size)(
                *inputs
            )
        except RuntimeError as error:
            found[name] = error
            continue
        outs = out if isinstance(out, tuple) else (out,)
        found[name] = [(tuple(o.shape), bool((o == o[0]).all())) for o in outs]
    return found


@pytest.mark.parametrize("mode", MODES)
def test_modes_match_torch_func(mode: str) -> None:
    ours = _summary(gradgen, mode)
    theirs = oracle("summary", lambda torch: _summary(torch, mode))
    assert_same(ours, theirs)


def test_same_in_chunks_matches_torch_func() -> None:
    """'same' shares the draw across chunks too (every chunk draws from the start)."""
    ours = _summary(gradgen, "same", chunk_size=3)
    theirs = oracle("summary", lambda torch: _summary(torch, "same", chunk_size=3))
    assert_same(ours, theirs)


def _nested(lib: Any) -> dict[str, Any]:
    """vmap(vmap(dropout)) for each pair of modes: (examples equal along the inner
    batch, along the outer one)."""
    found = {}
    for outer in ("different", "same"):
        for inner in ("different", "same"):
            lib.manual_seed(0)
            inside = lib.func.vmap(
                lambda a: lib.nn.functional.dropout(a, 0.5), randomness=inner
            )
            out = lib.func.vmap(inside, randomness=outer)(lib.ones(3, 3, 40))
            found[f"{outer} {inner}"] = (
                bool((out == out[:, :1]).all()),
                bool((out == out[:1]).all()),
            )
    return found


def test_nested_levels_match_torch_func() -> None:
    assert_same(_nested(gradgen), oracle("nested", _nested))


# -- the per-example loop, bit for bit ---------------------------------------------------


def _loop(function: Callable[..., Any], mode: str, *inputs: Any) -> Any:
    """vmap's definition: `function` per example, the generator rewound for 'same'."""
    size, dims, flat, spec = _check_in_dims(function, 0, inputs)
    return _per_example(function, 0, size, dims, flat, spec, {}, Randomness(mode))


def _arrays(out: Any) -> list[np.ndarray]:
    outs = out if isinstance(out, tuple) else (out,)
    return [np.broadcast_to(o.detach().numpy(), (B, *o.shape[1:])) for o in outs]


LOOP_CASES = [
    (name, mode)
    for name in _cases(gradgen)
    for mode in ("different", "same")
    if not (mode == "same" and name in ("bernoulli", "bernoulli.p", "poisson"))
    and not (mode == "different" and name == "exponential_ unbatched")
] + [
    ("float32 dropout", "different"),
    ("float32 dropout", "same"),
    ("rrelu", "different"),
    ("exponential", "different"),
    ("exponential", "same"),
    ("exponential unbatched", "different"),
]


def _loop_case(name: str) -> tuple[Callable[..., Any], tuple[Any, ...]]:
    x = gradgen.tensor(np.random.default_rng(3).uniform(-1, 1, (B, 30)))
    extra: dict[str, tuple[Callable[..., Any], tuple[Any, ...]]] = {
        "float32 dropout": (lambda a: F.dropout(a, 0.3), (x.float(),)),
        "rrelu": (lambda a: F.rrelu(a, 0.1, 0.3, True), (x,)),
        "exponential": (lambda a: _exponential(a * a, 2.0), (x,)),
        "exponential unbatched": (
            lambda a: _exponential(gradgen.ones(30), 2.0) + 0 * a,
            (x,),
        ),
    }
    return extra[name] if name in extra else _cases(gradgen)[name]


@pytest.mark.parametrize("name,mode", LOOP_CASES)
def test_batched_draws_equal_the_loop(name: str, mode: str) -> None:
    function, inputs = _loop_case(name)
    gradgen.manual_seed(5)
    looped = _arrays(_loop(function, mode, *[i.clone() for i in inputs]))
    after_loop = gradgen.rand(3).numpy()  # the generator ends where the loop left it
    gradgen.manual_seed(5)
    batching._warned.clear()  # the fallback warns once per operator
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="vmap: .* has no batching rule")
        batched = _arrays(vmap(function, randomness=mode)(*[i.clone() for i in inputs]))
    np.testing.assert_array_equal(gradgen.rand(3).numpy(), after_loop)
    assert len(batched) == len(looped)
    for ours, expected in zip(batched, looped):
        assert ours.dtype == expected.dtype
        np.testing.assert_array_equal(ours, expected)


def test_a_random_function_runs_once_for_the_batch() -> None:
    """The rules draw for the batch: vmap calls the function once (a draw no rule
    made runs it once more per example), in both modes."""
    calls = []

    def f(a: Any) -> Any:
        calls.append(1)
        return F.dropout(a, 0.5) + gradgen.bernoulli(gradgen.full((64,), 0.5))

    for mode in ("different", "same"):
        calls.clear()
        out = vmap(f, randomness=mode)(gradgen.ones(B, 64)).numpy()
        assert calls == [1]
        assert (out == out[0]).all() == (mode == "same")
    calls.clear()
    vmap(lambda a: f(a) + gradgen.rand(64), randomness="same")(gradgen.ones(B, 64))
    assert len(calls) == 1 + B  # gradgen.rand is no operator: the loop


# -- statistics --------------------------------------------------------------------------


def _within(values: np.ndarray, mean: float, std: float) -> None:
    """The sample mean within 5 standard errors of `mean`."""
    assert abs(values.mean() - mean) < 5 * std / np.sqrt(values.size)


def test_the_draws_have_their_distributions() -> None:
    gradgen.manual_seed(1)
    n, size = 8, 4000
    p = gradgen.full((n, size), 0.3, dtype=gradgen.float64)
    draws = vmap(gradgen.bernoulli, randomness="different")(p).numpy()
    _within(draws, 0.3, np.sqrt(0.3 * 0.7))
    for row in draws:
        _within(row, 0.3, np.sqrt(0.3 * 0.7))
    counts = vmap(gradgen.poisson, randomness="different")(p * 10).numpy()
    _within(counts, 3.0, np.sqrt(3.0))
    waits = vmap(lambda a: _exponential(a, 2.0), randomness="different")(p).numpy()
    _within(waits, 0.5, 0.5)
    assert waits.min() > 0
    ones = gradgen.ones(n, size, dtype=gradgen.float64)
    kept = vmap(lambda a: F.dropout(a, 0.25), randomness="different")(ones).numpy()
    assert set(np.unique(kept)) == {0.0, 4.0 / 3.0}
    _within(kept, 1.0, np.sqrt(0.75 * 0.25) * 4.0 / 3.0)
    shared = vmap(lambda a: F.dropout(a, 0.25), randomness="same")(ones).numpy()
    assert (shared == shared[0]).all()
    _within(shared[0], 1.0, np.sqrt(0.75 * 0.25) * 4.0 / 3.0)


# -- gradients through dropout -----------------------------------------------------------


def _dropout_loss(w: Any, x: Any) -> Any:
    return (F.dropout(x * w, 0.5) * x).sum()


@pytest.mark.parametrize("mode", ["different", "same"])
def test_per_example_gradients_through_dropout(mode: str) -> None:
    """vmap(grad) through dropout: each example's gradient is x * x * mask * 2 (hand
    math: d/dw sum(dropout(x * w) * x), the mask kept with probability 1/2), as the
    per-example loop gives it bit for bit; 'same' shares the mask."""
    rng = np.random.default_rng(4)
    w = gradgen.tensor(rng.uniform(0.5, 1.5, 20))
    x = gradgen.tensor(rng.uniform(0.5, 1.5, (B, 20)))
    per_example = vmap(grad(_dropout_loss), in_dims=(None, 0), randomness=mode)
    gradgen.manual_seed(9)
    batching._warned.clear()  # the fallback warns once per operator
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="vmap: .* has no batching rule")
        grads = per_example(w, x).numpy()
    gradgen.manual_seed(9)
    size, dims, flat, spec = _check_in_dims(grad(_dropout_loss), (None, 0), (w, x))
    looped = _per_example(
        grad(_dropout_loss), 0, size, dims, flat, spec, {}, Randomness(mode)
    )
    np.testing.assert_array_equal(grads, looped.numpy())
    mask = grads / (x.numpy() * x.numpy() * 2.0)
    np.testing.assert_allclose(mask, np.round(mask), atol=1e-12)
    assert set(np.unique(np.round(mask))) == {0.0, 1.0}
    rows_equal = all((mask[i] == mask[0]).all() for i in range(B))
    assert rows_equal == (mode == "same")
