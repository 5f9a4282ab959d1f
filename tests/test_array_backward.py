"""The array form of the backward formulas (codegen/array_formulas.py,
gradgen.helpers.arrays): when it runs, when the tensor form runs instead, and that
both give the same gradients (values by hand; the operator table compares the forms on
every operator bit for bit)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

import gradgen
from gradgen.autograd import forward_ad
from gradgen.generated import functions
from gradgen.helpers.arrays import ARRAY_FORMS, tensor_forms_only
from gradgen.tensor import Tensor

from codegen.array_formulas import Untranslatable, read_twins, translate
from codegen.formulas import SavedAttribute, SavedKind


@pytest.fixture()
def array_calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The array forms that ran (MulBackward0's and PowBackward0's apply_arrays), by
    node class."""
    calls: list[str] = []
    for node_class in (functions.MulBackward0, functions.PowBackward0):
        original = node_class.apply_arrays

        def spy(
            node: Any, *args: Any, _name: str = node_class.__name__, _f: Any = original
        ) -> Any:
            result = _f(node, *args)
            if result is not None:  # None: it stepped aside for the tensor form
                calls.append(_name)
            return result

        monkeypatch.setattr(node_class, "apply_arrays", spy)
    yield calls


def test_plain_backward_runs_the_array_form(array_calls: list[str]) -> None:
    x = gradgen.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = gradgen.tensor([4.0, 5.0, 6.0], requires_grad=True)
    (x * y).sum().backward()
    assert array_calls == ["MulBackward0"]
    assert x.grad is not None and y.grad is not None
    assert x.grad.tolist() == [4.0, 5.0, 6.0]
    assert y.grad.tolist() == [1.0, 2.0, 3.0]


def test_create_graph_runs_the_tensor_form_and_double_backward_works(
    array_calls: list[str],
) -> None:
    x = gradgen.tensor([1.0, -2.0], requires_grad=True)
    (first,) = gradgen.autograd.grad((x**3).sum(), [x], create_graph=True)
    assert array_calls == []  # recorded: the tensor form, so it has a grad_fn
    assert first.grad_fn is not None
    assert first.tolist() == [3.0, 12.0]  # 3 x^2
    first.sum().backward()
    assert x.grad is not None and x.grad.tolist() == [6.0, -12.0]  # 6 x
    assert array_calls  # the second backward records no graph: array forms


def test_the_profiler_sees_the_tensor_form(array_calls: list[str]) -> None:
    x = gradgen.ones(3, requires_grad=True)
    with gradgen.autograd.profiler.profile() as prof:
        (x * x).sum().backward()
    assert array_calls == []
    counts = {event.key: event.count for event in prof.key_averages()}
    assert counts["aten::mul"] == 3  # the forward and both gradient terms
    assert x.grad is not None and x.grad.tolist() == [2.0, 2.0, 2.0]


def test_vmap_of_grad_runs_the_array_form_on_the_batches(
    array_calls: list[str],
) -> None:
    def f(x: Tensor) -> Tensor:
        return (x * x * x).sum()

    batch = gradgen.tensor([[1.0, 2.0], [3.0, 4.0]])
    result = gradgen.func.vmap(gradgen.func.grad(f))(batch)
    # grad's backward inside vmap runs on the batches as plain tensors: both muls'
    # array forms, though vmap's dispatch detour is on.
    assert array_calls == ["MulBackward0"] * 2
    np.testing.assert_array_equal(result.numpy(), 3 * batch.numpy() ** 2)


def test_batched_grad_outputs_run_the_tensor_form(array_calls: list[str]) -> None:
    x = gradgen.tensor([1.0, 2.0], requires_grad=True)
    (rows,) = gradgen.autograd.grad(
        x * x, [x], grad_outputs=[gradgen.eye(2)], is_grads_batched=True
    )
    assert array_calls == []  # the gradients are BatchedTensors: the batching rules
    np.testing.assert_array_equal(rows.numpy(), [[2.0, 0.0], [0.0, 4.0]])


def test_an_open_forward_ad_level_runs_the_tensor_form(array_calls: list[str]) -> None:
    x = gradgen.tensor([1.0, 2.0], requires_grad=True)
    with forward_ad.dual_level():
        (x * x).sum().backward()
    assert array_calls == []
    assert x.grad is not None and x.grad.tolist() == [2.0, 4.0]


def test_a_saved_subclass_runs_the_tensor_form(array_calls: list[str]) -> None:
    class Marked(Tensor):
        pass

    x = gradgen.tensor([1.0, 2.0], requires_grad=True)
    (x * Marked(np.array([3.0, 4.0], np.float32))).sum().backward()
    assert array_calls == []
    assert x.grad is not None and x.grad.tolist() == [3.0, 4.0]


def test_tensor_forms_only_switches_every_node_back() -> None:
    assert ARRAY_FORMS.enabled
    with tensor_forms_only():
        assert not ARRAY_FORMS.enabled
    assert ARRAY_FORMS.enabled


def test_a_real_input_gets_the_real_part_of_a_complex_gradient() -> None:
    x = gradgen.tensor(np.array([1.0, 2.0]), requires_grad=True)
    y = gradgen.tensor(np.array([1.0 + 2.0j, 3.0 - 1.0j]))
    v = np.array([2.0 - 1.0j, 0.5 + 0.5j])
    (grad,) = gradgen.autograd.grad(x * y, [x], gradgen.tensor(v))
    assert grad.dtype == gradgen.float64  # handle_r_to_c dropped the imaginary part
    np.testing.assert_array_equal(grad.numpy(), np.real(v * np.conj(y.numpy())))


def test_broadcast_gradients_are_summed_to_each_input_in_its_dtype() -> None:
    x = gradgen.tensor([[1.0], [2.0], [3.0]], dtype=gradgen.float32, requires_grad=True)
    y = gradgen.tensor(np.array([1.0, 10.0, 100.0, 1000.0]), requires_grad=True)
    (x * y).sum().backward()
    assert x.grad is not None and y.grad is not None
    assert x.grad.dtype == gradgen.float32 and x.grad.shape == (3, 1)
    assert x.grad.tolist() == [[1111.0], [1111.0], [1111.0]]
    assert y.grad.dtype == gradgen.float64 and y.grad.tolist() == [6.0] * 4


def _both_forms(function: Any, *values: Any, dtype: Any) -> list[np.ndarray]:
    results = []
    for tensor_form in (False, True):
        leaves = [gradgen.tensor(v, dtype=dtype, requires_grad=True) for v in values]
        if tensor_form:
            with tensor_forms_only():
                function(*leaves).sum().backward()
        else:
            function(*leaves).sum().backward()
        results.append([leaf.grad.numpy() for leaf in leaves])
    array, tensor = results
    for a, t in zip(array, tensor):
        assert a.dtype == t.dtype and a.shape == t.shape
        np.testing.assert_array_equal(a, t)
    return array


def test_a_wrapped_number_ranks_lowest_in_the_array_form_too() -> None:
    # 0.1 is a wrapped number (float64): the 0-d float32 product stays float32, and
    # the gradient is 0.1 rounded to float32 once, in both forms.
    (grad,) = _both_forms(lambda x: x * 0.1, 3.0, dtype=gradgen.float32)
    assert grad.dtype == np.float32 and grad == np.float32(0.1)


def test_chains_of_formulas_agree_bit_for_bit_in_float32() -> None:
    rng = np.random.default_rng(0)
    a, b = rng.uniform(0.5, 2.0, (3, 4)), rng.uniform(0.5, 2.0, (4,))
    _both_forms(
        lambda x, y: ((x * y + 1) ** 2 / (y - 3)).tanh().sigmoid().exp().log(),
        a,
        b,
        dtype=gradgen.float32,
    )


def test_retain_graph_backward_twice_accumulates() -> None:
    x = gradgen.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad is not None and x.grad.tolist() == [4.0, 8.0]


# -- the generator ----------------------------------------------------------------------


def _saved(name: str, kind: SavedKind) -> SavedAttribute:
    return SavedAttribute(name, name, kind, name, name, True, "Any")


def test_translation_calls_the_twins_of_operators_methods_and_helpers() -> None:
    saved = (_saved("self", SavedKind.TENSOR), _saved("dim", SavedKind.VALUE))
    got = translate(
        "-grad * self.sum(dim) + 2 * handle_r_to_c(self, grad)", saved, read_twins()
    )
    assert got == (
        "arrays.add(arrays.mul(arrays.neg(grad), arrays.sum(self, dim)), "
        "arrays.mul(2, arrays.handle_r_to_c(self, grad)))"
    )


def test_plain_values_stay_python() -> None:
    saved = (_saved("self", SavedKind.TENSOR), _saved("dim", SavedKind.VALUE))
    got = translate("grad.unsqueeze(dim - 1) if dim > 0 else grad", saved, read_twins())
    assert got == "arrays.unsqueeze(grad, dim - 1) if dim > 0 else grad"


def test_a_formula_with_a_call_without_twin_has_no_array_form() -> None:
    saved = (_saved("self", SavedKind.TENSOR),)
    with pytest.raises(Untranslatable) as error:
        translate("grad * no_such_helper(self)", saved, read_twins())
    assert error.value.missing == "no_such_helper"
    with pytest.raises(Untranslatable, match="indexing a tensor"):
        translate("grad[0]", saved, read_twins())
