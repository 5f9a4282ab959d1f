"""Non-reentrant checkpointing (``checkpoint(..., use_reentrant=False)``), on saved-tensor
hooks, with PyTorch's rules:

- The forward packs each saved tensor into a `_Holder` (keeping its metadata for the
  determinism check) and keeps only the checkpoint's inputs.
- The first unpack in a backward pass re-runs the function under a recomputation hook
  that gives the holders, in order, the tensors the recomputation saves. The
  recomputation stops as soon as every holder has its tensor (early stop), unless
  `set_checkpoint_early_stop(False)` or `early_stop=False`.
- Recomputed tensors belong to one backward pass (its graph task, or the enclosing
  `GraphExecGroup`): each is handed out once and dropped, so a second backward with
  `retain_graph=True` recomputes again.
"""

from __future__ import annotations

import itertools
import weakref
from collections import defaultdict
from collections.abc import Callable
from typing import Any

from .. import graph as _graph
from ..grad_mode import enable_grad
from ..graph import task_state
from ..tensor import Tensor

__all__ = ["CheckpointError", "GraphExecGroup"]

DEBUG_TIP = (
    "\nTip: To see a more detailed error message, either pass `debug=True` to\n"
    "`gradgen.utils.checkpoint.checkpoint(...)` or wrap the code block\n"
    "with `with gradgen.utils.checkpoint.set_checkpoint_debug_enabled(True):` to\n"
    "enable checkpoint-debug mode globally.\n"
)


class CheckpointError(RuntimeError):
    """The recomputation in backward did not save what the forward saved."""


class GraphExecGroup:
    """Backward calls inside one instance recompute each checkpointed region at most
    once (they must then use disjoint saved activations)."""

    _current: GraphExecGroup | None = None

    def __enter__(self) -> GraphExecGroup:
        if GraphExecGroup._current is not None:
            raise RuntimeError(
                "GraphExecGroup contexts cannot be nested. Already inside group "
                f"{GraphExecGroup._current}"
            )
        GraphExecGroup._current = self
        return self

    def __exit__(self, *args: object) -> None:
        GraphExecGroup._current = None

    @classmethod
    def _get_current_group(cls) -> GraphExecGroup | None:
        return cls._current


class _Handle:
    """The key of one recomputed tensor for one backward pass."""


class _Holder:
    """What the forward keeps of a saved tensor: per backward pass, its handle."""

    def __init__(self) -> None:
        self.handles: dict[Any, _Handle | None] = {}


class _StopRecomputation(Exception):
    """Every tensor backward needs is recomputed: the rest of the function is skipped."""


_outside_ids = itertools.count(1 << 62)


def _group_id() -> Any:
    """Which backward pass an unpack belongs to (PyTorch's graph task id)."""
    group = GraphExecGroup._get_current_group()
    if group is not None:
        return group
    task = task_state.task
    return task.task_id if task is not None else next(_outside_ids)


def _internal_assert(condition: bool) -> None:
    if not condition:
        raise AssertionError(
            "Something went unexpectedly wrong in activation checkpoint. Please report "
            "this bug to gradgen."
        )


MetadataFn = Callable[[Tensor], Any]


class CheckpointFrame:
    """One checkpointed call: its inputs, holders and the recomputed tensors."""

    def __init__(
        self,
        recompute_fn: Callable[..., Any],
        early_stop: bool,
        metadata_fn: MetadataFn,
        unpack_error_cb: Callable[[CheckpointError], Any] | None = None,
    ) -> None:
        self.recompute_fn = recompute_fn
        self.early_stop = early_stop
        self.metadata_fn = metadata_fn
        self.unpack_error_cb = unpack_error_cb
        self.saved_args: list[Any] = []
        self.weak_holders: list[weakref.ref[_Holder]] = []
        self.metadatas: list[Any] = []
        self.recomputed: dict[Any, weakref.WeakKeyDictionary[_Handle, Tensor]] = (
            defaultdict(weakref.WeakKeyDictionary)
        )
        self.recomp_counter: dict[Any, int] = defaultdict(int)
        self.is_recomputed: dict[Any, bool] = defaultdict(bool)
        self.forward_completed = False
        self.ignore_saved_mismatch = False

    # -- forward ----------------------------------------------------------------------

    def pack(self, tensor: Tensor) -> _Holder:
        holder = _Holder()
        self.weak_holders.append(weakref.ref(holder))
        self.metadatas.append(self.metadata_fn(tensor))
        return holder

    # -- backward ---------------------------------------------------------------------

    def unpack(self, holder: _Holder) -> Tensor:
        try:
            return self._unpack(holder)
        except CheckpointError as error:
            if self.unpack_error_cb is None:
                raise
            self.unpack_error_cb(error)
            raise

    def _unpack(self, holder: _Holder) -> Tensor:
        gid = _group_id()
        if not self.is_recomputed[gid]:
            self._recompute(gid)
        _internal_assert(gid in holder.handles)
        handle = holder.handles[gid]
        if handle is None:
            extra = ""
            if GraphExecGroup._get_current_group() is not None:
                extra = (
                    "Performing two backward calls that overlap (i.e. require the same "
                    "saved activation in order to compute gradients) is not allowed "
                    "while under the gradgen.utils.checkpoint.GraphExecGroup context. "
                )
            raise CheckpointError(
                "gradgen.utils.checkpoint: Unpack is being triggered for a tensor that "
                f"was already unpacked once. {extra}If you are calling "
                "ctx.saved_tensors in backward, make sure to do so only once. "
                "Otherwise please open an issue with details on your use case."
            )
        tensor = self.recomputed[gid][handle]
        holder.handles[gid] = None
        return tensor

    def _recompute(self, gid: Any) -> None:
        hooks = (self._recomputation_pack(gid), _recomputed_unpack)
        _graph.push_saved_tensors_hooks(*hooks)
        try:
            with enable_grad():
                self.recompute_fn(*self.saved_args)
        except _StopRecomputation:
            pass
        finally:
            _graph.pop_saved_tensors_hooks()
        self.is_recomputed[gid] = True
        self._check_recomputed(gid)

    def _recomputation_pack(self, gid: Any) -> Callable[[Tensor], Tensor]:
        def pack(tensor: Tensor) -> Tensor:
            tensor = tensor.detach() if tensor.requires_grad else tensor
            index = self.recomp_counter[gid]
            self.recomp_counter[gid] += 1
            if index >= len(self.weak_holders):
                _internal_assert(not self.early_stop)
                if not self.forward_completed:
                    self.ignore_saved_mismatch = True  # a backward inside the forward
                    return tensor
                raise CheckpointError(
                    "gradgen.utils.checkpoint: trying to save more tensors during "
                    "recomputation than during the original forward pass.\n" + DEBUG_TIP
                )
            holder = self.weak_holders[index]()
            if holder is not None:  # else a backward in the forward freed it
                _internal_assert(holder.handles.get(gid) is None)
                handle = holder.handles[gid] = _Handle()
                self.recomputed[gid][handle] = tensor
            if self.early_stop and self.recomp_counter[gid] == len(self.weak_holders):
                raise _StopRecomputation
            return tensor

        return pack

    def _check_recomputed(self, gid: Any) -> None:
        if self.ignore_saved_mismatch:
            return
        if len(self.weak_holders) != self.recomp_counter[gid]:
            raise CheckpointError(
                "gradgen.utils.checkpoint: A different number of tensors was saved "
                "during the original forward and recomputation.\n"
                f"Number of tensors saved during forward: {len(self.weak_holders)}\n"
                "Number of tensors saved during recomputation: "
                f"{self.recomp_counter[gid]}.\n" + DEBUG_TIP
            )
        differing = ""
        for index, weak_holder in enumerate(self.weak_holders):
            holder = weak_holder()
            if holder is None:
                continue
            handle = holder.handles.get(gid)
            _internal_assert(handle is not None and handle in self.recomputed[gid])
            recomputed = self.metadata_fn(self.recomputed[gid][handle])  # type: ignore[index]
            if self.metadatas[index] != recomputed:
                differing += (
                    f"tensor at position {index}:\n"
                    f"saved metadata: {self.metadatas[index]}\n"
                    f"recomputed metadata: {recomputed}\n"
                )
        if differing:
            raise CheckpointError(
                "gradgen.utils.checkpoint: Recomputed values for the following tensors "
                "have different metadata than during the forward pass.\n"
                f"{differing}.\n" + DEBUG_TIP
            )


def _recomputed_unpack(tensor: Tensor) -> Tensor:
    # A backward run inside the recomputation uses the recomputed graph as it is.
    return tensor


def default_metadata(tensor: Tensor) -> dict[str, Any]:
    """What the determinism check compares: shape, dtype and device."""
    return {"shape": tensor.shape, "dtype": tensor.dtype, "device": tensor.device}


def no_metadata(tensor: Tensor) -> None:
    return None


METADATA_FNS: dict[str, MetadataFn] = {"default": default_metadata, "none": no_metadata}
