"""In-place changes through a view: PyTorch's CopySlices.

`y[:, 0] += 1` or `y.view(-1)[2:].mul_(w)` change `y` (the view's base) through a
view. The in-place operator's node (say MulBackward0) computes the gradient of the
*view*; the base needs one for all of its elements. As PyTorch does, the base's
history is rebased onto a CopySlices node: given the base's gradient, it hands the
part at the view's places to the in-place operator's node, writes what that returns
(the gradient of the view's old values) back into those places, and passes the
node's other gradients (for `w`) on. The view itself gets AsStridedBackward0: its
gradient lands in the base's places, flowing into CopySlices.

Where a view sits in its base is found from numpy's memory layout: the flat
positions of the view's elements within the (C-contiguous) base. Both nodes compute
with the index / index_put operators, so they are differentiable again
(create_graph=True works through them).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .graph import Node
from .tensor import Tensor, make_edge


def _extent(shape: tuple[int, ...], strides: tuple[int, ...]) -> tuple[int, int]:
    """The lowest and highest element offsets an array of this layout reaches."""
    low = sum((n - 1) * s for n, s in zip(shape, strides) if s < 0 and n > 0)
    high = sum((n - 1) * s for n, s in zip(shape, strides) if s > 0 and n > 0)
    return low, high


def view_positions(base: np.ndarray, view: np.ndarray) -> np.ndarray | None:
    """The flat (C-order) positions in `base` of the elements of `view`, shaped like
    `view`; None when the layouts do not allow working them out (a base whose
    elements overlap in memory, strides that are not whole elements)."""
    itemsize = base.itemsize
    if view.dtype != base.dtype or any(
        s % itemsize for s in base.strides + view.strides
    ):
        return None
    if base.size == 0:
        return np.zeros(view.shape, dtype=np.int64)
    base_strides = tuple(s // itemsize for s in base.strides)
    low, high = _extent(base.shape, base_strides)
    if high - low + 1 < base.size:
        return None  # elements share memory (a broadcast base)
    # Label base's memory with each element's C-order position, written through
    # base's own layout; then read the labels through the view's layout.
    labels = np.full(high - low + 1, -1, dtype=np.int64)
    word = labels.itemsize
    np.lib.stride_tricks.as_strided(
        labels[-low:], base.shape, tuple(s * word for s in base_strides)
    )[...] = np.arange(base.size).reshape(base.shape)
    distance = view.__array_interface__["data"][0] - base.__array_interface__["data"][0]
    if distance % itemsize:
        return None
    start = distance // itemsize - low
    view_strides = tuple(s // itemsize for s in view.strides)
    view_low, view_high = _extent(view.shape, view_strides)
    if start + view_low < 0 or start + view_high >= labels.size:
        return None
    positions: np.ndarray = np.lib.stride_tricks.as_strided(
        labels[start:], view.shape, tuple(s * word for s in view_strides)
    ).copy()
    if view.size and positions.min() < 0:
        return None
    return positions


class CopySlices(Node):
    """The base's grad_fn after an in-place operator changed it through a view."""

    __slots__ = ("_fn", "_positions", "_base_shape")

    def __init__(
        self, base: Tensor, view: Tensor, fn: Node, positions: np.ndarray
    ) -> None:
        super().__init__()
        self._fn = fn
        self._positions = Tensor(positions)
        self._base_shape = base._data.shape
        # Gradient 0 goes to the base's history before the change; the others where
        # the in-place operator's other inputs send theirs. The operator's node asks
        # its own edges which gradients are needed, so it gets the same edges.
        edges = (make_edge(base),) + tuple(fn._next_edges[1:])
        self.set_next_edges(edges)
        fn.set_next_edges(edges)
        fn.add_input_metadata(view)

    def apply(self, grads: Any) -> list[Tensor | None]:
        grad = grads[0]
        if grad is None:
            return [None] * len(self._next_edges)
        flat = grad.reshape(-1)
        view_grad = flat.index([self._positions])
        results = list(self._fn.apply([view_grad]))
        if self.task_needs_input_grad()[0]:
            old_values = results[0]
            if old_values is None:
                old_values = view_grad.new_zeros(view_grad.shape)
            elif old_values.dtype is not flat.dtype:
                old_values = old_values.to(flat.dtype)
            written = flat.index_put((self._positions,), old_values)
            results[0] = written.reshape(self._base_shape)
        else:
            results[0] = None
        return results

    def release_variables(self) -> None:
        self._fn.release_variables()

    def will_release_variables(self) -> None:
        self._fn.will_release_variables()


class AsStridedBackward0(Node):
    """A view's grad_fn once its base changed in place: the view's gradient, placed at
    its elements in the base, flows into the base's history."""

    __slots__ = ("_positions", "_base_shape")

    def __init__(self, base: Tensor, positions: Tensor) -> None:
        super().__init__()
        self._positions = positions
        self._base_shape = base._data.shape
        self.set_next_edges((make_edge(base),))

    def apply(self, grads: Any) -> list[Tensor | None]:
        grad = grads[0]
        if grad is None:
            return [None]
        size = int(np.prod(self._base_shape))
        zeros = grad.new_zeros(size)
        placed = zeros.index_put((self._positions,), grad, True)
        return [placed.reshape(self._base_shape)]


def _regenerate(view: Tensor, base: Tensor, positions: Tensor) -> None:
    node = AsStridedBackward0(base, positions)
    view._output_nr = node.add_input_metadata(view)
    view._grad_fn = node
    view._view_version = view._counter().version


def rebase_view_history(view: Tensor, fn: Node) -> bool:
    """Record an in-place change of `view` by `fn` as PyTorch's CopySlices does; False
    when the view's place in its base cannot be worked out."""
    base = view._base
    assert base is not None
    positions = view_positions(base._data, view._data)
    if positions is None:
        return False
    copy_slices = CopySlices(base, view, fn, positions)
    base._output_nr = copy_slices.add_input_metadata(base)
    base._grad_fn = copy_slices
    _regenerate(view, base, copy_slices._positions)
    return True


def refresh_view(view: Tensor) -> None:
    """A view whose base changed in place since its grad_fn was made (directly or
    through another view) gets a grad_fn into the base's current history, as PyTorch
    remakes a view's grad_fn when its version moved on. Views that never take part
    (detached ones) have version -1."""
    recorded = view._view_version
    counter = view._version_counter
    if recorded < 0 or counter is None or counter.version == recorded:
        return
    view._view_version = counter.version
    base = view._base
    assert base is not None
    if base._grad_fn is None and not base._requires_grad:
        return
    positions = view_positions(base._data, view._data)
    if positions is not None:
        _regenerate(view, base, Tensor(positions))
