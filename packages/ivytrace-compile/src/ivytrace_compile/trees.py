"""The graph's pytrees in the generated text: the signature and the unpacking of its
inputs (with checks of static leaves), a node's results assigned by their tree, and the
output built back into the traced structure."""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Iterator
from typing import Any

from ivytrace_ir import Node, TensorSpec, TreeDef, Value, is_structseq

from ._naming import is_name, sanitize
from ._runtime import LineInfo, describe_spec, native_type
from .errors import CompileError


class Trees:
    """Signature, inputs, node results and output (a mixin of ``_Codegen``)."""

    # ------------------------------------------------------------ signature and inputs
    def signature(self) -> str:
        tree = self.g.in_tree
        ok = (
            tree.kind == "tuple"
            and len(tree.children) == 2
            and tree.children[0].kind == "tuple"
            and tree.children[1].kind == "dict"
        )
        if not ok:
            raise CompileError(
                f"graph {self.g.meta.name!r}: in_tree must be a tuple (args tuple, kwargs dict), "
                f"got {tree}"
            )
        args_tree, kw_tree = tree.children
        for k in kw_tree.keys:
            if not is_name(k):
                raise CompileError(
                    f"graph {self.g.meta.name!r}: keyword input {k!r} is not a Python identifier"
                )
            self.names.claim(k)
        n = len(args_tree.children)
        given = self.g.arg_names if len(self.g.arg_names) == n else ()
        pos: list[str] = []
        named = bool(given) or n == 0
        for i in range(n):
            if given and self.names.claim(given[i]):
                pos.append(given[i])
            else:
                named = False
                pos.append(self.names.fresh(f"a{i}"))
        self.locals.update(pos)
        self.locals.update(kw_tree.keys)
        self.params = pos + list(kw_tree.keys)
        params = list(pos)
        if pos and not named:
            params.append("/")
        if kw_tree.keys:
            params.append("*")
            params.extend(kw_tree.keys)
        return ", ".join(params)

    def inputs(self) -> None:
        args_tree, kw_tree = self.g.in_tree.children
        offset = 0
        tops = list(zip(self.params, (*args_tree.children, *kw_tree.children)))
        for name, sub in tops:
            self._input(sub, name, name, offset)
            offset += sub.num_leaves

    def _leaf_name(self, offset: int, hint: str) -> str:
        names = self.g.input_names
        if offset < len(names) and is_name(names[offset]):
            return self.local(names[offset], hint)
        return self.local(hint)

    def _child_local(self, child: TreeDef, offset: int, hint: str) -> str:
        if child.kind == "leaf":
            return self._leaf_name(offset, hint)
        return self.local(hint)

    def _input_info(self, path: str, tree: TreeDef) -> LineInfo:
        return LineInfo("input", f"input {path}", "", structure=str(tree))

    def _input(self, tree: TreeDef, holder: str, path: str, offset: int) -> None:
        """Unpack the object in local ``holder`` (whose traced structure is ``tree``)."""
        kind = tree.kind
        if kind == "leaf":
            self.var[self.g.inputs[offset].id] = holder
            self._check_leaf(offset, holder, path)
            return
        if kind in ("none", "static"):
            self._check_static(tree, holder, path)
            return
        info = self._input_info(path, tree)
        children = tree.children
        offsets = []
        o = offset
        for c in children:
            offsets.append(o)
            o += c.num_leaves
        if kind in ("tuple", "list", "namedtuple"):
            targets = [
                self._child_local(c, offsets[j], f"{holder}_{j}") for j, c in enumerate(children)
            ]
            if not targets:
                self.emit(f"() = {holder}", info, reads=[holder])
            else:
                lhs = ", ".join(targets) + ("," if len(targets) == 1 else "")
                self.emit(f"{lhs} = {holder}", info, defines=targets, reads=[holder])
            for j, c in enumerate(children):
                self._input(c, targets[j], f"{path}[{j}]", offsets[j])
            return
        # dict, mapping, dataclass: one line per key
        for j, (key, c) in enumerate(zip(tree.keys, children)):
            if kind == "dataclass":
                access, cpath = f"{holder}.{key}", f"{path}.{key}"
            else:
                access, cpath = f"{holder}[{self.arg(key).text}]", f"{path}[{key!r}]"
            hint = key if is_name(key) else f"{holder}_{j}"
            name = self._child_local(c, offsets[j], hint)
            self.emit(
                f"{name} = {access}", self._input_info(cpath, c), defines=[name], reads=[holder]
            )
            self._input(c, name, cpath, offsets[j])

    def _check_static(self, tree: TreeDef, name: str, path: str) -> None:
        mismatch = self.helper("mismatch")
        if tree.kind == "none":
            cond, expected = f"{name} is not None", "None"
        else:
            v = tree.value
            t = type(v)
            expected = self.arg(v).text
            if v is None or t is bool or v is Ellipsis:
                cond = f"{name} is not {expected}"
            elif t in (int, float, complex, str, bytes):
                typ, tname = self.builtin("type"), self.builtin(t.__name__)
                if t is float and math.isnan(v):
                    cond = f"{typ}({name}) is not {tname} or {name} == {name}"
                else:
                    cond = f"{typ}({name}) is not {tname} or {name} != {expected}"
            else:
                cond = f"{name} is not {expected} and {name} != {expected}"
        self.emit(
            f"if {cond}: raise {mismatch}({path!r}, {expected}, {name})",
            self._input_info(path, tree),
            reads=[name],
        )

    def _check_leaf(self, index: int, name: str, path: str) -> None:
        """Array input ``index`` (in local ``name``) must still be an array of the traced
        framework: ``if x.__class__ is not T`` (one attribute read per call), and only where
        that fails the ``input_check`` helper looks closer and raises :class:`InputMismatch`
        naming the input (``None``, a Python number, another framework's array). Sizes, rank
        and dtype stay free (the seeds: no restriction on the inputs' shape or dtype); a node
        that fails while such an input is held is reported by ``on_error``."""
        spec = self.g.inputs[index].spec
        if not isinstance(spec, TensorSpec):
            return
        cls = native_type(spec)
        info = LineInfo(
            "input", f"input {path}", "", structure=describe_spec(spec), leaf=index, local=name
        )
        if cls is None:
            return
        tname = self.bind(
            ("array type", spec.framework),
            sanitize(cls.__name__, "T"),
            cls,
            f"{cls.__module__}.{cls.__qualname__}",
        )
        check = self.helper("input_check")
        self.emit(
            f"if {name}.__class__ is not {tname}: {check}({index}, {name}, {path!r})",
            info,
            reads=[name],
        )

    def _out_base(self, node: Node) -> str:
        if node.op == "ivytrace.getattr":
            return str(node.args[1])
        if node.op == "ivytrace.getitem":
            key = node.args[1] if len(node.args) > 1 else None
            return key if is_name(key) else "item"
        return sanitize(node.op.rsplit(".", 1)[-1], "v")

    def _assign(self, i: int, node: Node, expr: str, info: LineInfo, comment: str) -> None:
        outs, tree = node.outputs, node.out_tree
        base = self._out_base(node)
        if not any(o.id in self.used for o in outs):
            self.emit(expr, info, comment=comment)
            return
        if tree.kind == "leaf":
            name = self.local(self.hints.get(outs[0].id, base))
            self.var[outs[0].id] = name
            self.emit(f"{name} = {expr}", info, defines=[name], comment=comment)
            return
        leaves = iter(outs)
        defined: list[str] = []
        target = self._seq_target(tree, leaves, base, defined)
        if target is not None:
            if target.startswith("(") and target.endswith(")") and not target.endswith(",)"):
                target = target[1:-1]  # ``a, b = ...`` rather than ``(a, b) = ...``
            self.emit(f"{target} = {expr}", info, defines=defined, comment=comment)
            return
        tmp = self.local(f"{base}_out")
        self.emit(f"{tmp} = {expr}", info, defines=[tmp], comment=comment)
        for path, key, v in self._leaf_paths(tree, iter(outs)):
            hint = self.hints.get(v.id)
            name = self.local(hint) if hint else self.local(key if is_name(key) else base, base)
            self.var[v.id] = name
            self.emit(f"{name} = {tmp}{path}", info, defines=[name], reads=[tmp])

    def _seq_target(
        self, tree: TreeDef, leaves: Iterator[Value], base: str, defined: list[str]
    ) -> str | None:
        """An assignment target (``a, (b, c)``) when the tree is all sequences, else None."""
        kind = tree.kind
        if kind == "leaf":
            v = next(leaves)
            name = self.local(self.hints.get(v.id, base))
            self.var[v.id] = name
            defined.append(name)
            return name
        if kind in ("static", "none"):
            name = self.local("_unused")
            defined.append(name)
            return name
        if kind not in ("tuple", "list", "namedtuple"):
            return None
        keys = tree.keys if kind == "namedtuple" else ()
        parts = []
        for j, c in enumerate(tree.children):
            sub = keys[j] if j < len(keys) and is_name(keys[j]) else base
            t = self._seq_target(c, leaves, sub, defined)
            if t is None:
                return None
            parts.append(t)
        return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"

    def _leaf_paths(
        self, tree: TreeDef, leaves: Iterator[Value], path: str = "", key: Any = None
    ) -> Iterator[tuple[str, Any, Value]]:
        kind = tree.kind
        if kind == "leaf":
            yield path, key, next(leaves)
        elif kind in ("tuple", "list", "namedtuple"):
            keys = tree.keys if kind == "namedtuple" else ()
            for j, c in enumerate(tree.children):
                sub = keys[j] if j < len(keys) else key
                yield from self._leaf_paths(c, leaves, f"{path}[{j}]", sub)
        elif kind == "dataclass":
            for k, c in zip(tree.keys, tree.children):
                yield from self._leaf_paths(c, leaves, f"{path}.{k}", k)
        elif kind in ("dict", "mapping"):
            for k, c in zip(tree.keys, tree.children):
                yield from self._leaf_paths(c, leaves, f"{path}[{self.arg(k).text}]", k)

    # ------------------------------------------------------------ output
    def tree_expr(self, tree: TreeDef, leaves: Iterator[Any]) -> str:
        kind = tree.kind
        if kind == "leaf":
            return self.arg(next(leaves)).text
        if kind == "static":
            return self.arg(tree.value).text
        if kind == "none":
            return "None"
        parts = [self.tree_expr(c, leaves) for c in tree.children]
        cls = tree.type
        if kind == "tuple" or (kind == "namedtuple" and cls is None):
            return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"
        if kind == "list":
            return "[" + ", ".join(parts) + "]"
        pairs = list(zip(tree.keys, parts))
        if kind == "dict" or cls is None:
            return "{" + ", ".join(f"{self.arg(k).text}: {p}" for k, p in pairs) + "}"
        name = self._bind_class(cls)
        if kind == "namedtuple" and is_structseq(cls):  # torch.return_types: one sequence
            return f"{name}(({', '.join(parts)}{',' if len(parts) == 1 else ''}))"
        if kind == "namedtuple":
            return f"{name}({', '.join(parts)})"
        if (
            kind == "mapping"
            and issubclass(cls, OrderedDict)
            and cls.__init__ is OrderedDict.__init__
        ):
            items = ", ".join(f"({self.arg(k).text}, {p})" for k, p in pairs)
            return f"{name}([{items}])"
        if all(is_name(k) for k in tree.keys):
            return f"{name}({', '.join(f'{k}={p}' for k, p in pairs)})"
        items = ", ".join(f"{self.arg(k).text}: {p}" for k, p in pairs)
        return f"{name}(**{{{items}}})"

    def output(self) -> None:
        expr = self.tree_expr(self.g.out_tree, iter(self.g.outputs))
        self.emit(f"return {expr}", LineInfo("output", "building the output", ""))
