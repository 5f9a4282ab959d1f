"""Render the templates, format with black, write only what changed.

One template per generated file. Rendering uses StrictUndefined (a missing value is an
error, never an empty string), and the output is formatted in process with the pinned
black, so regenerating from the same YAML gives byte-identical files. A file is
rewritten only when its content changes.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import black
import jinja2

from .errors import CodegenError
from .ir import PackageIR

_BLACK_MODE = black.Mode(line_length=88)


@dataclass(frozen=True)
class OutputFile:
    name: str
    template: str
    purpose: str


OUTPUT_FILES = (
    OutputFile("__init__.py", "package_init.py.j2", "The generated operators; importing it registers their kernels."),
    OutputFile("operators.py", "operators.py.j2", "One dispatcher entry (OperatorHandle) per operator."),
    OutputFile("kernels.py", "kernels.py.j2", "The NumPy backend: one kernel per operator, from its `numpy:` expression."),
    OutputFile("inplace_or_view.py", "inplace_or_view.py.j2", "ADInplaceOrView kernels: view operators share their input's version counter."),
    OutputFile("functions.py", "functions.py.j2", "One Backward Node per derivatives.yaml entry, with its formulas."),
    OutputFile("variable_type.py", "variable_type.py.j2", "Autograd kernels: record the graph, then redispatch to the kernel."),
    OutputFile("ops.py", "ops.py.j2", "The public functions, gradgen.NAME(...)."),
    OutputFile("tensor_methods.py", "tensor_methods.py.j2", "The Tensor methods, tensor.NAME(...)."),
)


def templates_directory() -> Path:
    """The templates, in a checkout (../templates) or an installed package (./templates)."""
    here = Path(__file__).resolve().parent
    for candidate in (here.parent / "templates", here / "templates"):
        if (candidate / "functions.py.j2").is_file():
            return candidate
    raise CodegenError("cannot find the generator's templates")


def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(templates_directory()),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        autoescape=False,
    )


def render(ir: PackageIR, sources: str) -> dict[str, str]:
    """The content of every generated file, formatted."""
    environment = _environment()
    files = {}
    for output in OUTPUT_FILES:
        text = environment.get_template(output.template).render(
            sources=sources,
            purpose=output.purpose,
            operators=ir.operators,
            backward_nodes=ir.backward_nodes,
            bindings=ir.methods if output.name == "tensor_methods.py" else ir.functions,
            overloaded=(
                ir.overloaded_methods
                if output.name == "tensor_methods.py"
                else ir.overloaded_functions
            ),
            kernel_helpers=ir.kernel_helpers,
            return_types=ir.return_types,
            jvps=ir.jvps,
            formula_helpers=ir.formula_helpers,
            formula_functions=ir.formula_functions,
        )
        try:
            files[output.name] = black.format_str(text, mode=_BLACK_MODE)
        except black.InvalidInput as error:
            raise CodegenError(
                f"the generated {output.name} is not valid Python ({error}); this is a "
                "bug in the generator or its templates"
            ) from None
    return files


def write_changed(out_directory: Path, files: dict[str, str]) -> list[Path]:
    """Write the files whose content differs; return the paths written."""
    out_directory.mkdir(parents=True, exist_ok=True)
    written = []
    for name, content in sorted(files.items()):
        path = out_directory / name
        if path.is_file() and path.read_text(encoding="utf-8") == content:
            continue
        path.write_text(content, encoding="utf-8")
        written.append(path)
    return written


def stale_files(out_directory: Path, files: dict[str, str]) -> list[Path]:
    """The paths whose content would change (for `--check`)."""
    return [
        out_directory / name
        for name, content in sorted(files.items())
        if not (out_directory / name).is_file()
        or (out_directory / name).read_text(encoding="utf-8") != content
    ]
