"""jax and numpy graphs, the hand-off to native compilers, and lazy framework imports."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest
from compile_support import INT, call_tree, loc, seed_graph, t32

from ivytrace_compile import NoNativeCompiler, backend_compile, compile_graph
from ivytrace_ir import LEAF, GraphBuilder, GraphMeta, ObjectSpec, TreeDef


def _reshape_sum_graph():
    """``f(x, n): return jnp.sum(x.reshape((n, -1)), axis=1)``: ``n`` is a Python int input."""
    b = GraphBuilder("f")
    x = b.add_input(t32(6, fw="jax"), "x")
    n = b.add_input(INT, "n")
    (r,) = b.add_node(
        "jax.Array.reshape", (x, (n, -1)), out_specs=(t32(3, 2, fw="jax"),), meta=loc(2, "...")
    )
    (s,) = b.add_node("jax.numpy.sum", (r,), {"axis": 1}, out_specs=(t32(3, fw="jax"),))
    g = b.build((s,), LEAF, call_tree(LEAF, LEAF), GraphMeta("f", "jax"))
    return g.replace(arg_names=("x", "n"))


def test_jax_graph_and_jit_with_static_argnums():
    import jax.numpy as jnp

    cg = compile_graph(seed_graph("jax"))
    assert "pow_1 = x ** y" in cg.source
    x, y = jnp.array([1.0, 2.0, 3.0]), jnp.array([2.0, 3.0, 4.0])
    np.testing.assert_allclose(cg.fn(x, y), x**y)
    np.testing.assert_allclose(backend_compile(cg.fn, "jax")(x, y), x**y)

    cg = compile_graph(_reshape_sum_graph())
    # a method of jax.Array is called on the value, as the user wrote it: under jit the
    # value is a tracer, and jax.Array.reshape itself is an abstract stub
    assert "reshape = x.reshape((n, -1))" in cg.source
    assert "sum_1 = jnp_sum(reshape, axis=1)" in cg.source
    data = jnp.arange(6.0)
    np.testing.assert_allclose(cg.fn(data, 3), [1.0, 5.0, 9.0])
    jitted = backend_compile(cg, "jax", static_argnums=(1,))
    np.testing.assert_allclose(jitted(data, 3), [1.0, 5.0, 9.0])
    np.testing.assert_allclose(jitted(data, 2), [3.0, 12.0])  # a new static value: retraced
    by_name = backend_compile(cg.fn, "jax", static_argnames="n")
    np.testing.assert_allclose(by_name(data, n=6), data)
    with pytest.raises(TypeError, match="concrete"):
        backend_compile(cg.fn, "jax")(data, 3)  # without the static argument jax cannot reshape
    assert cg.backend_compile(static_argnums=1)(data, 1).shape == (1,)


def test_numpy_graph_with_methods_and_attributes():
    b = GraphBuilder("g")
    x = b.add_input(t32(2, 3, fw="numpy"), "x")
    (xt,) = b.add_node("numpy.ndarray.T", (x,), out_specs=(t32(3, 2, fw="numpy"),))
    (m,) = b.add_node("numpy.matmul", (x, xt), out_specs=(t32(2, 2, fw="numpy"),))
    (s,) = b.add_node("numpy.ndarray.sum", (m,), out_specs=(t32(fw="numpy"),))
    (f,) = b.add_node("builtins.float", (s,), out_specs=(ObjectSpec("float"),))
    (o,) = b.add_node("numpy.add", (m, f), out_specs=(t32(2, 2, fw="numpy"),))
    g = b.build((o, s), TreeDef("tuple", (LEAF, LEAF)), call_tree(LEAF), GraphMeta("g", "numpy"))
    cg = compile_graph(g.replace(arg_names=("x",)))
    src = cg.source
    assert "T = x.T" in src and "matmul_1 = matmul(x, T)" in src
    assert "sum_1 = matmul_1.sum()" in src and "float_1 = float(sum_1)" in src
    a = np.arange(6.0).reshape(2, 3)
    o, s = cg.fn(a)
    np.testing.assert_allclose(o, a @ a.T + (a @ a.T).sum())
    # the method works on what numpy returns at run time, a numpy scalar included
    assert isinstance(s, np.floating)
    with pytest.warns(NoNativeCompiler, match="numpy has no native compiler"):
        same = backend_compile(cg.fn, "numpy")
    assert same is cg.fn
    with pytest.raises(ValueError, match="unknown framework 'mxnet'"):
        backend_compile(cg.fn, "mxnet")


def test_torch_compile_hand_off():
    import torch

    cg = compile_graph(seed_graph("torch"))
    compiled = backend_compile(cg, "torch")
    x, y = torch.tensor([1.0, 2.0, 3.0]), torch.tensor([2.0, 3.0, 4.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.testing.assert_close(compiled(x, y), x**y)


def test_importing_and_compiling_numpy_imports_no_ml_framework():
    code = textwrap.dedent(
        """
        import sys
        sys.path.insert(0, {here!r})
        import ivytrace_compile
        banned = ("torch", "tensorflow", "jax", "keras", "transformers")
        assert not [m for m in banned if m in sys.modules], sorted(sys.modules)
        from compile_support import seed_graph
        cg = ivytrace_compile.compile_graph(seed_graph("numpy"))
        import numpy as np
        assert (cg.fn(np.array([2.0]), np.array([3.0])) == 8.0).all()
        assert not [m for m in banned if m in sys.modules]
        print("ok")
        """
    ).format(here=str(__import__("pathlib").Path(__file__).resolve().parent))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
