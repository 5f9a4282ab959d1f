"""gradgen.profiler: torch.profiler's entry points over gradgen.autograd.profiler.

`profile(activities=[ProfilerActivity.CPU], record_shapes=...)` records as the autograd
profiler does and adds the methods torch.profiler's class has (`events()`, `step()`).
Only CPU activity exists; schedules and trace handlers are accepted and not run, except
`on_trace_ready`, which is called with the profile when it stops.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Iterable
from typing import Any

from .autograd.profiler import EventList
from .autograd.profiler import profile as _autograd_profile
from .autograd.profiler import record_function as record_function

__all__ = ["ProfilerActivity", "profile", "record_function"]


class ProfilerActivity(enum.Enum):
    """What to profile: gradgen runs on the CPU only, so CPU is the one recorded."""

    CPU = 0
    CUDA = 1


class profile(_autograd_profile):
    """torch.profiler.profile: a context manager recording operator events."""

    def __init__(
        self,
        *,
        activities: Iterable[ProfilerActivity] | None = None,
        schedule: Callable[[int], Any] | None = None,
        on_trace_ready: Callable[[profile], Any] | None = None,
        record_shapes: bool = False,
        profile_memory: bool = False,
        with_stack: bool = False,
        with_flops: bool = False,
        with_modules: bool = False,
    ) -> None:
        del activities, schedule, profile_memory, with_stack, with_flops, with_modules
        super().__init__(record_shapes=record_shapes)
        self.on_trace_ready = on_trace_ready
        self.step_num = 0

    def start(self) -> None:
        self.__enter__()

    def stop(self) -> None:
        self.__exit__(None, None, None)

    def __exit__(self, *exc_info: object) -> None:
        super().__exit__(*exc_info)
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def step(self) -> None:
        """Mark the end of a training step (counted; there is no schedule to advance)."""
        self.step_num += 1

    def events(self) -> EventList:
        return self.function_events
