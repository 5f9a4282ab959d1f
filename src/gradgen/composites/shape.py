"""Composites of the shape family: reshape, flatten, narrow, chunk, the *_as views, diag, detach_,
movedim, and the aliases concat, concatenate, swapaxes, swapdims, moveaxis."""

from __future__ import annotations


from ..numpy_kernels import _wrap_dim
from ..tensor import Tensor
from ..generated import ops  # functions read at call time (the generated tie)

__all__ = [
    "reshape",
    "flatten",
    "contiguous",
    "narrow",
    "split_sizes",
    "chunk",
    "expand_as",
    "view_as",
    "reshape_as",
    "diag",
    "detach_",
    "concat",
    "swapaxes",
    "movedim",
]


def reshape(self: Tensor, shape: tuple[int, ...]) -> Tensor:
    """PyTorch's reshape: a view when the memory allows one, else _unsafe_view of a
    contiguous clone (UnsafeViewBackward0 <- CloneBackward0, as PyTorch records it)."""
    data = self._data
    if data.flags.c_contiguous or data.ndim < 2:
        return self.view(shape)
    try:
        return self.view(shape)
    except RuntimeError:
        contiguous = self.clone(memory_format="contiguous_format")
        return ops._unsafe_view(contiguous, shape)


def flatten(self: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """Merge dimensions start_dim..end_dim into one."""
    ndim = self.dim()
    if ndim == 0:
        return self.reshape((1,))
    start, end = _wrap_dim(start_dim, ndim), _wrap_dim(end_dim, ndim)
    if start > end:
        raise RuntimeError(
            "flatten() has invalid args: start_dim cannot come after end_dim"
        )
    if start == end:
        return self
    shape = tuple(self.shape)
    merged = 1
    for extent in shape[start : end + 1]:
        merged *= extent
    return self.reshape(shape[:start] + (merged,) + shape[end + 1 :])


def contiguous(self: Tensor, memory_format: object = None) -> Tensor:
    """The tensor itself if its memory is C-contiguous, else a contiguous copy."""
    if self._data.flags.c_contiguous:
        return self
    return self.clone(memory_format="contiguous_format")


def narrow(self: Tensor, dim: int, start: int, length: int) -> Tensor:
    """`length` elements along `dim` from `start` (a slice, as in PyTorch)."""
    ndim = self.dim()
    if ndim == 0:
        raise RuntimeError("narrow() cannot be applied to a 0-dim tensor.")
    dim = _wrap_dim(dim, ndim)
    size = self.shape[dim]
    if start < 0:
        start += size
    if not 0 <= start <= size or length < 0 or start + length > size:
        raise RuntimeError(
            f"start ({start}) + length ({length}) exceeds dimension size ({size})."
        )
    return self.slice(dim, start, start + length)


def split_sizes(
    self: Tensor, split_size: tuple[int, ...], dim: int = 0
) -> tuple[Tensor, ...]:
    """`split` with a list of sizes is split_with_sizes."""
    return self.split_with_sizes(split_size, dim)


def chunk(self: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    """`chunks` pieces of (nearly) equal size along `dim`, as PyTorch splits them."""
    if chunks <= 0:
        raise RuntimeError(
            "chunk expects `chunks` to be greater than 0, got: " + str(chunks)
        )
    size = self.shape[_wrap_dim(dim, self.dim())]
    split_size = (size + chunks - 1) // chunks
    if split_size == 0 and size == 0:
        return self.split_with_sizes([0] * chunks, dim)
    return self.split(split_size, dim)


def expand_as(self: Tensor, other: Tensor) -> Tensor:
    return self.expand(tuple(other.shape))


def view_as(self: Tensor, other: Tensor) -> Tensor:
    return self.view(tuple(other.shape))


def reshape_as(self: Tensor, other: Tensor) -> Tensor:
    return self.reshape(tuple(other.shape))


def detach_(self: Tensor) -> Tensor:
    """Cut `self` from the graph in place: no grad_fn, no longer requiring grad, no
    tangent (PyTorch resets the same autograd metadata and keeps hooks). A view
    cannot be detached in place."""
    if self._base is not None:
        raise RuntimeError(
            "Can't detach views in-place. Use detach() instead. If you are using "
            "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is "
            "set as True, gradients are views of DDP buckets, and hence detach_() "
            "cannot be called on these gradients. To fix this error, please refer to "
            "the Optimizer.zero_grad() function in torch/optim/optimizer.py as the "
            "solution."
        )
    self._requires_grad = False
    self._grad_fn = None
    self._output_nr = 0
    self._fw_grad = None
    return self


def diag(self: Tensor, diagonal: int = 0) -> Tensor:
    """A vector's diagonal matrix (diag_embed), or a matrix's diagonal as a new
    vector (diagonal_copy)."""
    ndim = self.dim()
    if ndim == 1:
        return self.diag_embed(diagonal)
    if ndim == 2:
        return ops.diagonal_copy(self, diagonal)
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {ndim}D")


def concat(tensors: list[Tensor], dim: int = 0) -> Tensor:
    """concat and concatenate: aliases of cat."""
    return ops.cat(tensors, dim)


def swapaxes(self: Tensor, axis0: int, axis1: int) -> Tensor:
    """swapaxes and swapdims: aliases of transpose (a view)."""
    return self.transpose(axis0, axis1)


def movedim(
    self: Tensor, source: int | list[int], destination: int | list[int]
) -> Tensor:
    """movedim and moveaxis: the dims in `source` moved to the places in
    `destination`, the others keeping their order (a permute, so a view)."""
    sources = [source] if isinstance(source, int) else list(source)
    destinations = [destination] if isinstance(destination, int) else list(destination)
    if len(sources) != len(destinations):
        raise RuntimeError(
            "movedim: Invalid source or destination dims: source "
            f"({sources} dims) should contain the same number of dims as "
            f"destination ({destinations} dims)"
        )
    ndim = self.dim()
    wrapped_sources = [_wrap_dim(d, ndim) for d in sources]
    wrapped_destinations = [_wrap_dim(d, ndim) for d in destinations]
    for name, dims in (("source", sources), ("destination", destinations)):
        wrapped = wrapped_sources if name == "source" else wrapped_destinations
        if len(set(wrapped)) != len(wrapped):
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({dims})")
    order = [-1] * ndim
    for src, dst in zip(wrapped_sources, wrapped_destinations):
        order[dst] = src
    rest = iter(d for d in range(ndim) if d not in wrapped_sources)
    dims = [d if d != -1 else next(rest) for d in order]
    return ops.permute(self, dims)
