"""torch.nn's Module and a few layers: Linear, ReLU, Tanh, Sigmoid, Sequential and
the CrossEntropyLoss / MSELoss wrappers.

A Module registers what is assigned to its attributes, as PyTorch's does: a
`Parameter` goes to `_parameters`, a `Module` to `_modules`, anything else is a plain
attribute. `parameters()` / `named_parameters()` walk the registrations in assignment
order, depth first, each parameter once.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any, NamedTuple

import numpy as np

import gradgen
from gradgen.factories import rand, zeros, zeros_like
from gradgen.grad_mode import is_grad_enabled, no_grad
from gradgen.tensor import Tensor
from gradgen.variable_type_utils import copy_into, increment_version

from . import functional as F
from .parameter import Parameter

__all__ = [
    "Module",
    "Linear",
    "ReLU",
    "Tanh",
    "Sigmoid",
    "Sequential",
    "CrossEntropyLoss",
    "MSELoss",
]


class Module:
    """Base class of layers and models: subclasses set attributes in `__init__`
    (after `super().__init__()`) and define `forward`."""

    training: bool
    _parameters: dict[str, Parameter | None]
    _modules: dict[str, Module | None]

    def __init__(self) -> None:
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "_parameters", {})
        object.__setattr__(self, "_modules", {})

    # -- registration -----------------------------------------------------------------
    def __setattr__(self, name: str, value: Any) -> None:
        params = self.__dict__.get("_parameters")
        modules = self.__dict__.get("_modules")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError(
                    "cannot assign parameters before Module.__init__() call"
                )
            self._forget(name)
            params[name] = value
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as parameter '{name}' "
                    "(torch.nn.Parameter or None expected)"
                )
            params[name] = None
        elif isinstance(value, Module):
            if modules is None:
                raise AttributeError(
                    "cannot assign module before Module.__init__() call"
                )
            self._forget(name)
            modules[name] = value
        elif modules is not None and name in modules:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{type(value).__name__}' as child module '{name}' "
                    "(torch.nn.Module or None expected)"
                )
            modules[name] = None
        else:
            object.__setattr__(self, name, value)

    def _forget(self, name: str) -> None:
        """Drop `name` from every registry before it is registered again."""
        self.__dict__.pop(name, None)
        self.__dict__["_parameters"].pop(name, None)
        self.__dict__["_modules"].pop(name, None)

    def __getattr__(self, name: str) -> Any:
        # Only called when normal lookup fails: parameters and submodules live in
        # the registries, not in __dict__.
        registries = self.__dict__
        for registry in ("_parameters", "_modules"):
            entries = registries.get(registry)
            if entries is not None and name in entries:
                return entries[name]
        raise AttributeError(
            f"'{type(self).__name__}' object has no attribute '{name}'"
        )

    def __delattr__(self, name: str) -> None:
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a parameter (or a None placeholder, e.g. a bias switched off)."""
        if "_parameters" not in self.__dict__:
            raise AttributeError(
                "cannot assign parameter before Module.__init__() call"
            )
        _check_name(name, "parameter", self, self._parameters)
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{type(param).__name__}' object to parameter '{name}' "
                "(torch.nn.Parameter or None required)"
            )
        self._forget(name)
        self._parameters[name] = param

    def add_module(self, name: str, module: Module | None) -> None:
        """Add a child module (or None)."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{type(module).__name__} is not a Module subclass")
        _check_name(name, "module", self, self._modules)
        self._forget(name)
        self._modules[name] = module

    register_module = add_module

    # -- calling ----------------------------------------------------------------------
    def forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function'
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.forward(*args, **kwargs)

    # -- traversal --------------------------------------------------------------------
    def named_modules(
        self,
        memo: set[int] | None = None,
        prefix: str = "",
        remove_duplicate: bool = True,
    ) -> Iterator[tuple[str, Module]]:
        """This module and all below it, depth first, with dotted names."""
        if memo is None:
            memo = set()
        if remove_duplicate:
            if id(self) in memo:
                return
            memo.add(id(self))
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            child_prefix = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, child_prefix, remove_duplicate)

    def modules(self) -> Iterator[Module]:
        for _, module in self.named_modules():
            yield module

    def named_children(self) -> Iterator[tuple[str, Module]]:
        seen: set[int] = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in seen:
                seen.add(id(module))
                yield name, module

    def children(self) -> Iterator[Module]:
        for _, module in self.named_children():
            yield module

    def named_parameters(
        self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True
    ) -> Iterator[tuple[str, Parameter]]:
        """(dotted name, parameter) pairs in registration order; a parameter shared by
        two modules comes once unless `remove_duplicate` is False."""
        seen: set[int] = set()
        modules = (
            self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
            if recurse
            else iter([(prefix, self)])
        )
        for module_prefix, module in modules:
            for name, param in module._parameters.items():
                if param is None:
                    continue
                if remove_duplicate:
                    if id(param) in seen:
                        continue
                    seen.add(id(param))
                yield module_prefix + ("." if module_prefix else "") + name, param

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    # -- modes and gradients ----------------------------------------------------------
    def train(self, mode: bool = True) -> Module:
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        for module in self.modules():
            object.__setattr__(module, "training", mode)
        return self

    def eval(self) -> Module:
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        for param in self.parameters():
            param.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the parameters' gradients (see `gradgen.optim.Optimizer.zero_grad`)."""
        for param in self.parameters():
            _reset_grad(param, set_to_none)

    # -- devices, dtypes, functions over the tree ------------------------------------
    def apply(self, fn: Any) -> Module:
        """`fn(module)` for every submodule (children first) and then this one."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def to(self, *args: Any, **kwargs: Any) -> Module:
        """PyTorch's Module.to(device=None, dtype=None): the parameters converted in
        place (the same Parameter objects), floating ones only, as PyTorch does."""
        gradgen.zeros(()).to(*args, **kwargs)  # Tensor.to checks devices and arguments
        target = kwargs.get("dtype")
        for argument in args:
            if isinstance(argument, Tensor):
                target = argument.dtype
            elif not isinstance(argument, (str, gradgen.device, bool)):
                target = argument
        if target is not None:
            target = gradgen.dtypes.as_dtype(target)
            for param in self.parameters():
                if param.is_floating_point() or param.is_complex():
                    _convert(param, target)
        return self

    def cpu(self) -> Module:
        return self

    def double(self) -> Module:
        return self.to(gradgen.float64)

    def float(self) -> Module:
        return self.to(gradgen.float32)

    # -- saving and loading -----------------------------------------------------------
    def state_dict(
        self, prefix: str = "", keep_vars: bool = False
    ) -> dict[str, Tensor]:
        """Every parameter by dotted name (detached unless `keep_vars`), in order."""
        return {
            name: param if keep_vars else param.detach()
            for name, param in self.named_parameters(
                prefix=prefix, remove_duplicate=False
            )
        }

    def load_state_dict(self, state_dict: dict[str, Any], strict: bool = True) -> Any:
        """Copy `state_dict`'s values into the parameters of the same names (PyTorch's
        checks and messages); returns (missing_keys, unexpected_keys)."""
        own = dict(self.named_parameters(remove_duplicate=False))
        missing = [name for name in own if name not in state_dict]
        unexpected = [name for name in state_dict if name not in own]
        errors = []
        if strict and missing:
            errors.append(
                "Missing key(s) in state_dict: "
                + ", ".join(f'"{k}"' for k in missing)
                + ". "
            )
        if strict and unexpected:
            errors.append(
                "Unexpected key(s) in state_dict: "
                + ", ".join(f'"{k}"' for k in unexpected)
                + ". "
            )
        for name, param in own.items():
            if name not in state_dict:
                continue
            value = state_dict[name]
            value = value if isinstance(value, Tensor) else gradgen.tensor(value)
            if tuple(value.shape) != tuple(param.shape):
                errors.append(
                    f"size mismatch for {name}: copying a param with shape "
                    f"{_size_text(value.shape)} from checkpoint, the shape in current "
                    f"model is {_size_text(param.shape)}."
                )
                continue
            with no_grad():
                copy_into(param, value.detach().to(param.dtype)._data)
                increment_version(param)
        if errors:
            raise RuntimeError(
                f"Error(s) in loading state_dict for {type(self).__name__}:\n\t"
                + "\n\t".join(errors)
            )
        return _IncompatibleKeys(missing, unexpected)

    # -- printing ---------------------------------------------------------------------
    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        lines = [line for line in self.extra_repr().split("\n") if line]
        for name, module in self._modules.items():
            child = repr(module).replace("\n", "\n  ")
            lines.append(f"({name}): {child}")
        head = type(self).__name__ + "("
        if not self._modules and len(lines) <= 1:
            return head + "".join(lines) + ")"
        return head + "\n  " + "\n  ".join(lines) + "\n)"


def _check_name(name: Any, kind: str, owner: Module, registry: dict[str, Any]) -> None:
    """PyTorch's checks on a name given to register_parameter / add_module."""
    if not isinstance(name, str):
        raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
    if "." in name:
        raise KeyError(f'{kind} name can\'t contain ".", got: {name}')
    if name == "":
        raise KeyError(f'{kind} name can\'t be empty string ""')
    if hasattr(owner, name) and name not in registry:
        raise KeyError(f"attribute '{name}' already exists")


def _reset_grad(param: Tensor, set_to_none: bool) -> None:
    """`param.grad = None`, or its gradient zeroed in place (PyTorch's
    `grad.detach_(); grad.zero_()`; a gradient that has a history is replaced by a
    detached zero tensor instead)."""
    grad = param.grad
    if grad is None:
        return
    if set_to_none:
        param.grad = None
    elif grad.grad_fn is not None:
        param.grad = zeros_like(grad)
    else:
        _overwrite_(grad, 0)


def _overwrite_(tensor: Tensor, values: Any) -> None:
    """`tensor.copy_(values)` outside autograd, as PyTorch writes a parameter being
    initialised (`uniform_` of values drawn by gradgen's generator) or a gradient
    being zeroed: a number or an array broadcast to the tensor, one version bump."""
    if tensor.requires_grad and is_grad_enabled():
        raise RuntimeError(
            "a leaf Variable that requires grad is being used in an in-place operation."
        )
    source = Tensor(np.asarray(values, dtype=tensor._data.dtype))
    with no_grad():
        tensor.copy_(source)  # type: ignore[attr-defined]


# -- layers ----------------------------------------------------------------------------


class Linear(Module):
    """y = x @ weight.T + bias, with weight (out_features, in_features).

    Initialised as PyTorch's: weight and bias uniform in [-1/sqrt(in_features),
    1/sqrt(in_features)] (kaiming_uniform_ with a=sqrt(5)), drawn from gradgen's
    generator, so `gradgen.manual_seed` makes it reproducible.
    """

    in_features: int
    out_features: int
    weight: Parameter
    bias: Parameter | None

    def __init__(
        self, in_features: int, out_features: int, bias: bool = True, dtype: Any = None
    ) -> None:
        super().__init__()
        for name, value in (
            ("in_features", in_features),
            ("out_features", out_features),
        ):
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(
                    f"Linear(): {name} must be an int, got {type(value).__name__}"
                )
            if value < 0:
                raise ValueError(f"Linear(): {name} must be non-negative, got {value}")
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(zeros(out_features, in_features, dtype=dtype))
        if bias:
            self.bias = Parameter(zeros(out_features, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        bound = 1.0 / math.sqrt(self.in_features) if self.in_features > 0 else 0.0
        _uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            _uniform_(self.bias, -bound, bound)

    def forward(self, input: Tensor) -> Tensor:
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (
            f"in_features={self.in_features}, out_features={self.out_features}, "
            f"bias={self.bias is not None}"
        )


def _uniform_(param: Tensor, low: float, high: float) -> None:
    """Fill `param` in place with U(low, high) drawn by `gradgen.rand` (so
    `gradgen.manual_seed` makes it reproducible), as torch.nn.init.uniform_."""
    with no_grad():
        sample = rand(*param.shape, dtype=param.dtype)
        _overwrite_(param, low + (high - low) * sample._data)


class ReLU(Module):
    """max(x, 0) elementwise."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class Tanh(Module):
    """tanh(x) elementwise."""

    def forward(self, input: Tensor) -> Tensor:
        return gradgen.tanh(input)  # type: ignore[attr-defined,no-any-return]


class Sigmoid(Module):
    """1 / (1 + exp(-x)) elementwise."""

    def forward(self, input: Tensor) -> Tensor:
        return gradgen.sigmoid(input)  # type: ignore[attr-defined,no-any-return]


class Sequential(Module):
    """Modules applied one after the other; children are named "0", "1", ..."""

    def __init__(self, *modules: Module) -> None:
        super().__init__()
        for index, module in enumerate(modules):
            self.add_module(str(index), module)

    def forward(self, input: Any) -> Any:
        for module in self._modules.values():
            if module is not None:
                input = module(input)
        return input

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(m for m in self._modules.values() if m is not None)

    def __getitem__(self, index: int | slice) -> Any:
        items = list(self._modules.values())
        if isinstance(index, slice):
            return Sequential(*[m for m in items[index] if m is not None])
        if not -len(items) <= index < len(items):
            raise IndexError(f"index {index} is out of range")
        return items[index]

    def append(self, module: Module) -> Sequential:
        self.add_module(str(len(self)), module)
        return self


# -- losses ----------------------------------------------------------------------------


class CrossEntropyLoss(Module):
    """F.cross_entropy as a module."""

    def __init__(
        self,
        weight: Tensor | None = None,
        ignore_index: int = -100,
        reduction: str = "mean",
        label_smoothing: float = 0.0,
    ) -> None:
        super().__init__()
        self.weight = weight
        self.ignore_index = ignore_index
        self.reduction = reduction
        self.label_smoothing = label_smoothing

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.cross_entropy(
            input,
            target,
            weight=self.weight,
            ignore_index=self.ignore_index,
            reduction=self.reduction,
            label_smoothing=self.label_smoothing,
        )


class MSELoss(Module):
    """F.mse_loss as a module."""

    def __init__(self, reduction: str = "mean") -> None:
        super().__init__()
        self.reduction = reduction

    def forward(self, input: Tensor, target: Tensor) -> Tensor:
        return F.mse_loss(input, target, reduction=self.reduction)


class _IncompatibleKeys(NamedTuple):
    missing_keys: list[str]
    unexpected_keys: list[str]

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return (
            f"_IncompatibleKeys(missing_keys={self.missing_keys}, "
            f"unexpected_keys={self.unexpected_keys})"
        )


def _size_text(shape: Any) -> str:
    return repr(gradgen.Size(shape))


def _convert(param: Tensor, target: Any) -> None:
    """Change a parameter's dtype in place (PyTorch's `param.data = fn(param.data)`)."""
    if param.dtype is not target:
        param.data = param.detach().to(target)
        if param.grad is not None:
            param.grad = param.grad.to(target)


# ---- batch F: activations, losses, normalization, embedding ----

from gradgen.factories import ones, randn  # noqa: E402

__all__ += ["LeakyReLU", "ELU", "Softplus", "Dropout", "LayerNorm", "Embedding"]


class LeakyReLU(Module):
    """x where x > 0, else negative_slope * x."""

    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        inplace_str = ", inplace=True" if self.inplace else ""
        return f"negative_slope={self.negative_slope}{inplace_str}"


class ELU(Module):
    """x where x > 0, else alpha * (exp(x) - 1)."""

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        inplace_str = ", inplace=True" if self.inplace else ""
        return f"alpha={self.alpha}{inplace_str}"


class Softplus(Module):
    """log(1 + exp(beta * x)) / beta, and x where beta * x > threshold."""

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input: Tensor) -> Tensor:
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class Dropout(Module):
    """F.dropout while training (`train()`, the default), the identity after `eval()`."""

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(
                f"dropout probability has to be between 0 and 1, but got {p}"
            )
        self.p = p
        self.inplace = inplace

    def forward(self, input: Tensor) -> Tensor:
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class LayerNorm(Module):
    """F.layer_norm over the last dimensions, `normalized_shape`, with a learnt
    elementwise weight (initialised to ones) and bias (zeros), as PyTorch's."""

    normalized_shape: tuple[int, ...]
    eps: float
    elementwise_affine: bool
    weight: Parameter | None
    bias: Parameter | None

    def __init__(
        self,
        normalized_shape: int | tuple[int, ...] | list[int],
        eps: float = 1e-5,
        elementwise_affine: bool = True,
        bias: bool = True,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(ones(self.normalized_shape, dtype=dtype))
            if bias:
                self.bias = Parameter(zeros(self.normalized_shape, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        with no_grad():
            if self.weight is not None:
                _overwrite_(self.weight, 1)
            if self.bias is not None:
                _overwrite_(self.bias, 0)

    def forward(self, input: Tensor) -> Tensor:
        return F.layer_norm(
            input, self.normalized_shape, self.weight, self.bias, self.eps
        )

    def extra_repr(self) -> str:
        return (
            f"{self.normalized_shape}, eps={self.eps}, "
            f"elementwise_affine={self.elementwise_affine}, "
            f"bias={self.bias is not None}"
        )


class Embedding(Module):
    """A lookup table of `num_embeddings` vectors of size `embedding_dim`, initialised
    from N(0, 1) (gradgen's generator, so gradgen.manual_seed applies), the row
    padding_idx zero (it gets no gradient)."""

    num_embeddings: int
    embedding_dim: int
    padding_idx: int | None
    max_norm: float | None
    norm_type: float
    scale_grad_by_freq: bool
    sparse: bool
    weight: Parameter

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        padding_idx: int | None = None,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        sparse: bool = False,
        _weight: Tensor | None = None,
        _freeze: bool = False,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        if padding_idx is not None:
            if padding_idx > 0:
                if padding_idx >= self.num_embeddings:
                    raise AssertionError("Padding_idx must be within num_embeddings")
            elif padding_idx < 0:
                if padding_idx < -self.num_embeddings:
                    raise AssertionError("Padding_idx must be within num_embeddings")
                padding_idx = self.num_embeddings + padding_idx
        self.padding_idx = padding_idx
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        if _weight is None:
            self.weight = Parameter(
                zeros(num_embeddings, embedding_dim, dtype=dtype),
                requires_grad=not _freeze,
            )
            self.reset_parameters()
        else:
            if list(_weight.shape) != [num_embeddings, embedding_dim]:
                raise AssertionError(
                    "Shape of weight does not match num_embeddings and embedding_dim"
                )
            self.weight = Parameter(_weight, requires_grad=not _freeze)
        self.sparse = sparse

    def reset_parameters(self) -> None:
        with no_grad():
            sample = randn(*self.weight.shape, dtype=self.weight.dtype)
            _overwrite_(self.weight, sample._data)
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self) -> None:
        if self.padding_idx is not None:
            with no_grad():
                values = self.weight._data.copy()
                values[self.padding_idx] = 0
                _overwrite_(self.weight, values)

    def forward(self, input: Tensor) -> Tensor:
        return F.embedding(
            input,
            self.weight,
            self.padding_idx,
            self.max_norm,
            self.norm_type,
            self.scale_grad_by_freq,
            self.sparse,
        )

    def extra_repr(self) -> str:
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        if self.sparse is not False:
            s += ", sparse=True"
        return s

    @classmethod
    def from_pretrained(
        cls,
        embeddings: Tensor,
        freeze: bool = True,
        padding_idx: int | None = None,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        sparse: bool = False,
    ) -> Embedding:
        """An Embedding holding `embeddings` (2-D), frozen unless freeze=False."""
        if embeddings.dim() != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        return cls(
            num_embeddings=rows,
            embedding_dim=cols,
            _weight=embeddings,
            _freeze=freeze,
            padding_idx=padding_idx,
            max_norm=max_norm,
            norm_type=norm_type,
            scale_grad_by_freq=scale_grad_by_freq,
            sparse=sparse,
        )
