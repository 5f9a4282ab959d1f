"""functional_call and stack_module_state, as torch.func's.

`functional_call(module, tensors, args)` runs `module` with some of its parameters and
buffers replaced by the given tensors (by dotted name) and puts the originals back
afterwards, whatever happens: the module becomes a function of its weights, which the
transforms can differentiate (``grad(lambda p: loss(functional_call(model, p, x)))``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..generated import ops
from ..nn.modules.batchnorm import _BatchNorm
from ..nn.modules.module import Module
from ..tensor import Tensor

_MISSING = object()


def _merge_dicts(dicts: Any) -> dict[str, Tensor]:
    if isinstance(dicts, Mapping):
        return dict(dicts)
    if not isinstance(dicts, (list, tuple)):
        raise ValueError(
            "Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of dicts, "
            f"but got {type(dicts)}"
        )
    if not all(isinstance(d, Mapping) for d in dicts):
        raise ValueError(
            "Expected all elements of parameter_and_buffer_dicts to be dictionaries"
        )
    counts: dict[str, int] = {}
    for d in dicts:
        for key in d:
            counts[key] = counts.get(key, 0) + 1
    repeated = [key for key, count in counts.items() if count > 1]
    if repeated:
        raise ValueError(
            f"{repeated} appeared in multiple dictionaries; behavior of functional call "
            "is ambiguous"
        )
    return {key: value for d in dicts for key, value in d.items()}


Slots = dict[str, tuple[Module, dict[str, Any], str]]


def _slots(module: Module) -> Slots:
    """Every parameter and buffer (None ones left out) by dotted name, a shared one
    under each of its names: the module that holds it, the registry it is in and its
    name there (what named_parameters and named_buffers with remove_duplicate=False
    walk)."""
    found: Slots = {}
    _collect(module, "", found)
    return found


def _collect(module: Module, prefix: str, found: Slots) -> None:
    for registry in (module._parameters, module._buffers):
        if registry:
            for name, member in registry.items():
                if member is not None:
                    found.setdefault(prefix + name, (module, registry, name))
    for name, child in module._modules.items():
        if child is not None:
            if child._modules or child._parameters or child._buffers:
                _collect(child, f"{prefix}{name}.", found)


def _tied_names(slots: Slots) -> dict[str, set[str]]:
    """name -> every name of the same tensor, for the tensors with more than one name."""
    members = {id(registry[leaf]) for _, registry, leaf in slots.values()}
    if len(members) == len(slots):
        return {}  # no tensor under two names (the common case)
    names: dict[int, set[str]] = {}
    for name, (_, registry, leaf) in slots.items():
        member = registry[leaf]
        names.setdefault(id(member), set()).add(name)
    return {name: group for group in names.values() if len(group) > 1 for name in group}


def _untie(slots: Slots, tensors: dict[str, Tensor]) -> dict[str, Tensor]:
    """Give every name of a tied tensor the value given for one of them."""
    tied = _tied_names(slots)
    if not tied:
        return tensors
    given = [name for name in tensors if name in tied]
    untied = dict(tensors)
    for name in given:
        group = tied[name]
        values = {id(tensors[other]) for other in group if other in tensors}
        if len(values) > 1:
            raise ValueError(
                f"functional_call got multiple values for keys {sorted(group)}, which are "
                "tied. Consider using tie_weights=False"
            )
        for other in group:
            untied[other] = tensors[name]
    return untied


def _check_keys(module: Module, tensors: dict[str, Tensor]) -> None:
    known = [name for name, _ in module.named_parameters(remove_duplicate=False)]
    known += [name for name, _ in module.named_buffers(remove_duplicate=False)]
    unexpected = sorted(set(tensors) - set(known))
    missing = sorted(set(known) - set(tensors))
    messages = []
    if unexpected:
        messages.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
    if missing:
        messages.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
    if messages:
        raise RuntimeError(
            "Error(s) in reparametrizing for {}:\n\t{}".format(
                module._get_name(), "\n\t".join(messages)
            )
        )


def _check_plain_attribute(owner: Module, leaf: str) -> None:
    """Only a tensor or None attribute (or a missing one) may be replaced by a
    tensor, as torch.func: not a number, a flag, a submodule or a property."""
    current = getattr(owner, leaf, _MISSING)
    if current is not _MISSING and current is not None:
        if not isinstance(current, Tensor):
            raise TypeError(
                f"attribute `{leaf}`: {current} is not an instance of torch.Tensor"
            )


def _swap(module: Module, slots: Slots, name: str, value: Any) -> Any:
    """Put `value` (or remove it, for _MISSING) at dotted `name`; returns the old one."""
    found = slots.get(name)
    if found is not None:
        owner, registry, leaf = found
        if leaf in registry:
            old = registry[leaf]
            registry[leaf] = value
            return old
    path, _, leaf = name.rpartition(".")
    owner = module.get_submodule(path) if path else module
    for registry in (owner._parameters, owner._buffers):
        if leaf in registry:
            old = registry[leaf]
            registry[leaf] = value
            return old
    if value is not _MISSING:
        _check_plain_attribute(owner, leaf)
    old = owner.__dict__.get(leaf, _MISSING)
    if value is _MISSING:
        owner.__dict__.pop(leaf, None)
    else:
        owner.__dict__[leaf] = value
    return old


def functional_call(
    module: Module,
    parameter_and_buffer_dicts: Any,
    args: Any = None,
    kwargs: dict[str, Any] | None = None,
    *,
    tie_weights: bool = True,
    strict: bool = False,
) -> Any:
    """``module(*args, **kwargs)`` with the named parameters and buffers replaced by
    the given tensors for the duration of the call."""
    tensors = _merge_dicts(parameter_and_buffer_dicts)
    slots = _slots(module)
    if tie_weights:
        tensors = _untie(slots, tensors)
    if strict:
        _check_keys(module, tensors)
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    originals: list[tuple[str, Any]] = []
    try:
        for name, value in tensors.items():
            found = slots.get(name)
            if found is not None and found[2] in found[1]:
                # `_swap`'s common case inline: a name in its registry
                registry, leaf = found[1], found[2]
                originals.append((name, registry[leaf]))
                registry[leaf] = value
                continue
            originals.append((name, _swap(module, slots, name, value)))
        return module(*args, **(kwargs or {}))
    finally:
        # Whatever happened, every swapped name gets its original back.
        for name, old in reversed(originals):
            found = slots.get(name)
            if found is not None and found[2] in found[1]:
                found[1][found[2]] = old  # `_swap`'s common case inline, as above
                continue
            _swap(module, slots, name, old)


def _stack(name: str, tensors: Sequence[Tensor]) -> Tensor:
    flags = {t.requires_grad for t in tensors}
    if len(flags) > 1:
        raise RuntimeError(
            f"Expected {name} from each model to have the same .requires_grad"
        )
    stacked = ops.stack([t.detach() for t in tensors], 0)
    return stacked.requires_grad_() if flags == {True} else stacked


def stack_module_state(
    models: Sequence[Module],
) -> tuple[dict[str, Tensor], dict[str, Tensor]]:
    """The parameters and buffers of same-class `models`, each stacked along a new
    first dimension (leaves, detached from the models), for `vmap` over models."""
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if len({m.training for m in models}) > 1:
        raise RuntimeError(
            "stack_module_state: Expected all models to have the same training/eval mode."
        )
    if any(type(m) is not type(models[0]) for m in models):
        raise RuntimeError(
            "stack_module_state: Expected all models to be of the same class."
        )
    params = [dict(m.named_parameters()) for m in models]
    buffers = [dict(m.named_buffers()) for m in models]
    stacked_params = {k: _stack(k, [p[k] for p in params]) for k in params[0]}
    stacked_buffers = {k: _stack(k, [b[k] for b in buffers]) for k in buffers[0]}
    return stacked_params, stacked_buffers


def replace_all_batch_norm_modules_(root: Module) -> Module:
    """Make every batch norm in `root` use the batch's statistics, without running
    ones (in place; returns `root`), so that vmap over it needs no shared buffers."""
    for module in root.modules():
        if isinstance(module, _BatchNorm):
            module.running_mean = None
            module.running_var = None
            module.num_batches_tracked = None
            module.track_running_stats = False
    return root


__all__ = ["functional_call", "replace_all_batch_norm_modules_", "stack_module_state"]
