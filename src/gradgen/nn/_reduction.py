"""torch.nn._reduction: a loss's `reduction` string as at::Reduction's int, and the
deprecated size_average / reduce flags as the string they mean."""

from __future__ import annotations

import warnings

from gradgen.dtypes import Reduction

__all__ = ["get_enum", "legacy_get_string"]


def get_enum(reduction: str) -> int:
    """A reduction name as at::Reduction."""
    if reduction == "none":
        return Reduction.NONE
    if reduction == "mean":
        return Reduction.MEAN
    if reduction == "elementwise_mean":
        warnings.warn(
            "reduction='elementwise_mean' is deprecated. Please use reduction='mean' "
            "instead.",
            stacklevel=3,
        )
        return Reduction.MEAN
    if reduction == "sum":
        return Reduction.SUM
    raise ValueError(f"{reduction} is not a valid value for reduction")


def legacy_get_string(size_average: bool | None, reduce: bool | None) -> str:
    """The reduction the deprecated size_average / reduce flags mean (with PyTorch's
    deprecation warning)."""
    if size_average is None:
        size_average = True
    if reduce is None:
        reduce = True
    if size_average and reduce:
        reduction = "mean"
    elif reduce:
        reduction = "sum"
    else:
        reduction = "none"
    warnings.warn(
        "size_average and reduce args will be deprecated, please use "
        f"reduction='{reduction}' instead.",
        stacklevel=3,
    )
    return reduction
