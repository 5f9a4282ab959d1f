"""torch.nn's batch normalization layers: BatchNorm1d, BatchNorm2d, BatchNorm3d, their
lazy forms LazyBatchNorm1d/2d/3d, SyncBatchNorm (and the bases they share with the instance
normalization layers)."""

from __future__ import annotations

from typing import Any

from gradgen.dtypes import int64
from gradgen.factories import ones, tensor, zeros
from gradgen.grad_mode import no_grad
from gradgen.tensor import Tensor

from .. import functional as F
from .. import init
from ..parameter import Parameter, UninitializedBuffer, UninitializedParameter, is_lazy
from .lazy import LazyModuleMixin, _materialize
from .module import Module

__all__ = [
    "BatchNorm1d",
    "BatchNorm2d",
    "BatchNorm3d",
    "LazyBatchNorm1d",
    "LazyBatchNorm2d",
    "LazyBatchNorm3d",
    "SyncBatchNorm",
]


class _NormBase(Module):
    """num_features channels with an optional learnt weight (ones) and bias (zeros),
    and, with track_running_stats, the buffers running_mean (zeros), running_var
    (ones) and num_batches_tracked (a long 0), as PyTorch's."""

    _version = 2
    num_features: int
    eps: float
    momentum: float | None
    affine: bool
    track_running_stats: bool
    weight: Parameter | None
    bias: Parameter | None
    running_mean: Tensor | None
    running_var: Tensor | None
    num_batches_tracked: Tensor | None

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        device: Any = None,
        dtype: Any = None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = Parameter(ones(num_features, dtype=dtype))
            if bias:
                self.bias = Parameter(zeros(num_features, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", zeros(num_features, dtype=dtype))
            self.register_buffer("running_var", ones(num_features, dtype=dtype))
            self.register_buffer("num_batches_tracked", tensor(0, dtype=int64))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def _load_from_state_dict(
        self,
        state_dict: dict[str, Any],
        prefix: str,
        local_metadata: dict[str, Any],
        strict: bool,
        missing_keys: list[str],
        unexpected_keys: list[str],
        error_msgs: list[str],
    ) -> None:
        # Version 1 (and state dicts without versions) had no num_batches_tracked:
        # keep the module's count rather than report the key missing, as PyTorch.
        version = local_metadata.get("version")
        key = prefix + "num_batches_tracked"
        if (version is None or version < 2) and self.track_running_stats:
            if key not in state_dict:
                count = self.num_batches_tracked
                state_dict[key] = tensor(0, dtype=int64) if count is None else count
        super()._load_from_state_dict(
            state_dict,
            prefix,
            local_metadata,
            strict,
            missing_keys,
            unexpected_keys,
            error_msgs,
        )

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            assert self.running_mean is not None and self.running_var is not None
            assert self.num_batches_tracked is not None
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def _check_input_dim(self, input: Tensor) -> None:
        raise NotImplementedError

    def extra_repr(self) -> str:
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
            f"affine={self.affine}, bias={self.bias is not None}, "
            f"track_running_stats={self.track_running_stats}"
        )


class _BatchNorm(_NormBase):
    """F.batch_norm per channel (dimension 1). In training the batch statistics
    normalize and, with track_running_stats, move the running ones by `momentum` (or,
    with momentum=None, to their cumulative average over the batches seen); in
    evaluation the running statistics normalize (the batch ones without them)."""

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            if self.num_batches_tracked is not None:
                self.num_batches_tracked.add_(1)
                if self.momentum is None:  # the cumulative moving average
                    steps = self.num_batches_tracked.item()
                    assert isinstance(steps, int)
                    factor = 1.0 / steps
        batch_statistics = self.training or (
            self.running_mean is None and self.running_var is None
        )
        use_running = not self.training or self.track_running_stats
        return F.batch_norm(
            input,
            self.running_mean if use_running else None,
            self.running_var if use_running else None,
            self.weight,
            self.bias,
            batch_statistics,
            factor,
            self.eps,
        )


def _dimensions_check(name: str, *allowed: int) -> Any:
    """A _check_input_dim accepting inputs of `allowed` dimensions (PyTorch's text)."""
    expected = " or ".join(f"{n}D" for n in allowed)

    def check(self: Module, input: Tensor) -> None:
        if input.dim() not in allowed:
            raise ValueError(f"expected {expected} input (got {input.dim()}D input)")

    check.__name__ = check.__qualname__ = f"{name}._check_input_dim"
    return check


class BatchNorm1d(_BatchNorm):
    """Batch normalization of (N, C) or (N, C, L) input."""

    _check_input_dim = _dimensions_check("BatchNorm1d", 2, 3)


class BatchNorm2d(_BatchNorm):
    """Batch normalization of (N, C, H, W) input."""

    _check_input_dim = _dimensions_check("BatchNorm2d", 4)


class BatchNorm3d(_BatchNorm):
    """Batch normalization of (N, C, D, H, W) input."""

    _check_input_dim = _dimensions_check("BatchNorm3d", 5)


class _LazyNormBase(LazyModuleMixin, _NormBase):
    """A normalization layer whose num_features is the size of dimension 1 of its
    first input: weight, bias, running_mean and running_var uninitialized until then
    (num_batches_tracked is a long 0 from the start), as PyTorch's."""

    def __init__(
        self,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        device: Any = None,
        dtype: Any = None,
        *,
        bias: bool = True,
    ) -> None:
        super().__init__(0, eps, momentum, False, False, device, dtype, bias=False)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = tensor(0, dtype=int64)

    def reset_parameters(self) -> None:
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input: Tensor) -> None:
        if not self.has_uninitialized_params():
            return
        self.num_features = int(input.shape[1])
        entries = (self.weight, self.bias, self.running_mean, self.running_var)
        with no_grad():
            for entry in entries:
                if is_lazy(entry):
                    _materialize(entry, (self.num_features,))
            self.reset_parameters()


class LazyBatchNorm1d(_LazyNormBase, _BatchNorm):
    """BatchNorm1d whose num_features comes from its first input."""

    cls_to_become = BatchNorm1d
    _check_input_dim = _dimensions_check("LazyBatchNorm1d", 2, 3)


class LazyBatchNorm2d(_LazyNormBase, _BatchNorm):
    """BatchNorm2d whose num_features comes from its first input."""

    cls_to_become = BatchNorm2d
    _check_input_dim = _dimensions_check("LazyBatchNorm2d", 4)


class LazyBatchNorm3d(_LazyNormBase, _BatchNorm):
    """BatchNorm3d whose num_features comes from its first input."""

    cls_to_become = BatchNorm3d
    _check_input_dim = _dimensions_check("LazyBatchNorm3d", 5)


class SyncBatchNorm(_BatchNorm):
    """BatchNorm over (N, C, +) input whose statistics processes would share;
    gradgen runs in one process, so it normalizes as _BatchNorm does (PyTorch's
    fallback when no process group is initialized). `process_group` is kept."""

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = True,
        track_running_stats: bool = True,
        process_group: Any = None,
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
        self.process_group = process_group

    def _check_input_dim(self, input: Tensor) -> None:
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def forward(self, input: Tensor) -> Tensor:
        self._check_input_dim(input)
        if input.size(1) == 0:
            raise ValueError(
                "SyncBatchNorm number of input channels should be non-zero"
            )
        return super().forward(input)

    @classmethod
    def convert_sync_batchnorm(
        cls, module: Module, process_group: Any = None
    ) -> Module:
        """`module` with every BatchNorm*d below it (itself too) replaced by a
        SyncBatchNorm holding the same parameters, buffers and mode."""
        converted = module
        if isinstance(module, _BatchNorm):
            converted = cls(
                module.num_features,
                module.eps,
                module.momentum,
                module.affine,
                module.track_running_stats,
                process_group,
                bias=module.bias is not None,
            )
            if module.affine:
                converted.weight = module.weight
                converted.bias = module.bias
            converted.running_mean = module.running_mean
            converted.running_var = module.running_var
            converted.num_batches_tracked = module.num_batches_tracked
            converted.training = module.training
        for name, child in module.named_children():
            converted.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return converted
