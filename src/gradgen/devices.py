"""Devices: gradgen computes with numpy, on the CPU, so `cpu` is the only device.

`gradgen.device`, `tensor.device`, `tensor.to(device)`, `tensor.cpu()` and the
`device=` keyword of the factories exist so that PyTorch code written for any device
runs unchanged when that device is the CPU; asking for another device is an error
that says so.
"""

from __future__ import annotations

from typing import Any


class device:  # noqa: N801  (PyTorch's name)
    """A device: `device("cpu")`, `device("cuda", 0)`, `device("cuda:1")`."""

    __slots__ = ("type", "index")

    def __init__(
        self, type: str | device, index: int | None = None
    ) -> None:  # noqa: A002
        if isinstance(type, device):
            self.type: str = type.type
            self.index: int | None = type.index
            return
        if not isinstance(type, str):
            raise TypeError(
                f"device() expected a string, got {type.__class__.__name__}"
            )
        name, colon, number = type.partition(":")
        if colon:
            if index is not None:
                raise RuntimeError(
                    f"type (string) must not include an index because index was passed "
                    f"explicitly: {type}"
                )
            if not number.isdigit():
                raise RuntimeError(f"Invalid device string: '{type}'")
            index = int(number)
        if not name or not name.isidentifier():
            raise RuntimeError(f"Invalid device string: '{type}'")
        self.type = name
        self.index = index

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            other = device(other)
        if not isinstance(other, device):
            return NotImplemented
        return self.type == other.type and self.index == other.index

    def __hash__(self) -> int:
        return hash((self.type, self.index))


CPU = device("cpu")


def check_device(value: Any) -> None:
    """Accept None, "cpu" and the cpu device; refuse every other device clearly."""
    if value is None:
        return
    if not isinstance(value, (str, device)):
        raise TypeError(
            f"expected a device (a string such as 'cpu' or a gradgen.device), got "
            f"{type(value).__name__}"
        )
    if device(value).type != "cpu":
        raise RuntimeError(
            f"gradgen computes with numpy on the CPU: device '{value}' is not available "
            "(use 'cpu')"
        )


class _Cuda:
    """`gradgen.cuda.is_available()` and friends, for code that asks before it uses CUDA."""

    @staticmethod
    def is_available() -> bool:
        return False

    @staticmethod
    def device_count() -> int:
        return 0


cuda = _Cuda()


def get_default_device() -> device:
    """The device factories use when given none: always the CPU."""
    return CPU


def set_default_device(device: Any) -> None:
    """Accept the CPU (or None, the CPU again); any other device is refused, as
    gradgen computes on the CPU only."""
    check_device(device)
