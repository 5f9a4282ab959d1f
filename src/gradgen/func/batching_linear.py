"""nn.Linear inside vmap(grad): one node per layer.

Inside ``vmap(grad(f))`` a layer's weight is a batched alias (every example its own
copy, repeated with stride 0) and linear calls ``addmm(bias, x, weight.t())``. Run by
the generic rules, that records transpose, bmm, unsqueeze and add for every layer.
`linear_node` records one node instead: the batched product ``bias + x @ weight^T``
whose backward gives the three gradients directly, the weight's per example in the
weight's own layout (when the transposed weight comes straight from a transpose of a
batch of matrices, the node takes the gradient to that transpose's input: the
transpose node is recorded but never runs in the backward).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import dispatch
from ..dispatch import forward_ad_levels
from ..graph import (
    NO_EDGE,
    RELEASED,
    Node,
    Saved,
    SavedVariable,
    task_state,
    unpack_saved,
)
from ..grad_mode import _state as _grad_mode_state
from ..numpy_kernels.linalg import _outer
from ..numpy_kernels.linalg import bmm as _bmm_kernel
from ..tensor import Tensor
from ..variable_type_utils import next_edge, set_history
from .batching import HANDLES


class PerExampleLinearBackward(Node):
    """Backward of ``bias[:, None] + x @ wt`` over a batch: bias (b, out), x (b, n,
    in), wt (b, in, out); with `peeled`, its third edge is the input of wt's
    transpose (b, out, in), which gets ``g^T @ x`` in that layout. With `rows` the
    saved `wt_` is that input itself, the weight (b, out, in), whose edge the third
    is (nn.Linear's weight given to linear directly: no transpose was recorded)."""

    __slots__ = ("x_", "wt_", "peeled", "rows")
    _has_array_form = True

    def __init__(self, x: Saved, wt: Saved, peeled: bool, rows: bool = False) -> None:
        Node.__init__(self)
        self.x_: Saved = x
        self.wt_: Saved = wt
        self.peeled = peeled or rows
        self.rows = rows

    def release_variables(self) -> None:
        self.x_ = self.wt_ = RELEASED

    def apply(self, grads: Sequence[Tensor | None]) -> list[Tensor | None]:
        grad = grads[0]
        if grad is None:
            return [None, None, None]
        x, wt = unpack_saved(self.x_, self), unpack_saved(self.wt_, self)
        need = self.task_needs_input_grad()
        transpose, bmm = HANDLES["transpose.int"], HANDLES["bmm"]
        results: list[Tensor | None] = [None, None, None]
        if need[0]:
            results[0] = HANDLES["sum.dim_IntList"].call(grad, [1], False, None)
        if need[1]:
            results[1] = bmm.call(grad, wt if self.rows else transpose.call(wt, 1, 2))
        if need[2]:
            if self.peeled:
                results[2] = bmm.call(transpose.call(grad, 1, 2), x)
            else:
                results[2] = bmm.call(transpose.call(x, 1, 2), grad)
        return results

    def apply_arrays(self, grads: list[Any]) -> list[Any] | None:
        grad = grads[0]
        if grad is None or grad.__class__ is not np.ndarray:
            return None
        x = unpack_saved(self.x_, self)._data
        wt = unpack_saved(self.wt_, self)._data
        exec_info = task_state.exec_info
        if exec_info is None:
            need: Sequence[bool] = self.task_needs_input_grad()
        else:  # `task_needs_input_grad` of the three edges, read inline
            first, second, third = self._fn0, self._fn1, self._more[0][0]
            need = (
                first is not None and exec_info.get(first, False),
                second is not None and exec_info.get(second, False),
                third is not None and exec_info.get(third, False),
            )
        results: list[Any] = [None, None, None]
        if need[0]:
            # One row per example (nn.Linear's): a sum of one term is 0 plus that
            # term (-0.0 becomes 0.0), without the reduction's machinery.
            if grad.shape[1] == 1:
                results[0] = np.add(grad[:, 0], grad.dtype.type(0))
            else:
                results[0] = grad.sum(1)
        if need[1]:
            results[1] = _product(grad, wt if self.rows else wt.transpose(0, 2, 1))
        if need[2]:
            # The outer products of a one-row example come back transposed from the
            # kernel's memory order: asked for the transpose, their layout is final.
            if self.peeled:
                product = _product(x.transpose(0, 2, 1), grad)
                results[2] = product.transpose(0, 2, 1)
            else:
                results[2] = _product(x.transpose(0, 2, 1), grad)
        return results


def _product(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """bmm's kernel on operands whose sizes and dtype match (the node's, checked when
    it was recorded): its two cases of vmap(grad), outer products and one matrix
    repeated over the batch, by the kernel's own numpy calls without its checks;
    any other case by the kernel."""
    batch, rows, inner = left.shape
    if inner == 1:
        return _outer(left, right)
    if batch > 1 and right.strides[0] == 0:
        flat = np.ascontiguousarray(left).reshape(batch * rows, inner)
        product: np.ndarray = np.matmul(flat, right[0])
        return product.reshape(batch, rows, right.shape[2])
    return _bmm_kernel(left, right)


def _peel(edge: tuple[Any, int], wt: Tensor) -> tuple[tuple[Any, int], bool]:
    """The edge of the input of wt's transpose when wt is one of a batch of matrices
    (the transpose's backward then needs not run), else wt's own edge (also when the
    transpose or wt has hooks, which must see its gradient)."""
    function = edge[0]
    if (
        function is not None
        and function.__class__.__name__ == "TransposeBackward0"
        and not (function._pre_hooks or function._post_hooks)
        and not (function._tensor_pre_hooks or function._retains_grad)
    ):
        dims = {function.dim0 % 3, function.dim1 % 3}
        if dims == {1, 2} and len(function._next_edges) == 1:
            return function._next_edges[0], True
    return edge, False


def linear_node(
    bias: Tensor, x: Tensor, wt: Tensor, rows: bool = False
) -> Tensor | None:
    """``bias[:, None] + x @ wt`` on plain batched values (bias (b, out), x (b, n, in),
    wt (b, in, out), one dtype) recorded as one PerExampleLinearBackward; with `rows`
    `wt` is the weight itself (b, out, in) and the product takes its transpose. None
    when the call is not that (the caller runs the generic rules)."""
    if (
        not _grad_mode_state.enabled
        or forward_ad_levels.count
        or dispatch._observer is not None
        or bias.__class__ is not Tensor
        or x.__class__ is not Tensor
        or wt.__class__ is not Tensor
    ):
        return None
    bias_data, x_data, wt_data = bias._data, x._data, wt._data
    if rows and wt_data.ndim == 3:
        wt_data = wt_data.transpose(0, 2, 1)
    dtype = x_data.dtype
    if (
        x_data.ndim != 3
        or wt_data.ndim != 3
        or bias_data.ndim != 2
        or dtype.kind != "f"
        or wt_data.dtype != dtype
        or bias_data.dtype != dtype
        or bias_data.shape != (wt_data.shape[0], wt_data.shape[2])
        or x_data.shape[0] != wt_data.shape[0]
        or x_data.shape[2] != wt_data.shape[1]
    ):
        return None
    # (`next_edges` of the three, grad mode being on, without its generic steps)
    edges = (next_edge(bias), next_edge(x), next_edge(wt))
    if edges[0] is NO_EDGE and edges[1] is NO_EDGE and edges[2] is NO_EDGE:
        return None
    weight_edge, peeled = edges[2], False
    if not rows and weight_edge is not NO_EDGE:
        weight_edge, peeled = _peel(weight_edge, wt)
    # bmm's kernel, as the Batched key's call below Autograd would run it.
    result = Tensor(_product(x_data, wt_data))
    if bias_data.strides[0] == 0 and bias_data.shape[0]:
        # One bias repeated over the batch (vmap(grad)'s alias of nn.Linear's): the
        # same additions from its one row, without numpy's broadcast of a stride-0
        # axis (~9 us instead of ~5 at 256 x 128).
        result._data += bias_data[0]
    else:
        result._data += bias_data[:, None, :]
    node = PerExampleLinearBackward(
        SavedVariable.input(x), SavedVariable.input(wt), peeled, rows
    )
    node.set_next_edges((edges[0], edges[1], weight_edge))
    set_history(result, node)
    return result
