"""torch.nn's containers: Sequential, ModuleList, ModuleDict, ParameterList,
ParameterDict. Their entries are registered as a Module's attributes are (a list's
under the names "0", "1", ...), so parameters, state_dict and repr see them."""

from __future__ import annotations

import warnings
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from gradgen.tensor import Tensor

from ..parameter import Parameter
from .module import Module, _typename

__all__ = [
    "Container",
    "Sequential",
    "ModuleList",
    "ModuleDict",
    "ParameterList",
    "ParameterDict",
]


class Container(Module):
    """The old container (deprecated, FutureWarning): its keyword arguments become
    child modules; Module itself does all it did."""

    def __init__(self, **kwargs: Any) -> None:
        warnings.warn(
            "`nn.Container` is deprecated. All of its functionality is now implemented "
            "in `nn.Module`. Subclass that instead.",
            FutureWarning,
            stacklevel=2,
        )
        super().__init__()
        for key, value in kwargs.items():
            self.add_module(key, value)


def _absolute_index(index: Any, size: int) -> int:
    """`index` (an int, possibly negative) checked against `size`."""
    index = index.__index__()
    if not -size <= index < size:
        raise IndexError(f"index {index} is out of range")
    return index % size if size else index  # type: ignore[no-any-return]


def _pairs(name: str, entries: Any) -> Iterable[tuple[Any, Any]]:
    """The (key, value) pairs of a mapping or an iterable of pairs (for update)."""
    if not isinstance(entries, Iterable):
        label = "ParametersDict" if name == "ParameterDict" else name
        raise TypeError(
            f"{label}.update should be called with an iterable of key/value pairs, "
            f"but got {type(entries).__name__}"
        )
    if isinstance(entries, (Mapping, ModuleDict, ParameterDict)):
        return list(entries.items())
    pairs = []
    for index, pair in enumerate(entries):
        if not isinstance(pair, Iterable):
            raise TypeError(
                f"{name} update sequence element #{index} should be Iterable; is"
                + type(pair).__name__
            )
        pair = tuple(pair)
        if len(pair) != 2:
            raise ValueError(
                f"{name} update sequence element #{index} has length {len(pair)}; "
                "2 is required"
            )
        pairs.append(pair)
    return pairs


class Sequential(Module):
    """Modules applied one after the other; children are named "0", "1", ... or by
    the keys of an OrderedDict given alone."""

    def __init__(self, *modules: Any) -> None:
        super().__init__()
        if len(modules) == 1 and isinstance(modules[0], OrderedDict):
            for key, module in modules[0].items():
                self.add_module(key, module)
        else:
            for index, module in enumerate(modules):
                self.add_module(str(index), module)

    def forward(self, input: Any) -> Any:
        for module in self:
            input = module(input)
        return input

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(m for m in self._modules.values() if m is not None)

    def __getitem__(self, index: int | slice) -> Any:
        items = list(self._modules.items())
        if isinstance(index, slice):
            return type(self)(OrderedDict(items[index]))
        return items[_absolute_index(index, len(items))][1]

    def __setitem__(self, index: int, module: Module) -> None:
        key = list(self._modules)[_absolute_index(index, len(self))]
        setattr(self, key, module)

    def __delitem__(self, index: int | slice) -> None:
        keys = list(self._modules)
        if isinstance(index, slice):
            for key in keys[index]:
                delattr(self, key)
        else:
            delattr(self, keys[_absolute_index(index, len(keys))])
        # Renumbered, as PyTorch's.
        values = list(self._modules.values())
        self._modules.clear()
        self._modules.update((str(i), m) for i, m in enumerate(values))

    def append(self, module: Module) -> Sequential:
        self.add_module(str(len(self)), module)
        return self

    def extend(self, sequential: Iterable[Module]) -> Sequential:
        for module in sequential:
            self.append(module)
        return self

    def insert(self, index: int, module: Module) -> Sequential:
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        size = len(self._modules)
        if not -size <= index <= size:
            raise IndexError(f"Index out of range: {index}")
        if index < 0:
            index += size
        values = list(self._modules.values())
        values.insert(index, module)
        self._modules.clear()
        self._modules.update((str(i), m) for i, m in enumerate(values))
        return self

    def pop(self, key: int | slice) -> Module:
        module: Module = self[key]
        del self[key]
        return module


class ModuleList(Module):
    """A list of modules, registered under "0", "1", ... (no forward of its own)."""

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return type(self)(list(self._modules.values())[index])  # type: ignore[arg-type]
        return self._modules[str(_absolute_index(index, len(self)))]

    def __setitem__(self, index: int, module: Module) -> None:
        setattr(self, str(_absolute_index(index, len(self))), module)

    def __delitem__(self, index: int | slice) -> None:
        if isinstance(index, slice):
            for key in list(self._modules)[index]:
                delattr(self, key)
        else:
            delattr(self, str(_absolute_index(index, len(self))))
        values = list(self._modules.values())
        self._modules.clear()
        self._modules.update((str(i), m) for i, m in enumerate(values))

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())  # type: ignore[arg-type]

    def __iadd__(self, modules: Iterable[Module]) -> ModuleList:
        return self.extend(modules)

    def __add__(self, other: Iterable[Module]) -> ModuleList:
        combined = ModuleList()
        for module in list(self) + list(other):
            combined.append(module)
        return combined

    def append(self, module: Module) -> ModuleList:
        self.add_module(str(len(self)), module)
        return self

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        if not isinstance(modules, Iterable):
            raise TypeError(
                "ModuleList.extend should be called with an iterable, but got "
                + type(modules).__name__
            )
        for module in modules:
            self.append(module)
        return self

    def insert(self, index: int, module: Module) -> None:
        for i in range(len(self._modules), index, -1):
            self._modules[str(i)] = self._modules[str(i - 1)]
        self._modules[str(index)] = module

    def pop(self, key: int | slice) -> Module:
        module: Module = self[key]
        del self[key]
        return module

    def __repr__(self) -> str:
        """Runs of equal modules print once, as "(first-last): n x module"."""
        reprs = [repr(module) for module in self]
        if not reprs:
            return self._get_name() + "()"
        runs: list[list[Any]] = []  # [first index, last index, repr]
        for index, text in enumerate(reprs):
            if runs and runs[-1][2] == text:
                runs[-1][1] = index
            else:
                runs.append([index, index, text])
        lines = []
        for first, last, text in runs:
            label = f"({first})" if first == last else f"({first}-{last})"
            count = "" if first == last else f"{last - first + 1} x "
            lines.append(f"{label}: {count}{text}".replace("\n", "\n  "))
        return self._get_name() + "(\n  " + "\n  ".join(lines) + "\n)"


class ModuleDict(Module):
    """An ordered dict of modules, registered under their keys."""

    def __init__(self, modules: Any = None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]  # type: ignore[return-value]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: object) -> bool:
        return key in self._modules

    def clear(self) -> None:
        self._modules.clear()

    def pop(self, key: str) -> Module:
        module = self[key]
        del self[key]
        return module

    def keys(self) -> Iterable[str]:
        return self._modules.keys()

    def items(self) -> Iterable[tuple[str, Module]]:
        return self._modules.items()  # type: ignore[return-value]

    def values(self) -> Iterable[Module]:
        return self._modules.values()  # type: ignore[return-value]

    def update(self, modules: Any) -> None:
        for key, module in _pairs("ModuleDict", modules):
            self[key] = module


def _as_parameter(value: Any) -> Any:
    """A tensor that is not a Parameter becomes one, as the parameter containers do."""
    if isinstance(value, Tensor) and not isinstance(value, Parameter):
        return Parameter(value)
    return value


def _entry_text(value: Any, by_dtype: bool) -> str:
    """How the parameter containers print one entry: ParameterList names the dtype,
    ParameterDict the legacy tensor type."""
    if isinstance(value, Tensor):
        kind = "Parameter" if isinstance(value, Parameter) else "Tensor"
        size = "x".join(str(n) for n in value.shape)
        what = str(value.dtype) if by_dtype else _typename(value)
        return f"{kind} containing: [{what} of size {size}]"
    return f"Object of type: {type(value).__name__}"


class ParameterList(Module):
    """A list of parameters (tensors become Parameters), registered under "0", "1",
    ...; other objects are kept as plain entries."""

    def __init__(self, values: Iterable[Any] | None = None) -> None:
        super().__init__()
        object.__setattr__(self, "_size", 0)
        if values is not None:
            self += values

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return type(self)([self[i] for i in range(len(self))[index]])
        return getattr(self, str(_absolute_index(index, len(self))))

    def __setitem__(self, index: int, value: Any) -> None:
        setattr(self, str(_absolute_index(index, len(self))), _as_parameter(value))

    def __len__(self) -> int:
        return self._size  # type: ignore[no-any-return]

    def __iter__(self) -> Iterator[Any]:
        return iter(self[i] for i in range(len(self)))

    def __iadd__(self, values: Iterable[Any]) -> ParameterList:
        return self.extend(values)

    def append(self, value: Any) -> ParameterList:
        index = len(self)
        object.__setattr__(self, "_size", index + 1)
        setattr(self, str(index), _as_parameter(value))
        return self

    def extend(self, values: Iterable[Any]) -> ParameterList:
        if not isinstance(values, Iterable) or isinstance(values, Tensor):
            raise TypeError(
                "ParameterList.extend should be called with an iterable, but got "
                + type(values).__name__
            )
        for value in values:
            self.append(value)
        return self

    def extra_repr(self) -> str:
        return "\n".join(
            f"  ({index}): {_entry_text(value, True)}"
            for index, value in enumerate(self)
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("ParameterList should not be called.")


def _key(key: Any) -> str:
    if not isinstance(key, str):
        raise TypeError(
            "Index given to ParameterDict cannot be used as a key as it is not a string "
            f"(type is '{type(key).__name__}'). Open an issue on github if you need "
            "non-string keys."
        )
    return key


class ParameterDict(Module):
    """An ordered dict of parameters (tensors become Parameters), registered under
    their keys; other objects are kept as plain entries."""

    def __init__(self, parameters: Any = None) -> None:
        super().__init__()
        object.__setattr__(self, "_keys", {})
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key: str) -> Any:
        return getattr(self, _key(key))

    def __setitem__(self, key: str, value: Any) -> None:
        self._keys[_key(key)] = None
        setattr(self, key, _as_parameter(value))

    def __delitem__(self, key: str) -> None:
        del self._keys[key]
        delattr(self, key)

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __reversed__(self) -> Iterator[str]:
        return reversed(list(self._keys))  # type: ignore[no-any-return]

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def copy(self) -> ParameterDict:
        return ParameterDict(OrderedDict((k, self[k]) for k in self._keys))

    def setdefault(self, key: str, default: Any = None) -> Any:
        if key not in self:
            self[key] = default
        return self[key]

    def clear(self) -> None:
        for key in list(self._keys):
            del self[key]

    def pop(self, key: str) -> Any:
        value = self[key]
        del self[key]
        return value

    def popitem(self) -> tuple[str, Any]:
        key = list(self._keys)[-1]
        return key, self.pop(key)

    def get(self, key: str, default: Any = None) -> Any:
        return self[key] if key in self else default

    def keys(self) -> Iterable[str]:
        return self._keys.keys()  # type: ignore[no-any-return]

    def items(self) -> Iterable[tuple[str, Any]]:
        return [(k, self[k]) for k in self._keys]

    def values(self) -> Iterable[Any]:
        return [self[k] for k in self._keys]

    def update(self, parameters: Any) -> None:
        for key, value in _pairs("ParameterDict", parameters):
            self[key] = value

    def extra_repr(self) -> str:
        return "\n".join(f"  ({k}): {_entry_text(v, False)}" for k, v in self.items())

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("ParameterDict should not be called.")
