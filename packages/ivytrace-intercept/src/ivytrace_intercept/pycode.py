"""Code run while tracing: ``int()``, ``float()``, ``len()``, ``math`` and float literals on
sizes stay tracked.

CPython's ``int(n)`` always gives an exact ``int`` (an ``int`` subclass that ``__int__``
returns is copied), ``float(n)`` an exact ``float``, ``math.sqrt(n)`` reads ``__float__``,
and ``0.5 * n`` or ``1.0 - n`` are computed by ``float``'s own arithmetic, which reads an
``int`` subclass on its right without asking it. No method of a tracked scalar sees these,
so a size passed through them would leave the graph (a guard), and library code such as an
image pyramid (``int(float(h) / 2)``), a centre crop (``int(round((h - c) / 2.0))``) or an
affine grid (``(1.0 - w) * 0.5``) would refuse every new image size.

While a trace runs, :func:`tracking_code` gives the functions the traced code can reach a
rewritten ``__code__`` and puts the original back when the trace ends (also when it raises):

- a call of the global ``int``, ``float``, ``len`` or ``math.sqrt`` (a ``LOAD_GLOBAL`` with its NULL
  bit, that is the name as a callee; never ``isinstance(x, int)``, ``map(int, xs)`` nor
  ``torch.int``) loads a stand-in: a tracked scalar in, a tracked scalar out (``int`` of a
  tracked float is recorded as ``math.trunc``, ``float`` of a tracked int as ``n / 1``,
  ``len`` of an array is its tracked first size, as ``x.shape[0]``);
  exactly the builtin for anything else;
- the global ``math`` module read for an attribute (``math.sqrt(n)``) loads a view of it
  whose ``sqrt`` is that stand-in (every other name is ``math``'s own);
- a float literal that is the left operand of a binary operation or a comparison
  (``(1.0 - w) * 0.5``, ``0.5 * w``, ``0.5 < w``) loads a float that hands a tracked int on
  its right to the int's reflected method (tracked, or guarded for a comparison); its result
  is always a plain float or the tracked result, so the literal never escapes.

The rewrite keeps the code's length: the ``LOAD_GLOBAL`` and its inline caches become
``PUSH_NULL``, ``LOAD_CONST`` of a constant appended to ``co_consts`` and ``NOP``s; the
literal's ``LOAD_CONST`` takes the appended constant's index. Jump offsets, the exception
table and the line table stay valid; a site whose rewrite does not fit (an index that would
need a longer ``EXTENDED_ARG``) is left as it is. Nested code objects are not rewritten: a
function made while tracing would keep the rewritten code after the trace.

Which functions: those of the traced callable's package (its module's top-level package),
of the packages its globals and closure name, and of every package reached from those
through module globals that itself works with arrays (one of its modules holds a framework
module); never the frameworks, the standard library, ivytrace or its tests' runner.
Functions are those a module's globals hold (and ``__wrapped__`` chains), and the methods,
static and class methods and properties of classes the package defines.

Process state: :data:`_REWRITES` (each code object's rewritten copy, by identity, dropped
with the code object) and :data:`_SCANS` (each module's functions with something to
rewrite, weakly, and the packages it names), :data:`_REACH` (the functions reached from a
set of root packages) and :data:`_INDEX` (the loaded modules by package); see
docs/architecture.md.
"""

from __future__ import annotations

import builtins
import contextlib
import dis
import functools
import math
import sys
import types
import weakref
from collections.abc import Iterator
from typing import Any

from .scalars import FloatOperand, TrackedFloat, TrackedInt, tracked_call

__all__ = ["reachable_functions", "rewrite_code", "tracking_code"]

_SUPPORTED = sys.version_info[:2] == (3, 11)
"""The bytecode layout the rewrite knows (3.11's ``LOAD_GLOBAL`` NULL bit, ``LOAD_METHOD``,
``PRECALL``); elsewhere :func:`tracking_code` rewrites nothing and sizes are guarded."""


class _Opcodes(dict[str, int]):
    """``dis.opmap``; a name another Python version lacks maps to a number no code holds."""

    def __missing__(self, name: str) -> int:
        return -1 - len(name) - 100 * sum(map(ord, name))


_OP = _Opcodes(dis.opmap)
_CACHES = getattr(dis, "_inline_cache_entries", None) if _SUPPORTED else None
_LOAD_GLOBAL = _OP["LOAD_GLOBAL"]
_LOAD_CONST = _OP["LOAD_CONST"]
_EXTENDED_ARG = _OP["EXTENDED_ARG"]
_PUSH_NULL = _OP["PUSH_NULL"]
_NOP = _OP["NOP"]
_ATTR_READS = frozenset({_OP["LOAD_ATTR"], _OP["LOAD_METHOD"]})
_LOAD_GLOBAL_BYTE = bytes([_LOAD_GLOBAL % 256])
_OPERATIONS = frozenset({_OP["BINARY_OP"], _OP["COMPARE_OP"]})


# ---------------------------------------------------------------- stand-ins
def _recording(x: Any) -> bool:
    return x._rec.recording  # type: ignore[no-any-return]


def _int(*args: Any, **kwargs: Any) -> Any:
    """``int`` for code rewritten while tracing: ``int(n)`` of a tracked size is ``n``,
    ``int(x)`` of a tracked float is ``math.trunc(x)`` (tracked); anything else is ``int``'s."""
    if len(args) == 1 and not kwargs:
        x = args[0]
        t = type(x)
        if t is TrackedInt and _recording(x):
            return x
        if t is TrackedFloat and _recording(x):
            return x.__trunc__()
    return int(*args, **kwargs)


def _float(*args: Any, **kwargs: Any) -> Any:
    """``float`` for code rewritten while tracing: ``float(x)`` of a tracked float is ``x``,
    ``float(n)`` of a tracked size is ``n / 1`` (the same correctly rounded float, tracked);
    anything else is ``float``'s."""
    if len(args) == 1 and not kwargs:
        x = args[0]
        t = type(x)
        if t is TrackedFloat and _recording(x):
            return x
        if t is TrackedInt and _recording(x):
            return x._rec.scalar_op("operator.truediv", (x, 1), int.__int__(x) / 1)
    return float(*args, **kwargs)


def _sqrt(*args: Any) -> Any:
    """``math.sqrt`` for code rewritten while tracing: tracked for a tracked scalar."""
    return tracked_call("math.sqrt", math.sqrt, *args)


_ARRAY_ROOTS = frozenset({"torch", "tensorflow", "jax", "jaxlib", "numpy", "keras"})


def _len(obj: Any, /) -> Any:
    """``len`` for code rewritten while tracing: ``len(x)`` of an array whose first size is
    tracked is that size (as ``x.shape[0]`` is); anything else is ``len``'s (a 0-d array
    raises as it does, and an array the graph does not know gives a plain int)."""
    t = type(obj)
    if t.__module__.partition(".")[0] in _ARRAY_ROOTS:
        shape = getattr(obj, "shape", None)
        if isinstance(shape, tuple) and len(shape) > 0:
            n = shape[0]
            if type(n) is TrackedInt and _recording(n):
                return n
    return len(obj)


_len.__name__ = _len.__qualname__ = "len"
_int.__name__ = _int.__qualname__ = "int"
_float.__name__ = _float.__qualname__ = "float"
_sqrt.__name__ = _sqrt.__qualname__ = "sqrt"

_CALLEES: tuple[tuple[Any, Any], ...] = (
    (int, _int),
    (float, _float),
    (len, _len),
    (math.sqrt, _sqrt),
)
"""What a global called by name is replaced with (by the object the name resolves to, matched
by identity)."""
_BUILTIN_CALLEES = frozenset(
    o.__name__ for o, _ in _CALLEES if getattr(builtins, o.__name__, None) is o
)
"""The names of the replaced callees that are builtins (``int``, ``float``, ``len``): replaced
where no module global shadows them."""


class _Math:
    """The ``math`` module as rewritten code reads it: ``sqrt`` is the tracked stand-in,
    every other attribute is ``math``'s."""

    __slots__ = ()

    def __getattr__(self, name: str) -> Any:
        return _sqrt if name == "sqrt" else getattr(math, name)

    def __repr__(self) -> str:
        return repr(math)


_MATH = _Math()


# ---------------------------------------------------------------- the rewrite
class _Site:
    """One instruction of a code object that may be rewritten."""

    __slots__ = ("arg", "kind", "start", "units")

    def __init__(self, kind: str, start: int, units: int, arg: int) -> None:
        # "call" (a global as callee), "attr" / "attr+null" (a global read for ``.x``, with
        # the NULL a call of the attribute needs), "literal"
        self.kind = kind
        self.start = start  # code unit of its first EXTENDED_ARG or of the instruction
        self.units = units  # code units it spans, inline caches included
        self.arg = arg  # the name index (globals) or the constant index (literals)


_REWRITES: dict[int, tuple[weakref.ref[types.CodeType], tuple[tuple[str, Any], ...], Any]] = {}
"""``id`` of a code object -> (a weak reference to it, the global names it rewrites with
what each resolved to, the rewritten code or None), reused while the names resolve to the
same objects; an entry goes with its code object. By identity, not a ``WeakKeyDictionary``:
code objects hash and compare by content, which is slow and makes equal code objects of
two functions (with other globals) one key."""


def _forget(key: int) -> Any:
    # the table itself, not the module's name for it: at interpreter exit the module's
    # globals are cleared to None before the last code objects (and these callbacks) go
    table = _REWRITES

    def callback(ref: Any) -> None:
        hit = table.get(key)
        if hit is not None and hit[0] is ref:
            del table[key]

    return callback


def _instructions(co_code: bytes) -> list[tuple[int, int, int, int]]:
    """(start unit, units spanned with caches, opcode, full argument) of each instruction."""
    out = []
    i, n = 0, len(co_code) // 2
    start, ext = 0, 0
    while i < n:
        op, arg = co_code[2 * i], co_code[2 * i + 1]
        if op == _EXTENDED_ARG:
            if not ext:
                start = i
            ext = (ext | arg) << 8
            i += 1
            continue
        if not ext:
            start = i
        end = i + 1 + _CACHES[op]  # type: ignore[index]
        out.append((start, end - start, op, ext | arg))
        ext = 0
        i = end
    return out


_PUSH_POP = {
    **{_OP[n]: (0, 1) for n in ("LOAD_FAST", "LOAD_CONST", "LOAD_DEREF", "LOAD_CLOSURE",
                                 "LOAD_NAME", "LOAD_CLASSDEREF", "PUSH_NULL")},
    **{_OP[n]: (1, 1) for n in ("LOAD_ATTR", "UNARY_NEGATIVE", "UNARY_POSITIVE",
                                 "UNARY_INVERT", "UNARY_NOT")},
    **{_OP[n]: (2, 1) for n in ("BINARY_OP", "COMPARE_OP", "BINARY_SUBSCR")},
    _OP["LOAD_METHOD"]: (1, 2), _OP["PRECALL"]: (0, 0), _OP["KW_NAMES"]: (0, 0),
    _OP["NOP"]: (0, 0),
}  # fmt: skip
"""(popped, pushed) of the straight-line instructions an operand is made of."""
_SIZED = {_OP["CALL"]: 2, _OP["BUILD_TUPLE"]: 0, _OP["BUILD_LIST"]: 0}
"""Instructions popping their argument (plus this many) and pushing one value."""


def _is_left_operand(instrs: list[tuple[int, int, int, int]], k: int) -> bool:
    """Whether the value instruction ``k`` pushes is the left operand of a ``BINARY_OP`` or
    ``COMPARE_OP`` reached by straight-line code (the right operand built in between)."""
    depth = 1  # values on the stack from ours up
    for _, _, op, arg in instrs[k + 1 :]:
        if op in _OPERATIONS and depth == 2:
            return True
        if op == _LOAD_GLOBAL:
            pops, pushes = 0, 1 + (arg & 1)
        elif op in _SIZED:
            pops, pushes = arg + _SIZED[op], 1
        elif op in _PUSH_POP:
            pops, pushes = _PUSH_POP[op]
        else:
            return False
        if pops >= depth:
            return False
        depth += pushes - pops
    return False


def _sites(code: types.CodeType) -> tuple[_Site, ...]:
    if not any(type(c) is float and math.isfinite(c) for c in code.co_consts):
        return _global_sites(code.co_code)
    return _decoded_sites(code)


def _global_sites(co_code: bytes) -> tuple[_Site, ...]:
    """The ``LOAD_GLOBAL`` sites of :func:`_decoded_sites`, found without decoding every
    instruction: an opcode byte is never a cache entry's (3.11's ``co_code`` holds caches as
    zeros) nor an argument, so each ``LOAD_GLOBAL`` is where its byte sits at an even
    offset; its ``EXTENDED_ARG`` prefixes are read backwards. Code with no finite float
    constant has no literal site, and most code has none (BERT's conversion scans 1,389
    code objects with a global to look at, once per process)."""
    ops = co_code[0::2]
    n = len(ops)
    caches = _CACHES[_LOAD_GLOBAL]  # type: ignore[index]
    out = []
    i = ops.find(_LOAD_GLOBAL_BYTE)
    while i != -1:
        start, arg, shift = i, co_code[2 * i + 1], 8
        while start > 0 and ops[start - 1] == _EXTENDED_ARG:
            start -= 1
            arg |= co_code[2 * start + 1] << shift
            shift += 8
        end = i + 1 + caches
        nxt = end
        while nxt < n and ops[nxt] == _EXTENDED_ARG:
            nxt += 1
        site = _global_site(start, end - start, arg, ops[nxt] if nxt < n else None)
        if site is not None:
            out.append(site)
        i = ops.find(_LOAD_GLOBAL_BYTE, end)
    return tuple(out)


def _global_site(start: int, units: int, arg: int, next_op: int | None) -> _Site | None:
    """The site of a ``LOAD_GLOBAL`` followed by ``next_op``: read for an attribute
    (``math.sqrt``; with the NULL bit when the attribute is then called: ``NULL + math`` and
    ``LOAD_ATTR sqrt``), or called by name; None for any other use of the global."""
    if next_op in _ATTR_READS:
        return _Site("attr" if not arg & 1 else "attr+null", start, units, arg >> 1)
    return _Site("call", start, units, arg >> 1) if arg & 1 else None


def _decoded_sites(code: types.CodeType) -> tuple[_Site, ...]:
    instrs = _instructions(code.co_code)
    consts = code.co_consts
    out = []
    for k, (start, units, op, arg) in enumerate(instrs):
        if op == _LOAD_GLOBAL:
            site = _global_site(
                start, units, arg, instrs[k + 1][2] if k + 1 < len(instrs) else None
            )
            if site is not None:
                out.append(site)
        elif (
            op == _LOAD_CONST
            and type(consts[arg]) is float
            and math.isfinite(consts[arg])
            and _is_left_operand(instrs, k)
        ):
            out.append(_Site("literal", start, units, arg))
    return tuple(out)


def _resolve(name: str, globals_: dict[str, Any]) -> Any:
    if name in globals_:
        return globals_[name]
    b = globals_.get("__builtins__", builtins)
    return b.get(name) if isinstance(b, dict) else getattr(b, name, None)


def _replacement(site: _Site, code: types.CodeType, globals_: dict[str, Any]) -> Any:
    """The object a site loads instead, or None to leave it."""
    if site.kind == "literal":
        return FloatOperand(code.co_consts[site.arg])
    obj = _resolve(code.co_names[site.arg], globals_)
    if site.kind == "call":
        return next((new for old, new in _CALLEES if obj is old), None)
    return _MATH if obj is math else None


def _load_const(units: int, index: int, push_null: bool) -> list[int] | None:
    """``units`` code units that push the constant ``index`` (after a NULL), or None."""
    ext = []
    rest = index >> 8
    while rest:
        ext.insert(0, rest & 0xFF)
        rest >>= 8
    body = [_PUSH_NULL, 0] if push_null else []
    for e in ext:
        body += [_EXTENDED_ARG, e]
    body += [_LOAD_CONST, index & 0xFF]
    if len(body) // 2 > units:
        return None
    return body + [_NOP, 0] * (units - len(body) // 2)


def rewrite_code(code: types.CodeType, globals_: dict[str, Any]) -> types.CodeType | None:
    """``code`` with its ``int``/``float``/``math.sqrt`` calls, ``math`` reads and left float
    literals loading the tracked-aware objects (see the module's doc), or None where
    nothing is rewritten. Cached by code object while its rewritten names resolve alike."""
    if not _SUPPORTED:
        return None
    key = id(code)
    hit = _REWRITES.get(key)
    if (
        hit is not None
        and hit[0]() is code
        and all(_resolve(n, globals_) is obj for n, obj in hit[1])
    ):
        return hit[2]  # type: ignore[no-any-return]
    if not any(type(c) is float for c in code.co_consts) and not _names_replaced(
        code.co_names, globals_
    ):
        return None  # nothing to rewrite: the common case, decided fast and not cached
    consts = list(code.co_consts)
    raw = bytearray(code.co_code)
    index: dict[Any, int] = {}
    checks: list[tuple[str, Any]] = []
    changed = False
    for site in _sites(code):
        obj = _replacement(site, code, globals_)
        if site.kind != "literal":
            name = code.co_names[site.arg]
            checks.append((name, _resolve(name, globals_)))
        if obj is None:
            continue
        ident = ("literal", site.arg) if site.kind == "literal" else id(obj)
        if ident not in index:
            index[ident] = len(consts)
            consts.append(obj)
        new = _load_const(site.units, index[ident], site.kind in ("call", "attr+null"))
        if new is None:
            continue
        raw[2 * site.start : 2 * (site.start + site.units)] = bytes(new)
        changed = True
    out = code.replace(co_code=bytes(raw), co_consts=tuple(consts)) if changed else None
    # Checked again on reuse: the names that resolved to what is replaced (a name that
    # comes to resolve to ``int`` later is only missed, and its size guarded as before).
    relevant = tuple((n, o) for n, o in checks if _is_replaced(o))
    _REWRITES[key] = (weakref.ref(code, _forget(key)), relevant, out)
    return out


def _is_replaced(obj: Any) -> bool:
    """Whether a global resolving to ``obj`` is replaced (``math``, or a callee)."""
    return obj is math or any(obj is old for old, _ in _CALLEES)


def _names_replaced(names: tuple[str, ...], globals_: dict[str, Any]) -> bool:
    """Whether any of ``names`` resolves to what is replaced: a module global (``math``,
    ``from math import sqrt``) or, not shadowed, the builtins ``int`` and ``float``."""
    for n in names:
        if n in globals_:
            if _is_replaced(globals_[n]):
                return True
        elif n in _BUILTIN_CALLEES:
            return True
    return False


# ---------------------------------------------------------------- which functions
_NEVER = frozenset({
    "torch", "functorch", "torchgen", "triton", "tensorflow", "tensorboard", "tf_keras",
    "keras", "jax", "jaxlib", "numpy", "ml_dtypes", "scipy", "sympy", "mpmath",
    "pytest", "_pytest", "pluggy", "xdist", "execnet",
})  # fmt: skip
"""Top-level packages never rewritten beyond the standard library and ivytrace: the array
frameworks (and what ships with them), whose own calls the interceptors record whole, and
the test runner."""
_FRAMEWORKS = frozenset({"torch", "tensorflow", "keras", "jax", "numpy"})


def _top(name: Any) -> str | None:
    return name.partition(".")[0] if isinstance(name, str) and name else None


@functools.cache
def _excluded(top: str) -> bool:
    return (
        top in _NEVER
        or top in sys.stdlib_module_names
        or top.startswith("ivytrace")
        or (top.startswith("_") and top != "__main__")
        or top == "builtins"
    )


def _package_of(obj: Any) -> str | None:
    if isinstance(obj, types.ModuleType):
        return _top(obj.__name__)
    if isinstance(obj, types.FunctionType | type):
        return _top(getattr(obj, "__module__", None))
    return None


def _roots(fn: Any) -> set[str]:
    """The traced callable's package, and those its globals and closure name (and, two
    calls deep, those of the functions it names)."""
    out: set[str] = set()
    seen: set[int] = set()

    def add(v: Any) -> None:
        top = _package_of(v)
        if top:
            out.add(top)

    def visit(obj: Any, depth: int) -> None:
        if id(obj) in seen or depth > 2:
            return
        seen.add(id(obj))
        if isinstance(obj, functools.partial):
            visit(obj.func, depth)
            return
        func = getattr(obj, "__func__", obj)
        if isinstance(func, types.FunctionType):
            add(func)
            for cell in func.__closure__ or ():
                with contextlib.suppress(ValueError):  # an empty cell
                    add(cell.cell_contents)
            for name in _imported(func.__code__):  # a module imported inside the function
                add(sys.modules.get(name))
            for name in _global_names(func.__code__):
                v = func.__globals__.get(name)
                add(v)
                if isinstance(v, types.FunctionType):
                    visit(v, depth + 1)
        elif not isinstance(obj, type):  # a callable object (a torch or Keras module)
            add(type(obj))
            fwd = getattr(obj, "forward", None) or getattr(obj, "call", None)
            if fwd is not None:
                visit(fwd, depth)

    visit(fn, 0)
    return {t for t in out if not _excluded(t)}


def _imported(code: types.CodeType) -> Iterator[str]:
    """The modules an ``import`` statement in ``code`` (or code nested in it) names."""
    for ins in dis.get_instructions(code):
        if ins.opname == "IMPORT_NAME" and isinstance(ins.argval, str):
            yield ins.argval
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            yield from _imported(c)


def _global_names(code: types.CodeType) -> Iterator[str]:
    yield from code.co_names
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            yield from _global_names(c)


class _Scan:
    """What one module holds, as last scanned: the functions of its package it holds that
    have something to rewrite (weakly), the packages its globals name, and whether it works
    with arrays (holds a framework module or a framework's function or class)."""

    __slots__ = ("fingerprint", "functions", "names", "uses_arrays")

    def __init__(self, fingerprint: Any, functions: list[Any], names: set[str], arrays: bool):
        self.fingerprint = fingerprint
        self.functions = functions
        self.names = names
        self.uses_arrays = arrays


_SCANS: dict[str, _Scan] = {}
"""Module name -> its last :class:`_Scan`, reused while the module object and its number of
globals are unchanged (a function rebound in place is missed until then: it is not
rewritten, so its sizes are guarded as without this module, never answered wrongly)."""


def _scan(name: str, mod: types.ModuleType) -> _Scan:
    fingerprint = (id(mod), len(mod.__dict__))
    hit = _SCANS.get(name)
    if hit is not None and hit.fingerprint == fingerprint:
        return hit
    pkg = name.partition(".")[0]
    funcs: dict[int, types.FunctionType] = {}
    names: set[str] = set()
    try:
        for v in list(vars(mod).values()):
            _collect(v, pkg, funcs)
            other = _package_of(v)
            if other and other != pkg:
                names.add(other)
    except Exception:  # a global whose type checks run code (a lazy proxy) and fail: skip
        funcs.clear()
        names.clear()
    rewritable = [weakref.ref(f) for f in funcs.values() if rewrite_code(f.__code__, f.__globals__)]
    arrays = not names.isdisjoint(_FRAMEWORKS)
    scan = _Scan(fingerprint, rewritable, {n for n in names if not _excluded(n)}, arrays)
    _SCANS[name] = scan
    return scan


_REACH: dict[frozenset[str], tuple[tuple[int, ...], list[weakref.ref[Any]]]] = {}
"""Root packages -> (stamp, the functions reached from them, weakly), reused while the stamp
holds: the number of modules loaded and the number of globals of each module of the root
packages (a function the user defines after a first trace is reached by the next one). A
change deeper (a function rebound in place in a reached library) is missed as in
:data:`_SCANS`. Without it every trace walked ``sys.modules`` (3,000 modules with
transformers loaded: 8 ms a trace, most of a small function's trace)."""

_INDEX: dict[int, dict[str, list[tuple[str, types.ModuleType]]]] = {}
"""``len(sys.modules)`` -> the loaded modules by top-level package (one entry kept)."""


def _by_package() -> dict[str, list[tuple[str, types.ModuleType]]]:
    n = len(sys.modules)
    hit = _INDEX.get(n)
    if hit is not None:
        return hit
    by_pkg: dict[str, list[tuple[str, types.ModuleType]]] = {}
    for name, mod in list(sys.modules.items()):
        top = name.partition(".")[0]
        if isinstance(mod, types.ModuleType) and not _excluded(top):
            by_pkg.setdefault(top, []).append((name, mod))
    _INDEX.clear()
    _INDEX[n] = by_pkg
    return by_pkg


def reachable_functions(fn: Any) -> list[types.FunctionType]:
    """The functions with something to rewrite that :func:`tracking_code` rewrites for a
    trace of ``fn`` (see the module's doc for the policy)."""
    by_pkg = _by_package()
    roots = frozenset(_roots(fn))
    stamp = (len(sys.modules), *(len(vars(m)) for r in sorted(roots) for _, m in by_pkg.get(r, ())))
    hit = _REACH.get(roots)
    if hit is not None and hit[0] == stamp:
        return [f for f in (ref() for ref in hit[1]) if f is not None]
    todo = sorted(roots)
    done: set[str] = set(todo)
    out: dict[int, types.FunctionType] = {}
    while todo:
        scans = [_scan(n, m) for n, m in by_pkg.get(todo.pop(), ())]
        for scan in scans:
            for ref in scan.functions:
                f = ref()
                if f is not None:
                    out[id(f)] = f
        for other in {n for scan in scans for n in scan.names}:
            if other not in done and other in by_pkg:
                if any(_scan(n, m).uses_arrays for n, m in by_pkg[other]):
                    done.add(other)
                    todo.append(other)
    _REACH[roots] = (stamp, [weakref.ref(f) for f in out.values()])
    return list(out.values())


def _collect(v: Any, pkg: str, funcs: dict[int, types.FunctionType]) -> None:
    if isinstance(v, type):
        if _top(v.__module__) != pkg:
            return
        for w in list(vars(v).values()):
            if isinstance(w, staticmethod | classmethod):
                w = w.__func__
            if isinstance(w, property):
                for f in (w.fget, w.fset, w.fdel):
                    _add_function(f, pkg, funcs)
            else:
                _add_function(w, pkg, funcs)
        return
    _add_function(v, pkg, funcs)


def _add_function(f: Any, pkg: str, funcs: dict[int, types.FunctionType]) -> None:
    for _ in range(8):  # a __wrapped__ chain
        if not isinstance(f, types.FunctionType) or id(f) in funcs:
            return
        if _top(f.__module__) != pkg:
            return
        funcs[id(f)] = f
        f = getattr(f, "__wrapped__", None)


@contextlib.contextmanager
def tracking_code(fn: Any) -> Iterator[int]:
    """While the block runs, the functions a trace of ``fn`` can reach run rewritten code
    (see the module's doc); every ``__code__`` is put back on leaving, also on error.
    Yields the number of functions rewritten."""
    swapped: list[tuple[types.FunctionType, types.CodeType]] = []
    try:
        for f in reachable_functions(fn) if _SUPPORTED else ():
            old = f.__code__
            new = rewrite_code(old, f.__globals__)
            if new is not None:
                f.__code__ = new
                swapped.append((f, old))
        yield len(swapped)
    finally:
        for f, old in reversed(swapped):
            f.__code__ = old
