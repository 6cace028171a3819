"""What an operation's name (and flags) says about it: does it draw random numbers,
which argument does it change in place, does it change process state.

One set of tables, read by the interceptors when they record a call (runtime
arguments) and by the passes when they rewrite a node (IR arguments): both pass
``(op, args, kwargs)``. A flag that is not a plain Python value (a graph value
computed at run time) counts as set, so every answer errs on the safe side.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any

__all__ = [
    "EFFECT_OPS",
    "GENERATOR_OPS",
    "INPLACE_DUNDERS",
    "INPLACE_FLAG_POSITION",
    "INPLACE_OPS",
    "NON_DRAWING_RANDOM_OPS",
    "TRAINING_FLAG",
    "draws_random",
    "name_mutates",
]


def _names(prefixes: tuple[str, ...], names: str) -> frozenset[str]:
    return frozenset(f"{p}.{n}" for p in prefixes for n in names.split())


INPLACE_DUNDERS = frozenset(
    "__setitem__ __iadd__ __isub__ __imul__ __imatmul__ __itruediv__ __ifloordiv__ "
    "__imod__ __ipow__ __iand__ __ior__ __ixor__ __ilshift__ __irshift__".split()
)
"""Python's augmented-assignment dunders and ``__setitem__``: they change argument 0."""

INPLACE_OPS: Mapping[str, int] = MappingProxyType(
    {
        **dict.fromkeys(
            _names(
                ("numpy",), "copyto put place putmask fill_diagonal put_along_axis random.shuffle"
            ),
            0,
        ),
        **dict.fromkeys(
            _names(("numpy.ndarray",), "fill sort partition resize itemset setfield put"), 0
        ),
        "numpy.random.Generator.shuffle": 1,
        "numpy.random.Generator.permuted": 1,
        **dict.fromkeys(
            _names(
                ("tensorflow.Variable",),
                "assign assign_add assign_sub scatter_update scatter_add scatter_sub "
                "scatter_mul scatter_div scatter_max scatter_min scatter_nd_update "
                "scatter_nd_add scatter_nd_sub batch_scatter_update",
            ),
            0,
        ),
    }
)
"""Ops whose names do not say so but that change one positional argument in place:
name -> that position. Names that do say so (a trailing ``_`` on a torch op, the
dunders above) need no entry."""

INPLACE_FLAG_POSITION: Mapping[str, int] = MappingProxyType(
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

GENERATOR_OPS: frozenset[str] = (
    _names(
        ("torch",),
        "rand rand_like randn randn_like randint randint_like randperm bernoulli "
        "multinomial normal poisson",
    )
    | _names(
        ("torch.Tensor",),
        "bernoulli multinomial uniform_ normal_ bernoulli_ random_ exponential_ "
        "geometric_ log_normal_ cauchy_",
    )
    | _names(
        ("torch.nn.init",),
        "uniform_ normal_ trunc_normal_ xavier_uniform_ xavier_normal_ kaiming_uniform_ "
        "kaiming_normal_ orthogonal_ sparse_",
    )
    | _names(("torch.nn.functional",), "gumbel_softmax")
    | _names(
        ("tensorflow.random",),
        "uniform normal truncated_normal shuffle categorical gamma poisson",
    )
    | _names(("tensorflow.nn",), "dropout")
)
"""Ops that always draw random numbers. Everything under ``numpy.random`` draws too,
but :data:`NON_DRAWING_RANDOM_OPS`; ``jax.random`` draws are a function of their key
(the jax interceptor decides, from where the key comes from)."""

NON_DRAWING_RANDOM_OPS = _names(
    ("numpy.random",), "seed get_state set_state default_rng get_bit_generator set_bit_generator"
)
"""Callables under ``numpy.random`` that draw nothing."""

TRAINING_FLAG: Mapping[str, tuple[str, int | None, bool]] = MappingProxyType(
    {
        "torch.nn.functional.dropout": ("training", 2, True),
        "torch.nn.functional.dropout1d": ("training", 2, True),
        "torch.nn.functional.dropout2d": ("training", 2, True),
        "torch.nn.functional.dropout3d": ("training", 2, True),
        "torch.nn.functional.alpha_dropout": ("training", 2, False),
        "torch.nn.functional.feature_alpha_dropout": ("training", 2, False),
        "torch.nn.functional.rrelu": ("training", 3, False),
        "torch.dropout": ("train", 2, True),
        "torch.alpha_dropout": ("train", 2, True),
        "torch.feature_dropout": ("train", 2, True),
        "torch.feature_alpha_dropout": ("train", 2, True),
        "torch.nn.functional.scaled_dot_product_attention": ("dropout_p", 4, False),
    }
)
"""Ops that draw only when a flag is set: name -> (keyword, position, default)."""

EFFECT_OPS = frozenset(
    {
        "torch.manual_seed", "torch.seed", "torch.set_rng_state", "torch.random.manual_seed",
        "torch.random.seed", "torch.random.set_rng_state", "torch.set_grad_enabled",
        "numpy.random.seed", "numpy.random.set_state", "tensorflow.random.set_seed",
    }
)  # fmt: skip
"""Ops that change process state (random seeds, grad mode): always kept, never merged."""


def _flag(
    args: Sequence[Any], kwargs: Mapping[str, Any], name: str, position: int | None, default: bool
) -> bool:
    if name in kwargs:
        flag = kwargs[name]
    elif position is not None and position < len(args):
        flag = args[position]
    else:
        return default
    # A flag computed at run time (a graph value) might be set: assume it is.
    return bool(flag) if isinstance(flag, bool | int | float | type(None)) else True


def name_mutates(op: str, args: Sequence[Any], kwargs: Mapping[str, Any]) -> tuple[int, ...]:
    """Positions of the arguments ``op`` changes in place, by what its name and its
    ``inplace`` flag say (``out=`` is left to the caller: it is a keyword)."""
    if op in INPLACE_OPS:
        return (INPLACE_OPS[op],)
    attr = op.rsplit(".", 1)[-1]
    if attr in INPLACE_DUNDERS:
        return (0,)
    if op.startswith("torch.") and attr.endswith("_") and not attr.endswith("__"):
        return (0,)
    if ("inplace" in kwargs or op in INPLACE_FLAG_POSITION) and _flag(
        args, kwargs, "inplace", INPLACE_FLAG_POSITION.get(op), False
    ):
        return (0,)
    return ()


def draws_random(op: str, args: Sequence[Any], kwargs: Mapping[str, Any]) -> bool:
    """Whether calling ``op`` with these arguments draws random numbers."""
    if op in GENERATOR_OPS:
        return True
    if op.startswith("numpy.random."):
        return op not in NON_DRAWING_RANDOM_OPS
    if op in TRAINING_FLAG:
        return _flag(args, kwargs, *TRAINING_FLAG[op])
    return False
