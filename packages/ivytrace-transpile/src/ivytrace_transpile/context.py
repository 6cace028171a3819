"""What a translation rule knows besides its arguments (:class:`RuleContext`), and the
rules' type (:data:`Rule`).

Its own module so that the rules can import it at run time without the cycle
``rules -> translate -> decompose -> rules``: it imports the targets and the IR only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ivytrace_intercept import IdentityMap
from ivytrace_ir import Node, TensorSpec, framework_of

from .targets import Target

__all__ = ["Rule", "RuleContext"]


@dataclass(frozen=True, slots=True)
class RuleContext:
    """What a rule knows besides its arguments: the target, the source node, and the
    source framework's values for the node on the example inputs (for static facts such
    as dtypes and ranks only; a rule never bakes a value from them)."""

    target: Target
    """The framework being translated into."""
    node: Node
    """The source node."""
    ref_args: tuple[Any, ...]
    """The node's positional arguments as the source run saw them."""
    ref_kwargs: Mapping[str, Any]
    """Its keyword arguments as the source run saw them."""
    ref_out: Any
    """What the source call returned."""
    specs: IdentityMap
    """Target array -> the spec of the source value it stands for (for every array the
    translated run has made so far): dtypes without reading the target array."""

    def out_spec(self, i: int = 0) -> TensorSpec:
        """The spec of the node's ``i``-th output."""
        spec = self.node.outputs[i].spec
        if not isinstance(spec, TensorSpec):
            raise TypeError(f"output {i} of {self.node.op} is not an array")
        return spec

    def out_dtype(self, i: int = 0) -> str:
        """The target's dtype for the node's ``i``-th output (canonical name)."""
        return self.target.canonical_dtype(self.out_spec(i).dtype)

    def dtype(self, native: Any) -> str:
        """A source framework's dtype object (``torch.float32``) as the target's canonical
        dtype name."""
        name = str(getattr(native, "name", None) or native).rsplit(".", 1)[-1]
        name = {"float": "float32", "double": "float64", "long": "int64", "int": "int32",
                "half": "float16", "bool_": "bool"}.get(name, name)  # fmt: skip
        return self.target.canonical_dtype(name)

    def dtype_of(self, x: Any) -> str:
        """The target's canonical dtype of a target array, from the source spec it stands
        for (no dtype read is recorded) or, for an array a rule made, from the array."""
        spec = self.specs.get(x)
        if isinstance(spec, TensorSpec):
            return self.target.canonical_dtype(spec.dtype)
        return self.target.canonical_dtype(
            str(getattr(x.dtype, "name", x.dtype))
            .rsplit(".", 1)[-1]
            .replace("bool_", "bool")
            .strip("'>")
        )

    def static_shape(self, x: Any, dims: Any = None) -> tuple[int, ...]:
        """The sizes of target array ``x`` (of ``dims`` only, if given) as plain ints, each
        guarded in the translated graph: for a rule whose computation depends on the sizes (window counts, result
        counts). Prefer ``target.shape(x)`` (tracked, recomputed per call) where Python
        arithmetic on the sizes is enough; never the example's sizes (``ref_args``), which
        would be baked unguarded."""
        shape = self.target.shape(x)
        return tuple(int(shape[d]) for d in (range(len(shape)) if dims is None else dims))

    def ref_dtype(self, arg: Any) -> str | None:
        """The canonical dtype of a source-side argument value, if it is an array."""
        if framework_of(arg) is None:
            return None
        return self.dtype(arg.dtype)

    # ---- the dtype policy: what every target does with bool, integer and float arrays
    def fill_value(self, value: Any, dtype: str) -> Any:
        """A Python number as a fill value of ``dtype``, converted as torch converts it
        (``new_ones(..., dtype=torch.bool)`` fills with ``True``; tensorflow refuses
        ``1`` for a bool tensor). A tracked size stays tracked where the type allows."""
        if isinstance(value, bool) or not isinstance(value, int | float | complex):
            return value
        if dtype == "bool":
            return bool(value)  # a tracked size's truth is guarded, as Python's ``if n`` is
        if dtype.startswith(("int", "uint")):
            return value if isinstance(value, int) else int(value)
        if dtype.startswith(("float", "bfloat")) and isinstance(value, complex):
            return value.real
        return value

    def full(self, shape: Any, value: Any, dtype: str | None = None) -> Any:
        """An array of ``shape`` filled with ``value`` (a number, or a target array that is
        broadcast), of ``dtype`` (default: the node's output dtype) on every target."""
        dtype = dtype or self.out_dtype()
        t = self.target
        if t.is_array(value):
            if self.dtype_of(value) != dtype:
                value = t.cast(value, dtype)
            return t.broadcast_to(value, list(shape))
        return t.full(list(shape), self.fill_value(value, dtype), dtype)

    def decomposed(self, *args: Any, **kwargs: Any) -> Any:
        """The node's call (``args``/``kwargs``: target arrays in place of source arrays)
        translated through PyTorch's decomposition of it, as for an op with no rule: for
        the cases a hand-written rule leaves to it (``torch.gradient`` with coordinate
        tensors). Through the context, so that no rule module imports ``decompose.py``,
        which imports the rules."""
        from .decompose import decomposed_rule

        return decomposed_rule(self, *args, **kwargs)

    def ew(self, name: str, *args: Any) -> Any:
        """The target's elementwise ``name`` under the dtype policy: bitwise operations,
        addition, multiplication, maximum and minimum of bools are the logical ones
        (tensorflow has none of them on bool), and
        ``isfinite`` / ``isinf`` / ``isnan`` of integers and bools are constant (no
        integer is infinite or nan; tensorflow accepts only floats there)."""
        t = self.target
        arrays = [a for a in args if t.is_array(a)]
        kinds = {self.dtype_of(a) for a in arrays}
        exact = all(k == "bool" or k.startswith(("int", "uint")) for k in kinds)
        if name in ("isfinite", "isinf", "isnan") and arrays and exact:
            (x,) = args
            return t.full(t.shape(x), name == "isfinite", "bool")
        if arrays and kinds == {"bool"}:
            # torch's arithmetic of bools is logical (True + True is True); tensorflow has
            # no bitwise, add, multiply, maximum or minimum of bools
            logical = {"bitwise_not": "logical_not", "bitwise_and": "logical_and",
                       "bitwise_or": "logical_or", "bitwise_xor": "logical_xor",
                       "add": "logical_or", "multiply": "logical_and", "maximum": "logical_or",
                       "minimum": "logical_and"}.get(name)  # fmt: skip
            if logical is not None:
                return t.ew(logical, *args)
        return t.ew(name, *args)


Rule = Callable[..., Any]
"""``rule(cx: RuleContext, *args, **kwargs)``: the node's call, with target arrays in place
of source arrays; returns what the source call returned, in the same structure."""
