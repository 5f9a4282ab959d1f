"""What a kernel expression and a derivative formula may call: explicit lists, as data.

A `numpy:` expression in native_functions.yaml runs as Python in the generated package,
so "np with any attribute chain" would hand it the whole of numpy, and numpy's modules
lead on to `os`, `subprocess`, `builtins`, `pickle` and file I/O (`np.f2py.os.system`,
`np.lib._datasource.os`, `np.load(..., allow_pickle=True)`, `x.tofile(path)`). Instead, an
expression may use exactly:

- `np.NAME` for a NAME of `NUMPY_NAMES` (functions, ufuncs, dtypes, constants);
- `np.linalg.NAME` / `np.fft.NAME` for a NAME of `NUMPY_SUBMODULES[...]`; the submodule
  itself is not a value;
- on any value it computes or is given, the methods of `VALUE_METHODS` and the
  attributes of `VALUE_ATTRIBUTES` (a name of `VALUE_METHODS` may also be read).

Nothing here does I/O, imports, pickles, evaluates text, reaches a module, calls a
Python function given to it (`np.vectorize`, `np.frompyfunc`, `np.apply_along_axis`),
changes numpy's global state (`np.seterr`, printing options) or writes into its
arguments (`np.copyto`, `np.put`, `ndarray.sort`, `ndarray.fill`, `ufunc.at`):
an in-place kernel writes through the `into` helper. tests/test_security_exprs.py walks
numpy's namespace to check that no name here resolves to a module or to anything of
os/sys/subprocess/builtins/importlib/pickle/ctypes/shutil/io, and that every name exists
in the installed numpy (numpy >= 2.0, as pyproject.toml requires).

A derivative formula calls gradgen operators, not numpy: its methods are the method
variants of native_functions.yaml plus `FORMULA_HAND_METHODS`, minus
`FORMULA_FORBIDDEN_METHODS` (names that, on a tensor or on a Python value, do I/O,
register hooks, run backward or leave the tensor world), and only on tensors.

docs/yaml-reference.md ("What an expression may call") lists the same names; a new
operator that needs another numpy function adds it here, to its family.
"""

from __future__ import annotations


def _names(text: str) -> frozenset[str]:
    return frozenset(text.split())


# -- np.NAME ------------------------------------------------------------------------------

NUMPY_FAMILIES: dict[str, frozenset[str]] = {
    # Arithmetic ufuncs.
    "arithmetic": _names("""
        add subtract multiply divide true_divide floor_divide negative positive power
        float_power remainder mod fmod divmod reciprocal square sqrt cbrt absolute abs
        fabs sign heaviside gcd lcm
        """),
    # Exponentials, logarithms and trigonometry (ufuncs).
    "transcendental": _names("""
        exp exp2 expm1 log log2 log10 log1p logaddexp logaddexp2 sin cos tan arcsin
        arccos arctan arctan2 sinh cosh tanh arcsinh arccosh arctanh hypot deg2rad
        rad2deg degrees radians sinc i0
        """),
    # Rounding and the floating-point representation.
    "rounding": _names("""
        floor ceil trunc rint round fix clip copysign nextafter spacing ldexp frexp modf
        signbit nan_to_num
        """),
    # Complex numbers.
    "complex": _names("conjugate conj real imag angle iscomplexobj isrealobj"),
    # Extrema.
    "extrema": _names("maximum minimum fmax fmin"),
    # Comparisons, logic and tests of values.
    "comparison": _names("""
        equal not_equal less less_equal greater greater_equal logical_and logical_or
        logical_xor logical_not isnan isinf isfinite isposinf isneginf isclose allclose
        array_equal array_equiv
        """),
    # Bitwise ufuncs.
    "bitwise": _names(
        "bitwise_and bitwise_or bitwise_xor bitwise_not invert left_shift right_shift"
    ),
    # Creating arrays (from values and shapes only: no file, buffer, string or function).
    "creation": _names("""
        array asarray ascontiguousarray copy empty empty_like zeros zeros_like ones
        ones_like full full_like arange linspace logspace geomspace eye identity diag
        diagflat tri tril triu meshgrid indices
        """),
    # Shapes, joining, splitting and rearranging.
    "shape": _names("""
        reshape ravel transpose moveaxis swapaxes expand_dims squeeze broadcast_to
        broadcast_arrays broadcast_shapes atleast_1d atleast_2d atleast_3d concatenate
        stack vstack hstack dstack column_stack split array_split tile repeat flip
        fliplr flipud roll rot90 pad shape ndim size
        """),
    # Selecting and indexing (reads only).
    "indexing": _names("""
        take take_along_axis choose compress where select nonzero argwhere flatnonzero
        diagonal trace searchsorted unravel_index ravel_multi_index tril_indices
        triu_indices diag_indices
        """),
    # Sorting and sets (returning new arrays).
    "sorting": _names("sort argsort partition argpartition lexsort unique"),
    # Reductions and scans.
    "reduction": _names("""
        sum prod mean std var max min amax amin argmax argmin ptp median average
        percentile quantile any all count_nonzero cumsum cumprod diff ediff1d bincount
        nansum nanprod nanmean nanstd nanvar nanmax nanmin nanargmax nanargmin nancumsum
        nancumprod nanmedian
        """),
    # Products.
    "products": _names("dot vdot inner outer matmul tensordot einsum kron cross"),
    # Dtypes (scalar types and the questions asked of them).
    "dtypes": _names("""
        bool_ int8 int16 int32 int64 uint8 uint16 uint32 uint64 intp float16 float32
        float64 complex64 complex128 dtype finfo iinfo result_type promote_types
        can_cast issubdtype number integer signedinteger unsignedinteger inexact
        floating complexfloating
        """),
    # Constants.
    "constants": _names("pi e inf nan newaxis euler_gamma"),
}

# Every name an expression may write as np.NAME.
NUMPY_NAMES: frozenset[str] = frozenset().union(*NUMPY_FAMILIES.values())

# -- np.SUBMODULE.NAME --------------------------------------------------------------------

NUMPY_SUBMODULES: dict[str, frozenset[str]] = {
    # Linear algebra (no LinAlgError, no the deprecated np.linalg.linalg module).
    "linalg": _names("""
        norm det slogdet inv pinv solve lstsq qr svd eig eigh eigvals eigvalsh cholesky
        matrix_rank matrix_power multi_dot cond tensorinv tensorsolve
        """),
    # Discrete Fourier transforms.
    "fft": _names("""
        fft ifft fft2 ifft2 fftn ifftn rfft irfft rfft2 irfft2 rfftn irfftn hfft ihfft
        fftfreq rfftfreq fftshift ifftshift
        """),
}

# -- value.NAME(...) and value.NAME -------------------------------------------------------

VALUE_METHOD_FAMILIES: dict[str, frozenset[str]] = {
    # ndarray: dtype conversion and copies (no tofile, dump, dumps, tobytes, getfield,
    # setfield, setflags, resize, byteswap).
    "conversion": _names("astype copy view item tolist conj conjugate"),
    # ndarray: shapes and selection (new arrays or views, never writes).
    "shape": _names(
        "reshape ravel flatten transpose swapaxes squeeze repeat take diagonal nonzero compress choose"
    ),
    # ndarray: reductions, scans and arithmetic.
    "reduction": _names("""
        sum prod mean std var max min argmax argmin any all cumsum cumprod trace round
        clip dot
        """),
    # ndarray: sorting without writing (no sort, partition).
    "sorting": _names("argsort argpartition searchsorted"),
    # ufunc (np.add.reduce(...)): no `at`, which writes into its first operand.
    "ufunc": _names("reduce accumulate reduceat outer"),
}

VALUE_METHODS: frozenset[str] = frozenset().union(*VALUE_METHOD_FAMILIES.values())

VALUE_ATTRIBUTE_FAMILIES: dict[str, frozenset[str]] = {
    # ndarray (no base, ctypes, data, flags, strides: memory and buffers).
    "array": _names("shape ndim size dtype itemsize nbytes T mT real imag flat"),
    # numpy dtype (no type, fields, descr).
    "dtype": _names("kind name char"),
    # A gradgen dtype given for a ScalarType argument: `dtype.numpy` is numpy's.
    "gradgen dtype": _names("numpy is_floating_point is_complex is_signed"),
    # np.finfo(...) / np.iinfo(...).
    "finfo": _names("eps max min tiny smallest_normal bits resolution precision"),
    # ufunc.
    "ufunc": _names("nin nout"),
}

VALUE_ATTRIBUTES: frozenset[str] = frozenset().union(*VALUE_ATTRIBUTE_FAMILIES.values())

# -- derivative formulas ------------------------------------------------------------------

# Methods of any tensor that answer a question and create no graph.
TENSOR_QUERY_METHODS = frozenset({"is_complex", "is_floating_point", "dim", "numel"})
# Differentiable Tensor methods written by hand in the runtime, as PyTorch writes them
# in its Python bindings (Tensor.to takes a dtype, a device or a tensor).
HAND_WRITTEN_METHODS = frozenset({"to"})
# What a formula may call on a tensor besides the YAML's method variants.
FORMULA_HAND_METHODS = TENSOR_QUERY_METHODS | HAND_WRITTEN_METHODS

# Never called as a method in a formula, even when native_functions.yaml declares an
# operator of the name with a method variant: on a tensor or on a Python value (a str,
# a list, an int) these do I/O, format or reflect, take callables, register hooks, run
# backward or leave the tensor world.
FORMULA_FORBIDDEN_METHODS = _names("""
    format format_map backward register_hook register_post_accumulate_grad_hook
    retain_grad requires_grad_ numpy tolist tofile save load dump dumps tobytes
    data_ptr storage untyped_storage apply_ map_ map2_ share_memory_ mro
    """)
