"""Kernel expressions and formulas are checked against explicit lists (codegen/allowed.py).

An attacker's YAML used to reach the system through numpy's own modules
(`np.f2py.os.system(...)`, `np.lib._datasource.os`, `np.ma.core.builtins.eval`), file I/O
(`np.save`, `np.load(..., allow_pickle=True)`, `x.tofile(p)`) and Python methods of
non-tensors in formulas (`"{0.__class__}".format(grad)`). Every such path is refused
with a clean CodegenError located at file:line, and a walk of numpy's namespace checks
that the lists lead to no module and nothing of os, sys, subprocess, builtins, importlib,
pickle, ctypes, shutil or io. Several unknown names are reported in one error.
"""

from __future__ import annotations

import collections
import importlib
import os
import re
import sys
import types
import warnings
from pathlib import Path

import numpy as np
import pytest

import gradgen
from gradgen.codegen import CodegenError, generate
from gradgen.codegen.allowed import (
    FORMULA_FORBIDDEN_METHODS,
    NUMPY_FAMILIES,
    NUMPY_NAMES,
    NUMPY_SUBMODULES,
    VALUE_ATTRIBUTE_FAMILIES,
    VALUE_ATTRIBUTES,
    VALUE_METHOD_FAMILIES,
    VALUE_METHODS,
)
from gradgen.codegen.expressions import check_kernel_expression

ROOT = Path(__file__).resolve().parent.parent
CANARY = "CANARY"

# Modules whose reach is the system: the files, processes, interpreter and loaders.
DANGEROUS = {
    "os",
    "posix",
    "nt",
    "sys",
    "subprocess",
    "builtins",
    "importlib",
    "pickle",
    "_pickle",
    "ctypes",
    "_ctypes",
    "shutil",
    "io",
    "_io",
}

# np.NAME that must never be whitelisted: I/O and pickling, Python callables, global
# state, writes into arguments, and numpy's modules other than linalg and fft.
NEVER_NUMPY = set("""
    save savez savez_compressed load loadtxt savetxt genfromtxt fromfile memmap
    DataSource fromregex frombuffer fromstring fromfunction fromiter vectorize frompyfunc
    apply_along_axis apply_over_axes piecewise seterr seterrcall set_printoptions
    setbufsize copyto put place putmask fill_diagonal put_along_axis ctypeslib f2py
    testing lib ma rec char strings polynomial random emath core matlib typing
    """.split())
# value.NAME that must never be whitelisted: I/O, memory and buffers, writes.
NEVER_MEMBERS = set("""
    tofile dump dumps tobytes ctypes base data setflags setfield getfield fill sort
    partition resize byteswap at itemset put type __array_interface__
    """.split())


def _generate_in(directory: Path, native: str, derivatives: str = "") -> list[Path]:
    """Generate from two small files in `directory`, with relative paths as a user."""
    (directory / "native_functions.yaml").write_text(native)
    (directory / "derivatives.yaml").write_text(derivatives)
    previous = os.getcwd()
    os.chdir(directory)
    try:
        return generate(
            Path("native_functions.yaml"), Path("derivatives.yaml"), Path("out")
        )
    finally:
        os.chdir(previous)


def _refused(tmp_path: Path, native: str, derivatives: str = "") -> str:
    with pytest.raises(CodegenError) as raised:
        _generate_in(tmp_path, native, derivatives)
    assert not (tmp_path / "out").exists(), "nothing may be written"
    assert not (tmp_path / CANARY).exists(), "the payload ran"
    return str(raised.value)


# -- kernel expressions: each path of the issue, refused at file:line --------------------

KERNEL = "- func: f(Tensor self, str p) -> Tensor\n  numpy: {expression}\n"
SEE = "(see 'What an expression may call' in docs/yaml-reference.md)"

KERNEL_ATTACKS = [
    (
        f"np.f2py.os.system('touch {CANARY}')",
        "a numpy expression may not use 'np.f2py' (not in its list of numpy names; "
        "see 'What an expression may call' in docs/yaml-reference.md)",
    ),
    (f"np.f2py.subprocess.run(['touch', '{CANARY}'])", "may not use 'np.f2py'"),
    (f"np.lib._datasource.os.system('touch {CANARY}')", "may not use 'np.lib'"),
    ("np.ma.core.builtins.eval('1')", "may not use 'np.ma'"),
    (
        "self.tofile(p)",
        f"a numpy expression may not call the method 'tofile' {SEE}",
    ),
    ("np.save(p, self)", "may not use 'np.save'"),
    ("np.load(p, allow_pickle=True)", "may not use 'np.load'"),
    ("self.dump(p)", "may not call the method 'dump'"),
    ("self.dumps()", "may not call the method 'dumps'"),
    ("self.astype(np.float64).tofile(p)", "may not call the method 'tofile'"),
    ("np.abs(self).dump(p)", "may not call the method 'dump'"),
    ("np.ctypeslib.as_ctypes(self)", "may not use 'np.ctypeslib'"),
    (
        "self.ctypes.data",
        "may not use the attributes 'ctypes' (did you mean 'dtype'?) and 'data'",
    ),
    ("self.base", "may not use the attribute 'base'"),
    ("np.testing.assert_equal(self, self)", "may not use 'np.testing'"),
    ("np.memmap(p)", "may not use 'np.memmap'"),
    ("np.fromfile(p)", "may not use 'np.fromfile'"),
    ("np.loadtxt(p)", "may not use 'np.loadtxt'"),
    ("np.genfromtxt(p)", "may not use 'np.genfromtxt'"),
    ("np.savetxt(p, self)", "may not use 'np.savetxt'"),
    ("np.lib.npyio.DataSource(p)", "may not use 'np.lib'"),
    ("np.frompyfunc(into, 1, 1)", "may not use 'np.frompyfunc'"),
    ("np.lib.stride_tricks.as_strided(self)", "may not use 'np.lib'"),
    ("np.random.seed(0)", "may not use 'np.random'"),
    ("np.set_printoptions(threshold=1)", "may not use 'np.set_printoptions'"),
    ("np.copyto(self, 0)", "may not use 'np.copyto'"),
    ("np.add.at(self, 0, 1)", "may not call the method 'at'"),
    ("self.fill(0)", "may not call the method 'fill'"),
    ("self.sort()", "may not call the method 'sort'"),
    (
        "np.add(self, self, out=self)",
        "a numpy expression may not pass out= to numpy: it would write into an "
        "argument (an in-place kernel writes through into(out, ...))",
    ),
    (
        "np.vectorize(into)(self)",
        "a numpy expression may not call 'np.vectorize(into)'",
    ),
    (
        "np",
        "a numpy expression may use np only as np.NAME (see 'What an expression may "
        "call' in docs/yaml-reference.md), not alone",
    ),
    ("into(np, self)", "may use np only as np.NAME"),
    (
        "np.linalg",
        "np.linalg is a module: a numpy expression may use its functions "
        "(np.linalg.NAME), not the module itself",
    ),
    ("np.fft", "np.fft is a module"),
    ("np.linalg.linalg.norm(self)", "may not use 'np.linalg.linalg'"),
    ("np.finfo(self.dtype).__class__", "may not use the attribute '__class__'"),
    ("p.format(self)", "may not call the method 'format'"),
]


@pytest.mark.parametrize(
    ("expression", "message"), KERNEL_ATTACKS, ids=[a[0] for a in KERNEL_ATTACKS]
)
def test_kernel_attack_is_refused_at_file_and_line(
    tmp_path: Path, expression: str, message: str
) -> None:
    error = _refused(tmp_path, KERNEL.format(expression=expression))
    assert error.startswith("native_functions.yaml:1: f: "), error
    assert message in error


def test_the_refusal_is_complete_for_the_first_attack(tmp_path: Path) -> None:
    native = KERNEL.format(expression=f"np.f2py.os.system('touch {CANARY}')")
    assert _refused(tmp_path, native) == (
        "native_functions.yaml:1: f: a numpy expression may not use 'np.f2py' (not in "
        "its list of numpy names; see 'What an expression may call' in "
        "docs/yaml-reference.md); did you mean 'np.flip'?"
    )


ACCEPTED = [
    "np.linalg.norm(self)",
    "np.fft.fft(self).real",
    "np.add.reduce(self, axis=0)",
    "np.finfo(self.dtype).eps + self",
    "self.astype(np.float64).sum()",
    "np.abs(self).max(axis=0, keepdims=True)",
    "self.T.reshape(-1)",
    "np.sum(self, axis=dim, dtype=None if dtype is None else dtype.numpy)",
    "into(out, np.add, self, self)",
    "self[np.newaxis] * np.pi",
    "np.einsum('ij,jk->ik', self, self)",
    "(self.shape, self.ndim, self.size, self.flat[0])",
]


@pytest.mark.parametrize("expression", ACCEPTED)
def test_kernels_keep_what_they_need(expression: str) -> None:
    names = ["self", "dim", "dtype", "out"]
    assert check_kernel_expression(expression, names, frozenset({"into"})) == expression


def test_a_package_with_linalg_fft_and_ufunc_methods_runs(tmp_path: Path) -> None:
    native = (
        "- func: norm2(Tensor self) -> Tensor\n  numpy: np.linalg.norm(self)\n"
        "- func: spectrum(Tensor self) -> Tensor\n  numpy: np.abs(np.fft.rfft(self))\n"
        "- func: total(Tensor self) -> Tensor\n  numpy: np.add.reduce(self.ravel())\n"
        "- func: tiny(Tensor self) -> Tensor\n  numpy: self * 0 + np.finfo(self.dtype).eps\n"
    )
    written = _generate_in(tmp_path, native)
    assert written
    sys.path.insert(0, str(tmp_path))
    try:
        package = importlib.import_module("out")
        x = gradgen.tensor([3.0, 4.0], dtype=gradgen.float64)
        assert float(package.norm2(x)) == 5.0  # sqrt(9 + 16)
        assert package.spectrum(x).tolist() == [7.0, 1.0]  # |3 + 4|, |3 - 4|
        assert float(package.total(x)) == 7.0
        assert package.tiny(x).tolist() == [2.0**-52, 2.0**-52]
    finally:
        sys.path.remove(str(tmp_path))
        for name in [n for n in sys.modules if n == "out" or n.startswith("out.")]:
            del sys.modules[name]


# -- formulas: methods only on tensors, never a forbidden one ----------------------------

# An operator named `format` with a method variant: str.format on a constant would read
# attributes of its arguments (`{0.__class__}`), so a formula calls methods of tensors only.
FORMULA_NATIVE = """\
- func: format(Tensor self) -> Tensor
  variants: function, method
  numpy: self
- func: tofile(Tensor self) -> Tensor
  variants: function, method
  numpy: self
- func: twice(Tensor self, int dim, Scalar alpha) -> Tensor
  numpy: self * 2
"""
FORMULA = (
    "- name: twice(Tensor self, int dim, Scalar alpha) -> Tensor\n  self: {formula}\n"
)
FORWARD = (
    "- name: twice(Tensor self, int dim, Scalar alpha) -> Tensor\n"
    "  self: grad * 2\n  result: {formula}\n"
)

FORMULA_ATTACKS = [
    (
        FORMULA,
        "\"'{0.__class__}'.format(grad)\"",
        "derivatives.yaml:2: twice: a formula may call methods of tensors only, not of "
        "a str constant",
    ),
    (
        FORMULA,
        "grad.format(grad)",
        "derivatives.yaml:2: twice: a formula may not call the method 'format' (see "
        "'What an expression may call' in docs/yaml-reference.md)",
    ),
    (
        FORMULA,
        "grad.tofile(grad)",
        "derivatives.yaml:2: twice: a formula may not call the method 'tofile' (see "
        "'What an expression may call' in docs/yaml-reference.md)",
    ),
    (
        FORMULA,
        "grad * dim.bit_length()",
        "derivatives.yaml:2: twice: 'dim' is an argument of type int, not a tensor: a "
        "formula may call methods of tensors only",
    ),
    (
        FORMULA,
        '"[grad].pop()"',
        "derivatives.yaml:2: twice: a formula may call methods of tensors only, not of a "
        "list",
    ),
    (
        FORMULA,
        "grad.register_hook(grad)",
        "derivatives.yaml:2: twice: a formula may not call the method 'register_hook' "
        "(see 'What an expression may call' in docs/yaml-reference.md)",
    ),
    (
        FORWARD,
        "\"'{0.__class__}'.format(self_t)\"",
        "derivatives.yaml:3: twice: a forward formula may call methods of tensors only, "
        "not of a str constant",
    ),
    (
        FORWARD,
        "self_t.format(self_p)",
        "derivatives.yaml:3: twice: a forward formula may not call the method 'format' "
        "(see 'What an expression may call' in docs/yaml-reference.md)",
    ),
    (
        FORWARD,
        "self_t * dim.bit_length()",
        "derivatives.yaml:3: twice: 'dim' is an argument of type int, not a tensor: a "
        "forward formula may call methods of tensors only",
    ),
    (
        FORWARD,
        "self_t * alpha.real",
        "derivatives.yaml:3: twice: attribute access 'alpha.real' is not allowed; call "
        "a method (e.g. x.dim()) or a helper",
    ),
    (
        FORWARD,
        "self_t * alpha.imag()",
        "derivatives.yaml:3: twice: 'alpha' is a Scalar; the only method allowed on it "
        "is conj()",
    ),
]


@pytest.mark.parametrize(
    ("template", "formula", "message"),
    FORMULA_ATTACKS,
    ids=[
        f"{'forward' if t is FORWARD else 'backward'}: {f}"
        for t, f, _ in FORMULA_ATTACKS
    ],
)
def test_formula_attack_is_refused_at_file_and_line(
    tmp_path: Path, template: str, formula: str, message: str
) -> None:
    error = _refused(tmp_path, FORMULA_NATIVE, template.format(formula=formula))
    assert error.split("; did you mean")[0] == message


# -- several unknown names, one error ----------------------------------------------------

UNKNOWN = [
    (
        KERNEL.format(expression="slf * othr"),
        "",
        "native_functions.yaml:1: f: unknown names 'slf' (did you mean 'self'?) and "
        "'othr' (did you mean 'gather'?) in a numpy expression",
    ),
    (
        "- func: f(Tensor self, Tensor other) -> Tensor\n"
        "  numpy: slf * othr + np.sinn(self) + multiply(self) + mltiply(self)\n",
        "",
        "native_functions.yaml:1: f: unknown names 'slf' (did you mean 'self'?) and "
        "'othr' (did you mean 'other'?) in a numpy expression; a numpy expression may "
        "not use 'np.sinn' (did you mean 'np.sin'?) (not in its list of numpy names; "
        "see 'What an expression may call' in docs/yaml-reference.md); no kernel "
        "helpers named 'multiply' and 'mltiply'; a numpy expression may call "
        "np.NAME(...) and the functions in gradgen.numpy_kernels.__all__",
    ),
    (
        "- func: f(Tensor self, Tensor other) -> Tensor\n  numpy: self * other\n",
        "- name: f(Tensor self, Tensor other) -> Tensor\n"
        "  self: grd * othr + slef.mull(other)\n",
        "derivatives.yaml:2: f: unknown names 'grd' (did you mean 'grad'?), 'othr' (did "
        "you mean 'other'?) and 'slef' (did you mean 'self'?); no tensor method named "
        "'mull'",
    ),
    (
        "- func: f(Tensor self, Tensor other) -> Tensor\n  numpy: self * other\n",
        "- name: f(Tensor self, Tensor other) -> Tensor\n"
        "  self: grad\n  other: grad\n  result: slef_t * othr_p + undefined(self_t)\n",
        "derivatives.yaml:4: f: unknown names 'slef_t' (did you mean 'self_t'?) and "
        "'othr_p' (did you mean 'other_p'?) in a forward formula; no helper or operator "
        "named 'undefined'",
    ),
]


@pytest.mark.parametrize(("native", "derivatives", "message"), UNKNOWN)
def test_several_unknown_names_are_reported_in_one_error(
    tmp_path: Path, native: str, derivatives: str, message: str
) -> None:
    assert _refused(tmp_path, native, derivatives) == message


def test_one_unknown_name_reads_as_before(tmp_path: Path) -> None:
    native = "- func: f(Tensor self, Tensor other) -> Tensor\n  numpy: self * other\n"
    derivatives = (
        "- name: f(Tensor self, Tensor other) -> Tensor\n  self: grad * othr\n"
    )
    assert _refused(tmp_path, native, derivatives) == (
        "derivatives.yaml:2: f: unknown name 'othr'; did you mean 'other'?"
    )


# -- the lists against numpy's namespace -------------------------------------------------


def _root(name: str) -> str:
    return name.split(".")[0]


def _leads_out(value: object) -> bool:
    """A module, or a function, class or builtin of a DANGEROUS module."""
    return isinstance(value, types.ModuleType) or _dangerous(value)


def _dangerous(value: object) -> bool:
    """A DANGEROUS module, or a function, class or builtin of one (`os.system`'s
    __self__ is the posix module; `builtins.eval`'s module is builtins)."""
    if isinstance(value, types.ModuleType):
        return _root(value.__name__) in DANGEROUS
    owner = getattr(value, "__self__", None)
    if isinstance(owner, types.ModuleType) and _root(owner.__name__) in DANGEROUS:
        return True
    if isinstance(value, (type, types.FunctionType, types.BuiltinFunctionType)):
        module = getattr(value, "__module__", None)
        return isinstance(module, str) and _root(module) in DANGEROUS
    return False


def _walk_numpy() -> tuple[dict[str, str], list[str]]:
    """Every module reachable from `np` by attributes (path -> module name), and every
    path that leads out of numpy to a DANGEROUS module or one of its functions."""
    modules: dict[str, str] = {}
    escapes: list[str] = []
    seen = {id(np)}
    queue: collections.deque[tuple[str, types.ModuleType]] = collections.deque(
        [("np", np)]
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        while queue:
            path, module = queue.popleft()
            for name in sorted(dir(module)):
                if name.startswith("__"):
                    continue
                try:
                    value = getattr(module, name)
                except Exception:  # a lazy attribute that fails to import
                    continue
                if isinstance(value, types.ModuleType):
                    modules[f"{path}.{name}"] = value.__name__
                    if value.__name__.startswith("numpy") and id(value) not in seen:
                        seen.add(id(value))
                        queue.append((f"{path}.{name}", value))
                if _dangerous(value):
                    escapes.append(f"{path}.{name}")
    return modules, escapes


def test_every_path_out_of_numpy_is_refused() -> None:
    modules, escapes = _walk_numpy()
    # The walk does find what the issue found (58 paths on its numpy), so the test
    # cannot pass by finding nothing.
    assert len(escapes) >= 40, escapes
    assert {"np.f2py.os", "np.lib._datasource.os"} <= set(escapes)
    assert len(modules) >= 100
    refused = 0
    for path in [*escapes, *modules]:
        for expression in (path, f"{path}(self)", f"{path}.system(self)"):
            with pytest.raises(CodegenError):
                check_kernel_expression(expression, ["self"], frozenset())
            refused += 1
    assert refused == 3 * (len(escapes) + len(modules))


def _value_samples() -> list[object]:
    """The kinds of values a kernel expression holds: arrays, numpy scalars, ufuncs,
    dtypes (numpy's and gradgen's), finfo/iinfo, a flat iterator, Python numbers."""
    matrix = np.arange(6.0).reshape(2, 3)
    return [
        matrix,
        np.array(1.5),
        np.float64(1.5),
        np.int64(2),
        np.complex128(1j),
        np.add,
        matrix.dtype,
        np.finfo(np.float32),
        np.iinfo(np.int32),
        matrix.flat,
        gradgen.float32,
        1.5,
        2,
        "text",
        [1, 2],
        (1, 2),
    ]


def test_no_whitelisted_name_leads_out_of_numpy() -> None:
    for name in NUMPY_NAMES:
        value = getattr(np, name)
        assert not _leads_out(value), f"np.{name}"
        if callable(value):  # a function, ufunc or type of numpy itself
            assert getattr(value, "__module__", "").startswith("numpy"), f"np.{name}"
        else:
            assert value is None or isinstance(value, float), f"np.{name}"
    for module, names in NUMPY_SUBMODULES.items():
        assert isinstance(getattr(np, module), types.ModuleType)
        for name in names:
            value = getattr(getattr(np, module), name)
            assert callable(value) and not _leads_out(value), f"np.{module}.{name}"
            assert value.__module__.startswith("numpy"), f"np.{module}.{name}"
    checked = 0
    for sample in _value_samples():
        for name in VALUE_METHODS | VALUE_ATTRIBUTES:
            try:
                value = getattr(sample, name)
            except (AttributeError, ValueError):
                continue
            checked += 1
            assert not _leads_out(value), f"{type(sample).__name__}.{name}"
            if name in VALUE_METHODS and callable(value):
                # a method bound to the value itself, not a module's function
                assert getattr(value, "__self__", sample) is sample, name
    assert checked > len(VALUE_METHODS | VALUE_ATTRIBUTES)


def test_every_whitelisted_name_exists_in_numpy() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a deprecated name fails too
        missing = [n for n in sorted(NUMPY_NAMES) if not hasattr(np, n)]
        for module, names in NUMPY_SUBMODULES.items():
            missing += [
                f"{module}.{n}"
                for n in sorted(names)
                if not hasattr(getattr(np, module), n)
            ]
        samples = _value_samples()
        for name in sorted(VALUE_METHODS):
            if not any(callable(getattr(s, name, None)) for s in samples):
                missing.append(f"method {name}")
        for name in sorted(VALUE_ATTRIBUTES):
            if not any(hasattr(s, name) for s in samples):
                missing.append(f"attribute {name}")
    assert not missing


def test_the_never_list_stays_out_of_the_whitelists() -> None:
    whitelisted = (
        NUMPY_NAMES
        | set(NUMPY_SUBMODULES)
        | set().union(*NUMPY_SUBMODULES.values())
        | VALUE_METHODS
        | VALUE_ATTRIBUTES
    )
    assert not (NUMPY_NAMES | set(NUMPY_SUBMODULES)) & NEVER_NUMPY
    assert not (VALUE_METHODS | VALUE_ATTRIBUTES) & NEVER_MEMBERS
    assert set(NUMPY_SUBMODULES) == {"linalg", "fft"}
    assert {
        "format",
        "tofile",
        "backward",
        "register_hook",
        "numpy",
    } <= FORMULA_FORBIDDEN_METHODS
    # Nothing in a list starts with an underscore (private modules, dunders).
    assert not [n for n in whitelisted if n.startswith("_")]


def test_every_existing_kernel_and_formula_is_still_accepted() -> None:
    from gradgen.codegen.load import load

    model = load(ROOT / "native_functions.yaml", ROOT / "derivatives.yaml")
    assert len(model.native_functions) > 300 and len(model.infos) > 200


# -- the reference documents the lists ---------------------------------------------------


def _reference_section() -> str:
    text = (ROOT / "docs" / "yaml-reference.md").read_text(encoding="utf-8")
    match = re.search(
        r"^### What an expression may call\n(.*?)(?=^## |\Z)", text, re.S | re.M
    )
    assert match, "docs/yaml-reference.md has no section 'What an expression may call'"
    return match.group(1)


def test_the_reference_lists_every_family() -> None:
    section = _reference_section()
    families = {
        **{f"np.NAME, {k}": v for k, v in NUMPY_FAMILIES.items()},
        **{f"np.{k}.NAME": v for k, v in NUMPY_SUBMODULES.items()},
        **{f"value.NAME(...), {k}": v for k, v in VALUE_METHOD_FAMILIES.items()},
        **{f"value.NAME, {k}": v for k, v in VALUE_ATTRIBUTE_FAMILIES.items()},
        "formulas never call": FORMULA_FORBIDDEN_METHODS,
    }
    for family, names in families.items():
        line = re.search(rf"^- \*\*{re.escape(family)}\*\*: (.*)$", section, re.M)
        assert line, f"no line for {family}"
        assert set(re.findall(r"`([^`]+)`", line.group(1))) == set(names), family


# -- expressions Python warns about -------------------------------------------------------


@pytest.mark.parametrize(
    ("where", "expression", "warning"),
    [
        ("numpy", r"self if '\d' else self", r"invalid escape sequence '\d'"),
        ("numpy", "self if self is 1 else self", "literal"),
        ("numpy", "self if 1if 1 else self", None),  # 3.11 warns, 3.12 refuses
        ("formula", "grad if grad is () else grad", "literal"),
    ],
)
def test_an_expression_python_warns_about_is_refused(
    tmp_path: Path, where: str, expression: str, warning: str | None
) -> None:
    schema = "fz(Tensor self) -> Tensor"
    kernel = expression if where == "numpy" else "self * 2"
    native = f"- func: {schema}\n  numpy: {kernel}\n"
    derivatives = ""
    if where == "formula":
        derivatives = f"- name: {schema}\n  self: {expression}\n"
    message = _refused(tmp_path, native, derivatives)
    line = "derivatives.yaml:2" if where == "formula" else "native_functions.yaml:1"
    assert message.startswith(f"{line}: fz: ")
    if warning is not None:
        assert "makes Python warn (" in message and warning in message
