"""A Node's slots as values, for tests that compare nodes built two ways."""

from __future__ import annotations

from typing import Any


def set_slots(node: Any) -> dict[str, Any]:
    """Every slot the node has set, by name (its class's and Node's)."""
    values: dict[str, Any] = {}
    for cls in type(node).__mro__:
        for name in cls.__dict__.get("__slots__", ()):
            if name != "__weakref__" and hasattr(node, name):
                values[name] = getattr(node, name)
    return values
