"""What vmap's and jacfwd's `randomness` asks of the default generator.

'error' refuses random draws inside the transform, 'different' lets every example draw
its own, 'same' rewinds the generator before every example so that they all draw the
same numbers. A draw is seen as a change of the default generator's state.
"""

from __future__ import annotations

from .. import random

RANDOMNESS_ERROR = (
    "vmap: called random operation while in randomness error mode. Please either use "
    "the 'same' or 'different' randomness flags on vmap or perform the randomness "
    "operation out of vmap"
)


class Randomness:
    """What `randomness` asks of each call: rewind the generator ('same'), or check
    that nothing drew from it ('error')."""

    def __init__(self, randomness: str) -> None:
        if randomness not in ("error", "different", "same"):
            raise RuntimeError(
                "Only allowed values for randomness are 'error', 'different', or "
                f"'same'. Got {randomness}"
            )
        self.mode = randomness
        self.start = random.get_rng_state()

    def before_call(self) -> None:
        if self.mode == "same":
            random.set_rng_state(self.start)

    def drew(self) -> bool:
        """Whether the default generator moved since the start."""
        return bool(
            random.get_rng_state()._data.tobytes() != self.start._data.tobytes()
        )

    def after_call(self) -> None:
        if self.mode == "error" and self.drew():
            raise RuntimeError(RANDOMNESS_ERROR)
