"""Custom autograd Functions: ``gradgen.autograd.Function``, as ``torch.autograd.Function``.

A user writes static ``forward`` and ``backward`` methods on a ``Function`` subclass and
calls ``MyFn.apply(*args)``. What this module guarantees (PyTorch's python_function.cpp
and custom_function.cpp behaviour):

- Every ``Function`` subclass ``MyFn`` gets a Node class ``MyFnBackward`` (a
  `BackwardCFunction`). One instance of it is created per ``apply`` call and is the
  ``ctx`` handed to ``forward``/``setup_context``/``backward``; it becomes the
  ``grad_fn`` of the outputs only when grad mode is on and a Tensor argument requires
  grad ("executable").
- ``forward`` (and ``setup_context``) run under ``no_grad``. Keyword arguments are bound
  to ``forward``'s positional parameters, so every forward argument has a position.
- ``next_edges`` has one entry per *Tensor* argument, in order; non-Tensor arguments get
  no edge. ``needs_input_grad`` has one bool per argument (False for non-Tensors).
- ``_input_metadata`` has one entry per forward output (a placeholder for non-Tensor and
  non-differentiable outputs), so output ``i`` is gradient slot ``i`` of the node.
  Differentiable outputs get ``grad_fn = node``; outputs that are inputs returned as-is
  become views of the input, non-differentiable ones never require grad, and dirty
  (``mark_dirty``) inputs are bumped and rebased onto the node.
- Saved tensors are `SavedVariable`s created after the outputs were wrapped: a saved
  output of this very node is stored without its grad_fn, so node -> saved -> tensor ->
  node never forms a cycle. ``to_save``, ``dirty_tensors`` and ``non_differentiable``
  are dropped at the end of ``apply`` for the same reason. After a backward that does
  not retain the graph, the saved tensors are freed and ``saved_tensors`` raises the
  "backward through the graph a second time" error.
- ``backward`` receives one gradient per forward output (zeros for undefined ones unless
  ``set_materialize_grads(False)``; None for non-Tensor outputs) and returns one entry
  per forward argument; extra trailing Nones are dropped. Shapes and dtypes are then
  checked, reduced and cast by the engine's ``validate_outputs``.
- ``once_differentiable`` runs backward under ``no_grad``; when a graph is being
  recorded its results get an `Error` grad_fn that refuses a second differentiation.
"""

from __future__ import annotations

import functools
import inspect
import warnings
from collections.abc import Callable, Sequence
from contextlib import nullcontext
from typing import Any, TypeVar

import numpy as np

from ..grad_mode import _state as _grad_mode_state
from ..grad_mode import no_grad
from ..graph import ERR_BACKWARD_TWICE, InputMetadata, Node, SavedVariable
from .forward_ad import computing_jvp
from ._function_forward_ad import forward_ad_open, has_tangent, run_jvp
from ._transform_slots import slots
from ..tensor import Tensor
from ..variable_type_utils import as_view, collect_next_edges, set_history

__all__ = [
    "BackwardCFunction",
    "Function",
    "FunctionCtx",
    "FunctionMeta",
    "InplaceFunction",
    "NestedIOFunction",
    "once_differentiable",
]

_F = TypeVar("_F", bound=Callable[..., Any])

ONCE_DIFFERENTIABLE_ERROR = (
    "trying to differentiate twice a function that was marked with "
    "@once_differentiable"
)
DIRTY_NOT_RETURNED_ERROR = (
    "Some elements marked as dirty during the forward method were not returned as "
    "output. The inputs that are modified inplace must all be outputs of the Function."
)
DIRTY_NON_INPUT_WARNING = (
    "ctx.mark_dirty() received a tensor that was not an input. Only input Tensors that "
    "have been mutated should be passed to ctx.mark_dirty()."
)
DIRTY_LEAF_ERROR = (
    "a leaf Variable that requires grad has been used in an in-place operation."
)
SAVED_INPUT_RETURNED_ERROR = (
    "An input that has been returned as-is as output is being saved for backward. This "
    "is not supported if you override setup_context. You should return and save a view "
    "of the input instead, e.g. with x.view_as(x) or setup ctx inside the forward "
    "function itself."
)
DIRTY_VIEW_ERROR = (
    "gradgen does not support ctx.mark_dirty() on an input that is a view of another "
    "Tensor (PyTorch rebases the base's history with CopySlices, which gradgen does for "
    "its own operators but not for custom Functions); clone() the input before passing "
    "it to the Function"
)


def _placeholder_metadata() -> InputMetadata:
    """Metadata of an output that has no gradient (PyTorch's undefined_input)."""
    return ((), None)  # no dtype: the placeholder


class FunctionCtx:
    """What ``forward``/``setup_context`` call on ``ctx`` to prepare the backward."""

    def save_for_backward(self, *tensors: Tensor | None) -> None:
        """Save tensors (or None) for ``backward``, read back with ``saved_tensors``."""
        self.to_save = tensors

    def save_for_forward(self, *tensors: Tensor | None) -> None:
        """Save tensors for ``jvp``, read back there with ``saved_tensors``."""
        for tensor in tensors:
            if not (isinstance(tensor, Tensor) or tensor is None):
                raise AssertionError(
                    "save_for_forward expects all arguments to be tensors; you should "
                    "save non-tensors as attributes on ctx."
                )
        self.saved_for_forward = tensors

    def mark_dirty(self, *args: Tensor) -> None:
        """Declare the inputs ``forward`` modified in place (they must be returned)."""
        self.dirty_tensors = args

    def mark_non_differentiable(self, *args: Tensor) -> None:
        """Declare outputs that never require grad (their gradients arrive as zeros)."""
        self.non_differentiable = args

    def set_materialize_grads(self, value: bool) -> None:
        """Whether undefined output gradients reach ``backward`` as zeros (default)."""
        self.materialize_grads = value


class BackwardCFunction(Node, FunctionCtx):
    """The Node (and ctx) of one ``Function.apply`` call; ``MyFnBackward`` subclasses it.

    Instances have a ``__dict__``, so ``ctx.anything = value`` works.
    """

    _forward_cls: type[Function]

    def __init__(self) -> None:
        super().__init__()
        self.materialize_grads = True
        self.needs_input_grad: tuple[bool, ...] = ()
        self._is_variable_input: tuple[bool, ...] = ()
        # Per forward output: (shape, numpy dtype) for a Tensor, None otherwise.
        self._output_info: list[tuple[tuple[int, ...], np.dtype[Any]] | None] = []
        self._saved_variables: list[SavedVariable | None] = []
        self._has_freed_buffers = False

    # -- saved tensors --------------------------------------------------------------
    @property
    def saved_tensors(self) -> tuple[Tensor | None, ...]:
        """The tensors given to ``save_for_backward``, checked for in-place changes."""
        forward_saved = self.__dict__.get("_forward_saved")
        if forward_saved is not None:  # inside jvp: what save_for_forward saved
            return forward_saved  # type: ignore[no-any-return]
        if self._has_freed_buffers:
            raise RuntimeError(ERR_BACKWARD_TWICE)
        return tuple(
            None if saved is None else saved.unpack(self)
            for saved in self._saved_variables
        )

    @property
    def saved_variables(self) -> tuple[Tensor | None, ...]:
        """Deprecated alias of ``saved_tensors`` (as PyTorch)."""
        warnings.warn(
            "'saved_variables' is deprecated; use 'saved_tensors'",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.saved_tensors

    def release_variables(self) -> None:
        self._saved_variables = []
        self._has_freed_buffers = True

    def __setattr__(self, name: str, value: Any) -> None:
        # The engine calls Node methods (name(), apply(), ...) on this object, so a
        # ctx attribute shadowing one would break backward far from its cause.
        if name in _PROTECTED_ATTRIBUTES:
            raise AttributeError(
                f"attribute '{name}' of '{type(self).__name__}' objects is not "
                "writable: gradgen's autograd engine uses it; store your value on ctx "
                "under another name"
            )
        super().__setattr__(name, value)

    # -- running --------------------------------------------------------------------
    def _user_backward(self) -> Callable[..., Any]:
        forward_cls = self._forward_cls
        backward_fn = forward_cls.backward
        vjp_fn = forward_cls.vjp
        if backward_fn is not Function.backward and vjp_fn is not Function.vjp:
            raise RuntimeError(
                "Implementing both 'backward' and 'vjp' for a custom Function is not "
                "allowed. You should only implement one of them."
            )
        return vjp_fn if vjp_fn is not Function.vjp else backward_fn

    def apply(self, grads: Sequence[Tensor | None]) -> list[Tensor | None]:
        """Call the user's backward; one gradient per Tensor argument of forward."""
        user_fn = self._user_backward()
        grad_outputs = self._materialize(grads)
        if getattr(self._forward_cls, "boxed_grads_call", False):
            result = user_fn(self, list(grad_outputs))
        else:
            result = user_fn(self, *grad_outputs)
        return self._grads_for_edges(result)

    def _materialize(self, grads: Sequence[Tensor | None]) -> list[Tensor | None]:
        inputs = list(grads)
        if not self.materialize_grads:
            return inputs
        for index, grad in enumerate(inputs):
            info = self._output_info[index] if index < len(self._output_info) else None
            if grad is None and info is not None:
                shape, array_dtype = info
                inputs[index] = Tensor(np.zeros(shape, array_dtype))
        return inputs

    def _grads_for_edges(self, result: Any) -> list[Tensor | None]:
        results = result if isinstance(result, tuple) else (result,)
        is_variable_input = self._is_variable_input
        expected = len(is_variable_input)
        if len(results) > expected and all(r is None for r in results[expected:]):
            results = results[:expected]
        if len(results) != expected:
            raise RuntimeError(
                f"function {self.name()} returned an incorrect number of gradients "
                f"(expected {expected}, got {len(results)})"
            )
        grads: list[Tensor | None] = []
        for position, (grad, is_variable) in enumerate(zip(results, is_variable_input)):
            if not is_variable:
                if grad is not None:
                    raise RuntimeError(
                        f"function {self.name()} returned a gradient different than "
                        f"None at position {position + 1}, but the corresponding "
                        "forward input was not a Variable"
                    )
                continue
            if grad is not None and not isinstance(grad, Tensor):
                raise RuntimeError(
                    f"expected Variable or None (got {type(grad).__name__})"
                )
            grads.append(grad)
        return grads


_PROTECTED_ATTRIBUTES = frozenset(
    name
    for name in dir(BackwardCFunction)
    if not name.startswith("__")
    and (
        callable(getattr(BackwardCFunction, name))
        or isinstance(getattr(BackwardCFunction, name), property)
    )
    and name not in FunctionCtx.__dict__
)


class FunctionMeta(type):
    """Gives every Function class its ``<Name>Backward`` Node class."""

    def __init__(
        cls, name: str, bases: tuple[type, ...], attrs: dict[str, Any]
    ) -> None:
        backward_cls = type(
            name + "Backward",
            (BackwardCFunction,),
            {
                "_forward_cls": cls,
                "__module__": attrs.get("__module__", __name__),
                "__qualname__": attrs.get("__qualname__", name) + "Backward",
            },
        )
        cls._backward_cls = backward_cls
        super().__init__(name, bases, attrs)


class Function(metaclass=FunctionMeta):
    """Base class of custom autograd Functions (``torch.autograd.Function``).

    Subclass it with static ``forward(ctx, *args)`` and ``backward(ctx, *grads)`` (or
    ``forward(*args)`` plus ``setup_context(ctx, inputs, output)``) and call
    ``MyFn.apply(*args)``.
    """

    _backward_cls: type[BackwardCFunction]

    # Pass backward the gradients as one mutable list instead of separate arguments.
    boxed_grads_call = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        warnings.warn(
            f"{self.__class__} should not be instantiated. Methods on autograd "
            "functions are all static, so you should invoke them on the class itself. "
            "Instantiating an autograd function will raise an error in a future "
            "version of PyTorch.",
            DeprecationWarning,
            stacklevel=2,
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. "
            "Please use new-style autograd function with static forward method. "
            "(Example: https://pytorch.org/docs/stable/autograd.html#torch.autograd."
            "Function)"
        )

    @staticmethod
    def forward(*args: Any, **kwargs: Any) -> Any:
        """``forward(ctx, *args)``, or ``forward(*args)`` with ``setup_context``."""
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function."
        )

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> Any:
        """Prepare ``ctx`` from the inputs and output (when forward takes no ctx)."""
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        """One gradient per forward output in, one per forward argument out."""
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD."
        )

    vjp = backward

    @staticmethod
    def jvp(ctx: Any, *grad_inputs: Any) -> Any:
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to use "
            "it with forward mode AD."
        )

    # With True, vmap runs forward, setup_context and backward under vmap instead of
    # calling a `vmap` staticmethod (gradgen.func.autograd_function).
    generate_vmap_rule = False

    @staticmethod
    def vmap(info: Any, in_dims: tuple[int | None, ...], *args: Any) -> Any:
        """The Function over a batch: `args` with their batch at `in_dims` (None: not
        batched), `info.batch_size`; returns ``(outputs, out_dims)``."""
        raise NotImplementedError(
            "To use autograd.Function with vmap, you must either override the vmap "
            "staticmethod or set generate_vmap_rule=True."
        )

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        """Run ``forward`` without recording and make its outputs differentiable."""
        uses_setup_context = cls.setup_context is not Function.setup_context
        if uses_setup_context:
            bound = inspect.signature(cls.forward).bind(*args, **kwargs)
            bound.apply_defaults()
            args, kwargs = bound.args, bound.kwargs
            if kwargs:
                raise TypeError(
                    f"forward() got an unexpected keyword argument '{next(iter(kwargs))}'"
                )
        elif kwargs:
            args = _bind_keywords(cls.forward, args, kwargs)
        if slots.transform_active():
            if not uses_setup_context:
                raise RuntimeError(
                    "In order to use an autograd.Function with functorch transforms "
                    "(vmap, grad, jvp, jacrev, ...), it must override the setup_context "
                    "staticmethod. For more details, please see "
                    "https://pytorch.org/docs/main/notes/extending.func.html"
                )
            batched = slots.function_vmap(cls, args) if slots.function_vmap else None
            if batched is not NotImplemented and batched is not None:
                return batched
        return _apply(cls, args, uses_setup_context)


class InplaceFunction(Function):
    """Kept for compatibility, as in PyTorch; use `Function`."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace


NESTED_IO_CALL_ERROR = "'super' object has no attribute '_do_forward'"


def _nested_tensors(value: Any) -> list[Tensor]:
    """The Tensors of nested tuples and lists, in order (None skipped), as the legacy
    NestedIOFunction collects them; any other object is refused by PyTorch's text."""
    if isinstance(value, Tensor):
        return [value]
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return [tensor for item in value for tensor in _nested_tensors(item)]
    raise ValueError(
        "Auto nesting doesn't know how to process an input object of type "
        f"{type(value).__name__}. Accepted types: Tensors, or lists/tuples of them"
    )


class NestedIOFunction(Function):
    """Kept for compatibility, as in PyTorch: the legacy Function whose
    ``forward_extended``/``backward_extended`` take nested tuples of Tensors. PyTorch
    2.x can no longer call one (its base class lost the legacy call path), so calling
    an instance raises PyTorch's AttributeError; write a `Function` with static
    ``forward`` and ``backward`` instead. The bookkeeping methods work as PyTorch's."""

    to_save: tuple[Tensor, ...] | None = None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise AttributeError(NESTED_IO_CALL_ERROR)

    def save_for_backward(self, *args: Any) -> None:
        """Keep `args` (nested tuples and lists of Tensors) for ``saved_tensors``."""
        self.to_save = tuple(_nested_tensors(args))
        self._to_save_nested = args

    @property
    def saved_tensors(self) -> Any:
        """What ``save_for_backward`` was given, nested as it was given."""
        return self._to_save_nested

    def mark_dirty(self, *args: Any, **kwargs: Any) -> None:
        self.dirty_tensors = tuple(_nested_tensors((args, tuple(kwargs.values()))))

    def mark_non_differentiable(self, *args: Any, **kwargs: Any) -> None:
        self.non_differentiable = tuple(_nested_tensors((args, tuple(kwargs.values()))))

    def forward_extended(self, *input: Any) -> Any:
        """The user's forward, on nested Tensors."""
        raise NotImplementedError

    def backward_extended(self, *grad_output: Any) -> Any:
        """The user's backward, on nested gradients."""
        raise NotImplementedError


# -- Function.apply -------------------------------------------------------------------

_MISSING = object()


def _bind_keywords(
    forward: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[Any, ...]:
    """Put keyword arguments in the positions forward's parameters give them.

    As PyTorch's C++ apply: defaults are not filled in, so a gap is an error.
    """
    names: list[str] = []
    parameters = list(inspect.signature(forward).parameters.values())[1:]  # no ctx
    for parameter in parameters:
        if parameter.kind is not inspect.Parameter.POSITIONAL_OR_KEYWORD:
            break
        names.append(parameter.name)
    slots: list[Any] = list(args)
    for name, value in kwargs.items():
        if name not in names:
            raise TypeError(f"forward() got an unexpected keyword argument '{name}'")
        position = names.index(name)
        if position < len(args):
            raise TypeError(f"forward() got multiple values for argument '{name}'")
        slots.extend([_MISSING] * (position + 1 - len(slots)))
        slots[position] = value
    for position, value in enumerate(slots):
        if value is _MISSING:
            raise TypeError(
                f"forward() missing required argument: '{names[position]}' "
                f"(position {position})"
            )
    return tuple(slots)


def _apply(cls: type[Function], args: tuple[Any, ...], uses_setup_context: bool) -> Any:
    node = cls._backward_cls()
    is_variable_input = tuple(isinstance(arg, Tensor) for arg in args)
    input_vars = [arg for arg in args if isinstance(arg, Tensor)]
    node._is_variable_input = is_variable_input
    node.needs_input_grad = tuple(
        isinstance(arg, Tensor) and arg.requires_grad for arg in args
    )
    is_executable = _grad_mode_state.enabled and any(
        tensor.requires_grad for tensor in input_vars
    )
    if is_executable:
        node.set_next_edges(collect_next_edges(*input_vars))
    forward_ad = forward_ad_open()
    with no_grad(), computing_jvp() if forward_ad else nullcontext():
        if uses_setup_context:
            output = cls.forward(*args)
            cls.setup_context(node, args, output)
        else:
            output = cls.forward(node, *args)
    try:
        result = _process_outputs(node, input_vars, output, is_executable)
        if forward_ad and has_tangent(args):
            _forward_mode_ad(node, args, output, result)
        return result
    finally:
        # These may hold the outputs: keeping them would make node <-> output cycles.
        for attribute in (
            "to_save",
            "dirty_tensors",
            "non_differentiable",
            "saved_for_forward",
        ):
            node.__dict__.pop(attribute, None)


def _forward_mode_ad(
    node: BackwardCFunction, args: tuple[Any, ...], output: Any, result: Any
) -> None:
    """Tangents of the outputs from the user's jvp (PyTorch's forward-mode AD of a
    custom Function)."""
    raw = output if isinstance(output, tuple) else (output,)
    wrapped = result if isinstance(output, tuple) else (result,)
    non_differentiable = _tensor_ids(
        node, "non_differentiable", "mark_non_differentiable"
    )
    differentiable = tuple(
        isinstance(value, Tensor)
        and id(value) not in non_differentiable
        and value._data.dtype.kind in "fc"
        for value in raw
    )
    with no_grad():
        run_jvp(node, args, wrapped, differentiable)


def _tensor_ids(
    node: BackwardCFunction, attribute: str, what: str
) -> dict[int, Tensor]:
    """The tensors given to mark_dirty / mark_non_differentiable, by identity."""
    found: dict[int, Tensor] = {}
    for position, value in enumerate(node.__dict__.get(attribute, ())):
        if not isinstance(value, Tensor):
            # PyTorch raises these as RuntimeError (save_for_backward's as TypeError).
            if what == "mark_dirty":
                raise RuntimeError(
                    "mark_dirty can only accept variables, but argument "
                    f"{position} is of type {type(value).__name__}"
                )
            raise RuntimeError(
                "mark_non_differentiable only accepts variable arguments, but got "
                f"{type(value).__name__}"
            )
        found[id(value)] = value
    return found


def _tensors_to_save(
    node: BackwardCFunction, is_executable: bool
) -> list[Tensor | None] | None:
    to_save = node.__dict__.get("to_save")
    if to_save is None:
        return None
    tensors: list[Tensor | None] = []
    for position, value in enumerate(to_save):
        if value is None or isinstance(value, Tensor):
            tensors.append(value)
        elif is_executable:
            raise TypeError(
                "save_for_backward can only save variables, but argument "
                f"{position} is of type {type(value).__name__}"
            )
    return tensors


def _process_outputs(
    node: BackwardCFunction,
    input_vars: list[Tensor],
    output: Any,
    is_executable: bool,
) -> Any:
    unpack_output = not isinstance(output, tuple)
    raw_outputs: tuple[Any, ...] = (output,) if unpack_output else output

    dirty = _tensor_ids(node, "dirty_tensors", "mark_dirty")
    for tensor in dirty.values():
        tensor._counter().version += 1
    non_differentiable = _tensor_ids(
        node, "non_differentiable", "mark_non_differentiable"
    )
    to_save = _tensors_to_save(node, is_executable)
    uses_setup_context = node._forward_cls.setup_context is not Function.setup_context
    saved_ids = (
        {id(t) for t in to_save if t is not None}
        if uses_setup_context and to_save
        else set()
    )
    input_ids = {id(tensor) for tensor in input_vars}
    output_ids = {id(value) for value in raw_outputs if isinstance(value, Tensor)}
    if any(key not in output_ids for key in dirty):
        raise RuntimeError(DIRTY_NOT_RETURNED_ERROR)

    outputs: list[Any] = []
    for index, value in enumerate(raw_outputs):
        if not isinstance(value, Tensor):
            if is_executable:
                node._input_metadata += (_placeholder_metadata(),)
                node._output_info.append(None)
            outputs.append(value)
            continue
        key = id(value)
        is_differentiable = (
            is_executable
            and key not in non_differentiable
            and value._data.dtype.kind in "fc"
        )
        if is_executable:
            if is_differentiable:
                node.add_input_metadata(value)
            else:
                node._input_metadata += (_placeholder_metadata(),)
            node._output_info.append((value._data.shape, value._data.dtype))
        outputs.append(
            _wrap_output(
                node,
                value,
                index,
                is_input=key in input_ids,
                is_modified=key in dirty,
                is_differentiable=is_differentiable,
                is_saved_and_setup_context=key in saved_ids,
                num_outputs=len(raw_outputs),
            )
        )

    if is_executable and to_save is not None:
        node._saved_variables = [
            None if tensor is None else SavedVariable(tensor, tensor._grad_fn is node)
            for tensor in to_save
        ]
    return outputs[0] if unpack_output else tuple(outputs)


def _view_of(tensor: Tensor) -> Tensor:
    """A new tensor over the same data, recorded as a view of `tensor` (no history)."""
    return as_view(tensor, tensor._shallow_copy())


def _wrap_output(
    node: BackwardCFunction,
    var: Tensor,
    output_nr: int,
    *,
    is_input: bool,
    is_modified: bool,
    is_differentiable: bool,
    is_saved_and_setup_context: bool,
    num_outputs: int,
) -> Tensor:
    """Give one Tensor output its history (PyTorch's _process_backward_mode_ad)."""
    if not is_differentiable:
        if not var.requires_grad:
            return _view_of(var) if is_input and not is_modified else var
        if is_input:
            return var.detach()
        if var._base is None:
            var._grad_fn = None  # detach_()
            var._requires_grad = False
        return var
    if is_modified:
        if var._grad_fn is None and var._requires_grad:
            raise RuntimeError(DIRTY_LEAF_ERROR)
        if not is_input:
            warnings.warn(DIRTY_NON_INPUT_WARNING, UserWarning, stacklevel=4)
        if var._base is not None:
            raise NotImplementedError(DIRTY_VIEW_ERROR)
        # rebase_history: the input now holds this node's output.
        var._grad_fn = node
        var._output_nr = output_nr
        return var
    if is_input:
        if is_saved_and_setup_context:
            raise RuntimeError(SAVED_INPUT_RETURNED_ERROR)
        var = _view_of(var)
    var._grad_fn = node
    var._output_nr = output_nr
    return var


# -- once_differentiable ---------------------------------------------------------------


class Error(Node):
    """A grad_fn whose backward always raises (PyTorch's ``Error`` node)."""

    __slots__ = ("msg",)

    def __init__(self, msg: str) -> None:
        super().__init__()
        self.msg = msg

    def apply(self, grads: Sequence[Tensor | None]) -> list[Tensor | None]:
        raise RuntimeError(self.msg)


def _delayed_error(msg: str, values: tuple[Any, ...]) -> tuple[Any, ...]:
    """Aliases of `values` whose grad_fn raises `msg` (PyTorch's DelayedError)."""
    fakes: list[Any] = []
    for value in values:
        if isinstance(value, Tensor):
            value = value.detach()
            value._requires_grad = True
        fakes.append(value)
    node = Error(msg)
    node.set_next_edges(
        collect_next_edges(*(v for v in fakes if isinstance(v, Tensor)))
    )
    results: list[Any] = []
    for value in fakes:
        if isinstance(value, Tensor):
            alias = value._shallow_copy()
            set_history(alias, node)
            results.append(alias)
        else:
            node._input_metadata += (_placeholder_metadata(),)
            results.append(value)
    return tuple(results)


def once_differentiable(fn: _F) -> _F:
    """Decorate a ``backward`` that is not itself differentiable.

    It runs under ``no_grad``; when a graph is being recorded (``create_graph``) and an
    incoming gradient requires grad, its results get a grad_fn that raises PyTorch's
    "trying to differentiate twice" error if anything backpropagates through them.
    """

    @functools.wraps(fn)
    def wrapper(ctx: Any, *args: Any, **kwargs: Any) -> Any:
        with no_grad():
            outputs = fn(ctx, *args, **kwargs)
        if not _grad_mode_state.enabled:
            return outputs
        if not any(isinstance(arg, Tensor) and arg.requires_grad for arg in args):
            return outputs
        as_tuple = outputs if isinstance(outputs, tuple) else (outputs,)
        wrapped = _delayed_error(ONCE_DIFFERENTIABLE_ERROR, as_tuple)
        return wrapped if isinstance(outputs, tuple) else wrapped[0]

    return wrapper  # type: ignore[return-value]  # backward's signature, as F
