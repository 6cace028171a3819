"""Per-operation facts the passes rely on, as lookup tables keyed by op name.

Like JAX's ``dce_rules``, the behaviour of an op that the IR's node flags do not
spell out lives here, one table per kind of fact:

- :data:`VIEW_OPS`: ops whose results may share memory with their arguments
  (true views, and ops that may hand back their argument itself, such as
  ``torch.Tensor.contiguous`` or ``numpy.asarray``);
- :func:`mutated_args`: which arguments an op changes in place (the node's own
  ``meta.mutates``, plus what the name says: ``torch.Tensor.add_``, ``__iadd__``,
  ``__setitem__``, ``inplace=True``, ``out=``, ``numpy.copyto``...);
- :func:`is_generator`: random draws (``meta.generator``, plus what the name says);
- :func:`is_effect`: nodes that must stay even when nothing reads them.

Every table errs on the safe side: a wrong "may alias" or "mutates" costs a missed
optimisation, a wrong "does not" costs a wrong result.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import Any

from ivytrace_ir import Const, Node, Value, iter_arg_leaves

__all__ = [
    "COPY_INTO_OPS",
    "COPY_OPS",
    "EFFECT_OPS",
    "GENERATOR_OPS",
    "IMMUTABLE_FRAMEWORKS",
    "INPLACE_OPS",
    "VIEW_OPS",
    "is_effect",
    "is_generator",
    "is_view",
    "mutated_args",
    "mutated_positions",
    "ref_leaves",
]


def _both(prefixes: tuple[str, ...], names: str) -> frozenset[str]:
    return frozenset(f"{p}.{n}" for p in prefixes for n in names.split())


# ------------------------------------------------------------------ views
_TORCH_VIEWS = """
    __getitem__ view view_as reshape reshape_as flatten unflatten expand expand_as
    broadcast_to broadcast_tensors permute transpose swapaxes swapdims t adjoint movedim
    moveaxis narrow select squeeze unsqueeze diagonal as_strided unfold real imag
    view_as_real view_as_complex split split_with_sizes tensor_split chunk unbind hsplit
    vsplit dsplit atleast_1d atleast_2d atleast_3d meshgrid detach alias contiguous to type
    type_as cpu cuda float double half bfloat16 int long short bool byte char numpy
    requires_grad_ as_subclass positive conj resolve_conj resolve_neg T mT H mH
    from_numpy as_tensor asarray ravel
"""
_NUMPY_VIEWS = """
    __getitem__ __array__ view reshape ravel transpose permute_dims matrix_transpose swapaxes
    moveaxis rollaxis squeeze expand_dims broadcast_to broadcast_arrays atleast_1d
    atleast_2d atleast_3d diagonal real imag asarray asanyarray ascontiguousarray
    asfortranarray astype split array_split hsplit vsplit dsplit flip fliplr flipud rot90
    T mT
"""

VIEW_OPS: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        "torch": _both(("torch", "torch.Tensor"), _TORCH_VIEWS)
        | _both(
            ("torch.nn.functional",),
            "dropout dropout1d dropout2d dropout3d alpha_dropout feature_alpha_dropout",
        ),
        "numpy": _both(("numpy", "numpy.ndarray"), _NUMPY_VIEWS),
    }
)
"""Ops, per framework, whose results may share memory with their array arguments.

TensorFlow and JAX arrays are immutable, so aliasing cannot be observed there."""

_ALL_VIEWS = frozenset().union(*VIEW_OPS.values())

IMMUTABLE_FRAMEWORKS = frozenset({"jax", "tensorflow"})
"""Frameworks whose arrays can never be changed in place."""


def is_view(op: str) -> bool:
    """Whether the results of ``op`` may share memory with its arguments."""
    return op in _ALL_VIEWS


# ------------------------------------------------------------- mutation
INPLACE_OPS: Mapping[str, int] = MappingProxyType(
    {
        **dict.fromkeys(
            _both(
                ("numpy",),
                "copyto put place putmask fill_diagonal put_along_axis random.shuffle",
            ),
            0,
        ),
        **dict.fromkeys(
            _both(("numpy.ndarray",), "fill sort partition resize itemset setfield"), 0
        ),
        "numpy.random.Generator.shuffle": 1,
        "numpy.random.Generator.permuted": 1,
        **dict.fromkeys(
            _both(
                ("tensorflow.Variable",),
                "assign assign_add assign_sub scatter_update scatter_add scatter_sub "
                "scatter_mul scatter_div scatter_max scatter_min scatter_nd_update "
                "scatter_nd_add scatter_nd_sub batch_scatter_update",
            ),
            0,
        ),
    }
)
"""Ops that change one positional argument in place, by name -> that position.

Besides this table, :func:`mutated_args` reads what PyTorch and Python spell in names:
a trailing underscore (``torch.Tensor.add_``, ``torch.relu_``, ``torch.nn.init.normal_``),
augmented-assignment and ``__setitem__`` dunders, ``inplace=True`` and ``out=``."""

_INPLACE_DUNDERS = frozenset(
    "__setitem__ __iadd__ __isub__ __imul__ __imatmul__ __itruediv__ __ifloordiv__ "
    "__imod__ __ipow__ __iand__ __ior__ __ixor__ __ilshift__ __irshift__".split()
)

_INPLACE_FLAG_POSITION: Mapping[str, int] = MappingProxyType(
    {
        f"torch.nn.functional.{name}": pos
        for name, pos in {
            "relu": 1, "relu6": 1, "selu": 1, "silu": 1, "mish": 1, "hardswish": 1,
            "hardsigmoid": 1, "elu": 2, "celu": 2, "leaky_relu": 2, "threshold": 3,
            "hardtanh": 3, "rrelu": 4, "dropout": 3, "dropout1d": 3, "dropout2d": 3,
            "dropout3d": 3, "alpha_dropout": 3, "feature_alpha_dropout": 3,
        }.items()
    }
)  # fmt: skip
"""Where the ``inplace`` flag sits positionally for functions that take one."""


def ref_leaves(arg: Any) -> Iterator[Value | Const]:
    """The :class:`Value` and :class:`Const` leaves of an argument tree."""
    for leaf in iter_arg_leaves(arg):
        if isinstance(leaf, Value | Const):
            yield leaf


def _truthy_flag(node: Node, name: str, position: int | None, default: bool) -> bool:
    kw = node.kwargs_dict
    if name in kw:
        flag = kw[name]
    elif position is not None and position < len(node.args):
        flag = node.args[position]
    else:
        return default
    # A flag computed at run time (a Value) might be true: assume it is.
    return bool(flag) if isinstance(flag, bool | int | float | type(None)) else True


def _name_mutates(node: Node) -> tuple[int, ...]:
    op = node.op
    if op in INPLACE_OPS:
        return (INPLACE_OPS[op],)
    attr = op.rsplit(".", 1)[-1]
    if attr in _INPLACE_DUNDERS:
        return (0,)
    if op.startswith("torch.") and attr.endswith("_") and not attr.endswith("__"):
        return (0,)
    if "inplace" in node.kwargs_dict or op in _INPLACE_FLAG_POSITION:
        if _truthy_flag(node, "inplace", _INPLACE_FLAG_POSITION.get(op), False):
            return (0,)
    return ()


def mutated_positions(node: Node) -> tuple[int, ...]:
    """Positions of the arguments ``node`` changes in place: its ``meta.mutates``, plus
    what its op name says (:data:`INPLACE_OPS`, a trailing ``_`` on a torch op,
    ``__iadd__``-style dunders, ``__setitem__``, ``inplace=True``)."""
    return tuple(sorted(set(node.meta.mutates) | set(_name_mutates(node))))


def mutated_args(node: Node) -> tuple[Value | Const, ...]:
    """The values and constants ``node`` changes in place: the arguments at
    :func:`mutated_positions`, and any ``out=`` keyword argument."""
    out: list[Value | Const] = []
    for p in mutated_positions(node):
        if p < len(node.args):
            out.extend(ref_leaves(node.args[p]))
    for k, v in node.kwargs:
        if k == "out":
            out.extend(ref_leaves(v))
    return tuple(dict.fromkeys(out))


# ------------------------------------------------------------ generators
GENERATOR_OPS: frozenset[str] = (
    _both(
        ("torch",),
        "rand rand_like randn randn_like randint randint_like randperm bernoulli "
        "multinomial normal poisson",
    )
    | _both(
        ("torch.Tensor",),
        "bernoulli multinomial uniform_ normal_ bernoulli_ random_ exponential_ "
        "geometric_ log_normal_ cauchy_",
    )
    | _both(
        ("torch.nn.init",),
        "uniform_ normal_ trunc_normal_ xavier_uniform_ xavier_normal_ kaiming_uniform_ "
        "kaiming_normal_ orthogonal_ sparse_",
    )
    | _both(("torch.nn.functional",), "gumbel_softmax")
    | _both(
        ("tensorflow.random",),
        "uniform normal truncated_normal shuffle categorical gamma poisson",
    )
    | _both(("tensorflow.nn",), "dropout")
)
"""Ops that always draw random numbers (``jax.random`` is pure: its draws are a
function of the key, so it is not listed). Everything under ``numpy.random`` draws too."""

_TRAINING_FLAG: Mapping[str, tuple[str, int | None, bool]] = MappingProxyType(
    {
        "torch.nn.functional.dropout": ("training", 2, True),
        "torch.nn.functional.dropout1d": ("training", 2, True),
        "torch.nn.functional.dropout2d": ("training", 2, True),
        "torch.nn.functional.dropout3d": ("training", 2, True),
        "torch.nn.functional.alpha_dropout": ("training", 2, False),
        "torch.nn.functional.feature_alpha_dropout": ("training", 2, False),
        "torch.nn.functional.rrelu": ("training", 3, False),
        "torch.dropout": ("train", 2, True),
        "torch.nn.functional.scaled_dot_product_attention": ("dropout_p", 4, False),
    }
)
"""Ops that draw only when a flag is set: name -> (keyword, position, default)."""


def is_generator(node: Node) -> bool:
    """Whether ``node`` draws random numbers: ``meta.generator``, or its name says so."""
    if node.meta.generator:
        return True
    op = node.op
    if op in GENERATOR_OPS or op.startswith("numpy.random."):
        return op not in ("numpy.random.seed",)
    if op in _TRAINING_FLAG:
        return _truthy_flag(node, *_TRAINING_FLAG[op])
    return False


# --------------------------------------------------------------- effects
EFFECT_OPS = frozenset(
    {
        "torch.manual_seed", "torch.seed", "torch.set_rng_state", "torch.random.manual_seed",
        "torch.random.seed", "torch.random.set_rng_state", "torch.set_grad_enabled",
        "numpy.random.seed", "numpy.random.set_state", "tensorflow.random.set_seed",
    }
)  # fmt: skip
"""Ops that change process state (random seeds, grad mode): always kept, never merged."""


def is_effect(node: Node) -> bool:
    """Whether ``node`` must stay even when nothing reads it: an ``ivytrace.setattr``
    write-back, an ``ivytrace.guard``, ``meta.effect``, or an op of :data:`EFFECT_OPS`."""
    return (
        node.meta.effect
        or node.op in ("ivytrace.setattr", "ivytrace.guard")
        or node.op in EFFECT_OPS
    )


# ------------------------------------------------------------ copy ops
COPY_OPS: Mapping[str, str] = MappingProxyType({"torch": "torch.clone", "numpy": "numpy.copy"})
"""Per framework, the op that makes a fresh copy of an array (for constants that the
graph changes in place: each call must start from its own copy)."""

COPY_INTO_OPS: Mapping[str, str] = MappingProxyType({"torch": "torch.Tensor.copy_"})
"""Per framework, the op ``copy_into(dest, src)`` that overwrites ``dest`` in place
(for in-place random draws baked into constants)."""
