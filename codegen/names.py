"""The names generated code uses for itself, found by generating a probe package.

A YAML name (an operator's function or method, an argument, a return) becomes a name in
generated code, beside the names the templates and ir.py choose: imports, module-level
helpers, locals such as `grad_fn`, `result` or `any_grad_defined`, and builtins such as
`len`. When the two meet, one shadows the other: a wrong gradient, or every other
operator of the package broken. load.py refuses such a YAML name, with the reason.

The generator's own names are not a hand-kept list. `generated_names()` loads a small
probe package (below) through the real load, ir and templates, whose every YAML name
contains the marker `zq`, renders it (without black) and reads the result with `ast`:
every name of a generated module or function without the marker is the generator's.
The probe has an operator of each shape the templates distinguish (in-place, view,
list and named returns, scalar returns, Tensor[] inputs, multi-input formulas, forward
formulas, overloads, composites, int-list varargs, not-implemented autograd);
tests/test_security_names.py checks that every name in the committed package's
functions is a YAML name or one found here.
"""

from __future__ import annotations

import ast
import builtins
import functools
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from .errors import CodegenError
from .kernels_module import MODULE_NAME
from .model import NAMESPACES

if TYPE_CHECKING:
    from . import emit
    from .model import Model, NativeFunction

_MARKER = "zq"

_PROBE_NATIVE = """\
- func: zqa.zqb(Tensor self, Tensor zqo, *, Scalar zqs=1) -> Tensor
  variants: function, method
  numpy: self * zqo * zqs
  type_promotion: self, zqo

- func: zqa.zqc(Tensor self, Scalar zqo) -> Tensor
  variants: function, method
  numpy: self * zqo
  type_promotion: self, zqo

- func: zqa_.zqb(Tensor(a!) self, Tensor zqo, *, Scalar zqs=1) -> Tensor(a!)
  variants: method
  numpy: into(out, np.multiply, self, zqo)

- func: zqd(Tensor(a -> *) self, int zqi) -> Tensor(a)[]
  variants: function, method
  numpy: split(self, zqi, 0)

- func: zqe(Tensor(a) self, int[] zql) -> Tensor(a)
  variants: function, method
  numpy: permute(self, zql)

- func: zqf(Tensor self, Tensor zqo) -> (Tensor zqv, Tensor zqw)
  variants: function
  numpy: self + zqo, self - zqo

- func: zqg(Tensor self) -> int
  variants: function
  numpy: "1"

- func: zqh(Tensor self) -> int[]
  variants: function
  numpy: "[1, 2]"

- func: zqh.zqb(Tensor self) -> bool
  variants: function
  numpy: "True"

- func: zqh.zqc(Tensor self) -> float
  variants: function
  numpy: "1.5"

- func: zqh.zqd(Tensor self) -> Scalar
  variants: function
  numpy: "2"

- func: zqj(Tensor[] zqt, int zqi=0) -> Tensor
  variants: function
  numpy: np.concatenate(zqt, axis=zqi)
  type_promotion: zqt

- func: zqk(Tensor self, Tensor? zqn, Tensor?[] zqm, ScalarType? zqy=None) -> Tensor
  variants: function
  numpy: self

- func: zqp(Tensor self) -> Tensor
  variants: function, method
  composite: conj

- func: zqr(Tensor self, Tensor zqo) -> (Tensor, Tensor)
  variants: function
  numpy: self, zqo

- func: zqu(Tensor self, Tensor zqo) -> Tensor
  variants: function
  numpy: self + zqo
  out_overload: zqu.zqout

- func: zqz(Tensor self, int zqi=0, bool zqc=False) -> Tensor
  variants: function, method
  numpy: self

- func: linalg_zqx(Tensor self, Tensor zqo, int zqi=0, bool zqc=False) -> Tensor
  python_module: linalg
  numpy: self - zqo

- func: special_zqx(Tensor self, Tensor zqo, int zqi=0, bool zqc=False) -> Tensor
  python_module: special
  numpy: self - zqo

- func: fft_zqx(Tensor self, Tensor zqo, int zqi=0, bool zqc=False) -> Tensor
  python_module: fft
  numpy: self - zqo
"""

_PROBE_DERIVATIVES = """\
- name: zqa.zqb(Tensor self, Tensor zqo, *, Scalar zqs=1) -> Tensor
  self: grad * zqo * zqs
  zqo: grad * self.scalar_type() if retain_variables else grad
  result: self_t * zqo_p + zqo_t * self_p

- name: zqd(Tensor(a -> *) self, int zqi) -> Tensor(a)[]
  self: not_implemented("zqd")
  result: auto_linear

- name: zqe(Tensor(a) self, int[] zql) -> Tensor(a)
  self: zqe(grad, zql) if zql.size() > 0 else grad
  result: auto_linear

- name: zqf(Tensor self, Tensor zqo) -> (Tensor zqv, Tensor zqw)
  self, zqo: zqr(grad_zqv, grad_zqw)
  zqv: self_t + zqo_t
  zqw: self_t - zqo_t

- name: zqa.zqc(Tensor self, Scalar zqo) -> Tensor
  self: grad * zqo

- name: zqj(Tensor[] zqt, int zqi=0) -> Tensor
  zqt: cat_tensors_backward(grad, to_args_sizes_symint(zqt), to_args_scalartypes(zqt), zqi) if retain_variables else grad

- name: linalg_zqx(Tensor self, Tensor zqo, int zqi=0, bool zqc=False) -> Tensor
  self: linalg_zqx(grad, zqo, zqi, zqc) + zqo
  zqo: grad * zqo

- name: zqu(Tensor self, Tensor zqo) -> Tensor
  self: zqe(grad, self.sym_sizes()) * result
  zqo: non_differentiable

- name: zqk(Tensor self, Tensor? zqn, Tensor?[] zqm, ScalarType? zqy=None) -> Tensor
  self: grad * zqn
  zqn: non_differentiable
  zqm: non_differentiable
"""


@dataclass(frozen=True)
class GeneratedNames:
    """The generator's own names in a generated package, by generated file."""

    # Names bound at module level (imports, helpers, METHODS ...), by file name.
    module_level: dict[str, frozenset[str]]
    # Every name in the generated functions (parameters, locals, and the globals and
    # builtins they read), by file name; annotations are not counted.
    in_functions: dict[str, frozenset[str]]
    # The names generated functions and methods read from their module or the
    # builtins, by file name.
    free: dict[str, frozenset[str]]

    def in_file(self, name: str) -> frozenset[str]:
        """The names a module-level name of the file must not hide."""
        return self.module_level.get(name, frozenset()) | self.free.get(
            name, frozenset()
        )


class _Collector(ast.NodeVisitor):
    """The names one function reads and binds, annotations left out."""

    def __init__(self) -> None:
        self.loaded: set[str] = set()
        self.bound: set[str] = set()

    def visit_Name(self, node: ast.Name) -> None:
        (self.loaded if isinstance(node.ctx, ast.Load) else self.bound).add(node.id)

    def visit_arg(self, node: ast.arg) -> None:
        self.bound.add(node.arg)  # not the annotation

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.name is not None:
            self.bound.add(node.name)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self.visit(node.target)
        if node.value is not None:
            self.visit(node.value)

    def _comprehension(
        self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp
    ) -> None:
        # A comprehension's variables are its own: they hide nothing outside it.
        inner = _Collector()
        inner.generic_visit(node)
        self.loaded |= inner.loaded - inner.bound

    visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = (
        _comprehension
    )

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self.visit(node.args)
        for statement in node.body:
            self.visit(statement)


def _function_names(node: ast.FunctionDef) -> tuple[set[str], set[str]]:
    """(every name of the function, the names it reads from outside)."""
    collector = _Collector()
    collector.visit(node)
    return collector.loaded | collector.bound, collector.loaded - collector.bound


def _module_level(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {
                (a.asname or a.name).split(".")[0] for a in node.names if a.name != "*"
            }
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {
                n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)
            }
    return names


def names_in_source(source: str) -> tuple[set[str], set[str], set[str]]:
    """(module-level names, every name of its top-level functions, the names its
    functions and methods read from the module or the builtins) of a module's source."""
    tree = ast.parse(source)
    in_functions: set[str] = set()
    free: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            every, outside = _function_names(node)
            in_functions |= every
            free |= outside
        elif isinstance(node, ast.ClassDef):
            free |= _loads([*node.bases, *node.decorator_list])
            for statement in node.body:
                if isinstance(statement, ast.FunctionDef):
                    free |= _function_names(statement)[1]
                    free |= _loads(statement.decorator_list)  # @property
                else:
                    free |= _loads([statement])  # __slots__ = ...
        else:
            free |= _loads([node])  # registrations, METHODS = {...}, ...
    return _module_level(tree), in_functions, free


def _loads(nodes: list[ast.expr] | list[ast.stmt]) -> set[str]:
    return {
        n.id
        for node in nodes
        for n in ast.walk(node)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    }


def _mine(names: set[str]) -> frozenset[str]:
    return frozenset(n for n in names if _MARKER not in n)


def _unformatted_cache() -> emit.BlackCache:
    """A BlackCache that leaves the text as rendered: the probe is only parsed."""
    from . import emit

    class Unformatted(emit.BlackCache):
        def format_modules(self, texts: dict[str, str]) -> dict[str, str]:
            return dict(texts)

    return Unformatted(None)


def _called_by_probe(model: Model) -> frozenset[str]:
    """The helpers the probe's kernel expressions and formulas name."""
    from . import load
    from .formulas import names_used

    texts = [f.numpy for f in model.native_functions if f.numpy is not None]
    texts += [d.original for i in model.infos for d in i.derivatives]
    names = frozenset().union(*(names_used(t) for t in texts))
    helpers = load.exported_names("numpy_kernels") | load.exported_names("helpers")
    return names & helpers


@functools.cache
def generated_names() -> GeneratedNames:
    """The generator's own names, from the probe package (computed once a process)."""
    from . import emit, ir, load

    with tempfile.TemporaryDirectory(prefix="gradgen-probe-") as directory:
        native = Path(directory) / "native_functions.yaml"
        derivatives = Path(directory) / "derivatives.yaml"
        native.write_text(_PROBE_NATIVE, encoding="utf-8")
        derivatives.write_text(_PROBE_DERIVATIVES, encoding="utf-8")
        try:
            model = load.load(native, derivatives, check_names=False)
        except CodegenError as error:
            raise CodegenError(
                "the probe package of codegen/names.py does not load (a bug in the "
                f"generator: update the probe with the rules): {error}"
            ) from None
    # zqa.zqc stands in for the operators Python's `**` calls (pow.Tensor_Scalar: a
    # dunder over a tensor and a number, its tensor overload zqa.zqb's fast path). The
    # dunder over two tensors names its arguments as add.Tensor's schema does.
    package = ir.build(
        model,
        load.exported_names("numpy_kernels"),
        load.exported_names("helpers"),
        dunder_operators=("zqa.zqc",),
    )
    texts = emit.render(package, "probe", _unformatted_cache())
    # What the probe's expressions and formulas call is the YAML's choice, not a name
    # of the generator's (unless a template uses it too: then it is found there).
    called = _called_by_probe(model)
    module_level: dict[str, frozenset[str]] = {}
    in_functions: dict[str, frozenset[str]] = {}
    free: dict[str, frozenset[str]] = {}
    for file_name, text in texts.items():
        top, inside, outside = names_in_source(text)
        module_level[file_name] = _mine(top)
        in_functions[file_name] = _mine(inside) - called
        free[file_name] = _mine(outside)
    # The package's submodules are attributes of the package, beside what
    # `from .ops import *` puts there.
    submodules = {Path(f).stem for f in texts if f != "__init__.py"} | {MODULE_NAME}
    module_level["__init__.py"] = (
        module_level.get("__init__.py", frozenset()) | submodules
    )
    return GeneratedNames(module_level, in_functions, free)


# Builtins: a module-level name of a generated file that is a builtin hides it from
# every function of that file; `generated_names()` lists those the functions read.
BUILTINS = frozenset(n for n in dir(builtins) if not n.startswith("_"))


def _where(name: str, files: list[str], in_functions: bool = False) -> str | None:
    """The first generated file whose own names include `name`: its module-level
    names and what its functions read, or (`in_functions`) every name of its
    functions."""
    names = generated_names()
    for file_name in files:
        found = names.in_functions if in_functions else None
        if name in (found[file_name] if found else names.in_file(file_name)):
            return file_name
    return None


def _reason(name: str, file_name: str) -> str:
    """Why `name` is taken in `file_name`, for the error message."""
    if name in generated_names().module_level.get(file_name, ()):
        return f"the generated {file_name} imports or defines '{name}' itself"
    if name in BUILTINS:
        return f"the generated {file_name} calls the builtin '{name}'"
    return f"the functions of the generated {file_name} use '{name}' themselves"


# Where each kind of YAML name becomes a Python name.
_OPERATOR_FILES = ["operators.py", "inplace_or_view.py", "variable_type.py"]
_FUNCTION_FILES = ["ops.py", "functions.py", "__init__.py"]
_METHOD_FILES = ["tensor_methods.py"]
_ALL_FILES = [
    "kernels.py",
    "variable_type.py",
    "inplace_or_view.py",
    "functions.py",
    "ops.py",
    "tensor_methods.py",
    *(f"{module}.py" for module in NAMESPACES),
]


def _single_value_return(function: NativeFunction) -> bool:
    returns = function.schema.returns
    return len(returns) == 1 and not returns[0].type.is_tensor_like()


def _list_return(function: NativeFunction) -> bool:
    returns = function.schema.returns
    return len(returns) == 1 and returns[0].type.is_list_like() is not None


# Names the generator uses only in the code of operators of some shape: reserved only
# for those (PyTorch's own schemas name arguments `input`, `output`, `value`, `out`).
# Each is one of generated_names()' (a test checks it).
CONDITIONAL: dict[str, tuple[Callable[[NativeFunction], bool], str]] = {
    "input": (
        lambda f: f.schema.arguments.self_arg is not None,
        "next to 'self': gradgen.NAME takes 'self' as its argument 'input' (as torch.NAME)",
    ),
    "output": (
        _list_return,
        "in an operator that returns a list: its autograd kernel loops over the list "
        "with that name",
    ),
    "value": (
        _single_value_return,
        "in an operator that returns a non-Tensor: its kernel converts the value "
        "under that name",
    ),
    "out": (
        lambda f: f.schema.name.name.inplace,
        "in an in-place operator: its kernel expression names the memory of self 'out'",
    ),
}


def check_operator_names(
    function: NativeFunction, has_method: bool, has_function: bool
) -> None:
    """Refuse an operator whose names would meet the generator's own (see the module
    docstring); the error names the name, and the generated file that uses it."""
    from .formulas import python_identifier

    names = generated_names()
    for name, files in _derived_names(function, has_method, has_function):
        file_name = _where(name, files)
        if file_name is not None:
            raise CodegenError(
                f"operator name '{function.name}' is reserved: generated code "
                f"would define '{name}', and {_reason(name, file_name)}"
            )
    # Backward functions (functions.py) exist for operators with formulas only: see
    # check_backward_names. An argument `result` is refused with PyTorch's message for
    # those too (load.py); without formulas, the autograd kernel reads its arguments
    # only before it assigns `result`.
    reserved = frozenset().union(
        *(v for k, v in names.in_functions.items() if k != "functions.py")
    ) - {"self", "result"}
    seen: dict[str, str] = {}
    for argument in function.arguments:
        local = python_identifier(argument.name)
        if local in seen:
            raise CodegenError(
                f"argument names '{seen[local]}' and '{argument.name}' are both "
                f"'{local}' in generated code"
            )
        seen[local] = argument.name
        if local in CONDITIONAL:
            applies, why = CONDITIONAL[local]
            if applies(function):
                raise CodegenError(f"argument name '{local}' is reserved {why}")
        elif local in reserved:
            file_name = _where(local, _ALL_FILES, in_functions=True) or "?"
            raise CodegenError(
                f"argument name '{argument.name}' is reserved: "
                f"{_reason(local, file_name)}"
            )
    for output in function.schema.returns:
        if output.name is not None and output.name in reserved - CONDITIONAL.keys():
            file_name = _where(output.name, _ALL_FILES, in_functions=True) or "?"
            raise CodegenError(
                f"return name '{output.name}' is reserved: "
                f"{_reason(output.name, file_name)}"
            )


def _derived_names(
    function: NativeFunction, has_method: bool, has_function: bool
) -> list[tuple[str, list[str]]]:
    """The module-level names generated code defines after the operator, each with
    the generated files that define it."""
    identifier = function.identifier
    derived: list[tuple[str, list[str]]] = []
    if function.composite is None:  # a kernel: functions named after the operator
        derived += [
            (identifier, _OPERATOR_FILES),
            (f"numpy_{identifier}", ["kernels.py"]),
            (f"{identifier}_return", ["kernels.py"]),
        ]
    if has_function and function.namespace is not None:
        derived.append((function.public_name, [f"{function.namespace}.py"]))
        derived.append((function.python_name, ["functions.py"]))
    elif has_function:
        derived.append((function.python_name, _FUNCTION_FILES))
    if has_method:
        derived.append((function.python_name, _METHOD_FILES))
        derived.append((f"_{function.python_name}_overloads", _METHOD_FILES))
    return derived


def check_backward_names(
    function: NativeFunction, formulas: Iterable[object] = ()
) -> None:
    """An operator with derivatives.yaml formulas also gets a Backward function and
    JVPs in functions.py, whose own names (`grad`, `grads`, `any_grad_defined` ...) its
    arguments must not take: `grad` would be the incoming gradient, not the argument.
    An argument named `grad` passes while no formula says `grad` (PyTorch's
    _cdist_backward: its formulas are not_implemented), as nothing is ambiguous."""
    from .formulas import python_identifier

    reserved = generated_names().in_functions.get("functions.py", frozenset())
    says_grad = any(re.search(r"\bgrad\b", str(text)) for text in formulas)
    for argument in function.arguments:
        local = python_identifier(argument.name)
        if local == "grad" and not says_grad:
            continue
        if local != "self" and local in reserved:
            raise CodegenError(
                f"argument name '{argument.name}' is reserved in an operator with "
                "derivatives.yaml formulas: the generated Backward function in "
                f"functions.py uses '{local}' itself"
            )
    for output in function.schema.returns:
        # a saved output is a parameter of the Backward function, named as the output
        if output.name is not None and output.name in reserved - {"result"}:
            raise CodegenError(
                f"return name '{output.name}' is reserved in an operator with "
                "derivatives.yaml formulas: the generated Backward function in "
                f"functions.py uses '{output.name}' itself"
            )
