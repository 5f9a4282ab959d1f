"""A user's own operator package: a YAML pair plus a kernels module (`--kernels`).

The package is generated into a temporary directory, imported, and used beside the
built-in operators: values, gradients (gradcheck and gradgradcheck), forward mode,
graphs that mix both, and the errors a broken kernels module or a misspelt name gives.
"""

from __future__ import annotations

import importlib
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

import gradgen
from gradgen.autograd import forward_ad, gradcheck, gradgradcheck
from gradgen.codegen import CodegenError, generate

ROOT = Path(__file__).resolve().parent.parent

NATIVE = """\
# cube and softplus: kernels from my_kernels.py
- func: cube(Tensor self) -> Tensor
  variants: function
  numpy: cube_kernel(int_to_float(self))

- func: softplus(Tensor self, Scalar beta=1) -> Tensor
  variants: function
  numpy: softplus_kernel(int_to_float(self), beta)

- func: my_log1p(Tensor self) -> Tensor
  variants: function
  numpy: np.log1p(self)
"""

DERIVATIVES = """\
- name: cube(Tensor self) -> Tensor
  self: cube_backward(grad, self)
  result: auto_element_wise

- name: softplus(Tensor self, Scalar beta=1) -> Tensor
  self: softplus_backward(grad, self, beta)
  result: auto_element_wise

- name: my_log1p(Tensor self) -> Tensor
  self: log1p_backward(grad, self)
"""

KERNELS = '''\
"""Kernels and backward helpers of my operators."""

import numpy as np

import gradgen

__all__ = ["cube_kernel", "cube_backward", "softplus_kernel", "softplus_backward",
           "log1p_backward"]


def cube_kernel(x: np.ndarray) -> np.ndarray:
    return x * x * x


def cube_backward(grad: gradgen.Tensor, x: gradgen.Tensor) -> gradgen.Tensor:
    # gradgen operators: differentiable, so gradgradcheck works too
    return grad * 3 * x * x


def softplus_kernel(x: np.ndarray, beta: float) -> np.ndarray:
    return np.logaddexp(0.0, beta * x) / beta


def softplus_backward(grad: gradgen.Tensor, x: gradgen.Tensor, beta: float) -> gradgen.Tensor:
    return grad * gradgen.sigmoid(x * beta)


CALLS = []


def log1p_backward(grad: gradgen.Tensor, x: gradgen.Tensor) -> gradgen.Tensor:
    # shadows gradgen.helpers.log1p_backward in this package's formulas
    CALLS.append("log1p_backward")
    return grad / (1 + x)
'''


def write_sources(
    directory: Path,
    native: str = NATIVE,
    derivatives: str = DERIVATIVES,
    kernels: str | None = KERNELS,
) -> None:
    (directory / "native_functions.yaml").write_text(native)
    (directory / "derivatives.yaml").write_text(derivatives)
    if kernels is not None:
        (directory / "my_kernels.py").write_text(kernels)


def generate_in(
    directory: Path,
    out: str = "userops",
    kernels: str | None = "my_kernels.py",
    check: bool = False,
) -> list[Path]:
    """Generate with paths relative to `directory`, as a user running the command there."""
    previous = os.getcwd()
    os.chdir(directory)
    try:
        return generate(
            Path("native_functions.yaml"),
            Path("derivatives.yaml"),
            Path(out),
            check=check,
            kernels=None if kernels is None else Path(kernels),
        )
    finally:
        os.chdir(previous)


def forget(package: str) -> None:
    for name in [n for n in sys.modules if n == package or n.startswith(package + ".")]:
        del sys.modules[name]


@pytest.fixture(scope="module")
def userops(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ModuleType]:
    root = tmp_path_factory.mktemp("user")
    write_sources(root)
    generate_in(root)
    sys.path.insert(0, str(root))
    try:
        yield importlib.import_module("userops")
    finally:
        sys.path.remove(str(root))
        forget("userops")


def leaf(values: object) -> gradgen.Tensor:
    return gradgen.tensor(values, dtype=gradgen.float64, requires_grad=True)


# -- the generated package -------------------------------------------------------------


def test_the_kernels_module_is_copied_verbatim_and_imported_by_the_package(
    userops: ModuleType,
) -> None:
    copy = Path(userops.__file__).parent / "user_kernels.py"
    assert copy.read_text() == KERNELS
    assert userops.user_kernels.__name__ == "userops.user_kernels"
    kernels_source = (Path(userops.__file__).parent / "kernels.py").read_text()
    assert "user_kernels.cube_kernel(int_to_float(self))" in kernels_source
    assert "from my_kernels.py" not in kernels_source  # the header names the sources
    assert "native_functions.yaml, derivatives.yaml and my_kernels.py" in kernels_source


def test_values_match_numpy(userops: ModuleType) -> None:
    values = np.array([-2.0, -0.5, 0.0, 1.5, 3.0])
    np.testing.assert_allclose(
        userops.cube(gradgen.tensor(values)).numpy(), values**3, rtol=1e-6
    )
    np.testing.assert_allclose(
        userops.softplus(gradgen.tensor(values, dtype=gradgen.float64), 2.0).numpy(),
        np.log1p(np.exp(2.0 * values)) / 2.0,
    )
    # int_to_float, gradgen's own kernel helper, still works beside the user's
    integral = userops.cube(gradgen.tensor([2, 3]))
    assert integral.dtype == gradgen.float32 and integral.tolist() == [8.0, 27.0]


def test_backward_uses_the_users_helper(userops: ModuleType) -> None:
    x = leaf([0.5, -1.0, 2.0])
    y = userops.cube(x)
    assert y.grad_fn.name() == "CubeBackward0"
    assert y.grad_fn._saved_self is not None
    y.backward(gradgen.ones(3, dtype=gradgen.float64))
    np.testing.assert_allclose(x.grad.numpy(), 3 * np.array([0.5, -1.0, 2.0]) ** 2)


def test_gradcheck_and_gradgradcheck(userops: ModuleType) -> None:
    x = leaf([0.3, -1.2, 2.0])
    assert gradcheck(userops.cube, (x,))
    assert gradgradcheck(userops.cube, (x,))
    assert gradcheck(lambda t: userops.softplus(t, 2.0), (x,))
    assert gradgradcheck(lambda t: userops.softplus(t, 0.5), (x,))


def test_forward_mode_from_the_users_helper(userops: ModuleType) -> None:
    primal = gradgen.tensor([1.0, -2.0], dtype=gradgen.float64)
    tangent = gradgen.tensor([1.0, 0.5], dtype=gradgen.float64)
    with forward_ad.dual_level():
        out = userops.cube(forward_ad.make_dual(primal, tangent))
        np.testing.assert_allclose(
            forward_ad.unpack_dual(out).tangent.numpy(), [3.0, 6.0]
        )


def test_a_forward_formula_may_call_the_users_helper(tmp_path: Path) -> None:
    derivatives = DERIVATIVES.replace(
        "  self: cube_backward(grad, self)\n  result: auto_element_wise",
        "  self: cube_backward(grad, self)\n  result: cube_backward(self_t, self_p)",
    )
    write_sources(tmp_path, derivatives=derivatives)
    generate_in(tmp_path, out="forwardops")
    sys.path.insert(0, str(tmp_path))
    try:
        forwardops = importlib.import_module("forwardops")
        primal = gradgen.tensor([1.0, -2.0], dtype=gradgen.float64)
        tangent = gradgen.tensor([1.0, 0.5], dtype=gradgen.float64)
        with forward_ad.dual_level():
            out = forwardops.cube(forward_ad.make_dual(primal, tangent))
            tangent_out = forward_ad.unpack_dual(out).tangent
        np.testing.assert_allclose(tangent_out.numpy(), [3.0, 6.0])
    finally:
        sys.path.remove(str(tmp_path))
        forget("forwardops")


def test_user_ops_and_builtin_ops_share_one_graph(userops: ModuleType) -> None:
    x = leaf([0.5, 2.0])
    w = leaf([3.0, -1.0])
    # user -> built-in -> user -> built-in
    z = gradgen.sum(userops.softplus(gradgen.mul(userops.cube(x), w)))
    z.backward()
    s = 1 / (1 + np.exp(-(np.array([0.5, 2.0]) ** 3 * np.array([3.0, -1.0]))))
    np.testing.assert_allclose(
        x.grad.numpy(), s * np.array([3.0, -1.0]) * 3 * np.array([0.5, 2.0]) ** 2
    )
    np.testing.assert_allclose(w.grad.numpy(), s * np.array([0.5, 2.0]) ** 3)
    assert gradcheck(
        lambda a, b: (userops.cube(a) * b.exp()).sum(),
        (x.detach().requires_grad_(), w.detach().requires_grad_()),
    )


def test_a_users_function_shadows_gradgens_helper_of_the_same_name(
    userops: ModuleType,
) -> None:
    calls = userops.user_kernels.CALLS
    calls.clear()
    x = leaf([0.0, 1.0])
    y = userops.my_log1p(x)
    y.sum().backward()
    assert calls == ["log1p_backward"]
    np.testing.assert_allclose(x.grad.numpy(), [1.0, 0.5])


def test_check_mode_covers_the_copied_module(tmp_path: Path) -> None:
    write_sources(tmp_path)
    assert "user_kernels.py" in [p.name for p in generate_in(tmp_path)]
    assert generate_in(tmp_path, check=True) == []
    (tmp_path / "my_kernels.py").write_text(KERNELS + "\n# edited\n")
    assert [p.name for p in generate_in(tmp_path, check=True)] == ["user_kernels.py"]


def test_without_a_kernels_module_nothing_changes(tmp_path: Path) -> None:
    write_sources(
        tmp_path, NATIVE.split("\n\n")[-1], DERIVATIVES.split("\n\n")[-1], None
    )
    written = generate_in(tmp_path, kernels=None)
    assert "user_kernels.py" not in [p.name for p in written]
    assert "user_kernels" not in (tmp_path / "userops" / "kernels.py").read_text()


def test_the_console_script_takes_kernels(tmp_path: Path) -> None:
    write_sources(tmp_path)
    script = Path(sys.executable).parent / "gradgen-codegen"
    command = (
        [str(script)] if script.exists() else [sys.executable, "-m", "gradgen.codegen"]
    )
    result = subprocess.run(
        command
        + [
            "--native-functions",
            "native_functions.yaml",
            "--derivatives",
            "derivatives.yaml",
            "--kernels",
            "my_kernels.py",
            "--out",
            "cliops",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "cliops" / "user_kernels.py").read_text() == KERNELS
    check = subprocess.run(
        [
            sys.executable,
            "-c",
            "import gradgen, cliops; print(cliops.cube(gradgen.tensor([2.0])).item())",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert check.stdout.strip() == "8.0", check.stderr


def test_the_generated_package_is_self_contained(tmp_path: Path) -> None:
    """The original kernels file may go away: the package carries its copy."""
    (tmp_path / "src").mkdir()
    write_sources(tmp_path / "src")
    generate_in(tmp_path / "src", out=str(tmp_path / "moved"))
    shutil.rmtree(tmp_path / "src")
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "import gradgen, moved; print(moved.cube(gradgen.tensor([3.0])).item())",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert result.stdout.strip() == "27.0", result.stderr


# -- errors --------------------------------------------------------------------------------

KERNEL_ERRORS = [
    (
        "no __all__",
        KERNELS.replace("__all__ =", "exports ="),
        "my_kernels.py: the kernels module has no __all__: list the functions that kernel "
        "expressions and formulas may call, e.g. __all__ = ['cube_kernel', 'cube_backward']",
    ),
    (
        "__all__ names an undefined function",
        KERNELS.replace(
            '"cube_kernel", "cube_backward"', '"cube_kernal", "cube_backward"'
        ),
        "my_kernels.py:7: __all__ lists 'cube_kernal', which the module does not define; "
        "did you mean 'cube_kernel'?",
    ),
    (
        "__all__ computed",
        KERNELS.replace(
            '__all__ = ["cube_kernel", "cube_backward", "softplus_kernel", "softplus_backward",\n'
            '           "log1p_backward"]',
            "__all__ = [name for name in dir() if name.endswith('kernel')]",
        ),
        "my_kernels.py:7: __all__ must be a literal list of strings (it is read without "
        "running the module), not [name for name in dir() if name.endswith('kernel')]",
    ),
    (
        "reserved name",
        KERNELS.replace('"log1p_backward"]', '"log1p_backward", "grad"]')
        + "\ngrad = None\n",
        "my_kernels.py:7: __all__ lists 'grad', a name derivatives.yaml or the generated "
        "code reserves for itself; rename the function",
    ),
    (
        "syntax error",
        KERNELS.replace(
            "def cube_kernel(x: np.ndarray) -> np.ndarray:", "def cube_kernel(x:"
        ),
        "my_kernels.py:11: the kernels module is not valid Python: '(' was never closed",
    ),
]


@pytest.mark.parametrize(
    "kernels, message",
    [case[1:] for case in KERNEL_ERRORS],
    ids=[case[0] for case in KERNEL_ERRORS],
)
def test_a_broken_kernels_module_is_reported_with_file_and_line(
    tmp_path: Path, kernels: str, message: str
) -> None:
    write_sources(tmp_path, kernels=kernels)
    with pytest.raises(CodegenError) as raised:
        generate_in(tmp_path)
    assert str(raised.value) == message
    assert not (tmp_path / "userops").exists(), "nothing may be written on errors"


def test_a_missing_kernels_module(tmp_path: Path) -> None:
    write_sources(tmp_path, kernels=None)
    with pytest.raises(CodegenError) as raised:
        generate_in(tmp_path, kernels="missing_kernels.py")
    assert str(raised.value) == (
        "missing_kernels.py: cannot read the kernels module: No such file or directory"
    )
    assert not (tmp_path / "userops").exists()


NAME_ERRORS = [
    (
        "kernel expression, misspelt user function",
        NATIVE.replace("cube_kernel(int_to_float", "cube_kernl(int_to_float"),
        DERIVATIVES,
        "native_functions.yaml:2: cube: no kernel helper named 'cube_kernl'; a numpy "
        "expression may call np.NAME(...) and the functions in "
        "gradgen.numpy_kernels.__all__ and my_kernels.py's __all__; did you mean "
        "'cube_kernel'?",
    ),
    (
        "kernel expression, unknown name",
        NATIVE.replace(
            "softplus_kernel(int_to_float(self), beta)", "softplus_kernel(self, bta)"
        ),
        DERIVATIVES,
        "native_functions.yaml:6: softplus: unknown name 'bta' in a numpy expression; "
        "did you mean 'beta'?",
    ),
    (
        "formula, misspelt user helper",
        NATIVE,
        DERIVATIVES.replace("cube_backward(grad, self)", "cube_backwrd(grad, self)"),
        "derivatives.yaml:2: cube: no helper or operator named 'cube_backwrd'; did you "
        "mean 'cube_backward'?",
    ),
    (
        "forward formula, misspelt user helper",
        NATIVE,
        DERIVATIVES.replace(
            "  self: cube_backward(grad, self)\n  result: auto_element_wise",
            "  self: cube_backward(grad, self)\n  result: cube_backwad(self_t, self_p)",
        ),
        "derivatives.yaml:3: cube: no helper or operator named 'cube_backwad'; did you "
        "mean 'cube_backward'?",
    ),
    (
        "a user function named like an operator of the package, called in a formula",
        NATIVE.replace("cube_kernel(", "softplus("),
        DERIVATIVES.replace("cube_backward(grad, self)", "softplus(grad, self, 1)"),
        "derivatives.yaml:2: cube: 'softplus' is both an operator of this package and a "
        "function in my_kernels.py's __all__, so the call is ambiguous; rename the function",
    ),
    (
        "an argument named like the module",
        NATIVE
        + "\n- func: other(Tensor user_kernels) -> Tensor\n  numpy: user_kernels\n",
        DERIVATIVES,
        "native_functions.yaml:14: other: an argument may not be named 'user_kernels' in a "
        "package generated with a kernels module (my_kernels.py): generated code reaches "
        "the module's functions by that name",
    ),
]


@pytest.mark.parametrize(
    "native, derivatives, message",
    [case[1:] for case in NAME_ERRORS],
    ids=[case[0] for case in NAME_ERRORS],
)
def test_an_unknown_or_ambiguous_name_is_reported_with_file_line_and_suggestion(
    tmp_path: Path, native: str, derivatives: str, message: str
) -> None:
    kernels = KERNELS + "\n\ndef softplus(x, beta):\n    return x\n"
    kernels = kernels.replace('"log1p_backward"]', '"log1p_backward", "softplus"]')
    write_sources(tmp_path, native, derivatives, kernels)
    with pytest.raises(CodegenError) as raised:
        generate_in(tmp_path)
    assert str(raised.value) == message
    assert not (tmp_path / "userops").exists()


def test_cli_reports_kernels_errors_without_a_traceback(tmp_path: Path) -> None:
    write_sources(tmp_path, kernels=KERNELS.replace("__all__ =", "exports ="))
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "gradgen.codegen",
            "--native-functions",
            "native_functions.yaml",
            "--derivatives",
            "derivatives.yaml",
            "--kernels",
            "my_kernels.py",
            "--out",
            "out",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 1
    assert (
        result.stderr.splitlines()[-1]
        == "gradgen-codegen: 1 error(s); nothing was written"
    )
    assert result.stderr.startswith("my_kernels.py: the kernels module has no __all__")
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "out").exists()


def test_without_kernels_the_users_names_are_unknown(tmp_path: Path) -> None:
    write_sources(tmp_path, kernels=None)
    with pytest.raises(
        CodegenError,
        match=re.escape(
            "native_functions.yaml:2: cube: no kernel helper named 'cube_kernel'; a numpy "
            "expression may call np.NAME(...) and the functions in gradgen.numpy_kernels.__all__"
        ),
    ):
        generate_in(tmp_path, kernels=None)


# -- the walkthrough in docs/user-packages.md -----------------------------------------------

DOC = ROOT / "docs" / "user-packages.md"


def _blocks(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", DOC.read_text(), flags=re.S | re.M)


def test_the_walkthrough_runs(tmp_path: Path) -> None:
    """Every python block of the walkthrough, each in a fresh interpreter at the root."""
    blocks = _blocks("python")
    assert blocks
    for block in blocks:
        result = subprocess.run(
            [sys.executable, "-c", block], cwd=ROOT, capture_output=True, text=True
        )
        assert result.returncode == 0, f"{block}\n{result.stderr}"


def test_the_walkthroughs_files_are_the_ones_its_script_generates_from() -> None:
    """The YAML and kernels module shown as files are the ones the script writes."""
    script = _blocks("python")[-1]
    shown = _blocks("yaml") + [_blocks("python")[0]]
    assert len(shown) == 3
    for text in shown:
        assert text in script, text


def test_the_walkthroughs_error_messages_are_the_ones_given(tmp_path: Path) -> None:
    native, derivatives = _blocks("yaml")
    kernels = _blocks("python")[0]
    messages = [line for block in _blocks("text") for line in block.splitlines()]
    cases = [
        (
            native.replace("cube_kernel(self)", "cube_kernl(self)"),
            kernels,
            "cube_kernels.py",
        ),
        (native, kernels.replace("__all__ =", "exports ="), "cube_kernels.py"),
        (
            native,
            kernels.replace('["cube_kernel",', '["cube_kernal",'),
            "cube_kernels.py",
        ),
        (native, kernels, "missing.py"),
    ]
    assert len(cases) == len(messages)
    for (native_text, kernels_text, kernels_file), message in zip(cases, messages):
        (tmp_path / "native_functions.yaml").write_text(native_text)
        (tmp_path / "derivatives.yaml").write_text(derivatives)
        (tmp_path / "cube_kernels.py").write_text(kernels_text)
        with pytest.raises(CodegenError) as raised:
            generate_in(tmp_path, out="cubeops", kernels=kernels_file)
        assert str(raised.value) == message
