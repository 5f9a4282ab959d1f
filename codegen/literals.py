"""Text from the input as Python source: string literals, docstrings, comments, names.

Generated code is built from data, never from text: a string from the YAML, a schema or
a file name reaches a generated file only through one of these functions, which the
templates use as jinja2 filters (see emit.py):

    py          a string literal, by repr() (``{{ op.schema | py }}``)
    docstring   a whole triple-quoted docstring whose value is exactly the given lines
    comment     text for after a ``#``: one line, whatever the text holds
    identifier  a name printed as code: must be an identifier, not a keyword

Each is closed by construction and checked: `docstring` escapes backslashes, the
quotes that could end the literal and every character that is not printable (newlines,
carriage returns, U+2028, NUL ...), then verifies with `ast` that the literal's value is
the text; readable text (the usual case) comes out unchanged.
"""

from __future__ import annotations

import ast
import keyword
from collections.abc import Sequence

from .errors import CodegenError


def _excerpt(value: object) -> str:
    """A short repr() of a value for an error message."""
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _bug(value: object, what: str) -> CodegenError:
    return CodegenError(
        f"cannot print {_excerpt(value)} as {what} (a generator bug: input is "
        "checked when the YAML is loaded)"
    )


def python_literal(value: object) -> str:
    """A Python literal for a string (or a tuple/list of strings), made by repr()."""
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, (tuple, list)) and all(isinstance(v, str) for v in value):
        return repr(tuple(value))
    raise _bug(value, "a string literal")


def _escape(text: str, in_string: bool) -> str:
    """`text` as one line of source: non-printable characters become escapes; inside a
    triple-quoted string, backslashes are doubled and no two quotes are left together
    (nor one at the end), so the text can never close the literal."""
    out = []
    previous = ""
    for index, char in enumerate(text):
        if in_string and char == "\\":
            out.append("\\\\")
        elif in_string and char == '"' and (previous == '"' or index == len(text) - 1):
            out.append('\\"')
        elif not char.isprintable():
            out.append(
                char.encode("unicode_escape", "backslashreplace").decode("ascii")
            )
        else:
            out.append(char)
        previous = char
    return "".join(out)


def docstring(lines: str | Sequence[str], indent: int = 0) -> str:
    """A triple-quoted literal for a docstring of the given lines, indented by `indent`
    spaces after the first line; a multi-line docstring ends with its quotes on a line
    of their own. Its value is exactly the lines (each one line whatever it holds)."""
    if isinstance(lines, str):
        lines = [lines]
    if not lines or not all(isinstance(line, str) for line in lines):
        raise _bug(lines, "a docstring")
    pad = " " * indent
    body = [_escape(line, in_string=True) for line in lines]
    value_lines = list(lines)
    if len(body) > 1:
        body.append("")
        value_lines.append("")
    literal = '"""' + "\n".join((pad + b if b and i else b) for i, b in enumerate(body))
    literal += (pad if len(body) > 1 else "") + '"""'
    expected = "\n".join((pad + v if v and i else v) for i, v in enumerate(value_lines))
    expected += pad if len(body) > 1 else ""
    try:
        value = ast.literal_eval(literal)
    except (ValueError, SyntaxError):
        value = None
    if value != expected:
        raise _bug(lines, "a docstring")
    return literal


def comment(text: str) -> str:
    """`text` for after a ``#``: the newlines and other control characters it holds
    are escaped, so it stays one comment line."""
    if not isinstance(text, str):
        raise _bug(text, "a comment")
    return _escape(text, in_string=False)


def identifier(name: str) -> str:
    """A name printed as code: an identifier and not a keyword, or a CodegenError."""
    if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name):
        raise _bug(name, "a Python name (not an identifier, or a keyword)")
    return name


FILTERS = {
    "py": python_literal,
    "docstring": docstring,
    "comment": comment,
    "identifier": identifier,
}
