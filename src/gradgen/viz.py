"""Draw autograd graphs as Graphviz DOT text, in the style of torchviz.

    from gradgen.viz import to_dot, render

    a = gradgen.tensor(2.0, requires_grad=True)
    b = gradgen.tensor(6.0, requires_grad=True)
    Q = 3 * a**3 - b**2
    print(to_dot(Q, params={"a": a, "b": b}))
    render(Q, "q.svg", params={"a": a, "b": b})  # needs Graphviz's `dot`

The drawing follows torchviz's conventions:

- every backward node (`grad_fn`) is a grey box labelled with its class name, e.g.
  `MulBackward0`; with `show_attrs` or `show_saved` the label also lists its saved
  values (`_saved_exponent` is shown as `exponent: 3`);
- a leaf's `AccumulateGrad` node is a light-blue box labelled with the leaf's name
  from `params` and its shape, e.g. `weight\\n (3, 4)`;
- the tensors passed in as `var` are dark-olive-green boxes labelled with their shape
  (a view's base tensor is a darker green box joined by a dotted edge);
- edges run from inputs toward the output: from each node's `next_functions` to the
  node, and from an output's `grad_fn` to the output box;
- with `show_saved`, saved tensors are orange boxes joined to their node by dashed,
  undirected edges; a saved tensor already freed by `backward()` is shown as
  `(freed)`.

Only the attributes torchviz reads are used (`grad_fn`, `next_functions`,
`variable`, `_saved_*`, `shape`, `_base`), so the walk is iterative (no recursion
limit on deep graphs) and node ids (`n0`, `n1`, ...) follow visit order, so the same
graph always gives the same text. `render` runs the `dot` executable of Graphviz
(Debian/Ubuntu package `graphviz`); `to_dot` needs nothing beyond Python.
"""

from __future__ import annotations

import inspect
import os
import pathlib
import shutil
import subprocess
from collections.abc import Mapping
from typing import Any, Union

from .tensor import Tensor

__all__ = ["to_dot", "render", "GRAPHVIZ_PACKAGE", "RENDER_FORMATS"]

#: The Debian/Ubuntu package that provides the `dot` executable.
GRAPHVIZ_PACKAGE = "graphviz"
#: Output formats `render` asks `dot` for.
RENDER_FORMATS = ("svg", "png", "pdf")
#: Suffixes for which `render` writes the DOT text itself, without Graphviz.
_TEXT_FORMATS = ("dot", "gv")

SAVED_PREFIX = "_saved_"
FREED = "(freed)"

# Fill colours, as torchviz.
OUTPUT_COLOR = "darkolivegreen1"
BASE_COLOR = "darkolivegreen3"
LEAF_COLOR = "lightblue"
SAVED_COLOR = "orange"

_NODE_ATTRS = "fontname=monospace fontsize=10 height=0.2 shape=box style=filled"

TensorOrTensors = Union[Any, tuple[Any, ...], list[Any]]


def _is_tensor(value: Any) -> bool:
    """A gradgen Tensor, or anything shaped like one (a torch.Tensor works too)."""
    if isinstance(value, Tensor):
        return True
    return (
        not isinstance(value, type)
        and hasattr(value, "grad_fn")
        and hasattr(value, "shape")
        and hasattr(value, "requires_grad")
    )


def _quote(text: str) -> str:
    """`text` as a double-quoted DOT string; line breaks become centred `\\n`."""
    out = ['"']
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    for ch in text:
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"':
            out.append('\\"')
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\t":
            out.append(" ")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            # Control characters are not allowed in XML (SVG): show them escaped.
            out.append("\\\\x%02x" % ord(ch))
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _size_str(shape: Any) -> str:
    return "(" + ", ".join("%d" % int(d) for d in shape) + ")"


def _var_label(name: str, tensor: Any) -> str:
    return "%s\n %s" % (name, _size_str(tensor.shape))


def _one_line(text: str) -> str:
    return " ".join(text.split("\n"))


def _attr_text(value: Any) -> str:
    if _is_tensor(value):
        return "[saved tensor]"
    if isinstance(value, (tuple, list)) and any(_is_tensor(v) for v in value):
        return "[saved tensors]"
    return _one_line(str(value))


class _DotBuilder:
    """Collects DOT statements while walking a graph; ids follow visit order."""

    def __init__(
        self,
        params: Mapping[str, Any] | None,
        show_attrs: bool,
        show_saved: bool,
        max_attr_chars: int,
    ) -> None:
        self.param_names: dict[int, str] = {}
        self.keep: list[Any] = []  # holds what is keyed by id() alive for the call
        if params is not None:
            if not isinstance(params, Mapping):
                raise TypeError(
                    "to_dot(): params must be a dict of name -> Tensor, "
                    f"got {type(params).__name__}"
                )
            for name, value in params.items():
                if not _is_tensor(value):
                    raise TypeError(
                        f"to_dot(): params[{name!r}] is a {type(value).__name__}, "
                        "not a Tensor"
                    )
                self.param_names[id(value)] = str(name)
                self.keep.append(value)
        self.show_attrs = show_attrs
        self.show_saved = show_saved
        self.max_attr_chars = max(int(max_attr_chars), 3)
        self.ids: dict[int, str] = {}
        self.drawn: set[int] = set()
        self.body: list[str] = []
        self.edges: list[tuple[int, int, str]] = []
        self.saved_names: dict[type, list[str]] = {}

    # -- ids and statements ----------------------------------------------------------
    def id_of(self, obj: Any) -> str:
        key = id(obj)
        node_id = self.ids.get(key)
        if node_id is None:
            node_id = "n%d" % len(self.ids)
            self.ids[key] = node_id
            self.keep.append(obj)
        return node_id

    def fresh(self) -> object:
        """A stand-in object for a box that is no graph object (a saved value)."""
        return object()

    def node(self, node_id: str, label: str, fillcolor: str | None = None) -> None:
        attrs = "label=" + _quote(label)
        if fillcolor is not None:
            attrs += " fillcolor=" + fillcolor
        self.body.append("\t%s [%s]" % (node_id, attrs))

    def edge(self, tail: Any, head: Any, attrs: str = "") -> None:
        """An edge between two objects; ids are looked up when the text is made."""
        self.edges.append((id(tail), id(head), attrs))

    # -- labels ----------------------------------------------------------------------
    def saved_attr_names(self, fn: Any) -> list[str]:
        cls = type(fn)
        names = self.saved_names.get(cls)
        if names is None:
            names = sorted(n for n in dir(cls) if n.startswith(SAVED_PREFIX))
            self.saved_names[cls] = names
        return names

    def read_saved(self, fn: Any, attr: str) -> tuple[bool, Any]:
        """(True, value), or (False, None) when the value was freed by backward."""
        try:
            return True, getattr(fn, attr)
        except RuntimeError:
            return False, None

    def fn_label(self, fn: Any) -> str:
        name = str(type(fn).__name__)
        if not (self.show_attrs or self.show_saved):
            return name
        attrs: dict[str, str] = {}
        for attr in self.saved_attr_names(fn):
            ok, value = self.read_saved(fn, attr)
            attrs[attr[len(SAVED_PREFIX) :]] = _attr_text(value) if ok else FREED
        if not attrs:
            return name
        width1 = max(len(k) for k in attrs)
        width2 = min(max(len(v) for v in attrs.values()), self.max_attr_chars)

        def cut(text: str) -> str:
            return text[: width2 - 3] + "..." if len(text) > width2 else text

        rule = "-" * max(width1 + width2 + 2, len(name))
        rows = [
            "%-*s: %*s" % (width1, key, width2, cut(value))
            for key, value in attrs.items()
        ]
        return "\n".join([name, rule, *rows])

    # -- the walk --------------------------------------------------------------------
    def saved_boxes(self, fn: Any, attr: str, short: str) -> None:
        """Orange boxes for the tensor(s) `fn.<attr>` holds, joined by dashed edges."""
        ok, value = self.read_saved(fn, attr)
        if not ok:
            saved: list[tuple[str, Any]] = [(short, None)]
        elif _is_tensor(value):
            saved = [(short, value)]
        elif isinstance(value, (tuple, list)):
            saved = [
                ("%s[%d]" % (short, i), v) for i, v in enumerate(value) if _is_tensor(v)
            ]
        else:
            return
        for name, tensor in saved:
            box = self.fresh()
            if tensor is None:
                label = "%s\n %s" % (name, FREED)
            else:
                label = _var_label(name, tensor)
            self.node(self.id_of(box), label, SAVED_COLOR)
            self.edge(fn, box, "dir=none style=dashed")

    def add_saved(self, fn: Any) -> None:
        # A custom Function's ctx.save_for_backward tensors: always drawn, as torchviz.
        if inspect.getattr_static(type(fn), "saved_tensors", None) is not None:
            self.saved_boxes(fn, "saved_tensors", "saved_tensors")
        if self.show_saved:
            for attr in self.saved_attr_names(fn):
                self.saved_boxes(fn, attr, attr[len(SAVED_PREFIX) :])

    def add_graph(self, root: Any) -> None:
        """Draw `root` and everything it reaches, depth first, without recursion."""
        stack = [root]
        while stack:
            fn = stack.pop()
            if id(fn) in self.drawn:
                continue
            self.drawn.add(id(fn))
            fn_id = self.id_of(fn)
            variable = getattr(fn, "variable", None)
            if variable is not None and _is_tensor(variable):
                name = self.param_names.get(id(variable), "")
                self.node(fn_id, _var_label(name, variable), LEAF_COLOR)
            else:
                self.node(fn_id, self.fn_label(fn))
            self.add_saved(fn)
            children = [
                nxt for nxt, _ in getattr(fn, "next_functions", ()) if nxt is not None
            ]
            for nxt in children:
                self.edge(nxt, fn)
            # Reversed, so that the first input is drawn first (as recursion would).
            stack.extend(reversed(children))

    def add_output(self, tensor: Any) -> None:
        color = OUTPUT_COLOR
        while id(tensor) not in self.drawn:
            self.drawn.add(id(tensor))
            name = self.param_names.get(id(tensor), "")
            self.node(self.id_of(tensor), _var_label(name, tensor), color)
            grad_fn = tensor.grad_fn
            if grad_fn is not None:
                self.add_graph(grad_fn)
                self.edge(grad_fn, tensor)
            base = getattr(tensor, "_base", None)
            if base is None or not _is_tensor(base):
                break
            self.edge(base, tensor, "style=dotted")
            tensor, color = base, BASE_COLOR

    def text(self) -> str:
        statements = list(self.body)
        for tail, head, attrs in self.edges:
            line = "\t%s -> %s" % (self.ids[tail], self.ids[head])
            statements.append(line + (" [%s]" % attrs if attrs else ""))
        # Grow the drawing with its content, as torchviz's resize_graph does.
        size = max(12.0, len(statements) * 0.15)
        size_str = ("%.2f" % size).rstrip("0").rstrip(".")
        lines = [
            "digraph {",
            '\tgraph [size="%s,%s"]' % (size_str, size_str),
            "\tnode [%s]" % _NODE_ATTRS,
            *statements,
            "}",
        ]
        return "\n".join(lines) + "\n"


def _outputs(var: TensorOrTensors) -> list[Any]:
    items = list(var) if isinstance(var, (tuple, list)) else [var]
    if not items:
        raise ValueError("to_dot(): var is an empty sequence; pass at least one Tensor")
    for i, item in enumerate(items):
        if not _is_tensor(item):
            where = (
                "var"
                if len(items) == 1 and not isinstance(var, (tuple, list))
                else ("var[%d]" % i)
            )
            raise TypeError(
                f"to_dot(): {where} must be a Tensor, got {type(item).__name__}"
            )
    return items


def to_dot(
    var: TensorOrTensors,
    params: Mapping[str, Any] | None = None,
    show_attrs: bool = False,
    show_saved: bool = False,
    max_attr_chars: int = 50,
) -> str:
    """The Graphviz DOT text (`digraph {...}`) of the autograd graph behind `var`.

    Args:
        var: the output Tensor, or a tuple of Tensors.
        params: names for leaf tensors, e.g. `dict(model.named_parameters())`; a
            leaf's `AccumulateGrad` box is labelled with its name and shape.
        show_attrs: list each node's saved values (`_saved_*`) in its label.
        show_saved: also draw saved tensors as orange boxes (and list saved values
            in the labels, as `show_attrs`). Values freed by `backward()` appear as
            `(freed)`.
        max_attr_chars: longest shown attribute value; longer ones end in `...`.
    """
    builder = _DotBuilder(params, show_attrs, show_saved, max_attr_chars)
    for tensor in _outputs(var):
        builder.add_output(tensor)
    return builder.text()


def render(
    var: TensorOrTensors,
    path: str | os.PathLike[str],
    format: str | None = None,
    params: Mapping[str, Any] | None = None,
    show_saved: bool = False,
    *,
    show_attrs: bool = False,
    max_attr_chars: int = 50,
    timeout: float = 60.0,
) -> pathlib.Path:
    """Draw the graph behind `var` to `path` with Graphviz; returns the file written.

    `format` ("svg", "png" or "pdf") defaults to `path`'s suffix, or "svg" when
    `path` has none (the suffix is then added). The DOT source is written next to
    the image, as `path` with the suffix ".dot", and `dot -T<format>` is run on it.
    A path ending in ".dot" or ".gv" only gets the DOT text (no Graphviz needed).

    Raises RuntimeError when the `dot` executable is not installed, fails, or takes
    longer than `timeout` seconds.
    """
    out = pathlib.Path(path)
    suffix = out.suffix.lstrip(".").lower()
    fmt = (format or suffix or "svg").lower().lstrip(".")
    if not suffix:
        out = out.with_suffix("." + fmt)
    if fmt not in RENDER_FORMATS + _TEXT_FORMATS:
        raise ValueError(
            f"render(): unsupported format {fmt!r}; use one of "
            + ", ".join(RENDER_FORMATS + _TEXT_FORMATS)
        )
    text = to_dot(
        var,
        params=params,
        show_attrs=show_attrs,
        show_saved=show_saved,
        max_attr_chars=max_attr_chars,
    )
    if fmt in _TEXT_FORMATS:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
        return out

    dot = shutil.which("dot")
    if dot is None:
        raise RuntimeError(
            "render() needs the Graphviz 'dot' executable, which is not on PATH. "
            f"Install the Debian/Ubuntu package '{GRAPHVIZ_PACKAGE}' "
            f"(apt-get install -y {GRAPHVIZ_PACKAGE}); the DOT text can still be "
            "had without Graphviz from gradgen.viz.to_dot()."
        )
    source = out.with_suffix(".dot")
    if source == out:  # pragma: no cover - excluded by the format check above
        source = out.with_name(out.name + ".dot")
    out.parent.mkdir(parents=True, exist_ok=True)
    source.write_text(text, encoding="utf-8")
    try:
        result = subprocess.run(
            [dot, "-T" + fmt, "-o", str(out), str(source)],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        raise RuntimeError(
            f"render(): Graphviz 'dot' did not finish within {timeout} seconds "
            f"(DOT source left in {source})"
        ) from exc
    if result.returncode != 0:
        raise RuntimeError(
            f"render(): Graphviz 'dot -T{fmt}' failed with exit code "
            f"{result.returncode} (DOT source in {source}): {result.stderr.strip()}"
        )
    return out
