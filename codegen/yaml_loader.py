"""Read a YAML file of operator entries, keeping line numbers.

The files are a list of mappings. The loader is yaml's SafeLoader (no tags that build
Python objects) with these additions: a mapping key that appears twice is an error;
every mapping remembers the line where it and each of its keys start, so that errors
can point at ``file:line``; and the input is bounded. Anchors and aliases (``&a``,
``*a``) are refused (an alias repeats a value without copying it, so a file of a few
hundred bytes can stand for billions of items), and so is nesting deeper than
MAX_DEPTH levels (the files need about four). A file that is not UTF-8 or holds a
control character is an error with its line.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from .errors import CodegenError, Location, excerpt

# How deep lists and mappings may nest (an entry's values are at depth 3).
MAX_DEPTH = 50


@dataclass(frozen=True)
class Entry:
    """One top-level mapping of a YAML file, with the line of each key."""

    values: dict[str, Any]
    location: Location
    key_lines: dict[str, int]

    def location_of(self, key: str) -> Location:
        return Location(self.location.file, self.key_lines.get(key, self.location.line))


class _LineMapping(dict[str, Any]):
    """A dict that also knows the line of its start and of each key."""

    line: int
    key_lines: dict[str, int]


class _StrictLoader(yaml.SafeLoader):
    """SafeLoader that rejects duplicate keys, anchors, aliases and deep nesting, and
    records line numbers."""

    _depth = 0

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        event = self.peek_event()  # type: ignore[no-untyped-call]
        location = Location(self.name, event.start_mark.line + 1)
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None):
            raise CodegenError(
                "YAML anchors and aliases (&name, *name) are not allowed; write the value out",
                location,
            )
        if self._depth >= MAX_DEPTH:
            raise CodegenError(
                f"lists and mappings nested more than {MAX_DEPTH} deep", location
            )
        self._depth += 1
        try:
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> Any:
        mapping = _LineMapping()
        mapping.line = node.start_mark.line + 1
        mapping.key_lines = {}
        for key_node, value_node in node.value:
            key = self.construct_object(key_node, deep=deep)
            line = key_node.start_mark.line + 1
            if not isinstance(key, str):
                raise CodegenError(
                    f"keys must be strings, got {excerpt(key)}",
                    Location(self.name, line),
                )
            if key in mapping:
                raise CodegenError(
                    f"duplicate key '{key}' (first at line {mapping.key_lines[key]})",
                    Location(self.name, line),
                )
            mapping[key] = self.construct_object(value_node, deep=deep)
            mapping.key_lines[key] = line
        return mapping


_StrictLoader.add_constructor(
    yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG,
    _StrictLoader.construct_mapping,
)


def load_entries(path: Path) -> list[Entry]:
    """The top-level list of mappings in `path`, each with its line numbers."""
    name = path.name
    text = read_text(path)
    try:
        loader = _StrictLoader(text)
    except yaml.reader.ReaderError as error:  # the reader checks every character first
        raise _reader_error(error, text, name) from None
    loader.name = name
    try:
        root = loader.get_single_node()
        if root is None:
            return []
        if not isinstance(root, yaml.SequenceNode):
            raise CodegenError(
                "expected a list of entries at the top level",
                Location(name, root.start_mark.line + 1),
            )
        entries = []
        for node in root.value:
            line = node.start_mark.line + 1
            item = loader.construct_object(node, deep=True)
            if not isinstance(item, _LineMapping):
                raise CodegenError(
                    f"expected each entry to be a mapping, got {type(item).__name__}: "
                    f"{excerpt(item)}",
                    Location(name, line),
                )
            entries.append(
                Entry(dict(item), Location(name, line), dict(item.key_lines))
            )
        return entries
    except CodegenError:
        raise
    except yaml.reader.ReaderError as error:
        raise _reader_error(error, text, name) from None
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark
        line = mark.line + 1 if mark is not None else 0
        problem = error.problem or str(error)
        raise CodegenError(f"invalid YAML: {problem}", Location(name, line)) from None
    except yaml.YAMLError as error:
        raise CodegenError(f"invalid YAML: {error}", Location(name)) from None
    except RecursionError:  # MAX_DEPTH keeps well below the limit; this is a backstop
        raise CodegenError("invalid YAML: nested too deeply", Location(name)) from None
    finally:
        loader.dispose()


def read_text(path: Path) -> str:
    """The text of an input file, which must be UTF-8: a CodegenError with the line of
    the first bad byte otherwise, or when the file cannot be read."""
    try:
        data = path.read_bytes()
    except OSError as error:
        raise CodegenError(
            f"cannot read file: {error.strerror}", Location(str(path))
        ) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise CodegenError(
            f"the file is not UTF-8 text (byte 0x{data[error.start]:02x})",
            Location(path.name, line),
        ) from None


def _reader_error(error: yaml.reader.ReaderError, text: str, name: str) -> CodegenError:
    """A character YAML does not allow (a control character), with its line."""
    line = text.count("\n", 0, max(error.position, 0)) + 1
    character = error.character
    code = f"U+{character:04X}" if isinstance(character, int) else excerpt(character)
    return CodegenError(
        f"invalid YAML: the control character {code} is not allowed",
        Location(name, line),
    )
