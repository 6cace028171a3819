"""Small builders shared by the passes tests."""

from ivytrace_ir import LEAF, TensorSpec, TreeDef


def t(*shape, dtype="float32", fw="torch"):
    """The spec of an array of ``fw`` with this shape."""
    return TensorSpec(fw, dtype, shape)


def args_tree(n):
    """The input tree of a call with ``n`` positional array arguments."""
    return TreeDef("tuple", (TreeDef("tuple", (LEAF,) * n), TreeDef("dict")))
