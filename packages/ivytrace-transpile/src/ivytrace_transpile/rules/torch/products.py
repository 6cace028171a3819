"""Products: matmul and its batched and fused forms (addmm, baddbmm, addr, addmv,
addbmm), einsum, outer, dot, inner, tensordot, kron, cross, vecdot, multi_dot, and
``nn.functional.linear`` / ``bilinear``."""

from __future__ import annotations

from .._common import arg_rank, as_list, broadcast_shape, cast_to, is_array, ref_rank, size_args
from ..registry import rule

__all__: list[str] = []


@rule("torch.matmul", "torch.mm", "torch.bmm", "torch.mv", method=True, operator="matmul")
def _matmul(cx, a, b):
    dt = cx.out_dtype()
    return cx.target.matmul(cast_to(cx, a, dt), cast_to(cx, b, dt))


@rule("torch.addmm", method=True)
def _addmm(cx, bias, a, b, *, beta=1, alpha=1):
    y = cx.target.matmul(a, b)
    if alpha != 1:
        y = y * alpha
    return y + (bias if beta == 1 else bias * beta)


@rule("torch.baddbmm", method=True)
def _baddbmm(cx, bias, a, b, *, beta=1, alpha=1):
    return _addmm(cx, bias, a, b, beta=beta, alpha=alpha)


@rule("torch.einsum")
def _einsum(cx, eq, *operands):
    ops = size_args(operands)
    return cx.target.einsum(eq, *ops)


@rule("torch.outer", "torch.Tensor.outer", "torch.ger")
def _outer(cx, a, b):
    return cx.target.expand_dims(a, 1) * cx.target.expand_dims(b, 0)


@rule("torch.dot", "torch.Tensor.dot", "torch.vdot")
def _dot(cx, a, b):
    return cx.target.reduce("sum", a * b)


@rule("torch.nn.functional.linear")
def _linear(cx, x, weight, bias=None):
    t = cx.target
    if arg_rank(cx, 1) == 1:
        y = t.reduce("sum", x * weight, -1)
    else:
        y = t.matmul(x, t.transpose(weight, [1, 0]))
    return y if bias is None else y + bias


@rule("torch.nn.functional.bilinear")
def _bilinear(cx, x1, x2, weight, bias=None):
    y = cx.target.einsum("...i,oij,...j->...o", x1, weight, x2)
    return y if bias is None else y + bias


def _beta_alpha(cx, x, prod, beta, alpha):
    dt = cx.out_dtype()
    if alpha != 1:
        prod = prod * alpha
    if beta == 0:  # x is not added, but still broadcast against
        return (
            cx.target.broadcast_to(prod, broadcast_shape(cx, x, prod))
            if cx.out_spec().rank
            else prod
        )
    x = cast_to(cx, x, dt)
    return prod + (x if beta == 1 else x * beta)


@rule("torch.addr", method=True)
def _addr(cx, x, v1, v2, *, beta=1, alpha=1):
    t = cx.target
    prod = t.expand_dims(v1, 1) * t.expand_dims(v2, 0)
    if cx.out_spec().dtype == "bool":
        raise NotImplementedError("boolean addr")
    return _beta_alpha(cx, x, prod, beta, alpha)


@rule("torch.addmv", method=True)
def _addmv(cx, x, mat, vec, *, beta=1, alpha=1):
    return _beta_alpha(cx, x, cx.target.matmul(mat, vec), beta, alpha)


@rule("torch.addbmm", method=True)
def _addbmm(cx, x, b1, b2, *, beta=1, alpha=1):
    return _beta_alpha(cx, x, cx.target.reduce("sum", cx.target.matmul(b1, b2), 0), beta, alpha)


_LETTERS = "abcdefghijklmnopqrstuvwxyz"


@rule("torch.tensordot")
def _tensordot(cx, a, b, dims=2, out=None):
    ra, rb = ref_rank(cx.ref_args[0]), ref_rank(cx.ref_args[1])
    if is_array(dims):
        raise NotImplementedError("tensordot with tensor dims")
    if isinstance(dims, int):
        da, db = list(range(ra - dims, ra)), list(range(dims))
    else:
        da, db = [d % ra for d in as_list(dims[0])], [d % rb for d in as_list(dims[1])]
    la = list(_LETTERS[:ra])
    lb = list(_LETTERS[ra : ra + rb])
    t = cx.target
    for i, j in zip(da, db):
        lb[j] = la[i]
        sa, sb = t.shape(a), t.shape(b)
        if sa[i] != sb[j]:  # torch broadcasts a contracted size 1 (guarded)
            if sa[i] == 1:
                a = t.broadcast_to(a, [sb[j] if d == i else s for d, s in enumerate(sa)])
            else:
                b = t.broadcast_to(b, [sa[i] if d == j else s for d, s in enumerate(sb)])
    out_l = [c for i, c in enumerate(la) if i not in da] + [
        c for j, c in enumerate(lb) if j not in db
    ]
    dt = cx.out_dtype()
    return cx.target.einsum(
        f"{''.join(la)},{''.join(lb)}->{''.join(out_l)}", cast_to(cx, a, dt), cast_to(cx, b, dt)
    )


@rule("torch.inner", method=True)
def _inner(cx, a, b):
    """The sum over the last axes: (..a, n) x (..b, n) -> (..a, ..b); a 0-d operand scales."""
    ra, rb = ref_rank(cx.ref_args[0]), ref_rank(cx.ref_args[1])
    dt = cx.out_dtype()
    a, b = cast_to(cx, a, dt), cast_to(cx, b, dt)
    if ra == 0 or rb == 0:
        return a * b
    la, lb = _LETTERS[: ra - 1], _LETTERS[ra - 1 : ra + rb - 2]
    return cx.target.einsum(f"{la}z,{lb}z->{la}{lb}", a, b)


@rule("torch.kron", method=True)
def _kron(cx, a, b):
    t = cx.target
    ra, rb = ref_rank(cx.ref_args[0]), ref_rank(cx.ref_args[1])
    r = max(ra, rb)
    sa = [1] * (r - ra) + list(t.shape(a))
    sb = [1] * (r - rb) + list(t.shape(b))
    a2, b2 = t.reshape(a, sa), t.reshape(b, sb)
    ea, eb = list(_LETTERS[:r]), list(_LETTERS[r : 2 * r])
    eq = f"{''.join(ea)},{''.join(eb)}->{''.join(x + y for x, y in zip(ea, eb))}"
    dt = cx.out_dtype()
    prod = t.einsum(eq, cast_to(cx, a2, dt), cast_to(cx, b2, dt)) if r else a * b
    return t.reshape(prod, [x * y for x, y in zip(sa, sb)])


def _cross3(cx, a, b, ax, rank):
    t = cx.target

    def comp(v, i):
        return t.getitem(v, (*(slice(None),) * ax, i))

    a0, a1, a2 = comp(a, 0), comp(a, 1), comp(a, 2)
    b0, b1, b2 = comp(b, 0), comp(b, 1), comp(b, 2)
    return t.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], ax)


@rule("torch.cross", "torch.linalg.cross", method=True)
def _cross(cx, a, b, dim=None):
    t = cx.target
    out_shape = broadcast_shape(cx, a, b)
    rank = len(out_shape)
    if dim is None:  # the first axis of size 3 (the tests are guarded)
        dim = (
            -1
            if cx.node.op == "torch.linalg.cross"
            else next(i for i, s in enumerate(out_shape) if s == 3)
        )
    ax = dim % rank
    dt = cx.out_dtype()
    a = t.broadcast_to(cast_to(cx, a, dt), out_shape)
    b = t.broadcast_to(cast_to(cx, b, dt), out_shape)
    return _cross3(cx, a, b, ax, rank)


@rule("torch.linalg.vecdot")
def _vecdot(cx, x, y, *, dim=-1):
    rank = cx.out_spec().rank + 1
    return cx.target.reduce("sum", x * y, dim % rank)


@rule("torch.linalg.multi_dot")
def _multi_dot(cx, tensors, *, out=None):
    t = cx.target
    ts = list(tensors)
    refs = list(cx.ref_args[0])
    first_vec, last_vec = refs[0].dim() == 1, refs[-1].dim() == 1
    if first_vec:
        ts[0] = t.expand_dims(ts[0], 0)
    if last_vec:
        ts[-1] = t.expand_dims(ts[-1], -1)
    y = ts[0]
    for m in ts[1:]:
        y = t.matmul(y, m)
    if first_vec and last_vec:
        return t.reshape(y, [])
    if first_vec:
        return t.squeeze(y, 0)
    if last_vec:
        return t.squeeze(y, -1)
    return y


def _group_mask(cx, offs, length, dt):
    """(G, length) of ``dt``: 1 where position ``p`` lies in group ``g``, that is
    ``offs[g-1] <= p < offs[g]`` (``offs[-1] = 0``); positions past ``offs[-1]`` are in no
    group. Read from the offsets array at run time: neither the offsets nor ``length`` (a
    tracked size) is baked."""
    t = cx.target
    end = t.cast(offs, "int64")
    start = t.concat([t.full([1], 0, "int64"), t.getitem(end, (slice(None, -1),))], 0)
    pos = t.expand_dims(t.arange(0, length, 1, "int64"), 0)
    inside = t.ew(
        "logical_and",
        t.ew("greater_equal", pos, t.expand_dims(start, 1)),
        t.ew("less", pos, t.expand_dims(end, 1)),
    )
    return t.cast(inside, dt)


@rule(
    "torch._grouped_mm",
    "torch.nn.functional.grouped_mm",
    # transformers' custom op for the same product (integrations/moe.py), taken under a
    # compiler (ivytrace answers torch.compiler.is_compiling()); its Python kernel reads
    # offs.tolist(), so tracing through it would bake the token counts
    "torch.ops.transformers.grouped_mm_fallback",
)
def _grouped_mm(cx, mat_a, mat_b, offs=None, bias=None, out_dtype=None):
    """Grouped matmul (mixture-of-experts). 3-d x 3-d: one matmul per group. With ``offs``
    (cumulative group ends) a 2-d operand is cut into groups along its jagged axis: 2-d x
    3-d rows of ``mat_a`` (-> (S, N)), 2-d x 2-d the shared K axis (-> (G, M, N)), 3-d x 2-d
    the columns of ``mat_b`` (-> (M, N)). Each is a product weighted by the 0/1 group mask
    computed from ``offs`` in the translated graph, so new token counts per group need no
    retranslation; positions past ``offs[-1]`` (torch leaves them unset) come out 0."""
    t, dt = cx.target, cx.out_dtype()
    if bias is not None:
        raise NotImplementedError("_grouped_mm with a bias (torch's CPU kernel has none)")
    a, b = cast_to(cx, mat_a, dt), cast_to(cx, mat_b, dt)
    ra, rb = arg_rank(cx, 0), arg_rank(cx, 1)
    if ra == 3 and rb == 3:
        return t.matmul(a, b)
    if offs is None:
        raise NotImplementedError("_grouped_mm of a 2-d operand needs offs")
    if ra == 2 and rb == 3:
        mask = _group_mask(cx, offs, t.shape(a)[0], dt)
        return t.einsum("sk,gkn,gs->sn", a, b, mask)
    if ra == 2 and rb == 2:
        mask = _group_mask(cx, offs, t.shape(a)[1], dt)
        return t.einsum("mk,gk,kn->gmn", a, mask, b)
    if ra == 3 and rb == 2:
        mask = _group_mask(cx, offs, t.shape(b)[1], dt)
        return t.einsum("gmk,kn,gn->mn", a, b, mask)
    raise NotImplementedError(f"_grouped_mm of ranks {ra} and {rb}")
