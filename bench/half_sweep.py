"""float16 and bfloat16 results of gradgen against PyTorch's, op by op, on inputs made to
expose how a reduction accumulates (many elements, mixed magnitudes, values near
float16's limits, long scans). Prints, per op and dtype, the largest difference in
units in the last place of the result dtype (0: bitwise equal; "inf/nan": one side is
not finite where the other is), for the forward result and the input's gradient.

    .venv/bin/python bench/half_sweep.py [--only NAME ...] [--no-grad]

Needs torch. Not a test: the tests are tests/test_float16_reductions.py."""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

import gradgen

try:
    import torch
except ImportError:  # pragma: no cover - depends on the machine
    sys.exit("bench/half_sweep.py compares with PyTorch: pip install torch")

RNG = np.random.default_rng(0)

# -- inputs (float64 numpy; each case casts them to the dtype under test) -------------


def _mixed(n: int, scale: float = 1.0) -> np.ndarray:
    """Many elements of mixed magnitude and sign."""
    values = RNG.standard_normal(n) * np.exp(RNG.uniform(-3, 3, n))
    return values * scale


INPUTS: dict[str, np.ndarray] = {
    "ones70000": np.ones(70000),
    "big3": np.array([60000.0, 10000.0, -10000.0]),
    "tenth2000": np.full(2000, 0.1),
    "mixed4096": _mixed(4096),
    "mixed_rows": _mixed(8 * 1024).reshape(8, 1024),
    "near1_1000": 1 + RNG.uniform(-0.01, 0.02, 1000),
    "prodbig": np.array([300.0, 300.0, 1 / 300.0, 2.0, 0.5]),
    "big_rows": np.tile([[60000.0], [10000.0], [-10000.0]], (1, 4)).T.copy(),
    "large_sd": RNG.uniform(200.0, 260.0, 4096),
    "logits": RNG.standard_normal((4, 3000)) * 4,
    "bigvec": RNG.uniform(100.0, 300.0, 4096),
}


def _mat(rows: int, cols: int, scale: float = 1.0) -> np.ndarray:
    return RNG.standard_normal((rows, cols)) * scale


MATS = {
    "a": _mat(16, 2048),
    "b": _mat(2048, 8),
    "a3": RNG.standard_normal((3, 8, 512)),
    "b3": RNG.standard_normal((3, 512, 4)),
    "v": RNG.standard_normal(4096) * 4,
    "w": RNG.standard_normal(4096) * 4,
    "bias": RNG.standard_normal(8),
    "big_left": np.tile([60000.0, 10000.0, -10000.0], (4, 1)),
    "ones_right": np.ones((3, 5)),
    "long_left": np.full((2, 70000), 1.0),
    "long_right": np.ones((70000, 2)),
    "img_big": np.full((1, 1, 12, 12), 3000.0),
    "w_big": np.full((1, 1, 5, 5), 1.0),
    "img": RNG.standard_normal((2, 16, 32, 32)) * 3,
    "wconv": RNG.standard_normal((4, 16, 3, 3)),
    "target": RNG.integers(0, 3000, 4),
    "norm_in": RNG.uniform(100.0, 104.0, (4, 8, 256)),
}

# -- cases: (lib, dtype) -> tensor whose gradient wrt `x` is also compared ---------------


def _t(lib: Any, values: np.ndarray, dtype: Any, grad: bool = True) -> Any:
    tensor = lib.tensor(values, dtype=lib.float32).to(dtype)
    return tensor.requires_grad_(grad)


Case = Callable[[Any, Any], tuple[Any, list[Any]]]


def unary(input_name: str, call: Callable[[Any, Any], Any]) -> Case:
    def case(lib: Any, dtype: Any) -> tuple[Any, list[Any]]:
        x = _t(lib, INPUTS[input_name], dtype)
        return call(lib, x), [x]

    return case


def mats(names: tuple[str, ...], call: Callable[..., Any], grad: bool = True) -> Case:
    def case(lib: Any, dtype: Any) -> tuple[Any, list[Any]]:
        args = [_t(lib, MATS[name], dtype, grad) for name in names]
        return call(lib, *args), args

    return case


CASES: dict[str, Case] = {
    "sum ones70000": unary("ones70000", lambda lib, x: x.sum()),
    "sum big3": unary("big3", lambda lib, x: x.sum()),
    "mean ones70000": unary("ones70000", lambda lib, x: x.mean()),
    "prod big": unary("prodbig", lambda lib, x: x.prod()),
    "prod near1": unary("near1_1000", lambda lib, x: x.prod()),
    "prod dim": unary("big_rows", lambda lib, x: x.prod(1)),
    "cumsum tenth": unary("tenth2000", lambda lib, x: x.cumsum(0)),
    "cumsum big3": unary("big3", lambda lib, x: x.cumsum(0)),
    "cumsum mixed": unary("mixed4096", lambda lib, x: x.cumsum(0)),
    "cumprod near1": unary("near1_1000", lambda lib, x: x.cumprod(0)),
    "cumprod big": unary("prodbig", lambda lib, x: x.cumprod(0)),
    "var mixed": unary("mixed4096", lambda lib, x: x.var()),
    "var large": unary("large_sd", lambda lib, x: x.var()),
    "var big3": unary("big3", lambda lib, x: x.var()),
    "std large": unary("large_sd", lambda lib, x: x.std()),
    "var dim": unary("mixed_rows", lambda lib, x: x.var(1)),
    "var_mean large": unary("large_sd", lambda lib, x: lib.var_mean(x)[0]),
    "std_mean large": unary("large_sd", lambda lib, x: lib.std_mean(x)[0]),
    "norm ones70000": unary("ones70000", lambda lib, x: x.norm()),
    "norm big3": unary("big3", lambda lib, x: x.norm()),
    "norm bigvec": unary("bigvec", lambda lib, x: x.norm()),
    "norm1 bigvec": unary("bigvec", lambda lib, x: x.norm(1)),
    "norm3 mixed": unary("mixed4096", lambda lib, x: x.norm(3)),
    "vector_norm bigvec": unary("bigvec", lambda lib, x: lib.linalg.vector_norm(x)),
    "vector_norm dim": unary(
        "mixed_rows", lambda lib, x: lib.linalg.vector_norm(x, dim=1)
    ),
    "logsumexp logits": unary("logits", lambda lib, x: lib.logsumexp(x, 1)),
    "logsumexp ones": unary("ones70000", lambda lib, x: lib.logsumexp(x, 0)),
    "softmax logits": unary("logits", lambda lib, x: lib.softmax(x, 1)),
    "log_softmax logits": unary("logits", lambda lib, x: lib.log_softmax(x, 1)),
    "softmax dim0": unary("logits", lambda lib, x: lib.softmax(x, 0)),
    "log_softmax dim0": unary("logits", lambda lib, x: lib.log_softmax(x, 0)),
    "log_softmax 0-d": unary("big3", lambda lib, x: lib.log_softmax(x[0], 0)),
    "softmax ones": unary("ones70000", lambda lib, x: lib.softmax(x, 0)),
    "log_softmax ones": unary("ones70000", lambda lib, x: lib.log_softmax(x, 0)),
    "nansum ones70000": unary("ones70000", lambda lib, x: lib.nansum(x)),
    "nansum big3": unary("big3", lambda lib, x: lib.nansum(x)),
    "nanmean ones70000": unary("ones70000", lambda lib, x: lib.nanmean(x)),
    "mm": mats(("a", "b"), lambda lib, a, b: a @ b),
    "matmul vec": mats(("v", "w"), lambda lib, a, b: lib.matmul(a, b)),
    "bmm": mats(("a3", "b3"), lambda lib, a, b: lib.bmm(a, b)),
    "addmm": mats(("bias", "a", "b"), lambda lib, c, a, b: lib.addmm(c, a, b)),
    "linear": mats(
        ("a", "b", "bias"),
        lambda lib, a, b, c: lib.nn.functional.linear(a, b.T, c),
    ),
    "mm big3": mats(("big_left", "ones_right"), lambda lib, a, b: a @ b),
    "mm long": mats(("long_left", "long_right"), lambda lib, a, b: a @ b),
    "dot big3": mats(
        ("big_left", "big_left"), lambda lib, a, b: lib.dot(a[0], b[0] * 0 + 1)
    ),
    "einsum big3": mats(
        ("big_left", "ones_right"), lambda lib, a, b: lib.einsum("ij,jk->ik", a, b)
    ),
    "conv2d big": mats(
        ("img_big", "w_big"), lambda lib, x, w: lib.nn.functional.conv2d(x, w)
    ),
    "dot": mats(("v", "w"), lambda lib, a, b: lib.dot(a, b)),
    "mv": mats(("a", "v"), lambda lib, a, v: lib.mv(a, v[:2048])),
    "einsum ij,jk": mats(("a", "b"), lambda lib, a, b: lib.einsum("ij,jk->ik", a, b)),
    "einsum i,i": mats(("v", "w"), lambda lib, a, b: lib.einsum("i,i->", a, b)),
    "einsum sum": mats(("a",), lambda lib, a: lib.einsum("ij->i", a)),
    "layer_norm": mats(
        ("norm_in",), lambda lib, x: lib.nn.functional.layer_norm(x, (256,))
    ),
    "group_norm": mats(("norm_in",), lambda lib, x: lib.nn.functional.group_norm(x, 2)),
    "batch_norm": mats(
        ("norm_in",),
        lambda lib, x: lib.nn.functional.batch_norm(x, None, None, training=True),
    ),
    "cross_entropy": lambda lib, dtype: _loss(lib, dtype, "cross_entropy"),
    "nll_loss": lambda lib, dtype: _loss(lib, dtype, "nll_loss"),
    "mse_loss": lambda lib, dtype: _mse(lib, dtype, "mean"),
    "mse_loss sum": lambda lib, dtype: _mse(lib, dtype, "sum"),
    "avg_pool2d": mats(
        ("img",), lambda lib, x: lib.nn.functional.avg_pool2d(x * 1000, 8)
    ),
    "adaptive_avg_pool2d": mats(
        ("img",), lambda lib, x: lib.nn.functional.adaptive_avg_pool2d(x * 1000, 1)
    ),
    "conv2d": mats(("img", "wconv"), lambda lib, x, w: lib.nn.functional.conv2d(x, w)),
}


def _loss(lib: Any, dtype: Any, name: str) -> tuple[Any, list[Any]]:
    x = _t(lib, INPUTS["logits"], dtype)
    target = lib.tensor(MATS["target"])
    fn = getattr(lib.nn.functional, name)
    return fn(x if name == "cross_entropy" else x * 0.01, target), [x]


def _mse(lib: Any, dtype: Any, reduction: str) -> tuple[Any, list[Any]]:
    x = _t(lib, INPUTS["bigvec"], dtype)
    y = _t(lib, INPUTS["large_sd"], dtype, False)
    return lib.nn.functional.mse_loss(x, y, reduction=reduction), [x]


# -- comparison ---------------------------------------------------------------------


def _bits(values: np.ndarray) -> np.ndarray:
    """Sign-magnitude bit patterns as ordered integers (adjacent floats differ by 1)."""
    raw = values.view(np.uint16).astype(np.int64)
    return np.where(raw & 0x8000, -(raw & 0x7FFF), raw)


def ulps(got: np.ndarray, expected: np.ndarray) -> float:
    if got.shape != expected.shape:
        return float("nan")
    g, e = got.reshape(-1), expected.reshape(-1)
    both_nan = np.isnan(g.astype(np.float32)) & np.isnan(e.astype(np.float32))
    one_nan = np.isnan(g.astype(np.float32)) ^ np.isnan(e.astype(np.float32))
    if one_nan.any():
        return float("inf")
    diff = np.abs(_bits(g) - _bits(e))[~both_nan]
    if diff.size == 0:
        return 0.0
    inf_mismatch = np.isinf(g.astype(np.float32)) != np.isinf(e.astype(np.float32))
    if inf_mismatch.any():
        return float("inf")
    return float(diff.max())


def scaled_ulps(got: np.ndarray, expected: np.ndarray) -> float:
    """The largest difference in ulps of the largest expected magnitude (a result that
    cancels to near 0 counts by the scale of the whole result, not its own)."""
    if got.shape != expected.shape:
        return float("nan")
    g = got.astype(np.float32).reshape(-1)
    e = expected.astype(np.float32).reshape(-1)
    finite = np.isfinite(e) & np.isfinite(g)
    if not finite.any():
        return float("nan")
    top = np.abs(e[finite]).max().astype(expected.dtype)
    step = float(np.nextafter(top, np.array(np.inf, expected.dtype)) - top)
    return float(np.abs(g[finite] - e[finite]).max()) / (step or 1.0)


def _numpy(lib: Any, tensor: Any) -> np.ndarray:
    out = tensor.detach()
    if lib is torch:
        if out.dtype == torch.bfloat16:
            return out.view(torch.int16).numpy().view(np.uint16)
        return out.numpy().view(np.uint16)
    return out.numpy().view(np.uint16)


def run(lib: Any, case: Case, dtype_name: str, grad: bool) -> tuple[Any, Any]:
    dtype = getattr(lib, dtype_name)
    out, inputs = case(lib, dtype)
    forward = _numpy(lib, out)
    grads = None
    if grad and inputs and inputs[0].requires_grad:
        seed = lib.tensor(RNG_SEED(out.shape), dtype=lib.float32).to(dtype)
        (g,) = lib.autograd.grad(out, [inputs[0]], seed)
        grads = _numpy(lib, g)
    return forward, grads


def RNG_SEED(shape: Any) -> np.ndarray:  # the same upstream gradient for both libraries
    return np.random.default_rng(1).uniform(0.5, 1.5, tuple(shape))


def _as_float(bits: np.ndarray, dtype_name: str) -> np.ndarray:
    if dtype_name == "float16":
        return bits.view(np.float16)
    return bits.view(gradgen.bfloat16.numpy)


def compare(name: str, dtype_name: str, grad: bool) -> tuple[str, str]:
    results = []
    try:
        expected = run(torch, CASES[name], dtype_name, grad)
    except Exception as error:  # noqa: BLE001 - a sweep reports, never stops
        return (f"torch: {type(error).__name__}", "")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = run(gradgen, CASES[name], dtype_name, grad)
    except Exception as error:  # noqa: BLE001
        return (f"gradgen: {type(error).__name__}: {str(error)[:60]}", "")
    for g, e in zip(got, expected):
        if e is None or g is None:
            results.append("-" if e is None and g is None else "missing")
            continue
        got_, expected_ = _as_float(g, dtype_name), _as_float(e, dtype_name)
        scaled = scaled_ulps(got_, expected_)
        results.append(f"{_fmt(ulps(got_, expected_))} ({scaled:.2g})")
    return results[0], results[1]


def _fmt(value: float) -> str:
    if value != value:
        return "shape"
    if value == float("inf"):
        return "inf/nan"
    return str(int(value))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", nargs="*", default=None)
    parser.add_argument("--no-grad", action="store_true")
    args = parser.parse_args()
    names = [n for n in CASES if not args.only or any(o in n for o in args.only)]
    print("| op | dtype | forward ulps (of max) | grad ulps (of max) |")
    print("|---|---|---|---|")
    for name in names:
        for dtype_name in ("float16", "bfloat16"):
            forward, backward = compare(name, dtype_name, not args.no_grad)
            print(f"| {name} | {dtype_name} | {forward} | {backward} |", flush=True)


if __name__ == "__main__":
    main()
