"""torch.nn.modules.lazy: LazyModuleMixin, for modules whose parameter shapes come
from their first input (LazyLinear, LazyConv*, LazyBatchNorm*, LazyInstanceNorm*)."""

from __future__ import annotations

from typing import Any

from gradgen.grad_mode import no_grad

from gradgen.tensor import Tensor

from ..parameter import UninitializedTensorMixin, is_lazy
from .module import Module

__all__ = ["LazyModuleMixin"]


def _materialize(entry: Tensor | None, shape: tuple[int, ...]) -> None:
    """Give an uninitialized parameter or buffer of a lazy module its shape."""
    if not isinstance(entry, UninitializedTensorMixin):
        raise AssertionError(f"expected an uninitialized parameter, got {entry!r}")
    entry.materialize(shape)


class LazyModuleMixin:
    """Put before a Module class: the module starts with UninitializedParameters and
    UninitializedBuffers; a forward pre-hook calls `initialize_parameters(*args,
    **kwargs)` on the first call, which materializes them from the input, and then the
    module becomes `cls_to_become` (when set) and the hook goes. `state_dict` keeps
    the uninitialized entries as they are; `load_state_dict` materializes an
    uninitialized entry to the shape of a loaded initialized one."""

    cls_to_become: type[Module] | None = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        module = self._module()
        self._initialize_hook = module.register_forward_pre_hook(
            self._infer_parameters, with_kwargs=True
        )

    def _module(self) -> Module:
        assert isinstance(self, Module), "LazyModuleMixin goes before a Module class"
        return self

    def _save_to_state_dict(
        self, destination: dict[str, Any], prefix: str, keep_vars: bool
    ) -> None:
        for name, value in self._module()._local_state().items():
            keep = keep_vars or is_lazy(value)
            destination[prefix + name] = value if keep else value.detach()

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
        module = self._module()
        for name, own in module._local_state().items():
            loaded = state_dict.get(prefix + name)
            if is_lazy(own) and loaded is not None and not is_lazy(loaded):
                with no_grad():
                    own.materialize(loaded.shape)  # type: ignore[attr-defined]
        super()._load_from_state_dict(  # type: ignore[misc]
            state_dict,
            prefix,
            local_metadata,
            strict,
            missing_keys,
            unexpected_keys,
            error_msgs,
        )

    def initialize_parameters(self, *args: Any, **kwargs: Any) -> None:
        """Materialize the uninitialized parameters and buffers from the input."""
        raise NotImplementedError(
            f"initialize_parameters is not implemented for {type(self).__name__}"
        )

    def has_uninitialized_params(self) -> bool:
        """Whether a parameter or buffer of this module is still uninitialized."""
        module = self._module()
        entries = [*module._parameters.values(), *module._buffers.values()]
        return any(is_lazy(value) for value in entries)

    def _infer_parameters(
        self, module: Any, args: Any, kwargs: dict[str, Any] | None = None
    ) -> None:
        """The forward pre-hook: initialize from the first call's arguments, then
        become the non-lazy class."""
        module.initialize_parameters(*args, **(kwargs or {}))
        if module.has_uninitialized_params():
            raise RuntimeError(
                f"module {module._get_name()} has not been fully initialized"
            )
        module._initialize_hook.remove()
        delattr(module, "_initialize_hook")
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become
