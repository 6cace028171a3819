"""Guards on array values (``if x.sum() > 0``) keep guarding under tf.function and jax.jit.

Traced or translated code records ``bool(gt)`` and ``guard(..., True)``; for TensorFlow and
JAX arrays the generated code checks the array itself (``value_guard``), so the function
can be handed to a native compiler: eagerly a :class:`GuardFailure`, under ``tf.function``
an assert that fails with the guard's text, under ``jax.jit`` a host callback that raises
it. What cannot be kept (XLA, a Python value the graph computes with) is a clear error.
"""

from __future__ import annotations

import numpy as np
import pytest
from compile_support import call_tree, loc, t32

import ivytrace as ivy  # first: lets tensorflow and triton share the process
from ivytrace_compile import CompileError, GuardFailure, backend_compile, compile_graph
from ivytrace_ir import LEAF, GraphBuilder, GraphMeta, ScalarSpec, TensorSpec

REASON = "the truth of an array decided Python control flow"


def torch_branch(x):
    if x.sum() > 0:
        return x * 2
    return x - 1


def torch_double(x):
    return x * 2


def _torch_answer(data):
    import torch

    return torch_branch(torch.tensor(data)).numpy()


POS, NEG = np.array([1.0, 2.0, 3.0], "float32"), np.array([-1.0, -2.0, 0.5], "float32")


def _assert_guard_text(text: str, line: str = "if x.sum() > 0:") -> None:
    """The failure names the guard, its reason and the user's line."""
    assert "guard [" in text and REASON in text, text
    assert "test_value_guards.py" in text and line in text, text
    assert "trace again" in text, text


# ---------------------------------------------------------------- torch, translated


@pytest.fixture(scope="module")
def translated():
    import torch

    x = torch.tensor(POS)
    return {t: ivy.transpile(torch_branch, target=t, args=(x,)) for t in ("tensorflow", "jax")}


def test_torch_graph_keeps_its_inline_guard():
    """torch.compile runs ``bool(t)`` itself (a graph break): torch code is unchanged."""
    import torch

    g = ivy.trace_graph(torch_branch, args=(torch.tensor(POS),))
    assert "bool(gt)" in g.source and "_value_guard(" not in g.source
    with pytest.raises(GuardFailure, match="guard"):
        g(torch.tensor(NEG))


@pytest.mark.parametrize("autograph", [True, False])
def test_translated_tensorflow_under_tf_function(translated, autograph):
    import tensorflow as tf

    t = translated["tensorflow"]
    src = t.compiled.source
    assert "_value_guard(" in src and "bool(" not in src  # the array is checked, not bool()
    eager = t.compiled.fn
    np.testing.assert_allclose(eager(t.params, tf.constant(POS)).numpy(), _torch_answer(POS))
    with pytest.raises(GuardFailure) as info:
        eager(t.params, tf.constant(NEG))
    _assert_guard_text(str(info.value))
    assert "got False" in str(info.value)

    f = tf.function(t.compiled.fn, autograph=autograph)
    np.testing.assert_allclose(f(t.params, tf.constant(POS)).numpy(), _torch_answer(POS))
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        f(t.params, tf.constant(NEG))  # the same concrete function: the assert decides
    _assert_guard_text(info.value.message)
    assert f.experimental_get_tracing_count() == 1  # one graph, checked on every call


def test_translated_tensorflow_backend_compile(translated):
    import tensorflow as tf

    t = translated["tensorflow"]
    f = backend_compile(t.compiled, "tensorflow")
    np.testing.assert_allclose(f(t.params, tf.constant(POS)).numpy(), _torch_answer(POS))
    with pytest.raises(tf.errors.InvalidArgumentError, match="guard"):
        f(t.params, tf.constant(NEG))


def test_translated_jax_under_jit(translated):
    import jax
    import jax.numpy as jnp

    t = translated["jax"]
    assert "_value_guard(" in t.compiled.source and "bool(" not in t.compiled.source
    with pytest.raises(GuardFailure) as info:
        t.compiled.fn(t.params, jnp.asarray(NEG))
    _assert_guard_text(str(info.value))

    for f in (jax.jit(t.compiled.fn), backend_compile(t.compiled, "jax")):
        np.testing.assert_allclose(f(t.params, jnp.asarray(POS)), _torch_answer(POS))
        with pytest.raises(jax.errors.JaxRuntimeError) as info:
            jax.block_until_ready(f(t.params, jnp.asarray(NEG)))
        _assert_guard_text(str(info.value))
        assert "GuardFailure" in str(info.value) and "got False" in str(info.value)


def test_translated_jax_under_vmap_and_grad(translated):
    import jax
    import jax.numpy as jnp

    t = translated["jax"]
    batched = jax.jit(jax.vmap(t.compiled.fn, in_axes=(None, 0)))
    both = jnp.asarray(np.stack([POS, 2 * POS]))
    np.testing.assert_allclose(batched(t.params, both), 2 * both)
    with pytest.raises(jax.errors.JaxRuntimeError, match="guard"):
        jax.block_until_ready(batched(t.params, jnp.asarray(np.stack([POS, NEG]))))
    grad = jax.grad(lambda x: jax.jit(t.compiled.fn)(t.params, x).sum())
    np.testing.assert_allclose(grad(jnp.asarray(POS)), [2.0, 2.0, 2.0])


# ---------------------------------------------------------------- native code, trace_graph


def tf_int_guard(x):
    import tensorflow as tf

    k = int(tf.reduce_sum(x))  # int() truncates: the graph holds while the sum is in [6, 7)
    return x * k


def jax_branch(x):
    import jax.numpy as jnp

    if jnp.sum(x) > 0:
        return x * 2
    return x - 1


def test_trace_graph_tensorflow_int_guard_compiled():
    import tensorflow as tf

    f = ivy.trace_graph(tf_int_guard, args=(tf.constant(POS),), return_backend_compiled_fn=True)
    np.testing.assert_allclose(f(tf.constant(POS)).numpy(), POS * 6)
    np.testing.assert_allclose(f(tf.constant(POS + 0.2)).numpy(), (POS + 0.2) * 6)  # 6.6 -> 6
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        f(tf.constant(POS + 1.0))  # sum 9: int() is 9, not 6
    text = info.value.message
    assert "int() of an array left the graph" in text and "Expected 6" in text
    assert "k = int(tf.reduce_sum(x))" in text


def test_trace_graph_jax_compiled():
    import jax
    import jax.numpy as jnp

    f = ivy.trace_graph(jax_branch, args=(jnp.asarray(POS),), return_backend_compiled_fn=True)
    np.testing.assert_allclose(f(jnp.asarray(POS)), POS * 2)
    with pytest.raises(jax.errors.JaxRuntimeError) as info:
        jax.block_until_ready(f(jnp.asarray(NEG)))
    _assert_guard_text(str(info.value), "if jnp.sum(x) > 0:")


# ---------------------------------------------------------------- what cannot be kept


def test_xla_refuses_value_guards_at_compile_time(translated):
    import tensorflow as tf

    t = translated["tensorflow"]
    with pytest.raises(CompileError) as info:
        backend_compile(t.compiled, "tensorflow", jit_compile=True)
    text = str(info.value)
    assert "XLA" in text and REASON in text and "if x.sum() > 0:" in text
    # handed to tf.function by the user: refused when tf.function traces it
    f = tf.function(t.compiled.fn, jit_compile=True, autograph=False)
    with pytest.raises(CompileError, match="XLA drops"):
        f(t.params, tf.constant(POS))
    # without value guards, jit_compile is unaffected
    import torch

    plain = ivy.transpile(torch_double, target="tensorflow", args=(torch.tensor(POS),))
    xla = backend_compile(plain.compiled, "tensorflow", jit_compile=True)
    np.testing.assert_allclose(xla(plain.params, tf.constant(POS)).numpy(), POS * 2)


def _python_value_used_graph():
    """``n = int(x[0]); return jnp.zeros((n,))``: the graph computes with int()'s value."""
    b = GraphBuilder("make")
    x = b.add_input(TensorSpec("jax", "int32", (2,)), "x")
    (first,) = b.add_node(
        "jax.Array.__getitem__", (x, 0), out_specs=(TensorSpec("jax", "int32", ()),)
    )
    (n,) = b.add_node(
        "builtins.int", (first,), out_specs=(ScalarSpec("int"),), meta=loc(3, "n = int(x[0])")
    )
    (z,) = b.add_node("jax.numpy.zeros", ((n,),), out_specs=(t32(3, fw="jax"),))
    return b.build((z,), LEAF, call_tree(LEAF), GraphMeta("make", "jax")).replace(arg_names=("x",))


def test_python_value_used_by_the_graph_is_a_clear_error_under_jit():
    import jax
    import jax.numpy as jnp

    cg = compile_graph(_python_value_used_graph())
    assert "int(" in cg.source and "_value_guard(" not in cg.source  # not a guard: kept
    assert cg.fn(jnp.asarray([3, 1])).shape == (3,)  # eagerly fine
    with pytest.raises(CompileError) as info:
        jax.jit(cg.fn)(jnp.asarray([3, 1]))
    text = str(info.value)
    assert "builtins.int" in text and "cannot be compiled natively" in text
    assert "model.py:3" in text and "n = int(x[0])" in text


# ---------------------------------------------------------------- BERT with an attention mask


@pytest.fixture(scope="module")
def bert():
    import torch
    import transformers as tr

    torch.manual_seed(0)
    cfg = tr.BertConfig(
        vocab_size=100,
        hidden_size=32,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=37,
    )
    model = tr.BertModel(cfg).eval()
    ids = torch.randint(0, 100, (2, 7))
    mask = torch.ones(2, 7, dtype=torch.long)
    holes = mask.clone()
    holes[0, 5:] = 0
    with torch.no_grad():
        ref = model(input_ids=ids, attention_mask=mask).last_hidden_state.numpy()
        ref_holes = model(input_ids=ids, attention_mask=holes).last_hidden_state.numpy()
    return model, ids, mask, holes, (ref, ref_holes)


# transformers' masking_utils skips an all-ones mask ('padding_mask.all()') unless a graph
# tracer runs; ivytrace says one does (ivytrace_intercept.compiling), so the translation
# holds no value guard: under tf.function / jax.jit it answers a mask with holes too.


@pytest.mark.slow
def test_bert_with_mask_under_tf_function(bert):
    import tensorflow as tf

    model, ids, mask, holes, ref = bert
    t = ivy.transpile(model, target="tensorflow", kwargs={"input_ids": ids, "attention_mask": mask})
    ids, mask, holes = ids.numpy(), mask.numpy(), holes.numpy()
    f = tf.function(t.compiled.fn)
    assert "_value_guard(" not in t.compiled.source
    for m, want in zip((mask, holes), ref):
        out = f(t.params, input_ids=tf.constant(ids), attention_mask=tf.constant(m))
        np.testing.assert_allclose(out.last_hidden_state.numpy(), want, atol=1e-4)


@pytest.mark.slow
def test_bert_with_mask_under_jax_jit(bert):
    import jax
    import jax.numpy as jnp

    model, ids, mask, holes, ref = bert
    t = ivy.transpile(model, target="jax", kwargs={"input_ids": ids, "attention_mask": mask})
    ids, mask, holes = ids.numpy(), mask.numpy(), holes.numpy()
    # the model's output class is not a jax pytree: return its array
    f = jax.jit(lambda p, **kw: t.compiled.fn(p, **kw).last_hidden_state)
    assert "_value_guard(" not in t.compiled.source
    for m, want in zip((mask, holes), ref):
        out = f(t.params, input_ids=jnp.asarray(ids), attention_mask=jnp.asarray(m))
        np.testing.assert_allclose(np.asarray(out), want, atol=1e-4)
