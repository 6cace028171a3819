"""The seeds' torch examples and options, end to end through ``import ivytrace as ivy``."""

from __future__ import annotations

import sys
import types

import pytest
import torch
import torch.nn.functional as F

import ivytrace as ivy


def test_first_example_prunes_unused_work_and_prints(capsys):
    def fn(x, y):
        z = x**y
        print(z)
        k = x * y  # noqa: F841 - dead on purpose, as in the seeds
        j = torch.cat([x, z, y])
        sum_j = torch.sum(j)  # noqa: F841 - dead on purpose, as in the seeds
        return z

    x, y = torch.tensor([1.0, 2.0, 3.0]), torch.tensor([2.0, 3.0, 4.0])
    graph = ivy.trace_graph(fn, args=(x, y))
    capsys.readouterr()
    assert graph.ops == ("torch.Tensor.__pow__",)
    assert torch.equal(graph(x, y), x**y)
    assert capsys.readouterr().out == "", "print is not part of the graph"
    # new inputs of a different shape
    a, b = torch.tensor([[1.0, 2.0]]), torch.tensor([[2.0, 3.0]])
    assert torch.equal(graph(a, b), a**b)


def test_eager_and_lazy():
    def fn(x):
        return torch.sin(x) * 2

    x = torch.rand(3)
    eager = ivy.trace_graph(fn, args=(x,))
    lazy = ivy.trace_graph(fn)
    assert isinstance(eager, ivy.Graph) and isinstance(lazy, ivy.LazyGraph)
    assert not lazy.initialized
    assert torch.allclose(lazy(x), fn(x))
    assert lazy.initialized
    # a new rank is a new signature: traced again
    x2 = torch.rand(2, 5)
    assert torch.allclose(lazy(x2), fn(x2))
    assert len(lazy.graphs) == 2


def test_compile_is_the_same_entry_point():
    def fn(x):
        return x + 1

    g = ivy.compile(fn, args=(torch.ones(2),))
    assert isinstance(g, ivy.Graph) and torch.equal(g(torch.zeros(2)), torch.ones(2))


def test_array_caching_folds_constant_subgraphs():
    def fn(x):
        b = torch.tensor([2])
        a = torch.tensor([2])
        return x ** (a + b)

    x = torch.tensor([1.0, 2.0, 3.0])
    cached = ivy.trace_graph(fn, args=(x,))
    uncached = ivy.trace_graph(fn, args=(x,), array_caching=False)
    assert cached.ops == ("torch.Tensor.__pow__",)
    assert len(uncached.ops) == 4
    for g in (cached, uncached):
        assert torch.equal(g(torch.tensor([3.0])), torch.tensor([81.0]))


def test_generators_included_or_baked():
    def fn(x):
        a = torch.randint(0, 100, size=[1])
        z = x * a
        return z + torch.rand([1])

    x = torch.ones(3)
    with_gen = ivy.trace_graph(fn, include_generators=True, args=(x,))
    baked = ivy.trace_graph(fn, include_generators=False, args=(x,))
    assert "torch.randint" in with_gen.ops and "torch.rand" in with_gen.ops
    assert "torch.randint" not in baked.ops and "torch.rand" not in baked.ops
    assert torch.equal(baked(x), baked(x)), "baked draws are constants"
    draws = {tuple(with_gen(x).tolist()) for _ in range(5)}
    assert len(draws) > 1, "included generators draw anew on every call"


def test_stateful_argument_written_back_each_call():
    class Cont:
        pass

    def fn(cont, x):
        cont.new_attribute = x
        return x + 1

    x = torch.tensor([0])
    graph = ivy.trace_graph(fn, arg_stateful_idxs=[[0]], args=(Cont(), x))
    target = Cont()
    out = graph(target, torch.tensor([41]))
    assert torch.equal(out, torch.tensor([42]))
    assert torch.equal(target.new_attribute, torch.tensor([41]))


def test_stateful_objects_read_and_written():
    class Counter:
        def __init__(self):
            self.total = torch.zeros(2)

    c = Counter()

    def step(x):
        c.total = c.total + x
        return c.total * 2

    graph = ivy.trace_graph(step, stateful=[c], args=(torch.ones(2),))
    c.total = torch.zeros(2)
    graph(torch.ones(2))
    out = graph(torch.ones(2))
    assert torch.equal(c.total, torch.full((2,), 2.0))
    assert torch.equal(out, torch.full((2,), 4.0))


def test_positional_example_inputs_and_several_callables():
    def clean(x, w, b):
        return w * x + b

    def unclean(x, w, b):
        y = b + w + x
        print("message")
        wx = w * x
        ret = wx + b
        temp = y * wx  # noqa: F841
        return ret

    x, w, b = torch.tensor([1.0, 2.0, 3.0]), torch.rand(3, 3) * 2 - 1, torch.zeros(3)
    g_clean = ivy.trace_graph(clean, x, w, b)
    g_unclean = ivy.trace_graph(unclean, x, w, b)
    assert g_clean.ops == g_unclean.ops
    assert torch.allclose(g_unclean(x, w, b), clean(x, w, b))
    lazy_a, lazy_b = ivy.trace_graph(clean, unclean)
    assert isinstance(lazy_a, ivy.LazyGraph) and isinstance(lazy_b, ivy.LazyGraph)


def test_python_module_gives_a_lazily_traced_copy():
    mod = types.ModuleType("user_mod")
    exec(
        "import torch\ndef double(x):\n    return x * 2\ndef shift(x, k=1):\n    return x + k\n",
        mod.__dict__,
    )
    sys.modules["user_mod"] = mod
    try:
        traced = ivy.trace_graph(mod)
        assert traced is not mod and mod.double.__class__ is types.FunctionType
        assert isinstance(traced.double, ivy.LazyGraph)
        assert torch.equal(traced.double(torch.ones(2)), torch.full((2,), 2.0))
    finally:
        del sys.modules["user_mod"]


def test_backend_compiled_fn_is_torch_compile():
    def fn(x):
        return F.relu(x) * 2

    x = torch.randn(8)
    for flag in ("return_backend_compiled_fn", "return_backend_traced_fn"):
        native = ivy.trace_graph(fn, args=(x,), **{flag: True})
        assert not isinstance(native, ivy.Graph)
        assert torch.allclose(native(x), fn(x))


def test_static_python_arguments_are_checked():
    def fn(x, n):
        return x * n

    g = ivy.trace_graph(fn, args=(torch.ones(2), 3))
    assert torch.equal(g(torch.ones(2), 3), torch.full((2,), 3.0))
    with pytest.raises(ivy.GuardFailure):
        g(torch.ones(2), 4)
    lazy = ivy.trace_graph(fn)
    assert torch.equal(lazy(torch.ones(2), 3), torch.full((2,), 3.0))
    assert torch.equal(lazy(torch.ones(2), 4), torch.full((2,), 4.0))


def test_to_other_backend_refuses_native_torch_code():
    with pytest.raises(ValueError, match="transpile"):
        ivy.trace_graph(lambda x: torch.sin(x), args=(torch.ones(2),), to="tensorflow")
