"""Pytrees: flatten/unflatten round trips, and output classes after loading."""

from __future__ import annotations

import collections
import dataclasses
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from ir_support import Pair, Point, is_array, pytrees, same_tree

from ivytrace_ir import (
    LEAF,
    GraphBuilder,
    TensorSpec,
    TreeDef,
    flatten,
    load,
    save,
    unflatten,
)


def a(*values: float) -> np.ndarray:
    return np.array(values, np.float32)


def round_trip(tree):
    leaves, treedef = flatten(tree, is_array)
    assert treedef.num_leaves == len(leaves)
    return leaves, treedef, unflatten(treedef, leaves)


@pytest.mark.parametrize(
    "tree, kind, n",
    [
        (a(1), "leaf", 1),
        ((a(1), a(2)), "tuple", 2),
        ([a(1), 3, "s"], "list", 1),
        ({"x": a(1), 0: None, "y": (a(2),)}, "dict", 2),
        (None, "none", 0),
        (Point(a(1), 2.5), "namedtuple", 1),
        (Pair(a(1), [a(2), a(3)]), "dataclass", 3),
        (collections.OrderedDict([(2, a(1)), ("k", a(2))]), "mapping", 2),
        ((), "tuple", 0),
        (7, "static", 0),
    ],
)
def test_round_trip(tree, kind: str, n: int) -> None:
    leaves, treedef, back = round_trip(tree)
    assert treedef.kind == kind and len(leaves) == n
    assert same_tree(back, tree)


def test_leaves_come_in_depth_first_order() -> None:
    x, y, z = a(1), a(2), a(3)
    leaves, treedef = flatten({"b": (x, [y]), "a": Pair(z)}, is_array)
    assert [id(v) for v in leaves] == [id(x), id(y), id(z)]
    assert treedef.keys == ("b", "a")  # insertion order, not sorted
    assert str(treedef) == "{'b': (*, [*]), 'a': Pair(first=*, second=None)}"


def test_static_leaves_are_kept_and_compared() -> None:
    _, t1 = flatten((a(1), 3, "mode"), is_array)
    _, t2 = flatten((a(1), 4, "mode"), is_array)
    assert t1 != t2  # a different static value is a different tree
    assert t1.children[1] == TreeDef("static", value=3)


def test_opaque_marks_containers_as_leaves() -> None:
    state = {"count": 1}
    leaves, treedef = flatten((state, a(1)), is_array, opaque=lambda o: o is state)
    assert leaves[0] is state and treedef.children[0] == LEAF


def test_dataclass_fields_without_init_are_rebuilt_by_the_class() -> None:
    @dataclasses.dataclass
    class WithDerived:
        x: np.ndarray
        n: int = dataclasses.field(init=False)

        def __post_init__(self) -> None:
            self.n = int(self.x.size)

    _, treedef, back = round_trip(WithDerived(a(1, 2)))
    assert treedef.keys == ("x",) and back.n == 2


def test_unflatten_checks_the_leaf_count() -> None:
    _, treedef = flatten((a(1), a(2)), is_array)
    with pytest.raises(ValueError, match="more leaves than the 2"):
        unflatten(treedef, [1, 2, 3])
    with pytest.raises(ValueError, match="fewer leaves than the 2"):
        unflatten(treedef, [1])


def test_unknown_kind_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown tree kind"):
        TreeDef("set")


@settings(max_examples=60, deadline=None)
@given(tree=pytrees)
def test_random_pytrees_round_trip(tree) -> None:
    leaves, _, back = round_trip(tree)
    assert same_tree(back, tree)
    # The leaves themselves are handed back, not copies.
    again, _ = flatten(back, is_array)
    assert [id(x) for x in again] == [id(x) for x in leaves]


def test_transformers_model_output() -> None:
    torch = pytest.importorskip("torch")
    outputs = pytest.importorskip("transformers.modeling_outputs")
    out = outputs.BaseModelOutput(last_hidden_state=torch.ones(2), hidden_states=(torch.zeros(1),))
    leaves, treedef = flatten(out, lambda x: isinstance(x, torch.Tensor))
    assert treedef.kind == "mapping" and treedef.keys == ("last_hidden_state", "hidden_states")
    assert treedef.type_name == "transformers.modeling_outputs.BaseModelOutput"
    back = unflatten(treedef, leaves)
    assert type(back) is outputs.BaseModelOutput
    assert back.last_hidden_state is leaves[0] and back[1][0] is leaves[1]
    assert back.attentions is None


def test_torch_return_types() -> None:
    torch = pytest.importorskip("torch")
    result = torch.max(torch.tensor([[1.0, 5.0], [3.0, 2.0]]), dim=0)
    leaves, treedef = flatten(result, lambda x: isinstance(x, torch.Tensor))
    assert treedef.kind == "namedtuple" and treedef.keys == ("values", "indices")
    assert len(leaves) == 2
    back = unflatten(treedef, leaves)
    assert type(back) is type(result)
    assert back.values is leaves[0] and back.indices is leaves[1]


# ---------------------------------------------------------------- output classes after loading


def graph_returning(tree) -> GraphBuilder:
    """A graph that returns ``tree`` with its float32 arrays as dynamic outputs."""
    b = GraphBuilder("out")
    x = b.add_input(TensorSpec("numpy", "float32", (1,)), "x")
    leaves, treedef = flatten(tree, is_array)
    outs = [
        b.add_node("numpy.negative", (x,), out_specs=(TensorSpec("numpy", "float32", (1,)),))[0]
        for _ in leaves
    ]
    return b.build(
        tuple(outs), treedef, in_tree=TreeDef("tuple", (TreeDef("tuple", (LEAF,)), TreeDef("dict")))
    )


@pytest.mark.parametrize(
    "tree, plain",
    [
        (Point(a(1), a(2)), (10, 20)),
        (Pair(a(1), a(2)), {"first": 10, "second": 20}),
    ],
    ids=["namedtuple", "dataclass"],
)
def test_classes_outside_the_container_modules_come_back_plain(tree, plain, tmp_path: Path) -> None:
    graph = graph_returning(tree)
    assert type(unflatten(graph.out_tree, [10, 20])) is type(tree)  # in this process: the class
    loaded = load(save(graph, tmp_path / "g.ivy"), native=False)
    assert loaded.out_tree.type_name == graph.out_tree.type_name
    assert loaded.out_tree.type is None
    rebuilt = unflatten(loaded.out_tree, [10, 20])
    assert type(rebuilt) is type(plain) and rebuilt == plain


def test_classes_in_the_container_modules_are_rebuilt(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    outputs = pytest.importorskip("transformers.modeling_outputs")
    tree = {
        "hf": outputs.BaseModelOutput(last_hidden_state=a(1)),
        "od": collections.OrderedDict(k=a(2)),
        "max": torch.return_types.max((a(3), a(4))),
    }
    loaded = load(save(graph_returning(tree), tmp_path / "g.ivy"), native=False)
    back = unflatten(loaded.out_tree, [1, 2, 3, 4])
    assert type(back["hf"]) is outputs.BaseModelOutput and back["hf"].last_hidden_state == 1
    assert type(back["od"]) is collections.OrderedDict and back["od"] == {"k": 2}
    assert type(back["max"]) is torch.return_types.max and tuple(back["max"]) == (3, 4)


def test_container_modules_can_be_narrowed(tmp_path: Path) -> None:
    path = save(graph_returning(collections.OrderedDict(k=a(1))), tmp_path / "g.ivy")
    assert type(unflatten(load(path).out_tree, [1])) is collections.OrderedDict
    assert type(unflatten(load(path, containers=()).out_tree, [1])) is dict
