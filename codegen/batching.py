"""The `batching:` key of a native_functions.yaml entry: how vmap runs the operator
once on a whole batch (gradgen.func.batching_rules holds the rules).

The declaration names a kind of rule; the rule itself is derived from the schema at
run time (which arguments are dims, which are tensors, where `reduction` is):

- ``pointwise``: elementwise; batched arguments broadcast against the others.
- ``dims``: along dim arguments (``int dim``, ``int[1]? dim``, ``dim0``, ``dims``,
  ...), which shift past the batch dimension; the schema must have one.
- ``loss``: a loss with a ``reduction`` argument, run unreduced and reduced per example.
- ``trailing(NAMES)``: works on the last dimensions only, so it runs on the batch as
  it is while only the named Tensor arguments are batched.
- ``contraction``: a matrix product (mm, bmm, mv, dot, addmm, ...) as numpy's batched
  matmul; needs two Tensor arguments.
- ``custom``: a hand-written rule for this operator in gradgen.func.batching_rules
  (``CUSTOM``); gradgen refuses to load when one is missing.

Errors carry the entry's file and line (the caller's ErrorCollector context).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from .errors import CodegenError, did_you_mean, excerpt
from .schema import FunctionSchema

KINDS = ("pointwise", "dims", "loss", "trailing", "contraction", "custom")
# The schema's dim arguments (gradgen.func.batching_rules.DIM_NAMES reads the same).
DIM_NAMES = frozenset(
    {
        "dim",
        "dim0",
        "dim1",
        "dim2",
        "dims",
        "start_dim",
        "end_dim",
        "source",
        "destination",
    }
)
_SYNTAX = re.compile(r"^([a-z]+)(?:\(([^()]*)\))?$")


@dataclass(frozen=True)
class Batching:
    """A checked `batching:` declaration: its kind and (for trailing) the names."""

    kind: str
    names: tuple[str, ...] = ()


def parse_batching(value: Any, schema: FunctionSchema) -> Batching | None:
    """The `batching:` value of an entry, checked against its schema."""
    if value is None:
        return None
    match = _SYNTAX.match(value) if isinstance(value, str) else None
    if match is None:
        raise CodegenError(
            "batching must be one of "
            f"{', '.join(k + '(NAMES)' if k == 'trailing' else k for k in KINDS)}, "
            f"got {excerpt(value)}"
        )
    kind, names_text = match.group(1), match.group(2)
    if kind not in KINDS:
        raise CodegenError(
            f"unknown batching kind '{kind}'" + did_you_mean(kind, KINDS)
        )
    names = tuple(n.strip() for n in (names_text or "").split(",") if n.strip())
    if (kind == "trailing") != bool(names):
        raise CodegenError(
            "batching: trailing(NAMES) names the Tensor arguments that may be batched; "
            f"other kinds take no names, got '{value}'"
        )
    _check_against_schema(kind, names, schema)
    return Batching(kind, names)


def _check_against_schema(
    kind: str, names: tuple[str, ...], schema: FunctionSchema
) -> None:
    arguments = schema.arguments.flat_all
    tensors = [a.name for a in arguments if a.type.is_tensor_like()]
    if kind != "custom" and not tensors:
        raise CodegenError(
            f"batching: {kind} needs a Tensor argument to batch; '{schema.name}' has none"
        )
    if kind == "dims" and not any(a.name in DIM_NAMES for a in arguments):
        raise CodegenError(
            f"batching: dims needs a dim argument ({', '.join(sorted(DIM_NAMES))}); "
            f"'{schema.name}' has none (pointwise or trailing(NAMES)?)"
        )
    if kind == "loss" and not any(a.name == "reduction" for a in arguments):
        raise CodegenError(
            f"batching: loss needs a 'reduction' argument; '{schema.name}' has none"
        )
    if kind == "contraction" and len(tensors) < 2:
        raise CodegenError(
            f"batching: contraction needs two Tensor arguments; '{schema.name}' has "
            f"{len(tensors)}"
        )
    for name in names:
        if name not in tensors:
            raise CodegenError(
                f"batching: trailing({', '.join(names)}) names '{name}', which is not a "
                f"Tensor argument of '{schema.name}'" + did_you_mean(name, tensors)
            )
