"""Liveness: ``del`` lines after each local's last use, so arrays are freed as early as
the eager code would free them."""

from __future__ import annotations

from dataclasses import dataclass, field

from ._runtime import LineInfo


@dataclass(slots=True)
class Stmt:
    """One line of the function body: its text, what it does, the locals it reads and
    defines, and a trailing comment (the user's source line)."""

    text: str
    info: LineInfo | None = None
    reads: list[str] = field(default_factory=list)
    defines: list[str] = field(default_factory=list)
    comment: str = ""


def with_frees(stmts: list[Stmt], locals_: set[str]) -> list[Stmt]:
    """The statements with ``del`` lines after each value's last use (one line for the
    whole input-unpacking block)."""
    last: dict[str, int] = {}
    for k, s in enumerate(stmts):
        for n in s.reads:
            last[n] = k
    out: list[Stmt] = []
    final = len(stmts) - 1
    pending: list[str] = []
    for k, s in enumerate(stmts):
        out.append(s)
        if k == final:
            break
        pending += [n for n in s.reads if last.get(n) == k and n in locals_]
        pending += [n for n in s.defines if n not in last]
        in_block = s.info is not None and s.info.kind == "input"
        nxt = stmts[k + 1].info
        if in_block and nxt is not None and nxt.kind == "input":
            continue
        if pending:
            out.append(Stmt("del " + ", ".join(dict.fromkeys(pending))))
            pending = []
    return out
