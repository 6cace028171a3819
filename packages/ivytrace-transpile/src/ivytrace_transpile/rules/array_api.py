"""Rules for numpy and jax code: one implementation serves both (``jax.numpy`` follows
numpy's API), registered under each framework's names in two tables.

The elementwise ops are every ``elementwise`` entry of the op table, under each of its
numpy or jax names (``numpy.add``, ``numpy.ndarray.__add__``, ``jax.Array.__add__``...):
the op table is the one place that says what they are called. The rest (reductions,
reshaping, ``matmul``, indexing with plain keys) is written here against
:class:`~ivytrace_transpile.targets.Target`; creation, padding, splitting, indexing by
arrays, scans and sorting are in ``array_api_shapes``, through the public helpers here
(``add_rules``, ``numpy_and_jax``, ``as_dtype``). Python's operators on tracked sizes
(``x.shape[1] - 1``) take the rules torch code takes (``_common.python_number_rules``).
Arguments follow numpy's signatures; ufunc options (``out=``, ``where=``, ``casting=``) are
refused, not ignored.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from ivytrace_ir import ADAPTERS, framework_of
from ivytrace_ir.opfacts import operator_named

from .. import optable
from ._common import python_number_rules
from .registry import RuleTable

if TYPE_CHECKING:  # annotations only
    from ..context import RuleContext

__all__ = [
    "JAX_RULES",
    "NUMPY_RULES",
    "add_rules",
    "as_dtype",
    "numpy_and_jax",
    "refuse_ufunc_options",
]

NUMPY_RULES = RuleTable("numpy")
"""Op name -> rule, for code traced from numpy."""
JAX_RULES = RuleTable("jax")
"""Op name -> rule, for code traced from jax (jax.numpy, jax.nn, jax.Array)."""

_SPACES = {
    fw: (ns, ADAPTERS[fw].array_class) for fw, ns in (("numpy", "numpy"), ("jax", "jax.numpy"))
}
"""Source framework -> (its function namespace, its array class)."""
_TABLES = {"numpy": NUMPY_RULES, "jax": JAX_RULES}

# ``x.shape[1] - 1``, ``math.ceil(n / 2)``: Python's operators on tracked sizes and scalars,
# the same rules as for torch code
for _name, _fn in python_number_rules().items():
    for _table in _TABLES.values():
        _table.add(_name, _fn)


def add_rules(names: list[str], fn: Callable[..., Any]) -> None:
    """``fn`` under each name, in the table of the framework the name belongs to; a name
    another entry of this module registered first keeps that rule."""
    for name in names:
        table = JAX_RULES if name.startswith("jax.") else NUMPY_RULES
        if name not in table:
            table.add(name, fn)


def numpy_and_jax(*templates: str) -> list[str]:
    """``"{ns}.sum"``, ``"{arr}.sum"`` -> the numpy and jax names."""
    return [t.format(ns=ns, arr=arr) for ns, arr in _SPACES.values() for t in templates]


def _canonical(cx: RuleContext, dtype: Any) -> str:
    return cx.target.canonical_dtype(str(np.dtype(dtype)))


def _result_type(cx: RuleContext, items: list[Any]) -> str:
    """The source framework's result type of ``items`` (dtypes, and Python numbers taken
    weakly): numpy's for numpy code, jax's for jax code. They differ where a Python float
    meets a bool or integer array: numpy 2 answers float64, jax its default float
    (float32 without x64: ``jnp.arange(3) * 0.5`` is float32)."""
    if cx.node.op.startswith("jax."):
        import warnings

        import jax.numpy as jnp  # the source is jax code: jax is imported already

        with warnings.catch_warnings():  # float64 dtypes truncated without x64: said there
            warnings.simplefilter("ignore")
            return _canonical(cx, jnp.result_type(*items))
    return _canonical(cx, np.result_type(*items))


def _common(cx: RuleContext) -> str:
    """The result type of the node's source arguments: arrays by dtype, Python numbers
    weakly (NEP 50: ``float32 + 1.0`` is float32), as numpy 2 or jax promotes them."""
    items = [
        a.dtype if framework_of(a) is not None else a
        for a in cx.ref_args
        if framework_of(a) is not None or isinstance(a, bool | int | float)
    ]
    return _result_type(cx, items)


def as_dtype(cx: RuleContext, x: Any, dtype: str) -> Any:
    if cx.target.is_array(x):
        return x if cx.dtype_of(x) == dtype else cx.target.cast(x, dtype)
    return cx.target.asarray(x, dtype)


def refuse_ufunc_options(kwargs: dict[str, Any]) -> None:
    given = sorted(k for k, v in kwargs.items() if v is not None and k != "dtype")
    if given:
        raise NotImplementedError(f"ufunc options {', '.join(given)}")


def _ew(name: str, swap: bool = False) -> Callable[..., Any]:
    def r(cx: RuleContext, *args: Any, **kwargs: Any) -> Any:
        refuse_ufunc_options(kwargs)
        out = cx.out_dtype()
        dt = _common(cx)
        if out.startswith(("float", "complex")) and not dt.startswith(("float", "complex")):
            dt = out  # np.sqrt of ints is a float: compute in the result's type
        args = tuple(as_dtype(cx, a, dt) for a in args)
        if swap:
            args = args[::-1]
        return cx.target.ew(name, *args)

    return r


def _spellings(name: str) -> list[str]:
    """``name`` and the other names numpy binds the same function to (numpy 2's ``acos``
    is ``arccos``, ``pow`` is ``power``; the tracer records one of them). ``jax.numpy``
    follows numpy's names, so numpy's aliases are read for it too, without importing jax
    (importing the rules imports no ML framework)."""
    space, _, attr = name.rpartition(".")
    if space not in ("numpy", "jax.numpy"):
        return [name]
    obj = getattr(np, attr, None)
    if obj is None:
        return [name]
    same = {k for k, v in vars(np).items() if v is obj and not k.startswith("_")}
    return [name, *sorted(f"{space}.{k}" for k in same - {attr})]


def _where(cx: RuleContext, cond: Any, *xy: Any) -> Any:
    if len(xy) != 2:
        raise NotImplementedError("where with one argument (nonzero)")
    cond = as_dtype(cx, cond, "bool")
    dt = _result_type(cx, [a.dtype if framework_of(a) is not None else a for a in cx.ref_args[1:]])
    return cx.target.where(cond, as_dtype(cx, xy[0], dt), as_dtype(cx, xy[1], dt))


add_rules(numpy_and_jax("{ns}.where"), _where)


def _clip(cx: RuleContext, x: Any, lo: Any = None, hi: Any = None, **kw: Any) -> Any:
    refuse_ufunc_options(kw)
    dt = cx.out_dtype()
    y = as_dtype(cx, x, dt)
    if lo is not None:
        y = cx.target.ew("maximum", y, as_dtype(cx, lo, dt))
    if hi is not None:
        y = cx.target.ew("minimum", y, as_dtype(cx, hi, dt))
    return y


add_rules([s for n in numpy_and_jax("{ns}.clip", "{arr}.clip") for s in _spellings(n)], _clip)

# ---- elementwise ops, from the op table
for _op in optable.unique_ops():
    if _op.category == "elementwise":
        add_rules(
            [s for fw in _SPACES for n in _op.native_names(fw) for s in _spellings(n)],
            _ew(_op.name),
        )

# ---- Python operators on arrays: the op table names the op each operator means
for _op in optable.unique_ops():
    if _op.operator:
        _o = operator_named(_op.operator)
        add_rules(numpy_and_jax(f"{{arr}}.{_o.dunder}"), _ew(_op.name))
        if _o.reflected:
            add_rules(numpy_and_jax(f"{{arr}}.{_o.reflected}"), _ew(_op.name, swap=True))
add_rules(numpy_and_jax("{arr}.__abs__"), _ew("abs"))


def _logic(op: str, swap: bool = False) -> Callable[..., Any]:
    def r(cx: RuleContext, a: Any, b: Any) -> Any:
        kind = "logical_" if cx.out_dtype() == "bool" else "bitwise_"
        return _ew(kind + op, swap)(cx, a, b)

    return r


for _d in ("and", "or", "xor"):
    add_rules(numpy_and_jax(f"{{arr}}.__{_d}__"), _logic(_d))
    add_rules(numpy_and_jax(f"{{arr}}.__r{_d}__"), _logic(_d, swap=True))


def _relu(cx: RuleContext, x: Any) -> Any:
    return cx.target.ew("maximum", x, cx.target.asarray(0, cx.dtype_of(x)))


add_rules(["jax.nn.relu"], _relu)
add_rules(["jax.nn.sigmoid"], _ew("sigmoid"))


# ---- array facts
def _shape(cx: RuleContext, x: Any) -> Any:
    return cx.target.shape(x)


def _static_fact(cx: RuleContext, x: Any, *a: Any, **k: Any) -> Any:
    return cx.ref_out


add_rules(numpy_and_jax("{arr}.shape", "{ns}.shape"), _shape)
add_rules(numpy_and_jax("{arr}.ndim", "{arr}.dtype", "{ns}.ndim"), _static_fact)


# ---- reductions
def _reduction(kind: str) -> Callable[..., Any]:
    def r(cx: RuleContext, x: Any, axis: Any = None, dtype: Any = None, out: Any = None,
          keepdims: bool = False, **kw: Any) -> Any:  # fmt: skip
        refuse_ufunc_options({"out": out, **kw})
        x = as_dtype(cx, x, cx.out_dtype() if kind in ("sum", "mean", "prod") else cx.dtype_of(x))
        return cx.target.reduce(kind, x, axis, keepdims)

    return r


def _extremum(kind: str) -> Callable[..., Any]:
    def r(cx: RuleContext, x: Any, axis: Any = None, out: Any = None, keepdims: bool = False,
          **kw: Any) -> Any:  # fmt: skip
        refuse_ufunc_options({"out": out, **kw})
        return cx.target.reduce(kind, x, axis, keepdims)

    return r


for _k in ("sum", "mean", "prod"):
    add_rules(numpy_and_jax(f"{{ns}}.{_k}", f"{{arr}}.{_k}"), _reduction(_k))
for _k, _names in {"max": ("max", "amax"), "min": ("min", "amin")}.items():
    add_rules(numpy_and_jax(*[f"{{ns}}.{n}" for n in _names], f"{{arr}}.{_k}"), _extremum(_k))


def _arg(kind: str) -> Callable[..., Any]:
    def r(cx: RuleContext, x: Any, axis: Any = None, out: Any = None, keepdims: bool = False):
        refuse_ufunc_options({"out": out})
        got = getattr(cx.target, kind)(x, axis, keepdims)
        return as_dtype(cx, got, cx.out_dtype())

    return r


add_rules(numpy_and_jax("{ns}.argmax", "{arr}.argmax"), _arg("argmax"))
add_rules(numpy_and_jax("{ns}.argmin", "{arr}.argmin"), _arg("argmin"))


# ---- shapes and layout
def _sizes(shape: Any) -> list[Any]:
    return list(shape) if isinstance(shape, tuple | list) else [shape]


def _reshape(cx: RuleContext, x: Any, *shape: Any, order: str = "C", **kw: Any) -> Any:
    if order != "C":
        raise NotImplementedError(f"reshape order={order!r}")
    if "shape" in kw or "newshape" in kw:
        shape = (kw.get("shape", kw.get("newshape")),)
    return cx.target.reshape(x, _sizes(shape[0]) if len(shape) == 1 else list(shape))


def _transpose(cx: RuleContext, x: Any, *axes: Any) -> Any:
    if len(axes) == 1 and (axes[0] is None or isinstance(axes[0], tuple | list)):
        axes = axes[0] or ()
    rank = len(cx.target.shape(x))
    perm = list(axes) if axes else list(range(rank))[::-1]
    return cx.target.transpose(x, [a % rank for a in perm])


add_rules(numpy_and_jax("{ns}.reshape", "{arr}.reshape"), _reshape)
add_rules(numpy_and_jax("{ns}.transpose", "{arr}.transpose"), _transpose)
add_rules(numpy_and_jax("{arr}.T"), _transpose)  # .T reverses every axis, as transpose() does
add_rules(
    numpy_and_jax("{ns}.expand_dims"),
    lambda cx, x, axis: cx.target.expand_dims(x, axis),
)
add_rules(
    numpy_and_jax("{ns}.squeeze", "{arr}.squeeze"),
    lambda cx, x, axis=None: cx.target.squeeze(x, axis),
)


def _joined(kind: str) -> Callable[..., Any]:
    def r(cx: RuleContext, xs: Any, axis: int = 0, out: Any = None, dtype: Any = None) -> Any:
        refuse_ufunc_options({"out": out})
        dt = _canonical(cx, dtype) if dtype is not None else cx.out_dtype()
        xs = [as_dtype(cx, x, dt) for x in xs]
        return getattr(cx.target, kind)(xs, axis)

    return r


add_rules(numpy_and_jax("{ns}.concatenate", "{ns}.concat"), _joined("concat"))
add_rules(numpy_and_jax("{ns}.stack"), _joined("stack"))


def _astype(cx: RuleContext, x: Any, *a: Any, **k: Any) -> Any:
    return as_dtype(cx, x, cx.out_dtype())


add_rules(numpy_and_jax("{arr}.astype"), _astype)


# ---- linear algebra
def _matmul(cx: RuleContext, a: Any, b: Any, **kw: Any) -> Any:
    refuse_ufunc_options(kw)
    dt = _common(cx)
    return cx.target.matmul(as_dtype(cx, a, dt), as_dtype(cx, b, dt))


def _dot(cx: RuleContext, a: Any, b: Any, out: Any = None) -> Any:
    if not (cx.target.is_array(a) and cx.target.is_array(b)) or len(cx.target.shape(b)) > 2:
        raise NotImplementedError("dot of a scalar, or with an operand of rank > 2")
    return _matmul(cx, a, b, out=out)


add_rules(numpy_and_jax("{ns}.matmul", "{arr}.__matmul__"), _matmul)
add_rules(numpy_and_jax("{arr}.__rmatmul__"), lambda cx, a, b: _matmul(cx, b, a))
add_rules(numpy_and_jax("{ns}.dot", "{arr}.dot"), _dot)


def _einsum(cx: RuleContext, eq: str, *xs: Any, **kw: Any) -> Any:
    refuse_ufunc_options({k: v for k, v in kw.items() if k != "optimize"})
    dt = _common(cx)
    return cx.target.einsum(eq, *[as_dtype(cx, x, dt) for x in xs])


add_rules(numpy_and_jax("{ns}.einsum"), _einsum)


def _softmax(cx: RuleContext, x: Any, axis: int = -1, **kw: Any) -> Any:
    t = cx.target
    e = t.ew("exp", x - t.reduce("max", x, axis, True))
    return e / t.reduce("sum", e, axis, True)


add_rules(["jax.nn.softmax"], _softmax)
