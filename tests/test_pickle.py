"""pickle and copy.deepcopy of tensors, parameters and views, as PyTorch does them."""

from __future__ import annotations

import copy
import pickle
from typing import Any

import numpy as np
import pytest

import gradgen
from gradgen.nn import Parameter
from torch_oracle import oracle, outcome


def _trained() -> tuple[gradgen.Tensor, gradgen.Tensor]:
    """A leaf after backward (its .grad is [2, 2]) and the non-leaf that made it."""
    leaf = gradgen.tensor([1.0, 3.0], requires_grad=True)
    result = leaf * 2
    result.sum().backward()
    return leaf, result


def _torch_trained(torch: Any) -> tuple[Any, Any]:
    leaf = torch.tensor([1.0, 3.0], requires_grad=True)
    result = leaf * 2
    result.sum().backward()
    return leaf, result


def _state(t: Any) -> tuple[Any, ...]:
    """What a round trip keeps: values, requires_grad, leaf-ness, grad (None or data)."""
    grad = None if t.grad is None else t.grad.detach().numpy()
    return (t.detach().numpy(), t.requires_grad, t.is_leaf, grad)


def test_pickle_after_backward_drops_grad_and_keeps_requires_grad() -> None:
    leaf, _ = _trained()
    loaded = pickle.loads(pickle.dumps(leaf))
    expected = oracle(
        "pickled leaf",
        lambda torch: _state(
            pickle.loads(pickle.dumps(_torch_trained(torch)[0]))  # noqa: S301
        ),
    )
    got = _state(loaded)
    np.testing.assert_array_equal(got[0], expected[0])
    assert got[1:] == expected[1:] == (True, True, None)


def test_pickle_of_a_non_leaf_gives_a_leaf_that_requires_grad() -> None:
    _, result = _trained()
    loaded = pickle.loads(pickle.dumps(result))
    expected = oracle(
        "pickled non-leaf",
        lambda torch: _state(
            pickle.loads(pickle.dumps(_torch_trained(torch)[1]))  # noqa: S301
        ),
    )
    got = _state(loaded)
    np.testing.assert_array_equal(got[0], [2.0, 6.0])
    assert got[1:] == expected[1:] == (True, True, None)
    assert loaded.grad_fn is None


def test_deepcopy_keeps_grad_and_refuses_a_non_leaf() -> None:
    leaf, result = _trained()
    copied = copy.deepcopy(leaf)
    assert copied is not leaf and copied._data is not leaf._data
    expected = oracle(
        "deepcopied leaf",
        lambda torch: _state(copy.deepcopy(_torch_trained(torch)[0])),
    )
    got = _state(copied)
    np.testing.assert_array_equal(got[3], [2.0, 2.0])
    np.testing.assert_array_equal(expected[3], [2.0, 2.0])
    assert got[1:3] == expected[1:3] == (True, True)
    # the copy is independent: changing it leaves the original alone
    with gradgen.no_grad():
        copied.mul_(10)
    np.testing.assert_array_equal(leaf.detach().numpy(), [1.0, 3.0])
    error = oracle(
        "deepcopy non-leaf",
        lambda torch: outcome(lambda: copy.deepcopy(_torch_trained(torch)[1])),
    )
    with pytest.raises(RuntimeError) as raised:
        copy.deepcopy(result)
    assert type(error) is RuntimeError and str(raised.value) == str(error)


def test_parameter_keeps_its_class_and_requires_grad() -> None:
    frozen = Parameter(gradgen.ones(2), requires_grad=False)
    trained = Parameter(gradgen.tensor([1.0, 2.0]))
    trained.grad = gradgen.ones(2)
    for parameter in (frozen, trained):
        for clone in (pickle.loads(pickle.dumps(parameter)), copy.deepcopy(parameter)):
            assert type(clone) is Parameter
            assert clone.requires_grad == parameter.requires_grad
            assert clone.is_leaf
            np.testing.assert_array_equal(clone.detach().numpy(), parameter.detach())
    expected = oracle(
        "parameter grads",
        lambda torch: _parameter_grads(torch),
    )
    # PyTorch keeps .grad in neither copy of a Parameter
    assert expected == (True, True)
    assert copy.deepcopy(trained).grad is None
    assert pickle.loads(pickle.dumps(trained)).grad is None


def _parameter_grads(torch: Any) -> tuple[bool, bool]:
    parameter = torch.nn.Parameter(torch.ones(2))
    parameter.grad = torch.ones(2)
    pickled = pickle.loads(pickle.dumps(parameter))  # noqa: S301
    return copy.deepcopy(parameter).grad is None, pickled.grad is None


def test_views_copied_together_share_memory_in_deepcopy() -> None:
    base = gradgen.arange(6.0)
    view = base[2:4]
    new_base, new_view = copy.deepcopy([base, view])
    new_view[0] = 100.0
    expected = oracle(
        "deepcopied views",
        lambda torch: _changed_copy(torch, copy.deepcopy),
    )
    np.testing.assert_array_equal(new_base.numpy(), expected)
    np.testing.assert_array_equal(base.numpy(), np.arange(6.0, dtype=np.float32))


def test_a_pickled_view_carries_only_its_elements() -> None:
    base = gradgen.arange(1000.0)
    view = base[2:4]
    assert len(pickle.dumps(view)) < 1000
    new_base, new_view = pickle.loads(pickle.dumps([base, view]))
    new_view[0] = 100.0
    expected = oracle(
        "pickled views",
        lambda torch: _changed_copy(
            torch, lambda x: pickle.loads(pickle.dumps(x))  # noqa: S301
        )[:6],
    )
    # PyTorch's pickle does not keep the two sharing memory either
    np.testing.assert_array_equal(new_base.numpy()[:6], expected)
    np.testing.assert_array_equal(expected, np.arange(6.0, dtype=np.float32))
    transposed = gradgen.arange(6.0).reshape(2, 3).t()
    assert pickle.loads(pickle.dumps(transposed)).stride() == transposed.stride()


def _changed_copy(torch: Any, copier: Any) -> Any:
    base = torch.arange(6.0)
    new_base, new_view = copier([base, base[2:4]])
    new_view[0] = 100.0
    return new_base


def test_pickled_views_keep_their_values_strides_and_dtypes() -> None:
    matrix = gradgen.arange(12.0).reshape(3, 4)
    cases = [
        matrix,
        matrix.t(),
        matrix[1:, ::2],
        matrix[2],
        gradgen.tensor(5, dtype=gradgen.int64),
        gradgen.tensor([True, False]),
        gradgen.tensor([1 + 2j]),
        gradgen.zeros(0, 3),
    ]
    for tensor in cases:
        loaded = pickle.loads(pickle.dumps(tensor))
        assert loaded.dtype == tensor.dtype and loaded.shape == tensor.shape
        np.testing.assert_array_equal(loaded.numpy(), tensor.numpy())
    # a view pickled alone still pickles a view of its own copy of the memory
    flipped = gradgen.from_numpy(np.arange(5.0)[::-1].copy()[::-2])
    np.testing.assert_array_equal(
        pickle.loads(pickle.dumps(flipped)).numpy(), [0, 2, 4]
    )


def test_a_module_pickles_and_deep_copies() -> None:
    model = gradgen.nn.Linear(3, 2)
    model(gradgen.ones(3)).sum().backward()
    for clone in (pickle.loads(pickle.dumps(model)), copy.deepcopy(model)):
        x = gradgen.tensor([0.5, -1.0, 2.0])
        np.testing.assert_allclose(clone(x).detach().numpy(), model(x).detach().numpy())
        assert type(clone.weight) is Parameter and clone.weight.requires_grad
