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
- ``leading(NAME:RANK, ...)``: the named Tensor arguments have RANK dims per sample
  and an optional leading batch dim N (pooling, padding, upsampling, im2col, grid
  sampling): vmap's batch folds into N (an example without N gets the batch as N),
  and a size argument ``input_size`` of RANK + 1 entries gets the folded N too.
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

KINDS = ("pointwise", "dims", "loss", "trailing", "leading", "contraction", "custom")
# The kinds that name Tensor arguments, and how.
NAMED = {"trailing": "NAMES", "leading": "NAME:RANK, ..."}
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
            f"{', '.join(f'{k}({NAMED[k]})' if k in NAMED else k for k in KINDS)}, "
            f"got {excerpt(value)}"
        )
    kind, names_text = match.group(1), match.group(2)
    if kind not in KINDS:
        raise CodegenError(
            f"unknown batching kind '{kind}'" + did_you_mean(kind, KINDS)
        )
    names = tuple(n.strip() for n in (names_text or "").split(",") if n.strip())
    if (kind in NAMED) != bool(names):
        raise CodegenError(
            "batching: trailing(NAMES) names the Tensor arguments that may be batched "
            "(leading(NAME:RANK, ...) too); other kinds take no names, got "
            f"'{value}'"
        )
    if kind == "leading":
        names = tuple(_leading_name(n, value) for n in names)
    _check_against_schema(kind, tuple(n.split(":")[0] for n in names), schema)
    return Batching(kind, names)


def _leading_name(text: str, value: str) -> str:
    """One NAME:RANK of leading(...), as NAME:RANK with RANK a number 1 to 4."""
    name, colon, rank = (part.strip() for part in text.partition(":"))
    if not colon or not rank.isdigit() or not 1 <= int(rank) <= 4:
        raise CodegenError(
            f"batching: leading(...) takes NAME:RANK items (RANK the dims of one "
            f"sample without the batch dim N, 1 to 4), got '{text}' in '{value}'"
        )
    return f"{name}:{int(rank)}"


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
                f"batching: {kind}({', '.join(names)}) names '{name}', which is not a "
                f"Tensor argument of '{schema.name}'" + did_you_mean(name, tensors)
            )
