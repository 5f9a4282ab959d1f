"""What vmap's and jacfwd's `randomness` asks of the default generator.

'error' refuses random draws inside the transform, 'different' lets every example draw
its own, 'same' rewinds the generator before every example so that they all draw the
same numbers. A draw is seen as a change of the default generator's state.

The random operators' batching rules (batching_rules_random.py) draw for the whole
batch at once, as each mode asks, and mark their draws as theirs (`drawing`); vmap
runs the function once per example only when something else drew (`drew_elsewhere`):
a random function that is not an operator (gradgen.rand, ...), a call a rule did not
take, a seed set inside.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .. import random

RANDOMNESS_ERROR = (
    "vmap: called random operation while in randomness error mode. Please either use "
    "the 'same' or 'different' randomness flags on vmap or perform the randomness "
    "operation out of vmap"
)


def _bit_generator() -> Any:
    """The numpy bit generator behind gradgen's default generator."""
    return random.default_generator._generator.bit_generator


class Randomness:
    """What `randomness` asks of each call: rewind the generator ('same'), or check
    that nothing drew from it ('error'). The default generator's state is read as
    its numpy bit generator's (the cheap part of `get_rng_state`: its seed does not
    move when it draws)."""

    def __init__(self, randomness: str) -> None:
        if randomness not in ("error", "different", "same"):
            raise RuntimeError(
                "Only allowed values for randomness are 'error', 'different', or "
                f"'same'. Got {randomness}"
            )
        self.mode = randomness
        self._start = self._mark = _bit_generator().state
        self._seed = random.default_generator.initial_seed()

    def rewind(self) -> None:
        """Put the default generator back where it was at the start."""
        _bit_generator().state = self._mark = self._start
        random.default_generator._initial_seed = self._seed

    def drawing(self, draw: Callable[[], Any]) -> Any:
        """`draw()`, a batching rule's draw, marked as the rule's: unless the generator
        had moved since the last such draw (that move stays seen)."""
        ours = _bit_generator().state == self._mark
        result = draw()
        if ours:
            self._mark = _bit_generator().state
        return result

    def drew_elsewhere(self) -> bool:
        """Whether the default generator moved since the start other than by the
        batching rules' draws (`drawing`)."""
        return bool(
            _bit_generator().state != self._mark
            or random.default_generator.initial_seed() != self._seed
        )

    def before_call(self) -> None:
        if self.mode == "same":
            self.rewind()

    def drew(self) -> bool:
        """Whether the default generator moved since the start."""
        return bool(
            _bit_generator().state != self._start
            or random.default_generator.initial_seed() != self._seed
        )

    def after_call(self) -> None:
        if self.mode == "error" and self.drew():
            raise RuntimeError(RANDOMNESS_ERROR)
