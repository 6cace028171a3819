"""Small builders shared by the passes tests."""

from ivytrace_ir import LEAF, GraphBuilder, TensorSpec, TreeDef, Value


def t(*shape, dtype="float32", fw="torch"):
    """The spec of an array of ``fw`` with this shape."""
    return TensorSpec(fw, dtype, shape)


def args_tree(n):
    """The input tree of a call with ``n`` positional array arguments."""
    return TreeDef("tuple", (TreeDef("tuple", (LEAF,) * n), TreeDef("dict")))


def builder(name: str = "fn", **inputs: TensorSpec) -> tuple[GraphBuilder, *tuple[Value, ...]]:
    """A graph builder with one named input per keyword, in order: ``b, x, y = builder(x=t(3),
    y=t(3))``."""
    b = GraphBuilder(name)
    return (b, *(b.add_input(spec, key) for key, spec in inputs.items()))
