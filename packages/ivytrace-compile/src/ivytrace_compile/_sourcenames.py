"""Names for generated values taken from the user's own source: where the line that made
a node assigns its result (``scores = q @ k.T``, ``a, b = x.chunk(2)``), the value is
named after the assignment's target, as a hand-written port would name it.

:func:`name_hints` reads each user file once (:class:`SourceReader`, one per generated
function or package: no cache outlives it) and answers value id -> name. A node's
statement is the innermost one spanning its line (a multi-line call's nodes share it).
One *execution* of a statement is the run of its nodes until the same function (the
same ``def``'s lines) records a node of another statement; the value it binds is the
last of its nodes' results that nothing read before that point (an inner call's result
is read by the outer call; a result handed to a user function called on the same line,
``h = helper(self.fc(x))``, is read by that function's nodes: not named). Where that is
not certain (a loop's earlier results, a statement whose result its function's caller
reads before the function records another line), the value keeps the name its op gives.
A file that cannot be read or parsed, or whose line no longer reads as traced, names
nothing: naming never changes what the code does.
"""

from __future__ import annotations

import ast
import linecache
from dataclasses import dataclass, replace

from ivytrace_ir import Graph, Node, SourceLoc

__all__ = ["SourceReader", "name_hints"]


@dataclass(frozen=True, slots=True)
class _Stmt:
    """The statement spanning a line, with what naming needs of it."""

    file: str
    key: tuple[int, int]
    """(line, column) where the statement starts: tells statements apart."""
    scope: tuple[int, int]
    """The lines of the innermost ``def`` holding it (the whole file at module level)."""
    targets: tuple[str | None, ...] | None
    """The names an assignment binds, in order (None for a target that is no plain name);
    None when the statement is no assignment naming can use."""
    single: bool
    """The assignment's target is one name (not a tuple of names) and its value may be one
    array (not a list, tuple or dict of them)."""
    items: tuple[tuple[int, str], ...] = ()
    """Where the value is a call's or attribute's result (``input_shape = x.size()``): the
    names its function gives the items of that name (``batch_size, seq_length =
    input_shape``; ``seq_length = input_shape[1]``), as (index, name); a negative index
    counts from the end. Items two statements name differently are left out."""


_CONTAINERS = (
    ast.List, ast.Tuple, ast.Set, ast.Dict, ast.ListComp, ast.SetComp, ast.DictComp,
    ast.GeneratorExp, ast.Constant, ast.Lambda, ast.JoinedStr,
)  # fmt: skip
_CONTAINER_CALLS = frozenset(
    {"list", "tuple", "dict", "set", "frozenset", "sorted", "reversed", "zip", "map", "filter"}
)


def _one_value(value: ast.expr | None) -> bool:
    """Whether an expression may be one array (``[f(t) for t in ts]`` is several: its last
    call's result is not what the name binds)."""
    if value is None or isinstance(value, _CONTAINERS):
        return False
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
        return value.func.id not in _CONTAINER_CALLS
    return True


def _targets(st: ast.stmt) -> tuple[tuple[str | None, ...] | None, bool]:
    if isinstance(st, ast.Assign):
        target: ast.expr = st.targets[0]  # ``a = b = f(x)``: the first name
    elif isinstance(st, (ast.AugAssign, ast.AnnAssign)) and getattr(st, "value", None):
        target = st.target
    else:
        return None, False
    if isinstance(target, ast.Name):
        if isinstance(st, ast.AugAssign) or _one_value(st.value):
            return (target.id,), True
        return None, False
    if isinstance(target, (ast.Tuple, ast.List)):
        names: list[str | None] = []
        for elt in target.elts:
            if isinstance(elt, (ast.Starred, ast.Tuple, ast.List)):
                return None, False  # a starred name's count, a nested unpacking: not seen
            names.append(elt.id if isinstance(elt, ast.Name) and elt.id != "_" else None)
        if any(names):
            return tuple(names), False
    return None, False


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip(" \t"))


_Index = dict[int, _Stmt]


class SourceReader:
    """The statements of the user's files (the reader lives as long as one generated
    function or package). Only the ``def`` holding a line is parsed (a model file of
    thousands of lines is read in its few functions that made nodes); the whole file where
    that cannot be done."""

    def __init__(self) -> None:
        self._lines: dict[str, list[str]] = {}
        self._blocks: dict[tuple[str, int], _Index | None] = {}
        """(file, the line of the ``def`` parsed; 0: the whole file) -> its statements by line."""
        self._def_of: dict[tuple[str, int], int] = {}

    def statement(self, loc: SourceLoc | None) -> _Stmt | None:
        """The statement holding ``loc``'s line, or None (no source, or it cannot be read
        or no longer reads as when traced)."""
        if loc is None:
            return None
        lines = self._lines.get(loc.file)
        if lines is None:
            lines = self._lines[loc.file] = linecache.getlines(loc.file)
        if not 0 < loc.line <= len(lines):
            return None
        if loc.code and lines[loc.line - 1].strip() != loc.code:
            return None  # the file changed since the trace
        at = (loc.file, loc.line)
        start = self._def_of.get(at)
        if start is None:
            start = self._def_of[at] = _enclosing_def(lines, loc.line)
        index = self._block(loc.file, lines, start)
        found = index.get(loc.line) if index is not None else None
        if found is None and start:  # not the block it seemed to be in: the whole file
            index = self._block(loc.file, lines, 0)
            found = index.get(loc.line) if index is not None else None
        return found

    def _block(self, file: str, lines: list[str], start: int) -> _Index | None:
        key = (file, start)
        if key not in self._blocks:
            self._blocks[key] = self._parse(file, lines, start)
        return self._blocks[key]

    def _parse(self, file: str, lines: list[str], start: int) -> _Index | None:
        """The statements of the ``def`` at line ``start`` (0: of the whole file)."""
        if start:
            cut = _indent(lines[start - 1])
            end = start
            while end < len(lines):
                text = lines[end]
                body = text.strip()
                if body and not body.startswith(("#", ")", "]", "}")) and _indent(text) <= cut:
                    break
                end += 1
            block = [_dedent(t, cut) for t in lines[start - 1 : end]]
        else:
            block = lines
        try:
            tree = ast.parse("".join(block), filename=file)
        # Not Python we can parse (a block cut wrong, a notebook's cell magic, another
        # version's syntax, a null byte): no names from it, the code is written without.
        except (SyntaxError, ValueError):
            return None
        index: _Index = {}
        shift = max(start - 1, 0)
        _visit(tree, file, shift, (shift + 1, shift + len(block)), index)
        _name_items(tree, shift, index)
        return index


def _dedent(text: str, cut: int) -> str:
    """``text`` without its first ``cut`` columns where they are blank (a line of a string
    that starts further left stays as it is; a blank line stays a line)."""
    if not text.strip():
        return "\n"
    return text[cut:] if text[:cut].isspace() else text


def _enclosing_def(lines: list[str], line: int) -> int:
    """The line of the nearest ``def`` above ``line`` indented less than it (the function
    it is in), or 0."""
    ind = _indent(lines[line - 1])
    for k in range(line - 1, 0, -1):
        text = lines[k - 1]
        if text.lstrip().startswith(("def ", "async def ")) and _indent(text) < ind:
            return k
    return 0


_SIMPLE = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.Return)


def _visit(node: ast.AST, file: str, shift: int, scope: tuple[int, int], index: _Index) -> None:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.stmt):
            first = child.lineno + shift
            end = (child.end_lineno or child.lineno) + shift
            body = getattr(child, "body", None)
            if isinstance(body, list) and body and isinstance(body[0], ast.AST):
                end = min(end, getattr(body[0], "lineno", end) + shift - 1)  # a header's lines
            targets, single = _targets(child) if isinstance(child, _SIMPLE) else (None, False)
            st = _Stmt(file, (first, child.col_offset), scope, targets, single)
            for line in range(first, end + 1):
                index[line] = st
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                scope_in = (first, (child.end_lineno or child.lineno) + shift)
                _visit(child, file, shift, scope_in, index)
            elif not isinstance(child, _SIMPLE):
                _visit(child, file, shift, scope, index)
        elif isinstance(child, (ast.excepthandler, ast.match_case)):
            _visit(child, file, shift, scope, index)


def _item_names(body: list[ast.stmt]) -> dict[str, dict[int, str | None]]:
    """Name -> index -> the name a statement of ``body`` (not of a nested ``def``) gives
    that item of it (``a, b = name``; ``a = name[k]``); None where two disagree."""
    out: dict[str, dict[int, str | None]] = {}

    def note(var: str, k: int, name: str) -> None:
        have = out.setdefault(var, {})
        have[k] = name if have.get(k, name) == name else None

    todo = list(body)
    while todo:
        st = todo.pop()
        if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if isinstance(st, ast.Assign) and len(st.targets) == 1:
            target, value = st.targets[0], st.value
            if isinstance(value, ast.Name) and isinstance(target, (ast.Tuple, ast.List)):
                for k, elt in enumerate(target.elts):
                    if isinstance(elt, ast.Starred):
                        break
                    if isinstance(elt, ast.Name) and elt.id != "_":
                        note(value.id, k, elt.id)
            elif (
                isinstance(target, ast.Name)
                and isinstance(value, ast.Subscript)
                and isinstance(value.value, ast.Name)
            ):
                index = value.slice
                if isinstance(index, ast.UnaryOp) and isinstance(index.op, ast.USub):
                    k = index.operand.value if isinstance(index.operand, ast.Constant) else None
                    k = -k if type(k) is int else None
                else:
                    k = index.value if isinstance(index, ast.Constant) else None
                if type(k) is int:
                    note(value.value.id, k, target.id)
        for field in ("body", "orelse", "finalbody", "handlers"):
            todo += [c for c in getattr(st, field, ()) if isinstance(c, ast.AST)]
    return out


def _name_items(tree: ast.Module, shift: int, index: _Index) -> None:
    """Give each single-name assignment of a call's or attribute's result the names its
    function gives that name's items (:attr:`_Stmt.items`)."""
    defs = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for fn in defs:
        names = _item_names(fn.body)
        if not names:
            continue
        lines = range(fn.lineno + shift, (fn.end_lineno or fn.lineno) + shift + 1)
        for st in ast.walk(fn):
            if not (isinstance(st, ast.Assign) and len(st.targets) == 1):
                continue
            target = st.targets[0]
            if not isinstance(target, ast.Name) or target.id not in names:
                continue
            if not isinstance(st.value, (ast.Call, ast.Attribute)):
                continue  # x.shape[:-1]: its items are not the call's
            found = index.get(st.lineno + shift)
            if found is None or not found.single or found.scope[0] not in lines:
                continue
            items = tuple((k, n) for k, n in sorted(names[target.id].items()) if n)
            index_lines = [ln for ln, s in index.items() if s is found]
            for ln in index_lines:
                index[ln] = replace(found, items=items)


def name_hints(graph: Graph, reader: SourceReader | None = None) -> dict[int, str]:
    """Value id -> the name the user's assignment gives it, for the values of ``graph``
    that the user's lines assign (see the module's docstring). Names are the user's
    identifiers as written; the caller makes them unique and keeps them off builtins."""
    reader = reader or SourceReader()
    nodes = graph.nodes
    first_read: dict[int, int] = {}  # value id -> the first node reading it
    for j, n in enumerate(nodes):
        for v in n.inputs():
            first_read.setdefault(v.id, j)
    hints: dict[int, str] = {}
    running: dict[tuple[str, tuple[int, int]], tuple[_Stmt, list[int]]] = {}
    for j, n in enumerate(nodes):
        st = reader.statement(n.meta.source)
        if st is None:
            continue
        scope = (st.file, st.scope)
        now = running.get(scope)
        if now is not None and now[0].key != st.key:
            del running[scope]
            _name_execution(graph, now[0], now[1], j, first_read, hints)
            now = None
        if st.targets is None:
            continue
        if now is None:
            running[scope] = (st, [j])
        else:
            now[1].append(j)
    for st, run in running.values():
        _name_execution(graph, st, run, len(nodes), first_read, hints)
    return hints


def _name_execution(
    graph: Graph,
    st: _Stmt,
    run: list[int],
    end: int,
    first_read: dict[int, int],
    hints: dict[int, str],
) -> None:
    """Name the value(s) that one execution of ``st`` (its nodes ``run``, over before node
    ``end``) binds."""
    assert st.targets is not None
    nodes = graph.nodes
    results = [
        j
        for j in run
        if nodes[j].outputs and all(first_read.get(o.id, end) >= end for o in nodes[j].outputs)
    ]  # its results nothing read while it ran
    if not results:
        return
    last = nodes[results[-1]]
    n = len(st.targets)
    if st.single:
        if last.out_tree.kind == "leaf":
            _hint(hints, last.outputs[0].id, st.targets[0])
        elif st.items and _flat_sequence(last):  # input_shape = x.size(); b, s = input_shape
            count = len(last.outputs)
            named: dict[int, str | None] = {}
            for k, name in st.items:  # s[-1] and s[1] of two items are one item
                if -count <= k < count:
                    i = k % count
                    named[i] = name if named.get(i, name) == name else None
            for i, name in named.items():
                _hint(hints, last.outputs[i].id, name)
        return
    if _flat_sequence(last):
        if len(last.outputs) == n:  # ``a, b = x.chunk(2)``: one call's results
            for v, name in zip(last.outputs, st.targets):
                _hint(hints, v.id, name)
        return
    tail = [nodes[j] for j in results[-n:]]  # ``q, k = f(x), g(y)``: a call each
    if len(tail) == n and all(t.out_tree.kind == "leaf" for t in tail):
        for t, name in zip(tail, st.targets):
            _hint(hints, t.outputs[0].id, name)


def _flat_sequence(node: Node) -> bool:
    """Whether ``node`` returns a tuple or list of arrays or numbers (no nesting)."""
    tree = node.out_tree
    return tree.kind in ("tuple", "list", "namedtuple") and all(
        c.kind == "leaf" for c in tree.children
    )


def _hint(hints: dict[int, str], vid: int, name: str | None) -> None:
    if name is not None and name.isidentifier():
        hints[vid] = name
