"""gradgen.codegen: generate an operator package from native_functions.yaml and
derivatives.yaml.

The stages, each a module with one job:
    schema.py       parse_schema(): PyTorch's schema grammar as frozen dataclasses
                    (+ schema_types.py, schema_defaults.py, schema_arguments.py)
    yaml_loader.py  safe YAML with line numbers and duplicate-key errors
    allowed.py      the explicit lists of what expressions and formulas may call
    expressions.py  parse and check expressions with `ast`; kernel (`numpy:`) expressions
    formulas.py     check derivative formulas; what the Backward node must save
                    (backward_formulas.py, forward_formulas.py: one kind each)
    kernels_module.py  a user's own kernels module (--kernels): its __all__, read with ast
    load.py         validate both files and join them into the Model (model.py);
                    one entry read by native_entries.py / derivative_entries.py
    ir.py           every string the templates print (one ir_*.py builder per file)
    stubs.py        the type stubs (.pyi) of the generated operators and methods
    literals.py     input text as Python: repr() literals, docstrings, comments, names
    emit.py         render the jinja2 templates, black (with a checked cache)
    output.py       replace the output directory at once, only over generated files
The generator never imports the gradgen runtime or the generated package, so it runs
even when generated code is stale or broken.
"""

from __future__ import annotations

from pathlib import Path

from .errors import CodegenError, CodegenErrors, Location
from .schema import FunctionSchema, parse_schema

__all__ = [
    "CodegenError",
    "CodegenErrors",
    "Location",
    "FunctionSchema",
    "parse_schema",
    "generate",
]


def generate(
    native_functions: Path,
    derivatives: Path,
    out_directory: Path,
    check: bool = False,
    cache: bool = True,
    kernels: Path | None = None,
) -> list[Path]:
    """Generate the package into `out_directory`.

    Returns the files written (with `check`, the files that are stale, nothing written).
    `cache` keeps formatted code in ~/.cache/gradgen-codegen between runs (speed only).
    `kernels` is the user's own kernels module, a Python file whose `__all__` names
    functions that kernel expressions and derivative formulas may call besides
    gradgen's; it is read without being run and copied into the package as
    `user_kernels.py`, which the generated code imports (see kernels_module.py).
    Raises CodegenError (or CodegenErrors with every problem found) on bad input; in that
    case nothing is written. The package is written into a new directory that then
    replaces `out_directory` (see output.py), which must be a directory of generated
    files only (or not exist).
    """
    from . import emit, ir, load, output, stubs
    from .kernels_module import MODULE_NAME, load_kernels_module

    output.read_existing(Path(out_directory))  # a bad --out fails before the work
    user_module = load_kernels_module(Path(kernels)) if kernels is not None else None
    model = load.load(Path(native_functions), Path(derivatives), user_module)
    package = ir.build(
        model, load.exported_names("numpy_kernels"), load.exported_names("helpers")
    )
    # Text, not code: the header prints it through the `docstring` filter (literals.py).
    sources = f"{Path(native_functions).name} and {Path(derivatives).name}"
    if user_module is not None:
        sources = f"{Path(native_functions).name}, {Path(derivatives).name} and {user_module.file_name}"
    black_cache = emit.BlackCache(emit.default_cache_directory() if cache else None)
    files = emit.render(package, sources, black_cache, stubs.build(model))
    if user_module is not None:
        files[f"{MODULE_NAME}.py"] = (
            user_module.source
        )  # verbatim: tracebacks match the original
    existing = output.read_existing(Path(out_directory))
    # Formatted code taken from the cache is checked before it is written or compared.
    checked = files if check else output.changed_names(files, existing)
    files = black_cache.verified(files, checked)
    black_cache.save()
    if check:
        return output.stale_files(Path(out_directory), files, existing)
    return output.write_package(Path(out_directory), files, existing)
