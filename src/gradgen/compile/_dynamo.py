"""gradgen._dynamo.explain: what gradgen.compile makes of a function (torch._dynamo's
spelling): `explain(fn)(*args)` compiles and runs it once and reports the graphs (a
function split by graph breaks has one per piece), the graph breaks with their reasons
and source lines, and the operators compiled."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .compiler import BreakRecord, CompiledFunction, programs_of

__all__ = ["ExplainOutput", "explain", "reset"]


@dataclass
class ExplainOutput:
    graph_count: int
    graph_break_count: int
    op_count: int
    break_reasons: list[BreakRecord] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)

    def __str__(self) -> str:
        lines = [
            f"Graph Count: {self.graph_count}",
            f"Graph Break Count: {self.graph_break_count}",
            f"Op Count: {self.op_count}",
            "Break Reasons:",
        ]
        for number, record in enumerate(self.break_reasons, 1):
            lines.append(f"  Break Reason {number}: {record.reason}")
            if record.line:
                lines.append(f"    at {record.line}")
        return "\n".join(lines)


def explain(fn: Callable[..., Any]) -> Callable[..., ExplainOutput]:
    """`explain(fn)(*args, **kwargs)`: compile fn for these arguments and report."""

    def run(*args: Any, **kwargs: Any) -> ExplainOutput:
        compiled = CompiledFunction(fn, fullgraph=False, dynamic=None, debug=False)
        compiled(*args, **kwargs)
        programs = [p for e in compiled.cache.values() for p in programs_of(e)]
        return ExplainOutput(
            graph_count=len(programs),
            graph_break_count=len(compiled.breaks),
            op_count=sum(p.op_count for p in programs),
            break_reasons=list(compiled.breaks),
            sources=[p.source for p in programs],
        )

    return run


def reset() -> None:
    """torch._dynamo.reset: caches live on each compiled function; nothing global."""
