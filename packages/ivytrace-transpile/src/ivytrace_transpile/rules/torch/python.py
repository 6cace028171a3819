"""Rules for Python-level spellings of torch ops: ``operator.*`` and ``math.*`` on tracked
numbers, and the Tensor dunders (``__add__``, ``__radd__``, ``__iadd__``, ...)."""

from __future__ import annotations

from .._common import binary, cast_to, is_array, python_number_rules
from ..registry import TORCH_RULES, rule

__all__: list[str] = []


# ``operator.add(n, 1)``, ``math.ceil(n / 2)`` and the rest: shared by every source table
for _name, _fn in python_number_rules().items():
    TORCH_RULES.add(_name, _fn)


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
