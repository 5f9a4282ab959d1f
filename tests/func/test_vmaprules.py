"""The batching rules of session 7's slice: the `leading(NAME:RANK, ...)` kind (the
generator's checks), the operators that keep the loop (each with its reason), and
the rules whose per-example results the operator table's lines do not reach: a
convolution's batched weight folded into the groups, batch norm's running statistics
updated as the loop updates them, per-example gradients through conv / pool / norm
layers."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import gradgen
from gradgen.codegen.errors import ErrorCollector
from gradgen.codegen.load import load_native_functions
from gradgen.func import grad, vmap
from gradgen.func.batching_rules import LOOPED, RULES, operators_without_rule
from gradgen.generated.batching import DECLARED

F = gradgen.nn.functional
SCHEMA = "pool(Tensor self, Tensor indices, int[2] size) -> Tensor\n  batching: "
CASES = {
    "leading(self:3, indices:3)": None,
    "leading(self:3)": None,
    "leading(self)": "batching: leading(...) takes NAME:RANK items (RANK the dims of "
    "one sample without the batch dim N, 1 to 4), got 'self' in 'leading(self)'",
    "leading(self:9)": "got 'self:9' in 'leading(self:9)'",
    "leading(self:x)": "got 'self:x'",
    "leading(input:3)": "batching: leading(input) names 'input', which is not a "
    "Tensor argument of 'pool'",
    "leading": "batching: trailing(NAMES) names the Tensor arguments that may be "
    "batched (leading(NAME:RANK, ...) too); other kinds take no names, got 'leading'",
}


@pytest.mark.parametrize("value", list(CASES))
def test_the_generator_checks_leading(value: str, tmp_path: Path) -> None:
    path = tmp_path / "native_functions.yaml"
    path.write_text(f"- func: {SCHEMA}{value}\n  numpy: self\n")
    errors = ErrorCollector()
    functions = load_native_functions(path, errors, set())
    expected = CASES[value]
    if expected is None:
        assert not errors.errors
        assert functions[0].batching is not None
        assert functions[0].batching.kind == "leading"
        return
    assert len(errors.errors) == 1
    message = str(errors.errors[0])
    assert message.startswith("native_functions.yaml:1: pool: "), message
    assert expected in message, message


def test_every_operator_without_a_rule_is_listed_with_its_reason() -> None:
    assert sorted(LOOPED) == operators_without_rule()
    assert not set(LOOPED) & set(RULES)
    assert all(len(reason) > 20 for reason in LOOPED.values())


def test_the_leading_declarations_name_ranks() -> None:
    leading = {n: names for n, (kind, names) in DECLARED.items() if kind == "leading"}
    assert len(leading) >= 60
    assert DECLARED["max_pool2d_with_indices_backward"] == (
        "leading",
        ("grad_output:3", "self:3", "indices:3"),
    )


def _quiet_loop(function: Any, *columns: Any) -> np.ndarray:
    """The per-example loop, stacked (no vmap at all)."""
    outputs = [function(*(c[i] for c in columns)) for i in range(len(columns[0]))]
    return np.stack([o.detach().numpy() for o in outputs])


def _batched(function: Any, *args: Any, **kwargs: Any) -> np.ndarray:
    """vmap(function), refusing the fallback loop."""
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="vmap: .* has no batching rule")
        result: Any = vmap(function, **kwargs)(*args)
    return np.asarray(result.detach().numpy())


RNG = np.random.default_rng(5)


def _t(*shape: int) -> gradgen.Tensor:
    return gradgen.tensor(RNG.normal(size=shape))


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("has_n", [True, False])
def test_convolution_with_a_batched_weight_folds_into_the_groups(
    transposed: bool, has_n: bool
) -> None:
    """A weight per example (an ensemble): groups = B * groups."""
    weights = _t(3, 4, 2, 3, 3)  # 3 examples of (out 4 | in 4, groups 2)
    bias = _t(3, 4 if not transposed else 4)
    x = _t(*((2,) if has_n else ()), 4, 6, 5)

    def conv(w: Any, b: Any) -> Any:
        if transposed:
            return F.conv_transpose2d(x, w, b, stride=2, groups=2, padding=1)
        return F.conv2d(x, w, b, stride=2, groups=2, padding=1)

    expected = _quiet_loop(conv, weights, bias)
    np.testing.assert_allclose(_batched(conv, weights, bias), expected, atol=1e-12)


def test_per_example_gradients_through_conv_pool_and_norm_equal_the_loop() -> None:
    weight = _t(4, 2, 3, 3)
    scale = _t(4)
    xs = _t(5, 2, 2, 8, 8)

    def loss(w: Any, s: Any, x: Any) -> Any:
        h = F.conv2d(x, w, padding=1)
        h = F.group_norm(h, 2, s)
        h = F.max_pool2d(F.relu(h), 2)
        h = F.interpolate(h, scale_factor=2.0, mode="bilinear")
        return (F.avg_pool2d(F.pad(h, (1, 1, 1, 1), mode="reflect"), 3) ** 2).sum()

    batched = vmap(grad(loss, argnums=(0, 1)), in_dims=(None, None, 0))
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="vmap: .* has no batching rule")
        got = batched(weight, scale, xs)
    for position in range(2):
        expected = np.stack(
            [
                grad(loss, argnums=(0, 1))(weight, scale, xs[i])[position].numpy()
                for i in range(5)
            ]
        )
        np.testing.assert_allclose(got[position].numpy(), expected, atol=1e-10)


def test_batch_norm_training_updates_the_running_statistics_as_the_loop() -> None:
    """Running statistics shared by the batch: after vmap they hold what B updates,
    one example after the other, leave (closed form of the momentum recursion)."""
    x, weight, bias = _t(4, 6, 3, 2), _t(3), _t(3)

    def run(batched: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        mean = gradgen.zeros(3, dtype=gradgen.float64)
        var = gradgen.ones(3, dtype=gradgen.float64)

        def f(xi: Any) -> Any:
            return F.batch_norm(xi, mean, var, weight, bias, True, 0.3)

        out = _batched(f, x) if batched else _quiet_loop(f, x)
        return out, mean.numpy(), var.numpy()

    for got, expected in zip(run(True), run(False)):
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)


def test_embedding_backward_per_example_keeps_the_padding_row_at_zero() -> None:
    weight = _t(7, 3)
    indices = gradgen.tensor(np.array([[1, 0, 3, 1], [2, 2, 0, 6], [5, 0, 0, 1]]))

    def loss(w: Any, i: Any) -> Any:
        return (F.embedding(i, w, padding_idx=0) ** 2).sum()

    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="vmap: .* has no batching rule")
        got = vmap(grad(loss), in_dims=(None, 0))(weight, indices).numpy()
    expected = np.stack([grad(loss)(weight, indices[i]).numpy() for i in range(3)])
    np.testing.assert_allclose(got, expected, atol=1e-12)
    assert not got[:, 0].any()
