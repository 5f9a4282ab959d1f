"""Read a YAML file of operator entries, keeping line numbers.

The files are a list of mappings. The loader is yaml's SafeLoader (no tags that build
Python objects) with two additions: a mapping key that appears twice is an error, and
every mapping remembers the line where it and each of its keys start, so that errors
can point at ``file:line``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from .errors import CodegenError, Location


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
    """SafeLoader that rejects duplicate keys and records line numbers."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> Any:
        mapping = _LineMapping()
        mapping.line = node.start_mark.line + 1
        mapping.key_lines = {}
        for key_node, value_node in node.value:
            key = self.construct_object(key_node, deep=deep)
            line = key_node.start_mark.line + 1
            if not isinstance(key, str):
                raise CodegenError(
                    f"keys must be strings, got {key!r}",
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
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise CodegenError(f"cannot read file: {error.strerror}", Location(str(path))) from None
    loader = _StrictLoader(text)
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
                    f"{item!r}",
                    Location(name, line),
                )
            entries.append(Entry(dict(item), Location(name, line), dict(item.key_lines)))
        return entries
    except CodegenError:
        raise
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark
        line = mark.line + 1 if mark is not None else 0
        problem = error.problem or str(error)
        raise CodegenError(f"invalid YAML: {problem}", Location(name, line)) from None
    except yaml.YAMLError as error:
        raise CodegenError(f"invalid YAML: {error}", Location(name)) from None
    finally:
        loader.dispose()
