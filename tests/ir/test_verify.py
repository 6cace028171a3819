"""verify(): malformed graphs fail with a message naming the node and printing its neighbours."""

from __future__ import annotations

import re

import numpy as np
import pytest
from ir_support import args_tree

from ivytrace_ir import (
    LEAF,
    Const,
    Constant,
    Graph,
    Node,
    NodeMeta,
    SourceLoc,
    Symbol,
    TensorSpec,
    TreeDef,
    Value,
    VerifyError,
    verify,
)

F = TensorSpec("torch", "float32", (2,))
X = Value(0, F)


def v(i: int) -> Value:
    return Value(i, F)


def chain(*nodes: Node, outputs=None, out_tree=LEAF, constants=()) -> Graph:
    """A graph of input ``x`` (id 0) and the given nodes; by default returns the last value."""
    if outputs is None:
        outputs = (nodes[-1].outputs[0],)
    return Graph((X,), nodes, outputs, args_tree(1), out_tree, tuple(constants))


def node(op: str, *args, out: int | None = None, **kwargs) -> Node:
    outs = () if out is None else (v(out),)
    return Node(op, args, tuple(kwargs.items()), outs, LEAF if outs else TreeDef("none"))


def sound() -> list[Node]:
    """Five well-formed nodes: %1..%5 each read the one before."""
    return [
        node("torch.sin", X, out=1),
        node("torch.cos", v(1), out=2),
        node("torch.add", v(2), v(1), out=3),
        node("torch.Tensor.__pow__", v(3), 2, out=4),
        node("torch.exp", v(4), out=5),
    ]


def check_failure(graph: Graph, index: int, *fragments: str) -> str:
    with pytest.raises(VerifyError) as info:
        verify(graph)
    msg = str(info.value)
    bad = graph.nodes[index]
    assert info.value.node_index == index
    assert f"node [{index}] {bad.op}" in msg.splitlines()[0]
    marked = [line for line in msg.splitlines() if ">>" in line]
    assert len(marked) == 1 and re.search(rf">> \[{index}\] .*{re.escape(bad.op)}\(", marked[0])
    for j in range(max(0, index - 2), min(len(graph.nodes), index + 3)):
        assert f"[{j}]" in msg  # the neighbours are printed too
    for fragment in fragments:
        assert fragment in msg
    return msg


def test_sound_graph_is_returned_unchanged() -> None:
    g = chain(*sound())
    assert verify(g) is g


def test_use_before_define() -> None:
    nodes = sound()
    nodes[1] = node("torch.cos", v(4), out=2)  # reads %4, made two nodes later
    check_failure(chain(*nodes), 1, "reads value id 4, which is not defined before it")


def test_dangling_const() -> None:
    nodes = sound()
    nodes[2] = node("torch.add", v(2), Const(3), out=3)
    c = Constant(np.zeros(2, np.float32), F)
    check_failure(chain(*nodes, constants=(c,)), 2, "reads constant $c3; the graph has 1")


def test_node_output_count_mismatch() -> None:
    nodes = sound()
    nodes[3] = Node("torch.Tensor.__pow__", (v(3), 2), (), (v(4), v(9)), LEAF)
    check_failure(chain(*nodes), 3, "2 outputs but its output tree has 1 leaves")


def test_graph_output_count_mismatch() -> None:
    g = chain(*sound(), outputs=(v(5), v(4)))
    with pytest.raises(VerifyError, match="2 outputs but the output tree has 1 leaves") as info:
        verify(g)
    assert info.value.node_index is None


def test_graph_output_reading_an_undefined_value() -> None:
    with pytest.raises(VerifyError, match="graph output 0 reads value id 42"):
        verify(chain(*sound(), outputs=(v(42),)))


def test_input_count_mismatch() -> None:
    g = chain(*sound()).replace(in_tree=args_tree(2))
    with pytest.raises(VerifyError, match="1 inputs but the input tree has 2 leaves"):
        verify(g)


@pytest.mark.parametrize(
    "op, fragment",
    [
        ("os.system", "refused"),
        ("torch.load", "is refused"),
        ("torch..add", "not a dotted Python name"),
        ("torch._C._nn.linear", "goes through a private name"),
        ("ivytrace.frobnicate", "unknown structural op"),
    ],
)
def test_bad_op_name(op: str, fragment: str) -> None:
    nodes = sound()
    nodes[2] = node(op, v(2), v(1), out=3)
    check_failure(chain(*nodes), 2, fragment)


def test_value_defined_twice() -> None:
    nodes = sound()
    nodes[4] = node("torch.exp", v(4), out=2)
    check_failure(chain(*nodes, outputs=(v(2),)), 4, "value id 2 (output) is defined twice")


def test_symbol_outside_the_allowlist() -> None:
    nodes = sound()
    nodes[0] = node("torch.sin", X, out=1, fn=Symbol("os.system"))
    check_failure(chain(*nodes), 0, "holds symbol", "os.system")


def test_argument_that_is_not_an_ir_value() -> None:
    nodes = sound()
    nodes[4] = node("torch.exp", v(4), out=5, where=[1, object()])
    check_failure(chain(*nodes), 4, "holds a object, which is not an IR argument")


def test_bad_keyword_mutates_and_structural_ops() -> None:
    nodes = sound()
    nodes[1] = Node("torch.cos", (v(1),), (("not an id", 1),), (v(2),))
    check_failure(chain(*nodes), 1, "keyword 'not an id' is not an identifier")

    nodes = sound()
    nodes[1] = Node("torch.cos", (v(1),), (), (v(2),), LEAF, NodeMeta(mutates=(3,)))
    check_failure(chain(*nodes), 1, "mutates argument 3, but it has 1")

    nodes = sound()
    nodes[2] = node("ivytrace.getattr", v(2), "__class__", out=3)
    check_failure(chain(*nodes), 2, "is a dunder; refused")

    nodes = sound()
    nodes[2] = node("ivytrace.guard", v(2), out=3)
    check_failure(chain(*nodes), 2, "a guard takes (value, expected)")


def test_message_names_the_source_line() -> None:
    nodes = sound()
    src = SourceLoc("/home/u/model.py", 7, "forward")
    nodes[3] = Node("os.system", (v(3),), (), (v(4),), LEAF, NodeMeta(source=src))
    msg = check_failure(chain(*nodes), 3)
    assert "(from /home/u/model.py:7 in forward)" in msg


def test_neighbourhood_at_the_edges() -> None:
    nodes = sound()
    nodes[0] = node("os.system", X, out=1)
    msg = check_failure(chain(*nodes), 0)
    assert "[3]" not in msg  # two neighbours on each side, no more


def test_keyed_trees_need_one_key_per_child() -> None:
    short = TreeDef("dict", (LEAF, TreeDef("none")), ("only_one",))
    with pytest.raises(VerifyError, match="the output tree has a dict of 2 items but 1 keys"):
        verify(chain(*sound(), out_tree=short))
    nodes = sound()
    nodes[1] = Node("torch.cos", (v(1),), (), (v(2),), TreeDef("mapping", (LEAF,), (), "x.Cfg"))
    check_failure(chain(*nodes), 1, "its output tree has a mapping of 1 items but 0 keys")
