"""Rules for Python-level spellings of torch ops: ``operator.*`` and ``math.*`` on tracked
numbers, and the Tensor dunders (``__add__``, ``__radd__``, ``__iadd__``, ...)."""

from __future__ import annotations

import math
import operator

from ivytrace_ir.opfacts import OPERATORS

from .._common import binary, cast_to, is_array
from ..registry import TORCH_RULES, rule

__all__: list[str] = []


def _python(fn):
    """A rule that applies Python's own ``fn`` to the call's values (numbers: sizes and
    scalars the graph tracks; arrays: the target's operator)."""
    return lambda cx, *a: fn(*a)


# ``operator.add(n, 1)`` and the rest, by their names in opfacts.OPERATORS (``in`` has none)
for _o in OPERATORS:
    TORCH_RULES.add([f"operator.{_n}" for _n in _o.names], _python(_o.function))
TORCH_RULES.add("operator.abs", _python(operator.abs))


for _name, _fn in {"math.ceil": math.ceil, "math.floor": math.floor, "math.trunc": math.trunc,
                   "builtins.round": round, "math.sqrt": math.sqrt}.items():  # fmt: skip
    TORCH_RULES.add(_name, _python(_fn))


@rule("torch.Tensor.__and__", "torch.Tensor.__or__", "torch.Tensor.__xor__")
def _bitwise_dunder(cx, a, b):
    """``a | b``: both operands in the result's dtype, as torch promotes them (a bool mask |
    an integer tensor is an integer tensor); bools are or-ed logically (the dtype policy,
    ``RuleContext.ew``)."""
    op = cx.node.op.rsplit(".", 1)[1].strip("_")
    return binary("bitwise_" + op)(cx, a, b)


def _shift(left: bool):
    """``a << b`` is ``a * 2**b`` and ``a >> b`` is ``a // 2**b`` (torch's arithmetic shift
    of signed integers), in the result's dtype."""

    def r(cx, a, b):
        t, dt = cx.target, cx.out_dtype()
        a = cast_to(cx, a, dt) if is_array(a) else t.asarray(a, dt)
        factor = t.ew("pow", t.asarray(2, dt), cast_to(cx, b, dt)) if is_array(b) else 2**b
        return a * factor if left else a // factor

    return r


TORCH_RULES.add(
    "torch.bitwise_left_shift", _shift(True), method=True, inplace=True, operator="lshift"
)
TORCH_RULES.add(
    "torch.bitwise_right_shift", _shift(False), method=True, inplace=True, operator="rshift"
)


TORCH_RULES.add(["torch.Tensor.__rdiv__"], binary("divide", swap=True))


TORCH_RULES.add(["torch.Tensor.__div__", "torch.Tensor.__idiv__"], binary("divide"))
