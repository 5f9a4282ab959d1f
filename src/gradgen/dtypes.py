"""dtypes and PyTorch's type promotion.

A `dtype` wraps a numpy dtype and answers the questions autograd asks (floating?
complex? its real or complex counterpart). `result_type()` implements PyTorch's
promotion, which is not numpy's: tensors with dimensions outrank 0-d tensors, which
outrank wrapped Python numbers, and a category (bool < integer < floating < complex) is
only taken from a lower-ranked operand when it is a higher category. So
``float32 tensor * 2.5`` stays float32 and ``int64 tensor + 1.5`` is the default float
dtype, where numpy would give float64 in both cases.

This module is also the one home of two facts every layer uses: PyTorch's spellings of
each dtype in its messages (`spelling()`: "Float", "long int", "int64_t",
"torch.FloatTensor") and at::Reduction (`Reduction.MEAN` is 1).
"""

from __future__ import annotations

import threading
from typing import Any, NamedTuple

import numpy as np

try:  # bfloat16 comes from the optional ml_dtypes package (pip install gradgen[bfloat16])
    import ml_dtypes as _ml_dtypes
except ImportError:  # pragma: no cover - depends on the machine
    _ml_dtypes = None  # type: ignore[assignment]
HAS_BFLOAT16 = _ml_dtypes is not None

BFLOAT16_MISSING = (
    "gradgen.bfloat16 needs the optional package ml_dtypes, which gives numpy a bfloat16 "
    "type: pip install ml_dtypes (or gradgen[bfloat16])"
)


# The category (bool < integer < floating < complex) of a numpy dtype's kind; "V" is
# ml_dtypes' bfloat16, the one dtype of that kind gradgen has.
_KIND_CATEGORY = {"b": 0, "i": 1, "u": 1, "f": 3, "V": 3, "c": 4}


class dtype:
    """A tensor element type: ``gradgen.float32``, ``gradgen.complex128``, ..."""

    __slots__ = (
        "name",
        "numpy",
        "is_floating_point",
        "is_complex",
        "is_signed",
        "itemsize",
    )

    def __init__(self, name: str, numpy_type: Any = None) -> None:
        self.name = name
        self.numpy = np.dtype(name if numpy_type is None else numpy_type)
        # ml_dtypes' bfloat16 is a numpy dtype of kind "V": a floating type here.
        kind = "f" if self.numpy.kind == "V" else self.numpy.kind
        self.is_complex = kind == "c"
        self.is_floating_point = kind == "f"
        self.is_signed = kind in "ifc"
        self.itemsize = self.numpy.itemsize

    def __repr__(self) -> str:
        return f"gradgen.{self.name}"

    def __reduce__(self) -> str:
        return self.name

    @property
    def category(self) -> int:
        """0 bool, 1 integer, 3 floating, 4 complex: the order promotion climbs."""
        return _KIND_CATEGORY[self.numpy.kind]

    def to_complex(self) -> dtype:
        """The complex dtype with this floating dtype's precision."""
        if self.is_complex:
            return self
        return complex128 if self is float64 else complex64

    def to_real(self) -> dtype:
        if not self.is_complex:
            return self
        return float64 if self is complex128 else float32


bool = dtype("bool")  # noqa: A001 - PyTorch's name
uint8 = dtype("uint8")
int8 = dtype("int8")
int16 = dtype("int16")
int32 = dtype("int32")
int64 = dtype("int64")
float16 = dtype("float16")
float32 = dtype("float32")
float64 = dtype("float64")
complex64 = dtype("complex64")
complex128 = dtype("complex128")
if _ml_dtypes is not None:
    bfloat16 = dtype("bfloat16", _ml_dtypes.bfloat16)

ALL_DTYPES = (
    bool,
    uint8,
    int8,
    int16,
    int32,
    int64,
    float16,
    float32,
    float64,
    complex64,
    complex128,
)
# bfloat16, when ml_dtypes is installed, is known by name and numpy dtype but not listed
# in ALL_DTYPES (what gradgen always has).
_KNOWN = ALL_DTYPES + ((bfloat16,) if _ml_dtypes is not None else ())
_FROM_NUMPY: dict[np.dtype, dtype] = {d.numpy: d for d in _KNOWN}
_FROM_NAME: dict[str, dtype] = {d.name: d for d in _KNOWN}


def from_numpy(np_dtype: np.dtype) -> dtype:
    """The gradgen dtype of a numpy dtype; TypeError for types gradgen does not have."""
    try:
        return _FROM_NUMPY[np_dtype]
    except KeyError:
        raise TypeError(
            f"numpy dtype {np_dtype} is not supported; gradgen supports "
            + ", ".join(d.name for d in ALL_DTYPES)
        ) from None


def as_dtype(value: object) -> dtype:
    """Accept a gradgen dtype, a numpy dtype or type, or a dtype name."""
    if isinstance(value, dtype):
        return value
    if isinstance(value, str):
        if value in _FROM_NAME:
            return _FROM_NAME[value]
        raise TypeError(f"unknown dtype name {value!r}")
    try:
        return from_numpy(np.dtype(value))  # type: ignore[call-overload]
    except TypeError:
        raise TypeError(f"expected a gradgen dtype, got {value!r}") from None


class _DefaultDtype(threading.local):
    value: dtype = float32


_default = _DefaultDtype()


def get_default_dtype() -> dtype:
    return _default.value


def set_default_dtype(d: dtype) -> None:
    if d not in (float32, float64):
        raise TypeError("only floating-point types are supported as the default type")
    _default.value = d


def default_complex_dtype() -> dtype:
    return complex128 if _default.value is float64 else complex64


def promote_types(a: dtype, b: dtype) -> dtype:
    """PyTorch's promote_types on the dtypes gradgen has."""
    if a is b:
        return a
    if {a, b} == {uint8, int8}:  # neither holds the other: the next signed type
        return int16
    if {a.name, b.name} == {"float16", "bfloat16"}:  # neither holds the other
        return float32
    ca, cb = a.category, b.category
    if ca != cb:
        high, low = (a, b) if ca > cb else (b, a)
        if high.is_complex and low.is_floating_point and low.itemsize == 8:
            return complex128
        return high
    if a is uint8 or b is uint8:  # a signed integer type above uint8 holds it
        return b if a is uint8 else a
    return a if a.itemsize >= b.itemsize else b


def python_scalar_dtype(value: object) -> dtype:
    """The dtype a Python number takes when it is wrapped (PyTorch's wrapped numbers)."""
    if isinstance(value, (np.bool_, type(True))):
        return bool
    if isinstance(value, (int, np.integer)):
        return int64
    if isinstance(value, (float, np.floating)):
        return float64
    if isinstance(value, (complex, np.complexfloating)):
        return complex128
    raise TypeError(f"expected a number, got {type(value).__name__}")


def _same_dtype_result(operands: tuple[object, ...]) -> dtype | None:
    """The common case on every operator call, without the general algorithm: the
    tensors share one dtype and no number is of a higher category (``x * 2.0`` with a
    float32 x). None when the general algorithm must decide."""
    common = None  # a numpy dtype
    highest_number = -1
    for operand in operands:
        data = getattr(operand, "_data", None)
        if data is None:
            category = _PYTHON_CATEGORY.get(type(operand))
            if category is None:
                return None
        elif operand._is_wrapped_number:  # type: ignore[attr-defined]
            # bool, int64, float64 or complex128 by construction: its kind says it all.
            category = _KIND_CATEGORY[data.dtype.kind]
        else:
            if common is None:
                common = data.dtype
            elif data.dtype != common:
                return None
            continue
        if category > highest_number:
            highest_number = category
    if common is None or highest_number > _KIND_CATEGORY.get(common.kind, 99):
        return None
    return _FROM_NUMPY.get(common)


def _combine(higher: dtype | None, lower: dtype | None) -> dtype | None:
    """Take `lower`'s category only where it is above `higher`'s (combine_categories)."""
    if higher is None:
        return lower
    if lower is None or higher.is_complex:
        return higher
    if lower.is_complex:
        return higher.to_complex() if higher.is_floating_point else lower
    if higher.is_floating_point:
        return higher
    if higher is bool or lower.is_floating_point:
        return promote_types(higher, lower)
    return higher


# The category (as dtype.category counts them) of a Python number's type.
_PYTHON_CATEGORY = {type(True): 0, int: 1, float: 3, complex: 4}


def result_type(*operands: object) -> dtype:
    """PyTorch's result_type over tensors and Python numbers.

    A Tensor counts as "dimensioned" when ndim > 0, "zero-dim" when 0-d, and "wrapped"
    when it is a wrapped Python number; a Python number is "wrapped". A wrapped float
    takes the default dtype and a wrapped complex the default complex dtype.
    """
    fast = _same_dtype_result(operands)
    if fast is not None:
        return fast
    dim_result: dtype | None = None
    zero_result: dtype | None = None
    wrapped_result: dtype | None = None
    for operand in operands:
        data = getattr(operand, "_data", None)
        if data is not None and not operand._is_wrapped_number:  # type: ignore[attr-defined]
            current = _FROM_NUMPY[data.dtype]
            if data.ndim:
                dim_result = (
                    current
                    if dim_result is None
                    else promote_types(dim_result, current)
                )
            else:
                zero_result = (
                    current
                    if zero_result is None
                    else promote_types(zero_result, current)
                )
            continue
        value = operand if data is None else data[()]
        current = python_scalar_dtype(value)
        if current.is_floating_point:
            current = _default.value
        elif current.is_complex:
            current = default_complex_dtype()
        wrapped_result = (
            current
            if wrapped_result is None
            else promote_types(wrapped_result, current)
        )
    result = _combine(dim_result, _combine(zero_result, wrapped_result))
    if result is None:
        raise TypeError("result_type needs at least one operand")
    return result


def integer_to_float(common: dtype) -> dtype:
    """PyTorch's promote_integer_inputs_to_float: bool and integer become the default
    float dtype (`int / int` is a float tensor); floating and complex stay."""
    return common if common.is_floating_point or common.is_complex else _default.value


class Reduction:
    """at::Reduction, how a loss reduces over its elements. Plain ints rather than an
    enum.Enum: operators take, save and print a reduction as an int, as PyTorch's do."""

    NONE = 0
    MEAN = 1
    SUM = 2


class Spelling(NamedTuple):
    """How PyTorch's messages spell one dtype; the one home of these names."""

    scalar_type: str  # c10::ScalarType's name: "Float", "Long"
    typeid: str  # the C++ type as typeid demangles it: "float", "long int"
    cpp: str  # the C++ type as c10's checked_convert names it: "float", "int64_t"
    legacy_tensor: str  # the legacy tensor class: "FloatTensor", "LongTensor"
    # A tensor's type as ATen's checks print it: the legacy class where Python has one
    # in its old list (integer and floating types), else dispatch key + ScalarType.
    tensor_type: str  # "torch.FloatTensor", "CPUBoolType"


def _spelling(scalar_type: str, typeid: str, cpp: str) -> Spelling:
    legacy = scalar_type + "Tensor"
    old_class = scalar_type not in ("Bool", "BFloat16") and not scalar_type.startswith(
        "Complex"
    )
    tensor_type = "torch." + legacy if old_class else f"CPU{scalar_type}Type"
    return Spelling(scalar_type, typeid, cpp, legacy, tensor_type)


# Keyed by numpy's name of the dtype (gradgen's names are numpy's).
PYTORCH_SPELLINGS: dict[str, Spelling] = {
    "bool": _spelling("Bool", "bool", "bool"),
    "uint8": _spelling("Byte", "unsigned char", "uint8_t"),
    "int8": _spelling("Char", "signed char", "int8_t"),
    "int16": _spelling("Short", "short int", "int16_t"),
    "float16": _spelling("Half", "c10::Half", "c10::Half"),
    "int32": _spelling("Int", "int", "int"),
    "int64": _spelling("Long", "long int", "int64_t"),
    "float32": _spelling("Float", "float", "float"),
    "float64": _spelling("Double", "double", "double"),
    "complex64": _spelling(
        "ComplexFloat", "c10::complex<float>", "c10::complex<float>"
    ),
    "complex128": _spelling(
        "ComplexDouble", "c10::complex<double>", "c10::complex<double>"
    ),
    "bfloat16": _spelling("BFloat16", "c10::BFloat16", "c10::BFloat16"),
}


def spelling(of: Any) -> Spelling:
    """PyTorch's spellings of the dtype of `of`: a gradgen dtype, a numpy dtype, or an
    array (or tensor). A dtype PyTorch has no name for keeps numpy's name everywhere."""
    name: str = getattr(of, "dtype", of).name
    found = PYTORCH_SPELLINGS.get(name)
    return Spelling(name, name, name, name, name) if found is None else found


def scalar_type_name(array: np.ndarray) -> str:
    """PyTorch's name for an array's dtype ("Float" for float32)."""
    return spelling(array).scalar_type


class finfo:  # noqa: N801  (PyTorch's name)
    """The limits of a floating dtype (default: the default dtype), as torch.finfo."""

    def __init__(self, type: dtype | None = None) -> None:  # noqa: A002
        target = _default.value if type is None else type
        if not isinstance(target, dtype) or not (
            target.is_floating_point or target.is_complex
        ):
            raise TypeError(
                "torch.finfo() requires a floating point input type. Use torch.iinfo "
                "to handle 'torch.finfo'"
            )
        real = target.to_real().numpy
        if real.kind == "V":  # bfloat16: numpy's finfo does not know ml_dtypes' types
            info = _ml_dtypes.finfo(real)  # type: ignore[no-untyped-call]
        else:
            info = np.finfo(real)
        self.bits: int = info.bits
        self.eps = float(info.eps)
        self.max = float(info.max)
        self.min = float(info.min)
        self.tiny = float(info.tiny)
        self.smallest_normal = float(info.smallest_normal)
        self.resolution = 10.0**-info.precision
        self.dtype: str = target.to_real().name

    def __repr__(self) -> str:
        return (
            f"finfo(resolution={self.resolution:g}, min={self.min:g}, "
            f"max={self.max:g}, eps={self.eps:g}, "
            f"smallest_normal={self.smallest_normal:g}, tiny={self.tiny:g}, "
            f"dtype={self.dtype})"
        )


class iinfo:  # noqa: N801  (PyTorch's name)
    """The limits of an integer dtype, as torch.iinfo."""

    def __init__(self, type: dtype) -> None:  # noqa: A002
        if type is bool:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if not isinstance(type, dtype) or type.numpy.kind not in "iu":
            raise TypeError(
                "torch.iinfo() requires an integer input type. Use torch.finfo to "
                "handle 'torch.iinfo'"
            )
        info = np.iinfo(type.numpy)
        self.bits: int = info.bits
        self.max = int(info.max)
        self.min = int(info.min)
        self.dtype: str = type.name

    def __repr__(self) -> str:
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"
