"""`make demo` / `python -m gradgen.demo`: the documents' example, run and explained.

Builds Q = 3a^3 - b^2 from two leaves, prints the graph autograd recorded (node names
and their next functions) and the gradients backward computes: dQ/da = 9a^2 = 36 and
dQ/db = -2b = -12 at a = 2, b = 6.
"""

from __future__ import annotations

import gradgen
from gradgen.graph import Node


def describe(node: Node | None, indent: str = "") -> list[str]:
    """The graph below `node` as indented lines (iterative: no recursion limit)."""
    lines: list[str] = []
    stack: list[tuple[Node | None, str]] = [(node, indent)]
    while stack:
        current, prefix = stack.pop()
        if current is None:
            lines.append(f"{prefix}None (no gradient needed)")
            continue
        label = current.name()
        variable = getattr(current, "variable", None)
        if variable is not None:
            label += f" -> leaf {variable!r}"
        lines.append(prefix + label)
        for child, _ in reversed(current.next_functions):
            stack.append((child, prefix + "    "))
    return lines


def main() -> None:
    a = gradgen.tensor(2.0, requires_grad=True)
    b = gradgen.tensor(6.0, requires_grad=True)
    Q = 3 * a**3 - b**2
    print(f"a = {a!r}")
    print(f"b = {b!r}")
    print(f"Q = 3*a**3 - b**2 = {Q!r}")
    print("graph of Q:")
    print("\n".join("  " + line for line in describe(Q.grad_fn)))
    Q.backward(gradient=gradgen.tensor(1.0))
    print(f"dQ/da = 9*a**2 = {a.grad!r}")
    print(f"dQ/db = -2*b   = {b.grad!r}")


if __name__ == "__main__":
    main()
