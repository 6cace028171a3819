"""The standalone emission mode: a graph written as a module that imports its framework,
with constants as literals or read from a mapping, guards as inline checks, and no
runtime helpers."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from ivytrace_compile import CompileError
from ivytrace_compile.standalone import generate_standalone
from ivytrace_intercept import trace
from ivytrace_ir import DEFAULT_ALLOWLIST, Opaque

_TABLE = np.linspace(-1.0, 1.0, 20, dtype=np.float32)  # 20 elements: not a literal
_SMALL = np.array([1, -2, 3], dtype=np.int32)


def f(x, k):
    y = np.tanh(x[:, :20] * _TABLE) + 2.5
    if x.shape[0] > 2:  # a size decides the branch: a guard
        y = y - 1.0
    s = np.sum(y, axis=-1, keepdims=True)
    return {"y": np.maximum(y, -np.inf), "s": s * k, "small": x[:, :3] * _SMALL}


def _load(src, constants):
    namespace = {"CONSTANTS": constants}
    exec(compile(src.source, "<standalone>", "exec"), namespace)
    return namespace[src.name]


def test_standalone_source_imports_its_framework_and_runs_on_new_inputs():
    x = np.random.default_rng(0).normal(size=(4, 24)).astype(np.float32)
    k = np.float32(3.0)
    graph = trace(f, (x, np.asarray(k)), {}).graph
    src = generate_standalone(graph, DEFAULT_ALLOWLIST, name="f")
    text = src.source
    assert text.startswith("import math\n\nimport numpy as np\n"), text
    assert "np.tanh(" in text and "np.sum(" in text and "-math.inf" in text
    for noise in ("_on_error", "del ", "try:", "cached", "_input_check"):
        assert noise not in text, (noise, text)
    assert "np.asarray([1, -2, 3], dtype=np.int32)" in text  # a small constant: a literal
    (key,) = src.constants  # the 20-element table: by key, for the caller to store
    np.testing.assert_array_equal(src.constants[key], _TABLE)
    assert f"CONSTANTS[{key!r}]" in text
    fn = _load(src, src.constants)
    x2 = np.random.default_rng(1).normal(size=(6, 24)).astype(np.float32)
    k2 = np.asarray(np.float32(0.5))
    got, want = fn(x2, k2), f(x2, k2)
    assert set(got) == set(want)
    for k in want:
        np.testing.assert_allclose(got[k], want[k], rtol=1e-6)
    with pytest.raises(ValueError, match="traced with True"):
        fn(x2[:2], k2)  # the other branch: the guard says so


def test_standalone_refuses_live_objects():
    class Thing:
        pass

    x = np.ones(3, np.float32)
    graph = trace(lambda a: a + 1.0, (x,), {}).graph
    node = graph.nodes[0]
    node = dataclasses.replace(node, args=(node.args[0], Opaque(Thing())))
    bad = graph.replace(nodes=(node,))
    with pytest.raises(CompileError, match="cannot hold live objects"):
        generate_standalone(bad, DEFAULT_ALLOWLIST)


def test_float_literals_are_the_shortest_text_of_their_dtype():
    x = np.ones(2, np.float32)
    c = np.array([0.1, math.pi], np.float32)
    graph = trace(lambda a: a * c, (x,), {}).graph
    text = generate_standalone(graph, DEFAULT_ALLOWLIST, name="g").source
    assert "np.asarray([0.1, 3.1415927], dtype=np.float32)" in text, text
