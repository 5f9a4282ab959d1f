"""torch.nn's instance normalization layers: InstanceNorm1d, InstanceNorm2d,
InstanceNorm3d and their lazy forms LazyInstanceNorm1d/2d/3d."""

from __future__ import annotations

import warnings
from typing import Any

from gradgen.tensor import Tensor

from .. import functional as F
from .batchnorm import _dimensions_check, _LazyNormBase, _NormBase

__all__ = [
    "InstanceNorm1d",
    "InstanceNorm2d",
    "InstanceNorm3d",
    "LazyInstanceNorm1d",
    "LazyInstanceNorm2d",
    "LazyInstanceNorm3d",
]


class _InstanceNorm(_NormBase):
    """F.instance_norm: each channel of each sample normalized over its own spatial
    elements. Without affine and track_running_stats by default, as PyTorch's; with
    track_running_stats, evaluation uses the running statistics. Unbatched input (one
    dimension fewer) is normalized as a batch of one."""

    _no_batch_dim: int

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float = 0.1,
        affine: bool = False,
        track_running_stats: bool = False,
        device: Any = None,
        dtype: Any = None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__(
            num_features,
            eps,
            momentum,
            affine,
            track_running_stats,
            device,
            dtype,
            bias=bias,
        )

    def _apply_instance_norm(self, input: Tensor) -> Tensor:
        return F.instance_norm(
            input,
            self.running_mean,
            self.running_var,
            self.weight,
            self.bias,
            self.training or not self.track_running_stats,
            self.momentum if self.momentum is not None else 0.0,
            self.eps,
        )

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        feature_dim = input.dim() - self._no_batch_dim
        if input.shape[feature_dim] != self.num_features:
            if self.affine:
                raise ValueError(
                    f"expected input's size at dim={feature_dim} to match num_features "
                    f"({self.num_features}), but got: {input.shape[feature_dim]}."
                )
            warnings.warn(
                f"input's size at dim={feature_dim} does not match num_features. You "
                "can silence this warning by not passing in num_features, which is not "
                "used because affine=False"
            )
        if input.dim() == self._no_batch_dim:
            return self._apply_instance_norm(input.unsqueeze(0)).squeeze(0)
        return self._apply_instance_norm(input)


class InstanceNorm1d(_InstanceNorm):
    """Instance normalization of (N, C, L) or unbatched (C, L) input."""

    _no_batch_dim = 2
    _check_input_dim = _dimensions_check("InstanceNorm1d", 2, 3)


class InstanceNorm2d(_InstanceNorm):
    """Instance normalization of (N, C, H, W) or unbatched (C, H, W) input."""

    _no_batch_dim = 3
    _check_input_dim = _dimensions_check("InstanceNorm2d", 3, 4)


class InstanceNorm3d(_InstanceNorm):
    """Instance normalization of (N, C, D, H, W) or unbatched (C, D, H, W) input."""

    _no_batch_dim = 4
    _check_input_dim = _dimensions_check("InstanceNorm3d", 4, 5)


class LazyInstanceNorm1d(_LazyNormBase, _InstanceNorm):
    """InstanceNorm1d whose num_features is the size of dimension 1 of its first
    input (as PyTorch's, also for unbatched input); affine and track_running_stats
    by default, as PyTorch's lazy form."""

    cls_to_become = InstanceNorm1d
    _no_batch_dim = 2
    _check_input_dim = _dimensions_check("LazyInstanceNorm1d", 2, 3)


class LazyInstanceNorm2d(_LazyNormBase, _InstanceNorm):
    """InstanceNorm2d whose num_features comes from its first input."""

    cls_to_become = InstanceNorm2d
    _no_batch_dim = 3
    _check_input_dim = _dimensions_check("LazyInstanceNorm2d", 3, 4)


class LazyInstanceNorm3d(_LazyNormBase, _InstanceNorm):
    """InstanceNorm3d whose num_features comes from its first input."""

    cls_to_become = InstanceNorm3d
    _no_batch_dim = 4
    _check_input_dim = _dimensions_check("LazyInstanceNorm3d", 4, 5)
