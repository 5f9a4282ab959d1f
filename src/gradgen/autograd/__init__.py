"""gradgen.autograd: the entry points of reverse mode, as in torch.autograd.

`backward()` accumulates gradients into the leaves' `.grad`; `grad()` returns them
and never touches `.grad`. Both check and build the root gradients here (PyTorch's
`_make_grads`) and hand the graph to `gradgen.engine.execute`.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import engine

# `name as name`: explicit re-exports (PEP 484) of torch.autograd's public names.
from ..anomaly_mode import (
    detect_anomaly as detect_anomaly,
    is_anomaly_enabled as is_anomaly_enabled,
    set_detect_anomaly as set_detect_anomaly,
)
from . import forward_ad as forward_ad
from .. import anomaly_mode as anomaly_mode, grad_mode as grad_mode
from ._engine_switches import (
    enforce_grad_layout_policy as enforce_grad_layout_policy,
    is_multithreading_enabled as is_multithreading_enabled,
    set_multithreading_enabled as set_multithreading_enabled,
)
from ..grad_mode import (
    enable_grad as enable_grad,
    inference_mode as inference_mode,
    no_grad as no_grad,
    set_grad_enabled as set_grad_enabled,
)
from .function import (
    Function as Function,
    FunctionCtx as FunctionCtx,
    NestedIOFunction as NestedIOFunction,
    once_differentiable as once_differentiable,
)
from .gradcheck import (
    GradcheckError as GradcheckError,
    gradcheck as gradcheck,
    gradgradcheck as gradgradcheck,
)
from . import profiler as profiler
from . import graph as graph
from .variable import Variable as Variable
from ._transform_slots import require_vmap
from ..graph import Edge
from ..tensor import Size, Tensor, make_edge

_TensorOrTensors = Tensor | Sequence[Tensor]

# Node classes that can run a whole `backward()` alone when the engine has nothing to
# add (gradgen.compile's node feeding leaves): class -> runner(node, output,
# retain_graph), which returns False to let the engine run it after all.
RUN_ALONE: dict[type, Callable[[Any, Tensor, bool], bool]] = {}

CREATE_GRAPH_WARNING = (
    "Using backward() with create_graph=True will create a reference cycle between the "
    "parameter and its gradient which can cause a memory leak. We recommend using "
    "autograd.grad when creating the graph to avoid this. If you have to use this "
    "function, make sure to reset the .grad fields of your parameters to None after use "
    "to break the cycle and avoid the leak."
)


def _as_tuple(tensors: _TensorOrTensors | None) -> tuple[Tensor, ...]:
    if tensors is None:
        return ()
    if isinstance(tensors, (list, tuple)):
        return tuple(tensors)
    return (tensors,)  # type: ignore[return-value]  # checked by the caller


def _shape_mismatch(index: int, grad: Tensor, output: Tensor) -> RuntimeError:
    """grad_outputs[index] of `is_grads_batched`: not a batch of the output's shape
    (PyTorch's message shows the shape of one example without its first dimension)."""
    return RuntimeError(
        "If `is_grads_batched=True`, we interpret the first dimension of each "
        "grad_output as the batch dimension. The sizes of the remaining dimensions are "
        "expected to match the shape of corresponding output, but a mismatch was "
        f"detected: grad_output[{index}] has a shape of "
        f"{Size(grad._data.shape[2:])!r} and output[{index}] has a shape of "
        f"{Size(output._data.shape)!r}. If you only want some tensors in `grad_output` "
        "to be considered batched, consider using vmap."
    )


def _make_grads(
    outputs: Sequence[Tensor],
    grads: Sequence[Tensor | None],
    is_grads_batched: bool = False,
) -> list[Tensor | None]:
    """Check the given output gradients, or create ones for scalar outputs; with
    `is_grads_batched` a gradient's first dimension is the batch."""
    new_grads: list[Tensor | None] = []
    for index, (output, grad) in enumerate(zip(outputs, grads)):
        if isinstance(grad, Tensor):
            if is_grads_batched:
                if grad._data.ndim == 0:
                    raise IndexError(
                        "invalid index of a 0-dim tensor. Use `tensor.item()` in Python "
                        "or `tensor.item<T>()` in C++ to convert a 0-dim tensor to a "
                        "number"
                    )
                if grad._data.shape[1:] != output._data.shape:
                    raise _shape_mismatch(index, grad, output)
            elif grad._data.shape != output._data.shape:
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{index}] has a shape of "
                    f"{Size(grad._data.shape)!r} and output[{index}] has a shape of "
                    f"{Size(output._data.shape)!r}."
                )
            if output.is_complex() != grad.is_complex():
                raise RuntimeError(
                    "For complex Tensors, both grad_output and output are required to "
                    "have the same dtype. Mismatch in dtype: grad_output[{i}] has a dtype "
                    "of {g} and output[{i}] has a dtype of {o}.".format(
                        i=index, g=grad.dtype, o=output.dtype
                    )
                )
            new_grads.append(grad)
        elif grad is None:
            if output.requires_grad:
                if output._data.size != 1:
                    raise RuntimeError(
                        "grad can be implicitly created only for scalar outputs"
                    )
                if not output.is_floating_point():
                    raise RuntimeError(
                        "grad can be implicitly created only for real scalar outputs but "
                        f"got {output.dtype}"
                    )
                new_grads.append(Tensor(np.ones_like(output._data)))
            else:
                new_grads.append(None)
        else:
            raise TypeError(
                "gradients can be either Tensors or None, but got "
                f"{type(grad).__name__}"
            )
    return new_grads


def _root_edges(outputs: Sequence[Tensor]) -> list[Edge]:
    edges = []
    for index, output in enumerate(outputs):
        if not output.requires_grad:
            raise RuntimeError(
                f"element {index} of tensors does not require grad and does not have a "
                "grad_fn"
            )
        edges.append(make_edge(output))
    return edges


def _grads_for(
    outputs: tuple[Tensor, ...],
    grad_outputs: _TensorOrTensors | None,
    is_grads_batched: bool = False,
) -> list[Tensor | None]:
    given: tuple[Tensor | None, ...] = (
        (None,) * len(outputs) if grad_outputs is None else _as_tuple(grad_outputs)
    )
    if len(given) != len(outputs):
        raise RuntimeError(f"got {len(outputs)} tensors and {len(given)} gradients")
    return _make_grads(outputs, given, is_grads_batched)


def _run_batched(
    run: Callable[[Sequence[Tensor | None]], list[Tensor | None]],
    grads: list[Tensor | None],
) -> list[Tensor | None]:
    """`run` (one backward pass) under vmap over dimension 0 of the given grads; the
    inputs that get no gradient stay None (PyTorch's allow_none_pass_through)."""
    found: list[bool] = []

    def batched_run(*root_grads: Tensor | None) -> tuple[Tensor, ...]:
        results = run(list(root_grads))
        found[:] = [r is not None for r in results]
        return tuple(r for r in results if r is not None)

    in_dims = tuple(None if g is None else 0 for g in grads)
    batched = iter(require_vmap()(batched_run, in_dims, 0)(*grads))
    return [next(batched) if present else None for present in found]


def _implicit_backward(output: Tensor, node: Any, retain_graph: bool) -> bool:
    """`output.backward()` on a one-element real output with a grad_fn (the common
    case): the root gradient of ones made directly, without `_make_grads`' general
    checks. False (nothing done) when the general path must run, e.g. to raise."""
    data = output._data
    if data.size != 1 or data.dtype.kind not in "fV":
        return False
    scalar = data.dtype.type
    if not data.ndim and scalar in _NUMPY_FLOATS:
        one: Any = scalar(1)  # the engine takes a 0-d gradient as a numpy scalar
    else:
        one = np.full(data.shape, 1, data.dtype)
    if engine.execute_root(node, output._output_nr, one, retain_graph):
        return True
    seed = Tensor(np.asarray(one))
    engine.execute((Edge(node, output._output_nr),), [seed], retain_graph, False)
    return True


_NUMPY_FLOATS = frozenset({np.float16, np.float32, np.float64})
_SCALAR_ONES: dict[Any, Any] = {scalar: scalar(1) for scalar in _NUMPY_FLOATS}


def backward(
    tensors: _TensorOrTensors,
    grad_tensors: _TensorOrTensors | None = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    inputs: _TensorOrTensors | None = None,
) -> None:
    """Accumulate the gradients of `tensors` into the `.grad` of the graph's leaves."""
    if (
        grad_tensors is None
        and inputs is None
        and not create_graph
        and tensors.__class__ is Tensor
    ):
        node = tensors._grad_fn
        if node is not None:
            alone = RUN_ALONE.get(node.__class__)
            if alone is not None and alone(node, tensors, bool(retain_graph)):
                return
            if tensors._base is None:
                data = tensors._data
                # A 0-d float output (W1's): its seed of one as a numpy scalar (one
                # per dtype: they cannot change), to the engine at once
                # (_implicit_backward's first case, one call less).
                one = _SCALAR_ONES.get(data.dtype.type)
                if (
                    one is not None
                    and not data.ndim
                    and engine.execute_root(
                        node, tensors._output_nr, one, bool(retain_graph)
                    )
                ):
                    return
                if _implicit_backward(tensors, node, bool(retain_graph)):
                    return
    outputs = _as_tuple(tensors)
    if inputs is not None and len(_as_tuple(inputs)) == 0:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    if retain_graph is None:
        retain_graph = create_graph
    grads = _grads_for(outputs, grad_tensors)
    roots = _root_edges(outputs)
    if create_graph:
        warnings.warn(CREATE_GRAPH_WARNING, UserWarning, stacklevel=2)
    input_edges = None
    if inputs is not None:
        input_edges = []
        for tensor in _as_tuple(inputs):
            # As PyTorch: every input retains its grad (a no-op for a leaf), so one
            # that does not require grad is refused.
            tensor.retain_grad()
            input_edges.append(make_edge(tensor))
    engine.execute(
        roots,
        grads,
        retain_graph,
        create_graph,
        accumulate_grad=True,
        outputs=input_edges,
    )


def grad(
    outputs: _TensorOrTensors,
    inputs: _TensorOrTensors,
    grad_outputs: _TensorOrTensors | None = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    allow_unused: bool | None = None,
    is_grads_batched: bool = False,
    materialize_grads: bool = False,
) -> tuple[Tensor | None, ...]:
    """The gradients of `outputs` with respect to `inputs`; `.grad` is left alone.

    With `is_grads_batched` the first dimension of every grad_output is a batch: the
    vector-Jacobian products of the whole batch come from one backward pass run under
    vmap (each result gets the batch dimension first)."""
    outputs_ = _as_tuple(outputs)
    inputs_ = _as_tuple(inputs)
    if not inputs_:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    if materialize_grads and allow_unused is False:
        raise ValueError(
            "Expected allow_unused to be True or not passed when materialize_grads=True, "
            "but got: allow_unused=False."
        )
    if allow_unused is None:
        allow_unused = materialize_grads
    if retain_graph is None:
        retain_graph = create_graph
    for tensor in inputs_:
        if not tensor.requires_grad:
            raise RuntimeError(
                "One of the differentiated Tensors does not require grad"
            )
    grads = _grads_for(outputs_, grad_outputs, is_grads_batched)
    roots = _root_edges(outputs_)
    input_edges = [make_edge(tensor) for tensor in inputs_]

    def run(root_grads: Sequence[Tensor | None]) -> list[Tensor | None]:
        return engine.execute(
            roots,
            list(root_grads),
            retain_graph,
            create_graph,
            accumulate_grad=False,
            outputs=input_edges,
        )

    if is_grads_batched:
        results = _run_batched(run, grads)
    else:
        results = run(grads)
    for index, result in enumerate(results):
        if result is None:
            if materialize_grads:
                zeros = Tensor(np.zeros_like(inputs_[index]._data))
                zeros._requires_grad = create_graph
                results[index] = zeros
            elif not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {index} appears to not have been "
                    "used in the graph. Set allow_unused=True if this is the desired "
                    "behavior."
                )
    return tuple(results)
