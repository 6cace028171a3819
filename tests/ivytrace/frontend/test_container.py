"""Container: attribute access, nesting, copies, maps, flat lists, printing, pickling."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import ivytrace.frontend as ivy
from ivytrace_ir import flatten, unflatten


def _cont():
    return ivy.Container(a=np.ones(2, np.float32), b={"c": np.arange(3), "d": {"e": 5}})


def test_attribute_and_key_access():
    c = _cont()
    assert isinstance(c, dict)
    assert c.a is c["a"]
    assert isinstance(c.b, ivy.Container) and isinstance(c.b.d, ivy.Container)
    assert c.b.d.e == 5 == c["b"]["d"]["e"]
    c.new_attribute = 3  # a new attribute is a new key
    assert c["new_attribute"] == 3 and "new_attribute" in c
    c["f"] = {"g": 1}
    assert c.f.g == 1
    del c.f
    assert "f" not in c
    with pytest.raises(AttributeError):
        _ = c.missing
    assert hasattr(c, "a") and not hasattr(c, "missing")
    assert "a" in dir(c)
    c.update({"h": {"i": 2}})
    assert c.h.i == 2
    assert ivy.Container({"x": 1}, y=2) == {"x": 1, "y": 2}


def test_cont_deep_copy_copies_arrays(backend):
    x = ivy.array([0.0, 1.0])
    c = ivy.Container(x=x, inner={"y": ivy.array([2.0])})
    d = c.cont_deep_copy()
    assert isinstance(d, ivy.Container) and isinstance(d.inner, ivy.Container)
    assert d.inner is not c.inner
    if backend in ("torch", "numpy"):  # mutable arrays are copied (tf / jax ones are immutable)
        assert d.x is not c.x
    np.testing.assert_array_equal(ivy.to_numpy(d.x), [0.0, 1.0])
    d.new_attribute = x
    assert "new_attribute" not in c
    s = c.cont_copy()
    assert s.x is c.x and s.inner is not c.inner


def test_deepcopy_and_pickle():
    c = _cont()
    d = copy.deepcopy(c)
    assert type(d) is ivy.Container and d.b.d.e == 5
    assert d.a is not c.a
    np.testing.assert_array_equal(d.b.c, c.b.c)
    p = pickle.loads(pickle.dumps(c))
    assert type(p) is ivy.Container and type(p.b) is ivy.Container
    np.testing.assert_array_equal(p.a, c.a)
    assert copy.copy(c).a is c.a


def test_map_and_flat_list():
    c = _cont()
    doubled = c.cont_map(lambda x: x * 2)
    assert isinstance(doubled, ivy.Container)
    np.testing.assert_array_equal(doubled.b.c, [0, 2, 4])
    assert doubled.b.d.e == 10
    chains = c.cont_map(lambda x, kc: kc)
    assert chains.b.d.e == "b/d/e"
    assert c.cont_all_key_chains() == ["a", "b/c", "b/d/e"]
    flat = c.cont_to_flat_list()
    assert len(flat) == 3 and flat[2] == 5
    rebuilt = c.cont_from_flat_list([1, 2, 3])
    assert rebuilt.cont_to_dict() == {"a": 1, "b": {"c": 2, "d": {"e": 3}}}
    assert c.cont_at_key_chain("b/d/e") == 5
    c.cont_set_at_key_chain("b/z/w", 7)
    assert c.b.z.w == 7
    assert c.cont_num_leaves == 4
    m = c.cont_map(np.asarray)  # a function with optional extra parameters gets the leaf only
    assert isinstance(m.b.d.e, np.ndarray)


def test_repr_is_readable():
    c = ivy.Container(a=1, b={"c": "x"})
    text = repr(c)
    assert text.splitlines()[0] == "{"
    assert "    a: 1," in text and "    b: {" in text and "        c: 'x'," in text
    assert repr(ivy.Container()) == "{}"


def test_flattens_as_a_pytree_and_rebuilds():
    c = _cont()
    leaves, tree = flatten(c, lambda o: isinstance(o, np.ndarray))
    assert len(leaves) == 2
    back = unflatten(tree, leaves)
    assert type(back) is ivy.Container and type(back.b) is ivy.Container
    assert back.b.d.e == 5
