"""The operator table's lines, one module per family of native_functions.yaml.

Each family module holds `LINES`: operator name -> `Line`. A new family is a new
module listed in FAMILIES (tests/test_operator_table.py checks that the list matches
the YAML's `# ==== family: NAME ====` headers, and that no operator has two lines).
"""

from __future__ import annotations

from types import ModuleType

from . import (
    activation,
    attention,
    conv,
    elementwise,
    fft,
    indexing,
    linalg,
    loss,
    normalization,
    pooling,
    reduction,
    resampling,
    rnn,
    shape,
    sparse,
    special,
)
from .common import Line

FAMILIES: dict[str, ModuleType] = {
    "shape": shape,
    "elementwise": elementwise,
    "reduction": reduction,
    "indexing": indexing,
    "linalg": linalg,
    "activation": activation,
    "loss": loss,
    "normalization": normalization,
    "sparse": sparse,
    "conv": conv,
    "pooling": pooling,
    "resampling": resampling,
    "rnn": rnn,
    "attention": attention,
    "special": special,
    "fft": fft,
}


def table() -> dict[str, Line]:
    """Every family's lines in one dict; an operator with lines in two families is an
    error naming both."""
    merged: dict[str, Line] = {}
    home: dict[str, str] = {}
    for family, module in FAMILIES.items():
        for name, line in module.LINES.items():
            if name in merged:
                raise ValueError(
                    f"operator {name!r} has a line in {home[name]!r} and in {family!r}"
                )
            merged[name] = line
            home[name] = family
    return merged
