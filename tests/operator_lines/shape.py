"""Operator-table lines of the shape family of native_functions.yaml."""

from __future__ import annotations

import warnings
from typing import Any

from .common import Line, _aten, _aten_namespace, _dispatcher, _f


def _meshgrid_ij(lib: Any, a: Any, b: Any) -> Any:
    """meshgrid without `indexing` ("ij"), whose warning PyTorch and gradgen both give."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        x, y = lib.meshgrid(a, b)
    return x * y


LINES: dict[str, Line] = {
    "permute": Line(lambda lib, a: lib.permute(a, (2, 0, 1)), ((2, 3, 4),)),
    "expand": Line(lambda lib, a: a.expand(2, -1, 4) * 1.0, ((3, 1),)),
    "sum_to_size": Line(lambda lib, a: (a * a).sum_to_size(3, 1), ((3, 4),)),
    "view": Line(lambda lib, a: a.view(3, 4) * a.view(3, 4), ((2, 6),)),
    "reshape": Line(lambda lib, a: lib.reshape(a.t(), (4, 3)) * 2.0, ((3, 4),)),
    "squeeze": Line(lambda lib, a: lib.squeeze(a) * a.squeeze(), ((3, 1, 2),)),
    "squeeze.dim": Line(lambda lib, a: lib.squeeze(a, 1) * 3.0, ((3, 1, 2),)),
    "unsqueeze": Line(lambda lib, a: lib.unsqueeze(a, -1) * a.unsqueeze(0), ((3,),)),
    "transpose.int": Line(lambda lib, a: lib.transpose(a, 0, -1) * 2.0, ((2, 3, 4),)),
    "t": Line(lambda lib, a: lib.t(a) * a.t(), ((2, 3),)),
    "flatten.using_ints": Line(lambda lib, a: lib.flatten(a, 1) * 2.0, ((2, 3, 4),)),
    "contiguous": Line(lambda lib, a: a.t().contiguous() * a.t(), ((2, 3),)),
    "select.int": Line(lambda lib, a: lib.select(a, 1, -1) * a.select(0, 0), ((3, 3),)),
    "slice.Tensor": Line(
        lambda lib, a: a[1:5:2] * lib.slice(a, 0, None, -2, 2),
        ((6,),),
        compare=False,
    ),
    "narrow": Line(
        lambda lib, a: lib.narrow(a, 0, 1, 2) * a.narrow(0, 2, 2), ((4, 2),)
    ),
    "cat": Line(lambda lib, a, b: lib.cat([a, b * b, a], 1), ((2, 3), (2, 1))),
    "stack": Line(lambda lib, a, b: lib.stack([a, b * b], -1), ((2, 3), (2, 3))),
    # Building, splitting and tiling (composites/shape_joining.py).
    "atleast_1d": Line(
        lambda lib, a: lib.atleast_1d(a[0, 0]) * lib.atleast_1d(a).sum(), ((2, 3),)
    ),
    "atleast_1d.Sequence": Line(
        lambda lib, a: lib.atleast_1d([a[0, 0], a])[0] * lib.atleast_1d(a[1], a)[1],
        ((2, 3),),
    ),
    "atleast_2d": Line(
        lambda lib, a: lib.atleast_2d(a[0]) * lib.atleast_2d(a[1, 1]), ((2, 3),)
    ),
    "atleast_2d.Sequence": Line(
        lambda lib, a: lib.atleast_2d((a[0], a))[0] * lib.atleast_2d(a[1], a)[1],
        ((2, 3),),
    ),
    "atleast_3d": Line(
        lambda lib, a: lib.atleast_3d(a) * lib.atleast_3d(a[0]).sum()
        + lib.atleast_3d(a[0, 0]),
        ((2, 3),),
    ),
    "atleast_3d.Sequence": Line(
        lambda lib, a: lib.atleast_3d([a[0], a])[1] * lib.atleast_3d(a, a[1, 1])[1],
        ((2, 3),),
    ),
    "broadcast_to": Line(
        lambda lib, a: lib.broadcast_to(a, (2, 3, 2)) * a.broadcast_to((3, 2)),
        ((3, 1),),
    ),
    "broadcast_tensors": Line(
        lambda lib, a, b: lib.broadcast_tensors(a, b)[0]
        * lib.broadcast_tensors(a, b)[1],
        ((3, 1), (2,)),
    ),
    "hstack": Line(lambda lib, a, b: lib.hstack([a, b * b, a]), ((2, 3), (2, 1))),
    "vstack": Line(lambda lib, a, b: lib.vstack((a, b * b)), ((3,), (2, 3))),
    "row_stack": Line(lambda lib, a, b: lib.row_stack([a * b, b]), ((3,), (2, 3))),
    "dstack": Line(lambda lib, a, b: lib.dstack([a, b * 2.0]), ((2, 3), (2, 3))),
    "column_stack": Line(
        lambda lib, a, b: lib.column_stack([a, b, a * 2.0]), ((3,), (3, 2))
    ),
    "tensor_split.sections": Line(
        lambda lib, a: lib.tensor_split(a, 3, 1)[0] * a.tensor_split(3, 1)[1],
        ((2, 5),),
    ),
    "tensor_split.indices": Line(
        lambda lib, a: lib.tensor_split(a, [1, -1], 1)[1]
        * a.tensor_split((1, 9), 1)[0],
        ((2, 4),),
    ),
    "tensor_split.tensor_indices_or_sections": Line(
        lambda lib, a: lib.tensor_split(a, lib.tensor([1, 3]), 1)[1]
        * a.tensor_split(lib.tensor(2), 1)[1],
        ((2, 4),),
    ),
    "hsplit.int": Line(
        lambda lib, a: lib.hsplit(a, 2)[1] * a.hsplit(2)[0] + lib.hsplit(a[0], 2)[0],
        ((3, 4),),
    ),
    "hsplit.array": Line(lambda lib, a: lib.hsplit(a, [1, 3])[1] * 2.0, ((3, 4),)),
    "vsplit.int": Line(lambda lib, a: lib.vsplit(a, 2)[1] * a.vsplit(2)[0], ((4, 3),)),
    "vsplit.array": Line(lambda lib, a: lib.vsplit(a, [3])[0] * 2.0, ((4, 3),)),
    "dsplit.int": Line(
        lambda lib, a: lib.dsplit(a, 2)[1] * a.dsplit(2)[0], ((2, 1, 4),)
    ),
    "dsplit.array": Line(lambda lib, a: lib.dsplit(a, [1])[1] * 2.0, ((2, 1, 4),)),
    "unflatten.int": Line(
        lambda lib, a: lib.unflatten(a, 1, (2, -1)) * a.unflatten(-1, [2, 3]),
        ((2, 6),),
    ),
    "tile": Line(lambda lib, a: lib.tile(a, (2, 1, 2)) * a.tile((2,)).sum(), ((2, 3),)),
    "fliplr": Line(lambda lib, a: lib.fliplr(a) * a.fliplr(), ((2, 3),)),
    "flipud": Line(lambda lib, a: lib.flipud(a) * a.flipud(), ((2, 3),)),
    "meshgrid": Line(lambda lib, a, b: _meshgrid_ij(lib, a, b), ((3,), (2,))),
    "meshgrid.indexing": Line(
        lambda lib, a, b: lib.meshgrid(a, b, indexing="xy")[0]
        * lib.meshgrid([a, b], indexing="xy")[1],
        ((3,), (2,)),
    ),
    "cartesian_prod": Line(
        lambda lib, a, b: lib.cartesian_prod(a, b) * 2.0 + lib.cartesian_prod(a).sum(),
        ((3,), (2,)),
    ),
    "combinations": Line(
        lambda lib, a: lib.combinations(a) * lib.combinations(a, 2, True)[:6],
        ((4,),),
    ),
    "repeat_interleave.Tensor": Line(
        lambda lib, a: a * lib.repeat_interleave(lib.tensor([1, 0, 2])).sum(), ((3,),)
    ),
    "repeat_interleave.self_Tensor": Line(
        lambda lib, a: lib.repeat_interleave(a, lib.tensor([1, 0, 2]), 0)
        * a.repeat_interleave(lib.tensor(2))[:2],
        ((3, 2),),
    ),
    "repeat_interleave.self_int": Line(
        lambda lib, a: lib.repeat_interleave(a, 2, 1) * a.repeat_interleave(2).sum(),
        ((3, 2),),
    ),
    "split.Tensor": Line(lambda lib, a: lib.split(a, 2)[1] * 3.0, ((5, 2),)),
    "split.sizes": Line(
        lambda lib, a: a.split([1, 4])[0] * a.split([3, 2])[1][:1], ((5,),)
    ),
    "split_with_sizes": Line(
        lambda lib, a: lib.split_with_sizes(a, [2, 3])[1] * 2.0, ((5,),)
    ),
    "chunk": Line(lambda lib, a: lib.chunk(a, 3)[2] * 2.0, ((7,),)),
    "unbind.int": Line(lambda lib, a: lib.unbind(a, 1)[0] * a.unbind()[1], ((2, 2),)),
    "select_backward": Line(
        lambda lib, a: lib.select_backward(a, (3, 4), 0, 1) * 2.0,
        ((4,),),
        compare=False,
    ),
    "slice_backward": Line(
        lambda lib, a: lib.slice_backward(a, (6,), 0, 1, 5, 2) * 2.0,
        ((2,),),
        compare=False,
    ),
    "view_as_real": Line(lambda lib, a: lib.view_as_real(a * a), ((3,),), complex=True),
    "view_as_complex": Line(
        lambda lib, a: lib.view_as_complex(a * a) * lib.view_as_complex(a * 1.0),
        ((3, 2),),
    ),
    "flip": Line(lambda lib, a: lib.flip(a, (0, -1)) * a.flip(1), ((2, 3),)),
    "roll": Line(lambda lib, a: lib.roll(a, (1, -2), (0, 1)) * a.roll(2), ((2, 3),)),
    # Leading new dims only: the double backward of a repeat along an existing dim
    # goes through reshape of an expanded gradient, which the core reshape cannot
    # do yet (see ops/test_shape.py::test_repeat_double_backward_along_existing_dims).
    "repeat": Line(lambda lib, a: a.repeat(2, 1, 1) * a, ((2, 3),), complex=True),
    "expand_as": Line(lambda lib, a, b: a.expand_as(b) * b, ((3, 1), (2, 3, 4))),
    "view_as": Line(lambda lib, a, b: a.view_as(b) * b, ((2, 3), (3, 2))),
    "reshape_as": Line(lambda lib, a, b: a.reshape_as(b) * b, ((2, 3), (6,))),
    "_unsafe_view": Line(
        lambda lib, a: _aten_namespace(lib)._unsafe_view(a * a, (3, 2)) * 2.0,
        ((2, 3),),
    ),
    "constant_pad_nd": Line(
        lambda lib, a: _f("constant_pad_nd")(lib)(a * a, (1, -1, 2, 0), 0.5),
        ((3, 4),),
    ),
    # sign() and floor() have zero derivatives: detached or not, the same function.
    "detach_": Line(
        lambda lib, a: a * lib.detach_(a.sign() * 2.0) + (a.floor() * 1.0).detach_(),
        ((5,),),
    ),
    "diagonal": Line(
        lambda lib, a: lib.diagonal(a, -1, 1, 2) * a.diagonal(1, 2, 1)
        + a.diagonal(0, 0, -1).sum(),
        ((2, 3, 3),),
    ),
    "diagonal_backward": Line(
        lambda lib, a: _aten_namespace(lib).diagonal_backward(
            a * a, (2, 3, 4), 1, 1, 2
        ),
        ((2, 3),),
    ),
    "diagonal_copy": Line(
        lambda lib, a: lib.diagonal_copy(a, -1) * a.diagonal(-1), ((3, 4),)
    ),
    "diag_embed": Line(
        lambda lib, a: lib.diag_embed(a * a, 1, 0, 2) + a.diag_embed().sum(),
        ((2, 3),),
    ),
    "diag": Line(
        lambda lib, a: lib.diag(a, 1).sum() * lib.diag(a[0], -1) + a.diag().sum(),
        ((3, 3),),
    ),
    "concat": Line(lambda lib, a, b: lib.concat([a, b * b], 1), ((2, 3), (2, 1))),
    "concatenate": Line(
        lambda lib, a, b: lib.concatenate([b * b, a], -1), ((2, 3), (2, 1))
    ),
    "swapaxes": Line(
        lambda lib, a: lib.swapaxes(a, 0, -1) * a.swapaxes(2, 0), ((2, 3, 2),)
    ),
    "swapdims": Line(
        lambda lib, a: lib.swapdims(a, 1, 0) * a.swapdims(0, 1), ((2, 3),)
    ),
    "movedim.intlist": Line(
        lambda lib, a: lib.movedim(a, (0, 1), (2, 0)) * a.movedim([2], [0]),
        ((3, 3, 3),),
    ),
    "movedim.int": Line(
        lambda lib, a: lib.movedim(a, 0, -1) * a.movedim(-1, 1), ((3, 3, 3),)
    ),
    "moveaxis.intlist": Line(
        lambda lib, a: lib.moveaxis(a, [0, 2], [1, 0]) * 2.0, ((2, 3, 4),)
    ),
    "moveaxis.int": Line(lambda lib, a: a.moveaxis(1, 0) * a.moveaxis(0, 1), ((3, 3),)),
    "alias": Line(lambda lib, a: _dispatcher(lib, "alias")(a) * a, ((2, 3),)),
    "as_strided": Line(
        lambda lib, a: lib.as_strided(a, (2, 2), (1, 2)) * 2.0
        + a.as_strided((2, 3), (3, 1), 1).sum(-1, True)
        + lib.as_strided(a[1:], (2, 2), (2, 1), 3),
        ((7,),),
    ),
    # torch 2.13's as_strided_scatter_backward gives `self` the gradient inside the
    # written region (where the output does not depend on self) and zero outside it;
    # gradgen's is the other way round (gradcheck agrees). The values and src's
    # gradient are compared in tests/ops/test_linshape_entries.py.
    "as_strided_scatter": Line(
        lambda lib, a, b: lib.as_strided_scatter(a * 1.0, b, (2, 2), (1, 2)) * a
        + a.as_strided_scatter(b * b, (2, 2), (2, 1), 1),
        ((7,), (2, 2)),
        compare=False,
    ),
    "unfold": Line(
        lambda lib, a: a.unfold(1, 2, 1) * 2.0
        + a.unfold(1, 2, 2).sum(-2, True)[..., :1],
        ((3, 4),),
    ),
    "unfold_backward": Line(
        lambda lib, g: _aten(lib, "unfold_backward")(g, [3, 6], 1, 2, 2) * 2.0
        + _aten(lib, "unfold_backward")(g.narrow(1, 0, 2), [3, 3], -1, 2, 1).sum(),
        ((3, 3, 2),),
    ),
    "narrow_copy": Line(
        lambda lib, a: lib.narrow_copy(a, 0, 1, 2) * a.narrow_copy(1, 1, 1)[1:],
        ((3, 2),),
    ),
    "unsafe_split.Tensor": Line(
        lambda lib, a: lib.unsafe_split(a, 2)[1] * a.unsafe_split(2, 1)[1][1:3],
        ((5, 3),),
    ),
    "unsafe_split_with_sizes": Line(
        lambda lib, a: lib.unsafe_split_with_sizes(a, [1, 2], 1)[1]
        * a.unsafe_split_with_sizes([1, 1])[0][:, :2],
        ((2, 3),),
    ),
    "lift": Line(lambda lib, a: _dispatcher(lib, "lift")(a) * a, ((2, 3),)),
    "lift_fresh": Line(lambda lib, a: _dispatcher(lib, "lift_fresh")(a) * a, ((2, 3),)),
    "block_diag": Line(
        lambda lib, a, b, c: lib.block_diag(a, b * b, c, a.sum()),
        ((2, 3), (3,), (1, 2)),
        complex=True,
    ),
    "rot90": Line(
        lambda lib, a: lib.rot90(a) * 2.0
        + a.rot90(2, [1, 0]).sum()
        + lib.rot90(a, -3, [0, 1]),
        ((3, 3),),
    ),
    "complex": Line(
        lambda lib, a, b: lib.view_as_real(lib.complex(a, b) * lib.complex(b * b, a)),
        ((2, 3), (3,)),
    ),
    "polar": Line(
        lambda lib, a, b: lib.view_as_real(lib.polar(a, b) * lib.polar(a * a, b)),
        ((2, 3), (2, 3)),
        positive=True,
    ),
}
