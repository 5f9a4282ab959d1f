"""Random numbers, as torch.random and PyTorch's samplers: `Generator`, the default
generator (`manual_seed`, `seed`, `initial_seed`, `get_rng_state`/`set_rng_state`),
`rand`/`randn`/`randint`/`randperm`, `normal`, `bernoulli`, `multinomial` (`poisson`
and `Tensor.exponential_` are operators: native_functions.yaml), and the in-place
samplers (`Tensor.uniform_`, `normal_`, ...).

The streams are numpy's PCG64, not PyTorch's Mersenne twister: one seed gives one
stream in gradgen, but not the numbers PyTorch draws from it. Every sampler takes
`generator=` (a `Generator`, or None for the default one).
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any

import numpy as np

from . import dtypes
from .devices import check_device, device
from .dtypes import as_dtype
from .factories import (
    DTypeArgument,
    SizeArgument,
    _finish,
    _float_dtype,
    _size,
    _size_sequence,
    into_out,
    out_dtype,
)
from .numpy_kernels._common import DEFAULT_GENERATOR, check_p, check_probabilities
from .numpy_kernels.elementwise import bernoulli_float, bernoulli_tensor
from .scalars import python_type_name
from .tensor import Tensor

# The bytes of a state: PCG64's 128-bit state and increment, its buffered 32 bits
# (a flag and the value), and the initial seed.
_STATE_BYTES = 16 + 16 + 1 + 4 + 8
_DEFAULT_SEED = 67280421310721  # PyTorch's default_rng_seed_val


class Generator:
    """A stream of random numbers (numpy's PCG64), as torch.Generator.

    `_generator` is the numpy Generator that draws: it keeps its identity across
    `manual_seed` (the seed resets its state), so holders of it see the new stream."""

    def __init__(self, device: Any = "cpu") -> None:
        check_device(device)
        self.device = _cpu()
        self._generator = np.random.Generator(np.random.PCG64(_DEFAULT_SEED))
        self._initial_seed = _DEFAULT_SEED

    def manual_seed(self, seed: Any) -> Generator:
        """Reset the stream to the one `seed` starts; returns the generator."""
        value = builtins.int(seed)
        if not -(2**63) <= value < 2**64:
            raise ValueError("Overflow when unpacking long long")
        value %= 2**64  # a negative seed is its unsigned 64-bit pattern, as PyTorch's
        self._generator.bit_generator.state = np.random.PCG64(value).state
        self._initial_seed = value
        return self

    def seed(self) -> builtins.int:
        """Seed from the operating system's entropy; returns the seed chosen."""
        entropy: Any = np.random.SeedSequence().entropy
        value = builtins.int(entropy) % 2**64
        self.manual_seed(value)
        return value

    def initial_seed(self) -> builtins.int:
        return self._initial_seed

    def get_state(self) -> Tensor:
        """The state as a uint8 tensor (PyTorch's ByteTensor), for `set_state`."""
        state = self._generator.bit_generator.state
        parts = (
            state["state"]["state"].to_bytes(16, "little"),
            state["state"]["inc"].to_bytes(16, "little"),
            builtins.bytes([state["has_uint32"]]),
            builtins.int(state["uinteger"]).to_bytes(4, "little"),
            self._initial_seed.to_bytes(8, "little"),
        )
        return Tensor(np.frombuffer(b"".join(parts), np.uint8).copy())

    def set_state(self, new_state: Tensor) -> Generator:
        if not isinstance(new_state, Tensor) or new_state._data.dtype != np.uint8:
            raise TypeError("RNG state must be a torch.ByteTensor")
        raw = new_state._data.tobytes()
        if len(raw) != _STATE_BYTES:
            raise RuntimeError(
                f"the RNG state has {len(raw)} bytes: gradgen's generators (numpy's "
                f"PCG64) take the {_STATE_BYTES} bytes that get_state gives"
            )
        self._generator.bit_generator.state = {
            "bit_generator": "PCG64",
            "state": {
                "state": builtins.int.from_bytes(raw[0:16], "little"),
                "inc": builtins.int.from_bytes(raw[16:32], "little"),
            },
            "has_uint32": raw[32],
            "uinteger": builtins.int.from_bytes(raw[33:37], "little"),
        }
        self._initial_seed = builtins.int.from_bytes(raw[37:45], "little")
        return self

    def __repr__(self) -> str:
        return f"<gradgen.Generator object at {id(self):#x}>"


def _cpu() -> device:
    return device("cpu")


default_generator = Generator()
DEFAULT_GENERATOR.append(default_generator)  # the sampling kernels' default stream


def manual_seed(seed: Any) -> Generator:
    """Seed the default generator (rand, randn, nn.init, dropout, ...)."""
    return default_generator.manual_seed(seed)


def seed() -> builtins.int:
    """Seed the default generator nondeterministically; returns the seed."""
    return default_generator.seed()


def initial_seed() -> builtins.int:
    return default_generator.initial_seed()


def get_rng_state() -> Tensor:
    return default_generator.get_state()


def set_rng_state(new_state: Tensor) -> None:
    default_generator.set_state(new_state)


def numpy_generator(function: str, generator: Any) -> np.random.Generator:
    """The numpy Generator behind `generator=` (None: the default generator's)."""
    if generator is None:
        return default_generator._generator
    inner = getattr(generator, "_generator", None)
    if not isinstance(inner, np.random.Generator):
        raise TypeError(
            f"{function}(): argument 'generator' must be torch.Generator, not "
            f"{python_type_name(generator)}"
        )
    return inner


# -- factories ----------------------------------------------------------------------------


def rand(
    *size: SizeArgument,
    generator: Generator | None = None,
    out: Tensor | None = None,
    dtype: DTypeArgument = None,
    device: Any = None,
    requires_grad: builtins.bool = False,
) -> Tensor:
    """Uniform on [0, 1), in the default dtype."""
    if out is not None:
        dtype = out_dtype("rand", dtype, out)
        return into_out(
            "rand", out, rand(*size, generator=generator, dtype=dtype, device=device)
        )
    check_device(device)
    target = _float_dtype(dtype)
    draw = numpy_generator("rand", generator).random(_size("rand", size))
    return _finish(draw.astype(target.numpy), requires_grad)


def randn(
    *size: SizeArgument,
    generator: Generator | None = None,
    out: Tensor | None = None,
    dtype: DTypeArgument = None,
    device: Any = None,
    requires_grad: builtins.bool = False,
) -> Tensor:
    """Standard normal, in the default dtype."""
    if out is not None:
        dtype = out_dtype("randn", dtype, out)
        return into_out(
            "randn", out, randn(*size, generator=generator, dtype=dtype, device=device)
        )
    check_device(device)
    target = _float_dtype(dtype)
    draw = numpy_generator("randn", generator).standard_normal(_size("randn", size))
    return _finish(draw.astype(target.numpy), requires_grad)


def rand_like(
    input: Tensor,
    *,
    dtype: DTypeArgument = None,
    device: Any = None,
    requires_grad: builtins.bool = False,
) -> Tensor:
    return rand(
        *input._data.shape,
        dtype=input.dtype if dtype is None else dtype,
        device=device,
        requires_grad=requires_grad,
    )


def randn_like(
    input: Tensor,
    *,
    dtype: DTypeArgument = None,
    device: Any = None,
    requires_grad: builtins.bool = False,
) -> Tensor:
    return randn(
        *input._data.shape,
        dtype=input.dtype if dtype is None else dtype,
        device=device,
        requires_grad=requires_grad,
    )


def _check_range(low: builtins.int, high: builtins.int) -> None:
    if low >= high:
        raise RuntimeError(
            f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}"
        )


def randint(
    low: builtins.int,
    high: builtins.int | None = None,
    size: SizeArgument | None = None,
    *,
    generator: Generator | None = None,
    dtype: DTypeArgument = None,
    device: Any = None,
    requires_grad: builtins.bool = False,
) -> Tensor:
    """Integers uniformly from [low, high) (`randint(high, size)` starts at 0); int64."""
    check_device(device)
    if size is None:  # randint(high, size)
        if high is None:
            raise TypeError("randint() missing required argument 'size'")
        low, high, size = 0, low, high
    elif high is None:
        low, high = 0, low
    _check_range(low, high)
    target = as_dtype(dtype) if dtype is not None else dtypes.int64
    shape = _size_sequence("randint", size)
    values = numpy_generator("randint", generator).integers(low, high, shape)
    return _finish(values.astype(target.numpy), requires_grad)


def randint_like(
    input: Tensor,
    low: builtins.int,
    high: builtins.int | None = None,
    *,
    generator: Generator | None = None,
    dtype: DTypeArgument = None,
    device: Any = None,
    requires_grad: builtins.bool = False,
) -> Tensor:
    """randint with `input`'s shape and (unless `dtype=`) dtype."""
    if high is None:
        low, high = 0, low
    return randint(
        low,
        high,
        tuple(input._data.shape),
        generator=generator,
        dtype=input.dtype if dtype is None else dtype,
        device=device,
        requires_grad=requires_grad,
    )


def randperm(
    n: builtins.int,
    *,
    generator: Generator | None = None,
    out: Tensor | None = None,
    dtype: DTypeArgument = None,
    device: Any = None,
    requires_grad: builtins.bool = False,
) -> Tensor:
    """A random permutation of 0 .. n-1, int64 unless `dtype=`."""
    if out is not None:
        dtype = out_dtype("randperm", dtype, out)
        return into_out(
            "randperm",
            out,
            randperm(n, generator=generator, dtype=dtype, device=device),
        )
    check_device(device)
    if n < 0:
        raise RuntimeError(
            f"Trying to create tensor with negative dimension {n}: [{n}]"
        )
    target = as_dtype(dtype) if dtype is not None else dtypes.int64
    values = numpy_generator("randperm", generator).permutation(n)
    return _finish(values.astype(target.numpy), requires_grad)


# -- samplers with tensor parameters ------------------------------------------------------


def _not_implemented(kernel: str, tensor: Tensor) -> NotImplementedError:
    return NotImplementedError(
        f'"{kernel}" not implemented for '
        f"'{dtypes.spelling(tensor._data).scalar_type}'"
    )


def _floating(kernel: str, tensor: Tensor) -> np.ndarray:
    if tensor._data.dtype.kind != "f":
        raise _not_implemented(kernel, tensor)
    return tensor._data


def _check_std(std: builtins.float) -> None:
    if not std >= 0.0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")


def _normal_tensors(mean: Any, std: Any, generator: Any) -> np.ndarray:
    """normal's values for tensor or float mean and std (broadcast together)."""
    rng = numpy_generator("normal", generator)
    tensors = [value for value in (mean, std) if isinstance(value, Tensor)]
    for tensor in tensors:
        _floating("normal_kernel_cpu", tensor)
    if isinstance(std, Tensor):
        if std._data.size and not (std._data >= 0).all():
            raise RuntimeError("normal expects all elements of std >= 0.0")
        std_value: Any = std._data
    else:
        _check_std(std)
        std_value = std
    mean_value = mean._data if isinstance(mean, Tensor) else mean
    target = dtypes.from_numpy(tensors[0]._data.dtype)
    for tensor in tensors[1:]:
        target = dtypes.promote_types(target, dtypes.from_numpy(tensor._data.dtype))
    if isinstance(mean, Tensor) and isinstance(std, Tensor):
        _broadcast_shape(mean._data.shape, std._data.shape)
    shape = np.broadcast_shapes(np.shape(mean_value), np.shape(std_value))
    values = rng.normal(mean_value, std_value, shape)
    return np.asarray(values, target.numpy)


def _broadcast_shape(a: tuple[int, ...], b: tuple[int, ...]) -> None:
    """PyTorch's error for shapes that do not broadcast."""
    for offset in range(1, min(len(a), len(b)) + 1):
        x, y = a[-offset], b[-offset]
        if x != y and x != 1 and y != 1:
            dim = max(len(a), len(b)) - offset
            raise RuntimeError(
                f"The size of tensor a ({x}) must match the size of tensor b ({y}) "
                f"at non-singleton dimension {dim}"
            )


_NORMAL_SIGNATURES = (
    " * (Tensor mean, Tensor std, *, torch.Generator generator = None, "
    "Tensor out = None)\n"
    " * (Tensor mean, float std = 1, *, torch.Generator generator = None, "
    "Tensor out = None)\n"
    " * (float mean, Tensor std, *, torch.Generator generator = None, "
    "Tensor out = None)\n"
    " * (float mean, float std, tuple of ints size, *, torch.Generator generator = "
    "None, Tensor out = None, torch.dtype dtype = None, torch.layout layout = None, "
    "torch.device device = None, bool pin_memory = False, bool requires_grad = False)"
)


def normal(
    mean: Tensor | builtins.float,
    std: Tensor | builtins.float = 1.0,
    size: SizeArgument | None = None,
    *,
    generator: Generator | None = None,
    dtype: DTypeArgument = None,
    device: Any = None,
    requires_grad: builtins.bool = False,
) -> Tensor:
    """Normal samples: each with its own mean and std (tensors, broadcast), or
    `size` of them from one float mean and std (PyTorch's four overloads)."""
    check_device(device)
    tensor_given = isinstance(mean, Tensor) or isinstance(std, Tensor)
    if tensor_given == (size is not None) or not all(
        isinstance(value, (Tensor, builtins.int, builtins.float))
        for value in (mean, std)
    ):
        given = ", ".join(python_type_name(value) for value in (mean, std))
        raise TypeError(
            f"normal() received an invalid combination of arguments - got ({given}), "
            f"but expected one of:\n{_NORMAL_SIGNATURES}"
        )
    if size is None:
        return Tensor(_normal_tensors(mean, std, generator))
    _check_std(builtins.float(std))
    shape = _size_sequence("normal", size)
    draw = numpy_generator("normal", generator).normal(mean, std, shape)
    return _finish(draw.astype(_float_dtype(dtype).numpy), requires_grad)


def bernoulli(
    input: Tensor,
    p: builtins.float | None = None,
    *,
    generator: Generator | None = None,
) -> Tensor:
    """0/1 draws with probability `input` (elementwise) or `p`; input's dtype (the
    Tensor method: gradgen.bernoulli is the operator, with its gradient)."""
    rng = numpy_generator("bernoulli", generator)
    if p is None:
        return Tensor(bernoulli_tensor(input._data, rng))
    return Tensor(bernoulli_float(input._data, p, rng))


def _check_multinomial(input: Tensor, num_samples: builtins.int, replace: Any) -> None:
    data = input._data
    if data.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if data.dtype.kind != "f":
        raise RuntimeError(
            "multinomial only supports floating-point dtypes for input, got: "
            f"{dtypes.spelling(data).scalar_type}"
        )
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not replace and num_samples > data.shape[-1]:
        raise RuntimeError(
            "cannot sample n_sample > prob_dist.size(-1) samples without replacement"
        )
    if data.size and not (np.isfinite(data) & (data >= 0)).all():
        raise RuntimeError(
            "probability tensor contains either `inf`, `nan` or element < 0"
        )
    if data.size and (data.sum(axis=-1) <= 0).any():
        raise RuntimeError(
            "invalid multinomial distribution (sum of probabilities <= 0)"
        )


def multinomial(
    input: Tensor,
    num_samples: builtins.int,
    replacement: builtins.bool = False,
    *,
    generator: Generator | None = None,
) -> Tensor:
    """Indices drawn from the categorical distributions in `input`'s rows (weights
    need not sum to 1); int64, one row of `num_samples` per distribution."""
    _check_multinomial(input, num_samples, replacement)
    rng = numpy_generator("multinomial", generator)
    rows = input._data.reshape(-1, input._data.shape[-1]).astype(np.float64)
    drawn = [
        rng.choice(len(row), num_samples, replace=replacement, p=row / row.sum())
        for row in rows
    ]
    result = np.array(drawn, np.int64).reshape(*input._data.shape[:-1], num_samples)
    return Tensor(result)


# -- in-place samplers (Tensor methods) ---------------------------------------------------


def _write(self: Tensor, values: np.ndarray) -> Tensor:
    """Write sampled values into `self` as an in-place operation: copy_ checks a leaf
    that requires grad, bumps the version and records the history (zero gradient)."""
    return self.copy_(Tensor(np.asarray(values, self._data.dtype)))


def _continuous(self: Tensor, name: str, spelled: str) -> None:
    if self._data.dtype.kind != "f":
        raise RuntimeError(
            f"{name} distribution is a continuous probability distribution. dtype must "
            f"be a floating point but you specified {spelled}"
        )


def uniform_(
    self: Tensor,
    from_: builtins.float = 0.0,
    to: builtins.float = 1.0,
    *,
    generator: Generator | None = None,
) -> Tensor:
    _floating("check_uniform_bounds", self)
    if from_ > to:
        raise RuntimeError(
            f"uniform_ expects to return a [from, to) range, but found from={from_:g} "
            f"> to={to:g}"
        )
    rng = numpy_generator("uniform_", generator)
    return _write(self, rng.uniform(from_, to, self._data.shape))


def normal_(
    self: Tensor,
    mean: builtins.float = 0.0,
    std: builtins.float = 1.0,
    *,
    generator: Generator | None = None,
) -> Tensor:
    _floating("normal_kernel_cpu", self)
    _check_std(std)
    rng = numpy_generator("normal_", generator)
    return _write(self, rng.normal(mean, std, self._data.shape))


def bernoulli_(
    self: Tensor,
    p: Tensor | builtins.float = 0.5,
    *,
    generator: Generator | None = None,
) -> Tensor:
    """0/1 draws with probability `p` (a number, or a tensor broadcast to self)."""
    if isinstance(p, Tensor):
        if self._data.dtype.kind not in "fb":
            raise _not_implemented("bernoulli_tensor_cpu_p_", self)
        check_probabilities(p._data)
        probabilities: Any = np.broadcast_to(p._data, self._data.shape)
    else:
        check_p(p)
        probabilities = p
    rng = numpy_generator("bernoulli_", generator)
    return _write(self, rng.random(self._data.shape) < probabilities)


def geometric_(
    self: Tensor, p: builtins.float, *, generator: Generator | None = None
) -> Tensor:
    """The number of Bernoulli(p) trials up to the first success (1, 2, ...)."""
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p:g}")
    rng = numpy_generator("geometric_", generator)
    return _write(self, rng.geometric(p, self._data.shape))


def log_normal_(
    self: Tensor,
    mean: builtins.float = 1.0,
    std: builtins.float = 2.0,
    *,
    generator: Generator | None = None,
) -> Tensor:
    _floating("log_normal_cpu", self)
    if not std > 0.0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std:g}")
    rng = numpy_generator("log_normal_", generator)
    return _write(self, rng.lognormal(mean, std, self._data.shape))


def cauchy_(
    self: Tensor,
    median: builtins.float = 0.0,
    sigma: builtins.float = 1.0,
    *,
    generator: Generator | None = None,
) -> Tensor:
    _continuous(self, "Cauchy", dtypes.spelling(self._data).typeid)
    if not sigma > 0.0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma:g}")
    rng = numpy_generator("cauchy_", generator)
    return _write(self, median + sigma * rng.standard_cauchy(self._data.shape))


def _random_bounds(
    self: Tensor, from_: builtins.int, to: builtins.int | None
) -> tuple[builtins.int, builtins.int]:
    """random_'s [from, to): to defaults to 2**digits for floats (every integer the
    dtype holds exactly), the dtype's maximum + 1 for integers, 2 for bool."""
    if to is not None:
        _check_range(from_, to)
        return from_, to
    kind = self._data.dtype.kind
    if kind == "b":
        return from_, 2
    if kind in "iu":
        return from_, builtins.int(np.iinfo(self._data.dtype).max) + 1
    return from_, 2 ** (np.finfo(self._data.dtype).nmant + 1) + 1


def random_(
    self: Tensor,
    from_: builtins.int | None = None,
    to: builtins.int | None = None,
    *,
    generator: Generator | None = None,
) -> Tensor:
    """Integers uniformly from [from, to): `random_(to)`, `random_(from, to)`, or
    `random_()` over every integer self's dtype holds exactly."""
    if from_ is not None and to is None:
        from_, to = 0, from_  # random_(to)
    low, high = _random_bounds(self, 0 if from_ is None else from_, to)
    rng = numpy_generator("random_", generator)
    return _write(self, rng.integers(low, high, self._data.shape))


# The in-place samplers, installed as Tensor methods; PyTorch names `from` a keyword
# (`uniform_(from=0, to=1)`), which Python spells `from_` here.
METHODS: dict[str, Callable[..., Any]] = {
    "uniform_": uniform_,
    "normal_": normal_,
    "bernoulli_": bernoulli_,
    "geometric_": geometric_,
    "log_normal_": log_normal_,
    "cauchy_": cauchy_,
    "random_": random_,
    "bernoulli": bernoulli,
    "multinomial": multinomial,
}
