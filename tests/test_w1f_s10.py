"""W1's forward, session 10's third wave ("w1f"):

- a leaf's AccumulateGrad sets Node's fields itself (no Node.__init__ frame): the same
  fields as a Node, with the values PyTorch's leaf node has (no edges, the largest
  sequence number), anomaly mode's forward stack included;
- a leaf keeps one AccumulateGrad mutex across its graphs (made with its first node),
  so a step does not make a lock per leaf; it still guards concurrent accumulation;
- `x ** n` with a Python int n calls the ufunc numpy's `**` calls (np.square for 2,
  np.power where `**` takes no shortcut) asked for an array: same bits, and a 0-d
  result needs no np.asarray.
"""

from __future__ import annotations

import copy
import gc
import inspect
import pickle
import threading
from typing import Any

import numpy as np
import pytest

import gradgen
from gradgen.generated import variable_type
from node_slots import set_slots
from gradgen.graph import AccumulateGrad, Node


def test_accumulate_grad_sets_node_fields() -> None:
    leaf = gradgen.tensor([1.0, 2.0], dtype=gradgen.float32, requires_grad=True)
    node = AccumulateGrad(leaf)
    slots = set_slots(node)
    assert set(slots) == set(set_slots(Node())) | {"variable", "_mutex"}
    assert slots["_num_edges"] == 0
    assert slots["_sequence_number"] == 2**64 - 1
    assert slots["_topological_nr"] == 0
    assert slots["_extras"] is None
    assert slots["variable"] is leaf
    assert slots["_input_metadata"] == (((2,), leaf._data.dtype),)
    assert node.next_functions == ()


def test_accumulate_grad_records_forward_stack_in_anomaly_mode() -> None:
    leaf = gradgen.tensor(2.0, dtype=gradgen.float64, requires_grad=True)
    with pytest.warns(UserWarning), gradgen.autograd.detect_anomaly():
        node = AccumulateGrad(leaf)
    assert node.metadata is not None
    assert "traceback_" in node.metadata
    assert AccumulateGrad(leaf)._extras is None  # outside anomaly mode: nothing


def test_accumulate_grad_mutex_is_reentrant_and_accumulates() -> None:
    a = gradgen.tensor(2.0, dtype=gradgen.float64, requires_grad=True)
    (a * 3).backward()
    (a * 4).backward()
    assert a.grad is not None and a.grad.item() == 7.0
    node = a._get_grad_accumulator()
    assert node is not None and node._mutex is not None
    with node._mutex:
        with node._mutex:  # reentrant: a hook may run backward on the same leaf
            pass


def test_leaf_keeps_one_mutex_across_its_graphs() -> None:
    a = gradgen.tensor(2.0, dtype=gradgen.float64, requires_grad=True)
    first = a._get_grad_accumulator()
    assert first is not None
    mutex = first._mutex
    del first
    gc.collect()
    assert a._grad_accumulator is not None and a._grad_accumulator() is None
    second = a._get_grad_accumulator()
    assert second is not None and second._mutex is mutex
    other = gradgen.tensor(2.0, dtype=gradgen.float64, requires_grad=True)
    other_node = other._get_grad_accumulator()
    assert other_node is not None and other_node._mutex is not mutex


def test_leaf_with_mutex_copies_and_pickles() -> None:
    a = gradgen.tensor([1.0, -2.0], dtype=gradgen.float64, requires_grad=True)
    (a * a).sum().backward()
    copied = copy.deepcopy(a)
    loaded = pickle.loads(pickle.dumps(a))
    for tensor in (copied, loaded):
        assert tensor.tolist() == [1.0, -2.0] and tensor.requires_grad
        tensor.grad = None  # (deepcopy copies `.grad`, as PyTorch's)
        (tensor * 3).sum().backward()
        assert tensor.grad is not None and tensor.grad.tolist() == [3.0, 3.0]


def test_concurrent_backward_on_one_leaf_sums_every_gradient() -> None:
    a = gradgen.tensor(0.5, dtype=gradgen.float64, requires_grad=True)
    threads, rounds = 4, 200

    def work() -> None:
        for _ in range(rounds):
            (a * 2.0).backward()

    pool = [threading.Thread(target=work) for _ in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    assert a.grad is not None and a.grad.item() == 2.0 * threads * rounds


# -- `x ** n` with a Python int n: numpy's ufunc asked for an array -----------------


def test_the_pow_fast_path_calls_the_ufunc_numpys_operator_calls() -> None:
    source = inspect.getsource(variable_type.fast_pow_Tensor_Scalar)
    assert "np.square(array_0, out=ARRAY_OUT)" in source
    assert "np.power(array_0, INT_OPERANDS[exponent, dtype_0], out=ARRAY_OUT)" in source
    assert "else array_0**exponent" in source


@pytest.mark.parametrize("exponent", [-3, -2, -1, 0, 1, 2, 3, 4, 7, 0.5, 2.0, 3.0])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.complex128])
@pytest.mark.parametrize("shape", [(), (5,)])
def test_int_pow_keeps_numpys_bits_and_gives_a_0d_array(
    exponent: float, dtype: Any, shape: tuple[int, ...]
) -> None:
    rng = np.random.default_rng(7)
    values = rng.uniform(-3.0, 3.0, shape) + (
        1j * rng.uniform(-3.0, 3.0, shape) if dtype is np.complex128 else 0.0
    )
    data = np.asarray(values, dtype=dtype)
    leaf = gradgen.tensor(data, requires_grad=True)
    with np.errstate(all="ignore"):
        expected = np.asarray(data**exponent)  # numpy's own `**`, its shortcuts
        result = leaf**exponent
    assert type(result._data) is np.ndarray and result._data.shape == shape
    assert result._data.dtype == expected.dtype
    assert result._data.tobytes() == expected.tobytes()
    assert result.grad_fn is not None and result.grad_fn.name() == "PowBackward0"
