"""Products and linear algebra in tensorflow code: ``tf.matmul`` (with its transpose and
adjoint flags), ``tensordot`` (Keras's Dense on a rank > 2 input), ``einsum``, ``@``, and
``tf.linalg``'s inverse, determinant, solve, cholesky, norm, trace and diagonals on the
:class:`~ivytrace_transpile.targets.Target` linear-algebra vocabulary.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..registry import TENSORFLOW_RULES
from .common import axes_of, operand, operand_dtype, tf_rules

if TYPE_CHECKING:  # annotations only
    from ...context import RuleContext

__all__: list[str] = []

_LETTERS = "abcdefghijklmnopqrstuvwxyz"


def _rank(cx: RuleContext, x: Any) -> int:
    return len(cx.target.shape(x))


def _swap_last(cx: RuleContext, x: Any, conj: bool) -> Any:
    rank = _rank(cx, x)
    y = cx.target.transpose(x, [*range(rank - 2), rank - 1, rank - 2])
    return cx.ew("conj", y) if conj and cx.dtype_of(x).startswith("complex") else y


@tf_rules("tensorflow.linalg.matmul")
def _matmul(cx, a, b, transpose_a=False, transpose_b=False, adjoint_a=False, adjoint_b=False,
            a_is_sparse=False, b_is_sparse=False, output_type=None, grad_a=False,
            grad_b=False, name=None):  # fmt: skip
    dt = operand_dtype(cx, (a, b))
    a, b = operand(cx, a, dt), operand(cx, b, dt)
    if transpose_a or adjoint_a:
        a = _swap_last(cx, a, adjoint_a)
    if transpose_b or adjoint_b:
        b = _swap_last(cx, b, adjoint_b)
    y = cx.target.matmul(a, b)
    return operand(cx, y, cx.out_dtype())


for _owner in ("tensorflow.Tensor", "tensorflow.Variable"):
    TENSORFLOW_RULES.add(f"{_owner}.__matmul__", lambda cx, a, b: _matmul(cx, a, b))
    TENSORFLOW_RULES.add(f"{_owner}.__rmatmul__", lambda cx, a, b: _matmul(cx, b, a))


@tf_rules("tensorflow.linalg.tensordot")
def _tensordot(cx: RuleContext, a: Any, b: Any, axes: Any, name: Any = None) -> Any:
    """As an einsum: ``axes`` an int (the last n of ``a`` with the first n of ``b``) or a
    pair of axis lists."""
    ra, rb = _rank(cx, a), _rank(cx, b)
    if isinstance(axes, int):
        pa, pb = list(range(ra - axes, ra)), list(range(axes))
    else:
        pa, pb = (list(axes_of(v, r) or ()) for v, r in zip(axes, (ra, rb)))
    la = list(_LETTERS[:ra])
    lb = list(_LETTERS[ra : ra + rb])
    for i, j in zip(pa, pb):
        lb[j] = la[i]
    out = [c for i, c in enumerate(la) if i not in pa] + [
        c for j, c in enumerate(lb) if j not in pb
    ]
    dt = operand_dtype(cx, (a, b))
    eq = f"{''.join(la)},{''.join(lb)}->{''.join(out)}"
    return cx.target.einsum(eq, operand(cx, a, dt), operand(cx, b, dt))


@tf_rules("tensorflow.linalg.einsum")
def _einsum(cx: RuleContext, equation: str, *inputs: Any, **kwargs: Any) -> Any:
    dt = operand_dtype(cx, inputs)
    return cx.target.einsum(equation, *(operand(cx, x, dt) for x in inputs))


def _linalg(name: str):
    def r(cx: RuleContext, input: Any, name_: Any = None, **kw: Any) -> Any:
        return cx.target.linalg(name, input)

    return r


tf_rules("tensorflow.linalg.inv")(_linalg("inv"))
tf_rules("tensorflow.linalg.det")(_linalg("det"))
tf_rules("tensorflow.linalg.cholesky")(_linalg("cholesky"))


@tf_rules("tensorflow.linalg.solve")
def _solve(cx: RuleContext, matrix: Any, rhs: Any, adjoint: bool = False, name: Any = None):
    if adjoint:
        matrix = _swap_last(cx, matrix, True)
    return cx.target.linalg("solve", matrix, rhs)


@tf_rules("tensorflow.linalg.trace")
def _trace(cx: RuleContext, x: Any, name: Any = None) -> Any:
    return cx.target.reduce("sum", _diag_part(cx, x), -1)


@tf_rules("tensorflow.linalg.diag_part")
def _diag_part(cx: RuleContext, input: Any, name: Any = None, k: int = 0, **kw: Any) -> Any:
    if k:
        raise NotImplementedError("tf.linalg.diag_part with k != 0")
    t = cx.target
    n, m = t.shape(input)[-2:]
    r = t.expand_dims(t.arange(0, n, 1, "int32"), 1)
    c = t.expand_dims(t.arange(0, m, 1, "int32"), 0)
    mask = cx.ew("equal", r, c)
    zero = operand(cx, 0, cx.dtype_of(input))
    return t.reduce("sum", t.where(mask, input, zero), -1)[..., : min(int(n), int(m))]


@tf_rules("tensorflow.norm", "tensorflow.linalg.norm")
def _norm(cx: RuleContext, tensor: Any, ord: Any = "euclidean", axis: Any = None,
          keepdims: Any = None, name: Any = None) -> Any:  # fmt: skip
    t = cx.target
    ax = axes_of(axis, _rank(cx, tensor))
    keep = bool(keepdims)
    if ord in ("euclidean", 2, 2.0) and (ax is None or len(ax) == 1 or ord == "euclidean"):
        return cx.ew("sqrt", t.reduce("sum", cx.ew("square", cx.ew("abs", tensor)), ax, keep))
    if ord in (1, 1.0) and ax is not None and len(ax) == 1:
        return t.reduce("sum", cx.ew("abs", tensor), ax, keep)
    if ord == "fro":
        return cx.ew("sqrt", t.reduce("sum", cx.ew("square", cx.ew("abs", tensor)), ax, keep))
    if ord == float("inf") and ax is not None and len(ax) == 1:
        return t.reduce("max", cx.ew("abs", tensor), ax, keep)
    raise NotImplementedError(f"tf.norm ord={ord!r} axis={axis!r}")
