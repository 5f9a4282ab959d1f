"""Errors of the generator, with where they happened.

Every problem the generator finds in its input is a `CodegenError`. An error knows its
location (file and line of the YAML entry) and the operator it concerns, so the message
a user sees reads ``derivatives.yaml:42: mul.Tensor: no helper named 'pow_backwrd'; did
you mean 'pow_backward'?``.

Errors are collected rather than raised one by one: `ErrorCollector.context()` wraps the
work on one entry, turns a `CodegenError` raised inside it into a recorded error with
the entry's location, and lets the run go on to the next entry, so one run reports every
problem. `ErrorCollector.raise_if_any()` ends the run with all of them.
"""

from __future__ import annotations

import difflib
import reprlib
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

# Errors quote what they complain about, but never more than this many characters of
# it: a value built from YAML can be huge (a list of a million items), and a message
# of 100 MB is itself a failure. A message as a whole is capped too (MESSAGE_LIMIT).
EXCERPT_LIMIT = 120
MESSAGE_LIMIT = 2000


def excerpt(value: object, limit: int = EXCERPT_LIMIT) -> str:
    """A short quotation of `value` for an error message: its repr(), cut in the middle
    to at most about `limit` characters (``'aaaa' ... 'zzzz' (1,234,567 characters)``).

    The repr() of a deeply nested or enormous container is never built in full: it is
    quoted through reprlib, which stops after a few items and a few levels.
    """
    if isinstance(value, str):
        if len(value) <= limit:
            return repr(value)
        half = max(limit // 2 - 10, 8)  # both ends, without repr() of the whole
        return f"{repr(value[:half])[:-1]} ... {repr(value[-half:])[1:]} ({len(value):,} characters)"
    if isinstance(value, (list, tuple, dict, set, frozenset)):
        text = _short_repr(value)
    else:
        try:
            text = repr(value)
        except Exception:  # a value's repr() should not take the error message down
            return f"<{type(value).__name__}>"
    return shorten(text, limit)


def _short_repr(value: object) -> str:
    short = reprlib.Repr()
    short.maxlevel = 3
    short.maxlist = short.maxtuple = short.maxdict = short.maxset = 6
    short.maxstring = short.maxother = 60
    return short.repr(value)


def shorten(text: str, limit: int) -> str:
    """`text`, or its two ends and its length when it is longer than `limit`."""
    if len(text) <= limit:
        return text
    half = max(limit // 2 - 10, 8)
    return f"{text[:half]} ... {text[-half:]} ({len(text):,} characters)"


@dataclass(frozen=True)
class Location:
    """Where an entry stands: a file and a 1-based line (0 when unknown)."""

    file: str
    line: int = 0

    def __str__(self) -> str:
        return f"{self.file}:{self.line}" if self.line else self.file


class CodegenError(Exception):
    """A problem in the generator's input, with its location when known.

    ``str(error)`` is the whole message, location and operator included. `unknown`
    holds the names an error of unknown names is about (`make coverage` counts them).
    """

    def __init__(
        self,
        message: str,
        location: Location | None = None,
        operator: str | None = None,
        unknown: tuple[str, ...] = (),
    ) -> None:
        self.message = shorten(message, MESSAGE_LIMIT)
        self.location = location
        self.operator = operator
        self.unknown = unknown
        super().__init__(self._render())

    def _render(self) -> str:
        prefix = ""
        if self.location is not None:
            prefix += f"{self.location}: "
        if self.operator:
            prefix += f"{self.operator}: "
        return prefix + self.message

    def located(self, location: Location, operator: str | None = None) -> CodegenError:
        """This error with a location (and operator) filled in where it had none."""
        return CodegenError(
            self.message,
            self.location or location,
            self.operator or operator,
            self.unknown,
        )


class CodegenErrors(CodegenError):
    """Several errors found in one run, reported together."""

    def __init__(self, errors: list[CodegenError]) -> None:
        self.errors = errors
        super().__init__("\n".join(str(e) for e in errors))

    def _render(self) -> str:
        return "\n".join(str(e) for e in self.errors)


# The message for input that Python's recursion limit stops (an expression of 10,000
# nested parentheses or terms, a type with thousands of suffixes).
NESTED_TOO_DEEPLY = (
    "too deeply nested or too long to process (Python's recursion limit); split it up"
)


class ErrorCollector:
    """Collects the errors of one run so that all of them are reported at once."""

    def __init__(self) -> None:
        self.errors: list[CodegenError] = []

    @contextmanager
    def context(
        self, location: Location, operator: str | None = None
    ) -> Iterator[None]:
        """Run one entry's work; a CodegenError inside is recorded with `location`."""
        try:
            yield
        except CodegenErrors as many:
            self.errors.extend(e.located(location, operator) for e in many.errors)
        except CodegenError as error:
            self.errors.append(error.located(location, operator))
        except (RecursionError, MemoryError):  # Python's parser gives up with either
            self.errors.append(CodegenError(NESTED_TOO_DEEPLY, location, operator))

    def add(self, error: CodegenError) -> None:
        self.errors.append(error)

    def raise_if_any(self) -> None:
        """Raise what was collected, in file order (as first seen) and line order."""
        if len(self.errors) == 1:
            raise self.errors[0]
        if self.errors:
            files: dict[str, int] = {}
            for error in self.errors:
                files.setdefault(
                    error.location.file if error.location else "", len(files)
                )

            def position(error: CodegenError) -> tuple[int, int]:
                location = error.location
                return (files[location.file], location.line) if location else (0, 0)

            raise CodegenErrors(sorted(self.errors, key=position))


def did_you_mean(word: str, candidates: Iterable[str]) -> str:
    """``"; did you mean 'x'?"`` for the closest candidate, or ``""`` if none is close."""
    close = difflib.get_close_matches(word, sorted(set(candidates)), n=1, cutoff=0.6)
    return f"; did you mean '{close[0]}'?" if close else ""
