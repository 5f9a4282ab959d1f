"""gradgen.viz: DOT text of autograd graphs (torchviz's style) and rendering it.

The DOT text is parsed back here (nodes, labels, colours, edges), so the checks are
structural rather than textual. Tests that run Graphviz's `dot` skip with a visible
reason when it is not installed, or fail when GRADGEN_REQUIRE_GRAPHVIZ=1 (CI installs
the Debian package `graphviz`).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path
from typing import Any, NamedTuple

import pytest

import gradgen
from gradgen.viz import render, to_dot
from torch_oracle import oracle

REQUIRE_GRAPHVIZ = os.environ.get("GRADGEN_REQUIRE_GRAPHVIZ") == "1"
NO_DOT = "Graphviz 'dot' is not installed (apt-get install -y graphviz): skipped"
SVG = "{http://www.w3.org/2000/svg}"


# -- a small parser for the DOT subset to_dot writes ------------------------------------
class DotNode(NamedTuple):
    label: str
    attrs: dict[str, str]


class Dot(NamedTuple):
    nodes: dict[str, DotNode]
    edges: list[tuple[str, str, dict[str, str]]]

    def with_label(self, label: str) -> list[str]:
        return [k for k, n in self.nodes.items() if n.label == label]

    def colored(self, color: str) -> list[str]:
        return [k for k, n in self.nodes.items() if n.attrs.get("fillcolor") == color]

    def plain_edges(self) -> list[tuple[str, str]]:
        """The graph's edges proper: not the dashed ones to saved tensors."""
        return [(a, b) for a, b, attrs in self.edges if "style" not in attrs]

    def successors(self, node: str) -> list[str]:
        return [b for a, b in self.plain_edges() if a == node]


QUOTED = r'"(?:[^"\\]|\\.)*"'
ATTR = re.compile(r"(\w+)=(%s|[\w.]+)" % QUOTED)
NODE = re.compile(r"^\t(\w+) \[(.*)\]$")
EDGE = re.compile(r"^\t(\w+) -> (\w+)(?: \[(.*)\])?$")


def unquote(text: str) -> str:
    if not text.startswith('"'):
        return text
    return re.sub(
        r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), text[1:-1]
    )


def parse_attrs(text: str | None) -> dict[str, str]:
    return {k: unquote(v) for k, v in ATTR.findall(text or "")}


def parse_dot(text: str) -> Dot:
    lines = text.splitlines()
    assert lines[0] == "digraph {" and lines[-1] == "}", text
    nodes: dict[str, DotNode] = {}
    edges: list[tuple[str, str, dict[str, str]]] = []
    for line in lines[1:-1]:
        if line.startswith(("\tgraph [", "\tnode [")):
            continue
        edge = EDGE.match(line)
        if edge:
            edges.append((edge.group(1), edge.group(2), parse_attrs(edge.group(3))))
            continue
        node = NODE.match(line)
        assert node, "unexpected DOT line %r" % line
        attrs = parse_attrs(node.group(2))
        assert node.group(1) not in nodes, "node %s declared twice" % node.group(1)
        nodes[node.group(1)] = DotNode(attrs.pop("label"), attrs)
    for a, b, _ in edges:
        assert a in nodes and b in nodes, "edge %s -> %s to an undeclared node" % (a, b)
    return Dot(nodes, edges)


# -- graphs -----------------------------------------------------------------------------
def documents_example(module: Any = gradgen) -> tuple[Any, dict[str, Any]]:
    a = module.tensor(2.0, requires_grad=True)
    b = module.tensor(6.0, requires_grad=True)
    Q = 3 * a**3 - b**2
    return Q, {"a": a, "b": b}


def only(items: list[str]) -> str:
    assert len(items) == 1, items
    return items[0]


@pytest.fixture()
def dot_exe() -> str:
    exe = shutil.which("dot")
    if exe is None:
        if REQUIRE_GRAPHVIZ:
            pytest.fail(NO_DOT + " (GRADGEN_REQUIRE_GRAPHVIZ=1 requires it)")
        pytest.skip(NO_DOT)
    return exe


# -- to_dot -----------------------------------------------------------------------------
def test_documents_example_has_one_box_per_grad_fn_and_the_right_edges() -> None:
    Q, params = documents_example()
    dot = parse_dot(to_dot(Q, params=params))
    labels = Counter(n.label for n in dot.nodes.values())
    assert labels == Counter(
        {
            "SubBackward0": 1,
            "MulBackward0": 1,
            "PowBackward0": 2,
            "a\n ()": 1,  # the AccumulateGrad boxes, named from params
            "b\n ()": 1,
            "\n ()": 1,  # the output
        }
    )
    leaf_a, leaf_b = only(dot.with_label("a\n ()")), only(dot.with_label("b\n ()"))
    assert sorted(dot.colored("lightblue")) == sorted([leaf_a, leaf_b])
    out = only(dot.colored("darkolivegreen1"))
    assert dot.nodes[out].label == "\n ()"
    sub, mul = only(dot.with_label("SubBackward0")), only(
        dot.with_label("MulBackward0")
    )
    pow_a, pow_b = (only(dot.successors(leaf)) for leaf in (leaf_a, leaf_b))
    assert dot.nodes[pow_a].label == dot.nodes[pow_b].label == "PowBackward0"
    # Edges run from the inputs toward the output, as torchviz draws them.
    assert Counter(dot.plain_edges()) == Counter(
        [
            (leaf_a, pow_a),
            (pow_a, mul),
            (mul, sub),
            (leaf_b, pow_b),
            (pow_b, sub),
            (sub, out),
        ]
    )
    assert len(dot.edges) == 6
    assert "_saved" not in to_dot(Q) and "alpha" not in to_dot(Q)


def test_without_params_leaves_are_unnamed_but_still_light_blue() -> None:
    Q, _ = documents_example()
    dot = parse_dot(to_dot(Q))
    assert [dot.nodes[k].label for k in dot.colored("lightblue")] == ["\n ()"] * 2


def test_output_is_deterministic_and_ids_follow_visit_order() -> None:
    Q, params = documents_example()
    first = to_dot(Q, params=params, show_saved=True)
    assert to_dot(Q, params=params, show_saved=True) == first
    Q2, params2 = documents_example()  # same graph, different objects and id()s
    assert to_dot(Q2, params=params2, show_saved=True) == first
    ids = list(parse_dot(first).nodes)
    assert ids == ["n%d" % i for i in range(len(ids))]
    assert parse_dot(first).nodes["n0"].attrs["fillcolor"] == "darkolivegreen1"
    assert parse_dot(first).nodes["n1"].label.startswith("SubBackward0")


def test_show_saved_lists_saved_values_and_draws_saved_tensors() -> None:
    Q, params = documents_example()
    dot = parse_dot(to_dot(Q, params=params, show_saved=True))
    pows = [k for k, n in dot.nodes.items() if n.label.startswith("PowBackward0\n")]
    exponents = set()
    for k in pows:
        rows = dot.nodes[k].label.split("\n")
        assert set(rows[1]) == {"-"}
        exponent = only([r for r in rows if r.startswith("exponent")])
        exponents.add(exponent.split(":")[1].strip())
        assert "self    : [saved tensor]" in rows
    assert exponents == {"2", "3"}
    assert "alpha: 1" in only(
        [n.label for n in dot.nodes.values() if n.label.startswith("SubBackward0")]
    )
    saved = dot.colored("orange")
    assert sorted(dot.nodes[k].label for k in saved) == [
        "other\n ()",  # the wrapped 3 of 3 * a**3
        "self\n ()",
        "self\n ()",
    ]
    dashed = [(a, b) for a, b, attrs in dot.edges if attrs.get("style") == "dashed"]
    assert sorted(b for _, b in dashed) == sorted(saved)
    assert all(attrs.get("dir") == "none" for *_, attrs in dot.edges if attrs)
    assert sorted(dot.nodes[a].label.split("\n")[0] for a, _ in dashed) == [
        "MulBackward0",
        "PowBackward0",
        "PowBackward0",
    ]


def test_show_attrs_alone_lists_values_without_saved_tensor_boxes() -> None:
    Q, params = documents_example()
    text = to_dot(Q, params=params, show_attrs=True)
    assert "exponent:" in text and "[saved tensor]" in text
    assert not parse_dot(text).colored("orange")


def test_freed_saved_tensors_after_backward_are_shown_as_freed() -> None:
    Q, params = documents_example()
    Q.backward()
    text = to_dot(Q, params=params, show_saved=True)
    dot = parse_dot(text)
    assert sorted(dot.nodes[k].label for k in dot.colored("orange")) == [
        "other\n (freed)",
        "self\n (freed)",
        "self\n (freed)",
    ]
    assert "self    : (freed)" in text and "exponent:       3" in text
    assert len(dot.plain_edges()) == 6


def test_a_10000_node_chain_needs_no_recursion() -> None:
    x = gradgen.tensor(1.0, requires_grad=True)
    y = x
    for _ in range(10_000):
        y = y * 1.0
    dot = parse_dot(to_dot(y, params={"x": x}))
    labels = Counter(n.label for n in dot.nodes.values())
    assert labels == Counter({"MulBackward0": 10_000, "x\n ()": 1, "\n ()": 1})
    assert len(dot.edges) == 10_001
    assert len(parse_dot(to_dot(y, show_saved=True)).colored("orange")) == 10_000


def test_tuple_of_outputs_shared_subgraph_and_view_base() -> None:
    x = gradgen.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    y = x * 2
    z = y.permute(1, 0)
    w = y * y
    dot = parse_dot(to_dot((z, w), params={"x": x}))
    outs = dot.colored("darkolivegreen1")
    assert sorted(dot.nodes[k].label for k in outs) == ["\n (2, 3)", "\n (3, 2)"]
    assert len(dot.with_label("x\n (2, 3)")) == 1
    muls = dot.with_label("MulBackward0")
    assert len(muls) == 2  # y's node is drawn once though both outputs reach it
    base = only(dot.colored("darkolivegreen3"))  # z is a view of y
    assert dot.nodes[base].label == "\n (2, 3)"
    z_box = only([k for k in outs if dot.nodes[k].label == "\n (3, 2)"])
    assert [(a, b) for a, b, attrs in dot.edges if attrs.get("style") == "dotted"] == [
        (base, z_box)
    ]
    permute = only(dot.with_label("PermuteBackward0"))
    y_node = only(
        [b for a, b in dot.plain_edges() if a == dot.with_label("x\n (2, 3)")[0]]
    )
    assert (y_node, permute) in dot.plain_edges() and (
        y_node,
        base,
    ) in dot.plain_edges()
    # y * y uses y's node twice, as next_functions lists it twice.
    w_node = only([m for m in muls if m != y_node])
    assert dot.plain_edges().count((y_node, w_node)) == 2


def test_a_leaf_output_and_a_constant() -> None:
    x = gradgen.tensor([1.0, 2.0], requires_grad=True)
    c = gradgen.tensor([3.0])
    dot = parse_dot(to_dot((x, c), params={"x": x}))
    assert sorted(n.label for n in dot.nodes.values()) == ["\n (1)", "x\n (2)"]
    assert not dot.edges


def test_labels_are_escaped() -> None:
    x = gradgen.tensor([1.0, 2.0], requires_grad=True)
    name = 'we"ird\\N name\nline two\x01'
    text = to_dot(x * 2, params={name: x})
    assert '"we\\"ird\\\\N name\\nline two\\\\x01\\n (2)"' in text
    assert "\x01" not in text
    dot = parse_dot(text)
    assert only(dot.colored("lightblue")) in dot.with_label(
        'we"ird\\N name\nline two\\x01\n (2)'
    )


def test_max_attr_chars_truncates_long_values() -> None:
    x = gradgen.zeros(1, 1, 1, 1, 1, 1, requires_grad=True)
    y = x.permute(5, 4, 3, 2, 1, 0)
    assert "dims: (5, 4, 3, 2, 1, 0)" in to_dot(y, show_attrs=True)
    assert "dims: (5, 4, ..." in to_dot(y, show_attrs=True, max_attr_chars=10)


def test_bad_arguments_raise() -> None:
    Q, _ = documents_example()
    with pytest.raises(TypeError, match="Tensor"):
        to_dot(3.0)
    with pytest.raises(TypeError, match=r"var\[1\]"):
        to_dot((Q, "Q"))
    with pytest.raises(TypeError, match="params"):
        to_dot(Q, params={"a": 2.0})
    with pytest.raises(ValueError, match="empty"):
        to_dot(())


def test_same_text_as_for_the_same_graph_in_pytorch() -> None:
    for kwargs in ({}, {"show_attrs": True}, {"show_saved": True}):

        def texts(lib: Any) -> list[str]:
            q, p = documents_example(lib)
            before = to_dot(q, p, **kwargs)
            q.backward()
            return [before, to_dot(q, p, **kwargs)]

        expected = oracle(str(kwargs), lambda torch: texts(torch))
        assert texts(gradgen) == expected


class FakeNode:
    """A stand-in custom-Function node: saved tensors via `saved_tensors` only."""

    def __init__(self, saved: Any, next_functions: tuple[Any, ...] = ()) -> None:
        self._saved = saved
        self.next_functions = next_functions

    @property
    def saved_tensors(self) -> tuple[Any, ...]:
        if self._saved is None:
            raise RuntimeError("Trying to backward through the graph a second time")
        return tuple(self._saved)


class FakeTensor:
    def __init__(self, shape: tuple[int, ...], grad_fn: Any = None) -> None:
        self.shape, self.grad_fn, self.requires_grad = shape, grad_fn, True


def test_custom_function_saved_tensors_are_always_drawn() -> None:
    x = gradgen.tensor([1.0, 2.0], requires_grad=True)
    node = FakeNode([x, None, gradgen.zeros(3)], (((x * 2).grad_fn, 0),))
    dot = parse_dot(to_dot(FakeTensor((2,), node)))
    assert sorted(dot.nodes[k].label for k in dot.colored("orange")) == [
        "saved_tensors[0]\n (2)",
        "saved_tensors[2]\n (3)",
    ]
    assert only(dot.with_label("FakeNode")) == "n1"
    node._saved = None  # freed by backward
    dot = parse_dot(to_dot(FakeTensor((2,), node)))
    assert [dot.nodes[k].label for k in dot.colored("orange")] == [
        "saved_tensors\n (freed)"
    ]


def test_custom_function_drawn_as_pytorch_draws_it() -> None:
    function = pytest.importorskip("gradgen.autograd.function")

    def graph(module: Any, base: type) -> tuple[Any, dict[str, Any]]:
        class Scale(base):
            @staticmethod
            def forward(ctx: Any, x: Any, y: Any) -> Any:
                ctx.save_for_backward(x, None, y)
                return x * y

            @staticmethod
            def backward(ctx: Any, grad: Any) -> Any:
                x, _, y = ctx.saved_tensors
                return grad * y, grad * x

        x = module.ones(2, requires_grad=True)
        return Scale.apply(x, x * 3), {"x": x}

    def texts(torch: Any) -> list[str]:
        y_torch, p_torch = graph(torch, torch.autograd.Function)
        before = to_dot(y_torch, p_torch)
        y_torch.sum().backward()
        return [before, to_dot(y_torch, p_torch)]

    before, after = oracle("before and after backward", texts)
    y_ours, p_ours = graph(gradgen, function.Function)
    assert "ScaleBackward" in to_dot(y_ours, p_ours)
    assert to_dot(y_ours, p_ours) == before
    y_ours.sum().backward()
    assert "(freed)" in to_dot(y_ours, p_ours)
    assert to_dot(y_ours, p_ours) == after


# -- Graphviz ---------------------------------------------------------------------------
def check_svg(svg: bytes, text: str) -> None:
    root = ET.fromstring(svg)
    assert root.tag == SVG + "svg"
    titles = [t.text for t in root.iter(SVG + "title")]
    assert set(parse_dot(text).nodes) <= set(titles)
    assert all(titles.count(k) == 1 for k in parse_dot(text).nodes)


@pytest.mark.parametrize("show_saved", [False, True])
def test_dot_accepts_the_text(dot_exe: str, show_saved: bool) -> None:
    Q, params = documents_example()
    params['we"ird\\ name\nwith <xml> & \x01'] = params.pop("b")
    text = to_dot(Q, params=params, show_saved=show_saved)
    result = subprocess.run(
        [dot_exe, "-Tsvg"], input=text.encode(), capture_output=True, timeout=60
    )
    assert result.returncode == 0 and not result.stderr, result.stderr
    check_svg(result.stdout, text)


def test_render_svg_and_png(dot_exe: str, tmp_path: Path) -> None:
    Q, params = documents_example()
    svg = render(Q, tmp_path / "q.svg", params=params, show_saved=True)
    assert svg == tmp_path / "q.svg"
    check_svg(svg.read_bytes(), to_dot(Q, params=params, show_saved=True))
    assert (tmp_path / "q.dot").read_text() == to_dot(Q, params=params, show_saved=True)
    png = render(Q, str(tmp_path / "sub" / "q.png"), params=params)
    assert png == tmp_path / "sub" / "q.png"
    assert png.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    forced = render(Q, tmp_path / "graph", format="png")
    assert forced == tmp_path / "graph.png" and forced.read_bytes()[:4] == b"\x89PNG"
    default = render(Q, tmp_path / "plain")
    assert default == tmp_path / "plain.svg" and b"<svg" in default.read_bytes()


def test_render_without_dot_names_the_package(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: None)
    Q, _ = documents_example()
    with pytest.raises(RuntimeError) as info:
        render(Q, tmp_path / "q.svg")
    message = str(info.value)
    assert "graphviz" in message and "apt-get install" in message
    assert "to_dot" in message
    assert not (tmp_path / "q.svg").exists()
    # DOT text itself needs no Graphviz.
    source = render(Q, tmp_path / "q.dot")
    assert source.read_text() == to_dot(Q)


def test_render_rejects_unknown_formats(tmp_path: Path) -> None:
    Q, _ = documents_example()
    with pytest.raises(ValueError, match="unsupported format 'bmpx'"):
        render(Q, tmp_path / "q.bmpx")


def test_render_reports_a_failing_dot(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    fake = tmp_path / "dot"
    fake.write_text("#!/bin/sh\necho 'Error: broken' >&2\nexit 3\n")
    fake.chmod(0o755)
    monkeypatch.setattr(shutil, "which", lambda name: str(fake))
    Q, _ = documents_example()
    with pytest.raises(RuntimeError, match="exit code 3.*Error: broken"):
        render(Q, tmp_path / "q.svg")
