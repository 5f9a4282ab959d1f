"""Operator-table lines of the linalg family of native_functions.yaml."""

from __future__ import annotations

from .common import Line, _aten_namespace, _vector_norms

LINES: dict[str, Line] = {
    "mm": Line(lambda lib, a, b: lib.mm(a, b), ((2, 3), (3, 4)), complex=True),
    "bmm": Line(lambda lib, a, b: a.bmm(b), ((2, 2, 3), (2, 3, 2)), complex=True),
    "dot": Line(lambda lib, a, b: lib.dot(a, b) * a, ((3,), (3,)), complex=True),
    "vdot": Line(lambda lib, a, b: lib.vdot(a, b) * a, ((3,), (3,)), complex=True),
    "mv": Line(lambda lib, a, b: lib.mv(a, b), ((2, 3), (3,)), complex=True),
    "outer": Line(lambda lib, a, b: lib.outer(a, b * b), ((3,), (2,))),
    "ger": Line(lambda lib, a, b: a.ger(b) * a.ger(b), ((3,), (2,))),
    # Batch-broadcasting cases are in tests/ops/test_linalg.py (their double backward
    # needs the shared reshape to copy non-contiguous gradients).
    "matmul": Line(
        lambda lib, a, b: lib.matmul(a, b), ((2, 2, 3), (2, 3, 2)), complex=True
    ),
    "addmm": Line(
        lambda lib, a, b, c: lib.addmm(a, b, c, beta=0.5, alpha=-2.0),
        ((3,), (2, 4), (4, 3)),
        complex=True,
    ),
    "linear": Line(
        lambda lib, a, b, c: _aten_namespace(lib).linear(a, b, c),
        ((2, 4, 3), (5, 3), (5,)),
    ),
    "tril": Line(lambda lib, a: lib.tril(a) * a.tril(-1) + a.tril(2), ((3, 4),)),
    "triu": Line(lambda lib, a: lib.triu(a, 1) * a.triu() + a.triu(-1), ((2, 3, 4),)),
    "tril_": Line(lambda lib, a: (a * a).tril_(1) * a, ((4, 3),)),
    "triu_": Line(lambda lib, a: (a * 1.0).triu_(-1) * a, ((4, 3),)),
    "trace": Line(lambda lib, a: lib.trace(a) * a + a.trace(), ((3, 4),)),
    "linalg_vector_norm": Line(_vector_norms, ((2, 3),)),
    "norm.Scalar": Line(
        lambda lib, a: lib.norm(a) * a + a.norm(1) + a.norm(float("inf")),
        ((2, 3),),
    ),
    "norm.ScalarOpt_dim": Line(
        lambda lib, a: lib.norm(a, 2, 1)
        * a.norm(p=float("inf"), dim=0, keepdim=True).sum()
        + lib.norm(a, 3, (0, 1)),
        ((3, 4),),
    ),
    "dist": Line(
        lambda lib, a, b: lib.dist(a, b) * a.dist(b, 3) + lib.dist(a, b, float("inf")),
        ((3, 1), (4,)),
    ),
}
