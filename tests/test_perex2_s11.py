"""Session 11's cross_entropy against class indices inside vmap(grad) (perex2, issue 15).

`batching_class_loss.batched_class_cross_entropy` records one node where the general
rules record log_softmax, nll_loss's reshapes, its unreduced loss, a sum and a
division. The tests check that it gives the general rules' bits (the composite's
batched slot off), values and gradients, forward and backward, including the edge
cases (ignored targets: 0/0, a zero loss's sign); PyTorch's per-example gradients
(torch.func, through the oracle); the graph of the backward (create_graph: the
tensor form); and the cases it leaves to the general rules.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pytest
from torch_oracle import oracle

import gradgen
import gradgen.nn.functional as F
from gradgen.composites._common import BATCHED
from gradgen.func import batching_class_loss, batching_composites
from gradgen.func import grad, grad_and_value, vmap

CLASSES = 4


@contextmanager
def _general() -> Iterator[None]:
    """The composite's batched slot off: the general rules run."""
    saved = BATCHED.cross_entropy_loss
    BATCHED.cross_entropy_loss = None
    try:
        yield
    finally:
        BATCHED.cross_entropy_loss = saved


@contextmanager
def _counted(calls: list[Any]) -> Iterator[None]:
    """Record what each call of the fused case returns."""
    original = batching_class_loss.batched_class_cross_entropy

    def spy(*args: Any) -> Any:
        result = original(*args)
        calls.append(result)
        return result

    batching_composites.batched_class_cross_entropy = spy  # type: ignore[assignment]
    try:
        yield
    finally:
        batching_composites.batched_class_cross_entropy = original


def _data(dtype: str, batch: int, seed: int = 5) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    return {
        "w": (rng.standard_normal((CLASSES, 3)) / 2).astype(dtype),
        "b": (rng.standard_normal(CLASSES) / 2).astype(dtype),
        "x": rng.standard_normal((batch, 3)).astype(dtype),
        "t": rng.integers(0, CLASSES, batch),
    }


def _loss(row: bool, **options: Any) -> Callable[..., Any]:
    def loss(params: Any, x: Any, t: Any) -> Any:
        logits = F.linear(x.unsqueeze(0) if row else x, params["w"], params["b"])
        return F.cross_entropy(logits, t.unsqueeze(0) if row else t, **options)

    return loss


def _run(
    arrays: dict[str, np.ndarray], row: bool, **options: Any
) -> tuple[dict[str, np.ndarray], np.ndarray]:
    params = {k: gradgen.tensor(arrays[k]) for k in ("w", "b")}
    per_example = vmap(grad_and_value(_loss(row, **options)), in_dims=(None, 0, 0))
    grads, value = per_example(
        params, gradgen.tensor(arrays["x"]), gradgen.tensor(arrays["t"])
    )
    return {k: v.numpy() for k, v in grads.items()}, value.numpy()


def _same(fast: Any, general: Any) -> None:
    (grads, value), (want_grads, want_value) = fast, general
    np.testing.assert_array_equal(value, want_value)
    assert value.dtype == want_value.dtype
    # (the bits, signs of zeros and NaNs included)
    assert value.tobytes() == want_value.tobytes()
    for name, want in want_grads.items():
        assert grads[name].dtype == want.dtype, name
        assert grads[name].tobytes() == want.tobytes(), name


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("row", [True, False])
@pytest.mark.parametrize("reduction", ["mean", "sum"])
def test_the_fused_node_gives_the_general_rules_bits(
    dtype: str, row: bool, reduction: str
) -> None:
    arrays = _data(dtype, 7)
    calls: list[Any] = []
    with _counted(calls):
        fast = _run(arrays, row, reduction=reduction)
    assert len(calls) == 1 and calls[0] is not NotImplemented
    with _general():
        general = _run(arrays, row, reduction=reduction)
    _same(fast, general)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_ignored_targets_and_a_zero_loss_keep_their_bits(dtype: str) -> None:
    arrays = _data(dtype, 6)
    arrays["t"][[1, 4]] = 2  # ignored below: the mean is 0/0
    arrays["w"][0] = 0.0
    arrays["b"][0] = 1e4  # class 0 takes all the probability: a loss of -0.0
    arrays["t"][0] = 0
    ignored = arrays["t"] == 2
    for reduction in ("mean", "sum"):
        calls: list[Any] = []
        with _counted(calls):
            fast = _run(arrays, True, reduction=reduction, ignore_index=2)
        assert calls[0] is not NotImplemented
        with _general():
            general = _run(arrays, True, reduction=reduction, ignore_index=2)
        _same(fast, general)
        if reduction == "mean":
            assert np.isnan(fast[1][ignored]).all()
            assert not np.isnan(fast[1][~ignored]).any()
            assert fast[1][0] == 0.0 and not np.signbit(fast[1][0])


def test_per_example_gradients_match_torch_func() -> None:
    arrays = _data("float64", 5, seed=9)

    def run(lib: Any, func: Any) -> Any:
        model = lib.nn.Linear(3, CLASSES, dtype=lib.float64)
        params = {"weight": lib.tensor(arrays["w"]), "bias": lib.tensor(arrays["b"])}

        def loss(params: Any, x: Any, t: Any) -> Any:
            logits = func.functional_call(model, params, (x.unsqueeze(0),))
            return lib.nn.functional.cross_entropy(logits, t.unsqueeze(0))

        per_example = func.vmap(func.grad(loss), in_dims=(None, 0, 0))
        found = per_example(params, lib.tensor(arrays["x"]), lib.tensor(arrays["t"]))
        return {k: v.detach().numpy() for k, v in found.items()}

    expected = oracle("grads", lambda torch: run(torch, torch.func))
    calls: list[Any] = []
    with _counted(calls):
        found = run(gradgen, gradgen.func)
    assert calls[0] is not NotImplemented
    for name, want in expected.items():
        np.testing.assert_allclose(found[name], want, rtol=1e-10, atol=1e-12)


def test_second_derivatives_run_the_tensor_form() -> None:
    """vmap(grad(f)) where f takes a grad differentiates the node's backward
    (create_graph): its tensor form, against the general rules' graph."""
    arrays = _data("float64", 4, seed=2)
    x, t = gradgen.tensor(arrays["x"]), gradgen.tensor(arrays["t"])
    w = gradgen.tensor(arrays["w"])

    def loss(w: Any, x: Any, t: Any) -> Any:
        return F.cross_entropy(F.linear(x.unsqueeze(0), w), t.unsqueeze(0))

    def squared(w: Any, x: Any, t: Any) -> Any:
        return (grad(loss)(w, x, t) ** 2).sum()  # the inner grad keeps its graph

    run = vmap(grad(squared), in_dims=(None, 0, 0))
    calls: list[Any] = []
    with _counted(calls):
        fast = run(w, x, t).numpy()
    assert calls and all(c is not NotImplemented for c in calls)
    with _general():
        general = run(w, x, t).numpy()
    np.testing.assert_allclose(fast, general, rtol=1e-12, atol=1e-14)
    assert fast.shape == (4, CLASSES, 3) and np.abs(fast).max() > 0


@pytest.mark.parametrize(
    "options, shape",
    [
        ({"weight": "w"}, None),  # class weights
        ({"label_smoothing": 0.1}, None),
        ({"reduction": "none"}, None),
        ({}, (2,)),  # two rows per example
    ],
)
def test_other_cases_take_the_general_rules(
    options: dict[str, Any], shape: Any
) -> None:
    arrays = _data("float64", 5, seed=4)
    if options.get("weight") == "w":
        options = {"weight": gradgen.tensor(np.linspace(0.5, 2.0, CLASSES))}
    rows = 2 if shape == (2,) else 1
    x = np.repeat(arrays["x"][:, None, :], rows, axis=1)
    t = np.repeat(arrays["t"][:, None], rows, axis=1)
    target = gradgen.tensor(t)
    params = {k: gradgen.tensor(arrays[k]) for k in ("w", "b")}

    def loss(params: Any, x: Any, t: Any) -> Any:
        logits = F.linear(x, params["w"], params["b"])
        value = F.cross_entropy(logits, t, **options)
        return value.sum()

    per_example = vmap(grad(loss), in_dims=(None, 0, 0))
    calls: list[Any] = []
    with _counted(calls):
        fast = per_example(params, gradgen.tensor(x), target)
    assert all(c is NotImplemented for c in calls)
    with _general():
        general = per_example(params, gradgen.tensor(x), target)
    for name in params:
        np.testing.assert_array_equal(fast[name].numpy(), general[name].numpy())


def test_a_target_out_of_range_raises_as_the_general_rules() -> None:
    arrays = _data("float32", 3)
    arrays["t"][1] = CLASSES
    with pytest.raises(IndexError, match=f"Target {CLASSES} is out of bounds."):
        _run(arrays, True)
    with (
        _general(),
        pytest.raises(IndexError, match=f"Target {CLASSES} is out of bounds."),
    ):
        _run(arrays, True)


def test_a_hook_on_the_logits_sees_the_same_gradient() -> None:
    """A hook steps tree_backward aside: the engine runs the node's array form."""
    arrays = _data("float32", 4)
    seen: list[Any] = []

    def loss(params: Any, x: Any, t: Any) -> Any:
        logits = F.linear(x.unsqueeze(0), params["w"], params["b"])
        logits.register_hook(seen.append)
        return F.cross_entropy(logits, t.unsqueeze(0))

    params = {k: gradgen.tensor(arrays[k]) for k in ("w", "b")}
    args = (params, gradgen.tensor(arrays["x"]), gradgen.tensor(arrays["t"]))
    fast = vmap(grad(loss), in_dims=(None, 0, 0))(*args)
    with _general():
        general = vmap(grad(loss), in_dims=(None, 0, 0))(*args)
    assert len(seen) == 2
    for name in params:
        assert fast[name].numpy().tobytes() == general[name].numpy().tobytes()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_an_unused_ignore_index_and_nan_logits_keep_their_bits(dtype: str) -> None:
    """Every target counts (the node's short case) though ignore_index is a class;
    a NaN in an example's input reaches its loss and gradients as in the general
    rules."""
    arrays = _data(dtype, 6, seed=11)
    arrays["t"][:] = np.where(arrays["t"] == 1, 0, arrays["t"])  # no target 1
    arrays["x"][3, 1] = np.nan
    calls: list[Any] = []
    with _counted(calls):
        fast = _run(arrays, False, ignore_index=1)
    assert calls[0] is not NotImplemented
    with _general():
        general = _run(arrays, False, ignore_index=1)
    _same(fast, general)
    assert np.isnan(fast[1][3]) and not np.isnan(np.delete(fast[1], 3)).any()
