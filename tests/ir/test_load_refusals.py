"""Loading refuses tampered, truncated, foreign and newer files, and runs nothing from them."""

from __future__ import annotations

import io
import json
import pickle
import sys
import textwrap
import zipfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from ir_support import rewrite_member, tamper, tiny_graph

from ivytrace_ir import (
    DEFAULT_ALLOWLIST,
    LEAF,
    GraphBuilder,
    GraphFileError,
    ScalarSpec,
    Symbol,
    TensorSpec,
    TreeDef,
    UnsafeGraphError,
    load,
    save,
)

REFUSED_OPS = [
    "os.system",
    "builtins.eval",
    "builtins.exec",
    "numpy.load",
    "torch.load",
    "subprocess.run",
    "torch._C._nn.linear",
    "numpy.ndarray.dump",
    "tensorflow.raw_ops.WriteFile",
    "torch.Tensor.__reduce_ex__",
]


@pytest.fixture
def saved(tmp_path: Path) -> Path:
    return save(tiny_graph(), tmp_path / "tiny.ivy")


def set_op(op: str):
    def edit(s: dict) -> None:
        s["nodes"][0]["op"] = op

    return edit


# ---------------------------------------------------------------- names outside the allowlist


def test_untampered_file_loads(saved: Path) -> None:
    assert load(saved).ops == ("numpy.add",)


@pytest.mark.parametrize("op", REFUSED_OPS)
def test_tampered_op_name_is_refused(saved: Path, op: str) -> None:
    tamper(saved, set_op(op))
    with pytest.raises(UnsafeGraphError) as info:
        load(saved)
    msg = str(info.value)
    assert str(saved) in msg and repr(op) in msg and "node [0]" in msg
    assert "refused" in msg and "Nothing was run" in msg


@pytest.mark.parametrize(
    "where",
    ["arg", "kwarg", "nested", "graph output", "static leaf of the output tree", "input tree"],
)
def test_tampered_symbol_is_refused_wherever_it_sits(saved: Path, where: str) -> None:
    evil = {"sym": "os.system"}

    def edit(s: dict) -> None:
        node = s["nodes"][0]
        if where == "arg":
            node["args"][1] = evil
        elif where == "kwarg":
            node["kwargs"] = [["dtype", evil]]
        elif where == "nested":
            node["args"].append({"tuple": [1, [2, {"dict": [["k", evil]]}]]})
        elif where == "graph output":
            s["outputs"] = [evil]
        elif where == "static leaf of the output tree":
            s["out_tree"] = {
                "kind": "tuple",
                "children": [{"kind": "leaf"}, {"kind": "static", "value": evil}],
            }
        else:
            s["in_tree"]["children"][1] = {
                "kind": "dict",
                "keys": ["k"],
                "children": [{"kind": "static", "value": evil}],
            }

    tamper(saved, edit)
    with pytest.raises(UnsafeGraphError, match=r"symbol 'os\.system'.*refused"):
        load(saved)


MARKER_MODULE = """
from pathlib import Path
Path({marker!r}).with_suffix(".imported").write_text("imported")

def boom(*args, **kwargs):
    Path({marker!r}).write_text("called")

class Evil(tuple):
    def __new__(cls, *args):
        Path({marker!r}).write_text("constructed")
        return super().__new__(cls, args)
"""


@pytest.fixture
def marker_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An importable module ``ivy_marker_mod`` that leaves a file behind when imported, when
    its ``boom`` is called, or when its ``Evil`` class is built."""
    marker = tmp_path / "marker"
    (tmp_path / "ivy_marker_mod.py").write_text(
        textwrap.dedent(MARKER_MODULE.format(marker=str(marker)))
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "ivy_marker_mod", raising=False)
    return marker


def assert_nothing_ran(marker: Path) -> None:
    assert not marker.exists()
    assert not marker.with_suffix(".imported").exists()
    assert "ivy_marker_mod" not in sys.modules


def test_the_marker_module_would_be_noticed(marker_module: Path) -> None:
    # The control: importing and calling it leaves both files.
    import ivy_marker_mod

    ivy_marker_mod.boom()
    assert marker_module.exists() and marker_module.with_suffix(".imported").exists()


@pytest.mark.parametrize("native", [True, False])
def test_refused_op_is_neither_imported_nor_called(
    saved: Path, marker_module: Path, native: bool
) -> None:
    tamper(saved, set_op("ivy_marker_mod.boom"))
    with pytest.raises(UnsafeGraphError, match=r"ivy_marker_mod\.boom"):
        load(saved, native=native)
    assert_nothing_ran(marker_module)


def test_refused_symbol_is_not_imported(saved: Path, marker_module: Path) -> None:
    tamper(saved, lambda s: s["nodes"][0]["kwargs"].append(["f", {"sym": "ivy_marker_mod.boom"}]))
    with pytest.raises(UnsafeGraphError):
        load(saved)
    assert_nothing_ran(marker_module)


def test_output_class_outside_the_container_modules_is_not_imported(
    saved: Path, marker_module: Path
) -> None:
    def edit(s: dict) -> None:
        s["out_tree"] = {
            "kind": "namedtuple",
            "children": [{"kind": "leaf"}],
            "keys": ["a"],
            "type_name": "ivy_marker_mod.Evil",
        }

    tamper(saved, edit)
    graph = load(saved)  # loads: the class is only a label, and it is rebuilt as a plain tuple
    assert graph.out_tree.type_name == "ivy_marker_mod.Evil" and graph.out_tree.type is None
    assert_nothing_ran(marker_module)


def test_the_allowlist_can_be_extended_in_code(saved: Path) -> None:
    tamper(saved, set_op("statistics.fmean"))
    with pytest.raises(UnsafeGraphError):
        load(saved)
    graph = load(saved, allow=DEFAULT_ALLOWLIST.extend(namespaces=("statistics",)))
    assert graph.ops == ("statistics.fmean",)
    with pytest.raises(UnsafeGraphError):  # the default is untouched
        load(saved)


# ---------------------------------------------------------------- damaged and foreign files


def test_truncated_files_name_the_file(saved: Path) -> None:
    blob = saved.read_bytes()
    cuts = sorted({0, 1, 2, 4, 30, len(blob) // 3, len(blob) // 2, len(blob) - 22, len(blob) - 1})
    for cut in cuts:
        saved.write_bytes(blob[:cut])
        with pytest.raises(GraphFileError) as info:
            load(saved)
        assert str(saved) in str(info.value), cut
        assert not isinstance(info.value, UnsafeGraphError), cut


def test_truncated_array_member(saved: Path) -> None:
    with zipfile.ZipFile(saved) as zf:
        npy = zf.read("arrays/0.npy")
    rewrite_member(saved, "arrays/0.npy", npy[: len(npy) - 3])
    with pytest.raises(GraphFileError, match=r"arrays/0\.npy"):
        load(saved)


def test_missing_array_member(saved: Path) -> None:
    with zipfile.ZipFile(saved) as zf:
        structure = zf.read("graph.json")
    with zipfile.ZipFile(saved, "w") as zf:
        zf.writestr("graph.json", structure)
    with pytest.raises(GraphFileError, match=r"arrays/0\.npy unreadable"):
        load(saved)


def test_newer_format_version_asks_for_an_upgrade(saved: Path) -> None:
    tamper(saved, lambda s: s.update(format_version=99))
    with pytest.raises(GraphFileError, match="version 99, newer than this ivytrace reads") as info:
        load(saved)
    assert "upgrade" in str(info.value) and not isinstance(info.value, UnsafeGraphError)


@pytest.mark.parametrize("protocol", range(2, pickle.HIGHEST_PROTOCOL + 1))
def test_raw_pickle_file_is_refused(tmp_path: Path, protocol: int) -> None:
    path = tmp_path / "model.ivy"
    path.write_bytes(pickle.dumps({"weights": [1, 2, 3]}, protocol=protocol))
    with pytest.raises(UnsafeGraphError, match="pickle") as info:
        load(path)
    assert str(path) in str(info.value)


def test_torch_save_file_is_refused_as_a_pickle(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    path = tmp_path / "weights.pt"
    torch.save({"w": torch.ones(2)}, path)
    with pytest.raises(UnsafeGraphError, match="pickle"):
        load(path)


def test_pickled_object_array_member_is_refused(saved: Path) -> None:
    buf = io.BytesIO()
    np.save(buf, np.array([{"a": 1}, None, 3], dtype=object), allow_pickle=True)
    tamper(saved, lambda s: s["constants"][0]["spec"]["tensor"].__setitem__(2, [3]))
    rewrite_member(saved, "arrays/0.npy", buf.getvalue())
    with pytest.raises(UnsafeGraphError, match=r"arrays/0\.npy.*pickle"):
        load(saved)


def test_raw_pickle_as_array_member_is_refused(saved: Path) -> None:
    rewrite_member(saved, "arrays/0.npy", pickle.dumps(np.ones(3, np.float32)))
    with pytest.raises(UnsafeGraphError, match=r"arrays/0\.npy is a Python pickle"):
        load(saved)


def test_garbage_array_member_is_corrupt_not_a_pickle(saved: Path) -> None:
    rewrite_member(saved, "arrays/0.npy", b"not an array at all")
    with pytest.raises(GraphFileError, match=r"corrupt array arrays/0\.npy") as info:
        load(saved)
    assert not isinstance(info.value, UnsafeGraphError)


def test_array_of_the_wrong_shape(saved: Path) -> None:
    buf = io.BytesIO()
    np.save(buf, np.ones(4, np.float32))
    rewrite_member(saved, "arrays/0.npy", buf.getvalue())
    with pytest.raises(GraphFileError, match=r"constant 0 has shape \(4,\)"):
        load(saved)


def test_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(GraphFileError, match="is a directory"):
        load(tmp_path)


def test_corrupt_json(saved: Path) -> None:
    rewrite_member(saved, "graph.json", b'{"format": "ivytrace-graph", "nodes": [')
    with pytest.raises(GraphFileError, match=r"graph\.json is not JSON"):
        load(saved)


def test_zip_without_graph_json(tmp_path: Path) -> None:
    path = tmp_path / "other.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("readme.txt", "hello")
    with pytest.raises(GraphFileError, match=r"no graph\.json"):
        load(path)


def test_json_of_another_format(saved: Path) -> None:
    tamper(saved, lambda s: s.update(format="something-else"))
    with pytest.raises(GraphFileError, match="format marker missing"):
        load(saved)


def test_reference_to_a_value_defined_later(saved: Path) -> None:
    tamper(saved, lambda s: s["nodes"][0]["args"].__setitem__(0, {"v": 1}))
    with pytest.raises(GraphFileError, match="undefined value id 1"):
        load(saved)


def test_graph_that_does_not_verify(saved: Path) -> None:
    tamper(saved, lambda s: s["nodes"][0]["args"].__setitem__(1, {"c": 5}))
    with pytest.raises(GraphFileError, match=r"does not verify.*constant \$c5"):
        load(saved)


FUZZ = settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@FUZZ
@given(
    data=st.binary(max_size=300), prefix=st.sampled_from([b"", b"PK", b"PK\x03\x04", b"\x93NUMPY"])
)
def test_garbage_bytes(tmp_path: Path, data: bytes, prefix: bytes) -> None:
    path = tmp_path / "garbage.ivy"
    path.write_bytes(prefix + data)
    with pytest.raises(GraphFileError) as info:
        load(path)
    assert str(path) in str(info.value)


def json_values() -> st.SearchStrategy:
    scalars = st.one_of(
        st.none(),
        st.booleans(),
        st.integers(-3, 3),
        st.floats(allow_nan=False),
        st.text(max_size=3),
    )
    tags = st.sampled_from(["v", "c", "sym", "tuple", "dict", "slice", "kind", "tensor", "float"])
    return st.recursive(
        scalars,
        lambda inner: st.one_of(
            st.lists(inner, max_size=3), st.dictionaries(tags, inner, max_size=2)
        ),
        max_leaves=5,
    )


def json_paths(obj, path=()):
    yield path
    items = (
        obj.items() if isinstance(obj, dict) else enumerate(obj) if isinstance(obj, list) else ()
    )
    for k, v in items:
        yield from json_paths(v, (*path, k))


@FUZZ
@given(data=st.data())
def test_any_edit_of_graph_json_loads_cleanly_or_raises_graph_file_error(
    tmp_path: Path, data
) -> None:
    b = GraphBuilder("fuzz")
    x = b.add_input(TensorSpec("numpy", "float32", (2,)), "x")
    c = b.add_constant(np.ones(2, np.float32), TensorSpec("numpy", "float32", (2,)))
    (y,) = b.add_node(
        "numpy.add",
        (x, [c, (1, slice(None, 2))]),
        {"dtype": Symbol("numpy.float32")},
        (TensorSpec("numpy", "float32", (2,)),),
    )
    (z,) = b.add_node("builtins.len", (y,), out_specs=(ScalarSpec("int"),))
    graph = b.build(
        (y, z),
        TreeDef("tuple", (LEAF, LEAF)),
        in_tree=TreeDef("tuple", (TreeDef("tuple", (LEAF,)), TreeDef("dict"))),
    )
    path = save(graph, tmp_path / "fuzz.ivy")
    with zipfile.ZipFile(path) as zf:
        structure = json.loads(zf.read("graph.json"))
    target = data.draw(st.sampled_from(list(json_paths(structure))[1:]))
    parent = structure
    for k in target[:-1]:
        parent = parent[k]
    if isinstance(parent, dict) and data.draw(st.booleans()):
        del parent[target[-1]]
    else:
        parent[target[-1]] = data.draw(json_values())
    rewrite_member(path, "graph.json", json.dumps(structure).encode())
    try:
        load(path, native=False)
    except GraphFileError as exc:
        assert str(path) in str(exc)


@FUZZ
@given(data=st.data())
def test_flipped_bytes_load_cleanly_or_raise_graph_file_error(saved: Path, data) -> None:
    blob = bytearray(saved.read_bytes())
    for _ in range(data.draw(st.integers(1, 3))):
        blob[data.draw(st.integers(0, len(blob) - 1))] = data.draw(st.integers(0, 255))
    damaged = saved.with_name("damaged.ivy")
    damaged.write_bytes(bytes(blob))
    try:
        load(damaged, native=False)
    except GraphFileError as exc:
        assert str(damaged) in str(exc)


@pytest.mark.parametrize(
    "key, value",
    [("nodes", 5), ("nodes", None), ("inputs", {}), ("input_names", 7), ("arg_names", True),
     ("constants", "x"), ("meta", []), ("out_tree", {"kind": "frob"}), ("in_tree", None)],
)  # fmt: skip
def test_malformed_top_level_fields(saved: Path, key: str, value) -> None:
    tamper(saved, lambda s: s.update({key: value}))
    with pytest.raises(GraphFileError, match="corrupt graph file") as info:
        load(saved)
    assert str(saved) in str(info.value)


def test_tree_keys_that_do_not_match_the_children(saved: Path) -> None:
    def edit(s: dict) -> None:
        s["out_tree"] = {
            "kind": "dict",
            "children": [{"kind": "leaf"}, {"kind": "none"}],
            "keys": ["a"],
        }

    tamper(saved, edit)
    with pytest.raises(GraphFileError, match=r"does not verify.*2 items but 1 keys"):
        load(saved)
