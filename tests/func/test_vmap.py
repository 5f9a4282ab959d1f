"""gradgen.func.vmap: against torch.func.vmap on the same functions (recorded in
tests/golden/), against its own per-example loop (the definition), and the batching
rules themselves: a batched call runs once for the whole batch, the fallback warns
with the operator's name, and `rule_count` says how many operators have a rule."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import gradgen
import gradgen.nn.functional as F
from gradgen.func import batching, batching_rules, grad, hessian, jacfwd, jacrev, jvp
from gradgen.func import vjp, vmap
from gradgen.func.randomness import Randomness
from gradgen.func.vmap import _check_in_dims, _per_example
from torch_oracle import oracle

from .common import BATCH, assert_same, errors, plain

RNG = np.random.default_rng(7)
W = RNG.standard_normal((5, 2))
BIAS = RNG.standard_normal(5)


def _vmapped(lib: Any) -> dict[str, Any]:
    V = lib.func.vmap
    m = lib.tensor(BATCH, dtype=lib.float64)  # 4 examples of 3 x 2
    w, b = lib.tensor(W, dtype=lib.float64), lib.tensor(BIAS, dtype=lib.float64)
    return {
        "pointwise": V(lambda a: a.sin() * 2 + a.exp() / (1 + a * a))(m),
        "in_dims": V(lambda a, s: a * s, in_dims=(1, None))(m, m[0, 0, :]),
        "in_dims dict": V(lambda d: d["a"] * d["b"].sum(), in_dims=({"a": 0, "b": 2},))(
            {"a": m, "b": m.permute(1, 2, 0)}
        ),
        "out_dims": V(lambda a: (a * 2, a.sum()), out_dims=(2, 0))(m),
        "negative dims": V(lambda a: a.t(), in_dims=-1, out_dims=-1)(m),
        "reductions": V(lambda a: a.sum() + a.mean(0).prod() + a.amax(-1).sum())(m),
        "softmax": V(lambda a: a.softmax(-1) + a.log_softmax(0))(m),
        "views": V(lambda a: a.t().reshape(-1).view(2, 3).permute(1, 0).flatten())(m),
        "indexing": V(lambda a: a[1] + a[:, 0].sum() + a[0:2, 1:2].sum())(m),
        "cat stack": V(lambda a: lib.cat([a[0], a[1] * 2, lib.zeros(2)]))(m),
        "matmul": V(lambda a: a.t() @ a)(m),
        "linear": V(lambda a: F_linear(lib, a, w, b).relu())(m),
        "loss": V(
            lambda a: lib.nn.functional.mse_loss(a, a.cos())
            + lib.nn.functional.l1_loss(a, a * 0, reduction="sum")
        )(m),
        "chunk_size": V(lambda a: a.softmax(0), chunk_size=3)(m),
        "kwargs": V(lambda a, *, k: a * k)(m, k=2.0),
        "vmap vmap": V(V(lambda r: r * r.sum()))(m),
        "vmap grad": V(lib.func.grad(lambda a: (a.sin() * a).sum()))(m),
        "vmap vmap grad": V(V(lib.func.grad(lambda r: (r * r.sum()).sin().sum())))(m),
        "grad vmap": lib.func.grad(lambda a: V(lambda r: r.sin().sum())(a).sum())(m),
        "vmap jacrev": V(lib.func.jacrev(lambda a: a.sin() * a.sum()))(m[:, :, 0]),
        "vmap jacfwd": V(lib.func.jacfwd(lambda a: a.sin() * a.sum()))(m[:, :, 0]),
        "vmap hessian": V(lib.func.hessian(lambda a: (a.sin() * a.exp()).sum()))(
            m[:, :, 0]
        ),
        "vmap jvp": V(lambda a: lib.func.jvp(lambda t: t.sin() * t, (a,), (a.cos(),)))(
            m
        ),
        "jacrev vmap": lib.func.jacrev(V(lambda a: a.sin() * a.sum()))(m[:, :, 0]),
        "unbatched output": V(lambda a: w.sum(), out_dims=None)(m),
    }


def F_linear(lib: Any, a: Any, w: Any, b: Any) -> Any:
    return lib.nn.functional.linear(a, w, b)


def test_vmap_matches_torch_func() -> None:
    ours = plain(_vmapped(gradgen))
    theirs = oracle("vmap", lambda torch: plain(_vmapped(torch)))
    assert_same(ours, theirs)


def _loop(func: Callable[..., Any], *args: Any, in_dims: Any = 0) -> Any:
    """vmap's definition: f per example, stacked (what the batched run must equal)."""
    size, dims, flat, spec = _check_in_dims(func, in_dims, args)
    return _per_example(func, 0, size, dims, flat, spec, {}, Randomness("different"))


M = gradgen.tensor(BATCH)
Wt, Bt = gradgen.tensor(W), gradgen.tensor(BIAS)
CASES: dict[str, Callable[..., Any]] = {
    "where clamp": lambda a: gradgen.where(a > 0, a, a * 0.1).clamp(-0.5, 0.5),
    "broadcast": lambda a: a[:, :1] * gradgen.ones(3, 2, dtype=gradgen.float64),
    "min max": lambda a: a.max() - a.min() + a.max(0)[0].sum(),
    "sort topk": lambda a: a.reshape(-1).sort()[0] + a.reshape(-1).topk(6)[0],
    "cumsum norm": lambda a: a.cumsum(0) + a.norm(),
    "mv dot": lambda a: (Wt @ a[0]) * a[1].dot(a[2]),
    "mlp": lambda a: F.mse_loss(F.linear(F.linear(a, Wt, Bt).tanh(), Wt.t()), a),
    "in place": lambda a: a.clone().mul_(2).add_(1),
    "setitem": lambda a: _setitem(a.clone()),
    "expand": lambda a: a[:1].expand(4, 2) * 2,
    "masked_fill": lambda a: a.masked_fill(a > 0.5, 0.0).clone().masked_fill_(a < 0, 1),
    "diagonal": lambda a: gradgen.diagonal_copy(a, 0, 0, 1) * 2,
    "squeeze": lambda a: a[:, :1].squeeze() + a.unsqueeze(0).squeeze(0).sum(),
    "grad of closure": lambda a: grad(lambda w: F.mse_loss(F.linear(a, w, Bt), Bt))(Wt),
    "vjp": lambda a: vjp(lambda t: t.sin() * t, a)[1](a)[0],
    "jvp": lambda a: jvp(lambda t: t.sin() * t, (a,), (a.cos(),))[1],
    "jacfwd": lambda a: jacfwd(lambda t: t.exp() * t.sum())(a[0]),
    "jacrev": lambda a: jacrev(lambda t: t.exp() * t.sum())(a[0]),
    "hessian": lambda a: hessian(lambda t: (t**3).sum())(a[0]),
}


def _setitem(a: Any) -> Any:
    a[0] = 5.0
    return a


@pytest.mark.parametrize("name", sorted(CASES))
def test_batched_run_equals_the_per_example_loop(name: str) -> None:
    got, want = vmap(CASES[name])(M), _loop(CASES[name], M)
    assert tuple(got.shape) == tuple(want.shape)
    assert np.allclose(got.detach().numpy(), want.detach().numpy())


def _fallbacks(run: Callable[[], Any]) -> list[str]:
    batching._warned.clear()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run()
    return [str(w.message) for w in caught if "no batching rule" in str(w.message)]


def test_per_example_gradients_of_an_mlp_run_without_the_fallback() -> None:
    """Every operator of the forward and backward passes has a rule: the batch runs
    once, and the gradients are the per-example loop's."""

    def loss(w: Any, x: Any, t: Any) -> Any:
        logits = F.linear(F.linear(x, w, Bt).relu(), Wt.t())
        return -(logits.log_softmax(-1) * t).sum()

    x, t = gradgen.tensor(BATCH[:, 0, :]), gradgen.tensor(np.eye(2)[[0, 1, 1, 0]])
    per_example = vmap(grad(loss), in_dims=(None, 0, 0))
    assert _fallbacks(lambda: per_example(Wt, x, t)) == []
    want = _loop(grad(loss), Wt, x, t, in_dims=(None, 0, 0))
    assert np.allclose(per_example(Wt, x, t).numpy(), want.numpy())


def test_the_fallback_warns_once_naming_the_operator_and_stays_correct() -> None:
    # histc keeps the loop (batching_rules.LOOPED says why).
    def counts(a: Any) -> Any:
        return gradgen.histc(a.reshape(-1), 4, -2.0, 2.0) * a.sum()

    found = _fallbacks(lambda: vmap(counts)(M))
    assert found == [batching.FALLBACK_WARNING.format(name="histc")]
    assert np.allclose(vmap(counts)(M).numpy(), _loop(counts, M).numpy())


TARGETS = gradgen.tensor([[0, 1, 1], [1, 1, 0], [0, 0, 0], [1, 0, 1]])
CLASS_WEIGHTS = gradgen.tensor([0.5, 2.0], dtype=gradgen.float64)
LOSSES: dict[str, Callable[..., Any]] = {
    "mean": lambda a, t: F.cross_entropy(a, t),
    "sum": lambda a, t: F.cross_entropy(a, t, reduction="sum"),
    "none": lambda a, t: F.cross_entropy(a, t, reduction="none"),
    "weight": lambda a, t: F.cross_entropy(a, t, weight=CLASS_WEIGHTS),
    "ignore_index": lambda a, t: F.cross_entropy(a, t, ignore_index=1),
    "one row": lambda a, t: F.cross_entropy(a[0], t[0]),
    "grad weight": grad(lambda a, t: F.cross_entropy(a, t, weight=CLASS_WEIGHTS)),
    "grad none": grad(lambda a, t: F.cross_entropy(a, t, reduction="none").sum()),
    "grad ignore_index": grad(lambda a, t: F.cross_entropy(a, t, ignore_index=1)),
}


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_cross_entropy_per_example_runs_batched(name: str) -> None:
    """nll_loss's rule: all rows of the batch at once, reduced per example by its own
    total weight (an example whose targets are all ignored is nan, as alone)."""
    loss = LOSSES[name]
    assert _fallbacks(lambda: vmap(loss)(M, TARGETS)) == []
    got, want = vmap(loss)(M, TARGETS), _loop(loss, M, TARGETS)
    assert np.allclose(got.numpy(), want.numpy(), equal_nan=True)


def test_rule_count() -> None:
    """Operators with a batching rule (issue 15 asks for the count): every operator
    of the elementwise, reduction and shape families and the matrix products."""
    with_rule, total = batching_rules.rule_count()
    print(f"batching rules: {with_rule} of {total} operators")
    assert total == len(batching.HANDLES)
    assert with_rule >= 620
    missing = set(batching_rules.operators_without_rule())
    for name in ("add.Tensor", "exp", "sum", "sum.dim_IntList", "mm", "addmm", "view"):
        assert name not in missing
    assert "convolution" not in missing
    assert "nonzero" in missing  # honest: its output size depends on the values


def test_randomness_modes() -> None:
    ones = gradgen.ones(4, 100)
    drop = vmap(lambda a: F.dropout(a, 0.5), randomness="different")(ones)
    assert not np.array_equal(drop[0].numpy(), drop[1].numpy())
    same = vmap(lambda a: F.dropout(a, 0.5), randomness="same")(ones)
    assert all(np.array_equal(same[0].numpy(), same[i].numpy()) for i in range(4))
    noise = vmap(lambda a: a + gradgen.rand(100), randomness="same")(ones)
    assert np.array_equal(noise[0].numpy(), noise[3].numpy())


def _error_calls(lib: Any) -> dict[str, Any]:
    V = lib.func.vmap
    x = lib.tensor(BATCH[:, :, 0], dtype=lib.float64)
    return {
        "sizes": lambda: V(lambda a, b: a + b)(x, x[:2]),
        "in_dims type": lambda: V(lambda a: a, in_dims=None)(x),
        "in_dims range": lambda: V(lambda a: a, in_dims=2)(x),
        "in_dims structure": lambda: V(lambda a, b: a, in_dims=(0, 0, 0))(x, x),
        "no inputs": lambda: V(lambda: 1)(),
        "nothing mapped": lambda: V(lambda a: a, in_dims=(None,))(x),
        "non tensor mapped": lambda: V(lambda a: a, in_dims=(0,))(1.0),
        "non tensor output": lambda: V(lambda a: 1.0)(x),
        "random": lambda: V(lambda a: a + lib.rand(3))(x),
        "randomness": lambda: V(lambda a: a, randomness="sometimes"),
        "item": lambda: V(lambda a: a.sum().item())(x),
        "control flow": lambda: V(lambda a: a if a.sum() > 0 else -a)(x),
        "in place on unbatched": lambda: V(lambda a, b: a.add_(b), in_dims=(None, 0))(
            x[0].clone(), x
        ),
        "batched output with out_dims None": lambda: V(lambda a: a, out_dims=None)(x),
    }


def test_error_messages_match_torch_func() -> None:
    ours = errors(_error_calls(gradgen))
    theirs = oracle("errors", lambda torch: errors(_error_calls(torch)))
    ours = {k: _gradgen_internals(v) for k, v in ours.items()}
    assert_same(ours, theirs)


def _gradgen_internals(error: Exception | None) -> Exception | None:
    """Our .item() message names gradgen's internals where PyTorch names its own."""
    if error is None or "gradgen internals" not in str(error):
        return error
    return type(error)(str(error).replace("gradgen internals", "PyTorch internals"))


def test_debug_unwrap_shows_the_batch_inside_vmap() -> None:
    seen = []

    def f(a: Any) -> Any:
        seen.append(gradgen.func.debug_unwrap(a))
        return a * 2

    vmap(vmap(f))(M)
    assert tuple(seen[0].shape) == (4, 3, 2)
    assert np.array_equal(seen[0].numpy(), BATCH)
    assert gradgen.func.debug_unwrap(M) is M
