"""torch.autograd.functional: jacobian, hessian, vjp, jvp, hvp and vhp of a function.

Each runs `func` on fresh aliases of `inputs` (PyTorch's `_grad_preprocess`: a view
when `create_graph` and the input requires grad, else a detached leaf) and
differentiates with `autograd.grad`; `jvp` and `hvp` use the double-backward trick
(the vjp ``u -> J^T u`` is linear in u, so its own vjp with v is J v). Inputs and
outputs are a Tensor or a tuple of Tensors, and the results keep that shape. `strict`
turns "independent of the input" (a gradient that is None) into PyTorch's errors; the
results are detached unless `create_graph`.

This module sits on floor 6 (it uses gradgen.func for the forward-mode Jacobian), so
`autograd/__init__.py` does not import it; `gradgen/__init__.py` does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..autograd import grad as autograd_grad
from ..func.eager_transforms import jvp as forward_jvp
from ..generated import ops
from ..grad_mode import enable_grad, is_grad_enabled, set_grad_enabled
from ..tensor import Tensor

__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]

_STRATEGY_ERROR = (
    'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
    'function has more outputs than inputs, "forward-mode" tends to be more performant. '
    'Otherwise, prefer to use "reverse-mode".'
)


def _as_tuple(
    value: Any, arg_name: str, fn_name: str
) -> tuple[bool, tuple[Tensor, ...]]:
    """Whether `value` was a tuple, and it as a tuple of Tensors."""
    is_tuple = isinstance(value, tuple)
    items = value if is_tuple else (value,)
    for index, item in enumerate(items):
        if not isinstance(item, Tensor):
            where = f"value at index {index}" if is_tuple else f"given {arg_name}"
            raise TypeError(
                f"The {arg_name} given to {fn_name} must be either a Tensor or a tuple of "
                f"Tensors but the {where} has type {type(item)}."
            )
    return is_tuple, items


def _untuple(result: Any, is_tuple: bool) -> Any:
    return result if is_tuple else result[0]


def _preprocess(
    inputs: Sequence[Tensor], create_graph: bool, need_graph: bool
) -> tuple[Tensor, ...]:
    """New tensor objects for `inputs`, told apart from the same tensors captured by
    the function (PyTorch issue 32576)."""
    return tuple(
        (
            x.view_as(x)
            if create_graph and x.requires_grad
            else x.detach().requires_grad_(need_graph)
        )
        for x in inputs
    )


def _postprocess(tensors: Any, create_graph: bool) -> Any:
    if isinstance(tensors, Tensor):
        return tensors if create_graph else tensors.detach()
    return tuple(_postprocess(t, create_graph) for t in tensors)


def _check_v(v: tuple[Tensor, ...], other: tuple[Tensor, ...], is_tuple: bool) -> None:
    if len(v) != len(other):
        if is_tuple:
            raise RuntimeError(
                f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}."
            )
        raise RuntimeError("The given v should contain a single Tensor.")
    for index, (given, ref) in enumerate(zip(v, other)):
        if given.shape != ref.shape:
            prefix = f"Entry {index} in " if is_tuple else ""
            raise RuntimeError(
                f"{prefix}v has invalid size: should be {ref.shape} but got {given.shape}."
            )


_STRICT_MESSAGES = {
    "outputs": "Output {i} of the user-provided function does not require gradients. "
    "The outputs must be computed in a differentiable manner from the input when "
    "running in strict mode.",
    "grad_inputs": "The gradient with respect to input {i} is independent of the inputs "
    "of the user-provided function. This is not allowed in strict mode.",
    "jacobian": "While computing the hessian, found that the jacobian of the "
    "user-provided function with respect to input {i} is independent of the input. This "
    "is not allowed in strict mode. You should ensure that your function is twice "
    "differentiable and that the jacobian depends on the inputs (this would be violated "
    "by a linear function for example).",
    "hessian": "The hessian of the user-provided function with respect to input {i} is "
    "independent of the input. This is not allowed in strict mode. You should ensure "
    "that your function is thrice differentiable and that the hessian depends on the "
    "inputs.",
}


def _check_requires_grad(
    tensors: Sequence[Tensor | None], kind: str, strict: bool
) -> None:
    if not strict:
        return
    for index, tensor in enumerate(tensors):
        if tensor is None or not tensor.requires_grad:
            raise RuntimeError(_STRICT_MESSAGES[kind].format(i=index))


def _grad(
    outputs: Sequence[Tensor],
    inputs: Sequence[Tensor],
    grad_outputs: Sequence[Tensor] | None = None,
    create_graph: bool = False,
    retain_graph: bool | None = None,
) -> tuple[Tensor | None, ...]:
    """autograd.grad over the outputs that require grad (None for every input when
    none does)."""
    given = [None] * len(outputs) if grad_outputs is None else list(grad_outputs)
    pairs = [
        (o, g) for o, g in zip(outputs, given) if o is not None and o.requires_grad
    ]
    if not pairs:
        return (None,) * len(inputs)
    return autograd_grad(
        [o for o, _ in pairs],
        list(inputs),
        [g for _, g in pairs],  # type: ignore[misc]  # None entries: implicit ones
        allow_unused=True,
        create_graph=create_graph,
        retain_graph=retain_graph,
    )


_ZERO_MESSAGES = {
    "back": "The output of the user-provided function is independent of input {i}. "
    "This is not allowed in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} "
    "in the grad_outputs when using the double backward trick to compute forward mode "
    "gradients. This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input "
    "{i}. This is not allowed in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of "
    "entry {i} in the grad_jacobian. This is not allowed in strict mode as it prevents "
    "from using the double backward trick to replace forward mode AD.",
}


def _fill_in_zeros(
    grads: Sequence[Tensor | None],
    refs: Sequence[Tensor],
    strict: bool,
    create_graph: bool,
    stage: str,
) -> tuple[Tensor, ...]:
    filled = []
    for index, (found, ref) in enumerate(zip(grads, refs)):
        if found is None:
            if strict:
                raise RuntimeError(_ZERO_MESSAGES[stage].format(i=index))
            found = Tensor(np.zeros_like(ref._data))
        elif strict and create_graph and not found.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(
                f"The {what} of the user-provided function is independent of input "
                f"{index}. This is not allowed in strict mode when create_graph=True."
            )
        filled.append(found)
    return tuple(filled)


def _prepare_v(
    v: Any, refs: tuple[Tensor, ...], refs_tuple: bool, create_graph: bool, fn_name: str
) -> tuple[Tensor, ...] | None:
    if v is None:
        return None
    _, vs = _as_tuple(v, "v", fn_name)
    vs = _preprocess(vs, create_graph, need_graph=False)
    _check_v(vs, refs, refs_tuple)
    return vs


def _v_for_single_element(v: Any, tensors: tuple[Tensor, ...], message: str) -> None:
    if v is None and (len(tensors) != 1 or tensors[0].numel() != 1):
        raise RuntimeError(message)


def vjp(
    func: Callable[..., Any],
    inputs: Any,
    v: Any = None,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple[Any, Any]:
    """``(func(inputs), v^T J)``: the vector-Jacobian product at `inputs`."""
    with enable_grad():
        inputs_tuple, xs = _as_tuple(inputs, "inputs", "vjp")
        xs = _preprocess(xs, create_graph, need_graph=True)
        outputs_tuple, outs = _as_tuple(
            func(*xs), "outputs of the user-provided function", "vjp"
        )
        _check_requires_grad(outs, "outputs", strict)
        vs = _prepare_v(v, outs, outputs_tuple, create_graph, "vjp")
        _v_for_single_element(
            vs,
            outs,
            "The vector v can only be None if the user-provided function returns a "
            "single Tensor with a single element.",
        )
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grads = _grad(outs, xs, vs, create_graph=create_graph)
        result = _fill_in_zeros(grads, xs, strict, create_graph, "back")
    return (
        _untuple(_postprocess(outs, create_graph), outputs_tuple),
        _untuple(_postprocess(result, create_graph), inputs_tuple),
    )


def jvp(
    func: Callable[..., Any],
    inputs: Any,
    v: Any = None,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple[Any, Any]:
    """``(func(inputs), J v)``: the Jacobian-vector product, by the double-backward
    trick."""
    with enable_grad():
        inputs_tuple, xs = _as_tuple(inputs, "inputs", "jvp")
        xs = _preprocess(xs, create_graph, need_graph=True)
        vs = _prepare_v(v, xs, inputs_tuple, create_graph, "jvp")
        _v_for_single_element(
            vs,
            xs,
            "The vector v can only be None if the input to the user-provided function "
            "is a single Tensor with a single element.",
        )
        outputs_tuple, outs = _as_tuple(
            func(*xs), "outputs of the user-provided function", "jvp"
        )
        _check_requires_grad(outs, "outputs", strict)
        # The backward is linear in these: any finite value works.
        dummies = tuple(Tensor(np.zeros_like(o._data)).requires_grad_() for o in outs)
        grad_inputs = _grad(outs, xs, dummies, create_graph=True)
        _check_requires_grad(grad_inputs, "grad_inputs", strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grads = _grad(grad_inputs, dummies, vs, create_graph=create_graph)  # type: ignore[arg-type]
        result = _fill_in_zeros(grads, outs, strict, create_graph, "back_trick")
    return (
        _untuple(_postprocess(outs, create_graph), outputs_tuple),
        _untuple(_postprocess(result, create_graph), outputs_tuple),
    )


def _reverse_jacobian(
    outs: tuple[Tensor, ...],
    xs: tuple[Tensor, ...],
    create_graph: bool,
    strict: bool,
) -> tuple[tuple[Tensor, ...], ...]:
    """jacobian[i][j] = d outs[i] / d xs[j], one backward pass per output element."""
    blocks = []
    for i, out in enumerate(outs):
        rows: list[list[Tensor]] = [[] for _ in xs]
        flat = out.reshape(-1)
        for k in range(out.numel()):
            grads = _grad((flat[k],), xs, retain_graph=True, create_graph=create_graph)
            for j, (found, x) in enumerate(zip(grads, xs)):
                if found is None:
                    if strict:
                        raise RuntimeError(
                            f"Output {i} of the user-provided function is independent of "
                            f"input {j}. This is not allowed in strict mode."
                        )
                    found = Tensor(np.zeros_like(x._data))
                elif strict and create_graph and not found.requires_grad:
                    raise RuntimeError(
                        "The jacobian of the user-provided function is independent of "
                        f"input {i}. This is not allowed in strict mode when "
                        "create_graph=True."
                    )
                rows[j].append(found)
        blocks.append(
            tuple(
                _stack_rows(row, tuple(out.shape) + tuple(x.shape), x)
                for row, x in zip(rows, xs)
            )
        )
    return tuple(blocks)


def _vectorized_jacobian(
    outs: tuple[Tensor, ...], xs: tuple[Tensor, ...], create_graph: bool
) -> tuple[tuple[Tensor, ...], ...]:
    """The same blocks, each output's rows as one backward pass over the batch of
    basis vectors (``autograd.grad(is_grads_batched=True)``: the formulas run on the
    batch by vmap's batching rules), as PyTorch's vectorized jacobian."""
    blocks = []
    for out in outs:
        count = out.numel()
        shapes = [tuple(out.shape) + tuple(x.shape) for x in xs]
        if not count or not out.requires_grad:
            blocks.append(
                tuple(Tensor(np.zeros(s, x._data.dtype)) for s, x in zip(shapes, xs))
            )
            continue
        basis = np.eye(count, dtype=out._data.dtype).reshape(
            (count,) + tuple(out.shape)
        )
        found = autograd_grad(
            [out],
            list(xs),
            [Tensor(basis)],
            retain_graph=True,
            create_graph=create_graph,
            allow_unused=True,
            is_grads_batched=True,
        )
        blocks.append(
            tuple(
                (Tensor(np.zeros(s, x._data.dtype)) if r is None else r.reshape(s))
                for r, x, s in zip(found, xs, shapes)
            )
        )
    return tuple(blocks)


def _stack_rows(rows: list[Tensor], shape: tuple[int, ...], like: Tensor) -> Tensor:
    if not rows:
        return Tensor(np.zeros(shape, like._data.dtype))
    return ops.stack(rows, 0).reshape(shape)


def _forward_jacobian(
    func: Callable[..., Any], inputs: Any, strict: bool, vectorize: bool
) -> Any:
    if strict:
        raise RuntimeError(
            "gradgen.autograd.functional.jacobian: `strict=True` and "
            '`strategy="forward-mode"` are not supported together (yet). Please either '
            'set `strict=False` or `strategy="reverse-mode"`.'
        )
    inputs_tuple, xs = _as_tuple(inputs, "inputs", "jacobian")
    if not vectorize:
        raise NotImplementedError(
            "Computing Jacobian using forward-AD or forward-over-reverse Hessian "
            "isonly implemented for `vectorize=True`."
        )
    columns: list[list[tuple[Tensor, ...]]] = []
    outputs_tuple = False
    outs: tuple[Tensor, ...] = ()
    for j, x in enumerate(xs):
        basis = np.eye(x.numel(), dtype=x._data.dtype).reshape((-1,) + tuple(x.shape))
        found = []
        for k in range(x.numel()):
            tangents = tuple(
                Tensor(basis[k]) if i == j else Tensor(np.zeros_like(y._data))
                for i, y in enumerate(xs)
            )
            primal, tangent = forward_jvp(func, xs, tangents)
            outputs_tuple, outs = _as_tuple(primal, "outputs", "jacobian")
            found.append(_as_tuple(tangent, "outputs", "jacobian")[1])
        columns.append(found)
    if not any(columns):
        outputs_tuple, outs = _as_tuple(func(*xs), "outputs", "jacobian")
    blocks = tuple(
        tuple(
            _stack_columns([col[i] for col in columns[j]], out, x)
            for j, x in enumerate(xs)
        )
        for i, out in enumerate(outs)
    )
    return _untuple_jacobian(blocks, outputs_tuple, inputs_tuple)


def _stack_columns(columns: list[Tensor], out: Tensor, x: Tensor) -> Tensor:
    shape = tuple(out.shape) + tuple(x.shape)
    if not columns:
        return Tensor(np.zeros(shape, out._data.dtype))
    return ops.stack(columns, -1).reshape(shape)


def _untuple_jacobian(blocks: Any, outputs_tuple: bool, inputs_tuple: bool) -> Any:
    if not inputs_tuple:
        blocks = tuple(row[0] for row in blocks)
    return blocks if outputs_tuple else blocks[0]


def jacobian(
    func: Callable[..., Any],
    inputs: Any,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    strategy: str = "reverse-mode",
) -> Any:
    """The Jacobian of `func` at `inputs`: d output_i / d input_j, shaped
    output_i.shape + input_j.shape, nested as the outputs and inputs are."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(_STRATEGY_ERROR)
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                "gradgen.autograd.functional.jacobian: `create_graph=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please '
                'either set `create_graph=False` or `strategy="reverse-mode"`.'
            )
        return _forward_jacobian(func, inputs, strict, vectorize)
    with enable_grad():
        inputs_tuple, xs = _as_tuple(inputs, "inputs", "jacobian")
        xs = _preprocess(xs, create_graph, need_graph=True)
        outputs_tuple, outs = _as_tuple(
            func(*xs), "outputs of the user-provided function", "jacobian"
        )
        _check_requires_grad(outs, "outputs", strict)
        if vectorize and strict:
            raise RuntimeError(
                "gradgen.autograd.functional.jacobian: `strict=True` and "
                "`vectorized=True` are not supported together. Please either set "
                "`strict=False` or `vectorize=False`."
            )
        if vectorize:
            blocks = _vectorized_jacobian(outs, xs, create_graph)
        else:
            blocks = _reverse_jacobian(outs, xs, create_graph, strict)
        blocks = _postprocess(blocks, create_graph)
        return _untuple_jacobian(blocks, outputs_tuple, inputs_tuple)


def _single_output(out: Any, fn_name: str) -> Tensor:
    if not isinstance(out, Tensor):
        raise RuntimeError(
            f"The function given to {fn_name} should return a single Tensor"
        )
    if out.numel() != 1:
        raise RuntimeError(
            f"The Tensor returned by the function given to {fn_name} should contain a "
            "single element"
        )
    return out


def hessian(
    func: Callable[..., Any],
    inputs: Any,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    outer_jacobian_strategy: str = "reverse-mode",
) -> Any:
    """The Hessian of a function with a single-element output: the Jacobian (by
    `outer_jacobian_strategy`) of its reverse-mode gradient."""
    inputs_tuple, xs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(
            'Expected strategy to be either "forward-mode" or "reverse-mode".'
        )

    def scalar_function(*args: Tensor) -> Tensor:
        out = func(*args)
        _check_requires_grad(
            _as_tuple(out, "outputs of the user-provided function", "hessian")[1],
            "outputs",
            strict,
        )
        return _single_output(out, "hessian").squeeze()

    def gradient(*args: Tensor) -> tuple[Tensor, ...]:
        if outer_jacobian_strategy == "forward-mode":
            args = tuple(a.requires_grad_(True) for a in args)
        found = jacobian(scalar_function, args, create_graph=True)
        _check_requires_grad(found, "jacobian", strict)
        return found  # type: ignore[no-any-return]

    result = jacobian(
        gradient,
        xs,
        create_graph=create_graph,
        strict=strict,
        vectorize=vectorize,
        strategy=outer_jacobian_strategy,
    )
    if not inputs_tuple:
        result = tuple(row[0] for row in result)
    return result if inputs_tuple else result[0]


def _second_order(
    func: Callable[..., Any],
    inputs: Any,
    v: Any,
    create_graph: bool,
    strict: bool,
    fn_name: str,
) -> tuple[
    bool,
    tuple[Tensor, ...],
    bool,
    tuple[Tensor, ...],
    tuple[Tensor, ...] | None,
    tuple[Tensor | None, ...],
]:
    """What vhp and hvp share: the inputs, the output, v and the gradient (with graph)."""
    inputs_tuple, xs = _as_tuple(inputs, "inputs", fn_name)
    xs = _preprocess(xs, create_graph, need_graph=True)
    vs = _prepare_v(v, xs, inputs_tuple, create_graph, fn_name)
    _v_for_single_element(
        vs,
        xs,
        "The vector v can only be None if the input to the user-provided function is a "
        "single Tensor with a single element.",
    )
    out = func(*xs)
    outputs_tuple, outs = _as_tuple(
        out, "outputs of the user-provided function", fn_name
    )
    _check_requires_grad(outs, "outputs", strict)
    if outputs_tuple:
        raise RuntimeError(
            f"The function given to {fn_name} should return a single Tensor"
        )
    _single_output(outs[0], fn_name)
    gradient = _grad(outs, xs, create_graph=True)
    _check_requires_grad(gradient, "jacobian", strict)
    return inputs_tuple, xs, outputs_tuple, outs, vs, gradient


def vhp(
    func: Callable[..., Any],
    inputs: Any,
    v: Any = None,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple[Any, Any]:
    """``(func(inputs), v^T H)``: the vector-Hessian product."""
    with enable_grad():
        inputs_tuple, xs, outputs_tuple, outs, vs, gradient = _second_order(
            func, inputs, v, create_graph, strict, "vhp"
        )
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grads = _grad(gradient, xs, vs, create_graph=create_graph)  # type: ignore[arg-type]
        result = _fill_in_zeros(grads, xs, strict, create_graph, "double_back")
    return (
        _untuple(_postprocess(outs, create_graph), outputs_tuple),
        _untuple(_postprocess(result, create_graph), inputs_tuple),
    )


def hvp(
    func: Callable[..., Any],
    inputs: Any,
    v: Any = None,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple[Any, Any]:
    """``(func(inputs), H v)``: the Hessian-vector product, by the double-backward
    trick."""
    with enable_grad():
        inputs_tuple, xs, outputs_tuple, outs, vs, gradient = _second_order(
            func, inputs, v, create_graph, strict, "hvp"
        )
        dummies = tuple(Tensor(np.zeros_like(x._data)).requires_grad_() for x in xs)
        double_back = _grad(gradient, xs, dummies, create_graph=True)  # type: ignore[arg-type]
        _check_requires_grad(gradient, "hessian", strict)
    with set_grad_enabled(True if create_graph else is_grad_enabled()):
        grads = _grad(double_back, dummies, vs, create_graph=create_graph)  # type: ignore[arg-type]
        result = _fill_in_zeros(grads, xs, strict, create_graph, "double_back_trick")
    return (
        _untuple(_postprocess(outs, create_graph), outputs_tuple),
        _untuple(_postprocess(result, create_graph), inputs_tuple),
    )
